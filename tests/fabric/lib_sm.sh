# shellcheck shell=bash
# tests/fabric/lib_sm.sh - helpers for tests of ibsm as a subnet manager:
# run it as a daemon, and verify the subnet it brought up through
# infiniband-diags only (never through ibsm's own output).
#
# Source it after lib.sh:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#	. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"
#	fab_sim_start "$FAB_TOPO/fat2-small.net" small
#	sm_start H0001 "$FAB_TMP/sm" -p 5
#	sm_wait_up "$FAB_TMP/sm" 0 30
#	sm_diags H0002 "$FAB_TMP/diags"
#	sm_verify "$FAB_TMP/diags" --ends 48
#	sm_stop
#
# Settings (environment):
#	SM_DIAG_HOST	node the diags attach to (default H0002)
#	SM_DIAG_JOBS	ibroute clients sm_diags runs at once (default 4)

SM_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SM_DIAG_HOST=${SM_DIAG_HOST:-H0002}
SM_DIAG_JOBS=${SM_DIAG_JOBS:-4}
SM_PID=
SM_OUT=

# sm_start HOST OUT [IBSM OPTIONS...]: start ibsm as a daemon attached at
# HOST of the running simulator, in the background.  Log OUT.log, stdout
# and stderr OUT.out, guid2lid cache and dumps in OUT.cache (kept if it
# already exists: a restart keeps its cache).  Sets SM_PID (the PID of the
# `timeout` that runs it, recorded for lib.sh's cleanup; SIGTERM to it
# reaches ibsm) and SM_OUT.
sm_start() {
	local host=$1 out=$2
	shift 2
	[ -x "$IBSM" ] || {
		fab_log "sm_start: $IBSM is not built"
		return 127
	}
	[ -n "$SM_PID" ] && sm_stop
	mkdir -p "$out.cache"
	: >>"$out.log"
	fab_spawn "$host" "$IBSM" -f "$out.log" --cache-dir "$out.cache" \
		--dump-dir "$out.cache" "$@" >>"$out.out" 2>&1 || return 1
	SM_PID=$FAB_SPAWN_PID
	SM_OUT=$out
}

# sm_alive: the daemon is still running.
sm_alive() {
	[ -n "$SM_PID" ] && kill -0 "$SM_PID" 2>/dev/null
}

# sm_stop: SIGTERM the daemon and wait for it.  Returns its exit status;
# fails as well when its output holds a sanitizer report.
sm_stop() {
	local rc
	[ -n "$SM_PID" ] || return 0
	kill -TERM "$SM_PID" 2>/dev/null
	wait "$SM_PID"
	rc=$?
	rm -f "$FAB_TMP/pids/$SM_PID"
	SM_PID=
	if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
		"$SM_OUT.out" 2>/dev/null; then
		fab_log "sm_stop: sanitizer report in $SM_OUT.out"
		[ "$rc" -eq 0 ] && rc=99
	fi
	return "$rc"
}

# sm_up_lines LOG OFFSET: the "SUBNET UP" lines of LOG after byte OFFSET.
sm_up_lines() {
	tail -c +"$(($2 + 1))" "$1" 2>/dev/null | grep 'SUBNET UP'
}

# sm_sim_and_sm_up NETFILE NAME OUT [IBSM OPTIONS...]: ibsim on NETFILE,
# then ibsm on H0001 writing OUT.log/OUT.out, and its first SUBNET UP
# (PASS subnet-up).  When either fails: FAIL sim-start or subnet-up (with
# the tails of the daemon's log and output), and the test ends there.
sm_sim_and_sm_up() {
	local net=$1 name=$2 out=$3
	shift 3
	if ! fab_sim_start "$net" "$name"; then
		fab_fail sim-start
		fab_summary
		exit 1
	fi
	sm_start H0001 "$out" "$@"
	if ! sm_wait_up "$out" 0 60 >/dev/null; then
		fab_fail subnet-up
		tail -n 20 "$out.log" "$out.out"
		fab_summary
		exit 1
	fi
	fab_pass subnet-up
}

# sm_wait_up OUT OFFSET TIMEOUT: wait until OUT.log has a "SUBNET UP" line
# after byte OFFSET; print that line.  Fails on timeout or when the daemon
# died.
sm_wait_up() {
	local log=$1.log off=$2 limit=$3 line start
	start=$SECONDS
	while :; do
		line=$(sm_up_lines "$log" "$off" | head -n 1)
		if [ -n "$line" ]; then
			printf '%s\n' "$line"
			return 0
		fi
		if ! sm_alive; then
			fab_log "sm_wait_up: ibsm exited"
			return 1
		fi
		if ((SECONDS - start >= limit)); then
			fab_log "sm_wait_up: no SUBNET UP within $limit s"
			return 1
		fi
		sleep 0.02
	done
}

