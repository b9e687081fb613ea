#!/usr/bin/env bash
# tests/fabric/test_partitions.sh - partitions.conf (-P) on ibsim, judged
# by infiniband-diags only.
#
# 1. For each topology, OpenSM (`opensm -o -P FILE`) and ibsm (`ibsm -o
#    -P FILE`) bring up a fresh simulator with the same file: the RHEL
#    example of the seeds' guide (Default=0x7fff and 0x0002, ipoib, mgid
#    lines) plus partitions with explicit GUID members (full and
#    limited), defmember=limited, ALL_CAS, ALL_SWITCHES and a partition
#    without a P_Key.  `smpquery pkeys` of every CA port and every switch
#    port facing a CA must be the same under both SMs, keyed by GUID: the
#    same set of keys, the same key at index 0.
# 2. saquery PathRecord under ibsm: two limited members of the only
#    partition they share get no path in it; full and limited get one,
#    with that P_Key.
# 3. A running ibsm that gets a broken file on SIGHUP keeps every table
#    and logs FILE:LINE; the fixed file on the next SIGHUP is applied.
# 4. keep_pkey_indexes: a partition removed and one added on SIGHUP leave
#    a host's other keys at their index (smpquery pkeys).
# 5. A file changed on disk (no SIGHUP) is applied after the next heavy
#    sweep.  An emptied file on SIGHUP is refused (ERR 0708) and so are the empty
#    reads of SIGHUPs racing a `cp` over the file: every table unchanged.
#    `ibsmctl partitions apply --force` applies the empty file: 0xffff on
#    every CA, as OpenSM makes of an empty file.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TOPOS=${PART_TOPOS:-"fat2-small.net dualrail-32.net mesh-4x4.net"}
DIAG=H0002

# guid_of HOST: the port GUID of HOST's first port (ibstat).
guid_of() {
	fab_run "$1" ibstat | sed -n 's/.*Port GUID: //p' | head -n 1
}

# write_conf FILE: the partitions of this test, with H0003-H0006's GUIDs.
write_conf() {
	local g3 g4 g5 g6
	g3=$(guid_of H0003)
	g4=$(guid_of H0004)
	g5=$(guid_of H0005)
	g6=$(guid_of H0006)
	cat >"$1" <<EOF
# The RHEL example (seeds' guide, section 5.5), its typos fixed.
Default=0x7fff, rate=3, mtu=4, scope=2, defmember=full:
  ALL, ALL_SWITCHES=full;
Default=0x7fff, ipoib, rate=3, mtu=4, scope=2:
  mgid=ff12:401b::ffff:ffff   # IPv4 Broadcast address
  mgid=ff12:401b::1           # IPv4 All Hosts group
  mgid=ff12:601b::1           # IPv6 All Hosts group
  ALL=full, ALL_SWITCHES=full;
ib0_2=0x0002, rate=7, mtu=4, scope=2, defmember=full:
    ALL, ALL_SWITCHES=full;
# Explicit members, full and limited.
storage=0x0010, ipoib : $g3=full, $g4=limited, $g5 ;
# Limited by default.
compute=0x0011, defmember=limited : ALL_CAS, $g6=full ;
switches=0x0012 : ALL_SWITCHES=full ;
# No P_Key: the SM makes one up.
nokey : $g5=full, $g6 ;
EOF
}

# pkey_sets OUT: one line per CA port and per switch port facing a CA,
# "CA <guid> <index-0 key> <other keys sorted>" or "SW <guid>:<port> ...".
# The tables are read with smpquery pkeys, 4 at a time.
pkey_sets() {
	local topo=$FAB_TMP/p.topo dir=$FAB_TMP/p.keys i=0
	fab_run "$DIAG" ibnetdiscover -p >"$topo" 2>/dev/null
	# CA lid port guid ... - SW lid port guid
	awk '$1 == "CA" && $8 == "SW" { print $2, $3, $4, $9, $10, $11 }' \
		"$topo" >"$topo.pairs"
	rm -rf "$dir"
	awk '{ print $1, $2; print $4, $5 }' "$topo.pairs" |
		fab_run_lines 4 "$DIAG" "$dir" smpquery pkeys >/dev/null
	while read -r _ _ cguid _ sport sguid; do
		echo "CA $cguid $(keys "$dir/$i")"
		echo "SW $sguid:$sport $(keys "$dir/$((i + 1))")"
		i=$((i + 2))
	done <"$topo.pairs" | sort >"$1"
}

