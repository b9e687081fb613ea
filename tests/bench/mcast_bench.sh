#!/usr/bin/env bash
# tests/bench/mcast_bench.sh - multicast joins per second and MFT settle
# time, OpenSM vs ibsm, in the same run.  By hand, not in tests/run.
#
#   tests/bench/mcast_bench.sh [-n GROUPS] [-h HOSTS] [-w WINDOW]
#                              [-s SMS] [-c PERCENT] [-r RUNS]
#                              [-T TRANSPORT] [-f] [TOPOLOGY.net]
#
# For each SM in turn (default "opensm ibsm"), on a fresh ibsim of the
# topology (default: the bundled 1,152-host fat tree), the SM comes up on
# H0001; then HOSTS hosts on different leaves (default 8: H0003, H0021,
# ..., 18 apart) each join the same GROUPS groups (default 250, as ibsm
# lets a port into at most 256 groups; ff12:e01b::b:0 on, created by
# whichever join comes first) from one mc_join process each, all at
# once (each opens its port, then all send their first requests at the
# same moment: mc_join --start-at), WINDOW joins in flight per host
# (default 8).  RUNS times
# (default 3) on the same SM: every host leaves the groups again between
# runs, and each run has its own MGIDs (ff12:e01b::RUN:0 on).
#
# SM-bound: after SUBNET UP the SM (all its threads) is held to PERCENT
# of one core by a cpu cgroup (default 20; 0: not held; the period is
# 10 ms so that a burst of a few hundred ms sees the cap), the same for
# both SMs, while ibsim and the clients keep the rest, as sa_paths.sh
# does.  Reported, the median of the runs (and every run's figures):
#
#  - joins/s: joins the SA accepted (all hosts) / (last answer - the
#    common start);
#  - SM CPU/join: CPU time of the SM's threads over the joins and the
#    MFT work they cause until the clients are done
#    (/proc/PID/task/*/schedstat) / joins accepted; ibsim CPU/join the
#    same for the simulator;
#  - settle: from the last accepted join to the moment every member's
#    port is set in its leaf switch's MulticastForwardingTable entry for
#    the group's MLID.  Both SMs hand out the lowest free MLIDs, so the
#    MLIDs are known before the joins (0xC001 on; then what the run
#    before got): the poller (mc_join --serial mft-wait) watches those
#    entries throughout the joins, one block at a time, every 2 ms, and
#    the time is measured to within a poll round.  If the join answers
#    show other MLIDs, a poller started after the joins gives a bound
#    ("<= T");
#  - trees: after the last run, ibroute -M of every switch checked with
#    tests/fabric/mc_check.py tree for the groups' MLIDs (every member
#    reaches every receiver, no loop, no other host): "ok" or the number
#    of problems.  OpenSM forwards to send-only members; all members
#    here are full.
#
# -f adds a third row, the floor: on a fresh ibsim, ibsm brings the
# fabric up and leaves, then tests/bench/sa_floor answers on the SM's port
# under the same cap.  It returns every request's own bytes with status 0
# (no group, no MLID, no MFT; one thread blocking in umad_recv()), which
# mc_join counts as an accepted join.  Its rate is what an SA that does no
# work gets here, where each request and its answer cross libibumad
# (under ibsim: the umad2sim preload and its receiver thread, in the SA's
# process and so under its cap); a design that wakes fewer threads per
# MAD can do a little better, none much better.  Settle and trees are "-"
# for it, and it is left out of the ratio.
#
# -T ibsim runs ibsm with --transport ibsim (mad/sim_io.h: no umad2sim
# receiver thread and no pump thread in the SM); OpenSM is unchanged.
#
# Under ibsim every join also costs the simulator and the clients CPU on
# the same cores; the rates compare the SMs on equal terms, not with
# hardware.  At most 10 clients attach to ibsim at once (SM + HOSTS +
# the poller): HOSTS <= 8.  The cgroup needs root (cgroup v1 or v2).
#
# It measures build/release (made with tools/bootstrap.sh release when
# missing) unless IBSM=.../sm/ibsm (and IBSM_BUILD=... for mc_join) say
# otherwise: under ASan ibsm is several times slower.
# shellcheck source=tests/fabric/lib.sh
user_ibsm=${IBSM:-}
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing); mc_join from the same build.
if [ -z "$user_ibsm" ]; then
	IBSM=$FAB_TOP/build/release/sm/ibsm
	[ -x "$IBSM" ] && [ -x "$FAB_TOP/build/release/tests/fabric/mc_join" ] ||
		"$FAB_TOP/tools/bootstrap.sh" release >/dev/null ||
		{ echo "mcast_bench: release build failed" >&2; exit 1; }
