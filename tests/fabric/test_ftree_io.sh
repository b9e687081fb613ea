#!/usr/bin/env bash
# tests/fabric/test_ftree_io.sh - the ftree engine with an I/O node
# (io_guid_file, max_reverse_hops), with OpenSM 3.3.23 as referee: a
# two-level fat tree (3 leaves of 2 hosts, 2 spines) with a storage HCA
# S0001 on spine-1, opensm.conf `routing_engine ftree`, `io_guid_file`
# (S0001's port GUID) and `max_reverse_hops 1`, once alone, once with a
# root_guid_file naming the spines, and once with the roots and
# `max_reverse_hops 0`.  Each SM runs on a fresh ibsim of the
# same fabric (`opensm`, `ibsm -o`); then, through infiniband-diags only:
#	- which engine programmed the tables (OpenSM's log: "ftree tables
#	  configured", or ftree failed and minhop did; ibsm's summary line);
#	- `ibroute` of every switch has an entry for S0001's LID;
#	- every CA port reaches every LID (route_check.py routes), and
#	  `ibtracert` from a host to S0001, back, and from spine-2 (which
#	  reaches S0001 only down to a leaf and up again: a reverse hop).
# Without a root_guid_file OpenSM's ftree ranks the tree from every CA,
# S0001 included, finds the hosts' leaves at the wrong rank (ERR AB26) and
# falls back to minhop; ibsm's ftree routes it.  With the roots OpenSM's
# ftree routes S0001 from every switch, but leaves spine-1 without a route
# to spine-2's own LID (its switch LIDs take no reverse hop), so S0001
# cannot reach that LID (measured: 1 of 77 routes broken).  With
# max_reverse_hops 0 OpenSM's spine-2 has no route to S0001 at all; ibsm's
# still has (no host's path starts there: the bound is for those).  ibsm
# must route with ftree every time and be at least as good as OpenSM on
# every count.
# Last, an io_guid_file with a bad line stops `ibsm --check-config` with
# FILE:LINE.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

fab_need_opensm

NET=$FAB_TMP/net
{
	printf 'Switch 8 "spine-1"\n'
	printf '[%d]\t"leaf-%d"[3]\n' 1 1 2 2 3 3
	printf '[4]\t"S0001"[1]\n\n'
	printf 'Switch 8 "spine-2"\n'
	printf '[%d]\t"leaf-%d"[4]\n' 1 1 2 2 3 3
	printf '\n'
	for l in 1 2 3; do
		printf 'Switch 8 "leaf-%d"\n' "$l"
		printf '[1]\t"H%04d"[1]\n' $((2 * l - 1))
		printf '[2]\t"H%04d"[1]\n' $((2 * l))
		printf '[3]\t"spine-1"[%d]\n[4]\t"spine-2"[%d]\n\n' "$l" "$l"
	done
	for h in 1 2 3 4 5 6; do
		printf 'Hca 1 "H%04d"\n[1]\t"leaf-%d"[%d]\n\n' "$h" \
			$(((h + 1) / 2)) $((2 - h % 2))
	done
	printf 'Hca 1 "S0001"\n[1]\t"spine-1"[4]\n'
} >"$NET"
ENDS=$(sm_net_ends "$NET")

# The GUIDs ibsim gives: S0001's port, the spines (no SM needed for
# ibnetdiscover's directed routes).
fab_sim_start "$NET" guids || {
	fab_fail sim-start
	fab_summary
	exit 1
}
fab_run H0001 ibnetdiscover -p >"$FAB_TMP/topo0" 2>"$FAB_TMP/topo0.err"
IO_GUID=$(awk '$1 == "CA" && /\047S0001\047/ { print $4; exit }' "$FAB_TMP/topo0")
awk '$1 == "SW" && /\( \047spine-/ { print $4 }' "$FAB_TMP/topo0" | sort -u \
	>"$FAB_TMP/roots"
if [ -n "$IO_GUID" ] && [ "$(wc -l <"$FAB_TMP/roots")" = 2 ]; then
	fab_pass "guids (S0001 port $IO_GUID)"
else
	fab_fail guids "$(head -n 3 "$FAB_TMP/topo0.err")"
fi
printf '# the storage node\n%s\n' "$IO_GUID" >"$FAB_TMP/io.guids"
CONF=$FAB_TMP/opensm.conf
printf 'routing_engine ftree\nio_guid_file %s\nmax_reverse_hops 1\n' \
	"$FAB_TMP/io.guids" >"$CONF"
