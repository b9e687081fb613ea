#!/usr/bin/env bash
# tests/bench/routing_bench.sh - route quality of every
# ibsm routing engine beside OpenSM's on the same fabrics, judged by the
# same checker from infiniband-diags output (tests/fabric/route_check.py):
#
#   load    all-to-all max link load / ideal (LFTs from ibroute)
#   cycles  channel-dependency cycles per VL, with the SLs saquery's
#           PathRecords give (first CA port of every switch to every CA
#           port) and the VLs smpquery sl2vl's tables map them to
#           (tori, meshes and random graphs only: one saquery per
#           source switch and destination)
#
# By hand, not from tests/run (a benchmark: no assertion).  Each SM runs
# as a daemon on ibsim (OpenSM: `opensm -R ENGINE`, its defaults otherwise,
# QoS off); an engine an SM does not have or that fails shows as "-", a
# fallback as the engine that produced the routes.  CPU is scarce here
# (2 cores shared by several sessions): the fabrics are small; pick others
# with NETS="name=FILE ...", engines with IBSM_ENGINES / OSM_ENGINES.
#
#   IBSM=build/release/sm/ibsm tests/bench/routing_bench.sh [OUT.md]
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

# An ASan build under the umad2sim preload needs these (as tests/run sets).
export ASAN_OPTIONS=${ASAN_OPTIONS:-"verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:suppressions=$FAB_TOP/tests/asan.supp"}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-"print_stacktrace=1:halt_on_error=1"}
OUT=${1:-/dev/stdout}
CHECK=(python3 "$FAB_LIB/route_check.py")
GEN=$FAB_TOPO/gen-topo
IBSM_ENGINES=${IBSM_ENGINES:-"minhop ftree updn dfsssp auto"}
OSM_ENGINES=${OSM_ENGINES:-"minhop ftree updn dfsssp nue"}
N=$FAB_TMP/nets
mkdir -p "$N"

# The fabrics of tests/fabric/test_routing.sh.
if [ -z "${NETS:-}" ]; then
	"$GEN" fat2 --leaves 8 --spines 16 --hosts-per-leaf 16 -o "$N/fat2-128.net"
	"$GEN" fat3 --pods 8 --leaves-per-pod 2 --hosts-per-leaf 8 \
		--spines-per-pod 8 --cores 16 -o "$N/fat3-128.net"
	for t in fat2-128 fat3-128; do
		"${CHECK[@]}" degrade "$N/$t.net" --fraction 0.05 --seed 3 \
			>"$N/$t-deg.net" 2>/dev/null
	done
	"$GEN" torus --dims 4,4 --hosts-per-switch 1 -o "$N/torus-4x4.net"
	"$GEN" mesh --dims 3,4 --hosts-per-switch 1 -o "$N/mesh-3x4.net"
	"$GEN" random --switches 10 --degree 3 --hosts-per-switch 1 --seed 5 \
		-o "$N/random-10.net"
	NETS=
	for t in fat2-128 fat2-128-deg fat3-128 fat3-128-deg torus-4x4 \
		mesh-3x4 random-10; do
		NETS+=" $t=$N/$t.net"
	done
fi

# sm_up KIND ENGINE DIR: ibsm or OpenSM as master at H0001; 0 when the
# subnet came up.  DIR/engine: the engine that routed (ibsm's log line;
# OpenSM's fallback to minhop from its log).
sm_up() {
	local kind=$1 engine=$2 dir=$3 i
	mkdir -p "$dir"
	if [ "$kind" = ibsm ]; then
		fab_ibsm_start H0001 "$dir" -R "$engine" >/dev/null 2>&1 || return 1
		grep -o 'routing [^;]*' "$dir/ibsm.log" | tail -n 1 |
			cut -d' ' -f2 >"$dir/engine"
		return 0
	fi
	fab_spawn H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
		opensm -d2 -R "$engine" -f "$dir/opensm.log" >/dev/null 2>&1
	OSM_PID=$FAB_SPAWN_PID
	for ((i = 0; i < 600; i++)); do
		grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null && break
		kill -0 "$OSM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null || return 1
	# OpenSM logs an engine that failed ("ucast_mgr_route: updn: cannot
	# build lid matrices") and routes with minhop instead.  -d2: the log
	# is flushed line by line.
	if grep -q "ucast_mgr_route: .*: cannot" "$dir/opensm.log"; then
		echo "$engine->minhop" >"$dir/engine"
	else
		echo "$engine" >"$dir/engine"
	fi
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

# measure NAME NET KIND ENGINE: one table cell into CELL ("1.034" for a
# fat tree, "3.000, 10 cycles on 1 VL(s)" otherwise, "-": no routes).
# Not in a subshell: lib.sh keeps its simulator count in this shell.
measure() {
	local name=$1 net=$2 kind=$3 engine=$4 d used load cyc slid dlid lid port
	d=$FAB_TMP/$name-$kind-$engine
	CELL=-
	fab_sim_start "$net" "$name-$kind" >/dev/null 2>&1 || return
	if ! sm_up "$kind" "$engine" "$d/sm"; then
		sm_down "$kind"
		fab_sim_stop
		return
	fi
	used=$(cat "$d/sm/engine" 2>/dev/null)
	sm_diags H0002 "$d" >/dev/null 2>&1
	load=$("${CHECK[@]}" load "$d/topo" "$d/lfts" |
		sed -n 's/.*ratio \([0-9.]*\)$/\1/p')
	"${CHECK[@]}" routes "$d/topo" "$d/lfts" >/dev/null 2>&1 ||
		load="$load (broken routes)"
	cyc=
	case $name in
	fat*) ;;
	*)
		: >"$d/sl"
		while read -r slid dlid; do
			fab_run H0002 saquery -p --src-to-dst "$slid:$dlid" \
				</dev/null >>"$d/sl" 2>/dev/null
		done < <("${CHECK[@]}" plan "$d/topo" sl)
		: >"$d/sl2vl"
		while read -r lid port; do
			fab_run H0002 smpquery sl2vl "$lid" "$port" \
				</dev/null >>"$d/sl2vl" 2>/dev/null
		done < <("${CHECK[@]}" plan "$d/topo" sl2vl)
		cyc=$(python3 "$FAB_LIB/route_check.py" --max 0 cdg "$d/topo" \
			"$d/lfts" --sl "$d/sl" --sl2vl "$d/sl2vl" |
			awk '/^cdg: VL/ { c = c sep $(NF - 1); sep = "+" }
			     /^cdg: [0-9]+ routes/ { v = $4 }
			     END { printf "%s cycles on %s VL(s)", c, v }')
		;;
	esac
	sm_down "$kind"
	fab_sim_stop
	[ "$used" = "$engine" ] || load="$load [$used]"
	CELL="${load:-?}${cyc:+, $cyc}"
}

{
	echo "| fabric | SM | engine | max link load / ideal, cycles per VL |"
	echo "|---|---|---|---|"
	for spec in $NETS; do
		name=${spec%%=*}
		net=${spec#*=}
		for e in $IBSM_ENGINES; do
			measure "$name" "$net" ibsm "$e"
			echo "| $name | ibsm | $e | $CELL |"
		done
		for e in $OSM_ENGINES; do
			measure "$name" "$net" opensm "$e"
			echo "| $name | OpenSM | $e | $CELL |"
		done
	done
} >"$OUT"
