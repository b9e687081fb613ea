#!/usr/bin/env bash
# tests/fabric/test_qos_layers.sh - `qos TRUE` with a deadlock-free
# layered engine (dfsssp) on a 4x4 torus: the QoS classes and the layers
# share the VLs (ibsm(8) VIRTUAL LAYERS), judged by infiniband-diags:
#
#   a QoS policy with two levels (DEFAULT SL 0; Storage SL 4 for the
#   paths to the hosts H0009-H0016); from the forwarding tables
#   (ibroute), each route's SL (saquery PathRecord, from one host of
#   every switch to every host) and its VL at every hop (smpquery sl2vl
#   of every switch port), route_check.py cdg builds the per-VL channel
#   dependency graphs: no cycle, both classes have routes, and no VL
#   carries both classes; the VL arbitration tables (smpquery vlarb) name
#   only the VLs in use; ibsm logs the split and `ibsmctl routes report`
#   shows it;
#   the checker fails where it should: with every SL mapped to VL 0 it
#   finds cycles and the classes sharing a VL;
#   on 2 VLs (max_op_vls 2) both do not fit: the log says the layers were
#   capped at one per class and the routes are still cycle-free with the
#   classes apart;
#   ibsm --route-only with the same configuration reports the split and
#   no cycle per VL.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CHECK=(python3 "$FAB_LIB/route_check.py")
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
NET=$FAB_TOPO/torus-4x4.net
T=$FAB_TMP
QJOBS=${QJOBS:-8}
mkdir -p "$T/sock"

# policy OUT TOPO: the QoS policy file, Storage = the ports of H0009..16
policy() {
	local guids
	guids=$(awk '$1 == "CA" && $0 ~ /\047H00(09|1[0-6]) / { print $4 }' "$2" |
		sort -u | paste -sd, -)
	cat >"$1" <<EOF
port-groups
    port-group
        name: Storage
        port-guid: $guids
    end-port-group
end-port-groups
qos-levels
    qos-level
        name: DEFAULT
        sl: 0
    end-qos-level
    qos-level
        name: StorageLevel
        sl: 4
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        destination: Storage
        qos-level-name: StorageLevel
    end-qos-match-rule
end-qos-match-rules
EOF
	[ -n "$guids" ]
}

# tables D: PathRecord SLs and every switch port's SL-to-VL tables
tables() {

	local d=$1 n
	n=$(fab_run_lines "$QJOBS" H0002 "$d/sl.d" saquery -p --src-to-dst \
		< <("${CHECK[@]}" plan "$d/topo" sl | awk '{ print $1 ":" $2 }'))
	fab_cat_lines "$d/sl.d" "$n" >"$d/sl"
	n=$(fab_run_lines "$QJOBS" H0002 "$d/sl2vl.d" smpquery sl2vl \
		< <("${CHECK[@]}" plan "$d/topo" sl2vl-all))
	fab_cat_lines "$d/sl2vl.d" "$n" >"$d/sl2vl"
	# the QoS class of each destination LID
	awk '$1 == "CA" && $2 != 0 {
		print $2, ($0 ~ /\047H00(09|1[0-6]) / ? "storage" : "default") }' \
		"$d/topo" | sort -u >"$d/classes"
}

# vlarb_vls D: the VLs of non-zero weight in every switch port's VL
# arbitration tables, one per line
vlarb_vls() {

	local d=$1 n
	n=$(fab_run_lines "$QJOBS" H0002 "$d/vlarb.d" smpquery vlarb \
		< <("${CHECK[@]}" plan "$d/topo" sl2vl-all 2>/dev/null |
			head -n 24))
	fab_cat_lines "$d/vlarb.d" "$n" >"$d/vlarb"
	awk -F'|' 'function hex(s,  i, v) {
			gsub(/[ \t]|0x/, "", s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef",
						   tolower(substr(s, i, 1))) - 1
			return v + 0
		}
		/^VL *:/ { for (i = 2; i < NF; i++) vl[i] = hex($i) }
		/^WEIGHT *:/ { for (i = 2; i < NF; i++)
			if (hex($i) > 0) print vl[i] }' "$d/vlarb" | sort -nu
}

