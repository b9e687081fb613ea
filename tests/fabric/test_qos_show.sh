#!/usr/bin/env bash
# tests/fabric/test_qos_show.sh - `ibsmctl qos show` on ibsim with the
# worked example of ibsm(8) QOS, loaded from the very files the manual
# prints (doc/examples/qos/opensm.conf and qos-policy.conf):
#   - `qos show` (text) and `qos show --json` (python3's json) say QoS is
#     on, print the tables each port class is programmed with, which
#     smpquery sl2vl / vlarb read back from the ports, the policy file and
#     when it was loaded, the levels, the port group with the two storage
#     targets it holds on this fabric, and the rules in precedence order;
#   - `qos show --src --dst [--sid]` gives, for four pairs (the iSER match
#     rule, the SRP qos-ulps line, the iSER qos-ulps line, no rule), the
#     level the policy implies and the SL, MTU and rate that `saquery pr`
#     gets from the SA for the same query;
#   - a broken policy on SIGHUP: `qos show` names FILE:LINE:COLUMN and
#     keeps the policy loaded before; fixed, the next SIGHUP loads it;
#   - OpenSM given the same two files answers the four queries with the
#     same SL, MTU and rate, and programs the same tables.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
EX=$FAB_TOP/doc/examples/qos
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# json_ok FILE PYTHON: FILE is valid JSON and the assertions in PYTHON
# hold on it (d: the document).
json_ok() {
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1"
}

# The example's fabric: one switch, three compute hosts (H0001 runs the
# SM, H0002 the diagnostics) and the two storage targets, whose
# descriptions and port GUIDs the policy names.
cat >"$T/qos.net" <<'NET'
Switch 8 "sw1"
[1]	"H0001"[1]
[2]	"H0002"[1]
[3]	"H0003"[1]
[4]	"stor01"[1]
[5]	"stor02"[1]

Hca 1 "H0001"
[1]	"sw1"[1]

Hca 1 "H0002"
[1]	"sw1"[2]

Hca 1 "H0003"
[1]	"sw1"[3]

caguid=0x0002c90300c0ff00
Hca 1 "stor01" # "stor01 HCA-1"
[1]	"sw1"[4]

Hca 1 "stor02" # "stor02 HCA-1"
[1]	"sw1"[5]
NET

fab_sim_start "$T/qos.net" qshow || {
	fab_fail sim-start
	fab_summary
	exit 1
}
# The policy the daemon reads is a copy of the manual's, so that a broken
# one can replace it later; it starts identical.
cp "$EX/qos-policy.conf" "$T/qos-policy.conf"
fab_check "the policy loaded is the manual's" \
	cmp "$EX/qos-policy.conf" "$T/qos-policy.conf"
# minhop, OpenSM's default engine: ibsm's default (auto) takes dfsssp on
# this one-switch fabric, whose virtual layers give paths their SLs
# (ibsm(8), VIRTUAL LAYERS).
sm_start H0001 "$T/sm" -F "$EX/opensm.conf" -Y "$T/qos-policy.conf" \
	-R minhop --control-socket "$SOCK"
fab_check "ibsm up with the example's opensm.conf" sm_wait_up "$T/sm" 0 30

# ---------------------------------------------------------- qos show
ctl qos show >"$T/show.txt" 2>"$T/show.err"
fab_check "qos show exits 0" [ $? -eq 0 ]
has() {
	grep -qF -- "$1" "$T/show.txt" || {
		fab_log "qos show lacks: $1"
		cat "$T/show.txt" >&2
		return 1
	}
}
fab_check "qos show: QoS on" has "QoS: on (qos TRUE)"
fab_check "qos show: the policy file" has "policy file: $T/qos-policy.conf"
fab_check "qos show: loaded, with what it holds" \
	grep -qE '^policy: loaded [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC: 1 port groups, 2 QoS levels, 1 match rules, 2 qos-ulps rules$' "$T/show.txt"
for c in ca sw0 swe rtr; do
	fab_check "qos show: class $c tables" has "class $c: max_vls 15, high_limit 0"
done
fab_check "qos show: OperationalVLs" has "OperationalVLs: max_op_vls 5 (VL0-14) within each link's VLCap"
fab_check "qos show: the low table" has "  vlarb_low  0:192,1:64"
fab_check "qos show: the high table" has "  vlarb_high 0:0,1:0"
fab_check "qos show: SL-to-VL" has "  sl2vl      0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
fab_check "qos show: the storage group holds the two targets" \
	grep -qE '^  StorageTargets +2 +port-group line 8 ' "$T/show.txt"
fab_check "qos show: the Storage level" \
	grep -qE '^  Storage +1 +2048 ' "$T/show.txt"
