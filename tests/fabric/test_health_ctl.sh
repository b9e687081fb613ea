#!/usr/bin/env bash
# tests/fabric/test_health_ctl.sh - the health commands of ibsm's control
# socket through ibsmctl on ibsim (tiny.net): `health --json` is valid
# JSON and empty on a clean fabric (exit 0, "fabric healthy");
# `topology save` writes the fabric as a reference topology, and ibsm
# restarted with --topology-ref of that file finds nothing; `events`
# shows the link down after an ibsim Unlink (valid JSON, and the event
# file in the dump directory has it); with health_unhealthy_policy
# isolate, a link flapped five times gets its switch port Disabled
# (smpquery portinfo, iblinkinfo), `health` exits 2 naming it, and
# `ibsmctl port enable` takes the port out of Disabled and, once the
# link trains (ibsim has no link training: Unlink/ReLink stands in for
# it), a sweep brings it back to LinkUp/Active.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# json_ok FILE PYTHON: FILE is valid JSON (python3 -m json.tool) and the
# assertions in PYTHON hold on it (d: the document).
json_ok() {
	python3 -m json.tool "$1" >/dev/null &&
		python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1"
}

# wait_sweeps N: until the daemon has done more than N heavy sweeps and
# is not sweeping (at most 20 s).
heavy() {
	ctl status | sed -n 's/^heavy_sweeps //p'
}
wait_sweeps() {
	local i
	for ((i = 0; i < 400; i++)); do
		if [ "$(heavy)" -gt "$1" ] &&
			ctl status | grep -qx 'sweeping none'; then
			return 0
		fi
		sleep 0.05
	done
	fab_log "wait_sweeps: no heavy sweep after the ${1}th within 20 s"
	return 1
}

# phys HOST-NODE PORT: PortPhysicalState of a switch port as smpquery
# reads it (the referee), e.g. "LinkUp", "Disabled", "Polling".
phys() {
	fab_run H0002 smpquery -D portinfo "$1" "$2" 2>/dev/null |
		sed -n 's/^PhysLinkState:\.*//p'
}

fab_sim_start "$FAB_TOPO/tiny.net" hctl || {
	fab_fail sim-start
	fab_summary
	exit 1
}
cat >"$T/opensm.conf" <<'EOF'
sweep_interval 0
health_unhealthy_policy isolate
EOF
sm_start H0001 "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK"
if ! sm_wait_up "$T/sm" 0 60 >/dev/null; then
	fab_fail subnet-up
	tail -n 20 "$T/sm.log" "$T/sm.out"
	fab_summary
	exit 1
fi
fab_pass subnet-up

# A clean fabric: healthy, exit 0, JSON valid with no finding.
ctl health >"$T/health.txt"
fab_check clean-health-exit0 test $? -eq 0
fab_check clean-health-line grep -qx 'fabric healthy' "$T/health.txt"
ctl health --json >"$T/health.json"
fab_check clean-health-json-exit0 test $? -eq 0
fab_check clean-health-json json_ok "$T/health.json" '
assert d["healthy"] is True and d["findings"] == [], d
assert d["critical"] == 0 and d["warnings"] == 0, d'

# topology save: an ibnetdiscover file with every node and link.
(cd "$T" && ctl topology save ref.net) >"$T/save.out"
fab_check topo-save-exit0 test $? -eq 0
fab_check topo-save-file grep -q '^Switch	8 "S-' "$T/ref.net"
fab_check topo-save-links test "$(grep -c '^\[' "$T/ref.net")" -eq 14
fab_check topo-save-relative-refused-nothing test ! -e "$T/sock/ref.net"
ctl topology save relative/none.net >/dev/null 2>&1
fab_check topo-save-bad-dir test $? -ne 0

# ibsm again with that file as its reference topology: nothing to report.
sm_stop
fab_check sm-exit0-first test $? -eq 0
off=$(stat -c %s "$T/sm.log")
sm_start H0001 "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK" \
	--topology-ref "$T/ref.net"
sm_wait_up "$T/sm" "$off" 60 >/dev/null
fab_check ref-subnet-up test $? -eq 0
ctl health --json >"$T/health-ref.json"
fab_check ref-health-exit0 test $? -eq 0
fab_check ref-health-empty json_ok "$T/health-ref.json" '
assert d["healthy"] is True and d["findings"] == [], d'
fab_check ref-loaded grep -q "reference topology $T/ref.net: 6 nodes" \
	"$T/sm.log"
# A broken reference: FILE:LINE in the log, the last good one stays.
cp "$T/ref.net" "$T/ref.good"
printf 'Switch 8 "S-1"\n[1] bogus\n' >>"$T/ref.net"
h=$(heavy)
ctl resweep >/dev/null
wait_sweeps "$h"
fab_check ref-bad-file-line grep -Eq "ERR 1813: reference topology $T/ref.net:[0-9]+: .*the last good reference stays" \
	"$T/sm.log"
