#!/usr/bin/env bash
# tests/fabric/test_qos_sa.sh - the SA applies the QoS policy file as
# OpenSM does: the same opensm.conf (qos TRUE, qos_policy_file) and
# partitions.conf given to OpenSM and then to ibsm (a fresh ibsim each);
# PathRecord Gets and GetTables that set ServiceID, P_Key, QoSClass and
# SL components (tests/fabric/sa_client.c) must get the same SL, MTU,
# rate, packet lifetime and P_Key from both, for queries matched by
# service ID, by P_Key, by QoS class, by port group (port name,
# partition, node type), by qos-ulps lines, for one nothing matches (the
# default level), and for requests that conflict with their level (no
# record, or an SL that qos_sl2vl sends to VL 15).  Each answer's SL is also checked against the level the policy
# gives it, so that two SMs agreeing on nothing cannot pass.
# Then, ibsm alone: a broken policy on SIGHUP logs FILE:LINE:COLUMN, the
# SL-to-VL and VL arbitration tables (smpquery) stay as they were and the
# SA still answers with the policy in force; the fixed file's SIGHUP
# applies it.  Last, qos TRUE with no policy file: the partitions' sl=
# gives the SL, for both SMs alike.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CLIENT=${SA_CLIENT:-$(dirname "$IBSM")/../tests/fabric/sa_client}
if ! command -v opensm >/dev/null; then
	fab_fail "opensm installed" "the reference is needed for this test"
	fab_summary
	exit 1
fi
NET=$FAB_TMP/two.net
sm_net_two_switches "$NET"
DIAG=H0002
POLICY=$FAB_TMP/qos-policy.conf
PARTS=$FAB_TMP/partitions.conf
CONF=$FAB_TMP/opensm.conf

# guid HOST: the port GUID of HOST's port 1 (from the running ibsim)
guid() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk -v h="'$1'" '$1 == "CA" && index($0, "( " h) { print $4; exit }'
}

# lid HOST: its LID
lid() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk -v h="'$1'" '$1 == "CA" && index($0, "( " h) { print $2; exit }'
}

