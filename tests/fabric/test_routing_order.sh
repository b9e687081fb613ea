#!/usr/bin/env bash
# tests/fabric/test_routing_order.sh - guid_routing_order_file and
# port_search_ordering_file with OpenSM 3.3.23 as referee.
#
# Fabric: leaves leaf-1 (hosts H0001-H0004) and leaf-2 (H0005-H0008), each
# with port 5 to spine-1 and port 6 to spine-2.  The files:
#	guid_routing_order_file:   H0007, then H0005 (port GUIDs)
#	port_search_ordering_file: leaf-1: 6 5
# (Each file also holds lines that cannot be used: a GUID of no port and
# a line that is no GUID; a switch that does not exist and a port 0.
# OpenSM stops reading the GUID file at the bad line, ibsm skips it and
# warns with FILE:LINE; both skip the bad port lines.)
#
# minhop routes H0007 first, then H0005, then every other LID.  leaf-1
# has two equally short ports towards leaf-2's hosts; it takes the least
# loaded, on a tie the one its search order puts first: H0007 leaves by
# port 6 (tie, 6 comes first), H0005 by port 5 (6 carries one route).
# Both SMs get the same opensm.conf (routing_engine minhop), each on a
# fresh ibsim of the same fabric, and run once (-o); then `ibroute` reads
# leaf-1's LFT.  The two ordered destinations must leave by the ports
# the files dictate, for both SMs, and the same for both.  The other
# LIDs are printed beside each other, not asserted: OpenSM routes them
# in its own port order (the switches with the most hosts first, their
# hosts by switch port), ibsm in ascending LID order.
#
# Controls (ibsm): with the port file alone, H0005 and H0007 (first and
# third of leaf-2's hosts in ibsm's LID order) share port 6; with the
# GUID file alone, H0007 takes port 5: so each assertion above fails when
# its file is ignored.  Then updn on ibsm (its load count follows the
# same rule; OpenSM's updn picks other roots: not compared), and
# `ibsm --check-config`, which names the lines that do not parse.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm

NET=$FAB_TMP/net
fab_net_leaf_spine "$NET"

# DR paths from H0001: leaf-1 is 0,1; leaf-2's host on port p is
# 0,1,5,2,p (leaf-1 port 5 -> spine-1 port 2 -> leaf-2).
LEAF1=0,1

# write_files DIR: the order files for the running simulator's GUIDs
# (ibsim numbers them itself: read them by directed route, no SM needed).
write_files() {
	local dir=$1 leaf h5 h7
	leaf=$(fab_run H0001 smpquery -D nodeinfo $LEAF1 | sed -nE 's/^Guid:\.*//p')
	h5=$(fab_run H0001 smpquery -D nodeinfo 0,1,5,2,1 | sed -nE 's/^PortGuid:\.*//p')
	h7=$(fab_run H0001 smpquery -D nodeinfo 0,1,5,2,3 | sed -nE 's/^PortGuid:\.*//p')
	[ -n "$leaf" ] && [ -n "$h5" ] && [ -n "$h7" ] || return 1
	mkdir -p "$dir"
	# a GUID of no port (passed over), then a bad line: OpenSM stops
	# reading there, ibsm warns and skips it
	printf '# routed first, in this order\n%s # H0007\n%s # H0005\n%s\n%s\n' \
		"$h7" "$h5" 0x00000000deadbeef not-a-guid >"$dir/order"
	# no such switch; port 0: both lines skipped, by both SMs
	printf '# leaf-1 searches port 6 before 5\n%s 6 5\n%s\n%s\n' "$leaf" \
		"0x00000000deadbeef 1 2" "$leaf 0 1" >"$dir/ports"
	printf 'routing_engine %s\n' "${2:-minhop}" >"$dir/opensm.conf"
	[ "${3:-order}" = order ] &&
		echo "guid_routing_order_file $dir/order" >>"$dir/opensm.conf"
	[ "${4:-ports}" = ports ] &&
		echo "port_search_ordering_file $dir/ports" >>"$dir/opensm.conf"
	echo "$leaf $h5 $h7" >"$dir/guids"
}