fab_check "qos show: the match rule first" \
	has "  1   match-rule line 32: destination StorageTargets, service-id 0x1060cbc -> level Storage (sl 1)"
fab_check "qos show: the srp line second" \
	has "  2   qos-ulps line 44: destination _ULP_Targets_ -> level SimpleQoSLevel_SL1 (sl 1)"
fab_check "qos show: the iser line third" \
	has "  3   qos-ulps line 46: service-id 0x1060cbc -> level SimpleQoSLevel_SL1 (sl 1)"
fab_check "qos show: then the default level" \
	has "  -   otherwise -> level DEFAULT (sl 0)"

ctl qos show --json >"$T/show.json"
fab_check "qos show --json exits 0" [ $? -eq 0 ]
fab_check "qos show --json: the document" json_ok "$T/show.json" "
assert d['qos'] is True, d['qos']
assert d['max_op_vls'] == 5, d['max_op_vls']
assert d['policy_file'].endswith('/qos-policy.conf')
assert d['policy']['levels'] == 2 and d['policy']['ulp_rules'] == 2
assert d['last_error'] is None
pc = {c['class']: c for c in d['port_classes']}
assert sorted(pc) == ['ca', 'rtr', 'sw0', 'swe'], sorted(pc)
for c in pc.values():
    assert c['vlarb_low'] == [{'vl': 0, 'weight': 192}, {'vl': 1, 'weight': 64}], c
    assert c['sl2vl'] == [0, 1] + [0] * 14, c
    assert c['high_limit'] == 0 and c['max_vls'] == 15, c
lv = {l['name']: l for l in d['levels']}
assert lv['Storage']['sl'] == 1 and lv['Storage']['mtu_limit'] == 4, lv
assert lv['DEFAULT']['default'] and lv['DEFAULT']['rate_limit'] is None
g = [x for x in d['port_groups'] if x['name'] == 'StorageTargets'][0]
assert g['members'] == 2 and not g['generated'], g
r = d['rules']
assert [x['kind'] for x in r] == ['match-rule', 'qos-ulps', 'qos-ulps'], r
assert r[0]['level'] == 'Storage' and r[0]['destination'] == ['StorageTargets']
assert r[0]['service_id'] == [['0x1060cbc', '0x1060cbc']], r[0]
assert r[2]['sl'] == 1 and d['default_level'] == 'DEFAULT'
"

# The tables qos show prints are on the ports (smpquery, the referee):
# stor01's port (directed route from H0002: out port 1 to sw1, out its
# port 4) and sw1's port 4 (every input port's table to it).
ROW='| 0| 1| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|'
# low_table FILE: the VL and WEIGHT lines of the low table start with
# VL 0 weight 192 (0xC0) and VL 1 weight 64 (0x40)
low_table() {
	grep -m 1 '^VL ' "$1" | grep -qF '|0x0 |0x1 |' &&
		grep -m 1 '^WEIGHT' "$1" | grep -qF '|0xC0|0x40|'
}
fab_run H0002 smpquery -D portinfo 0,1,4 1 >"$T/portinfo.txt" 2>&1
fab_check "smpquery portinfo stor01: OperVLs VL0-7 (its VLCap under max_op_vls 5)" \
	grep -qE '^OperVLs:\.+VL0-7$' "$T/portinfo.txt"
fab_run H0002 smpquery -D sl2vl 0,1,4 1 >"$T/sl2vl.txt" 2>&1
fab_check "smpquery sl2vl stor01: SL 1 on VL 1, the others on VL 0" \
	grep -qF "ports: in  0, out  0: $ROW" "$T/sl2vl.txt"
fab_run H0002 smpquery -D vlarb 0,1,4 1 >"$T/vlarb.txt" 2>&1
fab_check "smpquery vlarb stor01: the low table 0:192,1:64" \
	low_table "$T/vlarb.txt"
fab_run H0002 smpquery -D sl2vl 0,1 4 >"$T/sl2vl-sw.txt" 2>&1
fab_check "smpquery sl2vl sw1 port 4: the same from all 9 input ports" \
	[ "$(grep -cF "out  4: $ROW" "$T/sl2vl-sw.txt")" -eq 9 ]
fab_run H0002 smpquery -D vlarb 0,1 4 >"$T/vlarb-sw.txt" 2>&1
fab_check "smpquery vlarb sw1 port 4: the low table 0:192,1:64" \
	low_table "$T/vlarb-sw.txt"

