#!/usr/bin/env bash
# tests/fabric/test_route_async.sh - a heavy sweep's routing runs on a
# thread of its own (sm/sweep.c), so the loop keeps serving meanwhile.
# IBSM_DEBUG_ROUTE_DELAY_MS=3000 makes every routing computation take 3 s
# more.  Then:
#   1. the first sweep still comes up, with routes valid by the diags;
#   2. while a re-route's computation runs, `ibsmctl status` answers at
#      once and says a heavy sweep is under way, and saquery gets a
#      NodeRecord from the SA, both before the routing line is logged;
#      then the sweep completes and the routes are valid by the diags;
#   3. SIGTERM while a routing computation runs: ibsm waits for it and
#      exits cleanly (status 0, no sanitizer report), within seconds.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
NET=$FAB_TOPO/fat2-small.net
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

printf 'sweep_interval 0\n' >"$T/opensm.conf"

# ------------------------------------------------ 1. the first sweep
export IBSM_DEBUG_ROUTE_DELAY_MS=3000
sm_sim_and_sm_up "$NET" routeasync "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$SOCK"
unset IBSM_DEBUG_ROUTE_DELAY_MS
sm_diags H0002 "$T/d1"
fab_check first-routes-valid sm_verify "$T/d1" --ends "$(sm_net_ends "$NET")"

# ------------------------------- 2. served while the routing computes
off=$(stat -c %s "$T/sm.log")
out=$(ctl reroute)
fab_check reroute-asked grep -q 'sent whole' <<<"$out"
sleep 0.5	# discovery of 20 nodes: a few ms; the routing now runs
t0=$(date +%s%N)
ctl status >"$T/status" 2>&1
st_rc=$?
t1=$(date +%s%N)
# from H0014, not the diags' host: saquery under umad2sim acknowledges
# no RMPP segment, and the SA's re-sends would reach the next client
# there (see test_mcast.sh)
fab_run H0014 saquery -N >"$T/nodes" 2>&1
sa_rc=$?
t2=$(date +%s%N)
new=$(tail -c +"$((off + 1))" "$T/sm.log")
fab_check status-answers test "$st_rc" -eq 0
fab_check status-says-heavy-sweep grep -qx 'sweeping heavy' "$T/status"
fab_check status-within-1s test $(((t1 - t0) / 1000000)) -lt 1000
fab_check saquery-answers test "$sa_rc" -eq 0
fab_check saquery-node-record grep -q 'NodeRecord dump' "$T/nodes"
fab_check saquery-within-2s test $(((t2 - t1) / 1000000)) -lt 2000
fab_check answered-before-routing-done \
	sh -c "! grep -q '\[INFO\] routing: ' <<'EOF'
$new
EOF"
fab_check reroute-sweep-completes sm_wait_up "$T/sm" "$off" 60
new=$(tail -c +"$((off + 1))" "$T/sm.log")
fab_check reroute-routing-logged grep -q '\[INFO\] routing: ' <<<"$new"
sm_diags H0002 "$T/d2"
fab_check reroute-routes-valid sm_verify "$T/d2" --ends "$(sm_net_ends "$NET")"

# ------------------------------ 3. SIGTERM while the routing computes
off=$(stat -c %s "$T/sm.log")
ctl reroute >/dev/null
sleep 0.5
s0=$SECONDS
if sm_stop; then
	fab_pass exit-clean-while-routing
else
	fab_fail exit-clean-while-routing "$(tail -n 5 "$T/sm.out")"
fi
fab_check exit-within-10s test $((SECONDS - s0)) -lt 10
fab_summary
