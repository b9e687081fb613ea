#!/usr/bin/env bash
# tests/bench/sa_paths.sh - PathRecord queries per second, ibsm vs OpenSM.
#
#   tests/bench/sa_paths.sh [-t SECONDS] [-w WINDOW] [TOPOLOGY.net]
#
# Starts ibsim once (default: the bundled 1,152-host fat tree), then for
# each SM in turn (OpenSM 3.3.23, then ibsm) runs it as master, waits for
# SUBNET UP, and measures PathRecord Gets per second from one client and
# from four clients at once (tests/bench/sa_pathbench, WINDOW queries
# in flight each, default 16).  Prints queries/s and the ratio ibsm/OpenSM,
# then the CPU each SM spent per query (user + system time of its process
# over the run, divided by the queries answered) and the ratio
# OpenSM/ibsm, and ibsim's CPU per query (the simulator's share).
# Under ibsim on a small machine the clients, the simulator and the SM
# share the cores, so queries/s understate what the SM alone could do;
# the CPU per query is the SM's own cost.  Windows above 64 with four
# clients can deadlock ibsim (its socket buffers fill both ways).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

secs=3
window=16
while getopts t:w: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	w) window=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [-w WINDOW] [TOPOLOGY.net]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
net=${1:-$FAB_TOPO/fat2-1152.net}
bench=${SA_PATHBENCH:-$(dirname "$IBSM")/../tests/bench/sa_pathbench}
[ -x "$bench" ] || { echo "sa_paths: $bench not built" >&2; exit 1; }
maxlid=$(grep -cE '^(Hca|Ca|Switch)' "$net")

fab_sim_start "$net" paths || exit 1

# cpu_ticks PID: user+system clock ticks the process has used so far.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
hz=$(getconf CLK_TCK)

# descendant ROOT NAME: the PID of the process called NAME started under
# ROOT (fab_run puts timeout and env between them).
descendant() {
	local p
	for p in $(pgrep -P "$1"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]; then
			echo "$p"
			return 0
		fi
		descendant "$p" "$2" && return 0
	done
	return 1
}

# run_clients SMPID N: N bench clients at once on hosts H0002.., total
# qps; also leaves the SM's and ibsim's CPU per query (us) in cpu_sm and
# cpu_sim.
run_clients() {
	local smpid=$1 n=$2 i pids=() total=0 q s0 s1 m0 m1
	s0=$(cpu_ticks "$smpid")
	m0=$(cpu_ticks "$FAB_SIM_PID")
	for ((i = 0; i < n; i++)); do
		fab_run "$(printf 'H%04d' $((i + 2)))" "$bench" -t "$secs" -w "$window" \
			-l "$maxlid" -s $((i + 1)) >"$FAB_TMP/bench-$n-$i.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((i = 0; i < n; i++)); do
		q=$(sed -n 's/.*: \([0-9]*\) qps$/\1/p' "$FAB_TMP/bench-$n-$i.out")
		total=$((total + ${q:-0}))
	done
	s1=$(cpu_ticks "$smpid")
	m1=$(cpu_ticks "$FAB_SIM_PID")
	cpu_sm=$(awk -v d=$((s1 - s0)) -v q="$total" -v t="$secs" -v hz="$hz" \
		'BEGIN { if (q > 0) printf "%.1f", d / hz * 1e6 / (q * t); else print "-" }')
	cpu_sim=$(awk -v d=$((m1 - m0)) -v q="$total" -v t="$secs" -v hz="$hz" \
		'BEGIN { if (q > 0) printf "%.1f", d / hz * 1e6 / (q * t); else print "-" }')
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

declare -A qps cpu sim
# OpenSM
mkdir -p "$FAB_TMP/osm"
OSM_CACHE_DIR=$FAB_TMP/osm OSM_TMP_DIR=$FAB_TMP/osm \
	fab_run H0001 opensm -f "$FAB_TMP/osm/opensm.log" >/dev/null 2>&1 &
osm_bg=$!
wait_master || { echo "OpenSM did not become master" >&2; exit 1; }
sleep 1
osm_pid=$(descendant "$osm_bg" opensm)
for n in 1 4; do
	run_clients "$osm_pid" "$n" >"$FAB_TMP/qps"
	qps[opensm$n]=$(cat "$FAB_TMP/qps")
	cpu[opensm$n]=$cpu_sm
	sim[opensm$n]=$cpu_sim
done
pkill -TERM -P "$osm_bg" 2>/dev/null
for f in "$FAB_TMP"/pids/*; do
	pid=${f##*/}
	[ "$pid" = "$FAB_SIM_PID" ] || kill -TERM "$pid" 2>/dev/null
done
wait "$osm_bg" 2>/dev/null
sleep 1

# ibsm
fab_ibsm_start H0001 "$FAB_TMP/ibsm" || exit 1
for n in 1 4; do
	run_clients "$(descendant "$FAB_SM_BG" ibsm)" "$n" >"$FAB_TMP/qps"
	qps[ibsm$n]=$(cat "$FAB_TMP/qps")
	cpu[ibsm$n]=$cpu_sm
	sim[ibsm$n]=$cpu_sim
done
fab_ibsm_stop

# table TITLE ARRAY: OpenSM and ibsm for 1 and 4 clients, and the ratio
# that says how much better ibsm is (more queries, or less CPU).
table() {
	local -n v=$2
	local n r
	printf '%-22s %12s %12s %8s\n' "$1" OpenSM ibsm "better"
	for n in 1 4; do
		if [ "$2" = qps ]; then
			r=$(awk -v a="${v[ibsm$n]}" -v b="${v[opensm$n]}" \
				'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
		else
			r=$(awk -v a="${v[ibsm$n]}" -v b="${v[opensm$n]}" \
				'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
		fi
		printf '%-22s %12s %12s %8s\n' "$n client(s)" "${v[opensm$n]}" \
			"${v[ibsm$n]}" "$r"
	done
}
table "PathRecord Get/s" qps
echo
table "SM CPU us per query" cpu
printf '%-22s %12s %12s\n' "ibsim CPU us per query" "${sim[opensm4]}" "${sim[ibsm4]}"
