#!/usr/bin/env bash
# tests/fabric/test_daemon_files.sh - the daemon's pid file and its
# standard descriptors.
#
# 1. -J FILE: the first ibsm locks the file for its life and writes its
#    pid; a second ibsm given the same file refuses to start (exit 1,
#    naming the first one's pid) and leaves the file alone, instead of
#    overwriting it and sweeping as a second SM.  A file put in place of
#    the first one's while it runs is not removed at its exit; its own
#    is.
#    The log file: by default (accum_log_file TRUE) a start appends to
#    what it holds; -e (accum_log_file FALSE) starts it empty; with
#    --log_prefix every line's text begins with the prefix, as OpenSM's.
#    Both with a sweep interval of 1 s: the first makes one heavy sweep
#    in 3 s (light sweeps after it), the second, with force_heavy_sweep
#    TRUE, a heavy sweep every interval.
# 2. Started with descriptors 0, 1 and 2 closed and -f stdout: they must
#    be /dev/null (as /proc says) while ibsm runs as master, not the
#    loop's, the log's or a socket's, which "-f stdout" would then write
#    into.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T=$FAB_TMP
PIDF=$T/ibsm.pid

# The ibsm process itself (fab_spawn's PID is the `timeout` around it).
ibsm_pid() {
	pgrep -P "$FAB_SM_PID" | head -n 1
}

fab_sim_start "$FAB_TOPO/fat2-small.net" dfiles || exit 1

# ---- 1. the pid file
mkdir -p "$T/a" "$T/c"
echo "an older run's line" >"$T/a/ibsm.log"
echo "an older run's line" >"$T/c/ibsm.log"
printf 'force_heavy_sweep TRUE\n' >"$T/force.conf"
# heavy_after_3s DIR: the heavy sweeps of DIR/ibsm.log 3 s after SUBNET UP
heavy_after_3s() {
	sleep 3
	grep -c 'heavy sweep:' "$1/ibsm.log"
}
if ! fab_ibsm_start H0001 "$T/a" -J "$PIDF" -s 1; then
	fab_fail "first ibsm up"
	fab_summary
	exit 1
fi
fab_pass "first ibsm up"
n=$(heavy_after_3s "$T/a")
fab_check "one heavy sweep in 3 s by default ($n)" test "$n" -eq 1
a=$(ibsm_pid)
fab_check "the pid file names the first ibsm ($a)" test "$(cat "$PIDF" 2>/dev/null)" = "$a"

mkdir -p "$T/b"
FAB_TIMEOUT=20 fab_run H0002 "$IBSM" -J "$PIDF" -f "$T/b/ibsm.log" \
	--cache-dir "$T/b" --dump-dir "$T/b" >"$T/b/out" 2>&1
rc=$?
sed 's/^/    /' "$T/b/out"
fab_check "a second ibsm with the same pid file is refused (exit $rc)" test "$rc" -eq 1
fab_check "... saying who holds it" grep -q "pid file $PIDF is held by another ibsm (pid $a)" "$T/b/out"
fab_check "... and never sweeps" test "$(grep -c 'heavy sweep' "$T/b/ibsm.log" 2>/dev/null)" = 0
fab_check "the pid file still names the first ibsm" test "$(cat "$PIDF" 2>/dev/null)" = "$a"
fab_check "the first ibsm is still master" fab_wait_master 10

# Someone else's file in its place: not removed by the first at exit.
rm -f "$PIDF"
echo 4242 >"$PIDF"
if fab_ibsm_stop; then
	fab_pass "first ibsm exits cleanly"
else
	fab_fail "first ibsm exits cleanly"
fi
fab_check "a pid file that is not its own is left alone" test "$(cat "$PIDF" 2>/dev/null)" = 4242
rm -f "$PIDF"

# Its own file is removed at exit.
fab_sim_start "$FAB_TOPO/fat2-small.net" dfiles2 || exit 1
if fab_ibsm_start H0001 "$T/c" -J "$PIDF" -e --log_prefix fabric-A \
	-s 1 -F "$T/force.conf"; then
	fab_pass "ibsm up again"
	n=$(heavy_after_3s "$T/c")
	fab_check "force_heavy_sweep: a heavy sweep every second ($n in 3 s)" \
		test "$n" -ge 3
else
	fab_fail "ibsm up again"
fi
fab_check "a fresh pid file" test -s "$PIDF"
fab_ibsm_stop
fab_check "its own pid file is removed at exit" test ! -e "$PIDF"
fab_check "the log is appended to by default" \
	grep -q "^an older run's line" "$T/a/ibsm.log"
fab_check "-e (accum_log_file FALSE) starts the log empty" \
	test "$(grep -c "older run" "$T/c/ibsm.log")" = 0
fab_check "log_prefix begins every line's text" \
	grep -q "^[A-Z][a-z][a-z] .* \[INFO\] fabric-A: .*SUBNET UP" "$T/c/ibsm.log"
fab_check "no line without the prefix" \
	test "$(grep -vc "\] fabric-A: " "$T/c/ibsm.log")" = 0

# ---- 2. descriptors 0-2 closed
fab_sim_start "$FAB_TOPO/fat2-small.net" dfiles3 || exit 1
mkdir -p "$T/d"
# shellcheck disable=SC2016 # expanded by that sh
fab_spawn H0001 sh -c 'exec "$0" "$@" <&- >&- 2>&-' "$IBSM" -f stdout \
	--cache-dir "$T/d" --dump-dir "$T/d" -J "$T/d/pid"
FAB_SM_BG=$FAB_SPAWN_PID
FAB_SM_PID=$FAB_SPAWN_PID
FAB_SM_DIR=$T/d
fab_check "ibsm with fds 0-2 closed becomes master" fab_wait_master 30
p=$(ibsm_pid)
for fd in 0 1 2; do
	l=$(readlink "/proc/${p:-0}/fd/$fd" 2>&1)
	fab_check "fd $fd is /dev/null ($l)" test "$l" = /dev/null
done
fab_check "its pid file names it" test "$(cat "$T/d/pid" 2>/dev/null)" = "${p:-none}"
if fab_ibsm_stop; then
	fab_pass "ibsm exits cleanly"
else
	fab_fail "ibsm exits cleanly"
fi
fab_summary
