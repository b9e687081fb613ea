#!/usr/bin/env bash
# tests/fabric/test_perfmgr.sh - the performance manager (sm/perf/) on
# ibsim, perfquery the referee: with perfmgr TRUE (from an opensm.conf)
# ibsm sweeps the counters every second; after PerformanceSet raised
# error counters on switch and CA ports (one switch port not linked),
# `ibsmctl counters --json` shows perfquery's values for each of them
# (by GUID:PORT, LID:PORT, port GUID and node description), the increment is logged once naming both ends of the
# link, `--errors` lists the raised ports and not a clean one; then
# `perfquery -R` (and -x -R) clears a port behind the SM's back and new
# errors come: the total keeps counting (old + new, no giant delta, the
# 64-bit data counters too), the clear is noticed, and the dump file
# (event_db_dump_file) holds the totals.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/ibsm.sock
DIAG=H0002

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

cat >"$T/opensm.conf" <<EOF
perfmgr TRUE
perfmgr_sweep_time_s 1
perfmgr_max_outstanding_queries 8
event_db_dump_file $T/counters.dump
sweep_interval 0
EOF

sm_sim_and_sm_up "$FAB_TOPO/tiny.net" perfmgr "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$SOCK"

# The last counter sweep the log reports done.
sweeps_done() {
	sed -n 's/.*perfmgr: sweep \([0-9]*\) done:.*/\1/p' "$T/sm.log" |
		tail -n 1
}
# Wait until two more counter sweeps are done: one began after now.
wait_sweeps() {
	local n0 n
	n0=$(sweeps_done)
	n0=${n0:-0}
	for ((i = 0; i < 150; i++)); do
		n=$(sweeps_done)
		[ "${n:-0}" -ge $((n0 + 2)) ] && return 0
		sleep 0.1
	done
	return 1
}
fab_check first-counter-sweep wait_sweeps

# LIDs and GUIDs from ibnetdiscover (the referee), not from ibsm.
fab_run "$DIAG" ibnetdiscover -p >"$T/disc" 2>/dev/null
# the first end of a link line is the node the line is about
sw_lid() { awk -v d="( '$1 tiny switch' -" '$1 == "SW" && index($0, d) { print $2; exit }' "$T/disc"; }
sw_guid() { awk -v d="( '$1 tiny switch' -" '$1 == "SW" && index($0, d) { print $4; exit }' "$T/disc"; }
ca_lid() { awk -v h="( '$1 " -v p="$2" '$1 == "CA" && $3 == p && index($0, h) { print $2; exit }' "$T/disc"; }
ca_guid() { awk -v h="( '$1 " -v p="$2" '$1 == "CA" && $3 == p && index($0, h) { print $4; exit }' "$T/disc"; }
SWA=$(sw_lid sw-a)
SWB=$(sw_lid sw-b)
SWA_GUID=$(sw_guid sw-a)
H2=$(ca_lid H0002 1)
H3P2=$(ca_lid H0003 2)
H3_GUID=$(ca_guid H0003 2)	# a port GUID
if [ -z "$SWA" ] || [ -z "$SWB" ] || [ -z "$H2" ] || [ -z "$H3P2" ]; then
	fab_fail lids "sw-a '$SWA' sw-b '$SWB' H0002 '$H2' H0003:2 '$H3P2'"
	sm_stop
	fab_summary
	exit 1
fi

fab_cmd 'PerformanceSet "sw-a"[3] PortCounters.SymbolErrorCounter=77' \
	'PerformanceSet "sw-a"[7] PortCounters.LinkDownedCounter=2' \
	'PerformanceSet "sw-b"[5] PortCounters.LinkDownedCounter=3' \
	'PerformanceSet "sw-b"[5] PortCounters.PortXmitDiscards=9' \
	'PerformanceSet "H0002"[1] PortCounters.PortRcvErrors=12' \
	'PerformanceSet "H0003"[2] PortCounters.SymbolErrorCounter=5' \
	'PerformanceSet "H0003"[2] PortCounters.LocalLinkIntegrityErrors=2' >/dev/null
fab_check counter-sweeps-after-set wait_sweeps