# keys FILE: from smpquery pkeys output, the table's index-0 key, then the
# other keys, sorted.
keys() {
	local all first rest
	all=$(sed -n 's/^ *[0-9]*: //p' "$1" 2>/dev/null | tr -s ' ' '\n' | grep -v '^$')
	first=$(head -n 1 <<<"$all")
	rest=$(tail -n +2 <<<"$all" | grep -v '^0x0000$' | sort | tr '\n' ' ')
	[ "${first:-0x0000}" = 0x0000 ] && first=-
	echo "$first ${rest% }"
}

conf=$FAB_TMP/partitions.conf

for topo in $TOPOS; do
	name=${topo%.net}
	net=$FAB_TOPO/$topo
	[ -e "$net" ] || { fab_fail "$name-exists" "$net missing"; continue; }

	# OpenSM first, on a fresh simulator.
	if ! command -v opensm >/dev/null; then
		fab_fail "$name-opensm" "opensm is not installed (tools/bootstrap.sh installs it)"
		continue
	fi
	fab_sim_start "$net" "p-osm-$name" || { fab_fail "$name-sim" "ibsim"; continue; }
	write_conf "$conf"
	mkdir -p "$FAB_TMP/osm-$name"
	OSM_CACHE_DIR=$FAB_TMP/osm-$name OSM_TMP_DIR=$FAB_TMP/osm-$name \
		fab_run H0001 opensm -o -P "$conf" -f "$FAB_TMP/osm-$name/osm.log" \
		>"$FAB_TMP/osm-$name/out" 2>&1
	pkey_sets "$FAB_TMP/osm-$name.sets"
	fab_sim_stop

	fab_sim_start "$net" "p-ibsm-$name" || { fab_fail "$name-sim" "ibsim"; continue; }
	if fab_ibsm H0001 "$FAB_TMP/ibsm-$name" -P "$conf"; then
		fab_pass "$name-ibsm-up"
	else
		fab_fail "$name-ibsm-up" "$(tail -n 5 "$FAB_TMP/ibsm-$name.err" "$FAB_TMP/ibsm-$name.log")"
	fi
	pkey_sets "$FAB_TMP/ibsm-$name.sets"
	n=$(wc -l <"$FAB_TMP/ibsm-$name.sets")
	if [ "$n" -gt 0 ] && diff "$FAB_TMP/osm-$name.sets" "$FAB_TMP/ibsm-$name.sets" \
		>"$FAB_TMP/$name.diff"; then
		fab_pass "$name-pkeys-as-opensm ($n ports)"
	else
		fab_fail "$name-pkeys-as-opensm" "$(head -n 12 "$FAB_TMP/$name.diff")"
	fi
	# Something beyond the default partition really was programmed.
	if grep -q "0x8010" "$FAB_TMP/ibsm-$name.sets" &&
		grep -q " 0x0011" "$FAB_TMP/ibsm-$name.sets"; then
		fab_pass "$name-partitions-programmed"
	else
		fab_fail "$name-partitions-programmed" "$(head -n 4 "$FAB_TMP/ibsm-$name.sets")"
	fi
	fab_sim_stop
done

# ------------------------------------------------ SA paths and SIGHUP
fab_sim_start "$FAB_TOPO/fat2-small.net" p-sa || { fab_summary; exit 1; }
write_conf "$conf"
if ! fab_ibsm_start H0001 "$FAB_TMP/sm" -P "$conf" -s 0 -J "$FAB_TMP/sm/ibsm.pid" \
	--control-socket "$FAB_TMP/sm/ctl.sock"; then
	fab_fail sa-ibsm-up "no SUBNET UP"
	fab_summary
	exit 1
