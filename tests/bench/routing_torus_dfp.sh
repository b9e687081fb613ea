#!/usr/bin/env bash
# tests/bench/routing_torus_dfp.sh - the torus, Dragonfly+ and LMC
# multipath figures of ibsm(8) ROUTING, beside OpenSM's best engine for
# each fabric in the same run, judged from infiniband-diags output by
# tests/fabric/route_check.py:
#
#   load    all-to-all max link load / ideal (LFTs from ibroute)
#   vls     VLs the SL-to-VL tables map SLs 0-14 to on switch-to-switch
#           ports (smpquery sl2vl of every 8th such port; every one with
#           CYCLES=1): all SLs, used or not (OpenSM's dfsssp maps SL i
#           to VL i whatever it uses)
#   cycles  channel-dependency cycles per VL with the SLs of saquery's
#           PathRecords: one query per source switch and destination,
#           so only with CYCLES=1 (the 8x8x4 torus needs 131,000); ibsm's
#           own verdict (its log's "routing ..." line) is shown otherwise
#   lmc     with LMC 2 on a 3-level fat tree: LID pairs between the same
#           two ports whose paths share an inter-switch link (the load
#           column then counts base LIDs only, as route_check.py load
#           does: traffic that uses no other LID)
#
# Fabrics: an 8x8x4 torus with 2 hosts per switch (512 hosts), the same
# without one link, then also without one switch; a 9-group Dragonfly+
# (4 leaves x 4 hosts, 4 spines per group, 2 global links per group pair,
# 144 hosts), the same without 10% of its global links; a 3-level fat
# tree of 128 hosts with LMC 2.  OpenSM: torus-2QoS (with a torus_config
# naming the grid and its seed links) and dfsssp on the tori; dfsssp on
# Dragonfly+; ftree, updn and minhop with LMC 2.  By hand, not from
# tests/run (a benchmark: no assertion):
#
#   IBSM=build/release/sm/ibsm tests/bench/routing_torus_dfp.sh [OUT.md]
#
# OUT.md gets the table, OUT.md.reports ibsm's own route reports
# (--route-only) of the same fabrics.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

export ASAN_OPTIONS=${ASAN_OPTIONS:-"verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:suppressions=$FAB_TOP/tests/asan.supp"}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-"print_stacktrace=1:halt_on_error=1"}
OUT=${1:-routing_torus_dfp.md}
: >"$OUT.reports"
CHECK=(python3 "$FAB_LIB/route_check.py")
CUT=(python3 "$FAB_TOP/tests/bench/cut_net.py")
GEN=$FAB_TOPO/gen-topo
N=$FAB_TMP/nets
mkdir -p "$N"
export FAB_UP_TIMEOUT=${FAB_UP_TIMEOUT:-300}

"$GEN" torus --dims 8,8,4 --hosts-per-switch 2 -o "$N/torus.net"
"${CUT[@]}" "$N/torus.net" --link torus-x04-y03-z02 torus-x05-y03-z02 \
	>"$N/torus-link.net"
# (a switch after the seed's GUIDs: ibsim numbers GUIDs in file order)
"${CUT[@]}" "$N/torus-link.net" --switch torus-x06-y06-z04 \
	>"$N/torus-link-switch.net"
"$GEN" dfplus --groups 9 --leaves 4 --spines 4 --hosts-per-leaf 4 \
	--links-per-pair 2 -o "$N/dfp.net"
"${CUT[@]}" "$N/dfp.net" --globals 0.1 --seed 2 >"$N/dfp-10.net" 2>/dev/null
"$GEN" fat3 --pods 8 --leaves-per-pod 2 --hosts-per-leaf 8 \
	--spines-per-pod 8 --cores 16 -o "$N/fat3.net"
# OpenSM's torus-2QoS needs the grid and a seed switch with its +x, +y
# and +z links, and -z too as z has 4 switches (ERR 4E29; gen-topo
# numbers switch GUIDs from 0x200000 in x, y, z order; the seed's corner
# is left whole).
cat >"$N/torus.conf" <<'EOF'
torus 8 8 4
xp_link 0x0000000000200000 0x0000000000200001
yp_link 0x0000000000200000 0x0000000000200008
zp_link 0x0000000000200000 0x0000000000200040
zm_link 0x0000000000200000 0x00000000002000c0
EOF

# ibsm_report NAME: ibsm's own report (--route-only, its default engine)
# on fabric NAME, into $OUT.reports, for the figures beside the diags'
ibsm_report() {
	{
		echo "== $1"
		"$IBSM" --route-only "$N/$1.net" $([ "$1" = fat3 ] && echo --lmc 2)
	} >>"$OUT.reports" 2>&1
}