fab_check ref-bad-kept bash -c "'$CTL' --socket '$SOCK' health | grep -qx 'fabric healthy'"
mv "$T/ref.good" "$T/ref.net"

# Unlink: a link_down event (JSON valid) and the event file has it.
SWB=$(fab_run H0002 smpquery -D nodeinfo 0,1 2>/dev/null |
	sed -n 's/^Guid:\.*//p')
h=$(heavy)
fab_cmd 'Unlink "sw-b"[5]' >/dev/null
wait_sweeps "$h"
ctl events --json >"$T/events.json"
fab_check events-json-exit0 test $? -eq 0
fab_check events-link-down json_ok "$T/events.json" "
ev = [e for e in d['events'] if e['type'] == 'link_down']
assert any(int(e['guid'], 16) == int('$SWB', 16) and e['port'] == 5
	   for e in ev), d"
fab_check events-node-out json_ok "$T/events.json" "
assert any(e['type'] == 'node_out' and 'H0004' in e['text']
	   for e in d['events']), d"
fab_check events-file grep -q 'link_down .* port 5 ' \
	"$T/sm.cache/ibsm-events.log"
ctl events --since 1h >"$T/events.txt"
fab_check events-since-text grep -q 'link_down' "$T/events.txt"
ctl events --since 2099-01-01T00:00:00Z >"$T/events-future.txt"
fab_check events-since-future test ! "$(grep -c '_' "$T/events-future.txt")" -gt 0
h=$(heavy)
fab_cmd 'ReLink "sw-b"[5]' >/dev/null
wait_sweeps "$h"
fab_check events-link-up bash -c "'$CTL' --socket '$SOCK' events |
	grep -q 'link_up .* port 5 '"

# Isolation: the link sw-b[5] - H0004 flapped five times in all (the
# Unlink/ReLink above was the first): the switch side, sw-b port 5, is
# Disabled by a PortInfo Set, and no later sweep enables it.
flaps=1
while ((flaps < 8)) && ! grep -q 'ERR 1805: isolating' "$T/sm.log"; do
	h=$(heavy)
	fab_cmd 'Unlink "sw-b"[5]' >/dev/null
	wait_sweeps "$h"
	h=$(heavy)
	fab_cmd 'ReLink "sw-b"[5]' >/dev/null
	wait_sweeps "$h"
	flaps=$((flaps + 1))
done
for ((i = 0; i < 40; i++)); do
	[ "$(phys 0,1 5)" = Disabled ] && break
	sleep 0.05
done
fab_check iso-after-five-flaps test "$flaps" -eq 5
fab_check iso-disabled-smpquery test "$(phys 0,1 5)" = Disabled
# iblinkinfo's section of sw-b: port 5 "Active/ Disabled" (ibsim keeps
# the LinkState of a port whose physical state a Set changed)
fab_run H0002 iblinkinfo 2>/dev/null |
	awk -v g="$(printf 'Switch: 0x%016x' "$SWB")" \
		'index($0, g) == 1 { f = 1; next } /^Switch/ { f = 0 } f' \
		>"$T/iblinkinfo.txt"
fab_check iso-disabled-iblinkinfo grep -Eq '^ +[0-9]+ +5\[.*Disabled\)' \
	"$T/iblinkinfo.txt"
fab_check iso-logged grep -q 'ERR 1805: isolating port 5 of Switch' \
	"$T/sm.log"
ctl health >"$T/health-iso.txt"
fab_check iso-health-exit2 test $? -eq 2
fab_check iso-health-names-switch grep -Eq '^critical +flapping +"sw-b tiny switch" 0x0*200001 port 5 lid [0-9]+, peer "H0004 slow host" 0x0*100007 port 1' \
	"$T/health-iso.txt"
# the link once, from its switch end
fab_check iso-health-once test "$(grep -c flapping "$T/health-iso.txt")" -eq 1
ctl health --json >"$T/health-iso.json"
fab_check iso-health-json json_ok "$T/health-iso.json" '
assert d["healthy"] is False and d["critical"] >= 1, d
assert any(f["kind"] == "flapping" for f in d["findings"]), d'
h=$(heavy)
ctl resweep >/dev/null
wait_sweeps "$h"
fab_check iso-stays-disabled test "$(phys 0,1 5)" = Disabled
# ... and the sweeps complete: no query goes out through the Disabled
# port (ibsim keeps its LinkState Active but drops what crosses it)
fab_check iso-sweep-done bash -c "'$CTL' --socket '$SOCK' status |
	grep -qx 'last_heavy_sweep done'"
fab_check iso-no-failed-sweep test "$(grep -c 'ERR 0201' "$T/sm.log")" -eq 0
# A port enabled behind the SM's back (ibportstate, or a switch that
# reset) while still isolated is disabled again by the next sweep.
fab_run H0002 ibportstate -D 0,1 5 enable >/dev/null 2>&1
fab_check iso-enabled-behind test "$(phys 0,1 5)" != Disabled
h=$(heavy)
ctl resweep >/dev/null
wait_sweeps "$h"
for ((i = 0; i < 40; i++)); do
	[ "$(phys 0,1 5)" = Disabled ] && break
	sleep 0.05