# sm_log_epoch LINE: the time of an ibsm log line ("Nov 21 17:05:48.038792
# [INFO] ...") in seconds since the epoch.  The log has no year: a date in
# the future is taken from last year.
sm_log_epoch() {
	local stamp t now
	stamp=$(awk '{ print $1, $2, $3 }' <<<"$1")
	t=$(date -d "$stamp" +%s.%N) || return 1
	now=$(date +%s)
	if awk -v t="$t" -v n="$now" 'BEGIN { exit !(t > n + 86400) }'; then
		t=$(date -d "$stamp last year" +%s.%N) || return 1
	fi
	printf '%s\n' "$t"
}

# sm_elapsed FROM TO: TO - FROM in seconds, three decimals.
sm_elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'
}

# sm_diags HOST DIR [LMC]: what the diags see from HOST, into DIR:
#	topo	ibnetdiscover -p
#	links	iblinkinfo --line
#	lfts	ibroute -a -n of every switch (by LID), plus the entries
#		ibroute left out (the highest LID when it starts a 64-LID
#		block), asked for again by range and else read with ibtracert
#		from that switch (LMC, default 0, tells which LIDs are
#		assigned)
# Fails when a tool fails; DIR/errors says which.
sm_diags() {
	local host=$1 dir=$2 lmc=${3:-0} lid first last dlid rc=0 n i
	mkdir -p "$dir"
	: >"$dir/errors"
	fab_run "$host" ibnetdiscover -p >"$dir/topo" 2>>"$dir/errors" ||
		{
			echo "ibnetdiscover -p failed" >>"$dir/errors"
			rc=1
		}
	fab_run "$host" iblinkinfo --line >"$dir/links" 2>>"$dir/errors" ||
		{
			echo "iblinkinfo --line failed" >>"$dir/errors"
			rc=1
		}
	# ibroute of every switch, SM_DIAG_JOBS at a time, in LID order.
	awk '$1 == "SW" { print $2 }' "$dir/topo" | sort -nu >"$dir/switches"
	if grep -qx 0 "$dir/switches"; then
		echo "a switch has LID 0: no ibroute for it" >>"$dir/errors"
		rc=1
	fi
	rm -rf "$dir/ibroute"
	n=$(grep -vx 0 "$dir/switches" |
		fab_run_lines "$SM_DIAG_JOBS" "$host" "$dir/ibroute" ibroute -a -n)
	: >"$dir/lfts"
	for ((i = 0; i < ${n:-0}; i++)); do
		cat "$dir/ibroute/$i" >>"$dir/lfts"
		cat "$dir/ibroute/$i.err" >>"$dir/errors"
		if [ "$(cat "$dir/ibroute/$i.rc")" != 0 ]; then
			echo "ibroute -a -n $(grep -vx 0 "$dir/switches" |
				sed -n "$((i + 1))p") failed" >>"$dir/errors"
			rc=1
		fi
	done
	# ibroute leaves out the highest LID when it starts a 64-LID block:
	# ask for the missing ranges again, then ask ibtracert from each
	# switch that still lacks them.
	while read -r lid first last; do
		fab_run "$host" ibroute -a -n "$lid" "$first" "$last" \
			</dev/null >>"$dir/lfts" 2>>"$dir/errors" ||
			{
				echo "ibroute -a -n $lid $first $last failed" >>"$dir/errors"
				rc=1
			}
	done < <(python3 "$SM_LIB/route_check.py" missing "$dir/topo" \
		"$dir/lfts" --lmc "$lmc")
	while read -r lid first last; do
		for ((dlid = first; dlid <= last && dlid < first + 128; dlid++)); do
			# No answer means no route: the check reports the gap.
			fab_run "$host" ibtracert "$lid" "$dlid" </dev/null 2>/dev/null |
				python3 "$SM_LIB/route_check.py" tracert "$dlid" \
					>>"$dir/lfts"
		done
	done < <(python3 "$SM_LIB/route_check.py" missing "$dir/topo" \
		"$dir/lfts" --lmc "$lmc")
	return "$rc"
}

# sm_net_ends NETFILE: linked ports in an ibsim topology file (two per link).
sm_net_ends() {
	grep -cE '^[[:space:]]*\[[0-9]+\][[:space:]]*"' "$1"
}

