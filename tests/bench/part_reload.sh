#!/usr/bin/env bash
# tests/bench/part_reload.sh - partitions reload: ibsm beside OpenSM 3.3.23.
#
# One ibsim fabric (default tests/topologies/fat2-1152.net: 1,152 hosts).
# Each SM in turn (OpenSM first, then ibsm, from host H0001) starts with a
# partitions file holding only `Default=0x7fff, ipoib : ALL=full ;`,
# brings the subnet up, and then gets these reloads (the file is replaced
# atomically, then SIGHUP):
#
#   add	a partition 0x0a01 whose members are the port GUIDs of every host
#	(full): every host's table and the switch port facing it change
#   add2	another such partition (0x0a02): for OpenSM this one runs at
#	log_flags 0x0b (its P_KeyTable Sets are only in its debug log, as
#	"Setting P_KeyTable (0x16)", one line per block sent); the timing
#	of `add` is at the default log_flags 0x03, without that cost
#   same	the same file again: no table changes
#   10k	the 10,003-line file of tests/bench/part_bench (1,668 partitions,
#	12 GUID members each and ALL_SWITCHES=limited)
#   back	the add2 file again (undoes 10k)
#   10k2	the 10k file again, the same change as 10k: for OpenSM at
#	log_flags 0x03 (10k ran at 0x0b to count its Sets)
#
# and for each, the time from the SIGHUP to the SM's next "SUBNET UP"
# (its log's own timestamp: the end of the heavy sweep that programmed
# every table), the P_KeyTable Sets it sent in that sweep (ibsm's own
# count from its heavy sweep line, "N of them P_KeyTable"; OpenSM's from
# its debug log: add2, same and 10k run at log_flags 0x0b; ibsim has no
# MAD counter per attribute), and the log lines about keys that did not
# fit a table (OpenSM: ERR 0512, one per key and port; ibsm: ERR 0707,
# rate-limited, and one ERR 0706 summary).  Then the parse alone: ibsm's part_bench on
# the same 10k file (mean of 20 parses, in process); OpenSM parses the file
# inside every heavy sweep (osm_prtn_make_partitions()) and has no
# separate parse, so its figure is the `10k` reload beside `same`.
#
#	tests/bench/part_reload.sh [-n NETFILE] [-k]
#
#	-n NETFILE	another ibsim topology
#	-k		keep the temp dir (logs, partition files)
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing); part_bench is next to it in
# tests/bench/.  Not part of tests/run; takes a few minutes (OpenSM's
# bring-up of 1,152 hosts under the preload).
set -u -o pipefail

user_ibsm=${IBSM:-}
FAB_TIMEOUT=${FAB_TIMEOUT:-1800}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

net=$FAB_TOPO/fat2-1152.net
while getopts "n:kh" opt; do
	case $opt in
	n) net=$OPTARG ;;
	k) FAB_KEEP=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done

die() {
	echo "bench: $*" >&2
	exit 1
}

command -v opensm >/dev/null || die "opensm missing (apt-get install opensm)"
if [ -n "$user_ibsm" ]; then
	IBSM=$(readlink -f "$user_ibsm")
else
	IBSM=$FAB_TOP/build/release/sm/ibsm
	[ -x "$IBSM" ] || "$FAB_TOP/tools/bootstrap.sh" release >/dev/null ||
		die "release build failed"
fi
[ -x "$IBSM" ] || die "$IBSM is not built"
BENCH=$(dirname "$IBSM")/../tests/bench/part_bench
[ -x "$BENCH" ] || die "$BENCH is not built"
if ldd "$IBSM" 2>/dev/null | grep -q 'lib[atu]*san'; then
	echo "bench: warning: $IBSM is a sanitizer build; its numbers mean little" >&2
fi

net=$(readlink -f "$net")
echo "fabric: $(grep -c '^Hca' "$net") hosts, $(grep -c '^Switch' "$net") switches ($(basename "$net"))"
echo "ibsm:   $IBSM"
echo "opensm: $(command -v opensm) ($(opensm --version 2>/dev/null | grep -m1 -o 'OpenSM [0-9.]*'))"
fab_sim_start "$net" reload || die "ibsim did not start"

# The partition files.  Host port GUIDs from ibnetdiscover -p (CA lines:
# TYPE LID PORT GUID ...).
fab_run H0001 ibnetdiscover -p >"$FAB_TMP/topo" 2>/dev/null ||
	die "ibnetdiscover failed"
