#!/usr/bin/env bash
# tests/bench/failover_bench.sh - takeover time after kill -9 of the
# master, ibsm beside OpenSM, measured the same way (by hand; no assertion).
# Each run: a fresh ibsim on fat2-small.net (a killed client keeps its
# slot), master prio 10 on H0002, standby prio 5 on H0001; once the
# standby answers STANDBY, kill -9 the master and time until sminfo at the
# standby's LID (from H0004) says MASTER.  Prints "ibsm SECONDS" N times
# (N=8) and "opensm SECONDS" NO times (NO=1), the load average before and
# after each series, then per SM: n, min, median, p90 and max.
#   IBSM=build/release/sm/ibsm N=20 NO=3 bash tests/bench/failover_bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
NET=$FAB_TOPO/fat2-small.net
N=${N:-8}
state_at() { fab_run H0004 sminfo "$1" 2>/dev/null | grep -o 'SMINFO_[A-Z]*' | head -n 1; }
lid_of() { fab_run H0004 ibnetdiscover -p 2>/dev/null | awk -v h="'$1 " '$1 == "CA" && index($0, h) { print $2; exit }'; }
measure() {	# measure KIND: one kill -9 takeover; prints seconds
	local kind=$1 M S t0 i
	fab_sim_start "$NET" b >/dev/null || return 1
	rm -rf "$FAB_TMP/c"; mkdir -p "$FAB_TMP/c/m" "$FAB_TMP/c/s"
	if [ "$kind" = ibsm ]; then
		fab_spawn H0002 "$IBSM" -p 10 -f "$FAB_TMP/c/m.log" --cache-dir "$FAB_TMP/c/m" --dump-dir "$FAB_TMP/c/m" >/dev/null 2>&1; M=$FAB_SPAWN_PID
		sleep 1
		fab_spawn H0001 "$IBSM" -p 5 -f "$FAB_TMP/c/s.log" --cache-dir "$FAB_TMP/c/s" --dump-dir "$FAB_TMP/c/s" >/dev/null 2>&1; S=$FAB_SPAWN_PID
	else
		fab_spawn H0002 env OSM_CACHE_DIR="$FAB_TMP/c/m" OSM_TMP_DIR="$FAB_TMP/c/m" opensm -p 10 -f "$FAB_TMP/c/m.log" >/dev/null 2>&1; M=$FAB_SPAWN_PID
		sleep 2
		fab_spawn H0001 env OSM_CACHE_DIR="$FAB_TMP/c/s" OSM_TMP_DIR="$FAB_TMP/c/s" opensm -p 5 -f "$FAB_TMP/c/s.log" >/dev/null 2>&1; S=$FAB_SPAWN_PID
	fi
	LA=""; for ((i = 0; i < 100; i++)); do LA=$(lid_of H0001); [ -n "$LA" ] && [ "$LA" != 0 ] && [ "$(state_at "$LA")" = SMINFO_STANDBY ] && break; sleep 0.2; done
	kill -KILL "$(pgrep -P "$M" | head -n1)"; t0=$(date +%s.%N)
	for ((i = 0; i < 1500; i++)); do [ "$(state_at "$LA")" = SMINFO_MASTER ] && break; sleep 0.05; done
	awk -v k="$kind" -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%s %.3f\n", k, b - a }'
	kill -TERM "$S" "$M" 2>/dev/null; wait "$S" "$M" 2>/dev/null
	rm -f "$FAB_TMP/pids/$S" "$FAB_TMP/pids/$M"
	fab_sim_stop
}
# The machine's load as each series starts and ends (the figures depend
# on it: note it beside them).
load() { echo "load $1: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"; }
load start
# Not in a pipeline: measure must run in this shell (lib.sh numbers its
# simulators in FAB_SEQ).
: >"$FAB_TMP/times"
for ((k = 0; k < N; k++)); do
	if measure ibsm >>"$FAB_TMP/times" 2>/dev/null; then
		tail -n 1 "$FAB_TMP/times"
	else
		echo "ibsm: run failed"
	fi
done
load "after ibsm"
for ((k = 0; k < ${NO:-1}; k++)); do
	if measure opensm >>"$FAB_TMP/times" 2>/dev/null; then
		tail -n 1 "$FAB_TMP/times"
	else
		echo "opensm: run failed"
	fi
done
load end
# Distribution per SM: n, min, median, p90 (nearest rank), max.
for kind in ibsm opensm; do
	awk -v k="$kind" '$1 == k { print $2 }' "$FAB_TMP/times" | sort -n |
		awk -v k="$kind" '{ v[NR] = $1 } END {
			if (!NR) exit
			p = int(0.9 * NR + 0.999); if (p < 1) p = 1
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%s n=%d min %.3f median %.3f p90 %.3f max %.3f s\n",
				k, NR, v[1], m, v[p], v[NR] }'
done
