#!/usr/bin/env bash
# tests/fabric/test_engine_names.sh - every routing engine name OpenSM
# knows starts ibsm and brings the subnet up with valid routes, judged by
# infiniband-diags on one ibsim (the SM restarted per name):
#
#   lash, dor, torus-2QoS, nue, sssp, dfsssp, ftree, updn, dnup, minhop,
#   file, and a chain ("ftree,updn"): SUBNET UP; the log names the engine
#   that routed (the mapped one for lash, dor, torus-2QoS, sssp, with the
#   mapping logged once); every CA port reaches every LID through the
#   LFTs ibroute reads (route_check.py routes); for the names that promise
#   deadlock freedom and map to another engine, no cycle in any VL's
#   channel dependency graph with the SLs of saquery's PathRecords and
#   smpquery sl2vl's tables (route_check.py cdg);
#   file: the LFTs of the updn run, as ibroute printed them, given as
#   lfts_file (-U): the switches are then programmed with exactly those
#   entries; a missing lfts_file falls back to minhop, with the reason
#   logged.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CHECK=(python3 "$FAB_LIB/route_check.py")
NET=$FAB_TMP/random-6.net
QJOBS=${QJOBS:-4}

if ! "$FAB_TOPO/gen-topo" random --switches 6 --degree 3 \
	--hosts-per-switch 1 --seed 11 -o "$NET" ||
	! fab_sim_start "$NET" names; then
	fab_fail names-setup "gen-topo or ibsim failed"
	fab_summary
	exit 1
fi

# cdg_ok DIR: PathRecord SLs and SL2VL tables, then no cycle in any VL.
cdg_ok() {
	local d=$1 n
	n=$(fab_run_lines "$QJOBS" H0002 "$d/sl.d" saquery -p --src-to-dst \
		< <("${CHECK[@]}" plan "$d/topo" sl | awk '{ print $1 ":" $2 }'))
	fab_cat_lines "$d/sl.d" "$n" >"$d/sl"
	n=$(fab_run_lines "$QJOBS" H0002 "$d/sl2vl.d" smpquery sl2vl \
		< <("${CHECK[@]}" plan "$d/topo" sl2vl))
	fab_cat_lines "$d/sl2vl.d" "$n" >"$d/sl2vl"
	"${CHECK[@]}" cdg "$d/topo" "$d/lfts" --sl "$d/sl" --sl2vl "$d/sl2vl"
}

# name_run NAME EXPECT CDG [IBSM OPTIONS...]: ibsm -R NAME; EXPECT: a
# regular expression the engine in the log's "routing ENGINE" line must
# match; CDG: yes to check the VLs' dependency graphs.
name_run() {
	local name=$1 expect=$2 cdg=$3 tag used
	shift 3
	tag=${TAG:-${name//,/+}}
	D=$FAB_TMP/$tag
	if ! fab_ibsm_start H0001 "$D/sm" -R "$name" "$@"; then
		fab_fail "$tag-up" "ibsm -R $name did not bring the subnet up"
		fab_ibsm_stop
		return
	fi
	used=$(sed -n 's/.*routing: \([A-Za-z0-9_-]*\)[: ].*/\1/p' \
		"$D/sm/ibsm.log" |
		grep -vxE 'incremental|full|busiest|OpenSM|verified' | tail -n 1)
	fab_check "$tag-up-engine-$used" test -n "$(echo "$used" |
		grep -xE "$expect")"
	if sm_diags H0002 "$D"; then
		fab_check "$tag-routes" "${CHECK[@]}" routes "$D/topo" "$D/lfts"
		[ "$cdg" = yes ] && fab_check "$tag-cdg-acyclic" cdg_ok "$D"
	else
		fab_fail "$tag-diags" "$(head -n 3 "$D/errors")"
	fi
	fab_ibsm_stop || fab_fail "$tag-ibsm-exit" "ibsm exit status"
}

name_run lash nue yes
fab_check lash-mapping-logged grep -q \
	'OpenSM engine names mapped: lash -> nue' "$FAB_TMP/lash/sm/ibsm.log"
fab_check lash-mapping-logged-once test "$(grep -c 'engine names mapped' \
	"$FAB_TMP/lash/sm/ibsm.log")" -eq 1
name_run dor 'nue|torus' yes
name_run torus-2QoS 'nue|torus' yes
name_run sssp nue yes
name_run nue nue no
name_run dfsssp dfsssp no
name_run ftree 'ftree|minhop' no
name_run updn updn no
name_run dnup dnup no
name_run minhop minhop no
name_run ftree,updn updn no

# file: updn's tables as ibroute printed them.
name_run file file no -U "$FAB_TMP/updn/lfts"
norm() { grep -E '^0x[0-9a-f]+ ' "$1" | awk '{ print $1, $2 }' | sort; }
fab_check file-tables-as-loaded cmp -s <(norm "$FAB_TMP/updn/lfts") \
	<(norm "$FAB_TMP/file/lfts")
TAG=file-missing name_run file minhop no -U "$FAB_TMP/none.dump"
fab_check file-missing-reason-logged grep -q 'file: .*none.dump' \
	"$FAB_TMP/file-missing/sm/ibsm.log"

fab_sim_stop
fab_summary
