#!/usr/bin/env bash
# tests/fabric/test_routing_weights.sh - hop_weights_file and
# port_prof_ignore_file (minhop) with OpenSM 3.3.23 as referee.
#
# Fabric: leaves leaf-1 (hosts H0001-H0004) and leaf-2 (H0005-H0008), each
# with port 5 to spine-1 and port 6 to spine-2.  The files:
#	hop_weights_file:      leaf-2 port 5 weighs 3
#	port_prof_ignore_file: leaf-1 port 5
# (Each also holds lines that cannot be used: a switch that does not
# exist, a port 0, a weight 0, a port above the switch's 8, and last a
# line that is no GUID, where OpenSM stops reading; ibsm skips each and
# warns with FILE:LINE.)
#
# leaf-2 reaches leaf-1's hosts through port 5 in 3 + 1 and through port
# 6 in 1 + 1: all four leave by port 6.  leaf-1 does not count the routes
# it sends by port 5, so port 5 stays the least loaded and takes all of
# leaf-2's hosts.  Without the files each leaf spreads the other's hosts
# 5, 6, 5, 6 (so both assertions fail when a file is ignored: the
# control).  Both SMs get the same opensm.conf (routing_engine minhop),
# each on a fresh ibsim of the same fabric, and run once (-o); `ibroute`
# reads both leaves' LFTs.  Then ibsm with -w and -i on the command line
# instead of the keys, and `ibsm --check-config`.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm

NET=$FAB_TMP/net
fab_net_leaf_spine "$NET"

# DR paths from H0001: leaf-1 is 0,1; leaf-2 is 0,1,5,2 (leaf-1 port 5
# -> spine-1 port 2 -> leaf-2).
LEAF1=0,1
LEAF2=0,1,5,2

# write_files DIR [files|nofiles]: the files for the running simulator's
# GUIDs (read by directed route, no SM needed) and an opensm.conf that
# names them (or not).
write_files() {
	local dir=$1 l1 l2
	l1=$(fab_run H0001 smpquery -D nodeinfo $LEAF1 | sed -nE 's/^Guid:\.*//p')
	l2=$(fab_run H0001 smpquery -D nodeinfo $LEAF2 | sed -nE 's/^Guid:\.*//p')
	[ -n "$l1" ] && [ -n "$l2" ] && [ "$l1" != "$l2" ] || return 1
	mkdir -p "$dir"
	printf '# switch port weight\n%s\n%s\n%s\n%s 5 3 # leaf-2 up to spine-1\n%s\n' \
		"0x00000000deadbeef 1 2" "$l2 6 0" "$l2 9 2" "$l2" \
		"not-a-guid 1 1" >"$dir/weights"
	printf '# switch port\n%s\n%s\n%s 5\n%s\n' "0x00000000deadbeef 1" \
		"$l1 0" "$l1" "not-a-guid 1" >"$dir/ignore"
	echo "routing_engine minhop" >"$dir/opensm.conf"
	[ "${2:-files}" = files ] &&
		printf 'hop_weights_file %s\nport_prof_ignore_file %s\n' \
			"$dir/weights" "$dir/ignore" >>"$dir/opensm.conf"
	echo "$l1 $l2" >"$dir/guids"
}

# lft OUT DR: that leaf's LFT as "host port" lines (CA LIDs), sorted.
lft() {
	fab_lft_hosts "$1" "$2"
}

# ports FILE H...: the egress ports of those hosts, space-separated
ports() {
	local f=$1 h out=
	shift
	for h in "$@"; do
		out+="$(awk -v h="$h" '$1 == h { print $2 }' "$f") "
	done
	echo "${out% }"
}

# expect NAME DIR WANT1 WANT2: leaf-1's ports to H0005-H0008 and leaf-2's
# to H0001-H0004.
expect() {
	local name=$1 d=$2 p1 p2
	p1=$(ports "$d/leaf1.lft" H0005 H0006 H0007 H0008)
	p2=$(ports "$d/leaf2.lft" H0001 H0002 H0003 H0004)
	if [ "$p1" = "$3" ] && [ "$p2" = "$4" ]; then
		fab_pass "$name (leaf-1: $p1; leaf-2: $p2)"
	else
		fab_fail "$name" "leaf-1 -> H0005-8: '$p1' (expected '$3'); leaf-2 -> H0001-4: '$p2' (expected '$4')"
	fi
}

