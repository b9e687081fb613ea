#!/usr/bin/env bash
# tests/bench/sa_hostile.sh - what a hostile SA client costs the SM
# (by hand, not part of tests/run).
#
#   tests/bench/sa_hostile.sh [-t SECONDS] [-r RATE] [-k PKEY|none]
#                             [-L "LMC ..."] [-s] [TOPOLOGY.net]
#
# For each LMC (default "0 3") on the 1,152-host fat tree (default): ibsm
# is master on H0001; after SUBNET UP its idle RSS is read, then for
# SECONDS (default 20):
#
#   - idle: H0005 probes alone (tests/fabric/sa_hostile probe: 20 a
#     second, PathRecord Gets to random LIDs and SMInfo Gets, alternately),
#   - flood: the same probes while H0003 sends RATE (default 100) hostile
#     PathRecord GetTables a second, both ends open, P_Key PKEY (default
#     0x1234; "none": the default partition, every pair of the subnet);
#     with -s the source is the flooding host's own GID, the destination
#     open ("all my paths": 8 x 1,152 x 8 = 73,728 records with LMC 3).
#
# Prints per LMC the probes' p50/p99/max latency idle and under flood,
# the hostile queries' answers by status, the SM's RSS (idle, and the
# most seen under flood, sampled every 0.2 s) and its CPU per hostile
# query: (SM CPU in the flood run - SM CPU in the idle run) / hostile
# queries answered.
#
# IBSM=... picks the daemon: to measure another build, run with
# IBSM=/path/to/build/sm/ibsm (and a low RATE, -r 1, for a daemon that
# walks every pair: there one such query costs the loop 0.2 s with LMC 0,
# far more with LMC 3).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# Clients start from another directory: an absolute path, and the real
# file's name, which is what the daemon's process is called (its comm, 15
# characters at most) when its PID is looked for.
IBSM=$(readlink -f "$IBSM")
sm_comm=$(basename "$IBSM" | cut -c1-15)

secs=20
rate=100
pkey=0x1234
lmcs="0 3"
src=
ends="ends open"
while getopts t:r:k:L:s opt; do
	case $opt in
	t) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	k) pkey=$OPTARG ;;
	L) lmcs=$OPTARG ;;
	s) src=-s; ends="source given" ;;
	*) echo "usage: $0 [-t SECONDS] [-r RATE] [-k PKEY|none] [-L \"LMC ...\"] [-s]" \
		"[TOPOLOGY.net]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
net=${1:-$FAB_TOPO/fat2-1152.net}
hostile=${SA_HOSTILE:-$(dirname "$IBSM")/../tests/fabric/sa_hostile}
[ -x "$hostile" ] || { echo "sa_hostile: $hostile not built" >&2; exit 1; }
hz=$(getconf CLK_TCK)

rss_kb() {
	awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# rss_watch PID OUT: the largest VmRSS seen until OUT.stop exists.
rss_watch() {
	local max=0 r
	while [ ! -e "$2.stop" ]; do
		r=$(rss_kb "$1")
		[ "${r:-0}" -gt "$max" ] && max=$r
		sleep 0.2
	done
	echo "$max" >"$2"
}

maxlid=$(grep -cE '^(Hca|Ca|Switch)' "$net")
fab_sim_start "$net" hostile || exit 1
for lmc in $lmcs; do
	dir=$FAB_TMP/sm-$lmc
	FAB_UP_TIMEOUT=600 fab_ibsm_start H0001 "$dir" -l "$lmc" -s 0 -r || exit 1
	pid=$(fab_descendant "$FAB_SM_BG" "$sm_comm") ||
		{ echo "sa_hostile: no $sm_comm process found to measure" >&2; exit 1; }
	sleep 2
	idle_rss=$(rss_kb "$pid")
	top=$((maxlid << lmc))

	c0=$(fab_cpu_ticks "$pid")
	fab_run H0005 "$hostile" probe -r 20 -t "$secs" -l "$top" >"$dir/idle.probe" 2>&1
	c1=$(fab_cpu_ticks "$pid")

	rss_watch "$pid" "$dir/rss" &
	watch=$!
	fab_spawn H0003 "$hostile" flood -r "$rate" -t "$secs" -k "$pkey" ${src:+-s} \
		>"$dir/flood" 2>&1
	fpid=$FAB_SPAWN_PID
	fab_run H0005 "$hostile" probe -r 20 -t "$secs" -l "$top" >"$dir/flood.probe" 2>&1
	wait "$fpid"
	rm -f "$FAB_TMP/pids/$fpid"
	c2=$(fab_cpu_ticks "$pid")
	: >"$dir/rss.stop"
	wait "$watch"

	answered=$(sed -n 's/.* answered \([0-9]*\).*/\1/p' "$dir/flood")
	echo "== LMC $lmc, $rate hostile PathRecord GetTables/s (P_Key $pkey, $ends), ${secs} s"
	sed 's/^/  idle:  /' "$dir/idle.probe"
	sed 's/^/  flood: /' "$dir/flood.probe"
	sed 's/^/  /' "$dir/flood"
	awk -v i="$idle_rss" -v m="$(cat "$dir/rss")" 'BEGIN {
		printf "  SM RSS idle %d kB, flood max %d kB (%.2fx)\n", i, m, m / i }'
	awk -v a="$((c1 - c0))" -v b="$((c2 - c1))" -v n="${answered:-0}" -v hz="$hz" 'BEGIN {
		printf "  SM CPU idle run %.2f s, flood run %.2f s: ", a / hz, b / hz
		if (n > 0) printf "%.1f us per hostile query\n", (b - a) / hz * 1e6 / n
		else print "no hostile query answered" }'
	fab_ibsm_stop
	sed -n 's/.*\(SA: [0-9]* requests answered in slices.*\)/  \1/p' "$dir/ibsm.log"
	sed -n 's/.*SA limits: .*\(answer bytes .*\)/  SA \1/p' "$dir/ibsm.log" | tail -n 1
	# per query the SA worked on: BUSY for want of a job slot costs ~0
	slotbusy=$(sed -n 's/.* \([0-9]*\) BUSY for want of a slot.*/\1/p' "$dir/ibsm.log" | tail -n 1)
	awk -v a="$((c1 - c0))" -v b="$((c2 - c1))" -v n="${answered:-0}" \
		-v s="${slotbusy:-0}" -v hz="$hz" 'BEGIN {
		if (n - s > 0) printf "  SM CPU per hostile query worked on (%d, not BUSY for want of a slot): %.1f us\n", n - s, (b - a) / hz * 1e6 / (n - s) }'
done