# lft OUT: leaf-1's LFT as "host port" lines (CA destinations), sorted.
lft() {
	fab_lft_hosts "$1" "$LEAF1"
}

# port_of FILE HOST
port_of() {
	awk -v h="$2" '$1 == h { print $2 }' "$1"
}

# expect NAME FILE: H0007 by port 6, H0005 by port 5, all 8 hosts routed.
expect() {
	local name=$1 f=$2 p7 p5 n
	p7=$(port_of "$f" H0007)
	p5=$(port_of "$f" H0005)
	n=$(wc -l <"$f")
	if [ "$p7" = 6 ] && [ "$p5" = 5 ] && [ "$n" -eq 8 ]; then
		fab_pass "$name (H0007 -> 6, H0005 -> 5)"
	else
		fab_fail "$name" "H0007 -> '$p7', H0005 -> '$p5' (expected 6, 5), $n hosts: $(tr '\n' ' ' <"$f")"
	fi
}

# --- OpenSM 3.3.23, once
fab_sim_start "$NET" osm || {
	fab_fail sim-start
	fab_summary
	exit 1
}
if write_files "$FAB_TMP/osm"; then
	fab_pass osm-files
else
	fab_fail osm-files "GUIDs not read"
fi
fab_run H0001 env OSM_CACHE_DIR="$FAB_TMP/osm" OSM_TMP_DIR="$FAB_TMP/osm" \
	opensm -o -d2 -F "$FAB_TMP/osm/opensm.conf" -f "$FAB_TMP/osm/opensm.log" \
	>"$FAB_TMP/osm/out" 2>&1
if grep -q "SUBNET UP" "$FAB_TMP/osm/opensm.log"; then
	fab_pass opensm-once
else
	fab_fail opensm-once "$(tail -n 5 "$FAB_TMP/osm/opensm.log")"
fi
lft "$FAB_TMP/osm.lft"
expect opensm-follows-files "$FAB_TMP/osm.lft"

# --- ibsm, same files (for this simulator's GUIDs), fresh simulator
fab_sim_start "$NET" ibsm || {
	fab_fail sim-start
	fab_summary
	exit 1
}
write_files "$FAB_TMP/ibsm" || fab_fail ibsm-files "GUIDs not read"
if cmp -s "$FAB_TMP/osm/guids" "$FAB_TMP/ibsm/guids"; then
	fab_pass same-guids
else
	fab_fail same-guids "ibsim gave other GUIDs the second time"
fi
if fab_ibsm H0001 "$FAB_TMP/ibsm/run" -F "$FAB_TMP/ibsm/opensm.conf"; then
	fab_pass ibsm-once
else
	fab_fail ibsm-once "$(tail -n 5 "$FAB_TMP/ibsm/run.err")"
fi
if grep -q "not implemented" "$FAB_TMP/ibsm/run.err" "$FAB_TMP/ibsm/run.log"; then
	fab_fail ibsm-implements-keys "$(grep "not implemented" "$FAB_TMP/ibsm/run.err")"
else
	fab_pass ibsm-implements-keys
fi
# the bad lines, named FILE:LINE, in the log
for w in "order:5: 'not-a-guid': expected a port GUID" \
	"ports:3: 0x00000000deadbeef is no switch of the fabric" \
	"ports:4: port '0': expected 1-254"; do
	if grep -q "routing: .*$w" "$FAB_TMP/ibsm/run.log"; then
		fab_pass "ibsm-warns (${w%%: *})"
	else
		fab_fail "ibsm-warns (${w%%: *})" "no '$w' in: $(grep "routing: " "$FAB_TMP/ibsm/run.log" | head -n 5)"
	fi
