#!/usr/bin/env bash
# tests/bench/sa_paths.sh - PathRecord queries per second, ibsm vs OpenSM.
#
#   tests/bench/sa_paths.sh [-t SECONDS] [-w WINDOW] [-c PERCENT] [-d]
#                           [-f] [-T TRANSPORT] [-F CONFIG] [TOPOLOGY.net]
#
# Starts ibsim once (default: the bundled 1,152-host fat tree), then for
# each SM in turn (OpenSM 3.3.23, then ibsm) runs it as master, waits for
# SUBNET UP, and measures PathRecord Gets per second from one client and
# from four clients at once (tests/bench/sa_pathbench, WINDOW queries
# in flight each, default 16), twice:
#
#  - shared: the SM, ibsim and the clients share the machine's cores as
#    the scheduler pleases.  Under ibsim every query also costs the
#    simulator and the client CPU time on the same cores, so this rate
#    says as much about them as about the SM.
#  - SM-bound: the SM alone is held to PERCENT of one core (default 50)
#    by a cpu cgroup, the same budget for both SMs, while ibsim and the
#    clients keep the rest of the machine.  The SM is then the
#    bottleneck, as on a real fabric where the clients are other hosts
#    and the HCA carries the MADs: the rate is what each SM makes of the
#    same CPU.  Needs a writable cpu cgroup (root; cgroup v1 or v2); -c 0
#    skips it.
#
# Prints queries/s and the ratio ibsm/OpenSM for each, then the CPU each
# SM spent per query (user + system time of its process over the run,
# divided by the queries answered) and the ratio OpenSM/ibsm, and ibsim's
# CPU per query.  -d makes the clients talk to ibsim's socket directly
# instead of through the umad2sim preload (a client that costs less per
# query; the SMs are unchanged).  Windows above 64 with four clients can
# deadlock ibsim (its socket buffers fill both ways).
#
# -T ibsim runs ibsm with --transport ibsim (mad/sim_io.h: the SM reads
# ibsim's socket on its loop, no umad2sim receiver thread and no pump
# thread in its process); OpenSM is unchanged.  Default umad.
#
# -F CONFIG gives both SMs that opensm.conf-format file (OpenSM and ibsm
# -F CONFIG), e.g. `perfmgr TRUE` with a short perfmgr_sweep_time_s to
# measure the SA while counter sweeps run (tests/bench/perfmgr.sh).
#
# -f adds a third column, the floor: after ibsm has left, the fabric as
# it programmed it, tests/bench/sa_floor answers on the SM's port.  It
# returns every query's own bytes as the answer (no records, no work; one
# thread blocking in umad_recv()), so its CPU per query is what moving
# one query and its answer through libibumad costs a process here
# (under ibsim: the umad2sim preload and its receiver thread), the part
# no SM can save.
user_ibsm=${IBSM:-}
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing, as bringup.sh does); the query
# client comes from the same build.
if [ -z "$user_ibsm" ]; then
	IBSM=$FAB_TOP/build/release/sm/ibsm
	[ -x "$IBSM" ] && [ -x "$FAB_TOP/build/release/tests/bench/sa_pathbench" ] ||
		"$FAB_TOP/tools/bootstrap.sh" release >/dev/null ||
		{ echo "sa_paths: release build failed" >&2; exit 1; }
else
	# Clients start from another directory: an absolute path, and the
	# real file's name, which is what the process is called (its comm,
	# 15 characters at most) when measure looks for it.
	IBSM=$(readlink -f "$user_ibsm")
	[ -x "$IBSM" ] || { echo "sa_paths: IBSM=$user_ibsm is not a program" >&2; exit 1; }
fi
sm_comm=$(basename "$IBSM" | cut -c1-15)

secs=3
window=16
cap=50
direct=
floor=
transport=umad
smconf=()
while getopts t:w:c:dfT:F: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	w) window=$OPTARG ;;
	c) cap=$OPTARG ;;
	d) direct=-d ;;
	f) floor=1 ;;
	T) transport=$OPTARG ;;
	F) smconf=(-F "$(readlink -f "$OPTARG")") ;;
	*) echo "usage: $0 [-t SECONDS] [-w WINDOW] [-c PERCENT] [-d] [-f] [-T TRANSPORT]" \
		"[-F CONFIG] [TOPOLOGY.net]" >&2; exit 2 ;;
	esac