# sm_verify DIR [--ends N] [--lmc N] [--avoid GUID:PORT...]: the checks of a
# subnet that is up, on what sm_diags collected in DIR: links Active at both
# ends, LIDs unique and non-zero, every LID reached from every CA port.
# Prints what fails; quiet on success unless SM_VERBOSE=1.
sm_verify() {
	local dir=$1 ends=() lmcopt=(--lmc 0) avoid=() rc=0 out
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--ends)
			ends=(--ends "$2")
			shift
			;;
		--lmc)
			lmcopt=(--lmc "$2")
			shift
			;;
		--avoid)
			avoid+=(--avoid "$2")
			shift
			;;
		esac
		shift
	done
	if [ -s "$dir/errors" ]; then
		head -n 5 "$dir/errors"
		rc=1
	fi
	out=$(python3 "$SM_LIB/route_check.py" links "$dir/links" "${ends[@]}") ||
		rc=1
	printf '%s\n' "$out"
	out=$(python3 "$SM_LIB/route_check.py" lids "$dir/topo" "${lmcopt[@]}") ||
		rc=1
	printf '%s\n' "$out"
	out=$(python3 "$SM_LIB/route_check.py" routes "$dir/topo" "$dir/lfts" \
		"${lmcopt[@]}" "${avoid[@]}") || rc=1
	printf '%s\n' "$out"
	return "$rc"
}

# sm_start_named NAME HOST ARGS...: an ibsm daemon; its timeout PID in
# the variable NAME_PID, log NAME.log, output NAME.out, cache NAME.cache
# in $FAB_TMP (tests with several SMs).
sm_start_named() {
	local name=$1 host=$2
	shift 2
	mkdir -p "$FAB_TMP/$name.cache"
	fab_spawn "$host" "$IBSM" -f "$FAB_TMP/$name.log" \
		--cache-dir "$FAB_TMP/$name.cache" --dump-dir "$FAB_TMP/$name.cache" \
		"$@" >>"$FAB_TMP/$name.out" 2>&1
	printf -v "${name}_PID" '%s' "$FAB_SPAWN_PID"
}

# sm_stop_named NAME [SIGNAL]: signal it (TERM) and wait; sanitizer reports fail.
sm_stop_named() {
	local var="${1}_PID" pid rc
	pid=${!var}
	[ -n "$pid" ] || return 0
	if [ "${2:-TERM}" = KILL ]; then
		kill -KILL "$(fab_descendant "$pid" ibsm)" 2>/dev/null
	else
		kill -TERM "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	rm -f "$FAB_TMP/pids/$pid"
	printf -v "$var" '%s' ''
	if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
		"$FAB_TMP/$1.out" 2>/dev/null; then
		fab_log "sanitizer report in $FAB_TMP/$1.out"
		sed -n 1,30p "$FAB_TMP/$1.out" >&2
		return 99
	fi
	[ "${2:-TERM}" = KILL ] && return 0
	return "$rc"
}

# sm_net_two_switches FILE: two 8-port switches, H0001 and H0003 on sw-a,
# H0002, H0004 and H0005 on sw-b (the SM tests' small fabric: two SMs,
# a diag host and a spare host on different switches).
sm_net_two_switches() {
	cat >"$1" <<'NET'
Switch 8 "sw-a"
[1]	"H0001"[1]
[2]	"H0003"[1]
[3]	"sw-b"[3]

Switch 8 "sw-b"
[1]	"H0002"[1]
[2]	"H0004"[1]
[3]	"sw-a"[3]
[4]	"H0005"[1]

Hca 1 "H0001"
[1]	"sw-a"[1]

Hca 1 "H0002"
[1]	"sw-b"[1]

Hca 1 "H0003"
[1]	"sw-a"[2]

Hca 1 "H0004"
[1]	"sw-b"[2]

Hca 1 "H0005"
[1]	"sw-b"[4]
NET
}

# sm_wait_for SECONDS COMMAND...: until COMMAND succeeds (0), else 1.
sm_wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# sm_lid_of HOST: its port's LID, from ibnetdiscover -p run on $DIAG.
sm_lid_of() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk -v h="'$1'" '$1 == "CA" && index($0, "( " h) { print $2; exit }'
}

# sm_state_is LID STATE: sminfo from $DIAG at LID says STATE.
sm_state_is() {
	fab_run "$DIAG" sminfo "$1" 2>/dev/null | grep -q "SMINFO_$2"
}