fi
topo=$FAB_TMP/sa.topo
fab_run "$DIAG" ibnetdiscover -p >"$topo" 2>/dev/null
lid_of() {
	awk -v h="'$1 HCA-1'" '$1 == "CA" && index($0, h) { print $2; exit }' "$topo"
}
l4=$(lid_of H0004)
l5=$(lid_of H0005)
l3=$(lid_of H0003)

# paths SLID DLID PKEY: the P_Keys of the PathRecords saquery gets.
paths() {
	fab_run "$DIAG" saquery PR --slid "$1" --dlid "$2" --pkey "$3" 2>/dev/null |
		sed -n 's/^[[:space:]]*pkey[. ]*//p'
}
# H0004 and H0005 are both limited members of storage (0x0010), the only
# partition of theirs in which nobody is full between them.
got=$(paths "$l4" "$l5" 0x0010)
if [ -z "$got" ]; then
	fab_pass sa-limited-limited-no-path
else
	fab_fail sa-limited-limited-no-path "got P_Key $got"
fi
# H0003 is a full member of storage: a path, with storage's key.
got=$(paths "$l3" "$l4" 0x0010)
if [ -n "$got" ] && (( (got & 0x7fff) == 0x0010 )); then
	fab_pass "sa-full-limited-path ($got)"
else
	fab_fail sa-full-limited-path "got '${got:-no path}'"
fi

# ups: the sweeps ibsm has finished as master ("SUBNET UP" lines);
# wait_sweep N: wait (at most 10 s) until it has finished more than N.
ups() {
	grep -c 'SUBNET UP$' "$FAB_TMP/sm/ibsm.log"
}
wait_sweep() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(ups)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# Signals go to ibsm itself: GNU timeout, between fab_spawn and ibsm,
# relays a SIGHUP and then kills its child 5 s later (-k).
smpid=$(fab_descendant "$FAB_SM_BG" ibsm)

# A broken file on SIGHUP: nothing changes, the log names FILE:LINE.
before=$FAB_TMP/before.sets
pkey_sets "$before"
cp "$conf" "$conf.good"
printf 'broken=0x0020 : ALL=full\n# no semicolon above, and:\nbad=0xZZ : ALL ;\n' >>"$conf"
n=$(ups)
kill -HUP "$smpid"
for ((i = 0; i < 50; i++)); do
	grep -q "partitions.conf:[0-9]*:[0-9]*:" "$FAB_TMP/sm/ibsm.log" && break
	sleep 0.1
done
wait_sweep "$n"		# the heavy sweep SIGHUP asked for
if grep -q "partitions.conf:[0-9]*:[0-9]*:" "$FAB_TMP/sm/ibsm.log" &&
	grep -q "ERR 0704" "$FAB_TMP/sm/ibsm.log"; then
	fab_pass sighup-broken-file-logged
else
	fab_fail sighup-broken-file-logged "$(grep ERR "$FAB_TMP/sm/ibsm.log" | tail -n 3)"
fi
after=$FAB_TMP/after.sets
pkey_sets "$after"
if diff "$before" "$after" >/dev/null; then
	fab_pass sighup-broken-file-tables-unchanged
else
	fab_fail sighup-broken-file-tables-unchanged "$(diff "$before" "$after" | head -n 5)"
fi

# The fixed file (one more partition with H0007) applies without restart.
cp "$conf.good" "$conf"
g7=$(guid_of H0007)
echo "late=0x0030 : $g7=full ;" >>"$conf"
kill -HUP "$smpid"
l7=$(awk -v h="'H0007 HCA-1'" '$1 == "CA" && index($0, h) { print $2; exit }' "$topo")
for ((i = 0; i < 50; i++)); do
	fab_run "$DIAG" smpquery pkeys "$l7" 1 2>/dev/null | grep -q 0x8030 && break
	sleep 0.2
