#!/usr/bin/env bash
# tests/fabric/test_routing.sh - the routes ibsm programs with its DEFAULT
# settings, judged by infiniband-diags alone:
#
#   fat trees (route_check.py load): all-to-all max link load <= 1.10 x
#     ideal on a whole 2-level tree (8 leaves x 16 hosts, 16 spines) and a
#     whole 3-level tree (8 pods x 2 leaves x 8 hosts, 8 spines per pod,
#     16 cores: full bisection, few hosts per pod so that the lower
#     links' share of intra-pod traffic keeps the best ratio near 1.03),
#     <= 1.30 x with about 5% of their switch-to-switch links removed, at
#     most one per switch (route_check.py degrade; a leaf that loses one
#     of its 8 or 16 up-links can still be balanced within 1.30);
#   a torus, a mesh and a random graph (route_check.py cdg): every CA
#     port reaches every LID, and every VL's channel dependency graph is
#     acyclic, with each route's SL as saquery's PathRecord gives it (from
#     the first CA port of every switch to every CA port) and its VL at
#     each hop as the switches' SLtoVLMappingTables (smpquery sl2vl) map
#     that SL; on the torus the SA's SLtoVLMappingTableRecords (saquery
#     SL2VL) give the tables smpquery reads;
#   and that the checker catches what it should: -R minhop on the torus
#     has cycles, -R minhop on the 3-level tree a ratio above 1.30.
#
# LFTs from ibroute (lib_sm.sh sm_diags), never from ibsm's files.  The
# fabrics are small (at most 128 hosts, one host per switch where SLs are
# sampled: one saquery per source switch and destination) so the test
# runs in a few minutes under ASan.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CHECK=(python3 "$FAB_LIB/route_check.py")
GEN=$FAB_TOPO/gen-topo
NETS=$FAB_TMP/nets
mkdir -p "$NETS"

"$GEN" fat3 --pods 8 --leaves-per-pod 2 --hosts-per-leaf 8 \
	--spines-per-pod 8 --cores 16 -o "$NETS/fat3-128.net" &&
	"$GEN" fat2 --leaves 8 --spines 16 --hosts-per-leaf 16 \
		-o "$NETS/fat2-128.net" &&
	"$GEN" torus --dims 4,4 --hosts-per-switch 1 -o "$NETS/torus-4x4.net" &&
	"$GEN" mesh --dims 3,4 --hosts-per-switch 1 -o "$NETS/mesh-3x4.net" &&
	"$GEN" random --switches 10 --degree 3 --hosts-per-switch 1 --seed 5 \
		-o "$NETS/random-10.net" &&
	true || {
	fab_fail routing-topologies "gen-topo failed"
	fab_summary
	exit 1
}
for t in fat2-128 fat3-128; do
	"${CHECK[@]}" degrade "$NETS/$t.net" --fraction 0.05 --seed 3 \
		>"$NETS/$t-deg.net" 2>"$NETS/$t-deg.log" ||
		fab_fail "routing-degrade-$t" "$(cat "$NETS/$t-deg.log")"
done

# up NAME NET [IBSM OPTIONS...]: ibsim on NET, ibsm (defaults plus the
# options) as master at H0001, the diags into $FAB_TMP/NAME.  ibsm keeps
# running (SA queries); down stops it and checks its exit.
up() {
	local name=$1 net=$2
	shift 2
	D=$FAB_TMP/$name
	if ! fab_sim_start "$net" "$name"; then
		fab_fail "$name-up" "ibsim did not start"
		return 1
	fi
	if ! fab_ibsm_start H0001 "$D/sm" "$@"; then
		fab_fail "$name-up" "ibsm did not bring the subnet up"
		return 1
	fi
	if ! sm_diags H0002 "$D"; then
		fab_fail "$name-diags" "$(head -n 3 "$D/errors")"
		return 1
	fi
	fab_pass "$name-up ($(grep -o 'routing [^;]*' "$D/sm/ibsm.log" |
		tail -n 1))"
}

down() {
	local rc
	fab_ibsm_stop
	rc=$?
	[ "$rc" -eq 0 ] || fab_fail "$1-ibsm-exit" "exit $rc"
	fab_sim_stop
}

