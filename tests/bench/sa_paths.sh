#!/usr/bin/env bash
# tests/bench/sa_paths.sh - PathRecord queries per second, ibsm vs OpenSM.
#
#   tests/bench/sa_paths.sh [-t SECONDS] [TOPOLOGY.net]
#
# Starts ibsim once (default: the bundled 1,152-host fat tree), then for
# each SM in turn (OpenSM 3.3.23, then ibsm) runs it as master, waits for
# SUBNET UP, and measures PathRecord Gets per second from one client and
# from four clients at once (tests/bench/sa_pathbench, 16 queries in
# flight each).  Prints a table and the ratios ibsm/OpenSM.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

secs=3
while getopts t: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [TOPOLOGY.net]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
net=${1:-$FAB_TOPO/fat2-1152.net}
bench=${SA_PATHBENCH:-$(dirname "$IBSM")/../tests/bench/sa_pathbench}
[ -x "$bench" ] || { echo "sa_paths: $bench not built" >&2; exit 1; }
maxlid=$(grep -cE '^(Hca|Ca|Switch)' "$net")

fab_sim_start "$net" paths || exit 1

# run_clients N: N bench clients at once on hosts H0002.., total qps.
run_clients() {
	local n=$1 i pids=() total=0 q
	for ((i = 0; i < n; i++)); do
		fab_run "$(printf 'H%04d' $((i + 2)))" "$bench" -t "$secs" \
			-l "$maxlid" -s $((i + 1)) >"$FAB_TMP/bench-$n-$i.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((i = 0; i < n; i++)); do
		q=$(sed -n 's/.*: \([0-9]*\) qps$/\1/p' "$FAB_TMP/bench-$n-$i.out")
		total=$((total + ${q:-0}))
	done
	echo "$total"
}

wait_master() {
	local i
	for ((i = 0; i < 600; i++)); do
		fab_run H0002 sminfo 2>/dev/null | grep -q SMINFO_MASTER && return 0
		sleep 0.1
	done
	return 1
}

declare -A qps
# OpenSM
mkdir -p "$FAB_TMP/osm"
OSM_CACHE_DIR=$FAB_TMP/osm OSM_TMP_DIR=$FAB_TMP/osm \
	fab_run H0001 opensm -f "$FAB_TMP/osm/opensm.log" >/dev/null 2>&1 &
osm_bg=$!
wait_master || { echo "OpenSM did not become master" >&2; exit 1; }
sleep 1
qps[opensm1]=$(run_clients 1)
qps[opensm4]=$(run_clients 4)
pkill -TERM -P "$osm_bg" 2>/dev/null
for f in "$FAB_TMP"/pids/*; do
	pid=${f##*/}
	[ "$pid" = "$FAB_SIM_PID" ] || kill -TERM "$pid" 2>/dev/null
done
wait "$osm_bg" 2>/dev/null
sleep 1

# ibsm
fab_ibsm_start H0001 "$FAB_TMP/ibsm" || exit 1
qps[ibsm1]=$(run_clients 1)
qps[ibsm4]=$(run_clients 4)
fab_ibsm_stop

printf '%-22s %12s %12s %8s\n' "PathRecord Get/s" OpenSM ibsm ratio
for n in 1 4; do
	printf '%-22s %12s %12s %8s\n' "$n client(s)" "${qps[opensm$n]}" \
		"${qps[ibsm$n]}" "$(awk -v a="${qps[ibsm$n]}" -v b="${qps[opensm$n]}" \
		'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
done
