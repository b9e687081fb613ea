#!/usr/bin/env bash
# tests/fabric/test_sm_inactive.sh - sm_inactive (-I), with OpenSM
# 3.3.23 as referee on tiny.net: started with -I, neither SM brings
# anything up (another host's port stays Initialize) and ibsm answers
# SMInfo (sminfo by directed route from another host) with state
# NOTACTIVE, as 14.4.1 has an SM in that state do; OpenSM 3.3.23 answers
# nothing there (sminfo times out).  Started again without -I, ibsm
# brings the subnet up (the check that could fail).  The same from the
# configuration file (sm_inactive TRUE).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm
T=$FAB_TMP
printf 'sm_inactive TRUE\n' >"$T/inactive.conf"

# observe NAME: after 4 s, the SMInfo state H0001's SM answers and
# H0002's LinkState, into T/NAME.seen
observe() {
	sleep 4
	{
		fab_run H0002 sminfo -D 0,1,3,1 2>&1 | grep -oE 'SMINFO_[A-Z]+'
		fab_run H0002 smpquery -D portinfo 0 1 2>&1 |
			sed -nE 's/^LinkState:\.*(.*)$/\1/p'
	} | tr '\n' ' ' >"$T/$1.seen"
}

# sm NAME PROGRAM ARGS...: PROGRAM on H0001 of a fresh simulator
sm() {
	local name=$1 prog=$2
	shift 2
	fab_sim_start "$FAB_TOPO/tiny.net" "$name" || return 1
	mkdir -p "$T/$name"
	if [ "$prog" = opensm ]; then
		fab_spawn H0001 env OSM_CACHE_DIR="$T/$name" OSM_TMP_DIR="$T/$name" \
			opensm "$@" -f "$T/$name/log" >"$T/$name/out" 2>&1
	else
		fab_spawn H0001 "$IBSM" "$@" -f "$T/$name/log" --cache-dir \
			"$T/$name" --dump-dir "$T/$name" --control-socket \
			"$T/$name/sock" >"$T/$name/out" 2>&1
	fi
	observe "$name"
	kill -TERM "$FAB_SPAWN_PID" 2>/dev/null
	wait "$FAB_SPAWN_PID" 2>/dev/null
	rm -f "$FAB_TMP/pids/$FAB_SPAWN_PID"
}

sm osm-I opensm -I
sm ibsm-I ibsm -I
sm ibsm-conf ibsm -F "$T/inactive.conf"
sm ibsm-active ibsm
for n in osm-I ibsm-I ibsm-conf ibsm-active; do
	echo "    $n: $(cat "$T/$n.seen")"
done
fab_check "OpenSM -I: nothing brought up, no SMInfo answer" \
	test "$(cat "$T/osm-I.seen")" = "Initialize "
fab_check "ibsm -I: nothing brought up, SMInfo says NOTACTIVE" \
	test "$(cat "$T/ibsm-I.seen")" = "SMINFO_NOTACT Initialize "
fab_check "sm_inactive TRUE in the file: the same" \
	test "$(cat "$T/ibsm-conf.seen")" = "SMINFO_NOTACT Initialize "
fab_check "without it: master, the port Active" \
	test "$(cat "$T/ibsm-active.seen")" = "SMINFO_MASTER Active "
fab_check "ibsm -I says why it waits" grep -q "SM 1127: inactive" "$T/ibsm-I/log"
fab_summary
