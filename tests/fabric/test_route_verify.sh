#!/usr/bin/env bash
# tests/fabric/test_route_verify.sh - routing as the daemon runs it
# (sm/route.c) and offline (ibsm --route-only):
#   1. --route-only on topology files, no simulator: the report (text and
#      JSON), exit 0 when every check passes, 2 for a file it cannot load
#      or an engine list it does not know; tools/routebench the same.
#   2. the daemon with the default engine (auto) on a fat tree: the INFO
#      line of what auto found and chose, and a WARNING (ERR 1501) naming
#      every engine it passed over; routes valid by the diags; `ibsmctl
#      routes report` (text and --json) says the same as the daemon.
#   3. a routing computation whose tables fail the verification
#      (IBSM_DEBUG_CORRUPT_LFT clears one LFT entry from the 2nd
#      computation on): ERR 1502, the sweep still completes (SUBNET UP),
#      and the switches keep the previous, valid tables, as ibroute reads
#      them after a reroute that would otherwise send every table whole.
#   4. ftree on fat3-pods, a spine-core link unlinked: the incremental
#      merge's busiest link, logged, is the report's.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
RB=$(dirname "$IBSM")/../tools/routebench
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# The busiest link: the report names it (switch, port, peer, load), and
# it is the one the daemon logged for the tables it programmed: the same
# figure from the same computation.
same_busiest() {	# same_busiest REPORT [LOG]
	local rep log
	rep=$(sed -n 's/^busiest: //p' "$1")
	log=$(grep 'routing: busiest link ' "${2:-$T/sm.log}" | tail -n 1 |
		sed 's/.*routing: busiest link \(.*\) (max\/ideal .*/\1/')
	[ -n "$rep" ] && [ "$rep" != none ] && [ "$rep" = "$log" ] &&
		grep -q '^0x[0-9a-f]\{16\} ".*" port [0-9]* -> 0x[0-9a-f]\{16\} ".*" port [0-9]*, [0-9]* routes$' <<<"$rep" &&
		[ "${rep##*, }" = "$(sed -n 's/^load: .* max \([0-9]*\) mean.*/\1/p' "$1") routes" ]
}

# ------------------------------------------------ 1. offline, no ibsim
for net in fat2-small fat3-pods torus-4x4 dualrail-32; do
	"$IBSM" --route-only "$FAB_TOPO/$net.net" >"$T/$net.txt" 2>"$T/$net.err"
	rc=$?
	fab_check "offline-$net-exit0" test "$rc" -eq 0
	fab_check "offline-$net-ok" grep -qx 'result: ok' "$T/$net.txt"
	fab_check "offline-$net-no-failures" \
		grep -q '^verify: [0-9]* paths, 0 unreachable, 0 loops, 0 misrouted$' "$T/$net.txt"
done
fab_check offline-auto-sees-fat-tree \
	grep -q '^engine: .*auto: fat tree, 3 levels (16/16/8 switches) -> ' "$T/fat3-pods.txt"
fab_check offline-auto-sees-torus \
	grep -q '^engine: torus: auto: 2D torus, 0 switch(es) and 0 link(s) missing -> torus' "$T/torus-4x4.txt"
"$IBSM" --route-only "$FAB_TOPO/fat2-small.net" -R minhop --lmc 1 --json \
	>"$T/small.json" 2>"$T/small.json.err"
fab_check offline-json-exit0 test $? -eq 0
fab_check offline-json python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["engine"] == "minhop" and d["ok"] is True, d
assert d["switches"] == 6 and d["ports"] == 16 and d["dest_lids"] == 32, d
assert d["routes"] == 16 * 32 and d["unreachable"] == 0, d
assert d["ratio"] >= 1.0 and d["load_max"] >= d["load_mean"], d
assert d["route_seconds"] >= 0 and d["peak_rss_kib"] > 0, d
' "$T/small.json"
"$IBSM" --route-only "$T/no-such.net" >/dev/null 2>"$T/nofile.err"
fab_check offline-missing-file-exit2 test $? -eq 2
fab_check offline-missing-file-says grep -q 'no-such.net' "$T/nofile.err"
"$IBSM" --route-only "$FAB_TOPO/tiny.net" -R no-such-engine >/dev/null 2>"$T/lash.err"
fab_check offline-unknown-engine-exit2 test $? -eq 2
fab_check offline-unknown-engine-says grep -q 'routing engines' "$T/lash.err"
"$RB" -R minhop "$FAB_TOPO/fat2-small.net" >"$T/rb.txt" 2>&1
fab_check routebench-same-report test $? -eq 0
fab_check routebench-ok grep -qx 'result: ok' "$T/rb.txt"

# -------------------------------------------- 2. the daemon, default engine
printf 'sweep_interval 0\n' >"$T/opensm.conf"
export IBSM_DEBUG_CORRUPT_LFT=2
sm_sim_and_sm_up "$FAB_TOPO/fat2-small.net" routeverify "$T/sm" \
	-F "$T/opensm.conf" --control-socket "$SOCK"
