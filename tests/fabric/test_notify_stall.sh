#!/usr/bin/env bash
# test_notify_stall.sh - a service manager that stops reading its notify
# socket does not stall ibsm's loop.
#
#   1. The premise, measured: libsystemd's sd_notify() on a socket nobody
#      reads (notify_stall.py --probe, through ctypes) returns for the
#      first datagrams, until net.unix.max_dgram_qlen are queued, then
#      blocks (still blocked after 3 s).
#   2. ibsm with NOTIFY_SOCKET on such a socket and WATCHDOG_USEC=20000
#      (WATCHDOG=1 every 10 ms: the socket is full within 0.1 s): the
#      subnet comes up, SA queries from H0002 (NodeRecord Gets) keep being
#      answered for 8 s (the latencies are printed) and
#      ibsmctl status answers on the control socket, all served by the
#      loop; ERR 0322 says that the manager stopped reading.
#   3. The manager reads again (SIGUSR1 to notify_stall.py): the
#      notifications the thread kept come through, READY=1 among them,
#      "takes notifications again" is logged, and the SA answers as
#      before.
#   4. SIGTERM: ibsm exits at once (exit 0), STOPPING=1 reaches the
#      manager.
# With a build without libsystemd, 2-4 hold as well (a non-blocking
# socket loses what does not fit) but for READY=1, which may be lost.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
CLIENT=${SA_CLIENT:-$(dirname "$IBSM")/../tests/fabric/sa_client}
NS=$FAB_TMP/notify.sock
NOUT=$FAB_TMP/notify.out

# 1. The premise.
python3 "$FAB_LIB/notify_stall.py" "$FAB_TMP/probe.sock" "$FAB_TMP/probe.out" &
: >"$FAB_TMP/pids/$!"
PROBE_L=$!
for _ in $(seq 50); do
	[ -S "$FAB_TMP/probe.sock" ] && break
	sleep 0.1
done
timeout 3 python3 "$FAB_LIB/notify_stall.py" --probe "$FAB_TMP/probe.sock" >"$FAB_TMP/probe.txt" 2>&1
rc=$?
n=$(tail -n 1 "$FAB_TMP/probe.txt" | sed -n 's/^returned //p')
qlen=$(cat /proc/sys/net/unix/max_dgram_qlen 2>/dev/null)
echo "   sd_notify(): $n calls returned, the next blocked (killed after 3 s, exit $rc); max_dgram_qlen $qlen"
if [ "$rc" -eq 124 ] && [ -n "$n" ] && [ "$n" -lt 40 ]; then
	fab_pass sd-notify-blocks-on-a-full-socket
else
	fab_fail sd-notify-blocks-on-a-full-socket "exit $rc: $(tail -n 2 "$FAB_TMP/probe.txt")"
fi
kill -TERM "$PROBE_L" 2>/dev/null
wait "$PROBE_L" 2>/dev/null
rm -f "$FAB_TMP/pids/$PROBE_L"

# 2. ibsm on a stalled manager.
python3 "$FAB_LIB/notify_stall.py" "$NS" "$NOUT" &
LPID=$!
: >"$FAB_TMP/pids/$LPID"
for _ in $(seq 50); do
	[ -S "$NS" ] && break
	sleep 0.1
done
if ! fab_sim_start "$FAB_TOPO/tiny.net" stall; then
	fab_fail sim-start
	fab_summary
	exit 1
fi
SOCK=$FAB_TMP/ctl.sock
NOTIFY_SOCKET=$NS WATCHDOG_USEC=20000 sm_start H0001 "$FAB_TMP/sm" \
	--control-socket "$SOCK" -s 0
if sm_wait_up "$FAB_TMP/sm" 0 60 >/dev/null; then
	fab_pass subnet-up
else
	fab_fail subnet-up "$(tail -n 5 "$FAB_TMP/sm.log" "$FAB_TMP/sm.out")"
	fab_summary
	exit 1
fi
grep -q 'systemd watchdog: WATCHDOG=1 every 0.010 s' "$FAB_TMP/sm.log" ||
	fab_fail watchdog-on "$(grep -i watchdog "$FAB_TMP/sm.log")"