done
if fab_run "$DIAG" smpquery pkeys "$l7" 1 2>/dev/null | grep -q 0x8030; then
	fab_pass sighup-fixed-file-applied
else
	fab_fail sighup-fixed-file-applied "no 0x8030 on H0007"
fi
# -J wrote ibsm's pid; ibsmctl partitions add + apply through it.
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
if [ "$(cat "$FAB_TMP/sm/ibsm.pid" 2>/dev/null)" = "$smpid" ]; then
	fab_pass pidfile-holds-pid
else
	fab_fail pidfile-holds-pid "'$(cat "$FAB_TMP/sm/ibsm.pid" 2>&1)' vs $smpid"
fi
fab_check ctl-add "$CTL" partitions add "$conf" "applied=0x0031 : $g7=full"
fab_check ctl-apply "$CTL" partitions apply "$conf" --pidfile "$FAB_TMP/sm/ibsm.pid"
for ((i = 0; i < 50; i++)); do
	fab_run "$DIAG" smpquery pkeys "$l7" 1 2>/dev/null | grep -q 0x8031 && break
	sleep 0.2
done
if fab_run "$DIAG" smpquery pkeys "$l7" 1 2>/dev/null | grep -q 0x8031; then
	fab_pass ctl-apply-programmed
else
	fab_fail ctl-apply-programmed "no 0x8031 on H0007"
fi

# keep_pkey_indexes (the default, as OpenSM's): a partition removed and
# another added leave H0007's other keys at their index, which is what
# its IPoIB child interfaces hold.  late (0x0030) sits before applied
# (0x0031) in H0007's table; without keep_pkey_indexes the table would be
# packed anew and 0x8031 would move into late's place.
# idx LID KEY: the index of KEY in port 1's table (nothing when absent).
idx() {
	fab_run "$DIAG" smpquery pkeys "$1" 1 2>/dev/null |
		sed -n 's/^ *[0-9]*: //p' | tr -s ' ' '\n' | grep -v '^$' |
		awk -v k="$2" '$1 == k { print NR - 1; exit }'
}
i30=$(idx "$l7" 0x8030)
i31=$(idx "$l7" 0x8031)
grep -v '^late=0x0030' "$conf" >"$conf.new"
echo "later=0x0032 : $g7=full ;" >>"$conf.new"
mv -f "$conf.new" "$conf"
kill -HUP "$smpid"
for ((i = 0; i < 50; i++)); do
	[ -n "$(idx "$l7" 0x8032)" ] && break
	sleep 0.2
done
n30=$(idx "$l7" 0x8030)
n31=$(idx "$l7" 0x8031)
n32=$(idx "$l7" 0x8032)
if [ -n "$i30" ] && [ -n "$i31" ] && [ "$i30" -lt "$i31" ] &&
	[ -z "$n30" ] && [ "$n31" = "$i31" ] && [ -n "$n32" ] && [ "$n32" -gt "$n31" ]; then
	fab_pass "keep-pkey-indexes (0x8031 stays at $i31, 0x8032 at $n32)"
else
	fab_fail keep-pkey-indexes "before 0x8030@$i30 0x8031@$i31; after 0x8030@$n30 0x8031@$n31 0x8032@$n32"
fi
# Changed on disk with no SIGHUP: read again at the next heavy sweep (as
# OpenSM reads it at every heavy sweep).  The sweep asked for at once
# finds the file still being written (less than a second old): it is
# read once it has settled, and another heavy sweep applies it.
echo "ondisk=0x0033 : $g7=full ;" >>"$conf"
"$CTL" --socket "$FAB_TMP/sm/ctl.sock" resweep heavy >/dev/null
for ((i = 0; i < 50; i++)); do
	[ -n "$(idx "$l7" 0x8033)" ] && break
	sleep 0.2
done
if [ -n "$(idx "$l7" 0x8033)" ] &&
	grep -q "partitions: .* changed on disk since it was read" "$FAB_TMP/sm/ibsm.log"; then
	fab_pass changed-on-disk-applied-without-sighup
