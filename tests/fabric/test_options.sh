#!/usr/bin/env bash
# tests/fabric/test_options.sh - ibsm's limit options from the command
# line, with no simulator: a value out of range exits 2 with a message
# naming the option, the value and the range; --help lists every limit;
# values in range are taken and shown in the "limits:" line of the log
# (written before the port is opened, so a run that cannot bind one still
# shows it).  That part needs no ibsim: every ibsm there exits by itself.
#
# Then the limits at work on ibsim (fat2-small): ibsm as a daemon with a
# trap budget of 2 at once and 0.5/s, log lines 2 at once and 0.1/s, a
# receive queue of 256 and 64 queued GMPs; a host forges 40 traps in
# 0.4 s.  At most 2 pass the budget (the rest over it, counted), the log
# keeps at most a few ERR 0309 lines of them, and the exit summaries ("traps:",
# "log:", "MADs:") name those limits beside their counters.  A heavy
# sweep (SIGHUP) that changes no LID leaves guid2lid untouched.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The run must not find any port, real or simulated.
unset LD_PRELOAD
NO_PORT=0x00000000deadbeef

# bad OPTION VALUE RANGE: exit 2, "ibsm: --OPTION VALUE: expected ... RANGE"
bad() {
	local opt=$1 val=$2 range=$3 name="bad-${1}-${2}" out rc
	out=$(timeout 20 "$IBSM" -g "$NO_PORT" -f "$FAB_TMP/bad.log" \
		"--$opt" "$val" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] &&
		grep -qF -- "ibsm: --$opt $val: expected" <<<"$out" &&
		grep -qF -- "$range" <<<"$out"; then
		fab_pass "$name"
	else
		fab_fail "$name" "exit $rc, stderr: $out"
	fi
}

bad trap-rate 0 "0.001-100000 traps per second"
bad trap-rate abc "0.001-100000 traps per second"
bad trap-burst 0 "1-100000 traps"
bad trap-burst 100001 "1-100000 traps"
bad trap-sources 4097 "1-4096 sources"
bad trap-holdoff-ms 5x "1-60000 ms"
bad trap-sweep-interval 0.01 "0.1-3600 seconds"
bad log-burst -1 "1-1000000 lines"
bad log-rate 0 "0.001-1000000 lines per second"
bad max-queued-smps 255 "256-16777216 SMPs"
bad max-queued-gmps 1048577 "16-1048576 GMPs"
bad rx-queue 70000 "16-65535 MADs"
bad sa-max-jobs 1.5 "an integer 1-4096 requests"
bad sa-jobs-per-port 0 "1-4096 requests"
bad sa-max-transfers 0 "1-65535 transfers"
bad sa-max-lease 4294967296 "1-4294967295 seconds"
bad sa-work-budget 999 "1000-1000000000 work units"
bad sa-answer-bytes 65535 "65536-4294967296 bytes"
bad part_enforce bogus "both, in, out or off"
bad part_enforce BOTH "both, in, out or off"
# The partition options in their accepted spellings: not refused (the run
# then fails to bind the missing port, which is not exit status 2).
for v in both in out off; do
	out=$(timeout 20 "$IBSM" -g "$NO_PORT" -f "$FAB_TMP/part.log" -o \
		--part_enforce "$v" --allow_both_pkeys 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne 2 ] && ! grep -qF "expected" <<<"$out"; then
		fab_pass "part_enforce-$v"
	else
		fab_fail "part_enforce-$v" "exit $rc, stderr: $out"
	fi
done
if [ ! -e "$FAB_TMP/bad.log" ]; then
	fab_pass bad-values-open-no-log
else
	fab_fail bad-values-open-no-log "a refused command line opened its log"
fi

