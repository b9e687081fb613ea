#!/usr/bin/env bash
# tests/fabric/test_health.sh - fabric health on ibsim: a fabric with known
# faults, and `ibsmctl health --json` reports exactly them and nothing
# else; fixing each fault clears its finding; the isolation policy.
#
# The fabric is tests/topologies/health/health.net; its reference topology is
# what ibnetdiscover sees of health-ref.net (the same nodes, so the same
# GUIDs, cabled as designed).  The faults:
#   - counters raised with PerformanceSet: SymbolErrorCounter on H0003[1],
#     LinkDownedCounter on sw-a[7], PortRcvErrors on sw-b[8];
#   - the link H0005[1] - sw-b[3] flapped five times (Unlink/ReLink, the
#     SM sweeping between);
#   - against the reference: sw-a[9] - sw-c[1] missing, sw-b[9] - sw-c[2]
#     extra, H0004's cable moved from sw-a[3] to sw-a[4], H0006's link
#     running 1x where the reference has 4x;
#   - H0007 and H0008 share the description "dup host".
# The fixes: `perfquery -R` of the three ports (the counter findings
# close, the others stay); `ibsmctl topology save` over the reference file
# (the reference findings close); the flapping ages out of
# health_flap_window_s (its finding closes).  Then with
# health_unhealthy_policy isolate (reload) the link flaps again: the
# switch port facing H0005 is Disabled (iblinkinfo shows it), and
# `ibsmctl port enable` sets it to Polling; ibsim never trains a link, so
# Unlink/ReLink stand in for the training and the link is Active again.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/ibsm.sock
REF=$T/ref.topo
CHECK=$FAB_LIB/health_check.py
FLAP_WINDOW=20

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# The GUIDs ibsim gives health.net's nodes (file order).
H3=0x0000000000100004 H4=0x0000000000100006 H5=0x0000000000100008
H6=0x000000000010000a H7=0x000000000010000c H8=0x000000000010000e
SWA=0x0000000000200000 SWB=0x0000000000200001 SWC=0x0000000000200002

# The findings of the faults (health_check.py's notation).
F_SYM="error_rate:$H3:1:SymbolErrorCounter"
F_DOWNED="error_rate:$SWA:7:LinkDownedCounter"
F_RCV="error_rate:$SWB:8:PortRcvErrors"
F_FLAP="flapping:$H5:1=$SWB:3"
F_MISSING="missing_link:$SWA:9=$SWC:1"
F_EXTRA="unexpected_link:$SWB:9=$SWC:2"
F_MOVED="cable_moved:$H4:1=$SWA:4"
F_WIDTH="link_below_reference:$H6:1=$SWB:4"
F_DUP7="duplicate_description:$H7:0"
F_DUP8="duplicate_description:$H8:0"
COUNTERS=("$F_SYM" "$F_DOWNED" "$F_RCV")
REFERENCE=("$F_MISSING" "$F_EXTRA" "$F_MOVED" "$F_WIDTH")

# health_json OUT: `ibsmctl health --json` into OUT; its exit status.
health_json() {
	ctl health --json >"$1" 2>"$1.err"
}

# wait_health SECONDS ARGS...: until health_check.py ARGS holds on a fresh
# `ibsmctl health --json` ($T/health.json), at most SECONDS; prints its
# complaints of the last try when it never held.
wait_health() {
	local limit=$((SECONDS + $1)) out
	shift
	while :; do
		health_json "$T/health.json"
		out=$(python3 "$CHECK" "$T/health.json" "$@" 2>&1) && return 0
		((SECONDS < limit)) || break
		sleep 0.3
	done
	printf '%s\n' "$out"
	return 1
}

# heavy_sweeps: heavy sweeps ibsm has logged so far.
heavy_sweeps() {
	grep -c 'heavy sweep: ' "$T/sm.log"
}