# sm_up KIND ENGINE DIR [LMC]: ibsm (ENGINE "-": its default, auto) or
# OpenSM as master at H0001; 0 when the subnet came up.
sm_up() {
	local kind=$1 engine=$2 dir=$3 lmc=${4:-0} i args=()
	mkdir -p "$dir"
	if [ "$kind" = ibsm ]; then
		[ "$engine" = - ] || args=(-R "$engine")
		fab_ibsm_start H0001 "$dir" "${args[@]}" --lmc "$lmc" \
			>/dev/null 2>&1
		return
	fi
	# torus-2QoS refuses to route without QoS (ERR 4E44)
	[ "$engine" = torus-2QoS ] && args=(-Q --torus_config "$N/torus.conf")
	fab_spawn H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
		opensm -d2 -R "$engine" -l "$lmc" "${args[@]}" \
		-f "$dir/opensm.log" >/dev/null 2>&1
	OSM_PID=$FAB_SPAWN_PID
	for ((i = 0; i < 3000; i++)); do
		grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null && return 0
		kill -0 "$OSM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

sm_down() {
	if [ "$1" = ibsm ]; then
		fab_ibsm_stop >/dev/null 2>&1
	else
		kill -TERM "$OSM_PID" 2>/dev/null
		wait "$OSM_PID" 2>/dev/null
		rm -f "$FAB_TMP/pids/$OSM_PID"
	fi
}

# engine_used KIND DIR ENGINE: what routed (ibsm's log; OpenSM's fallback)
engine_used() {
	if [ "$1" = ibsm ]; then
		grep -o 'routing [^;]*' "$2/ibsm.log" | tail -n 1 | cut -c1-200
	elif grep -q "ucast_mgr_route: .*: cannot\|torus.*[Ff]ail" \
		"$2/opensm.log"; then
		echo "$3 (failed: OpenSM fell back)"
	else
		echo "$3"
	fi
}

# vls_used DIR: VLs the switch-to-switch ports' SL-to-VL tables use
vls_used() {
	local d=$1 lid port
	: >"$d/sl2vl"
	while read -r lid port; do
		fab_run H0002 smpquery sl2vl "$lid" "$port" </dev/null \
			>>"$d/sl2vl" 2>/dev/null
	done < <("${CHECK[@]}" plan "$d/topo" sl2vl | if [ "${CYCLES:-0}" = 1 ]; then
		cat; else awk 'NR % 8 == 1'; fi)
	"${CHECK[@]}" vls "$d/topo" "$d/sl2vl" | sed -n 's/^vls: //p'
}

cycles() {
	local d=$1 slid dlid
	: >"$d/sl"
	while read -r slid dlid; do
		fab_run H0002 saquery -p --src-to-dst "$slid:$dlid" \
			</dev/null >>"$d/sl" 2>/dev/null
	done < <("${CHECK[@]}" plan "$d/topo" sl)
	"${CHECK[@]}" --max 0 cdg "$d/topo" "$d/lfts" --sl "$d/sl" \
		--sl2vl "$d/sl2vl" | awk '/^cdg: VL/ { c = c sep $(NF - 1); sep = "+" }
		END { printf "%s", c }'
}

# measure NAME NET KIND ENGINE [LMC]: one table row into ROW
measure() {
	local name=$1 net=$2 kind=$3 engine=$4 lmc=${5:-0} d load vls cyc used
	d=$FAB_TMP/$name-$kind-$engine
	ROW="| $name | $kind | $engine | - | | | |"
	fab_sim_start "$net" "$name-$kind" >/dev/null 2>&1 || return
	if ! sm_up "$kind" "$engine" "$d/sm" "$lmc"; then
		sm_down "$kind"
		fab_sim_stop
		return
	fi
	used=$(engine_used "$kind" "$d/sm" "$engine")
	sm_diags H0002 "$d" "$lmc" >/dev/null 2>&1
	load=$("${CHECK[@]}" load "$d/topo" "$d/lfts" --lmc "$lmc" |
		sed -n 's/.*ratio \([0-9.]*\)$/\1/p')
	"${CHECK[@]}" routes "$d/topo" "$d/lfts" --lmc "$lmc" >/dev/null 2>&1 ||
		load="$load (broken routes)"
	if [ "$lmc" -gt 0 ]; then
		vls=$("${CHECK[@]}" lmc-share "$d/topo" "$d/lfts" --lmc "$lmc" |
			sed -n 's/.*(\(.*\))$/\1 of LMC pairs share a link/p')
		cyc=
	else
		vls=$(vls_used "$d")
		cyc=not-sampled
		[ "${CYCLES:-0}" = 1 ] && cyc=$(cycles "$d")
	fi
	sm_down "$kind"
	fab_sim_stop
	ROW="| $name | $kind | $engine | ${load:-?} | $vls | $cyc | $used |"
}

# The rows: FABRIC:SM:ENGINE[:LMC] (ENGINE "-": ibsm's default).  OpenSM's
# dfsssp on the tori is left out by default (each row of the 8x8x4 torus
# costs minutes of ibroute on ibsim); ROWS="..." picks others
# ("torus:opensm:dfsssp").
ROWS=${ROWS:-"dfp:ibsm:- dfp:opensm:dfsssp dfp-10:ibsm:- dfp-10:opensm:dfsssp
	fat3:ibsm:-:2 fat3:opensm:ftree:2 fat3:opensm:updn:2
	fat3:opensm:minhop:2
	torus:ibsm:- torus:opensm:torus-2QoS
	torus-link:ibsm:- torus-link:opensm:torus-2QoS
	torus-link-switch:ibsm:- torus-link-switch:opensm:torus-2QoS"}

for t in torus torus-link torus-link-switch dfp dfp-10 fat3; do
	ibsm_report "$t"
done

{
	echo "| fabric | SM | engine | max link load / ideal | VLs in the SL-to-VL tables (LMC: shared pairs) | cycles per VL (diags) | what routed |"
	echo "|---|---|---|---|---|---|---|"
	for row in $ROWS; do
		IFS=: read -r t kind engine lmc <<<"$row"
		measure "$t" "$N/$t.net" "$kind" "$engine" "${lmc:-0}"
		echo "$ROW"
	done
} >"$OUT"