else
	fab_fail changed-on-disk-applied-without-sighup "no 0x8033 on H0007"
fi

# An emptied file: refused, as it would drop every partition in force.
pkey_sets "$before"
cp "$conf" "$conf.full"
: >"$conf"
n=$(ups)
kill -HUP "$smpid"
for ((i = 0; i < 50; i++)); do
	grep -q "ERR 0708" "$FAB_TMP/sm/ibsm.log" && break
	sleep 0.1
done
wait_sweep "$n"		# the heavy sweep SIGHUP asked for
# H0007's partition keys, H0003's storage key (full) and the default key
# at index 0 on both: what an applied empty file would take away.
l3i=$(idx "$l3" 0x8010)
l7i=$(idx "$l7" 0x8031)
l7d=$(idx "$l7" 0xffff)
if grep -q "ERR 0708" "$FAB_TMP/sm/ibsm.log" && [ -n "$l3i" ] && [ -n "$l7i" ] &&
	[ "$l7d" = 0 ]; then
	fab_pass sighup-empty-file-refused
else
	fab_fail sighup-empty-file-refused "0x8010@${l3i:-none} on H0003, 0x8031@${l7i:-none} 0xffff@${l7d:-none} on H0007"
fi
# SIGHUPs racing a cp over the file (truncate, then write): the reads
# that find it empty or changing are refused or read again.
cp "$conf.full" "$conf"
mark=$(wc -l <"$FAB_TMP/sm/ibsm.log")
( for ((k = 0; k < 400; k++)); do cp "$conf.full" "$conf"; done ) &
cpid=$!
lost=0
for ((i = 0; i < 100; i++)); do
	kill -HUP "$smpid"
	sleep 0.01
	if ((i % 20 == 10)) && [ -z "$(idx "$l7" 0x8031)" ]; then
		lost=$((lost + 1))
	fi
done
wait "$cpid"
kill -HUP "$smpid"	# the file at rest
sleep 2
pkey_sets "$after"
refused=$(tail -n +"$mark" "$FAB_TMP/sm/ibsm.log" | grep -c "ERR 0708")
dropped=$(tail -n +"$mark" "$FAB_TMP/sm/ibsm.log" |
	grep -c "partitions: [0-9]* added, [1-9][0-9]* removed")
if [ "$lost" -eq 0 ] && [ "$dropped" -eq 0 ] && diff "$before" "$after" >/dev/null; then
	fab_pass "sighup-copy-race-tables-unchanged ($refused empty reads refused)"
else
	fab_fail sighup-copy-race-tables-unchanged "lost $lost samples, $dropped reloads removed partitions; $(diff "$before" "$after" | head -n 3)"
fi
# Forced through the control socket, the empty file applies: every CA
# a full member of the default partition, as OpenSM (0xffff).
: >"$conf"
n=$(ups)
fab_check apply-force "$CTL" partitions apply "$conf" --force --socket "$FAB_TMP/sm/ctl.sock"
for ((i = 0; i < 50; i++)); do
	[ -z "$(idx "$l7" 0x8031)" ] && break
	sleep 0.2
done
wait_sweep "$n"		# the sweep that programs them all
pkey_sets "$after"
if [ -s "$after" ] && ! awk '$1 == "CA" && ($3 != "0xffff" || NF > 3) { bad = 1 } END { exit !bad }' "$after"; then
	fab_pass empty-file-forced-is-full-default
else
	fab_fail empty-file-forced-is-full-default "$(grep '^CA' "$after" | head -n 3)"
fi
if fab_ibsm_stop; then
	fab_pass partitions-ibsm-clean-exit
else
	fab_fail partitions-ibsm-clean-exit "exit status or sanitizer report"
fi
if [ ! -e "$FAB_TMP/sm/ibsm.pid" ]; then
	fab_pass pidfile-removed-at-exit
else
	fab_fail pidfile-removed-at-exit
fi
fab_sim_stop
fab_summary