read_lfts() {
	lft "$1/leaf1.lft" $LEAF1
	lft "$1/leaf2.lft" $LEAF2
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
read_lfts "$FAB_TMP/osm"
expect opensm-follows-files "$FAB_TMP/osm" "5 5 5 5" "6 6 6 6"

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
if [ ! -s "$FAB_TMP/ibsm/run.log" ] ||
	grep -q "not implemented" "$FAB_TMP/ibsm/run.err" "$FAB_TMP/ibsm/run.log"; then
	fab_fail ibsm-implements-keys "$(grep "not implemented" "$FAB_TMP/ibsm/run.err")"
else
	fab_pass ibsm-implements-keys
fi
# the bad lines, named FILE:LINE, in the log
for w in "weights:2: 0x00000000deadbeef is no switch of the fabric" \
	"weights:3: weight '0': expected 1-255" \
	"weights:4: port 9: switch" \
	"weights:6: 'not-a-guid': expected a switch node GUID" \
	"ignore:2: 0x00000000deadbeef is no switch of the fabric" \
	"ignore:3: port '0': expected 1-254" \
	"ignore:5: 'not-a-guid'"; do
	if grep -qF "$w" "$FAB_TMP/ibsm/run.log"; then
		fab_pass "ibsm-warns (${w%%: *})"
	else
		fab_fail "ibsm-warns (${w%%: *})" "no '$w' in: $(grep "routing: " "$FAB_TMP/ibsm/run.log" | head -n 8)"
	fi
done
read_lfts "$FAB_TMP/ibsm"
expect ibsm-follows-files "$FAB_TMP/ibsm" "5 5 5 5" "6 6 6 6"

echo "    egress port per host: OpenSM   ibsm"
for l in 1 2; do
	join "$FAB_TMP/osm/leaf$l.lft" "$FAB_TMP/ibsm/leaf$l.lft" |
		awk -v l="$l" '{ printf "      leaf-%s %-8s %4s %6s%s\n", l, $1, $2, $3, ($2 == $3 ? "" : "   (differs)") }'
done
if [ -s "$FAB_TMP/osm/leaf1.lft" ] &&
	cmp -s "$FAB_TMP/osm/leaf1.lft" "$FAB_TMP/ibsm/leaf1.lft" &&
	cmp -s "$FAB_TMP/osm/leaf2.lft" "$FAB_TMP/ibsm/leaf2.lft"; then
	fab_pass same-as-opensm
else
	fab_fail same-as-opensm "see the table above"
fi

# --- the same through -w and -i, the keys not in the file
dir=$FAB_TMP/cli
write_files "$dir" nofiles || fab_fail cli-files
if fab_ibsm H0001 "$dir/run" -F "$dir/opensm.conf" -w "$FAB_TMP/ibsm/weights" \
	-i "$FAB_TMP/ibsm/ignore"; then
	read_lfts "$dir"
	expect ibsm-cli-options "$dir" "5 5 5 5" "6 6 6 6"
else
	fab_fail ibsm-cli-once "$(tail -n 3 "$dir/run.err")"
fi

# --- the control: no files, each leaf spreads the other's hosts
dir=$FAB_TMP/ctl
write_files "$dir" nofiles || fab_fail control-files
if fab_ibsm H0001 "$dir/run" -F "$dir/opensm.conf"; then
	read_lfts "$dir"
	expect control-without-files "$dir" "5 6 5 6" "5 6 5 6"
else
	fab_fail control-once "$(tail -n 3 "$dir/run.err")"
fi

# --- --check-config: the lines that do not parse, as warnings
"$IBSM" --check-config -F "$FAB_TMP/ibsm/opensm.conf" >"$FAB_TMP/check.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "warning: .*weights:3: weight '0'" "$FAB_TMP/check.out" &&
	grep -q "warning: .*ignore:3: port '0'" "$FAB_TMP/check.out" &&
	! grep -q "weights:2:" "$FAB_TMP/check.out" &&
	! grep -q "not implemented" "$FAB_TMP/check.out"; then
	fab_pass check-config-warns
else
	fab_fail check-config-warns "exit $rc: $(head -n 8 "$FAB_TMP/check.out")"
fi

fab_summary