# up NAME CONF: ibsim, ibsm with CONF, the diags into $T/NAME
up() {
	local name=$1 conf=$2
	D=$T/$name
	mkdir -p "$D"
	fab_sim_start "$NET" "$name" || { fab_fail "$name-sim"; return 1; }
	fab_run H0002 ibnetdiscover -p >"$D/topo0" 2>&1
	policy "$T/policy.conf" "$D/topo0" || {
		fab_fail "$name-policy" "no CA GUIDs in ibnetdiscover -p"
		return 1
	}
	if ! fab_ibsm_start H0001 "$D/sm" -F "$conf" \
		--control-socket "$T/sock/$name.sock"; then
		fab_fail "$name-up" "ibsm did not bring the subnet up"
		return 1
	fi
	if ! sm_diags H0002 "$D"; then
		fab_fail "$name-diags" "$(head -n 3 "$D/errors")"
		return 1
	fi
	fab_pass "$name-up"
}

down() {
	local rc
	fab_ibsm_stop
	rc=$?
	[ "$rc" -eq 0 ] || fab_fail "$1-ibsm-exit" "exit $rc"
	fab_sim_stop
}

conf() {
	cat >"$1" <<EOF
qos TRUE
qos_policy_file $T/policy.conf
routing_engine dfsssp
${2:-}
EOF
}

# 1. 8 VLs: two classes of up to 4 VLs, the layers inside
conf "$T/8vl.conf"
if up qos8 "$T/8vl.conf"; then
	log=$D/sm/ibsm.log
	line=$(grep -o 'QoS and virtual layers: .*' "$log" | tail -n 1)
	fab_check "qos8: split logged ($line)" \
		grep -q 'QoS and virtual layers: 2 QoS classes (SL 0 on VL 0-[1-3], SL 4 on VL [2-6]-[3-7])' "$log"
	fab_check "qos8: nothing reduced" \
		bash -c "! grep -q 'do not both fit' '$log'"
	fab_check "qos8: programmed as classes x layers" \
		grep -q 'virtual layers: [2-4] in each of 2 QoS classes' "$log"
	fab_check "qos8: routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
	tables "$D"
	fab_check "qos8: per-VL dependency graphs acyclic, classes on their own VLs" \
		"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" \
		--sl2vl "$D/sl2vl" --dst-class "$D/classes"
	"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl" \
		--dst-class "$D/classes" 2>&1 | sed 's/^/    /'
	# the VLs in use: those the split names
	n=$(sed -n 's/.*virtual layers: \([0-9]*\) in each of 2 QoS.*/\1/p' \
		"$log" | tail -n 1)
	n=${n:-0}
	((n > 0)) || fab_fail "qos8: no layers in the log"
	vlarb_vls "$D" >"$D/vlarb.vls"
	seq 0 $((2 * n - 1)) >"$D/used.vls"
	fab_check "qos8: VL arbitration lists VL 0-$((2 * n - 1)) ($(paste -sd, "$D/vlarb.vls"))" \
		diff "$D/used.vls" "$D/vlarb.vls"
	"$CTL" --socket "$T/sock/qos8.sock" routes report >"$D/report" 2>&1
	fab_check "qos8: routes report shows the split and per-VL cycles" \
		grep -q '^qos: 2 QoS classes' "$D/report"
	fab_check "qos8: routes report: cycles per VL all 0" \
		grep -Eq '^cdg: [0-9]+ channels, cycles per VL:( 0)+$' "$D/report"
	grep -E '^(qos|cdg):' "$D/report" | sed 's/^/    /'
	# the checker catches a map that undoes the split
	sed -E '/^ports:/ s/\|[ 0-9]+/| 0/g; /^ports:/ s/\| 0$/|/' \
		"$D/sl2vl" >"$D/sl2vl.vl0"
	fab_check "qos8: checker finds cycles with every SL on VL 0" \
		"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" \
		--sl2vl "$D/sl2vl.vl0" --want-cycles --dst-class "$D/classes" \
		--want-shared
	"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" \
		--sl2vl "$D/sl2vl.vl0" --dst-class "$D/classes" 2>&1 |
		grep -E '^(cdg: [0-9]+ routes|class)' | sed 's/^/    every SL on VL 0: /'