# flap_once: Unlink H0005's link, wait for the SM's heavy sweep that sees
# it down, ReLink, wait for the one that sees it up.  Each change sends a
# trap 128 from sw-b; the SM takes 2 a second from one LID (trap-rate) and
# drops the rest, so the changes are paced at 0.6 s.
flap_once() {
	local n
	for cmd in Unlink ReLink; do
		n=$(heavy_sweeps)
		fab_cmd "$cmd \"H0005\"[1]" >/dev/null || return 1
		sleep 0.6
		for ((i = 0; i < 100; i++)); do
			(($(heavy_sweeps) > n)) && break
			sleep 0.1
		done
		(($(heavy_sweeps) > n)) || return 1
	done
}

# port_state GUID PORT: "State/PhysState" of a switch port as iblinkinfo
# sees it from H0002 (e.g. "Active/Disabled").
port_state() {
	fab_run H0002 iblinkinfo --line 2>/dev/null |
		awk -v g="$1" -v p="$2" '$1 == g {
			for (i = 1; i <= NF; i++)
				if ($i == p "[") { hit = 1; break }
			if (!hit) next
			if (match($0, /[A-Za-z]+\/ *[A-Za-z]+\)/)) {
				s = substr($0, RSTART, RLENGTH - 1); gsub(/ /, "", s)
				print s; exit
			}
		}'
}

# 1. The reference: ibnetdiscover of the fabric as designed.
fab_sim_start "$FAB_TOPO/health/health-ref.net" ref || {
	fab_fail sim-start
	fab_summary
	exit 1
}
fab_check reference-discovered fab_ibnetdiscover H0002 "$REF"
fab_sim_stop

# 2. The fabric as cabled, ibsm with the performance manager on, counter
# sweeps every second, the reference, a short flapping window.
cat >"$T/opensm.conf" <<EOF
perfmgr TRUE
perfmgr_sweep_time_s 1
sweep_interval 2
topology_ref $REF
health_flap_count 5
health_flap_window_s $FLAP_WINDOW
health_unhealthy_policy report
EOF
sm_sim_and_sm_up "$FAB_TOPO/health/health.net" health "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$SOCK"

fab_check counters-raised fab_cmd \
	'PerformanceSet "H0003"[1] PortCounters.SymbolErrorCounter=50' \
	'PerformanceSet "sw-a"[7] PortCounters.LinkDownedCounter=5' \
	'PerformanceSet "sw-b"[8] PortCounters.PortRcvErrors=40'
flapped=0
for ((k = 1; k <= 5; k++)); do
	flap_once && flapped=$((flapped + 1))
done
fab_check link-flapped-5-times test "$flapped" -eq 5
flap_end=$SECONDS

# Exactly the faults, nothing else (the counter findings come with the
# next counter sweep).
fab_check health-exactly-the-faults wait_health 15 "${COUNTERS[@]}" \
	"$F_FLAP" "${REFERENCE[@]}" "$F_DUP7" "$F_DUP8"
health_json "$T/h1.json"
fab_check health-exit-critical test $? -eq 2
fab_check health-summary python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["healthy"] is False and d["critical"] >= 1 and
	      d["critical"] + d["warnings"] == len(d["findings"]) == 10))' "$T/h1.json"
# As an operator reads it: a summary line, then the findings, critical first.
ctl health >"$T/health.txt"
fab_check health-text-summary test "$(head -n 1 "$T/health.txt")" = \
	"1 critical, 9 warnings"
fab_check health-text-critical-first grep -q '^critical *flapping ' \
	<(sed -n 2p "$T/health.txt")
fab_check health-text-lines test "$(wc -l <"$T/health.txt")" -eq 11
# The finding names the node, port, LID and the peer across the cable.
fab_check health-names-both-ends python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["kind"] == "cable_moved"][0]
sys.exit(not (f["node_desc"] == "H0004 health host" and f["lid"] > 0 and
	      f["peer_desc"] == "sw-a health switch" and f["peer_lid"] > 0))' "$T/h1.json"