# --help names every limit.
help=$("$IBSM" --help 2>&1)
missing=
for o in trap-sources trap-burst trap-rate trap-holdoff-ms \
	trap-sweep-interval log-burst log-rate max-queued-smps \
	max-queued-gmps rx-queue sa-max-jobs sa-jobs-per-port sa-work-budget \
	sa-answer-bytes sa-max-transfers sa-transfers-per-port sa-max-services \
	sa-services-per-port sa-max-lease sa-max-subscriptions \
	sa-subscriptions-per-port sa-report-queue sa-report-failures \
	mc-max-groups mc-members-per-group mc-groups-per-port; do
	grep -qF -- "--$o N" <<<"$help" || missing="$missing $o"
done
if [ -z "$missing" ]; then
	fab_pass help-lists-limits
else
	fab_fail help-lists-limits "not in --help:$missing"
fi

# Values in range: accepted (the run fails later, binding no port: exit 1)
# and shown in the "limits:" line; the others keep their defaults.
log=$FAB_TMP/good.log
timeout 20 "$IBSM" -g "$NO_PORT" -f "$log" --trap-rate 0.5 \
	--trap-burst=3 --trap-holdoff-ms 50 --trap-sweep-interval 1.5 \
	--log-burst 4 --log-rate 0.25 --max-queued-gmps 64 --rx-queue 256 \
	--sa-max-jobs 4 --sa-jobs-per-port 1 --trap-sources 1024 \
	--max-queued-smps 0x10000 >/dev/null 2>"$FAB_TMP/good.err"
rc=$?
want="limits: trap-sources 1024, trap-burst 3, trap-rate 0.5, trap-holdoff-ms 50, trap-sweep-interval 1.5, log-burst 4, log-rate 0.25, max-queued-smps 65536, max-queued-gmps 64, rx-queue 256, sa-max-jobs 4, sa-jobs-per-port 1, sa-work-budget 2097152, sa-answer-bytes 8388608, sa-max-transfers 256, sa-transfers-per-port 4, sa-max-services 4096, sa-services-per-port 64, sa-max-lease 86400, sa-max-subscriptions 1024, sa-subscriptions-per-port 16, sa-report-queue 4, sa-report-failures 3, mc-max-groups 4096, mc-members-per-group 65536, mc-groups-per-port 256"
if [ "$rc" -eq 1 ] && grep -qF -- "$want" "$log"; then
	fab_pass good-values-logged
else
	fab_fail good-values-logged "exit $rc; log: $(cat "$log" 2>/dev/null) $(cat "$FAB_TMP/good.err")"
fi
timeout 20 "$IBSM" -g "$NO_PORT" -f "$FAB_TMP/default.log" \
	>/dev/null 2>&1
want="limits: trap-sources 256, trap-burst 8, trap-rate 2, trap-holdoff-ms 200, trap-sweep-interval 5, log-burst 10, log-rate 1, max-queued-smps 1048576, max-queued-gmps 4096, rx-queue 4096, sa-max-jobs 16, sa-jobs-per-port 2, sa-work-budget 2097152, sa-answer-bytes 8388608, sa-max-transfers 256, sa-transfers-per-port 4, sa-max-services 4096, sa-services-per-port 64, sa-max-lease 86400, sa-max-subscriptions 1024, sa-subscriptions-per-port 16, sa-report-queue 4, sa-report-failures 3, mc-max-groups 4096, mc-members-per-group 65536, mc-groups-per-port 256"
if grep -qF -- "$want" "$FAB_TMP/default.log"; then
	fab_pass defaults-logged
else
	fab_fail defaults-logged "$(cat "$FAB_TMP/default.log")"
fi

# ------------------------------------------------ the limits at work
BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
FORGE=${TRAP_FORGE:-$BUILD/tests/fabric/trap_forge}
SM=$FAB_TMP/sm
LOG=$SM/ibsm.log
fab_sim_start "$FAB_TOPO/fat2-small.net" options || {
	fab_fail limits-sim-start "ibsim did not start"
	fab_summary
	exit 1
}
if fab_ibsm_start H0001 "$SM" --trap-burst 2 --trap-rate 0.5 \
	--log-burst 2 --log-rate 0.1 --rx-queue 256 --max-queued-gmps 64; then
	fab_pass limits-ibsm-up
