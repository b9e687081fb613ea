#!/usr/bin/env bash
# tests/fabric/test_honor_guid2lid.sh - honor_guid2lid_file: which LIDs
# an SM coming out of STANDBY keeps.  On the SM tests' two-switch fabric
# a master SM runs on H0002 (priority 10) and the SM under test stands by
# on H0001 (priority 5) with a guid2lid file in its cache that gives
# H0005 another LID than the master gave it.  The master is killed (-9);
# the standby takes over, and H0005's LID (smpquery by directed route)
# is the one the master gave (honor_guid2lid_file FALSE, the default:
# the LIDs the ports hold win) or the file's (TRUE).  ibsm as the
# standby under OpenSM (default and TRUE), and OpenSM 3.3.23 as the
# standby under ibsm with TRUE, the referee of the key's meaning.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

fab_need_opensm
T=$FAB_TMP
NET=$T/net
sm_net_two_switches "$NET"
FILE_LID=0x30		# H0005's LID in the standby's guid2lid file
# OpenSM: polls the master every 0.5 s, gives up after 2 misses
printf 'sminfo_polling_timeout 500\npolling_retry_number 2\n' >"$T/fast.conf"
printf 'honor_guid2lid_file TRUE\n' >"$T/honor.conf"
cat "$T/fast.conf" >>"$T/honor.conf"

# H0005's LID and port GUID, read from H0004 by directed route
h5_lid() { fab_run H0004 smpquery -D portinfo 0,1,4 1 2>/dev/null | sed -n 's/^Lid:\.*//p'; }
h5_guid() { fab_run H0004 smpquery -D nodeinfo 0,1,4 2>/dev/null | sed -n 's/^PortGuid:\.*//p'; }

# wait_lid_set: H0005 has a LID (a master brought the fabric up)
wait_lid_set() {
	local i l
	for ((i = 0; i < 150; i++)); do
		l=$(h5_lid)
		[ -n "$l" ] && [ "$l" != 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# guid2lid DIR: the standby's file: H0005 at FILE_LID
guid2lid() {
	mkdir -p "$1"
	printf '%s %s %s\n' "$(h5_guid)" "$FILE_LID" "$FILE_LID" >"$1/guid2lid"
}

osm_start() {	# osm_start HOST NAME ARGS...: OpenSM; its PID in O_PID
	local host=$1 dir=$T/$2
	shift 2
	mkdir -p "$dir"
	fab_spawn "$host" env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
		opensm -d2 "$@" -f "$dir/log" >>"$dir/out" 2>&1
	O_PID=$FAB_SPAWN_PID
}
osm_kill() {
	kill -KILL "$(fab_descendant "$O_PID" opensm)" 2>/dev/null
	kill -TERM "$O_PID" 2>/dev/null
	wait "$O_PID" 2>/dev/null
	rm -f "$FAB_TMP/pids/$O_PID"
}

# ibsm_standby NAME [ARGS]: OpenSM master, ibsm standby with the file;
# OpenSM killed; H0005's LID before and after the takeover into NAME.lids
ibsm_standby() {
	local name=$1 before
	shift
	fab_sim_start "$NET" "$name" || return 1
	osm_start H0002 "$name-osm" -p 10
	wait_lid_set || return 1
	before=$(h5_lid)
	guid2lid "$T/$name.cache"
	sm_start_named "$name" H0001 -p 5 "$@"
	sm_wait_for 20 grep -q "Entering STANDBY" "$T/$name.log"
	osm_kill
	sm_wait_for 30 grep -q "SUBNET UP" "$T/$name.log"
	sleep 1
	echo "$before $(h5_lid)" >"$T/$name.lids"
	sm_stop_named "$name"
}

# osm_standby: ibsm master, OpenSM standby with the file and the key
osm_standby() {
	local before
	fab_sim_start "$NET" osm-sb || return 1
	sm_start_named M H0002 -p 10
	wait_lid_set || return 1
	before=$(h5_lid)
	guid2lid "$T/osm-sb"
	osm_start H0001 osm-sb -p 5 -F "$T/honor.conf"
	sm_wait_for 30 grep -q "Entering STANDBY" "$T/osm-sb/log"
	sm_stop_named M KILL
	sm_wait_for 30 grep -q "SUBNET UP" "$T/osm-sb/log"
	sleep 1
	echo "$before $(h5_lid)" >"$T/osm-sb.lids"
	osm_kill
}

ibsm_standby sb_default
ibsm_standby sb_honor -F "$T/honor.conf"
osm_standby
for n in sb_default sb_honor osm-sb; do
	echo "    $n: H0005's LID under the master, after the takeover: $(cat "$T/$n.lids" 2>/dev/null)"
done
d_before='' d_after='' h_before='' h_after='' o_before='' o_after=''
read -r d_before d_after <"$T/sb_default.lids"
read -r h_before h_after <"$T/sb_honor.lids"
read -r o_before o_after <"$T/osm-sb.lids"
want=$((FILE_LID))
fab_check "the master had given another LID than the file's" \
	test -n "$d_before" -a "$((d_before))" != "$want" -a "$((h_before))" != "$want"
fab_check "default: ibsm keeps the LID the port holds ($d_before -> $d_after)" \
	test -n "$d_after" -a "$d_after" = "$d_before"
fab_check "honor_guid2lid_file TRUE: ibsm takes the file's ($h_after)" \
	test -n "$h_after" -a "$((h_after))" = "$want"
fab_check "OpenSM with TRUE does the same ($o_before -> $o_after)" \
	test -n "$o_after" -a "$((o_after))" = "$want"
fab_check "ibsm said it took over" grep -q "SM 1101" "$T/sb_honor.log"
fab_summary
