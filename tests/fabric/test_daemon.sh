#!/usr/bin/env bash
# tests/fabric/test_daemon.sh - ibsm as a long-running daemon facing a
# hostile host, logrotate, and its own link coming up late.
#
# 1. Traps: a host forges 1,000 SubnTraps at 100/s (trap 128 naming
#    itself, trap 65, trap 144 naming the SM's port).  ibsm must start no
#    heavy sweep for them, forward none to subscribers, log them rate
#    limited, and still sweep for a genuine trap 128 from a switch.
# 2. SIGUSR1 (logrotate): the log is renamed, USR1 sent; ibsm keeps
#    running and writes to a new file under the old name.
# 3. The SM port down at start (ibsim `Unlink "H0001"[1]`): no SUBNET UP,
#    "ERR 0310" instead; after `ReLink` the subnet is up within 10 s as
#    the diags see it (sminfo, ibnetdiscover).  Then the link goes while
#    ibsm is master (found by a light sweep, -s 2) and comes back.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
FORGE=${TRAP_FORGE:-$BUILD/tests/fabric/trap_forge}
CLIENT=${SA_CLIENT:-$BUILD/tests/fabric/sa_client}
SM=$FAB_TMP/sm
LOG=$SM/ibsm.log

heavy_sweeps() {
	grep -c 'heavy sweep:' "$1" 2>/dev/null || true
}

# The ibsm process itself (fab_spawn's PID is the `timeout` around it).
ibsm_pid() {
	pgrep -P "$FAB_SM_PID" | head -n 1
}

fab_sim_start "$FAB_TOPO/fat2-small.net" daemon || exit 1
if ! fab_ibsm_start H0001 "$SM"; then
	fab_fail daemon-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass daemon-ibsm-up

# ---------------------------------------------------------------- traps
# Subscribers (see test_sa.sh for issm): any Report of trap 65 or
# 128 while the forger runs is a forged trap forwarded.
subscribe() {
	# bounded: umad2sim's exit can deadlock (test_sa.sh)
	FAB_TIMEOUT=$(($3 + 15)) fab_run "$1" "$CLIENT" subscribe "$2" "$3" issm \
		>"$FAB_TMP/sub-$1-$2.out" 2>&1
}
wait_subscribed() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q subscribed "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
subscribe H0007 65 16 &
sub65=$!
subscribe H0008 128 16 &
sub128=$!
if wait_subscribed "$FAB_TMP/sub-H0007-65.out" &&
	wait_subscribed "$FAB_TMP/sub-H0008-128.out"; then
	fab_pass daemon-subscribed
else
	fab_fail daemon-subscribed "$(cat "$FAB_TMP"/sub-*.out)"
fi

before=$(heavy_sweeps "$LOG")
lines_before=$(wc -l <"$LOG")
if fab_run H0002 "$FORGE" -n 1000 -r 100 128,65,144 >"$FAB_TMP/forge.out" 2>&1 &&
	grep -q '^sent 1000 ' "$FAB_TMP/forge.out"; then
	fab_pass daemon-forge-1000-traps-sent
else
	fab_fail daemon-forge-1000-traps-sent "$(cat "$FAB_TMP/forge.out")"
fi
sed 's/^/    /' "$FAB_TMP/forge.out"
sleep 1
after=$(heavy_sweeps "$LOG")
echo "    heavy sweeps during the flood: $((after - before))"
if [ $((after - before)) -le 2 ]; then
	fab_pass daemon-forged-traps-no-sweeps
else
	fab_fail daemon-forged-traps-no-sweeps "$((after - before)) heavy sweeps"
fi

# No Report reached a subscriber: each times out (exit 1) without one.
no_report() {
	! wait "$1" && ! grep -q '^report' "$2"
}
if no_report "$sub65" "$FAB_TMP/sub-H0007-65.out"; then
	fab_pass daemon-forged-65-not-reported
else
	fab_fail daemon-forged-65-not-reported "$(cat "$FAB_TMP/sub-H0007-65.out")"
fi
if no_report "$sub128" "$FAB_TMP/sub-H0008-128.out"; then
	fab_pass daemon-forged-128-not-reported
else
	fab_fail daemon-forged-128-not-reported "$(cat "$FAB_TMP/sub-H0008-128.out")"
fi

# Rejected with their codes, and the log stayed short.
flood_log=$FAB_TMP/flood.log
tail -n +"$((lines_before + 1))" "$LOG" >"$flood_log"
for code in 0307 0308 0309; do
	if grep -q "ERR $code:" "$flood_log"; then
		fab_pass "daemon-trap-log-$code"
	else
		fab_fail "daemon-trap-log-$code" "no ERR $code line"
	fi
done
# the rejections (ERR 0305-0309) and the traps taken (informational lines
# "trap N from LID L (issuer LID I)", rate limited as code 0304)
trap_lines=$(grep -cE 'ERR 030[5-9]:|\] trap [0-9]+ from LID [0-9]+ \(issuer LID' "$flood_log")
echo "    trap log lines for 1000 traps: $trap_lines"
if [ "$trap_lines" -le 150 ] && grep -q 'similar messages suppressed' "$flood_log"; then
	fab_pass daemon-trap-log-rate-limited
else
	fab_fail daemon-trap-log-rate-limited "$trap_lines lines"
fi
sminfo_master() {
	fab_run "$1" sminfo | grep -q SMINFO_MASTER
}
fab_check daemon-sminfo-after-flood sminfo_master H0003

