#!/usr/bin/env bash
# tests/fabric/test_portinfo_keys.sh - the opensm.conf keys that set
# PortInfo fields, with OpenSM 3.3.23 as referee: the same opensm.conf
# (every such key away from its default) to `opensm -o` and to `ibsm -o`,
# each on a fresh ibsim of the same fabric (two switches, links 4X QDR),
# then `smpquery portinfo` of CA ports, switch ports facing CAs and
# switch ports facing a switch, field by field.  The fields must be equal
# for both SMs, and where ibsim stores the field, the value the file asks
# for:
#	head_of_queue_lifetime, leaf_head_of_queue_lifetime	HoqLife
#	max_op_vls						OperVLs
#	force_link_width					LinkWidthEnabled/Active
#	force_link_speed					LinkSpeedEnabled/Active
#	force_link_speed_ext					LinkSpeedExtEnabled/Active
# ibsim 0.10 does not store SubnetTimeout, VLStallCount, LocalPhysErr or
# OverrunErr from a Set (it answers its own constants): both SMs show the
# same there, and tests/unit/check_program.c checks what ibsm sends
# (port_desired_stall_and_thresholds).  packet_life_time is no PortInfo
# field but SwitchInfo:LifeTimeValue (smpquery switchinfo); OpenSM's
# PathRecord PacketLifeTime comes from subnet_timeout (saquery).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm

NET=$FAB_TMP/net
cat >"$NET" <<'EOF'
Switch 8 "sw-a"
[1]	"H0001"[1] w=3 s=7
[2]	"H0003"[1] w=3 s=7
[3]	"sw-b"[3] w=3 s=7

Switch 8 "sw-b"
[1]	"H0002"[1] w=3 s=7
[2]	"H0004"[1] w=3 s=7
[3]	"sw-a"[3] w=3 s=7

Hca 1 "H0001"
[1]	"sw-a"[1] w=3 s=7

Hca 1 "H0002"
[1]	"sw-b"[1] w=3 s=7

Hca 1 "H0003"
[1]	"sw-a"[2] w=3 s=7

Hca 1 "H0004"
[1]	"sw-b"[2] w=3 s=7
EOF

CONF=$FAB_TMP/opensm.conf
cat >"$CONF" <<'EOF'
# every PortInfo key away from its default
subnet_timeout 12
packet_life_time 0x0e
head_of_queue_lifetime 0x10
leaf_head_of_queue_lifetime 0x0c
vl_stall_count 0x05
leaf_vl_stall_count 0x03
max_op_vls 2
force_link_width 1
force_link_speed 1
force_link_speed_ext 1
local_phy_errors_threshold 0x03
overrun_errors_threshold 0x04
EOF

# Ports seen from H0002 by directed route: its own, sw-b's (1 faces H0002,
# 3 faces sw-a), sw-a's (1 faces H0001, 3 faces sw-b), H0001's and H0004's.
PORTS=("0 1" "0,1 1" "0,1 3" "0,1,3 1" "0,1,3 3" "0,1,3,1 1" "0,1,2 1")
FIELDS='LinkWidthEnabled|LinkWidthActive|LinkSpeedEnabled|LinkSpeedActive|LinkSpeedExtEnabled|LinkSpeedExtActive|HoqLife|VLStallCount|OperVLs|SubnetTimeout|LocalPhysErr|OverrunErr|LinkState'

# collect OUT: the fields of every port of PORTS, "path port field value",
# and the PathRecord PacketLifeTime from H0002 to H0001.
collect() {
	local out=$1 p path port lid2 lid1
	: >"$out"
	for p in "${PORTS[@]}"; do
		read -r path port <<<"$p"
		fab_run H0002 smpquery -D portinfo "$path" "$port" 2>>"$out.err" |
			sed -nE "s/^($FIELDS):\.*(.*)$/$path $port \1 \2/p" >>"$out"
	done
	fab_run H0002 ibnetdiscover -p >"$out.topo" 2>>"$out.err"
	lid1=$(awk '$1 == "CA" && /H0001/ { print $2; exit }' "$out.topo")
	lid2=$(awk '$1 == "CA" && /H0002/ { print $2; exit }' "$out.topo")
	fab_run H0002 saquery -p --src-to-dst "$lid2:$lid1" 2>>"$out.err" |
		sed -nE 's/^[[:space:]]*pkt_life\.*(.*)$/sa path PacketLifeTime \1/p' \
			>>"$out"
	for path in 0,1 0,1,3; do
		fab_run H0002 smpquery -D switchinfo "$path" 2>>"$out.err" |
			sed -nE "s/^(LifeTime):\.*(.*)$/$path 0 \1 \2/p" >>"$out"
	done
}