fi
down qos8

# 2. 2 VLs: one VL per class, the layers capped at 1 (dfsssp routes the
# whole fabric up*\/down* on it); the QoS tables as configured keep the
# classes apart on every port: SL 0 on VL 0, SL 4 on VL 1
# (SL 4 on VL 1 in the QoS table: on 2 VLs the classes stay apart)
conf "$T/2vl.conf" "max_op_vls 2
qos_sl2vl 0,1,2,3,1,5,6,7,8,9,10,11,12,13,14,7"
if up qos2 "$T/2vl.conf"; then
	log=$D/sm/ibsm.log
	fab_check "qos2: the log says the layers were capped" \
		grep -q 'QoS and virtual layers do not both fit: layers capped at 1 per class' "$log"
	grep -o 'do not both fit: .*' "$log" | tail -n 1 | sed 's/^/    /'
	fab_check "qos2: routes verified (no ERR 1502)" \
		bash -c "! grep -q 'ERR 1502' '$log'"
	fab_check "qos2: routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
	# a third of the switch ports (every table is set the same way)
	n=$(fab_run_lines "$QJOBS" H0002 "$D/sl2vl.d" smpquery sl2vl \
		< <("${CHECK[@]}" plan "$D/topo" sl2vl-all | awk 'NR % 3 == 1'))
	fab_cat_lines "$D/sl2vl.d" "$n" >"$D/sl2vl"
	fab_check "qos2: switch ports map SL 0 to VL 0, SL 4 to VL 1" \
		awk '/^ports:/ { n++; split($0, v, "|"); if (v[2] + 0 != 0 ||
			v[6] + 0 != 1) bad++ } END { exit !(n > 100 && !bad) }' \
		"$D/sl2vl"
	a=$(awk '$1 == "CA" && /\047H0003 / { print $2 }' "$D/topo")
	b=$(awk '$1 == "CA" && /\047H0012 / { print $2 }' "$D/topo")
	c=$(awk '$1 == "CA" && /\047H0005 / { print $2 }' "$D/topo")
	sl_b=$(fab_run H0002 saquery -p --src-to-dst "$a:$b" 2>&1 |
		sed -n 's/^[[:space:]]*sl\.\.\.*//p')
	sl_c=$(fab_run H0002 saquery -p --src-to-dst "$a:$c" 2>&1 |
		sed -n 's/^[[:space:]]*sl\.\.\.*//p')
	fab_check "qos2: a path to a Storage host gets SL 4 ($sl_b)" \
		[ "$sl_b" = 0x4 ]
	fab_check "qos2: a path to another host gets SL 0 ($sl_c)" \
		[ "$sl_c" = 0x0 ]
fi
down qos2

# 3. --route-only (no fabric): the policy's classes and the per-VL check
# in the report
"$IBSM" -F "$T/8vl.conf" --route-only "$NET" >"$T/route-only" 2>&1
fab_check "route-only: the report shows 2 classes" \
	grep -q '^qos: 2 QoS classes (SL 0 on VL 0-[0-9]*, SL 4 on VL' "$T/route-only"
fab_check "route-only: cycles per VL all 0, result ok" \
	bash -c "grep -Eq '^cdg: [0-9]+ channels, cycles per VL:( 0)+\$' '$T/route-only' &&
		grep -q '^result: ok' '$T/route-only'"
grep -E '^(qos|cdg):' "$T/route-only" | sed 's/^/    /'

fab_summary