# write_files: partitions.conf (mgmt holds H0003 and H0005 only) and the
# policy, once the GUIDs are known
write_files() {
	local g3 g5
	g3=$(guid H0003)
	g5=$(guid H0005)
	cat >"$PARTS" <<PARTS
Default=0x7fff, ipoib : ALL=full ;
storage=0x0002, sl=3 : ALL=full ;
mgmt=0x0003 : 0x${g3#0x}=full, 0x${g5#0x}=full ;
PARTS
	cat >"$POLICY" <<'POLICY'
port-groups
    port-group
        name: Storage
        port-name: H0004/P1
    end-port-group
    port-group
        name: Mgmt
        partition: mgmt
    end-port-group
    port-group
        name: Switches
        node-type: SWITCH
    end-port-group
    port-group
        name: Hosts
        node-type: CA
    end-port-group
end-port-groups

qos-levels
    qos-level
        name: DEFAULT
        sl: 1
    end-qos-level
    qos-level
        name: BySid
        sl: 4
        mtu-limit: 3
    end-qos-level
    qos-level
        name: ByClass
        sl: 6
        rate-limit: 2
    end-qos-level
    qos-level
        name: ByPkey
        sl: 7
        packet-life: 12
    end-qos-level
    qos-level
        name: Storage
        sl: 2
        mtu-limit: 2
        rate-limit: 3
        packet-life: 10
    end-qos-level
    qos-level
        name: Mgmt
        sl: 13
        pkey: 0x0003
    end-qos-level
    qos-level
        name: ToSwitch
        sl: 12
    end-qos-level
    qos-level
        name: OnVL15
        sl: 14
    end-qos-level
end-qos-levels

qos-match-rules
    qos-match-rule
        service-id: 0x1000-0x1fff
        qos-level-name: BySid
    end-qos-match-rule
    qos-match-rule
        qos-class: 5
        qos-level-name: ByClass
    end-qos-match-rule
    qos-match-rule
        use: SL 14 goes to VL 15 (qos_sl2vl): no path
        qos-class: 9
        qos-level-name: OnVL15
    end-qos-match-rule
    qos-match-rule
        pkey: 0x0002
        qos-level-name: ByPkey
    end-qos-match-rule
    qos-match-rule
        destination: Storage
        qos-level-name: Storage
    end-qos-match-rule
    qos-match-rule
        source: Mgmt
        destination: Mgmt
        qos-level-name: Mgmt
    end-qos-match-rule
    qos-match-rule
        source: Hosts
        destination: Switches
        qos-level-name: ToSwitch
    end-qos-match-rule
    qos-match-rule
        use: a P_Key no partition has (a warning)
        pkey: 0x0042
        qos-level-name: ToSwitch
    end-qos-match-rule
end-qos-match-rules

qos-ulps
    any, service-id 0x2000 : 9
    any, pkey 0x7fff : 8
end-qos-ulps
POLICY
	# minhop for both: no engine SL (layers) over the level's
	cat >"$CONF" <<CONF
qos TRUE
qos_policy_file $POLICY
routing_engine minhop
qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,15,7
CONF
}

# The queries: NAME SL METHOD SRC DST [COMPONENTS...], SL the one the
# policy gives (- for no record).  SRC/DST: hosts, or sw-a for sw-a's LID.
QUERIES='sid          4  get   H0001 H0003 sid=0x1234
sid-table    4  table H0001 H0003 sid=0x1fff
sid-ulp      9  get   H0001 H0003 sid=0x2000
class        6  get   H0001 H0003 class=5
class-other  1  get   H0001 H0003 class=4
class-vl15   -  get   H0001 H0003 class=9
pkey         7  get   H0001 H0003 pkey=0x8002
pkey-ulp     8  get   H0001 H0003 pkey=0xffff
pkey-prec    -  get   H0003 H0005 pkey=0xffff
pkey-shared  13 get   H0003 H0005 pkey=0x8003
port-name    2  get   H0001 H0004
port-name-t  2  table H0003 H0004
partition    13 get   H0003 H0005
part-half    1  get   H0003 H0001
node-type    12 get   H0001 sw-a
default      1  get   H0001 H0003
default-t    1  table H0002 H0001
sid-first    4  get   H0001 H0004 sid=0x1001
sl-agrees    4  get   H0001 H0003 sid=0x1234 sl=4
sl-conflict  -  get   H0001 H0003 sid=0x1234 sl=3
mtu-conflict -  get   H0001 H0004 mtu=2:4
mtu-fits     2  get   H0001 H0004 mtu=2:2
rate-conflict - get   H0001 H0003 class=5 rate=2:7
pkey-level   -  get   H0001 H0003 pkey=0xffff sl=13'

# lid_of NAME: a host's LID, or a switch's (sw-a: the switch H0001
# hangs off), from the ibnetdiscover -p output in $FAB_TMP/ports
lid_of() {
	if [ "$1" = sw-a ]; then
		awk '$1 == "SW" && index($0, "sw-a") { print $2; exit }' \
			"$FAB_TMP/ports"
	else
		awk -v h="'$1'" '$1 == "CA" && index($0, "( " h) { print $2; exit }' \
			"$FAB_TMP/ports"
	fi
}

# ask OUT [QUERIES]: every query, answers into OUT ("NAME: answer lines")
ask() {
	local out=$1 list=${2:-$QUERIES} name sl how src dst rest s d
	: >"$out"
	fab_run "$DIAG" ibnetdiscover -p >"$FAB_TMP/ports" 2>/dev/null
	while read -r name sl how src dst rest; do
		s=$(lid_of "$src")
		d=$(lid_of "$dst")
		# shellcheck disable=SC2086
		fab_run "$DIAG" "$CLIENT" path "$how" "$s" "$d" $rest 2>&1 |
			sed "s/^/$name: /" >>"$out"
	done <<<"$list"
}

# compare QUERIES: answers.osm and answers.ibsm agree, each with its SL
compare() {
	local name sl how src dst rest o i
	while read -r name sl how src dst rest; do
		o=$(grep "^$name: " "$FAB_TMP/answers.osm")
		i=$(grep "^$name: " "$FAB_TMP/answers.ibsm")
		fab_check "$name ($how $src -> $dst $rest): as OpenSM [$i]" \
			[ -n "$i" ] && [ "$o" = "$i" ]
		if [ "$sl" = - ]; then
			fab_check "$name: no record" [ "$i" = "$name: records 0" ]
		else
			fab_check "$name: SL $sl" \
				grep -q "^$name: path .* sl $sl " <<<"$i"
		fi
	done <<<"$1"
}

# osm_run CONF: OpenSM on a fresh ibsim with CONF and the partitions;
# the answers to QUERIES (or $2) into answers.osm
osm_run() {
	local opid
	fab_sim_start "$NET" osm || { fab_fail "sim (OpenSM)"; return 1; }
	[ -s "$PARTS" ] || write_files
	rm -rf "$FAB_TMP/osm"
	mkdir -p "$FAB_TMP/osm"
	fab_spawn H0001 env OSM_CACHE_DIR="$FAB_TMP/osm" \
		OSM_TMP_DIR="$FAB_TMP/osm" opensm -F "$1" -P "$PARTS" \
		-f "$FAB_TMP/osm/log" >"$FAB_TMP/osm/out" 2>&1
	opid=$FAB_SPAWN_PID
	fab_check "OpenSM master ($(basename "$1"))" sm_wait_for 30 osm_master
	sleep 2
	ask "$FAB_TMP/answers.osm" "${2:-$QUERIES}"
	kill -TERM "$(fab_descendant "$opid" opensm)" 2>/dev/null
	kill -TERM "$opid" 2>/dev/null
	wait "$opid" 2>/dev/null
	rm -f "$FAB_TMP/pids/$opid"
	fab_sim_stop
}

osm_master() {
	fab_run "$DIAG" sminfo | grep -q SMINFO_MASTER
}

# tables OUT: SL-to-VL and VL arbitration tables of the two switches'
# linked ports and H0001's port
tables() {
	local out=$1 path p
	: >"$out"
	for path in "0,1 1 2 3 4" "0,1,3 1 2 3" "0 1"; do
		set -- $path
		local dr=$1
		shift
		for p in "$@"; do
			fab_run "$DIAG" smpquery -D sl2vl "$dr" "$p" 2>&1 |
				grep -v '^#' >>"$out"
			fab_run "$DIAG" smpquery -D vlarb "$dr" "$p" 2>&1 |
				grep -v '^#' >>"$out"
		done
	done
}

# 1. OpenSM
osm_run "$CONF" || { fab_summary; exit 1; }

# 2. ibsm, same files
fab_sim_start "$NET" ibsm || { fab_fail "sim (ibsm)"; fab_summary; exit 1; }
sm_start H0001 "$FAB_TMP/ibsm" -F "$CONF" -P "$PARTS"
fab_check "ibsm up" sm_wait_up "$FAB_TMP/ibsm" 0 30
ask "$FAB_TMP/answers.ibsm"

# every query answered the same, and with the level's SL
compare "$QUERIES"

fab_check "a P_Key the partitions lack: warned with FILE:LINE:COLUMN" \
	grep -q "ERR 3204: $POLICY:[0-9]*:[0-9]*: qos-match-rule pkey 0x0042" \
	"$FAB_TMP/ibsm.log"

# 3. A broken policy on SIGHUP: FILE:LINE:COLUMN, tables and answers stay
tables "$FAB_TMP/tables.before"
cp "$POLICY" "$FAB_TMP/policy.good"
sed -i 's/^        sl: 4$/        sl: 5/; s/^        mtu-limit: 2$/        mtu-limit: 9/' "$POLICY"
bad_line=$(grep -n 'mtu-limit: 9' "$POLICY" | cut -d: -f1)
log=$FAB_TMP/ibsm.log
off=$(stat -c %s "$log")
kill -HUP "$(fab_descendant "$SM_PID" ibsm)"
fab_check "broken policy: FILE:LINE:COLUMN logged" \
	sm_wait_for 10 grep -q "ERR 3201: $POLICY:$bad_line:[0-9]*: " "$log"
fab_check "broken policy: the policy in force stays (logged)" \
	sm_wait_for 10 grep -q "ERR 3202: $POLICY not applied" "$log"
sm_wait_up "$FAB_TMP/ibsm" "$off" 30 >/dev/null
tables "$FAB_TMP/tables.after"
fab_check "broken policy: SL-to-VL and VL arbitration tables unchanged" \
	diff "$FAB_TMP/tables.before" "$FAB_TMP/tables.after"
fab_check "broken policy: the SA answers with the policy in force" \
	grep -q 'sl 4 ' <(fab_run "$DIAG" "$CLIENT" path get "$(lid H0001)" \
		"$(lid H0003)" sid=0x1234)

# 4. Fixed (with the new SL of BySid): the next SIGHUP applies it
sed -i 's/mtu-limit: 9/mtu-limit: 2/' "$POLICY"
kill -HUP "$(fab_descendant "$SM_PID" ibsm)"
sid_sl() {
	fab_run "$DIAG" "$CLIENT" path get "$(lid H0001)" "$(lid H0003)" \
		sid=0x1234 | grep -q 'sl 5 '
}
fab_check "fixed policy: the next SIGHUP applies it (SL 4 -> 5)" \
	sm_wait_for 20 sid_sl
fab_check "fixed policy: logged as read again" \
	grep -q "qos: policy $POLICY again" "$log"
sm_stop
fab_check "ibsm exits cleanly" [ $? -eq 0 ]
fab_sim_stop

# 5. qos TRUE without a policy (none at OpenSM's default path): the
# partitions' sl= gives the SL, for OpenSM and ibsm alike
NOPOL='part-sl      3  get   H0001 H0003
part-sl-key  3  get   H0001 H0003 pkey=0x0002
part-no-sl   0  get   H0001 H0003 pkey=0xffff
part-mgmt    0  get   H0003 H0005 pkey=0x8003'
CONF2=$FAB_TMP/opensm-nopolicy.conf
printf 'qos TRUE\nrouting_engine minhop\n' >"$CONF2"
osm_run "$CONF2" "$NOPOL"
fab_sim_start "$NET" ibsm2 || { fab_fail "sim (ibsm)"; fab_summary; exit 1; }
# a bad policy at start: ibsm does not start, and says where
printf 'qos-levels\n qos-level\n  name: DEFAULT\n  sl: 99\n end-qos-level\nend-qos-levels\n' \
	>"$FAB_TMP/bad-policy.conf"
printf 'qos TRUE\nqos_policy_file %s\n' "$FAB_TMP/bad-policy.conf" \
	>"$FAB_TMP/opensm-bad.conf"
fab_run H0001 "$IBSM" -f "$FAB_TMP/bad.log" --cache-dir "$FAB_TMP/bad.cache" \
	-F "$FAB_TMP/opensm-bad.conf" >"$FAB_TMP/bad.out" 2>&1
fab_check "a bad policy at start: not started (exit 2)" [ $? -eq 2 ]
fab_check "a bad policy at start: FILE:LINE:COLUMN on stderr" \
	grep -q "$FAB_TMP/bad-policy.conf:4:7: expected a number" "$FAB_TMP/bad.out"
sm_start H0001 "$FAB_TMP/ibsm2" -F "$CONF2" -P "$PARTS"
fab_check "ibsm up (no policy)" sm_wait_up "$FAB_TMP/ibsm2" 0 30
ask "$FAB_TMP/answers.ibsm" "$NOPOL"
compare "$NOPOL"
sm_stop
fab_check "ibsm exits cleanly (no policy)" [ $? -eq 0 ]
fab_sim_stop
fab_summary
