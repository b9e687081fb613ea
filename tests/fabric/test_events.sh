#!/usr/bin/env bash
# tests/fabric/test_events.sh - news goes up as events: a trap, a link
# event, SIGHUP and the control socket's reload each reach the state
# machine (sm/ha/) as one event, logged at debug level as
# "event: NAME in STATE -> ACTION", and cause exactly the heavy sweep
# they should, no more:
#
# 1. trap: a host's link goes (ibsim `Unlink "H0004"[1]`): the switch's
#    trap 128 is a TRAP event, one heavy sweep follows; ibnetdiscover
#    then sees one CA fewer.
# 2. SIGHUP: a RELOAD event, one heavy sweep.
# 3. control socket `reload`: a RELOAD event, one heavy sweep.
# 4. link event: the SM's own link goes and comes back (light sweeps,
#    -s 1): the port's return is a PORT_UP event and one heavy sweep
#    brings the subnet up again (sminfo says master).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
SM=$FAB_TMP/sm
LOG=$SM/ibsm.log
SOCK=$SM/ibsm.sock

heavy_sweeps() {
	grep -c 'heavy sweep:' "$LOG" 2>/dev/null || true
}
events() {
	grep -c "event: $1 in $2 -> $3" "$LOG" 2>/dev/null || true
}
# wait_more COUNT: until more heavy sweeps than COUNT ran (10 s at most),
# then 2 s more for any sweep that should not come
wait_more() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(heavy_sweeps)" -gt "$1" ] && break
		sleep 0.1
	done
	sleep 2
}
ibsm_pid() {
	pgrep -P "$FAB_SM_PID" | head -n 1
}

fab_sim_start "$FAB_TOPO/tiny.net" events || exit 1
if ! fab_ibsm_start H0001 "$SM" -V -s 1 --control-socket "$SOCK"; then
	fab_fail events-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass events-ibsm-up
# the first sweep is done, and the light sweeps that follow find nothing
sleep 2
fab_check events-start-consumed test "$(events START NOTACTIVE discover)" -eq 1

# 1. a trap
before=$(heavy_sweeps)
fab_cmd 'Unlink "H0004"[1]' >/dev/null
wait_more "$before"
n=$(events TRAP MASTER 'trap hold-off, heavy sweep')
fab_check events-trap-consumed test "$n" -ge 1
fab_check events-trap-one-sweep test "$(heavy_sweeps)" -eq $((before + 1))
cas=$(fab_run H0002 ibnetdiscover 2>/dev/null | grep -c '^Ca')
fab_check events-trap-ca-gone test "$cas" -eq 3

# 2. SIGHUP
before=$(heavy_sweeps)
kill -HUP "$(ibsm_pid)"
wait_more "$before"
fab_check events-sighup-consumed test "$(events RELOAD MASTER 'reload, heavy sweep')" -eq 1
fab_check events-sighup-one-sweep test "$(heavy_sweeps)" -eq $((before + 1))

# 3. the control socket's reload
before=$(heavy_sweeps)
"$CTL" --socket "$SOCK" reload >/dev/null 2>&1
fab_check events-ctl-reload-ok test $? -eq 0
wait_more "$before"
fab_check events-ctl-reload-consumed test "$(events RELOAD MASTER 'reload, heavy sweep')" -eq 2
fab_check events-ctl-reload-one-sweep test "$(heavy_sweeps)" -eq $((before + 1))

# 4. the SM's own link: lost (a light sweep finds it), then back
fab_cmd 'Unlink "H0001"[1]' >/dev/null
for ((i = 0; i < 100; i++)); do
	grep -q 'ERR 0310:' "$LOG" && break
	sleep 0.1
done
fab_check events-port-down-seen grep -q 'ERR 0310:' "$LOG"
before=$(heavy_sweeps)
fab_cmd 'ReLink "H0001"[1]' >/dev/null
wait_more "$before"
fab_check events-port-up-consumed test "$(events PORT_UP DISCOVERING 'heavy sweep if the port was down')" -eq 1
fab_check events-port-up-one-sweep test "$(heavy_sweeps)" -eq $((before + 1))
fab_run H0002 sminfo 2>&1 | grep -q SMINFO_MASTER
fab_check events-port-up-sminfo-master test $? -eq 0

if fab_ibsm_stop; then
	fab_pass events-clean-exit
else
	fab_fail events-clean-exit "exit status or sanitizer report"
fi
fab_check events-stop-consumed test "$(events STOP MASTER stop)" -eq 1
fab_summary