done
fab_check iso-disabled-again test "$(phys 0,1 5)" = Disabled
fab_check iso-disabled-again-logged grep -q 'ERR 1805: port 5 of node 0x0*200001 is isolated but no longer disabled' \
	"$T/sm.log"

# port enable: Polling (the port trains again); ibsim has no link
# training, so Unlink/ReLink stands in for the cable coming up; a sweep
# then brings the link to LinkUp and Active, and health clears.
h=$(heavy)
ctl port enable "$SWB" 5 >"$T/enable.out"
fab_check enable-exit0 test $? -eq 0
fab_check enable-polling test "$(phys 0,1 5)" = Polling
wait_sweeps "$h"
h=$(heavy)
fab_cmd 'Unlink "sw-b"[5]' 'ReLink "sw-b"[5]' >/dev/null
wait_sweeps "$h"
for ((i = 0; i < 100; i++)); do
	fab_run H0002 smpquery -D portinfo 0,1 5 >"$T/pi.txt" 2>/dev/null
	grep -q '^LinkState:\.*Active' "$T/pi.txt" && break
	sleep 0.1
done
fab_check enable-linkup grep -q '^PhysLinkState:\.*LinkUp' "$T/pi.txt"
fab_check enable-active grep -q '^LinkState:\.*Active' "$T/pi.txt"
fab_check enable-h0004-back fab_run H0002 smpquery -D nodeinfo 0,1,5
ctl health >"$T/health-after.txt"
fab_check enable-health-clear grep -qx 'fabric healthy' "$T/health-after.txt"

sm_stop
fab_check sm-exit0 test $? -eq 0

# The counter checks after each counter sweep: the performance manager
# on (a sweep a second), 500 symbol errors on sw-a port 3 make a critical
# error_rate finding there; `perfquery -R` (the administrator clears,
# acknowledging them) closes it.
printf 'perfmgr TRUE\nperfmgr_sweep_time_s 1\n' >>"$T/opensm.conf"
off=$(stat -c %s "$T/sm.log")
sm_start H0001 "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK"
sm_wait_up "$T/sm" "$off" 60 >/dev/null
fab_check perf-subnet-up test $? -eq 0
SWA=$(fab_run H0002 smpquery -D nodeinfo 0,1,3 2>/dev/null |
	sed -n 's/^Guid:\.*//p')
fab_cmd 'PerformanceSet "sw-a"[3] PortCounters.SymbolErrorCounter=500' >/dev/null
# (the simulator's counters outlive the SMs of the phases above: other
# ports may carry discards from the isolated link; only sw-a port 3's
# symbol errors are looked at)
SYM="
f = [f for f in d['findings'] if f['kind'] == 'error_rate' and
     int(f['node_guid'], 16) == int('$SWA', 16) and f['port'] == 3]"
for ((i = 0; i < 100; i++)); do
	ctl health --json >"$T/health-perf.json"
	json_ok "$T/health-perf.json" "$SYM
assert f" 2>/dev/null && break
	sleep 0.1
done
fab_check perf-error-rate json_ok "$T/health-perf.json" "$SYM
assert len(f) == 1 and 'SymbolErrorCounter' in f[0]['text'], d
assert f[0]['severity'] == 'critical' and int(f[0]['peer_guid'], 16), f"
ctl health >/dev/null
fab_check perf-health-exit2 test $? -eq 2
LIDA=$(fab_run H0002 smpquery -D portinfo 0,1,3 0 2>/dev/null |
	sed -n 's/^Lid:\.*//p')
fab_run H0002 perfquery -R "$LIDA" 3 >/dev/null 2>&1
for ((i = 0; i < 100; i++)); do
	ctl health --json >"$T/health-perf2.json"
	json_ok "$T/health-perf2.json" "$SYM
assert not f" 2>/dev/null && break
	sleep 0.1
done
fab_check perf-cleared json_ok "$T/health-perf2.json" "$SYM
assert not f, f"
sm_stop
fab_check perf-sm-exit0 test $? -eq 0

# The routing verdict: tables that fail the verifier (a test hook clears
# one LFT entry) and are programmed for want of better ones make a
# critical routing_unreachable finding.
off=$(stat -c %s "$T/sm.log")
IBSM_DEBUG_CORRUPT_LFT=1 sm_start H0001 "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$SOCK"
sm_wait_up "$T/sm" "$off" 60 >/dev/null
fab_check route-subnet-up test $? -eq 0
ctl health --json >"$T/health-route.json"
fab_check route-health-exit2 test $? -eq 2
fab_check route-unreachable json_ok "$T/health-route.json" '
f = [f for f in d["findings"] if f["kind"] == "routing_unreachable"]
assert len(f) == 1 and f[0]["severity"] == "critical", d'
sm_stop
fab_check route-sm-exit0 test $? -eq 0

fab_summary