done
case $cap in
''|*[!0-9]*) echo "sa_paths: -c wants a percentage of one core" >&2; exit 2 ;;
esac
shift $((OPTIND - 1))
net=${1:-$FAB_TOPO/fat2-1152.net}
bench=${SA_PATHBENCH:-$(dirname "$IBSM")/../tests/bench/sa_pathbench}
[ -x "$bench" ] || { echo "sa_paths: $bench not built" >&2; exit 1; }
floor_bin=$(dirname "$bench")/sa_floor
[ -z "$floor" ] || [ -x "$floor_bin" ] ||
	{ echo "sa_paths: $floor_bin not built" >&2; exit 1; }
maxlid=$(grep -cE '^(Hca|Ca|Switch)' "$net")

fab_sim_start "$net" paths || exit 1

hz=$(getconf CLK_TCK)

# us_per_query TICKS QPS: CPU microseconds per query, for TICKS clock
# ticks spent over a run of $secs seconds at QPS queries per second.
us_per_query() {
	awk -v d="$1" -v q="$2" -v t="$secs" -v hz="$hz" \
		'BEGIN { if (q > 0) printf "%.1f", d / hz * 1e6 / (q * t); else print "-" }'
}

# run_clients SMPID N: N bench clients at once on hosts H0002.., total
# qps; also leaves the SM's and ibsim's CPU per query (us) in cpu_sm and
# cpu_sim.
run_clients() {
	local smpid=$1 n=$2 i pids=() total=0 q s0 s1 m0 m1
	s0=$(fab_cpu_ticks "$smpid")
	m0=$(fab_cpu_ticks "$FAB_SIM_PID")
	for ((i = 0; i < n; i++)); do
		fab_run "$(printf 'H%04d' $((i + 2)))" "$bench" $direct \
			-t "$secs" -w "$window" \
			-l "$maxlid" -s $((i + 1)) >"$FAB_TMP/bench-$n-$i.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((i = 0; i < n; i++)); do
		q=$(sed -n 's/.*: \([0-9]*\) qps$/\1/p' "$FAB_TMP/bench-$n-$i.out")
		total=$((total + ${q:-0}))
	done
	s1=$(fab_cpu_ticks "$smpid")
	m1=$(fab_cpu_ticks "$FAB_SIM_PID")
	cpu_sm=$(us_per_query $((s1 - s0)) "$total")
	cpu_sim=$(us_per_query $((m1 - m0)) "$total")
	echo "$total"
}

# cpu_cap PID PERCENT: put process PID (all its threads) in a new cpu
# cgroup allowed PERCENT of one core.  Leaves the cgroup's path in
# cap_dir; returns 1 if no cpu cgroup is writable here.
cap_dir=
cpu_cap() {
	local pid=$1 pct=$2 root
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then	# v2
		root=/sys/fs/cgroup
		grep -qw cpu "$root/cgroup.controllers" || return 1
		grep -qw cpu "$root/cgroup.subtree_control" ||
			echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null ||
			return 1
		cap_dir=$root/ibsm-bench-$$
		mkdir -p "$cap_dir" 2>/dev/null &&
			echo "$((pct * 1000)) 100000" >"$cap_dir/cpu.max" &&
			echo "$pid" >"$cap_dir/cgroup.procs" 2>/dev/null ||
			{ cpu_uncap; return 1; }
	elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then	# v1
		root=/sys/fs/cgroup/cpu
		cap_dir=$root/ibsm-bench-$$
		mkdir -p "$cap_dir" 2>/dev/null &&
			echo 100000 >"$cap_dir/cpu.cfs_period_us" &&
			echo "$((pct * 1000))" >"$cap_dir/cpu.cfs_quota_us" &&
			echo "$pid" >"$cap_dir/cgroup.procs" 2>/dev/null ||
			{ cpu_uncap; return 1; }
	else
		return 1
	fi
}

# cpu_uncap: move whatever is in the cgroup back to its parent, remove it.
cpu_uncap() {
	local t
	[ -n "$cap_dir" ] && [ -d "$cap_dir" ] || return 0
	for t in $(cat "$cap_dir/cgroup.procs" 2>/dev/null); do
		echo "$t" >"${cap_dir%/*}/cgroup.procs" 2>/dev/null
	done
	rmdir "$cap_dir" 2>/dev/null
	cap_dir=
}
trap 'cpu_uncap; fab_cleanup' EXIT