unset IBSM_DEBUG_CORRUPT_LFT
line=$(grep -m1 '\[INFO\] routing: ' "$T/sm.log")
fab_check daemon-auto-summary grep -q 'auto: fat tree, 2 levels (4/2 switches) -> ' <<<"$line"
engine=$(sed -n 's/.*\[INFO\] routing: \([a-z]*\): .*/\1/p' <<<"$line")
if [ "$engine" = ftree ]; then
	fab_check daemon-no-fallback-warning \
		sh -c "! grep -q 'ERR 1501' '$T/sm.log'"
else
	# auto fell back from ftree: never silently
	fab_check daemon-fallback-warning \
		grep -q "\[WARN\] ERR 1501: routing fell back to $engine: ftree: " "$T/sm.log"
fi
sm_diags H0002 "$T/d1"
fab_check routes-valid sm_verify "$T/d1" --ends "$(sm_net_ends "$FAB_TOPO/fat2-small.net")"

ctl routes report >"$T/report.txt" 2>&1
fab_check ctl-report-exit0 test $? -eq 0
fab_check ctl-report-ok grep -qx 'result: ok' "$T/report.txt"
fab_check ctl-report-engine grep -q "^engine: $engine: auto: fat tree" "$T/report.txt"
fab_check ctl-report-busiest-as-logged same_busiest "$T/report.txt"
ctl --json routes report >"$T/report.json" 2>&1
fab_check ctl-report-json python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["engine"] == sys.argv[2] and d["ok"] is True, d
assert d["switches"] == 6 and d["ports"] == 16, d
assert d["unreachable"] == 0 and d["loops"] == 0, d
b = d["busiest"]
assert b["load"] == d["load_max"] and b["port"] > 0 and b["peer_port"] > 0, d
assert b["switch"].startswith("0x") and b["desc"] and b["peer_desc"], d
' "$T/report.json" "$engine"

# ------------------------ 3. tables that fail verification are not sent
off=$(stat -c %s "$T/sm.log")
out=$(ctl reroute)
fab_check reroute-asked grep -q 'sent whole' <<<"$out"
if sm_wait_up "$T/sm" "$off" 60 >/dev/null; then
	fab_pass corrupt-sweep-completes
else
	fab_fail corrupt-sweep-completes
fi
new=$(tail -c +"$((off + 1))" "$T/sm.log")
fab_check corrupt-debug-applied grep -q 'IBSM_DEBUG_CORRUPT_LFT: cleared LID' <<<"$new"
fab_check corrupt-err-1502 grep -q '\[ERR\] ERR 1502: routing by .* failed verification: [0-9]* of [0-9]* paths fail ([0-9]* unreachable, 0 loops, 0 misrouted), first: LID [0-9]* from switch 0x[0-9a-f]*.*; the previous tables stay' <<<"$new"
sm_diags H0002 "$T/d2"
fab_check corrupt-old-tables-stay sm_verify "$T/d2" --ends "$(sm_net_ends "$FAB_TOPO/fat2-small.net")"
ctl routes report >"$T/report2.txt" 2>&1
fab_check corrupt-report-ok grep -qx 'result: ok' "$T/report2.txt"
# the previous tables stayed: the logged busiest link is theirs
fab_check corrupt-report-busiest-as-logged same_busiest "$T/report2.txt"

if sm_stop; then
	fab_pass daemon-exit-clean
else
	fab_fail daemon-exit-clean "$(tail -n 5 "$T/sm.out")"
fi

# ------------------------------- 4. an incremental re-route after a loss
# The tables programmed are the previous ones with the lost routes
# replaced, not the engine's: the busiest link logged for them is the
# report's, though the engine's own figure for its full tables differs.
fab_sim_start "$FAB_TOPO/fat3-pods.net" incr || exit 1
SOCK=$T/sock/incr.sock
sm_start H0001 "$T/incr" -R ftree --control-socket "$SOCK"
sm_wait_up "$T/incr" 0 60 >/dev/null
off=$(stat -c %s "$T/incr.log")
fab_cmd 'Unlink "spine-p01-01"[5]' >/dev/null
for ((i = 0; i < 100; i++)); do
	tail -c +"$((off + 1))" "$T/incr.log" | grep -q 'routing: busiest link' && break
	sleep 0.1
done
fab_check incr-merged grep -q 'routing: incremental' "$T/incr.log"
ctl routes report >"$T/report3.txt" 2>&1
fab_check incr-report-busiest-as-logged same_busiest "$T/report3.txt" "$T/incr.log"
fab_check incr-summary-says-merge grep -q '^engine: ftree: incremental merge; the engine.s full tables: ' "$T/report3.txt"
sm_stop || fab_fail incr-exit-clean "$(tail -n 5 "$T/incr.out")"
fab_summary
