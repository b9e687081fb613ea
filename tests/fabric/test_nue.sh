#!/usr/bin/env bash
# tests/fabric/test_nue.sh - the nue engine (routing/nue/) on a random
# graph, judged by infiniband-diags alone:
#
#   -R nue with nue_max_num_vls 0 (as many VLs as the fabric takes) and
#   with 1 VL: the daemon brings the subnet up; every CA port reaches every
#   LID through the LFTs ibroute reads (route_check.py routes); every VL's
#   channel dependency graph is acyclic with each route's SL as saquery's
#   PathRecord gives it and its VL as smpquery sl2vl's tables map it
#   (route_check.py cdg); with several VLs allowed the routes do use more
#   than one, with one VL all of them are on VL 0;
#   and the checker catches a cycle where there is one: -R minhop on the
#   same graph.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CHECK=(python3 "$FAB_LIB/route_check.py")
NET=$FAB_TMP/random-10.net
QJOBS=${QJOBS:-4}

# Ten switches of degree 4, one host each: minhop's routes on it have
# cycles (checked below), so the engine has something to avoid.
"$FAB_TOPO/gen-topo" random --switches 10 --degree 4 --hosts-per-switch 1 \
	--seed 7 -o "$NET" || {
	fab_fail nue-topology "gen-topo failed"
	fab_summary
	exit 1
}

# run NAME WANT [IBSM OPTIONS...]: ibsim, ibsm with the options, the
# diags; WANT: "multi" (more than one VL), "one" (VL 0 only) or "cycles".
run() {
	local name=$1 want=$2 n out vls
	shift 2
	D=$FAB_TMP/$name
	if ! fab_sim_start "$NET" "$name"; then
		fab_fail "$name-up" "ibsim did not start"
		return
	fi
	if fab_ibsm_start H0001 "$D/sm" "$@"; then
		fab_pass "$name-up ($(grep -o 'routing [^;]*' "$D/sm/ibsm.log" |
			tail -n 1 | cut -c1-100))"
	else
		fab_fail "$name-up" "ibsm did not bring the subnet up"
	fi
	if sm_diags H0002 "$D"; then
		fab_check "$name-routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
		n=$(fab_run_lines "$QJOBS" H0002 "$D/sl.d" saquery -p \
			--src-to-dst < <("${CHECK[@]}" plan "$D/topo" sl |
				awk '{ print $1 ":" $2 }'))
		fab_cat_lines "$D/sl.d" "$n" >"$D/sl"
		n=$(fab_run_lines "$QJOBS" H0002 "$D/sl2vl.d" smpquery sl2vl \
			< <("${CHECK[@]}" plan "$D/topo" sl2vl))
		fab_cat_lines "$D/sl2vl.d" "$n" >"$D/sl2vl"
		if [ "$want" = cycles ]; then
			fab_check "$name-cdg-has-cycles" "${CHECK[@]}" cdg \
				"$D/topo" "$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl" \
				--want-cycles
		else
			fab_check "$name-cdg-acyclic" "${CHECK[@]}" cdg "$D/topo" \
				"$D/lfts" --sl "$D/sl" --sl2vl "$D/sl2vl"
		fi
		out=$("${CHECK[@]}" cdg "$D/topo" "$D/lfts" --sl "$D/sl" \
			--sl2vl "$D/sl2vl" 2>&1)
		echo "$out" | grep '^cdg:' | sed 's/^/    /'
		vls=$(echo "$out" |
			sed -n 's/^cdg: [0-9]* routes, \([0-9]*\) VLs.*/\1/p')
		case $want in
		multi) fab_check "$name-uses-several-vls ($vls)" test "${vls:-0}" -gt 1 ;;
		one) fab_check "$name-one-vl ($vls)" test "${vls:-0}" -eq 1 ;;
		esac
	else
		fab_fail "$name-diags" "$(head -n 3 "$D/errors")"
	fi
	fab_ibsm_stop || fab_fail "$name-ibsm-exit" "ibsm exit status"
	fab_sim_stop
}

run nue-vls multi -R nue --nue_max_num_vls 0
run nue-1vl one -R nue --nue_max_num_vls 1
run minhop-random cycles -R minhop
fab_summary
