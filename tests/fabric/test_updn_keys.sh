#!/usr/bin/env bash
# tests/fabric/test_updn_keys.sh - connect_roots and ids_guid_file of the
# updn engine, with OpenSM 3.3.23 as referee.
#
# Fabric: a ring of four switches sw-A, sw-B, sw-C, sw-D (port 5 to the
# previous, 6 to the next: A-B-C-D-A), four hosts on each (A: H0001-H0004,
# C: H0009-H0012), and a switch "root" without hosts linked to all four
# (their port 7).  Each SM runs once (-o) on a fresh ibsim with the same
# opensm.conf (routing_engine updn); `ibroute` reads sw-A's and sw-C's
# tables.
#
# ids_guid_file (root_guid_file: root): the ring switches all have rank 1,
# so the links between them go up towards the lower id (node GUID by
# default).  A path A-B-C or A-D-C is legal unless its middle switch has
# the highest id of the three.  ibsim's GUIDs ascend in .net order, so
# without the file D's is the highest: no path between A and C crosses D
# (OpenSM, control).  The file gives B the id 2^64-1 and D the id 1: then
# no path crosses B, and some cross D, for both SMs.  The file's last
# line is bad: OpenSM stops there, ibsm skips it with a warning naming
# FILE:LINE.  Control (ibsm without the file, its ties broken by its own
# switch order): some path crosses B, so the assertion fails when ibsm
# ignores the file.  Which of the legal ports each SM takes is printed,
# not asserted (their load counts differ).
#
# connect_roots (root_guid_file: sw-A and sw-C, leaves with hosts): every
# path between them goes down and up again.  OpenSM without connect_roots
# leaves sw-A's entries for sw-C and its hosts empty; with it, they go by
# shortest paths (2 hops).  ibsm routes them either way (without the key
# it keeps one of the two roots, so its hosts have up*/down* paths); with
# the key it keeps both roots, as OpenSM does, and its log says whether
# connecting them was free of credit loops.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm

NET=$FAB_TMP/net
RING=(x A B C D)
{
	for i in 1 2 3 4; do
		echo "Switch 7 \"sw-${RING[$i]}\""
		for p in 1 2 3 4; do
			printf '[%u]\t"H%04u"[1]\n' "$p" $(((i - 1) * 4 + p))
		done
		printf '[5]\t"sw-%s"[6]\n[6]\t"sw-%s"[5]\n[7]\t"root"[%u]\n\n' \
			"${RING[$(((i + 2) % 4 + 1))]}" "${RING[$((i % 4 + 1))]}" "$i"
	done
	echo 'Switch 4 "root"'
	for i in 1 2 3 4; do
		printf '[%u]\t"sw-%s"[7]\n' "$i" "${RING[$i]}"
	done
	echo
	for h in $(seq 1 16); do
		printf 'Hca 1 "H%04u"\n[1]\t"sw-%s"[%u]\n\n' "$h" \
			"${RING[$(((h - 1) / 4 + 1))]}" $(((h - 1) % 4 + 1))
	done
} >"$NET"

# DR paths from H0001 (on sw-A port 1)
SW_A=0,1
SW_B=0,1,6
SW_C=0,1,6,6
SW_D=0,1,5
ROOT=0,1,7

guid_of() {
	fab_run H0001 smpquery -D nodeinfo "$1" | sed -nE 's/^Guid:\.*//p'
}

# conf DIR WHAT: opensm.conf for the running simulator's GUIDs.
# WHAT: ids | noids | connect | noconnect
conf() {
	local dir=$1 what=$2 a b c d r
	a=$(guid_of $SW_A) b=$(guid_of $SW_B) c=$(guid_of $SW_C)
	d=$(guid_of $SW_D) r=$(guid_of $ROOT)
	[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && [ -n "$d" ] && [ -n "$r" ] ||
		return 1
	mkdir -p "$dir"
	echo "routing_engine updn" >"$dir/opensm.conf"
	case $what in
	ids | noids)
		echo "$r" >"$dir/roots"
		printf '# B last, D first among equal ranks\n%s 0xffffffffffffffff\n%s 1\n%s zz\n' \
			"$b" "$d" "$a" >"$dir/ids"
		[ "$what" = ids ] && echo "ids_guid_file $dir/ids" >>"$dir/opensm.conf"
		;;
	*)
		printf '%s\n%s\n' "$a" "$c" >"$dir/roots"
		[ "$what" = connect ] && echo "connect_roots TRUE" >>"$dir/opensm.conf"
		;;
	esac
	echo "root_guid_file $dir/roots" >>"$dir/opensm.conf"
}