# sl_tables: PathRecord SLs and SLtoVLMappingTables as the diags see them
# (one saquery per source switch and destination, one smpquery per
# table; QJOBS at a time).
QJOBS=${QJOBS:-4}
sl_tables() {
	local n
	n=$(fab_run_lines "$QJOBS" H0002 "$D/sl.d" saquery -p --src-to-dst \
		< <("${CHECK[@]}" plan "$D/topo" sl | awk '{ print $1 ":" $2 }'))
	fab_cat_lines "$D/sl.d" "$n" >"$D/sl"
	fab_cat_lines "$D/sl.d" "$n" .err >"$D/sl.err"
	n=$(fab_run_lines "$QJOBS" H0002 "$D/sl2vl.d" smpquery sl2vl \
		< <("${CHECK[@]}" plan "$D/topo" sl2vl))
	fab_cat_lines "$D/sl2vl.d" "$n" >"$D/sl2vl"
	fab_cat_lines "$D/sl2vl.d" "$n" .err >"$D/sl2vl.err"
}

# sa_sl2vl_same N: the SA's SLtoVLMappingTableRecords (saquery SL2VL
# LID/0/PORT) give the table smpquery reads at input port 0 (a CA: its
# only table) for the first N tables of the plan.
sa_sl2vl_same() {
	local n=0 bad=0 lid port sa smp
	while read -r lid port && ((n++ < $1)); do
		sa=$(fab_run H0002 saquery SL2VL "$lid/0/$port" </dev/null 2>&1 |
			sed -n 's/^[[:space:]]*VL: //p' | head -n 1 | tr -d ' ')
		smp=$(fab_run H0002 smpquery sl2vl "$lid" "$port" </dev/null 2>&1 |
			sed -n 's/^ports: in  *0, out  *[0-9]*: *|//p' | head -n 1 | tr -d ' ')
		if [ -z "$sa" ] || [ "$sa" != "$smp" ]; then
			echo "    LID $lid port $port: SA '$sa', SMP '$smp'"
			bad=1
		fi
	done < <("${CHECK[@]}" plan "$D/topo" sl2vl)
	return $bad
}

# Fat trees: reachability and balance.
for spec in fat2-128:1.10 fat2-128-deg:1.30 fat3-128:1.10 fat3-128-deg:1.30; do
	name=${spec%%:*}
	limit=${spec#*:}
	if up "$name" "$NETS/$name.net"; then
		fab_check "$name-routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
		fab_check "$name-load<=$limit" "${CHECK[@]}" load "$D/topo" \
			"$D/lfts" --max-ratio "$limit"
		"${CHECK[@]}" load "$D/topo" "$D/lfts" 2>&1 | sed 's/^/    /'
	fi
	down "$name"
done

# Tori, meshes, random graphs: reachability, no cycle in any VL.
for name in torus-4x4 mesh-3x4 random-10; do
	if up "$name" "$NETS/$name.net"; then
		fab_check "$name-routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
		sl_tables
		fab_check "$name-cdg-acyclic" "${CHECK[@]}" cdg "$D/topo" "$D/lfts" \
			--sl "$D/sl" --sl2vl "$D/sl2vl"
		"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" \
			--sl2vl "$D/sl2vl" 2>&1 | sed 's/^/    /'
		[ "$name" = torus-4x4 ] &&
			fab_check "$name-sa-sl2vl-as-programmed" sa_sl2vl_same 6
	fi
	down "$name"
done

# The checker fails where it should: minhop's routes.
if up minhop-torus "$NETS/torus-4x4.net" -R minhop; then
	sl_tables
	fab_check minhop-torus-cdg-has-cycles "${CHECK[@]}" cdg "$D/topo" \
		"$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl" --want-cycles
	"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl" \
		2>&1 | grep '^cdg:' | sed 's/^/    /'
fi
down minhop-torus
if up minhop-fat3 "$NETS/fat3-128.net" -R minhop; then
	fab_check minhop-fat3-load-above-1.30 "${CHECK[@]}" load "$D/topo" \
		"$D/lfts" --min-ratio 1.30
	"${CHECK[@]}" load "$D/topo" "$D/lfts" 2>&1 | sed 's/^/    /'
fi
down minhop-fat3

fab_summary