# ---------------------------------------------- qos show --src --dst
# pr_field FILE NAME: a field of saquery's PathRecord dump ("sl", ...)
# (saquery prints "sl......................0x1")
pr_field() {
	sed -n "s/^[[:space:]]*$2\.\.*\(0x[0-9a-fA-F]*\|[0-9]*\)\$/\1/p" "$1" |
		head -n 1
}

# all_set WORD...: none is empty
all_set() {
	local w
	for w in "$@"; do
		[ -n "$w" ] || return 1
	done
}
# same_answer SL MTU RATE SL2 MTU2 RATE2: saquery's fields (MTU and rate
# with their selector bits) are the numbers of qos show's answer
same_answer() {
	all_set "$@" && [ $(($1)) -eq "$4" ] && [ $(($2 & 0x3f)) -eq "$5" ] &&
		[ $(($3 & 0x3f)) -eq "$6" ]
}

# path NAME SRC DST LEVEL SL [SID]: qos show names LEVEL and SL, and its
# SL, MTU and rate are those of saquery pr for the same query.
path() {
	local name=$1 src=$2 dst=$3 level=$4 sl=$5 sid=${6:-}
	local f=$T/path-$name args=() sa=()
	[ -n "$sid" ] && args=(--sid "$sid") && sa=(--service_id "$sid")
	ctl qos show --json --src "$src" --dst "$dst" "${args[@]}" >"$f.json"
	fab_check "$name: qos show --src --dst exits 0" [ $? -eq 0 ]
	fab_check "$name: level $level, SL $sl" json_ok "$f.json" "
assert d['level'] == '$level', d['level']
assert d['level_sl'] == $sl and d['path_record']['sl'] == $sl, d
"
	local slid dlid
	slid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['src']['lid'])" "$f.json")
	dlid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['dst']['lid'])" "$f.json")
	fab_run H0002 saquery pr --slid "$slid" --dlid "$dlid" "${sa[@]}" \
		>"$f.sa" 2>&1
	local s m r
	s=$(pr_field "$f.sa" sl)
	m=$(pr_field "$f.sa" mtu)
	r=$(pr_field "$f.sa" rate)
	fab_check "$name: saquery pr answers" all_set "$s" "$m" "$r"
	fab_check "$name: SL, MTU, rate as saquery pr ($s $m $r)" json_ok "$f.json" "
p = d['path_record']
# MTU and rate: saquery prints the selector bits too
assert (p['sl'], p['mtu'], p['rate']) == (int('$s', 0), int('$m', 0) & 0x3f,
                                          int('$r', 0) & 0x3f), p
"
	# for OpenSM: the ends' port GUIDs, the ServiceID, the answer
	python3 -c "import json, sys
d = json.load(open(sys.argv[1])); p = d['path_record']
print(sys.argv[2], d['src']['guid'], d['dst']['guid'], sys.argv[3] or '-',
      p['sl'], p['mtu'], p['rate'])" "$f.json" "$name" "$sid" >>"$T/cases"
}
path iser-target H0003 "stor01 HCA-1" Storage 1 0x1060cbc
path srp-target H0003 stor02 SimpleQoSLevel_SL1 1
path iser-other H0003 H0002 SimpleQoSLevel_SL1 1 0x1060CBC
# H0003 by its LID this time (qos show found it by name above)
H3LID=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['src']['lid'])" "$T/path-iser-target.json")
path default "$H3LID" H0002 DEFAULT 0
fab_check "iser-target: MTU 2048 (ibsim's links: within the Storage level's mtu-limit)" json_ok "$T/path-iser-target.json" "
assert d['path_record']['mtu'] == 4 and d['path_record']['mtu_bytes'] == 2048, d
assert d['rule'] == {'order': 1, 'kind': 'match-rule', 'line': 32}, d['rule']
"
ctl qos show --src H0003 --dst "stor01 HCA-1" --sid 0x1060cbc >"$T/path.txt"
fab_check "qos show --src --dst (text): the rule" \
	grep -qxF "rule:        1, match-rule line 32: destination StorageTargets, service-id 0x1060cbc" "$T/path.txt"
fab_check "qos show --src --dst (text): the PathRecord" \
	grep -qE '^PathRecord:  SL 1, MTU 4 \(2048\), rate [0-9]+ ' "$T/path.txt"
ctl qos show --src nosuchnode --dst H0002 >"$T/bad.txt" 2>&1
fab_check "an unknown end: exit 1, said why" [ $? -eq 1 ]
fab_check "an unknown end: named" grep -q 'no node "nosuchnode"' "$T/bad.txt"