awk '$1 == "CA" { print $4 }' "$FAB_TMP/topo" | sort -u >"$FAB_TMP/guids"
nguids=$(wc -l <"$FAB_TMP/guids")
[ "$nguids" -gt 0 ] || die "no host GUIDs"
P=$FAB_TMP/parts
mkdir -p "$P"
echo 'Default=0x7fff, ipoib : ALL=full ;' >"$P/base.conf"
# members NAME PKEY: a partition of every host port GUID, full.
members() {
	echo "$1=$2, ipoib :"
	sed 's/$/=full,/' "$FAB_TMP/guids" | sed '$ s/,$/ ;/'
}
{ cat "$P/base.conf"; members reload_a 0x0a01; } >"$P/add.conf"
{ cat "$P/add.conf"; members reload_b 0x0a02; } >"$P/add2.conf"
cp "$P/add2.conf" "$P/same.conf"
"$BENCH" -o "$P/10k.conf" 10000 >"$FAB_TMP/bench.out" || die "part_bench failed"
echo "files:  add/add2 $((nguids)) GUID members; 10k $(wc -l <"$P/10k.conf") lines"

# put SRC DST: replace DST atomically (what an editor or ibsmctl does).
put() {
	cp "$1" "$2.tmp" && mv -f "$2.tmp" "$2"
}

# wait_line FILE REGEX AFTER SECONDS: the number of the first line past
# line AFTER that matches REGEX, waiting for it.
wait_line() {
	local f=$1 re=$2 after=$3 limit=$4 i n
	for ((i = 0; i < limit * 10; i++)); do
		n=$(tail -n +"$((after + 1))" "$f" 2>/dev/null |
			awk -v re="$re" '$0 ~ re { print NR; exit }')
		if [ -n "$n" ]; then
			echo $((after + n))
			return 0
		fi
		sleep 0.1
	done
	return 1
}

lines() {
	wc -l <"$1"
}

# log_epoch FILE LINE: the time stamp of that log line, in seconds since
# the epoch.  OpenSM: "Nov 23 17:32:54 969718 [...]"; ibsm: "Nov 23
# 17:29:43.959919 [INFO] ...".
log_epoch() {
	local l
	l=$(sed -n "$2p" "$1")
	read -r m d t u _ <<<"$l"
	if [[ $t == *.* ]]; then
		date -d "$m $d $t" +%s.%N
	else
		date -d "$m $d $t.$u" +%s.%N
	fi
}

# Results: rows "SM STEP SECONDS PKEY_SETS DROP_LINES".
: >"$FAB_TMP/rows"

# reload SM LOG PID FILE STEP SETS_FN: put FILE in force, SIGHUP, wait for
# SUBNET UP, record the time and what SETS_FN LOG FROM TO prints.
reload() {
	local sm=$1 log=$2 pid=$3 file=$4 step=$5 fn=$6 from to t0 t1 sets
	put "$P/$file.conf" "$FAB_TMP/$sm-part.conf"
	from=$(lines "$log")
	t0=$(date +%s.%N)
	kill -HUP "$pid" || die "$sm: cannot signal $pid"
	to=$(wait_line "$log" 'SUBNET UP$' "$from" 600) ||
		die "$sm: no SUBNET UP after the SIGHUP ($step)"
	t1=$(log_epoch "$log" "$to")
	sets=$($fn "$log" "$from" "$to")
	echo "$sm $step $(sm_elapsed "$t0" "$t1") $sets" >>"$FAB_TMP/rows"
	printf '%-7s %-5s SIGHUP -> SUBNET UP %8.3f s, P_KeyTable Sets and drop lines %s\n' \
		"$sm" "$step" "$(sm_elapsed "$t0" "$t1")" "$sets"
	# Let the SM settle: a light sweep or two before the next step.
	sleep 2
}

# osm_sets LOG FROM TO: "SETS DROP_LINES" of that part of OpenSM's log.
osm_sets() {
	local n d
	n=$(sed -n "$(($2 + 1)),$3p" "$1" | grep -c 'Setting P_KeyTable (0x16)')
	d=$(sed -n "$(($2 + 1)),$3p" "$1" | grep -c 'ERR 0512')
	grep -q '^log_flags 0x0b' "$FAB_TMP/opensm.conf" || n=-
	echo "$n $d"
}

# ibsm_sets LOG FROM TO: the same of ibsm's log.
ibsm_sets() {
	local n d
	n=$(sed -n "$(($2 + 1)),$3p" "$1" | grep -o '[0-9]* of them P_KeyTable' |
		awk '{ s += $1 } END { print s + 0 }')
	d=$(sed -n "$(($2 + 1)),$3p" "$1" | grep -c 'ERR 070[67]')
	echo "$n $d"
}