else
	fab_fail limits-ibsm-up "no SUBNET UP"
	fab_summary
	exit 1
fi
if fab_run H0002 "$FORGE" -n 40 -r 100 128 >"$FAB_TMP/forge.out" 2>&1 &&
	grep -q '^sent 40 ' "$FAB_TMP/forge.out"; then
	fab_pass limits-forge-40-traps
else
	fab_fail limits-forge-40-traps "$(cat "$FAB_TMP/forge.out")"
fi
sleep 1

# guid2lid: a heavy sweep that changes no LID leaves the file alone (same
# inode, same mtime) rather than rewriting and fsyncing it every time.
sweeps() {
	grep -c 'heavy sweep:' "$LOG"
}
pid=$(pgrep -P "$FAB_SM_PID" | head -n 1)
g2l_before=$(stat -c '%i %Y.%y' "$SM/guid2lid" 2>/dev/null)
n_before=$(sweeps)
sleep 1.1	# a rewrite would show in the mtime (seconds)
[ -n "$pid" ] && kill -HUP "$pid"
for ((i = 0; i < 100; i++)); do
	[ "$(sweeps)" -gt "$n_before" ] && break
	sleep 0.1
done
g2l_after=$(stat -c '%i %Y.%y' "$SM/guid2lid" 2>/dev/null)
if [ -n "$g2l_before" ] && [ "$(sweeps)" -gt "$n_before" ] &&
	[ "$g2l_before" = "$g2l_after" ]; then
	fab_pass guid2lid-unchanged-on-sweep
else
	fab_fail guid2lid-unchanged-on-sweep "sweeps $n_before -> $(sweeps), guid2lid '$g2l_before' -> '$g2l_after'"
fi
if fab_ibsm_stop; then
	fab_pass limits-ibsm-stop-clean
else
	fab_fail limits-ibsm-stop-clean "exit status or sanitizer report"
fi
grep 'limits: \|traps: \|log: \|MADs: ' "$LOG" | sed 's/^.*\] /    /'

# traps: N received, R rejected, L over their source's budget (2 at
# once, 0.5 per second, 256 sources); ...
traps=$(sed -n 's/.*traps: \([0-9]*\) received, \([0-9]*\) rejected, \([0-9]*\) over their source.s budget (2 at once, 0.5 per second, 256 sources);.*/\1 \2 \3/p' "$LOG")
read -r t_recv _ t_lim <<<"${traps:-x x x}"
# 38 of the 40 are over budget (a little refill allowed; the default of 8
# at once would leave at most 32).
if [ "$t_recv" != x ] && [ "$t_lim" -ge 36 ]; then
	fab_pass limits-trap-budget-applied
else
	fab_fail limits-trap-budget-applied "traps line: $(grep 'traps: ' "$LOG")"
fi
n309=$(grep -c 'ERR 0309:' "$LOG")
suppressed=$(sed -n 's/.*log: \([0-9]*\) rate-limited lines suppressed (2 at once, 0.1 per second per code).*/\1/p' "$LOG")
echo "    ERR 0309 lines: $n309, suppressed: ${suppressed:-?}"
# The default (10 at once) would write at least 10.
if [ "$n309" -le 4 ] && [ "${suppressed:-0}" -ge 30 ]; then
	fab_pass limits-log-rate-applied
else
	fab_fail limits-log-rate-applied "$n309 ERR 0309 lines; $(grep 'log: ' "$LOG")"
fi
if grep -q 'MADs: .* queue peak [0-9]* of 256;.* engine queue peaks [0-9]* of 1048576 SMPs, [0-9]* of 64 GMPs' "$LOG"; then
	fab_pass limits-queues-applied
else
	fab_fail limits-queues-applied "$(grep 'MADs: ' "$LOG")"
fi

fab_summary
