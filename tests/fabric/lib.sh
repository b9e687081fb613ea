# shellcheck shell=bash
# tests/fabric/lib.sh - helpers for fabric tests on the ibsim simulator.
#
# Source it from a bash test:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#	fab_sim_start "$FAB_TOPO/fat2-small.net" small
#	fab_run H0001 ibnetdiscover >"$FAB_TMP/ref.net"
#	fab_ibsm H0001 "$FAB_TMP/ibsm.net"
#	fab_cmd 'Unlink "leaf-01"[5]'
#	fab_check "name" fab_compare "$FAB_TMP/ref.net" "$FAB_TMP/ibsm.net"
#	fab_summary
#
# Everything a test creates lives in one private temp dir ($FAB_TMP),
# removed on exit.  Every process it starts (ibsim, ibsm, diags) is
# recorded by PID under $FAB_TMP/pids and stopped by PID in the EXIT trap,
# including clients started from command substitutions.  Each simulator
# gets its own IBSIM_SOCKNAME (ibsm-<test pid>-<name>), so tests can run
# side by side.
#
# ibsim reads console commands from a fifo that the test keeps open: at
# end of file on its standard input ibsim spins at full CPU instead of
# exiting, so the write end must stay open until the simulator is killed.
#
# Settings (environment):
#	IBSM		the daemon (default: <repo>/sm/ibsm)
#	FAB_TIMEOUT	seconds before a client is killed (default 300)
#	FAB_KEEP=1	keep $FAB_TMP for post-mortem
#	FAB_SIM_ARGS	extra ibsim arguments
#	FAB_COMPARE_OPTS options for topo_compare.py (e.g. --ignore-speed)

# FAB_TOPO and FAB_LIB are for the tests that source this file.
# shellcheck disable=SC2034
FAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAB_TOPO=$FAB_TOP/tests/topologies
FAB_LIB=$FAB_TOP/tests/fabric
IBSM=${IBSM:-$FAB_TOP/sm/ibsm}
FAB_TIMEOUT=${FAB_TIMEOUT:-300}
FAB_PASSED=0
FAB_FAILED=0
FAB_SEQ=0
FAB_SIM_PID=
FAB_SIM_WATCH=
FAB_SIM_FD=
FAB_SIM_LOG=
FAB_SOCK=
FAB_WRAP=()

# The preload that replaces /dev/umad with a socket to ibsim.
fab_find_umad2sim() {
	local f
	for f in /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so \
		/usr/lib/*/umad2sim/libumad2sim.so \
		/usr/lib*/umad2sim/libumad2sim.so \
		/usr/local/lib*/umad2sim/libumad2sim.so; do
		[ -e "$f" ] && {
			echo "$f"
			return 0
		}
	done
	return 1
}
UMAD2SIM=${UMAD2SIM:-$(fab_find_umad2sim)}

FAB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ibsm-fabric.XXXXXX") || exit 1
mkdir -p "$FAB_TMP/pids" "$FAB_TMP/run"

fab_log() {
	echo "$*" >&2
}

# Stop every process recorded in $FAB_TMP/pids (by PID), then remove the
# temp dir.  Runs on EXIT; INT/TERM turn into an exit so it runs then too.
fab_cleanup() {
	local f pid
	[ -d "$FAB_TMP/pids" ] || return 0
	for f in "$FAB_TMP"/pids/*; do
		[ -e "$f" ] || continue
		pid=${f##*/}
		kill -TERM "$pid" 2>/dev/null
	done
	for f in "$FAB_TMP"/pids/*; do
		[ -e "$f" ] || continue
		pid=${f##*/}
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		rm -f "$f"
	done
	if [ -n "$FAB_SIM_FD" ]; then
		exec {FAB_SIM_FD}>&-
		FAB_SIM_FD=
	fi
	if [ "${FAB_KEEP:-0}" = 1 ]; then
		fab_log "fabric test files kept in $FAB_TMP"
	else
		rm -rf "$FAB_TMP"
	fi
}
trap fab_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fab_net_limits NETFILE: ibsim -N/-S/-P values big enough for the file
# (ibsim's defaults stop at 2048 nodes, 256 switches, 13312 ports).
fab_net_limits() {
	awk '
	/^Switch[ \t]/ { sw++; nodes++; ports += $2 + 1 }
	/^(Hca|Ca|Rt)[ \t]/ { nodes++; ports += $2 }
	END {
		n = 2 * nodes; if (n < 2048) n = 2048
		s = 2 * sw; if (s < 256) s = 256
		p = 2 * ports; if (p < 13312) p = 13312
		printf "-N %d -S %d -P %d\n", n, s, p
	}' "$1"
}