# lft PATH OUT: a switch's LFT as "name port" lines (CAs and switches).
lft() {
	fab_run H0001 ibroute -D "$1" 1 0x100 >"$2.raw" 2>"$2.err"
	sed -nE "s/^0x[0-9a-f]+ 0*([0-9]+) : \((Channel Adapter|Switch) .*'([^']+)'.*/\3 \1/p" \
		"$2.raw" | sort >"$2"
}

# ports FILE NAMES...: the egress ports of the named destinations.
ports() {
	local f=$1
	shift
	for n in "$@"; do
		awk -v h="$n" '$1 == h { print $2 }' "$f"
	done | tr '\n' ' '
}

HOSTS_A=(H0001 H0002 H0003 H0004)
HOSTS_C=(H0009 H0010 H0011 H0012)

# run SM WHAT: a fresh simulator, the SM once, the two tables into
# $FAB_TMP/SM-WHAT/{a,c}.
run() {
	local sm=$1 what=$2 dir=$FAB_TMP/$1-$2
	fab_sim_start "$NET" "$sm-$what" || {
		fab_fail "$sm-$what-sim"
		return 1
	}
	conf "$dir" "$what" || {
		fab_fail "$sm-$what-conf" "GUIDs not read"
		return 1
	}
	if [ "$sm" = osm ]; then
		fab_run H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
			opensm -o -d2 -F "$dir/opensm.conf" -f "$dir/opensm.log" \
			>"$dir/out" 2>&1
		grep -q "SUBNET UP" "$dir/opensm.log" ||
			fab_fail "$sm-$what-up" "$(tail -n 3 "$dir/opensm.log")"
	else
		fab_ibsm H0001 "$dir/run" -F "$dir/opensm.conf" ||
			fab_fail "$sm-$what-up" "$(tail -n 3 "$dir/run.err")"
	fi
	lft $SW_A "$dir/a"
	lft $SW_C "$dir/c"
}

# ring_rule SM WHAT NOT VIA: between A and C no host path crosses switch
# NOT, and some cross VIA (A: port 5 to D, 6 to B; C: 5 to B, 6 to D).
ring_rule() {
	local name="$1-$2" not=$3 via=$4 pa pc bad_a bad_c via_a via_c
	pa=$(ports "$FAB_TMP/$1-$2/a" "${HOSTS_C[@]}")
	pc=$(ports "$FAB_TMP/$1-$2/c" "${HOSTS_A[@]}")
	if [ "$not" = B ]; then bad_a=6 bad_c=5 via_a=5 via_c=6
	else bad_a=5 bad_c=6 via_a=6 via_c=5; fi
	local some=0
	grep -qw "$via_a" <<<"$pa" && some=1
	grep -qw "$via_c" <<<"$pc" && some=1
	if [ "$(wc -w <<<"$pa $pc")" -eq 8 ] && [ "$some" = 1 ] &&
		! grep -qw "$bad_a" <<<"$pa" && ! grep -qw "$bad_c" <<<"$pc"; then
		fab_pass "$name: A<->C never via sw-$not, some via sw-$via (A: $pa; C: $pc)"
	else
		fab_fail "$name" "A -> C hosts: $pa; C -> A hosts: $pc (not via sw-$not: A port $bad_a, C port $bad_c)"
	fi
}

# --- ids_guid_file
run osm ids && ring_rule osm ids B D
run osm noids && ring_rule osm noids D B
run ibsm ids && ring_rule ibsm ids B D
# control: ibsm without the file breaks ties by its own switch order
# (discovery), in which B is not last: some path crosses B
if run ibsm noids; then
	pa=$(ports "$FAB_TMP/ibsm-noids/a" "${HOSTS_C[@]}")
	pc=$(ports "$FAB_TMP/ibsm-noids/c" "${HOSTS_A[@]}")
	if grep -qw 6 <<<"$pa" || grep -qw 5 <<<"$pc"; then
		fab_pass "ibsm-noids (control): some path between A and C crosses sw-B (A: $pa; C: $pc)"
	else
		fab_fail "ibsm-noids (control)" "no path crosses sw-B without the file: A: $pa; C: $pc"
	fi