# same_as_perfquery NAME SELECTOR LID PORT: the error counters
# `ibsmctl counters SELECTOR --json` shows (value as read, and total:
# nothing was cleared yet) equal perfquery's for LID PORT.
same_as_perfquery() {
	local name=$1 sel=$2 lid=$3 port=$4
	ctl counters "$sel" --json >"$T/$name.json" 2>&1
	fab_run "$DIAG" perfquery "$lid" "$port" >"$T/$name.pq" 2>&1
	fab_check "$name" python3 - "$T/$name.json" "$T/$name.pq" "$port" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
pq = {}
for line in open(sys.argv[2]):
    m = re.match(r'(\w+):\.+(\d+)$', line.strip())
    if m:
        pq[m.group(1)] = int(m.group(2))
ports = [p for p in doc["ports"] if p["port"] == int(sys.argv[3])]
assert len(ports) == 1, ("ports", doc["ports"])
c = ports[0]["counters"]
names = ["SymbolErrorCounter", "LinkErrorRecoveryCounter",
         "LinkDownedCounter", "PortRcvErrors", "PortRcvRemotePhysicalErrors",
         "PortRcvSwitchRelayErrors", "PortXmitDiscards",
         "PortXmitConstraintErrors", "PortRcvConstraintErrors",
         "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors",
         "VL15Dropped"]
raised = 0
for n in names:
    assert c[n]["value"] == pq[n], (n, c[n], pq[n])
    assert c[n]["total"] == pq[n], (n, c[n], pq[n])
    raised += pq[n]
assert raised > 0, "no counter raised: the check would prove nothing"
PY
}
same_as_perfquery switch-port-by-guid "$SWA_GUID:3" "$SWA" 3
same_as_perfquery switch-port-by-lid "$SWB:5" "$SWB" 5
same_as_perfquery unlinked-switch-port "$SWA:7" "$SWA" 7
same_as_perfquery ca-port-by-desc "H0002:1" "$H2" 1
same_as_perfquery ca-second-port-by-port-guid "$H3_GUID" "$H3P2" 2

# Each increment logged once, with both ends of the link.
fab_check logged-once-both-ends test "$(grep -c "ERR 5401: perfmgr: \"sw-a tiny switch\" $SWA_GUID port 3 (LID $SWA), linked to \"sw-b tiny switch\" 0x[0-9a-f]* port 3: SymbolErrorCounter +77 (total 77)" "$T/sm.log")" -eq 1
ctl counters --errors >"$T/errors.txt" 2>&1
fab_check errors-lists-raised-ports grep -q "\"sw-b tiny switch\" 0x[0-9a-f]* port 5 .*linked to \"H0004" "$T/errors.txt"
fab_check errors-omits-clean-port sh -c "! grep -q '\"H0001 tiny host\"' '$T/errors.txt'"
fab_check unknown-port-refused sh -c "! '$CTL' --socket '$SOCK' counters 0x1234:9 >/dev/null 2>&1"

# A clear behind the SM's back, then new errors: totals keep counting.
fab_run "$DIAG" perfquery -R "$SWA" 3 >/dev/null 2>&1
fab_run "$DIAG" perfquery -x -R "$SWA" 3 >/dev/null 2>&1
fab_cmd 'PerformanceSet "sw-a"[3] PortCounters.SymbolErrorCounter=4' >/dev/null
fab_check counter-sweeps-after-clear wait_sweeps
ctl counters "$SWA_GUID:3" --json >"$T/after.json" 2>&1
fab_run "$DIAG" perfquery "$SWA" 3 >"$T/after.pq" 2>&1
fab_check clear-survived python3 - "$T/after.json" "$T/after.pq" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))["ports"][0]
pq = {}
for line in open(sys.argv[2]):
    m = re.match(r'(\w+):\.+(\d+)$', line.strip())
    if m:
        pq[m.group(1)] = int(m.group(2))
c = p["counters"]
s = c["SymbolErrorCounter"]
assert s["value"] == pq["SymbolErrorCounter"] == 4, (s, pq)
assert s["total"] == 77 + 4, s                  # old + new, no jump
assert s["delta"] <= 4, s
assert p["ext_clears"] >= 1, p                  # the clear was noticed
for n in ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"):
    assert c[n]["delta"] < 1 << 20, (n, c[n])   # no 2^32 / 2^64 delta
    assert c[n]["total"] < 1 << 32, (n, c[n])
PY
fab_check clear-logged grep -q "perfmgr: counters of \"sw-a tiny switch\" $SWA_GUID port 3 (LID $SWA) were cleared by someone else" "$T/sm.log"
fab_check dump-file grep -q "^$SWA_GUID 3 $SWA .* SymbolErrorCounter=81/" "$T/counters.dump"
ctl status >"$T/status" 2>&1
fab_check status-lines sh -c "grep -qx 'perfmgr on' '$T/status' &&
	grep -q '^perfmgr_sweeps [1-9]' '$T/status' &&
	grep -qx 'perfmgr_last_sweep_ports 21' '$T/status' &&
	grep -qx 'perfmgr_unresponsive_nodes 0' '$T/status'"
# every port of the two 8-port switches, linked or not, and the 5 CA ports
fab_check sweep-line grep -Eq 'perfmgr: sweep [0-9]+ done: 21 ports, [0-9]+ MADs, [0-9.]+ s' "$T/sm.log"

sm_stop
fab_check clean-exit test $? -eq 0
fab_summary