# ... the peer where the cable is now (sw-a port 4; the text gives the
# reference's port 3).
fab_check health-moved-cable-peer-now python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["kind"] == "cable_moved"][0]
sys.exit(not (f["peer_port"] == 4 and "[1] - [3]" in f["text"]))' "$T/h1.json"

# 3. Fixes.  Counters: perfquery -R of the three ports (by port GUID).
fab_run H0002 perfquery -R -G 0x100005 1 >/dev/null 2>&1 &&
	fab_run H0002 perfquery -R -G $SWA 7 >/dev/null 2>&1 &&
	fab_run H0002 perfquery -R -G $SWB 8 >/dev/null 2>&1
fab_check counters-cleared-by-perfquery test $? -eq 0
fab_check counter-findings-closed wait_health 10 --subset "$F_FLAP" \
	"${REFERENCE[@]}" --absent "${COUNTERS[@]}"

# Reference: save the fabric as it is over the reference file; the next
# heavy sweep reads it again.
fab_check topology-save ctl topology save "$REF"
fab_check saved-reference-has-h0004-on-4 grep -q \
	'^\[4\].*"H-0000000000100006"\[1\]' "$REF"
ctl resweep heavy >/dev/null
fab_check reference-findings-closed wait_health 10 --subset "$F_FLAP" \
	--absent "${REFERENCE[@]}" "${COUNTERS[@]}"

# Flapping: no flap for the window's length, then a heavy sweep.
while ((SECONDS - flap_end <= FLAP_WINDOW)); do
	sleep 0.5
done
ctl resweep heavy >/dev/null
fab_check flapping-closed wait_health 10 "$F_DUP7" "$F_DUP8"
health_json "$T/h2.json"
fab_check health-exit-warnings test $? -eq 1

# 4. Isolation: policy isolate (reload), the link flaps again; the port
# facing H0005 (sw-b[3]) is Disabled.
sed -i 's/^health_unhealthy_policy .*/health_unhealthy_policy isolate/' \
	"$T/opensm.conf"
fab_check reload-isolate ctl reload
flapped=0
for ((k = 1; k <= 5; k++)); do
	flap_once && flapped=$((flapped + 1))
done
fab_check link-flapped-again test "$flapped" -eq 5
for ((i = 0; i < 50; i++)); do
	[ "$(port_state $SWB 3)" = Active/Disabled ] && break
	sleep 0.2
done
fab_check isolated-peer-disabled test "$(port_state $SWB 3)" = Active/Disabled
fab_check isolation-logged grep -q "isolating port 3 of .*sw-b health switch" \
	"$T/sm.log"
# The SM's own link and the other ports are untouched.
fab_check other-ports-untouched test "$(port_state $SWB 1)" = Active/LinkUp
fab_check port-enable ctl port enable $SWB 3
fab_check enabled-port-polling test "$(port_state $SWB 3)" = Active/Polling
# ibsim never trains a link: Unlink and ReLink stand in for it.
fab_cmd 'Unlink "sw-b"[3]' 'ReLink "sw-b"[3]' >/dev/null
for ((i = 0; i < 50; i++)); do
	[ "$(port_state $SWB 3)" = Active/LinkUp ] && break
	sleep 0.2
done
fab_check enabled-port-active test "$(port_state $SWB 3)" = Active/LinkUp
fab_check h0005-back fab_run H0002 smpquery -G nodedesc 0x100009
# What ibsim's counters did on their own meanwhile (MADs, the flaps, the
# disabled port discarding) is no error rate and no congestion.
fab_check no-counter-noise wait_health 0 --absent error_rate congestion

if sm_stop; then
	fab_pass sm-clean-exit
else
	fab_fail sm-clean-exit
	tail -n 20 "$T/sm.out"
fi
fab_summary
