#!/usr/bin/env bash
# tests/fabric/test_route_torus_dfp.sh - the torus and Dragonfly+ engines
# on ibsim, judged by infiniband-diags alone (route_check.py):
#
#   a 3x4 torus (1 host per switch) without one switch-to-switch link,
#     default engine (auto): ibsm logs that auto recognised the torus and
#     its missing link and routed it with "torus"; every CA port reaches
#     every LID (ibroute), and every VL's channel dependency graph is
#     acyclic with the SLs of saquery's PathRecords and the VLs of
#     smpquery sl2vl's per-port tables, on at most 4 VLs, some SL mapped
#     to VL 1 (the datelines: routes that cross one use VL 1); `ibsmctl
#     routes report` names the engine, its VLs and no cycle per VL;
#   a 4-group Dragonfly+ (1 leaf, 2 spines per group, one global link
#     per group pair) without the link between groups 1 and 2, default
#     engine: auto picks dfplus, routes reach every LID, acyclic on at
#     most 2 VLs, and some PathRecord has SL 1 or 2 (the detour through a
#     third group) while the others have SL 0;
#   torus_config: the whole 3x4 torus seeded at torus-x01-y01 (GUID
#     0x200000), +x towards x02 (xp_link), then towards x03 (xm_link to
#     x02): the log says the grid was laid out by torus_config, and the
#     PathRecord from H0003 (at x03-y01) to H0001 (at x01-y01) has the x
#     dateline's SL bit in the first (seed coordinates 2 -> 0 going +x)
#     and not in the second (1 -> 0 going -x); a grid the wiring does not
#     match (4x4) leaves the torus to the next engine, with the reason.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CHECK=(python3 "$FAB_LIB/route_check.py")
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
SOCK=$FAB_TMP/sock/ibsm.sock
mkdir -p "$FAB_TMP/sock"
CUT=$FAB_TOP/tests/bench/cut_net.py
GEN=$FAB_TOPO/gen-topo
NETS=$FAB_TMP/nets
mkdir -p "$NETS"

"$GEN" torus --dims 3,4 --hosts-per-switch 1 -o "$NETS/torus.net" &&
	python3 "$CUT" "$NETS/torus.net" --link torus-x02-y02 torus-x03-y02 \
		>"$NETS/torus-cut.net" &&
	"$GEN" dfplus --groups 4 --leaves 1 --spines 2 --hosts-per-leaf 1 \
		-o "$NETS/dfp.net" &&
	python3 "$CUT" "$NETS/dfp.net" --link dfp-g01-spine-01 dfp-g02-spine-01 \
		>"$NETS/dfp-cut.net" || {
	fab_fail route-torus-dfp-topologies "gen-topo or cut_net.py failed"
	fab_summary
	exit 1
}

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

QJOBS=${QJOBS:-4}
sl_tables() {
	local n
	n=$(fab_run_lines "$QJOBS" H0002 "$D/sl.d" saquery -p --src-to-dst \
		< <("${CHECK[@]}" plan "$D/topo" sl | awk '{ print $1 ":" $2 }'))
	fab_cat_lines "$D/sl.d" "$n" >"$D/sl"
	n=$(fab_run_lines "$QJOBS" H0002 "$D/sl2vl.d" smpquery sl2vl \
		< <("${CHECK[@]}" plan "$D/topo" sl2vl))
	fab_cat_lines "$D/sl2vl.d" "$n" >"$D/sl2vl"
}

# judge NAME MAXVLS: routes, no cycle, at most MAXVLS VLs in use
judge() {
	local vls
	fab_check "$1-routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
	sl_tables
	fab_check "$1-cdg-acyclic" "${CHECK[@]}" cdg "$D/topo" "$D/lfts" \
		--sl "$D/sl" --sl2vl "$D/sl2vl"
	"${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl" \
		>"$D/cdg.txt" 2>&1
	sed 's/^/    /' "$D/cdg.txt"
	vls=$(grep -c '^cdg: VL' "$D/cdg.txt")
	fab_check "$1-vls<=$2 ($vls)" test "$vls" -ge 1 -a "$vls" -le "$2"
}