# fab_sim_start NETFILE [NAME]: start ibsim on NETFILE with its own
# socket name and console fifo; wait until it is ready.  Sets FAB_SOCK,
# FAB_SIM_PID, FAB_SIM_LOG.  One simulator at a time: a running one is
# stopped first.
fab_sim_start() {
	local net name=${2:-sim} fifo limits i
	net=$(readlink -f "$1")
	if [ -z "$net" ] || [ ! -r "$net" ]; then
		fab_log "fab_sim_start: cannot read $1"
		return 1
	fi
	[ -n "$FAB_SIM_PID" ] && fab_sim_stop
	command -v ibsim >/dev/null || {
		fab_log "fab_sim_start: ibsim not installed"
		return 1
	}
	FAB_SEQ=$((FAB_SEQ + 1))
	FAB_SOCK="ibsm-$$-$name-$FAB_SEQ"
	FAB_SIM_LOG="$FAB_TMP/ibsim-$name-$FAB_SEQ.log"
	fifo="$FAB_TMP/console-$FAB_SEQ"
	mkfifo "$fifo" || return 1
	# Open read-write: never blocks, and keeps a writer for ibsim's stdin.
	exec {FAB_SIM_FD}<>"$fifo"
	limits=$(fab_net_limits "$net")
	# shellcheck disable=SC2086 # word splitting of the option lists
	(cd "$FAB_TMP/run" &&
		IBSIM_SOCKNAME=$FAB_SOCK exec ibsim -s $limits ${FAB_SIM_ARGS:-} \
			"$net" <"$fifo" >"$FAB_SIM_LOG" 2>&1) &
	FAB_SIM_PID=$!
	: >"$FAB_TMP/pids/$FAB_SIM_PID"
	# Watchdog: should the test die without its EXIT trap (SIGKILL), stop
	# what it started and remove its files anyway.
	(
		exec {FAB_SIM_FD}>&- </dev/null >/dev/null 2>&1
		while kill -0 $$ 2>/dev/null && kill -0 "$FAB_SIM_PID" 2>/dev/null; do
			sleep 1
		done
		kill -0 $$ 2>/dev/null && exit 0
		for f in "$FAB_TMP"/pids/*; do
			[ "${f##*/}" = "$BASHPID" ] || kill -TERM "${f##*/}" 2>/dev/null
		done
		[ "${FAB_KEEP:-0}" = 1 ] || rm -rf "$FAB_TMP"
	) &
	FAB_SIM_WATCH=$!
	: >"$FAB_TMP/pids/$FAB_SIM_WATCH"
	# "Network simulator ready" comes before the sockets are bound (a
	# name clash panics after it), so also wait for the first prompt and
	# check that a console command is answered.
	for ((i = 0; i < 1200; i++)); do
		if grep -q 'sim> ' "$FAB_SIM_LOG" 2>/dev/null; then
			break
		fi
		if ! kill -0 "$FAB_SIM_PID" 2>/dev/null; then
			break
		fi
		sleep 0.05
	done
	if ! grep -q 'Network simulator ready' "$FAB_SIM_LOG" ||
		! fab_cmd Attached >/dev/null ||
		grep -q 'ibpanic' "$FAB_SIM_LOG"; then
		fab_log "fab_sim_start: ibsim failed on $net:"
		tail -n 20 "$FAB_SIM_LOG" >&2
		fab_sim_stop
		return 1
	fi
	return 0
}