# A genuine trap 128 (a switch port goes down) still sweeps and reports.
subscribe H0009 128 20 &
sub=$!
wait_subscribed "$FAB_TMP/sub-H0009-128.out"
before=$(heavy_sweeps "$LOG")
fab_cmd 'Unlink "H0016"[1]' >/dev/null
if wait "$sub" && grep -q '^report 128' "$FAB_TMP/sub-H0009-128.out"; then
	fab_pass daemon-genuine-128-reported
else
	fab_fail daemon-genuine-128-reported "$(cat "$FAB_TMP/sub-H0009-128.out")"
fi
for ((i = 0; i < 100; i++)); do
	[ "$(heavy_sweeps "$LOG")" -gt "$before" ] && break
	sleep 0.1
done
if [ "$(heavy_sweeps "$LOG")" -gt "$before" ]; then
	fab_pass daemon-genuine-128-sweeps
else
	fab_fail daemon-genuine-128-sweeps "no heavy sweep within 10 s"
fi

# ------------------------------------------------------------- SIGUSR1
pid=$(ibsm_pid)
mv "$LOG" "$LOG.1"
kill -USR1 "$pid"
for ((i = 0; i < 50; i++)); do
	[ -s "$LOG" ] && break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null && grep -q 'SIGUSR1: log file reopened' "$LOG" 2>/dev/null; then
	fab_pass daemon-sigusr1-reopens-log
else
	fab_fail daemon-sigusr1-reopens-log "alive: $(kill -0 "$pid" 2>&1 && echo yes); $(head -n 3 "$LOG" 2>&1)"
fi
kill -HUP "$pid"
for ((i = 0; i < 100; i++)); do
	grep -q 'heavy sweep:' "$LOG" 2>/dev/null && break
	sleep 0.1
done
if grep -q 'heavy sweep:' "$LOG" && ! grep -q 'SIGHUP' "$LOG.1"; then
	fab_pass daemon-new-log-in-use
else
	fab_fail daemon-new-log-in-use "$(tail -n 3 "$LOG")"
fi
if fab_ibsm_stop; then
	fab_pass daemon-clean-exit
else
	fab_fail daemon-clean-exit "exit status or sanitizer report"
fi

# ------------------------------------------------------ SM port down
fab_sim_start "$FAB_TOPO/fat2-small.net" portdown || exit 1
fab_cmd 'Unlink "H0001"[1]' >/dev/null
SM=$FAB_TMP/sm-down
LOG=$SM/ibsm.log
mkdir -p "$SM"
fab_spawn H0001 "$IBSM" -f "$LOG" --cache-dir "$SM" --dump-dir "$SM" -s 2 \
	>"$SM/ibsm.out" 2>&1
FAB_SM_BG=$FAB_SPAWN_PID
FAB_SM_PID=$FAB_SPAWN_PID
FAB_SM_DIR=$SM
for ((i = 0; i < 200; i++)); do
	grep -q 'ERR 0310:' "$LOG" 2>/dev/null && break
	sleep 0.1
done
sleep 3
if grep -q 'ERR 0310:' "$LOG" && ! grep -q 'SUBNET UP' "$LOG"; then
	fab_pass daemon-port-down-no-subnet-up
else
	fab_fail daemon-port-down-no-subnet-up "$(grep -E 'SUBNET UP|ERR' "$LOG" | head -3)"
fi
fab_cmd 'ReLink "H0001"[1]' >/dev/null
start=$SECONDS
for ((i = 0; i < 300; i++)); do
	grep -q 'SUBNET UP' "$LOG" && break
	sleep 0.1
done
took=$((SECONDS - start))
echo "    SUBNET UP ${took} s after ReLink"
if grep -q 'SUBNET UP in .* 16 CAs' "$LOG" && [ "$took" -le 10 ]; then
	fab_pass daemon-port-up-subnet-up-10s
else
	fab_fail daemon-port-up-subnet-up-10s "$(grep 'SUBNET UP' "$LOG" | head -2)"
fi
if fab_run H0002 sminfo 2>&1 | grep -q SMINFO_MASTER; then
	fab_pass daemon-port-up-sminfo-master
else
	fab_fail daemon-port-up-sminfo-master
fi
cas=$(fab_run H0002 ibnetdiscover 2>/dev/null | grep -c '^Ca')
if [ "$cas" -eq 16 ]; then
	fab_pass daemon-port-up-ibnetdiscover-16-cas
else
	fab_fail daemon-port-up-ibnetdiscover-16-cas "$cas CAs"
fi
# The SM's link goes while it is master (the light sweep notices), then
# comes back.
fab_cmd 'Unlink "H0001"[1]' >/dev/null
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c 'ERR 0310:' "$LOG")" -ge 2 ] && break
	sleep 0.1
done
ups=$(grep -c 'SUBNET UP$' "$LOG")
if [ "$(grep -c 'ERR 0310:' "$LOG")" -ge 2 ]; then
	fab_pass daemon-port-lost-while-master
else
	fab_fail daemon-port-lost-while-master "$(tail -n 3 "$LOG")"
fi
fab_cmd 'ReLink "H0001"[1]' >/dev/null
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c 'SUBNET UP$' "$LOG")" -gt "$ups" ] && break
	sleep 0.1
done
if [ "$(grep -c 'SUBNET UP$' "$LOG")" -gt "$ups" ] &&
	fab_run H0002 sminfo 2>&1 | grep -q SMINFO_MASTER; then
	fab_pass daemon-port-back-subnet-up-10s
else
	fab_fail daemon-port-back-subnet-up-10s "$(tail -n 3 "$LOG")"
fi
if fab_ibsm_stop; then
	fab_pass daemon-port-down-clean-exit
else
	fab_fail daemon-port-down-clean-exit "exit status or sanitizer report"
fi
fab_summary