done
# --check-config: the lines that do not parse, as warnings (no fabric)
"$IBSM" --check-config -F "$FAB_TMP/ibsm/opensm.conf" >"$FAB_TMP/check.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "warning: .*order:5: 'not-a-guid'" "$FAB_TMP/check.out" &&
	grep -q "warning: .*ports:4: port '0'" "$FAB_TMP/check.out" &&
	! grep -q "ports:3:" "$FAB_TMP/check.out"; then
	fab_pass check-config-warns
else
	fab_fail check-config-warns "exit $rc: $(head -n 5 "$FAB_TMP/check.out")"
fi
lft "$FAB_TMP/ibsm.lft"
expect ibsm-follows-files "$FAB_TMP/ibsm.lft"

echo "    leaf-1 egress port per host: OpenSM   ibsm"
join "$FAB_TMP/osm.lft" "$FAB_TMP/ibsm.lft" |
	awk '{ printf "      %-8s %4s %6s%s\n", $1, $2, $3, ($2 == $3 ? "" : "   (differs: not ordered)") }'
o7=$(port_of "$FAB_TMP/osm.lft" H0007)
o5=$(port_of "$FAB_TMP/osm.lft" H0005)
if [ -n "$o7" ] && [ "$o7" = "$(port_of "$FAB_TMP/ibsm.lft" H0007)" ] &&
	[ "$o5" = "$(port_of "$FAB_TMP/ibsm.lft" H0005)" ]; then
	fab_pass "ordered-same-as-opensm"
else
	fab_fail ordered-same-as-opensm "see the table above"
fi
# the hosts on leaf-1 itself leave by their own ports, for both
for h in 1 2 3 4; do
	if [ "$(port_of "$FAB_TMP/ibsm.lft" "H000$h")" != "$h" ] ||
		[ "$(port_of "$FAB_TMP/osm.lft" "H000$h")" != "$h" ]; then
		fab_fail "local-host-H000$h"
	fi
done

# --- the controls (ibsm): each file alone does not give both results,
# so the assertions above fail when a file is ignored
for c in "order noports" "noorder ports"; do
	dir=$FAB_TMP/ctl-${c// /-}
	# shellcheck disable=SC2086 # two words: the files to leave out
	write_files "$dir" minhop $c || fab_fail "control-$c-files"
	fab_ibsm H0001 "$dir/run" -F "$dir/opensm.conf" ||
		fab_fail "control-$c-once" "$(tail -n 3 "$dir/run.err")"
	lft "$dir/lft"
	p7=$(port_of "$dir/lft" H0007)
	p5=$(port_of "$dir/lft" H0005)
	case $c in
	"order noports") want="5 6" ;;	# H0007 first, port 5 first
	*) want="6 6" ;;		# LID order: H0005, H0006, H0007
	esac
	if [ "$p7 $p5" = "$want" ]; then
		fab_pass "control ($c): H0007 -> $p7, H0005 -> $p5"
	else
		fab_fail "control ($c)" "H0007 -> $p7, H0005 -> $p5, expected $want"
	fi
done

# --- ibsm with updn: the same rule through up*/down*'s load count
fab_sim_start "$NET" updn || {
	fab_fail sim-start
	fab_summary
	exit 1
}
write_files "$FAB_TMP/updn" updn || fab_fail updn-files "GUIDs not read"
if fab_ibsm H0001 "$FAB_TMP/updn/run" -F "$FAB_TMP/updn/opensm.conf"; then
	fab_pass ibsm-updn-once
else
	fab_fail ibsm-updn-once "$(tail -n 5 "$FAB_TMP/updn/run.err")"
fi
grep -q "routing: updn" "$FAB_TMP/updn/run.log" ||
	fab_fail ibsm-updn-engine "$(grep "routing: " "$FAB_TMP/updn/run.log" | head -n 3)"
lft "$FAB_TMP/updn.lft"
expect ibsm-updn-follows-files "$FAB_TMP/updn.lft"

fab_summary
