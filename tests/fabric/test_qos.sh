#!/usr/bin/env bash
# tests/fabric/test_qos.sh - `qos TRUE` programs what OpenSM programs: the
# same opensm.conf QoS keys given to OpenSM and then to ibsm (a fresh
# ibsim each) give the same SL-to-VL tables (`smpquery sl2vl`, every
# input port of every linked output port on the switches), VL
# arbitration tables (`smpquery vlarb`), and OperationalVLs and
# VLHighLimit (`smpquery portinfo`) on every linked port, for OpenSM's
# defaults, OpenSM's documented example, and a configuration with
# different tables per port class;
# a SIGHUP's heavy sweep then sets none of them again.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

if ! command -v opensm >/dev/null; then
	fab_fail "opensm installed" "the reference is needed for this test"
	fab_summary
	exit 1
fi
NET=$FAB_TMP/two.net
sm_net_two_switches "$NET"

# DR paths from H0002 (on sw-b port 1) and the linked ports of each node.
# name path ports
NODES='sw-b 0,1 1,2,3,4
sw-a 0,1,3 1,2,3
H0002 0 1
H0001 0,1,3,1 1
H0003 0,1,3,2 1
H0004 0,1,2 1
H0005 0,1,4 1'

# snapshot OUT: the tables and limits of every linked port into OUT
snapshot() {
	local out=$1 name path ports p
	: >"$out"
	while read -r name path ports; do
		for p in ${ports//,/ }; do
			fab_run H0002 smpquery -D portinfo "$path" "$p" 2>&1 |
				grep -E '^(VLHighLimit|OperVLs)' |
				sed "s/^/$name port $p: /" >>"$out"
			# on a switch: the tables of every input port
			fab_run H0002 smpquery -D sl2vl "$path" "$p" 2>&1 |
				grep -v '^#' | sed "s/^/$name port $p: /" >>"$out"
			fab_run H0002 smpquery -D vlarb "$path" "$p" 2>&1 |
				grep -v '^#' | sed "s/^/$name port $p: /" >>"$out"
		done
	done <<<"$NODES"
}

osm_master() {
	fab_run H0002 sminfo | grep -q SMINFO_MASTER
}

# run_both NAME CONF: snapshots under OpenSM, then under ibsm
run_both() {
	local name=$1 conf=$2
	fab_sim_start "$NET" "osm-$name" || { fab_fail "$name: sim"; return; }
	mkdir -p "$FAB_TMP/osm-$name"
	fab_spawn H0001 env OSM_CACHE_DIR="$FAB_TMP/osm-$name" \
		OSM_TMP_DIR="$FAB_TMP/osm-$name" opensm -F "$conf" \
		-f "$FAB_TMP/osm-$name/log" >"$FAB_TMP/osm-$name/out" 2>&1
	local opid=$FAB_SPAWN_PID
	# OpenSM's log is not flushed as it goes: its SMInfo says master,
	# and its QoS setup follows in the same sweep
	fab_check "$name: OpenSM master" sm_wait_for 20 osm_master
	sleep 2
	snapshot "$FAB_TMP/$name.osm"
	kill -TERM "$(fab_descendant "$opid" opensm)" 2>/dev/null
	kill -TERM "$opid" 2>/dev/null
	wait "$opid" 2>/dev/null
	rm -f "$FAB_TMP/pids/$opid"
	fab_sim_stop

	fab_sim_start "$NET" "ibsm-$name" || { fab_fail "$name: sim"; return; }
	sm_start H0001 "$FAB_TMP/ibsm-$name" -F "$conf"
	fab_check "$name: ibsm up" sm_wait_up "$FAB_TMP/ibsm-$name" 0 30
	sleep 1
	snapshot "$FAB_TMP/$name.ibsm"
	# a SIGHUP's heavy sweep: every table is known to hold what it
	# should, no Set (GNU timeout relays the signal to ibsm)
	local log=$FAB_TMP/ibsm-$name.log
	kill -HUP "$(fab_descendant "$SM_PID" ibsm)"
	fab_check "$name: second heavy sweep sets no SL-to-VL table" \
		sm_wait_for 10 grep -q 'qos TRUE: 0 SLtoVLMappingTable Sets' "$log"
	fab_check "$name: second heavy sweep sets no VL arbitration block" \
		sm_wait_for 10 grep -q 'qos TRUE: 0 VLArbitrationTable Sets' "$log"
	sm_stop
	fab_check "$name: ibsm exits cleanly" [ $? -eq 0 ]
	fab_sim_stop
	fab_check "$name: $(wc -l <"$FAB_TMP/$name.osm") table and limit lines as OpenSM's" \
		diff "$FAB_TMP/$name.osm" "$FAB_TMP/$name.ibsm"
}

cat >"$FAB_TMP/defaults.conf" <<'CONF'
qos TRUE
CONF
cat >"$FAB_TMP/classes.conf" <<'CONF'
qos TRUE
qos_high_limit 8
qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15
qos_vlarb_high 0:8,1:16
qos_vlarb_low 2:32,3:64,4:1,0:0,5:200,6:6,7:7,8:8,9:9,10:10,11:11,12:12
qos_ca_high_limit 4
qos_ca_sl2vl 0,0,0,0,1,1,1,1,2,2,2,2,3,3,3,3
qos_ca_vlarb_low 1:100,2:50,3:25
qos_swe_high_limit 255
qos_swe_sl2vl 3,2,1,0,3,2,1,0,7,6,5,4,7,6,5,4
qos_swe_vlarb_high 7:255,6:128,5:1,0xe:4
CONF
# OpenSM's documented example (doc/QoS_management_in_OpenSM.txt, 7.)
cat >"$FAB_TMP/example.conf" <<'CONF'
qos TRUE
qos_ca_max_vls 15
qos_ca_high_limit 6
qos_ca_vlarb_high 0:4
qos_ca_vlarb_low 0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64
qos_ca_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7
qos_swe_max_vls 15
qos_swe_high_limit 6
qos_swe_vlarb_high 0:4
qos_swe_vlarb_low 0:0,1:64,2:128,3:192,4:0,5:64,6:64,7:64
qos_swe_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7
CONF
run_both defaults "$FAB_TMP/defaults.conf"
run_both example "$FAB_TMP/example.conf"
run_both classes "$FAB_TMP/classes.conf"
fab_summary