fi

groups=250
nhosts=8
window=8
sms="opensm ibsm"
cap=20
runs=3
transport=umad
floor=
while getopts n:h:w:s:c:r:T:f opt; do
	case $opt in
	n) groups=$OPTARG ;;
	h) nhosts=$OPTARG ;;
	w) window=$OPTARG ;;
	s) sms=$OPTARG ;;
	c) cap=$OPTARG ;;
	r) runs=$OPTARG ;;
	T) transport=$OPTARG ;;
	f) floor=1 ;;
	*)
		echo "usage: $0 [-n GROUPS] [-h HOSTS] [-w WINDOW] [-s SMS] [-c PERCENT] [-r RUNS] [-T TRANSPORT] [-f] [TOPOLOGY.net]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
case "$groups$nhosts$window$cap$runs" in
*[!0-9]*) echo "mcast_bench: -n, -h, -w, -c, -r want numbers" >&2; exit 2 ;;
esac
((runs >= 1 && cap <= 100)) || { echo "mcast_bench: -r 1 or more, -c 0-100" >&2; exit 2; }
((nhosts >= 1 && nhosts <= 8)) || { echo "mcast_bench: -h 1-8" >&2; exit 2; }
((groups >= 1 && groups <= 1000)) ||
	{ echo "mcast_bench: -n 1-1000 (ibsim has 1024 MLIDs)" >&2; exit 2; }
net=${1:-$FAB_TOPO/fat2-1152.net}
BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
MJ=${MC_JOIN:-$BUILD/tests/fabric/mc_join}
[ -x "$MJ" ] || { echo "mcast_bench: $MJ not built" >&2; exit 1; }
[ -x "$IBSM" ] || { echo "mcast_bench: $IBSM not built" >&2; exit 1; }
FLOOR_BIN=$BUILD/tests/bench/sa_floor
[ -z "$floor" ] || [ -x "$FLOOR_BIN" ] ||
	{ echo "mcast_bench: $FLOOR_BIN not built" >&2; exit 1; }
[ -z "$floor" ] || sms="$sms floor"
MGID=ff12:e01b::b:0
# An ASan build under the umad2sim preload needs these (as tests/run).
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:suppressions=$FAB_TOP/tests/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
DIAG=H0002

hosts=()
for ((k = 0; k < nhosts; k++)); do
	hosts+=("$(printf 'H%04d' $((3 + 18 * k)))")
done

# sm_up KIND DIR: start the SM on H0001, wait for SUBNET UP.  SMPID: the
# SM process itself (for its CPU time).
SPAWN=
sm_up() {
	local kind=$1 dir=$2 i log
	mkdir -p "$dir"
	if [ "$kind" = floor ]; then
		# ibsm brings the fabric up and leaves it as programmed (the
		# ports keep H0001's LID as their SM LID); sa_floor takes over
		# the SA's QP there.
		sm_up ibsm "$dir/up" && sm_down || return 1
		sleep 1
		fab_spawn H0001 "$FLOOR_BIN" >"$dir/out" 2>&1
		SPAWN=$FAB_SPAWN_PID
		for ((i = 0; i < 50; i++)); do
			grep -q serving "$dir/out" && break
			sleep 0.1
		done
		grep -q serving "$dir/out" || { cat "$dir/out" >&2; return 1; }
		SMPID=$(fab_descendant "$SPAWN" sa_floor)
		return 0
	fi
	if [ "$kind" = ibsm ]; then
		log=$dir/ibsm.log
		fab_spawn H0001 "$IBSM" --transport "$transport" -f "$log" --cache-dir "$dir" \
			--dump-dir "$dir" -s 0 >"$dir/out" 2>&1
	else
		log=$dir/osm.log
		echo "force_log_flush TRUE" >"$dir/opensm.conf"
		fab_spawn H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
			opensm -F "$dir/opensm.conf" -f "$log" >"$dir/out" 2>&1
	fi
	SPAWN=$FAB_SPAWN_PID
	for ((i = 0; i < 3000; i++)); do
		grep -q "SUBNET UP" "$log" 2>/dev/null && break
		kill -0 "$SPAWN" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "SUBNET UP" "$log" || { tail -n 5 "$log" >&2; return 1; }
	SMPID=$(fab_descendant "$SPAWN" "$kind")
}