# measure SM PID: shared runs with 1 and 4 clients, then (-c) the same
# with the SM capped.  Fills qps/cpu/sim[SM MODE N].
declare -A qps cpu sim
capped=
measure() {
	local sm=$1 pid=$2 mode n
	# Without the SM's PID its CPU would be read from /proc//stat, that
	# is /proc/stat, and cpu_cap would find no process to cap.
	if ! [[ $pid =~ ^[0-9]+$ ]]; then
		echo "sa_paths: no $sm process found to measure" >&2
		exit 1
	fi
	for mode in shared capped; do
		if [ "$mode" = capped ]; then
			[ "$cap" -gt 0 ] || break
			if ! cpu_cap "$pid" "$cap"; then
				# The SMs are compared on the same budget or not at all.
				if [ -n "$capped" ]; then
					echo "sa_paths: cannot cap $sm as the SM before it" >&2
					exit 1
				fi
				echo "sa_paths: no writable cpu cgroup: SM-bound runs skipped" >&2
				cap=0
				break
			fi
			capped=1
		fi
		for n in 1 4; do
			run_clients "$pid" "$n" >"$FAB_TMP/qps"
			qps[$sm$mode$n]=$(cat "$FAB_TMP/qps")
			cpu[$sm$mode$n]=$cpu_sm
			sim[$sm$mode$n]=$cpu_sim
		done
	done
	cpu_uncap
}

# OpenSM
mkdir -p "$FAB_TMP/osm"
OSM_CACHE_DIR=$FAB_TMP/osm OSM_TMP_DIR=$FAB_TMP/osm \
	fab_run H0001 opensm "${smconf[@]}" -f "$FAB_TMP/osm/opensm.log" >/dev/null 2>&1 &
osm_bg=$!
fab_wait_master || { echo "OpenSM did not become master" >&2; exit 1; }
sleep 1
measure opensm "$(fab_descendant "$osm_bg" opensm)"
pkill -TERM -P "$osm_bg" 2>/dev/null
for f in "$FAB_TMP"/pids/*; do
	pid=${f##*/}
	[ "$pid" = "$FAB_SIM_PID" ] || kill -TERM "$pid" 2>/dev/null
done
wait "$osm_bg" 2>/dev/null
sleep 1

# ibsm
fab_ibsm_start H0001 "$FAB_TMP/ibsm" --transport "$transport" "${smconf[@]}" || exit 1
measure ibsm "$(fab_descendant "$FAB_SM_BG" "$sm_comm")"
fab_ibsm_stop

# The floor: ibsm's fabric stays as programmed (SM LID = H0001's).
if [ -n "$floor" ]; then
	sleep 1
	fab_run H0001 "$floor_bin" >"$FAB_TMP/floor.out" 2>&1 &
	floor_bg=$!
	for _ in $(seq 50); do
		grep -q serving "$FAB_TMP/floor.out" && break
		sleep 0.1
	done
	measure floor "$(fab_descendant "$floor_bg" sa_floor)"
	kill -TERM "$(fab_descendant "$floor_bg" sa_floor)" 2>/dev/null
	wait "$floor_bg" 2>/dev/null
fi

# table TITLE ARRAY MODE: OpenSM and ibsm for 1 and 4 clients, and the
# ratio that says how much better ibsm is (more queries, or less CPU).
table() {
	local -n v=$2
	local mode=$3 n r
	printf '%-24s %12s %12s %8s' "$1" OpenSM ibsm "better"
	[ -z "$floor" ] || printf ' %12s' "floor"
	echo
	for n in 1 4; do
		if [ "$2" = qps ]; then
			r=$(awk -v a="${v[ibsm$mode$n]}" -v b="${v[opensm$mode$n]}" \
				'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
		else
			r=$(awk -v a="${v[ibsm$mode$n]}" -v b="${v[opensm$mode$n]}" \
				'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
		fi
		printf '%-24s %12s %12s %8s' "$n client(s)" \
			"${v[opensm$mode$n]}" "${v[ibsm$mode$n]}" "$r"
		[ -z "$floor" ] || printf ' %12s' "${v[floor$mode$n]}"
		echo
	done
}
report() {
	local mode=$1
	table "PathRecord Get/s" qps "$mode"
	table "SM CPU us per query" cpu "$mode"
	printf '%-24s %12s %12s %8s' "ibsim CPU us per query" \
		"${sim[opensm${mode}4]}" "${sim[ibsm${mode}4]}" ""
	[ -z "$floor" ] || printf ' %12s' "${sim[floor${mode}4]}"
	echo
}
echo "Shared: SM, ibsim and clients on the same cores (window $window${direct:+, direct clients})"
report shared
if [ -n "$capped" ]; then
	echo
	echo "SM-bound: each SM held to $cap% of one core (window $window${direct:+, direct clients})"
	report capped
fi