fi
if grep -q "routing: .*ids:4: 'zz': expected an id" "$FAB_TMP/ibsm-ids/run.log" &&
	grep -q "ids from ids_guid_file" "$FAB_TMP/ibsm-ids/run.log"; then
	fab_pass "ibsm-ids: file used, bad line named ids:4"
else
	fab_fail ibsm-ids-log "$(grep "routing: " "$FAB_TMP/ibsm-ids/run.log" | head -n 5)"
fi
# --check-config names the bad line too (no fabric needed)
"$IBSM" --check-config -F "$FAB_TMP/ibsm-ids/opensm.conf" >"$FAB_TMP/check.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "warning: .*ids:4: 'zz': expected an id" "$FAB_TMP/check.out"; then
	fab_pass check-config-warns
else
	fab_fail check-config-warns "exit $rc: $(head -n 5 "$FAB_TMP/check.out")"
fi
if cmp -s <(ports "$FAB_TMP/osm-ids/a" "${HOSTS_C[@]}") <(ports "$FAB_TMP/ibsm-ids/a" "${HOSTS_C[@]}") &&
	cmp -s <(ports "$FAB_TMP/osm-ids/c" "${HOSTS_A[@]}") <(ports "$FAB_TMP/ibsm-ids/c" "${HOSTS_A[@]}"); then
	echo "    A -> C and C -> A ports: the same for both SMs"
else
	echo "    A -> C: OpenSM $(ports "$FAB_TMP/osm-ids/a" "${HOSTS_C[@]}")| ibsm $(ports "$FAB_TMP/ibsm-ids/a" "${HOSTS_C[@]}")"
	echo "    C -> A: OpenSM $(ports "$FAB_TMP/osm-ids/c" "${HOSTS_A[@]}")| ibsm $(ports "$FAB_TMP/ibsm-ids/c" "${HOSTS_A[@]}")"
fi

# --- connect_roots: sw-A's entries for sw-C and its hosts (and back)
n_routed() {
	ports "$@" | wc -w
}
run osm noconnect
run osm connect
run ibsm noconnect
run ibsm connect
for r in osm-noconnect:0 osm-connect:5 ibsm-noconnect:5 ibsm-connect:5; do
	d=$FAB_TMP/${r%:*} want=${r#*:}
	na=$(n_routed "$d/a" sw-C "${HOSTS_C[@]}")
	nc=$(n_routed "$d/c" sw-A "${HOSTS_A[@]}")
	if [ "$na" -eq "$want" ] && [ "$nc" -eq "$want" ]; then
		fab_pass "${r%:*}: root to root $na of 5 routed each way"
	else
		fab_fail "${r%:*}" "root to root routed: A $na, C $nc of 5, expected $want"
	fi
done
# ibsm keeps both roots only with the key
if grep -q "updn: up\*/down\*: 1 roots from root_guid_file, 1 VL" "$FAB_TMP/ibsm-noconnect/run.log" &&
	grep -qE "updn: up\*/down\*: 2 roots from root_guid_file, (roots connected \(connect_roots\)|connect_roots not applied)" \
		"$FAB_TMP/ibsm-connect/run.log"; then
	fab_pass "ibsm: 1 root without connect_roots, 2 with ($(grep -o "2 roots from root_guid_file, [a-z_ ()]*" "$FAB_TMP/ibsm-connect/run.log" | head -n 1))"
else
	fab_fail ibsm-connect-roots "$(grep -h "updn: " "$FAB_TMP"/ibsm-*connect/run.log | head -n 4)"
fi
for sm in osm ibsm; do
	echo "    $sm connect_roots: A -> sw-C and its hosts by ports $(ports "$FAB_TMP/$sm-connect/a" sw-C "${HOSTS_C[@]}")"
done

fab_summary