cp "$CONF" "$FAB_TMP/roots.conf"
printf 'root_guid_file %s\n' "$FAB_TMP/roots" >>"$FAB_TMP/roots.conf"
sed 's/^max_reverse_hops 1$/max_reverse_hops 0/' "$FAB_TMP/roots.conf" \
	>"$FAB_TMP/roots0.conf"

# measure DIR NAME: from sm_diags' DIR, "NAME switches-with-io-entry
# routes-ok tracert-ok reverse-hops-of-spine-2", one line into
# $FAB_TMP/counts; the diags' detail in DIR.
measure() {
	local dir=$1 name=$2 io_lid h1_lid sp2_lid n ok=0 tr=0 hops
	sm_diags H0002 "$dir" >/dev/null 2>&1
	io_lid=$(awk '$1 == "CA" && /\047S0001\047/ { print $2; exit }' "$dir/topo")
	h1_lid=$(awk '$1 == "CA" && /\047H0001\047/ { print $2; exit }' "$dir/topo")
	sp2_lid=$(awk '$1 == "SW" && /\( \047spine-2\047/ { print $2; exit }' "$dir/topo")
	# switches whose ibroute lists S0001's LID with a port
	n=$(awk -v lid="$io_lid" '
		/^Unicast lids/ { sw = $0 }
		$1 == sprintf("0x%04x", lid) && $2 + 0 != 255 { seen[sw] = 1 }
		END { print length(seen) }' "$dir/lfts")
	sm_verify "$dir" --ends "$ENDS" >"$dir/verify" 2>&1 && ok=1
	fab_run H0002 ibtracert "$h1_lid" "$io_lid" >"$dir/tr-to" 2>&1 &&
		fab_run H0002 ibtracert "$io_lid" "$h1_lid" >"$dir/tr-back" 2>&1 &&
		tr=1
	fab_run H0002 ibtracert "$sp2_lid" "$io_lid" >"$dir/tr-spine" 2>&1 ||
		tr=0
	hops=$(grep -c '\] -> ' "$dir/tr-spine")
	echo "$name $n $ok $tr $hops" >>"$FAB_TMP/counts"
}

# opensm_run NAME CONF: OpenSM on a fresh simulator; the engine it ended
# with into $FAB_TMP/NAME.engine.
opensm_run() {
	local name=$1 conf=$2 d=$FAB_TMP/$1 pid i
	fab_sim_start "$NET" "$name" || return 1
	mkdir -p "$d"
	fab_spawn H0001 env OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" \
		opensm -d2 -F "$conf" -f "$d/opensm.log" >"$d/out" 2>&1
	pid=$FAB_SPAWN_PID
	for ((i = 0; i < 300; i++)); do
		grep -q "SUBNET UP" "$d/opensm.log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	sed -nE 's/.* ([a-z0-9_-]+) tables configured on all switches$/\1/p' \
		"$d/opensm.log" | tail -n 1 >"$FAB_TMP/$name.engine"
	measure "$d.diags" "$name"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$FAB_TMP/pids/$pid"
}

# ibsm_run NAME CONF: `ibsm -o` on a fresh simulator; its summary line
# into $FAB_TMP/NAME.engine.
ibsm_run() {
	local name=$1 conf=$2 out=$FAB_TMP/$1
	fab_sim_start "$NET" "$name" || return 1
	fab_ibsm H0001 "$out" -F "$conf"
	echo "ibsm -o exit $?" >"$out.rc"
	grep -m1 -o 'fat tree, .*' "$out.log" >"$FAB_TMP/$name.engine"
	measure "$out.diags" "$name"
}

: >"$FAB_TMP/counts"
opensm_run osm "$CONF"
opensm_run osm-roots "$FAB_TMP/roots.conf"
opensm_run osm-roots0 "$FAB_TMP/roots0.conf"
ibsm_run ibsm "$CONF"
ibsm_run ibsm-roots "$FAB_TMP/roots.conf"
ibsm_run ibsm-roots0 "$FAB_TMP/roots0.conf"

# --- side by side
echo "    run         engine                      switches-to-S0001 routes tracert spine-2-hops"
while read -r name n ok tr hops; do
	printf '    %-11s %-27s %-17s %-6s %-7s %s\n' "$name" \
		"$(cut -c1-27 "$FAB_TMP/$name.engine")" "$n/5" "$ok" "$tr" "$hops"
done <"$FAB_TMP/counts"
count() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$FAB_TMP/counts"; }

# OpenSM: its ftree refuses without roots (ERR AB26), routes with them.
if [ "$(cat "$FAB_TMP/osm.engine")" = minhop ] &&
	grep -q 'ERR AB26' "$FAB_TMP/osm/opensm.log" &&
	[ "$(cat "$FAB_TMP/osm-roots.engine")" = ftree ]; then
	fab_pass "opensm-ftree-needs-roots (alone: minhop after ERR AB26; with roots: ftree)"
else
	fab_fail opensm-ftree-needs-roots "alone: '$(cat "$FAB_TMP/osm.engine")', with roots: '$(cat "$FAB_TMP/osm-roots.engine")'"
fi

for run in ibsm ibsm-roots ibsm-roots0; do
	ref=osm${run#ibsm}
	if grep -q 'ibsm -o exit 0' "$FAB_TMP/$run.rc" &&
		grep -q '1 I/O LIDs, 1 routes with reverse hops' "$FAB_TMP/$run.engine"; then
		fab_pass "$run-routes-with-ftree ($(cat "$FAB_TMP/$run.engine"))"
	else
		fab_fail "$run-routes-with-ftree" "$(cat "$FAB_TMP/$run.rc"): $(grep -m3 'ftree\|ERR' "$FAB_TMP/$run.log")"
	fi
	if [ "$(count "$run" 2)" = 5 ]; then
		fab_pass "$run-every-switch-routes-to-io"
	else
		fab_fail "$run-every-switch-routes-to-io" "$(count "$run" 2) of 5 switches"
	fi
	if [ "$(count "$run" 3)" = 1 ] && [ "$(count "$run" 4)" = 1 ]; then
		fab_pass "$run-all-pairs-and-tracert"
	else
		fab_fail "$run-all-pairs-and-tracert" "$(head -n 5 "$FAB_TMP/$run.diags/verify") $(tail -n 3 "$FAB_TMP/$run.diags"/tr-*)"
	fi
	# spine-2: down to a leaf, up to spine-1, to S0001 (3 hops)
	if [ "$(count "$run" 5)" = 3 ]; then
		fab_pass "$run-spine-2-one-reverse-hop"
	else
		fab_fail "$run-spine-2-one-reverse-hop" "$(cat "$FAB_TMP/$run.diags/tr-spine")"
	fi
	if [ "$(count "$run" 2)" -ge "$(count "$ref" 2)" ] &&
		[ "$(count "$run" 3)" -ge "$(count "$ref" 3)" ] &&
		[ "$(count "$run" 4)" -ge "$(count "$ref" 4)" ] &&
		{ [ "$(count "$ref" 5)" = 0 ] || # no path from spine-2
			[ "$(count "$run" 5)" -le "$(count "$ref" 5)" ]; }; then
		fab_pass "$run-at-least-as-good-as-$ref"
	else
		fab_fail "$run-at-least-as-good-as-$ref" "$(cat "$FAB_TMP/counts")"
	fi
done

# max_reverse_hops 0: OpenSM's spine-2 has no entry for S0001 (its
# routes to non-compute nodes take a reverse hop only on credit); ibsm's
# has (no host's path starts at spine-2: the bound is for those).
if [ "$(count osm-roots0 2)" -lt 5 ]; then
	fab_pass "opensm-max-reverse-hops-0-leaves-a-switch-out ($(count osm-roots0 2) of 5)"
else
	fab_fail opensm-max-reverse-hops-0-leaves-a-switch-out "$(count osm-roots0 2) of 5"
fi

# --- a bad io_guid_file: FILE:LINE at start
printf '%s\nnot-a-guid\n' "$IO_GUID" >"$FAB_TMP/bad.guids"
printf 'io_guid_file %s\n' "$FAB_TMP/bad.guids" >"$FAB_TMP/bad.conf"
out=$(timeout 20 "$IBSM" -F "$FAB_TMP/bad.conf" --check-config \
	-f "$FAB_TMP/bad.log" --cache-dir "$FAB_TMP/bad" 2>&1 </dev/null)
rc=$?
if [ "$rc" = 2 ] && grep -q "bad.guids:2: " <<<"$out"; then
	fab_pass "bad-io-guid-file ($(grep -m1 'bad.guids:2' <<<"$out"))"
else
	fab_fail bad-io-guid-file "exit $rc: $out"
fi

fab_summary