# fab_sim_stop: stop the running simulator (by PID).
fab_sim_stop() {
	[ -n "$FAB_SIM_PID" ] || return 0
	kill -TERM "$FAB_SIM_PID" "$FAB_SIM_WATCH" 2>/dev/null
	wait "$FAB_SIM_PID" "$FAB_SIM_WATCH" 2>/dev/null
	rm -f "$FAB_TMP/pids/$FAB_SIM_PID" "$FAB_TMP/pids/$FAB_SIM_WATCH"
	FAB_SIM_PID=''
	FAB_SIM_WATCH=
	if [ -n "$FAB_SIM_FD" ]; then
		exec {FAB_SIM_FD}>&-
		FAB_SIM_FD=
	fi
}

# fab_cmd COMMAND...: send console commands to ibsim (one per argument),
# wait until they are done (one new "sim> " prompt each), print their
# output.  Fails when ibsim answered with one of its "# ..." error lines
# or died.  Examples:
#	fab_cmd 'Unlink "leaf-01"[19]'	fab_cmd 'ReLink "leaf-01"[19]'
#	fab_cmd 'Error "spine-01" 10'	fab_cmd 'Error "H0001"[1] 10'
#	fab_cmd 'Link "leaf-01"[19] "spine-01"[1]'
#	fab_cmd 'Error "sw-a" 5' 'Error "sw-b" 5'
fab_cmd() {
	local before out i n
	[ -n "$FAB_SIM_PID" ] || {
		fab_log "fab_cmd: no simulator"
		return 1
	}
	before=$(stat -c %s "$FAB_SIM_LOG")
	printf '%s\n' "$@" >&"$FAB_SIM_FD"
	for ((i = 0; ; i++)); do
		out=$(tail -c +"$((before + 1))" "$FAB_SIM_LOG")
		n=$(grep -o 'sim> ' <<<"$out" | wc -l)
		[ "$n" -ge $# ] && break
		if ! kill -0 "$FAB_SIM_PID" 2>/dev/null || ((i > 3000)); then
			fab_log "fab_cmd: no answer from ibsim to: $*"
			return 1
		fi
		sleep 0.02
	done
	out=${out%sim> *}
	printf '%s' "$out"
	! grep -Eq "^(sim> )?# (nodeid .* not found|bad |can't|cannot|no |error rate|port [0-9]+ at|unlink:|change baselid|.*is not linked|.*missing)" <<<"$out"
}

# fab_run HOST COMMAND...: run a client (ibsm, ibnetdiscover, smpquery...)
# under the umad2sim preload, attached at node HOST of the running
# simulator, from the run dir (umad2sim writes ./sys-<pid> there).  The
# client is killed after $FAB_TIMEOUT seconds.  Returns its exit status.
# FAB_WRAP=(/usr/bin/time -v -o FILE) runs the client under a wrapper that
# is not itself preloaded; FAB_PRELOAD_FIRST is preloaded before umad2sim
# (e.g. the ASan runtime).
fab_run() {
	local rc
	fab_spawn "$@" || return 1
	wait "$FAB_SPAWN_PID"
	rc=$?
	rm -f "$FAB_TMP/pids/$FAB_SPAWN_PID"
	return "$rc"
}

# fab_spawn HOST CMD [ARGS...]: start CMD attached at HOST in the
# background (stdin from /dev/null, as for any background job) and return
# at once.  FAB_SPAWN_PID is the `timeout` that runs CMD (a SIGTERM to it
# reaches CMD); it is recorded for fab_cleanup.  Only CMD is preloaded,
# not timeout or a FAB_WRAP tool; it does not inherit the console fifo.
fab_spawn() {
	local host=$1
	shift
	[ -n "$FAB_SOCK" ] || {
		fab_log "fab_spawn: no simulator"
		return 1
	}
	(
		[ -n "$FAB_SIM_FD" ] && exec {FAB_SIM_FD}>&-
		cd "$FAB_TMP/run" || exit 1
		exec timeout -k 5 "$FAB_TIMEOUT" "${FAB_WRAP[@]}" env \
			LD_PRELOAD="${FAB_PRELOAD_FIRST:+$FAB_PRELOAD_FIRST }$UMAD2SIM" \
			SIM_HOST="$host" IBSIM_SOCKNAME="$FAB_SOCK" "$@"
	) &
	FAB_SPAWN_PID=$!
	: >"$FAB_TMP/pids/$FAB_SPAWN_PID"
}

# fab_run_lines JOBS HOST DIR CMD [ARGS...] <LIST: for line N of LIST (0,
# 1, ...), CMD ARGS followed by that line's words, attached at HOST,
# stdout into DIR/N, stderr into DIR/N.err; JOBS of them at a time (ibsim
# serves 10 clients at once: keep JOBS at 4 or less beside an SM and the
# test's own clients).  The same queries as one after another, in less
# time: each client mostly waits for ibsim and the SM.  Prints the number
# of lines; fails when a client failed (each one's status is in
# DIR/N.rc).
fab_run_lines() {
	local jobs=$1 host=$2 dir=$3 n=0 i rc=0 words
	local -a pids=()
	shift 3
	mkdir -p "$dir"
	while read -r -a words; do
		if ((${#pids[@]} >= jobs)); then
			fab_run_lines_reap "$dir" "${pids[0]}" || rc=1
			pids=("${pids[@]:1}")
		fi
		fab_spawn "$host" "$@" "${words[@]}" </dev/null >"$dir/$n" 2>"$dir/$n.err" ||
			return 1
		pids+=("$FAB_SPAWN_PID:$n")
		n=$((n + 1))
	done
	for i in "${pids[@]}"; do
		fab_run_lines_reap "$dir" "$i" || rc=1
	done
	echo "$n"
	return "$rc"
}

# fab_cat_lines DIR N [.err]: the outputs (or the stderr) of the N
# clients of fab_run_lines into DIR, in the order of their lines.
fab_cat_lines() {
	local i
	for ((i = 0; i < $2; i++)); do
		cat "$1/$i${3:-}"
	done
}

# fab_run_lines_reap DIR PID:N: wait for a client of fab_run_lines.
fab_run_lines_reap() {
	local pid=${2%%:*} n=${2#*:} rc
	wait "$pid"
	rc=$?
	rm -f "$FAB_TMP/pids/$pid"
	echo "$rc" >"$1/$n.rc"
	return "$rc"
}

# fab_ibnetdiscover HOST OUT: ibnetdiscover's topology from HOST into OUT.
# fab_topologies: the bundled topology files to test, smallest first, one
# per line; TOPOS="name ..." picks some by name instead.
fab_topologies() {
	local t f
	if [ -n "${TOPOS:-}" ]; then
		for t in $TOPOS; do
			echo "$FAB_TOPO/$t.net"
		done
		return
	fi
	for f in "$FAB_TOPO"/*.net; do
		echo "$(stat -c %s "$f") $f"
	done | sort -n | cut -d' ' -f2-
}

fab_ibnetdiscover() {
	fab_run "$1" ibnetdiscover >"$2" 2>"$2.err"
}

# fab_ibsm HOST OUT [IBSM OPTIONS...]: ibsm -o from HOST (add --discover-only
# for one discovery sweep and no Sets),
# topology dump into OUT, log into OUT.log, summary line into OUT.summary.
fab_ibsm() {
	local host=$1 out=$2
	shift 2
	[ -x "$IBSM" ] || {
		fab_log "fab_ibsm: $IBSM is not built"
		return 127
	}
	# A private guid2lid cache and dump directory per run: a shared one
	# would carry LIDs from one test's fabric into the next.
	mkdir -p "$out.cache"
	fab_run "$host" "$IBSM" -o -f "$out.log" --dump-fabric "$out" \
		--cache-dir "$out.cache" --dump-dir "$out.cache" "$@" \
		>"$out.summary" 2>"$out.err"
}

# fab_ibsm_start HOST DIR [IBSM OPTIONS...]: ibsm as a daemon (master SM)
# on HOST, log DIR/ibsm.log, cache and dumps in DIR; waits for its first
# "SUBNET UP" (fails if it exits or takes longer than FAB_UP_TIMEOUT s).
# fab_ibsm_stop: SIGTERM it and return its exit status (non-zero also
# when a sanitizer reported anything on exit).
FAB_SM_BG=
FAB_SM_PID=
FAB_SM_DIR=
fab_ibsm_start() {
	local host=$1 dir=$2 i
	shift 2
	mkdir -p "$dir"
	FAB_SM_DIR=$dir
	fab_spawn "$host" "$IBSM" -f "$dir/ibsm.log" --cache-dir "$dir" \
		--dump-dir "$dir" "$@" >"$dir/ibsm.out" 2>&1 || return 1
	FAB_SM_BG=$FAB_SPAWN_PID
	FAB_SM_PID=$FAB_SPAWN_PID
	for ((i = 0; i < 10 * ${FAB_UP_TIMEOUT:-60}; i++)); do
		grep -q "SUBNET UP" "$dir/ibsm.log" 2>/dev/null && return 0
		kill -0 "$FAB_SM_BG" 2>/dev/null || break
		sleep 0.1
	done
	fab_log "fab_ibsm_start: no SUBNET UP from ibsm:"
	tail -n 20 "$dir/ibsm.log" "$dir/ibsm.out" >&2 2>/dev/null
	return 1
}

fab_ibsm_stop() {
	local rc
	[ -n "$FAB_SM_BG" ] || return 0
	[ -n "$FAB_SM_PID" ] && kill -TERM "$FAB_SM_PID" 2>/dev/null
	wait "$FAB_SM_BG"
	rc=$?
	rm -f "$FAB_TMP/pids/$FAB_SM_BG"
	FAB_SM_BG=
	FAB_SM_PID=
	if grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" \
		"$FAB_SM_DIR/ibsm.out" 2>/dev/null; then
		sed -n '1,30p' "$FAB_SM_DIR/ibsm.out" >&2
		[ "$rc" -eq 0 ] && rc=99
	fi
	return "$rc"
}

# fab_net_leaf_spine FILE: two leaves of four hosts (H0001-H0004 on
# leaf-1, H0005-H0008 on leaf-2, ports 1-4), each leaf's ports 5 and 6
# to spine-1 and spine-2: the routing-key tests' fabric, where every
# leaf has two equal up-links for each remote host.
fab_net_leaf_spine() {
	local l p s h
	{
		for l in 1 2; do
			echo "Switch 8 \"leaf-$l\""
			for p in 1 2 3 4; do
				printf '[%u]\t"H%04u"[1]\n' "$p" $(((l - 1) * 4 + p))
			done
			printf '[5]\t"spine-1"[%u]\n[6]\t"spine-2"[%u]\n\n' "$l" "$l"
		done
		for s in 1 2; do
			echo "Switch 8 \"spine-$s\""
			printf '[1]\t"leaf-1"[%u]\n[2]\t"leaf-2"[%u]\n\n' \
				$((s + 4)) $((s + 4))
		done
		for h in 1 2 3 4 5 6 7 8; do
			printf 'Hca 1 "H%04u"\n[1]\t"leaf-%u"[%u]\n\n' "$h" \
				$(((h - 1) / 4 + 1)) $(((h - 1) % 4 + 1))
		done
	} >"$1"
}

# fab_lft_hosts OUT DR: the LFT of the switch at directed route DR from
# H0001 (ibroute), as "host port" lines for the CA destinations, sorted;
# the raw output in OUT.raw.
fab_lft_hosts() {
	fab_run H0001 ibroute -D "$2" 1 0x100 >"$1.raw" 2>"$1.err"
	sed -nE "s/^0x[0-9a-f]+ 0*([0-9]+) : \(Channel Adapter .*'(H[0-9]+)'.*/\2 \1/p" \
		"$1.raw" | sort >"$1"
}

# fab_need_opensm: the tests that take OpenSM 3.3.23 as referee stop
# here, failing, when it is not installed.
fab_need_opensm() {
	command -v opensm >/dev/null && return 0
	fab_fail opensm-installed "opensm is the referee of this test"
	fab_summary
	exit 1
}

# fab_opensm_start HOST DIR [ARGS...]: OpenSM 3.3.23 on HOST of the
# running simulator, its cache and dumps in DIR, its log DIR/opensm.log
# (flushed line by line: -d2), with ARGS; waits at most 30 s for its
# SUBNET UP.  0 when it came, 1 when not (OpenSM may still run: stop it
# with fab_opensm_stop either way).  FAB_OSM_PID is the process.
fab_opensm_start() {
	local host=$1 dir=$2 i
	shift 2
	mkdir -p "$dir"
	fab_spawn "$host" env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
		opensm -d2 "$@" -f "$dir/opensm.log" >"$dir/out" 2>&1
	FAB_OSM_PID=$FAB_SPAWN_PID
	for ((i = 0; i < 300; i++)); do
		grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null && return 0
		kill -0 "$FAB_OSM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

fab_opensm_stop() {
	[ -n "${FAB_OSM_PID:-}" ] || return 0
	kill -TERM "$FAB_OSM_PID" 2>/dev/null
	wait "$FAB_OSM_PID" 2>/dev/null
	rm -f "$FAB_TMP/pids/$FAB_OSM_PID"
	FAB_OSM_PID=
}

# fab_wait_master [SECONDS]: wait until sminfo from H0002 names a master
# SM (any SM: OpenSM too), for at most SECONDS (default 60).
fab_wait_master() {
	local i
	for ((i = 0; i < ${1:-60} * 10; i++)); do
		fab_run H0002 sminfo 2>/dev/null | grep -q SMINFO_MASTER && return 0
		sleep 0.1
	done
	return 1
}

# fab_compare REF OUT: compare two ibnetdiscover-format topologies
# (FAB_COMPARE_OPTS, e.g. --ignore-speed, are passed to topo_compare.py).
fab_compare() {
	# shellcheck disable=SC2086 # an option list
	python3 "$FAB_LIB/topo_compare.py" ${FAB_COMPARE_OPTS:-} "$@"
}

# fab_pass NAME / fab_fail NAME [WHY]: record one check's outcome.
fab_pass() {
	FAB_PASSED=$((FAB_PASSED + 1))
	echo "PASS $1"
}

fab_fail() {
	FAB_FAILED=$((FAB_FAILED + 1))
	echo "FAIL $1${2:+ ($2)}"
}

# fab_check NAME COMMAND...: run COMMAND; PASS if it succeeds, else FAIL
# and show the first lines of its output.
fab_check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fab_pass "$name"
	else
		fab_fail "$name" "exit $rc"
		printf '%s\n' "$out" | head -n 30 | sed 's/^/    /'
	fi
	return "$rc"
}

# fab_summary: the final "N passed, M failed" line; non-zero on failure.
fab_summary() {
	echo "${FAB_PASSED} passed, ${FAB_FAILED} failed"
	[ "$FAB_FAILED" -eq 0 ]
}

# fab_time_field FILE 'Maximum resident': one value of a time -v report.
fab_time_field() {
	sed -n "s/^[[:space:]]*$2.*: //p" "$1" | tail -n 1
}

# fab_cpu_ticks PID: user+system clock ticks the process has used so far
# (0 for no such process; fails, printing 0, when PID is not a number:
# "/proc//stat" would be /proc/stat, one line per CPU).
fab_cpu_ticks() {
	[[ $1 =~ ^[0-9]+$ ]] || {
		echo 0
		return 1
	}
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# fab_descendant ROOT NAME: the PID of the process called NAME started
# under ROOT (fab_run puts timeout and env between them).
fab_descendant() {
	local p
	for p in $(pgrep -P "$1"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]; then
			echo "$p"
			return 0
		fi
		fab_descendant "$p" "$2" && return 0
	done
	return 1
}