sm_down() {
	[ -n "$SMPID" ] && kill -TERM "$SMPID" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		kill -0 "$SPAWN" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$SMPID" ] && kill -KILL "$SMPID" 2>/dev/null
	kill -KILL "$SPAWN" 2>/dev/null
	wait "$SPAWN" 2>/dev/null
	rm -f "$FAB_TMP/pids/$SPAWN"
	SMPID=
}

# sm_cpu_ns [PID]: CPU time the SM's (or PID's) threads have used (ns,
# schedstat).
sm_cpu_ns() {
	local t sum=0
	for t in /proc/"${1:-$SMPID}"/task/*/schedstat; do
		sum=$((sum + $(cut -d' ' -f1 "$t" 2>/dev/null || echo 0)))
	done
	echo "$sum"
}
# cpu_cap PID PERCENT: put process PID (all its threads) in a new cpu
# cgroup allowed PERCENT of one core (as sa_paths.sh).  Leaves the
# cgroup's path in cap_dir; returns 1 if no cpu cgroup is writable here.
cap_dir=
cpu_cap() {
	local pid=$1 pct=$2 root
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then	# v2
		root=/sys/fs/cgroup
		grep -qw cpu "$root/cgroup.controllers" || return 1
		grep -qw cpu "$root/cgroup.subtree_control" ||
			echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null ||
			return 1
		cap_dir=$root/ibsm-mcbench-$$
		mkdir -p "$cap_dir" 2>/dev/null &&
			echo "$((pct * 100)) 10000" >"$cap_dir/cpu.max" &&
			echo "$pid" >"$cap_dir/cgroup.procs" 2>/dev/null ||
			{ cpu_uncap; return 1; }
	elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then	# v1
		root=/sys/fs/cgroup/cpu
		cap_dir=$root/ibsm-mcbench-$$
		mkdir -p "$cap_dir" 2>/dev/null &&
			echo 10000 >"$cap_dir/cpu.cfs_period_us" &&
			echo "$((pct * 100))" >"$cap_dir/cpu.cfs_quota_us" &&
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

# median: the middle of the numbers on stdin ("-" when none).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# checks_of MLIDS-FILE OUT: the "SWITCH-LID PORT MLID" lines mft-wait
# needs: every host's leaf port, for every MLID (renamed into place).
checks_of() {
	awk 'FNR == NR { h[++nh] = $0; next }
	     { for (i = 1; i <= nh; i++) { split(h[i], f, " ");
		print f[2], f[3], $1 } }' "$dir/hostports" "$1" >"$2.tmp"
	mv "$2.tmp" "$2"
}

declare -A RATE SETTLE TREES CPU RUNS SIM
for kind in $sms; do
	dir=$FAB_TMP/$kind
	mkdir -p "$dir"
	fab_sim_start "$net" "mc-$kind" || exit 1
	echo "$kind: bringing the subnet up..." >&2
	if ! sm_up "$kind" "$dir"; then
		echo "$kind: no SUBNET UP" >&2
		RATE[$kind]=-
		fab_sim_stop
		continue
	fi
	fab_run "$DIAG" ibnetdiscover -p >"$dir/topo" 2>/dev/null
	sleep 1
	for h in "${hosts[@]}"; do
		awk -v h="'$h HCA-1'" -v n="$h" \
			'$1 == "CA" && index($0, h) { print n, $9, $10; exit }' "$dir/topo"
	done >"$dir/hostports"
	if ((cap > 0)) && ! cpu_cap "$SMPID" "$cap"; then
		echo "mcast_bench: no writable cpu cgroup: not SM-bound (-c 0)" >&2
		cap=0
	fi
	# The MLIDs the joins will get: both SMs hand out the lowest free
	# ones, the default partition's broadcast group holds 0xC000.  Known
	# in advance, the poller watches the MFTs throughout the joins and
	# the settle time is measured, not bounded; the join answers tell
	# whether the guess held (if not: a poller after the joins, "<=").
	for ((g = 0; g < groups; g++)); do
		printf '0x%04x\n' $((0xc001 + g))
	done >"$dir/guess"
	: >"$dir/rates"; : >"$dir/cpus"; : >"$dir/settles"; : >"$dir/sims"
	for ((run = 1; run <= runs; run++)); do
		mgid=$(printf 'ff12:e01b::%x:0' "$run")
		rm -f "$dir/checks" "$dir"/join-H* "$dir"/leave-H*
		checks_of "$dir/guess" "$dir/checks"
		poller=
		if [ "$kind" != floor ]; then
			fab_spawn "$DIAG" "$MJ" -T 300 --serial mft-wait \
				"$dir/checks" >"$dir/mft" 2>&1
			poller=$FAB_SPAWN_PID
		fi
		sleep 1
		cpu0=$(sm_cpu_ns)
		sim0=$(sm_cpu_ns "$FAB_SIM_PID")
		# Every host at once, each its own process: all begin at the
		# same moment, a second from now, once their ports are open
		# (started one after the other, the clients' start-up spread
		# the burst over 0.1 s more than the SM needed).
		start=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.6f", t + 1 }')
		pids=()
		for h in "${hosts[@]}"; do
			fab_spawn "$h" "$MJ" -m "$mgid" -c -N "$groups" -w "$window" \
				-v -T 300 --start-at "$start" join >"$dir/join-$h" 2>&1
			pids+=("$FAB_SPAWN_PID")
		done
		for p in "${pids[@]}"; do
			wait "$p"
			rm -f "$FAB_TMP/pids/$p"
		done
		if grep -l "start-at: .* late" "$dir"/join-H* >/dev/null 2>&1; then
			echo "$kind run $run: a client started after the common" \
				"start time: the rate is low" >&2
		fi
		cpu1=$(sm_cpu_ns)
		sim1=$(sm_cpu_ns "$FAB_SIM_PID")
		sed -n 's/^joined .* mlid=\(0x[0-9a-f]*\) .*/\1/p' \
			"$dir/join-${hosts[0]}" | sort -u >"$dir/mlids"
		# joins/s over all hosts: first request to last answer.
		read -r ok t0 t1 < <(cat "$dir"/join-H* | awk '/^joins / {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			ok += v["ok"]; s = v["end"] - v["seconds"]
			if (t0 == "" || s < t0) t0 = s
			if (v["end"] > t1) t1 = v["end"]
		} END { printf "%d %.6f %.6f\n", ok, t0, t1 }')
		awk -v n="$ok" -v a="$t0" -v b="$t1" \
			'BEGIN { printf "%.0f\n", (b > a) ? n / (b - a) : 0 }' >>"$dir/rates"
		awk -v c=$((cpu1 - cpu0)) -v n="$ok" \
			'BEGIN { printf "%.1f\n", n ? c / 1e3 / n : 0 }' >>"$dir/cpus"
		awk -v c=$((sim1 - sim0)) -v n="$ok" \
			'BEGIN { printf "%.1f\n", n ? c / 1e3 / n : 0 }' >>"$dir/sims"
		bound=
		if [ -z "$poller" ]; then
			:	# the floor: no groups, no MFTs
		elif ! cmp -s "$dir/mlids" <(sort "$dir/guess"); then
			# Guessed wrong: the poller cannot finish; one that
			# knows the MLIDs, started now.
			echo "$kind run $run: MLIDs not the lowest free ones:" \
				"settle is a bound" >&2
			kill "$poller" 2>/dev/null
			wait "$poller" 2>/dev/null
			rm -f "$FAB_TMP/pids/$poller"
			checks_of "$dir/mlids" "$dir/checks2"
			fab_spawn "$DIAG" "$MJ" -T 300 mft-wait "$dir/checks2" \
				>"$dir/mft" 2>&1
			poller=$FAB_SPAWN_PID
			bound=1
		fi
		if [ -n "$poller" ]; then
			wait "$poller"
			rm -f "$FAB_TMP/pids/$poller"
		fi
		echo "$kind run $run: $ok of $((groups * nhosts)) joins accepted" >&2
		done_at=$(sed -n 's/^mft consistent=\([0-9.]*\).*/\1/p' "$dir/mft" 2>/dev/null)
		if [ -z "$poller" ]; then
			echo -
		elif [ -n "$done_at" ]; then
			awk -v a="$t1" -v b="$done_at" -v r="$bound" \
				'BEGIN { printf "%s%.1f\n", r ? "<=" : "", (b - a) * 1000 }'
		else
			echo ">300000"
		fi >>"$dir/settles"
		cp "$dir/mlids" "$dir/guess"
		if ((run == runs)) && [ -z "$poller" ]; then
			TREES[$kind]=-
			break
		elif ((run == runs)); then
			# The trees themselves, once, after the last run.
			awk 'FNR == NR { h[++nh] = $1; next }
			     { for (i = 1; i <= nh; i++) print $1, h[i], "0x1" }' \
				"$dir/hostports" "$dir/mlids" >"$dir/members"
			: >"$dir/mfts"
			for lid in $(awk '$1 == "SW" { print $2 }' "$dir/topo" | sort -un); do
				fab_run "$DIAG" ibroute -M "$lid" >>"$dir/mfts" 2>&1
			done
			n=$(python3 "$FAB_LIB/mc_check.py" tree "$dir/topo" \
				"$dir/mfts" "$dir/members" | wc -l)
			TREES[$kind]=$([ "$n" = 0 ] && echo ok || echo "$n problems")
			break
		fi
		# Leave every group again, so the next run joins as many.
		pids=()
		for h in "${hosts[@]}"; do
			fab_spawn "$h" "$MJ" -m "$mgid" -N "$groups" -w "$window" \
				-T 300 leave >"$dir/leave-$h" 2>&1
			pids+=("$FAB_SPAWN_PID")
		done
		for p in "${pids[@]}"; do
			wait "$p"
			rm -f "$FAB_TMP/pids/$p"
		done
		sleep 1
	done
	RATE[$kind]=$(median <"$dir/rates")
	CPU[$kind]=$(median <"$dir/cpus")
	SIM[$kind]=$(median <"$dir/sims")
	# A bound ("<=") sorts as its number; it is shown as one.
	SETTLE[$kind]="$(sed 's/^<=//' "$dir/settles" | median) ms"
	grep -q '^<=' "$dir/settles" && SETTLE[$kind]="<= ${SETTLE[$kind]}"
	[ "$kind" = floor ] && SETTLE[$kind]=-
	RUNS[$kind]="rates $(paste -sd' ' "$dir/rates")  cpu/join $(paste -sd' ' "$dir/cpus")  settle $(paste -sd' ' "$dir/settles")"
	cpu_uncap
	sm_down
	fab_sim_stop
done

printf '\n%s, %d hosts x %d groups, window %d, %s, median of %d runs\n' \
	"$(basename "$net")" "$nhosts" "$groups" "$window" \
	"$([ "$cap" -gt 0 ] && echo "SM capped at $cap% of a core" || echo "SM not capped")" "$runs"
printf '%-8s %10s %14s %16s %16s %s\n' SM joins/s "SM CPU/join" "ibsim CPU/join" \
	"MFT settle" trees
for kind in $sms; do
	printf '%-8s %10s %11s us %13s us %16s %s\n' "$kind" "${RATE[$kind]:--}" \
		"${CPU[$kind]:--}" "${SIM[$kind]:--}" "${SETTLE[$kind]:--}" \
		"${TREES[$kind]:--}"
done
for kind in $sms; do
	[ -n "${RUNS[$kind]:-}" ] && printf '  %s: %s\n' "$kind" "${RUNS[$kind]}"
done
if [ -n "${RATE[opensm]:-}" ] && [ -n "${RATE[ibsm]:-}" ] &&
	[ "${RATE[opensm]}" != - ] && [ "${RATE[ibsm]}" != - ] &&
	awk -v b="${RATE[opensm]}" 'BEGIN { exit !(b > 0) }'; then
	awk -v a="${RATE[ibsm]}" -v b="${RATE[opensm]}" \
		'BEGIN { printf "ibsm/OpenSM joins/s: %.2f\n", a / b }'
fi