if up torus-cut "$NETS/torus-cut.net" --control-socket "$SOCK"; then
	fab_check torus-auto-picked-torus grep -q \
		'auto: 2D torus, 0 switch(es) and 1 link(s) missing -> torus' \
		"$D/sm/ibsm.log"
	judge torus-cut 4
	# a port's table maps some SL to VL 1 (dateline crossings)
	fab_check torus-sl2vl-datelines grep -Eq '^ports: .*\|.*\b1\b' \
		"$D/sl2vl"
	# the daemon's route report: the engine, its VLs, no cycle per VL
	"$CTL" --socket "$SOCK" routes report >"$D/report.txt" 2>&1
	fab_check torus-ctl-report-ok grep -qx 'result: ok' "$D/report.txt"
	fab_check torus-ctl-report-engine grep -q '^engine: torus: ' \
		"$D/report.txt"
	fab_check torus-ctl-report-vls grep -Eq '^vls: [234] ' "$D/report.txt"
	fab_check torus-ctl-report-cycles grep -Eq \
		'^cdg: [0-9]+ channels, cycles per VL:( 0)+$' "$D/report.txt"
fi
down torus-cut

if up dfp-cut "$NETS/dfp-cut.net"; then
	fab_check dfp-auto-picked-dfplus grep -q 'Dragonfly+.*-> dfplus' \
		"$D/sm/ibsm.log"
	judge dfp-cut 2
	# groups 1 and 2 lost their only link: their paths detour through
	# a third group on SL 1 or 2 (every other path is minimal, SL 0)
	fab_check dfp-detour-sl grep -Eq \
		'^[[:space:]]*sl\.{3,}(0x)?0*[12]$' "$D/sl"
	fab_check dfp-minimal-sl0 grep -Eq \
		'^[[:space:]]*sl\.{3,}(0x)?0*0?$' "$D/sl"
fi
down dfp-cut

# seed_sl NAME SEED-LINE: the daemon on the whole torus with a
# torus_config of that seed; SL of H0003 -> H0001's PathRecord into SL
seed_sl() {
	local l1 l3
	SL=
	printf 'torus 3 4 1\n%s\n' "$2" >"$NETS/$1.conf"
	up "$1" "$NETS/torus.net" --torus_config "$NETS/$1.conf" || return 1
	fab_check "$1-laid-out" grep -q 'axes and datelines from torus_config' \
		"$D/sm/ibsm.log"
	l1=$(awk '$1 == "CA" && /H0001/ { print $2; exit }' "$D/topo")
	l3=$(awk '$1 == "CA" && /H0003/ { print $2; exit }' "$D/topo")
	SL=$(fab_run H0002 saquery -p --src-to-dst "$l3:$l1" </dev/null \
		2>/dev/null | sed -n 's/^[[:space:]]*sl\.\{3,\}0x\([0-9a-fA-F]\{1,\}\)$/\1/p')
	# no PathRecord: fail
	[ -n "$SL" ] && SL=$((16#$SL))
	fab_check "$1-pathrecord ($l3 -> $l1)" test -n "$SL"
}

seed_sl torus-seed-xp 'xp_link 0x0000000000200000 0x0000000000200001' &&
	fab_check "torus-seed-xp-dateline (SL $SL)" test "$((SL & 1))" = 1 -a -n "$SL"
down torus-seed-xp
seed_sl torus-seed-xm 'xm_link 0x0000000000200000 0x0000000000200001' &&
	fab_check "torus-seed-xm-no-dateline (SL $SL)" test -n "$SL" -a "$((SL & 1))" = 0
down torus-seed-xm
printf 'torus 4 4 1\n' >"$NETS/bad-grid.conf"
if up torus-bad-grid "$NETS/torus.net" \
	--torus_config "$NETS/bad-grid.conf"; then
	fab_check torus-bad-grid-refused grep -q \
		'torus: torus_config: x is a ring of 4, the fabric has a ring of 3' \
		"$D/sm/ibsm.log"
fi
down torus-bad-grid

fab_summary