# field OUT PATH PORT NAME: one value collect() wrote.
field() {
	awk -v p="$2" -v n="$3" -v f="$4" \
		'$1 == p && $2 == n && $3 == f { $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' "$1"
}

# --- OpenSM
fab_sim_start "$NET" osm || {
	fab_fail sim-start
	fab_summary
	exit 1
}
if fab_opensm_start H0001 "$FAB_TMP/osm" -F "$CONF"; then
	fab_pass opensm-up
else
	fab_fail opensm-up "$(tail -n 5 "$FAB_TMP/osm/opensm.log")"
fi
collect "$FAB_TMP/osm.fields"
fab_opensm_stop

# --- ibsm, same file, fresh simulator
fab_sim_start "$NET" ibsm || {
	fab_fail sim-start
	fab_summary
	exit 1
}
if fab_ibsm_start H0001 "$FAB_TMP/ibsm" -F "$CONF"; then
	fab_pass ibsm-up
else
	fab_fail ibsm-up
fi
# none of these keys is left unimplemented
if grep -q "not implemented" "$FAB_TMP/ibsm/ibsm.out" "$FAB_TMP/ibsm/ibsm.log"; then
	fab_fail ibsm-implements-keys "$(grep "not implemented" "$FAB_TMP/ibsm/ibsm.out")"
else
	fab_pass ibsm-implements-keys
fi
collect "$FAB_TMP/ibsm.fields"
if fab_ibsm_stop; then
	fab_pass ibsm-stops-clean
else
	fab_fail ibsm-stops-clean "exit status $?"
fi

# --- the comparison, printed side by side
n_osm=$(wc -l <"$FAB_TMP/osm.fields")
n_ibsm=$(wc -l <"$FAB_TMP/ibsm.fields")
echo "    port            field                 OpenSM      ibsm"
paste -d'|' "$FAB_TMP/osm.fields" "$FAB_TMP/ibsm.fields" |
	awk -F'|' '{ split($1, a, " "); n = split($2, b, " ")
		v1 = $1; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", v1)
		v2 = $2; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", v2)
		printf "    %-8s %-2s   %-21s %-11s %s%s\n", a[1], a[2], a[3], v1, v2,
			(v1 == v2 ? "" : "   <- differs") }'
if [ "$n_osm" -ge $((${#PORTS[@]} * 13 + 3)) ] &&
	cmp -s "$FAB_TMP/osm.fields" "$FAB_TMP/ibsm.fields"; then
	fab_pass "portinfo-same-as-opensm ($n_ibsm fields)"
else
	fab_fail portinfo-same-as-opensm "$n_osm OpenSM fields, $n_ibsm ibsm fields: $(diff "$FAB_TMP/osm.fields" "$FAB_TMP/ibsm.fields" | head -n 10)"
fi

# --- the values the file asks for, where ibsim keeps them
expect() {
	local name=$1 path=$2 port=$3 f=$4 want=$5 got
	got=$(field "$FAB_TMP/ibsm.fields" "$path" "$port" "$f")
	if [ "$got" = "$want" ]; then
		fab_pass "$name"
	else
		fab_fail "$name" "$path port $port $f: '$got', expected '$want'"
	fi
}
expect hoq-switch-to-switch 0,1 3 HoqLife 16
expect hoq-leaf 0,1 1 HoqLife 12
expect hoq-leaf-far 0,1,3 1 HoqLife 12
expect op-vls-ca 0,1,3,1 1 OperVLs VL0-1
expect op-vls-switch 0,1,3 3 OperVLs VL0-1
expect width-enabled-ca 0,1,2 1 LinkWidthEnabled 1X
expect width-active-isl 0,1 3 LinkWidthActive 1X
expect speed-enabled-switch 0,1,3 1 LinkSpeedEnabled "2.5 Gbps"
expect speed-active-isl 0,1 3 LinkSpeedActive "2.5 Gbps"
expect speed-ext-enabled-ca 0 1 LinkSpeedExtEnabled "14.0625 Gbps"
expect switch-lifetime 0,1 0 LifeTime 14
expect switch-lifetime-far 0,1,3 0 LifeTime 14
# OpenSM's PathRecord PacketLifeTime is subnet_timeout (selector 2, 12)
expect path-packet-life sa path PacketLifeTime 0x8C

fab_summary