# sa_loop SECONDS NAME: SA queries from H0002 back to back for SECONDS,
# each a client process (sa_client raw: a NodeRecord Get of LID 1, one
# MAD each way, no RMPP transfer to hold, so no per-port quota is met);
# each must be answered with status 0.  Prints "N queries, N answered,
# median M ms, max X ms" (the time of the whole client process).
sa_loop() {
	local end=$((SECONDS + $1)) t0 t1 n=0 ok=0
	: >"$FAB_TMP/$2.ms"
	while ((SECONDS < end)); do
		t0=$(date +%s%N)
		if FAB_TIMEOUT=10 fab_run H0002 "$CLIENT" raw 0x01 0x11 0x1 0001 \
			>"$FAB_TMP/$2.out" 2>&1 && grep -q '^status 0x0000 ' "$FAB_TMP/$2.out"; then
			ok=$((ok + 1))
		fi
		t1=$(date +%s%N)
		n=$((n + 1))
		echo $(((t1 - t0) / 1000000)) >>"$FAB_TMP/$2.ms"
	done
	sort -n "$FAB_TMP/$2.ms" | awk -v n="$n" -v ok="$ok" '
		{ v[NR] = $1 } END { printf "%d queries, %d answered, median %d ms, max %d ms\n",
			n, ok, v[int((NR + 1) / 2)], v[NR] }'
}

stalled=$(sa_loop 8 stalled)
echo "   stalled manager: $stalled"
if [[ $stalled =~ ^([0-9]+)\ queries,\ ([0-9]+)\ answered ]] &&
	[ "${BASH_REMATCH[1]}" -ge 5 ] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
	fab_pass sa-answers-while-manager-stalled
else
	fab_fail sa-answers-while-manager-stalled "$stalled"
fi
if out=$("$CTL" --socket "$SOCK" status 2>&1) && grep -q 'state MASTER' <<<"$out"; then
	fab_pass ctl-answers-while-manager-stalled
else
	fab_fail ctl-answers-while-manager-stalled "$out"
fi
# With libsystemd the thread's wait is reported (ERR 0322); without it
# the non-blocking send's first loss (ERR 0320, once).
if grep -q 'ERR 0322: the service manager has not taken a notification for' "$FAB_TMP/sm.log" ||
	{ "$IBSM" --version | grep -q 'without libsystemd' &&
		grep -q 'ERR 0320: cannot notify the service manager.*: Resource temporarily unavailable' "$FAB_TMP/sm.log"; }; then
	fab_pass stall-logged
else
	fab_fail stall-logged "no ERR 0322 (or 0320) in the log"
fi

# 3. The manager reads again.
kill -USR1 "$LPID"
ok=
for _ in $(seq 50); do
	grep -q 'READY=1' "$NOUT" && grep -q 'takes notifications again' "$FAB_TMP/sm.log" &&
		ok=1 && break
	sleep 0.1
done
if [ -n "$ok" ] || "$IBSM" --version | grep -q 'without libsystemd'; then
	fab_pass notifications-resume-with-ready
else
	fab_fail notifications-resume-with-ready "$(grep -c . "$NOUT") lines: $(grep -v WATCHDOG "$NOUT" | head -n 3)"
fi
reading=$(sa_loop 4 reading)
echo "   reading manager: $reading"
if [[ $reading =~ ^([0-9]+)\ queries,\ ([0-9]+)\ answered ]] &&
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
	fab_pass sa-answers-after
else
	fab_fail sa-answers-after "$reading"
fi

# 4. Exit.
t0=$SECONDS
sm_stop
rc=$?
if [ "$rc" -eq 0 ] && ((SECONDS - t0 <= 5)); then
	fab_pass exit-prompt
else
	fab_fail exit-prompt "exit $rc after $((SECONDS - t0)) s"
fi
ok=
for _ in $(seq 20); do
	grep -q 'STOPPING=1' "$NOUT" && ok=1 && break
	sleep 0.1
done
if [ -n "$ok" ]; then
	fab_pass stopping-sent
else
	fab_fail stopping-sent "$(tail -n 2 "$NOUT")"
fi
kill -TERM "$LPID" 2>/dev/null
wait "$LPID" 2>/dev/null
rm -f "$FAB_TMP/pids/$LPID"
fab_summary