# ------------------------------------------------- a broken policy
sed 's/^        sl: 1$/        sl: 16/' "$EX/qos-policy.conf" >"$T/qos-policy.conf"
kill -HUP "$(fab_descendant "$SM_PID" ibsm)"
broken() {
	ctl qos show >"$T/show2.txt" 2>&1 &&
		grep -q "^last load: .* failed: $T/qos-policy.conf:24:" "$T/show2.txt"
}
fab_check "a broken policy on SIGHUP: FILE:LINE:COLUMN" sm_wait_for 10 broken
fab_check "a broken policy: the loaded one stays" \
	grep -q 'the policy loaded before stays in force' "$T/show2.txt"
fab_check "a broken policy: its levels still shown" \
	grep -qE '^  Storage +1 +2048 ' "$T/show2.txt"
cp "$EX/qos-policy.conf" "$T/qos-policy.conf"
kill -HUP "$(fab_descendant "$SM_PID" ibsm)"
fixed() {
	ctl qos show --json >"$T/show3.json" 2>&1 &&
		json_ok "$T/show3.json" "assert d['last_error'] is None"
}
fab_check "fixed, the next SIGHUP loads it" sm_wait_for 10 fixed

sm_stop
fab_check "ibsm exits cleanly" [ $? -eq 0 ]
fab_sim_stop

# ---------------------------------------- OpenSM with the same files
# OpenSM 3.3.23 reads the manual's two files as they are: its SA gives
# the four queries the SL, MTU and rate ibsm's did, and it programs the
# tables smpquery read above.  Its LIDs are its own: found by port GUID
# in its guid2lid file.
if command -v opensm >/dev/null; then
	fab_sim_start "$T/qos.net" qshow-osm || fab_fail "OpenSM: sim"
	mkdir -p "$T/osm"
	fab_spawn H0001 env OSM_CACHE_DIR="$T/osm" OSM_TMP_DIR="$T/osm" \
		opensm -F "$EX/opensm.conf" -Y "$EX/qos-policy.conf" \
		-f "$T/osm/log" >"$T/osm/out" 2>&1
	OPID=$FAB_SPAWN_PID
	osm_master() {
		fab_run H0002 sminfo | grep -q SMINFO_MASTER &&
			[ -s "$T/osm/guid2lid" ]
	}
	fab_check "OpenSM master" sm_wait_for 30 osm_master
	sleep 1
	while read -r name sg dg sid sl mtu rate; do
		slid=$(awk -v g="$sg" '$1 == g { print $2 }' "$T/osm/guid2lid")
		dlid=$(awk -v g="$dg" '$1 == g { print $2 }' "$T/osm/guid2lid")
		if ! fab_check "OpenSM $name: LIDs of $sg and $dg ($slid $dlid)" \
			all_set "$slid" "$dlid"; then
			continue
		fi
		slid=$((slid))
		dlid=$((dlid))
		sa=()
		[ "$sid" != - ] && sa=(--service_id "$sid")
		fab_run H0002 saquery pr --slid "$slid" --dlid "$dlid" "${sa[@]}" \
			>"$T/osm-$name.sa" 2>&1
		s=$(pr_field "$T/osm-$name.sa" sl)
		m=$(pr_field "$T/osm-$name.sa" mtu)
		r=$(pr_field "$T/osm-$name.sa" rate)
		fab_check "OpenSM $name: SL $sl, MTU $mtu, rate $rate as ibsm ($s $m $r)" \
			same_answer "$s" "$m" "$r" "$sl" "$mtu" "$rate"
	done <"$T/cases"
	fab_check "OpenSM: 4 queries compared" [ "$(wc -l <"$T/cases")" -eq 4 ]
	fab_run H0002 smpquery -D vlarb 0,1,4 1 >"$T/osm-vlarb.txt" 2>&1
	fab_check "OpenSM: stor01's low table 0:192,1:64 too" \
		low_table "$T/osm-vlarb.txt"
	fab_run H0002 smpquery -D sl2vl 0,1 4 >"$T/osm-sl2vl-sw.txt" 2>&1
	fab_check "OpenSM: sw1 port 4's SL-to-VL tables too" \
		[ "$(grep -cF "out  4: $ROW" "$T/osm-sl2vl-sw.txt")" -eq 9 ]
	kill -TERM "$(fab_descendant "$OPID" opensm)" 2>/dev/null
	kill -TERM "$OPID" 2>/dev/null
	wait "$OPID" 2>/dev/null
	rm -f "$FAB_TMP/pids/$OPID"
	osm_loaded() {
		grep -q 'Loading QoS policy file' "$T/osm/log" &&
			! grep -q ' ERR ' "$T/osm/log"
	}
	fab_check "OpenSM: loaded the policy file, no error" osm_loaded
	fab_sim_stop
else
	fab_log "opensm not installed: the comparison with OpenSM is skipped"
fi
fab_summary