# ------------------------------------------------------------- OpenSM
osm_conf() {
	printf 'log_flags %s\nforce_log_flush TRUE\n' "$1" >"$FAB_TMP/opensm.conf.tmp" &&
		mv -f "$FAB_TMP/opensm.conf.tmp" "$FAB_TMP/opensm.conf"
}
mkdir -p "$FAB_TMP/osm"
osm_conf 0x03
put "$P/base.conf" "$FAB_TMP/opensm-part.conf"
t0=$(date +%s.%N)
OSM_CACHE_DIR=$FAB_TMP/osm OSM_TMP_DIR=$FAB_TMP/osm fab_spawn H0001 opensm \
	-F "$FAB_TMP/opensm.conf" -P "$FAB_TMP/opensm-part.conf" \
	-f "$FAB_TMP/opensm.log" >"$FAB_TMP/opensm.out" 2>&1
osm_bg=$FAB_SPAWN_PID
sleep 1
osm_pid=$(fab_descendant "$osm_bg" opensm) || die "opensm did not start"
: >>"$FAB_TMP/opensm.log"
wait_line "$FAB_TMP/opensm.log" 'SUBNET UP$' 0 900 >/dev/null ||
	die "opensm: no SUBNET UP"
echo "opensm: up within $(sm_elapsed "$t0" "$(date +%s.%N)") s"
sleep 5
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" add add osm_sets
osm_conf 0x0b		# re-read on the next SIGHUP
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" add2 add2 osm_sets
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" same same osm_sets
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" 10k 10k osm_sets
osm_conf 0x03
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" add2 back osm_sets
reload opensm "$FAB_TMP/opensm.log" "$osm_pid" 10k 10k2 osm_sets
kill -TERM "$osm_bg" 2>/dev/null
wait "$osm_bg" 2>/dev/null
rm -f "$FAB_TMP/pids/$osm_bg"

# ---------------------------------------------------------------- ibsm
mkdir -p "$FAB_TMP/ibsm"
put "$P/base.conf" "$FAB_TMP/ibsm-part.conf"
t0=$(date +%s.%N)
fab_spawn H0001 "$IBSM" -P "$FAB_TMP/ibsm-part.conf" -f "$FAB_TMP/ibsm.log" \
	--cache-dir "$FAB_TMP/ibsm" --dump-dir "$FAB_TMP/ibsm" \
	>"$FAB_TMP/ibsm.out" 2>&1
ibsm_bg=$FAB_SPAWN_PID
sleep 0.5
ibsm_pid=$(fab_descendant "$ibsm_bg" ibsm) || die "ibsm did not start"
: >>"$FAB_TMP/ibsm.log"
wait_line "$FAB_TMP/ibsm.log" 'SUBNET UP$' 0 900 >/dev/null ||
	die "ibsm: no SUBNET UP"
echo "ibsm:   up within $(sm_elapsed "$t0" "$(date +%s.%N)") s"
sleep 5
for step in add add2 same 10k add2:back 10k:10k2; do
	reload ibsm "$FAB_TMP/ibsm.log" "$ibsm_pid" "${step%:*}" "${step#*:}" \
		ibsm_sets
done
kill -TERM "$ibsm_pid" 2>/dev/null
wait "$ibsm_bg" 2>/dev/null
rm -f "$FAB_TMP/pids/$ibsm_bg"

# --------------------------------------------------------------- table
parse_ms=$(sed -n 's/.*parse \([0-9.]*\) ms.*/\1/p' "$FAB_TMP/bench.out")
row() {
	awk -v s="$1" -v t="$2" -v c="$3" '$1 == s && $2 == t { print $c }' "$FAB_TMP/rows"
}
echo
printf '%-44s %12s %12s\n' "" "OpenSM" "ibsm"
for step in add add2 same 10k back 10k2; do
	printf '%-44s %12s %12s\n' "SIGHUP ($step) -> SUBNET UP, s" \
		"$(row opensm $step 3)" "$(row ibsm $step 3)"
	printf '%-44s %12s %12s\n' "  P_KeyTable Sets in that sweep" \
		"$(row opensm $step 4)" "$(row ibsm $step 4)"
	[[ $step == 10k* ]] &&
		printf '%-44s %12s %12s\n' "  log lines about keys that did not fit" \
			"$(row opensm $step 5)" "$(row ibsm $step 5)"
done
printf '%-44s %12s %12s\n' "parse of the 10k file alone, ms" "-" "$parse_ms"
echo "(OpenSM: add, back and 10k2 at log_flags 0x03, its Sets not logged"
echo " there; add2, same and 10k at 0x0b, whose debug log costs it time."
echo " It parses the file in every heavy sweep: 10k2 - back is its cost of"
echo " the 10k file with the tables it changes; ibsm parses on SIGHUP only)"
