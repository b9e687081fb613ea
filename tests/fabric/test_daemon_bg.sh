#!/usr/bin/env bash
# tests/fabric/test_daemon_bg.sh - -B/--daemon and `daemon TRUE`, as the
# scripts that start `opensm -B` once per port use them: a loop starts one
# ibsm -B per host (two SM hosts of one ibsim fabric; a client attaches to
# a node's first port, so one port per host) and every start returns, with
# exit status 0, while its daemon runs on.  Each daemon: its pid file names
# it, it leads its own session with no controlling terminal, its stdin is
# /dev/null, its log says it went into the background; the fabric comes up
# (one master, one standby).  A third daemon from `daemon TRUE` in its
# opensm.conf does the same.  Errors found before the fork still reach the
# terminal and the exit status (a bad value: 2), and so does a daemon that
# stops after it (no such port: the child's status, through the parent).
# All are stopped by PID (from their pid files); the pid files go with
# them.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

NET=$FAB_TMP/net
sm_net_two_switches "$NET"
fab_sim_start "$NET" bg || {
	fab_fail sim-start
	fab_summary
	exit 1
}

# start HOST [ARGS...]: ibsm -B attached at HOST, its files in $FAB_TMP/HOST.*;
# returns ibsm's exit status (FAB_TIMEOUT bounds it: a start that does not
# return fails).
start() {
	local host=$1 d=$FAB_TMP/$1
	shift
	mkdir -p "$d.cache"
	# a sanitizer's report from a daemon (its stderr is /dev/null) goes
	# to $d.san.PID
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$d.san" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$d.san" \
		FAB_TIMEOUT=30 fab_run "$host" "$IBSM" -f "$d.log" --pidfile "$d.pid" \
		--cache-dir "$d.cache" --dump-dir "$d.cache" \
		--control-socket "$d.sock" "$@" >"$d.out" 2>"$d.err"
}

# adopt HOST: the daemon's pid from its pid file, recorded for lib.sh's
# cleanup (it left the process tree fab_run made for it).
adopt() {
	local pid
	pid=$(cat "$FAB_TMP/$1.pid" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	: >"$FAB_TMP/pids/$pid"
	echo "$pid"
}

# detached HOST PID: the checks of a daemon that runs in the background.
detached() {
	local host=$1 pid=$2 sid tty
	kill -0 "$pid" 2>/dev/null || {
		echo "pid $pid from $host.pid is not running"
		return 1
	}
	[ "$(cat "/proc/$pid/comm")" = ibsm ] || {
		echo "pid $pid is $(cat "/proc/$pid/comm"), not ibsm"
		return 1
	}
	read -r sid tty < <(ps -o sid=,tty= -p "$pid")
	[ "$sid" = "$pid" ] || {
		echo "session $sid, not its own ($pid)"
		return 1
	}
	[ "$tty" = "?" ] || {
		echo "controlling terminal $tty"
		return 1
	}
	[ "$(readlink "/proc/$pid/fd/0")" = /dev/null ] || {
		echo "stdin is $(readlink "/proc/$pid/fd/0")"
		return 1
	}
	grep -q "running in the background (-B), pid $pid" "$FAB_TMP/$host.log" || {
		echo "no 'running in the background' line in $host.log"
		return 1
	}
}

# --- the opensm -B loop: one daemon per port (host), each start returns
declare -A PID
t0=$SECONDS
for host in H0001 H0003; do
	args=(-B)
	[ "$host" = H0003 ] && args=(--daemon -p 1)
	if start "$host" "${args[@]}"; then
		fab_pass "start-returns-$host"
	else
		fab_fail "start-returns-$host" "exit $?: $(cat "$FAB_TMP/$host.err")"
	fi
	PID[$host]=$(adopt "$host") || fab_fail "pidfile-$host" "no pid in $host.pid"
done
echo "    the loop returned after $((SECONDS - t0)) s"
for host in H0001 H0003; do
	[ -n "${PID[$host]:-}" ] || continue
	fab_check "detached-$host" detached "$host" "${PID[$host]}"
done

# the fabric is up under them: a master and a standby
if sm_wait_for 30 grep -q "SUBNET UP" "$FAB_TMP/H0003.log" &&
	fab_wait_master 30; then
	fab_pass fabric-up
else
	fab_fail fabric-up "$(tail -n 5 "$FAB_TMP/H0003.log")"
fi
standby() {
	fab_run H0002 sminfo "$(sm_lid_of H0001)" | grep -q SMINFO_STANDBY
}
DIAG=H0002
if sm_wait_for 30 standby; then
	fab_pass second-daemon-standby
else
	fab_fail second-daemon-standby "$(fab_run H0002 sminfo "$(sm_lid_of H0001)" 2>&1)"
fi

# --- daemon TRUE in the file
printf 'daemon TRUE\nsm_priority 0\n' >"$FAB_TMP/daemon.conf"
if start H0004 -F "$FAB_TMP/daemon.conf"; then
	fab_pass start-returns-daemon-key
else
	fab_fail start-returns-daemon-key "exit $?: $(cat "$FAB_TMP/H0004.err")"
fi
PID[H0004]=$(adopt H0004) || fab_fail pidfile-daemon-key "no pid in H0004.pid"
[ -n "${PID[H0004]:-}" ] && fab_check detached-daemon-key detached H0004 "${PID[H0004]}"

# --- errors before the fork: on the terminal, in the exit status
printf 'daemon TRUE\nsm_priority 99\n' >"$FAB_TMP/bad.conf"
start H0005 -F "$FAB_TMP/bad.conf"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "sm_priority" "$FAB_TMP/H0005.err" &&
	[ ! -e "$FAB_TMP/H0005.pid" ]; then
	fab_pass bad-config-on-terminal
else
	fab_fail bad-config-on-terminal "exit $rc: $(cat "$FAB_TMP/H0005.err")"
fi
# ... and after it, before the daemon runs: the child's status
start H0005 -B -g 0x00000000deadbeef
rc=$?
if [ "$rc" -ne 0 ] && grep -q "cannot open the port" "$FAB_TMP/H0005.err" &&
	[ ! -e "$FAB_TMP/H0005.pid" ]; then
	fab_pass no-port-status-through-parent
else
	fab_fail no-port-status-through-parent "exit $rc: $(cat "$FAB_TMP/H0005.err")"
fi

# --- every daemon stopped by its PID; its pid file goes
for host in H0001 H0003 H0004; do
	pid=${PID[$host]:-}
	[ -n "$pid" ] || continue
	kill -TERM "$pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$pid" 2>/dev/null && [ ! -e "$FAB_TMP/$host.pid" ]; then
		fab_pass "stopped-by-pid-$host"
		rm -f "$FAB_TMP/pids/$pid"
	else
		fab_fail "stopped-by-pid-$host" "pid $pid alive or $host.pid left"
	fi
done
for f in "$FAB_TMP"/*.san.*; do
	[ -e "$f" ] || continue
	fab_fail "sanitizers-${f##*/}" "$(head -n 20 "$f")"
done

fab_summary
