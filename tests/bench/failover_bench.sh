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
#
# ALT=K runs the alternating series instead: two
# ibsm on H0001 and H0002 (the master raised to priority 10, the standby
# at 5); K times: kill -9 whichever is master, time until the other is MASTER (sminfo), wait for its SUBNET UP,
# compare every port's LID with the fabric's at the start of the round
# (ibnetdiscover -p), raise the new master to 10 (SIGHUP), restart the
# killed one at 5 (it stands by), and go on.  A
# killed client keeps its ibsim slot (10 at most), so a fresh ibsim is
# started every KPR (default 5) kills.  Prints one line per kill, then
# the distribution, LID changes and crashes (an SM found dead that was
# not killed, or a sanitizer report in its output).
#   IBSM=build/asan/sm/ibsm ALT=50 bash tests/bench/failover_bench.sh
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
lids() { fab_run H0004 ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" || $1 == "SW" { print $4, $2 }' | sort; }
# The priorities alternate: an SM starts at 5 (it stands by) and is raised
# to 10 (its -F file, SIGHUP) once it is master, so the restarted one
# stays standby and the next kill takes the other.
alt_prio() {	# alt_prio IDX PRIO: write SM IDX's opensm.conf
	printf 'sm_priority %s\n' "$2" >"$FAB_TMP/alt/$1.conf.tmp" &&
		mv "$FAB_TMP/alt/$1.conf.tmp" "$FAB_TMP/alt/$1.conf"
}
alt_spawn() {	# alt_spawn IDX: (re)start SM IDX (0: H0001, 1: H0002)
	local h=H000$(($1 + 1))
	mkdir -p "$FAB_TMP/alt/$1"
	alt_prio "$1" 5
	fab_spawn "$h" "$IBSM" -F "$FAB_TMP/alt/$1.conf" -f "$FAB_TMP/alt/$1.log" \
		--cache-dir "$FAB_TMP/alt/$1" --dump-dir "$FAB_TMP/alt/$1" >>"$FAB_TMP/alt/$1.out" 2>&1
	APID[$1]=$FAB_SPAWN_PID
	disown "$FAB_SPAWN_PID" 2>/dev/null	# no "Killed" from the shell
}
alt_series() {
	local done=0 r m o t0 t lid_changes=0 crashes=0 i base now st
	local -a APID LID
	rm -rf "$FAB_TMP/alt"; mkdir -p "$FAB_TMP/alt"
	: >"$FAB_TMP/alt/times"
	while ((done < ALT)); do
		fab_sim_start "$NET" alt >/dev/null || { echo "ibsim did not start"; return 1; }
		alt_spawn 1; sleep 1
		alt_prio 1 10; kill -HUP "$(pgrep -P "${APID[1]}" | head -n1)"
		alt_spawn 0
		for ((i = 0; i < 100; i++)); do
			LID[0]=$(lid_of H0001); LID[1]=$(lid_of H0002)
			[ -n "${LID[0]}" ] && [ -n "${LID[1]}" ] &&
				[ "$(state_at "${LID[0]}")$(state_at "${LID[1]}")" = SMINFO_STANDBYSMINFO_MASTER ] && break
			sleep 0.2
		done
		base=$(lids)
		for ((r = 0; r < ${KPR:-5} && done < ALT; r++)); do
			m=-1
			for i in 0 1; do [ "$(state_at "${LID[$i]}")" = SMINFO_MASTER ] && m=$i; done
			[ "$m" -ge 0 ] || { echo "no master found"; break; }
			o=$((1 - m))
			kill -0 "${APID[$o]}" 2>/dev/null || { echo "crash: SM $o dead before the kill"; crashes=$((crashes + 1)); break; }
			st=$(stat -c %s "$FAB_TMP/alt/$o.log" 2>/dev/null || echo 0)
			kill -KILL "$(pgrep -P "${APID[$m]}" | head -n1)"; t0=$(date +%s.%N)
			for ((i = 0; i < 600; i++)); do [ "$(state_at "${LID[$o]}")" = SMINFO_MASTER ] && break; sleep 0.05; done
			t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
			rm -f "$FAB_TMP/pids/${APID[$m]}"
			for ((i = 0; i < 200; i++)); do tail -c +"$((st + 1))" "$FAB_TMP/alt/$o.log" | grep -q 'SUBNET UP' && break; sleep 0.05; done
			now=$(lids)
			i=$(comm -3 <(echo "$base") <(echo "$now") | wc -l)
			lid_changes=$((lid_changes + i))
			done=$((done + 1))
			echo "$t" >>"$FAB_TMP/alt/times"
			alt_prio "$o" 10; kill -HUP "$(pgrep -P "${APID[$o]}" | head -n1)"
			printf 'kill %2d: SM %d killed, SM %d master in %s s, %d LID lines differ\n' "$done" "$m" "$o" "$t" "$i"
			alt_spawn "$m"
			# settled: one MASTER, one STANDBY (a handover may follow)
			for ((i = 0; i < 100; i++)); do
				case "$(state_at "${LID[0]}")$(state_at "${LID[1]}")" in
				SMINFO_STANDBYSMINFO_MASTER | SMINFO_MASTERSMINFO_STANDBY) break ;;
				esac
				sleep 0.1
			done
			sleep 1
		done
		for i in 0 1; do
			kill -0 "${APID[$i]}" 2>/dev/null || { echo "crash: SM $i dead at the end of the round"; crashes=$((crashes + 1)); }
			kill -TERM "${APID[$i]}" 2>/dev/null
			for ((r = 0; r < 100; r++)); do kill -0 "${APID[$i]}" 2>/dev/null || break; sleep 0.1; done
			rm -f "$FAB_TMP/pids/${APID[$i]}"
		done
		fab_sim_stop
	done
	i=$(cat "$FAB_TMP"/alt/*.out 2>/dev/null | grep -c 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:')
	crashes=$((crashes + i))
	sort -n "$FAB_TMP/alt/times" | awk '{ v[NR] = $1; if ($1 >= 5) slow++ } END {
		p = int(0.9 * NR + 0.999); m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "alternating kills n=%d min %.3f median %.3f p90 %.3f max %.3f s, %d over 5 s\n",
			NR, v[1], m, v[p], v[NR], slow }'
	echo "LID changes: $lid_changes; crashes: $crashes (sanitizer reports: $i)"
}
if [ -n "${ALT:-}" ]; then
	echo "load start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
	alt_series
	echo "load end: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
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
