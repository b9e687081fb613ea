#!/usr/bin/env bash
# tests/fabric/test_bringup.sh - ibsm brings subnets up, as the diags see it.
#
# Every verdict comes from infiniband-diags (ibnetdiscover, iblinkinfo,
# ibroute, smpquery, sminfo) run from another host, never from ibsm's own
# output; route_check.py walks the LFTs the diags dumped.
#
#  a. bringup: every bundled topology (tests/topologies/*.net), ibsm as a
#     daemon on H0001 with -p 5: "SUBNET UP" in its log, then every link is
#     Active/LinkUp at both ends (as many linked ports as the .net file
#     has), every switch and CA port has a unique non-zero LID, every LID is
#     reached from every CA port over the LFTs without a loop, sminfo from
#     H0002 says SMINFO_MASTER with H0001's port GUID, its LID and priority
#     5, and the daemon exits 0 on SIGTERM.
#  b. restart: LIDs survive a restart of the whole fabric through the
#     guid2lid cache.  A few ports get odd LIDs first (ibsim Baselid) so
#     that ibsm's assignment differs from the one a fresh start would give;
#     ibsm -o; LIDs recorded; ibsim restarted (every LID 0); ibsm -o with
#     the same cache dir: the same LIDs, and a valid subnet.  Then the
#     cache against OpenSM's: OpenSM -o on a fresh fabric with ibsm's
#     guid2lid must give the same LIDs, and ibsm -o on a fresh fabric with
#     the guid2lid OpenSM wrote must give OpenSM's LIDs.
#  c. lmc: ibsm -o -l 2 on dual-rail hosts: every CA port has LMC 2, a base
#     LID that is a multiple of 4 and SMLid = the SM's LID (smpquery
#     portinfo), no overlapping ranges, all 4 LIDs of every port routed.
#  d. unlink/relink: ibsm daemon on fat3-pods; Unlink a leaf-spine link,
#     wait for the next "SUBNET UP" in the log, then the checks of (a) with
#     that link gone and no LFT entry pointing out of its two ports; ReLink,
#     the same with the link back; sminfo still names ibsm master.  TIMING
#     lines: event -> "SUBNET UP" (log time stamp minus the time the console
#     command was sent) and event -> routes verified by the diags.  The
#     Unlink is re-routed incrementally (fewer LFT blocks than a full
#     re-route, from the log), the ReLink fully (a link is new).  The
#     Unlink's trap is answered by a quick sweep (sm/quick.c: the switch
#     that trapped is read, the rest comes from the model), from the log.
#     Then a host's link: Unlink (the quick sweep leaves the host out;
#     the checks of (a) with it gone) and ReLink (it is back).
#  e. drops, with ibsm -o, errors cleared afterwards, then the checks of (a):
#     e1 ("drops10-smport"): the SM's port drops 10% of the MADs entering
#        it: exactly 10% of the SMPs lost, on fat3-pods;
#     e2 ("drops10-switches"): `Error "<switch>" 10` on every switch of
#        fat2-small: every MAD is dropped with 10% probability at each
#        switch port it enters, so an SMP that enters n switch ports on its
#        way there and back is lost with probability 1 - 0.9^n (47% for a
#        host on another leaf, n = 6);
#     e3 ("drops10-switches-restart"): e2 again on the subnet e2 brought
#        up (an SM restarting on a lossy fabric, same cache).
#        BRINGUP_LOSSY_RESTART=0 skips it.
#     e4 ("drops10-daemon-recovers"): the daemon (-s 2) on fat2-small with
#        the loss of e2 while a host link flaps three times (heavy sweeps
#        under loss); then the loss ends, and within RECOVER_S (12) seconds
#        the checks of (a) must pass again.
#     e5 ("drops50-one-switch"): one spine of fat3-pods drops half of the
#        MADs entering it; the sweep completes (checks of (a)) and ibsm's
#        "SMP window" line shows destinations throttled after losses there
#        (their own windows shrank) while the SMP window stayed above its
#        start (one bad switch does not slow the whole sweep).
#  f. LID-routed SMPs: the daemon on fat2-small with a control socket.  The
#     first heavy sweep's "heavy sweep SMPs:" line counts 0 LID-routed
#     SMPs (nothing is programmed yet); `ibsmctl resweep heavy` then makes
#     a sweep that sends most of its SMPs LID-routed with no fallback
#     (its line, and smps_lid_routed in `ibsmctl status`), and the diags'
#     checks of (a) pass after it.  Then `Unlink "spine-02"[2]`: the LFT
#     routes of some leaf-02 ports cross that link, so the sweep its trap
#     starts sends nothing LID-routed (0 LID-routed, 0 fell back) and the
#     checks of (a) pass with the link gone; a resweep after it is
#     LID-routed again, on the new routes, without a loss.  ReLink: the
#     same (trap sweep all directed route, then a LID-routed resweep),
#     and the checks of (a) pass.  The fallback of a lost LID-routed SMP
#     to directed route is unit-tested (check_engine, check_discover).
#
# One "PASS name" / "FAIL name" line per check, then "N passed, M failed".
# Settings: TOPOS="tiny fat2-small" limits (a) to those files; PARTS="a d"
# runs only those parts; FAB_KEEP=1 keeps the files; $IBSM is the daemon.
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

RC=$FAB_LIB/route_check.py
# Clients run from $FAB_TMP/run: the daemon's path must be absolute.
[ -e "$IBSM" ] && IBSM=$(readlink -f "$IBSM")
SM_NODE=H0001
DIAG=$SM_DIAG_HOST
PRIO=5
PARTS=${PARTS:-a b c d e f}
START=$SECONDS

ibsm_ok=1
if [ ! -x "$IBSM" ]; then
	ibsm_ok=0
	fab_log "test_bringup: $IBSM is not built; every check fails"
fi

part() {
	[[ " $PARTS " == *" $1 "* ]]
}

# show FILE...: indented head of files, for a FAIL's context.
show() {
	cat "$@" 2>/dev/null | head -n 20 | sed 's/^/    /'
}

# check_subnet NAME DIR NETFILE [LMC [ENDS_DELTA [--avoid GUID:PORT...]]]:
# the diags' view from $DIAG into DIR, then PASS/FAIL NAME-links,
# NAME-lids, NAME-routes.  ENDS_DELTA (default 0) is added to the linked
# port count of NETFILE (-2 with one link unlinked).
check_subnet() {
	local name=$1 dir=$2 net=$3 lmc=${4:-0} delta=${5:-0} ends rc=0
	shift $(($# < 5 ? $# : 5))
	ends=$(($(sm_net_ends "$net") + delta))
	if ! sm_diags "$DIAG" "$dir" "$lmc"; then
		fab_fail "$name-diags" "a diag tool failed"
		show "$dir/errors"
		rc=1
	fi
	fab_check "$name-links" python3 "$RC" --max 8 links "$dir/links" --ends "$ends" || rc=1
	fab_check "$name-lids" python3 "$RC" --max 8 lids "$dir/topo" --lmc "$lmc" || rc=1
	fab_check "$name-routes" python3 "$RC" --max 8 routes "$dir/topo" "$dir/lfts" \
		--lmc "$lmc" "$@" || rc=1
	return "$rc"
}

# port_field TOPO NODE PORT FIELD: from `ibnetdiscover -p` output, the LID
# (FIELD 2) or port GUID (FIELD 4) of port PORT of the node whose
# description starts with "NODE " (or is NODE).
port_field() {
	awk -v node="$2" -v port="$3" -v f="$4" '
	$1 == "CA" || $1 == "SW" {
		s = $0
		i = index(s, "'\''")
		if (!i) next
		d = substr(s, i + 1)
		d = substr(d, 1, index(d, "'\''") - 1)
		if ($3 == port && (d == node || index(d, node " ") == 1)) {
			print $f
			exit
		}
	}' "$1"
}

# hexnorm 0xGUID: lower case, no 0x, no leading zeros.
hexnorm() {
	local h=${1#0x}
	h=${h,,}
	while [[ $h == 0?* ]]; do
		h=${h#0}
	done
	echo "$h"
}

# check_sminfo NAME TOPO: sminfo from $DIAG names H0001's port as master
# with priority $PRIO.
check_sminfo() {
	local name=$1 topo=$2 out guid lid want_guid want_lid
	out=$(fab_run "$DIAG" sminfo 2>&1)
	want_guid=$(port_field "$topo" "$SM_NODE" 1 4)
	want_lid=$(port_field "$topo" "$SM_NODE" 1 2)
	# sminfo: sm lid 1 sm guid 0x100001, activity count 5 priority 5 state 3 SMINFO_MASTER
	guid=$(sed -n 's/.*sm guid \(0x[0-9a-fA-F]*\),.*/\1/p' <<<"$out")
	lid=$(sed -n 's/.*sm lid \([0-9]*\) .*/\1/p' <<<"$out")
	if [[ $out == *SMINFO_MASTER* ]] && [[ $out =~ priority\ $PRIO\ state ]] &&
		[ -n "$guid" ] && [ -n "$want_guid" ] &&
		[ "$(hexnorm "$guid")" = "$(hexnorm "$want_guid")" ] &&
		[ "$lid" = "$want_lid" ]; then
		fab_pass "$name"
	else
		fab_fail "$name" "want master $want_guid LID $want_lid priority $PRIO"
		echo "    $out"
	fi
}

# stop_sm NAME: SIGTERM the daemon; PASS NAME when it exits 0 (no
# sanitizer report).
stop_sm() {
	local rc
	sm_stop
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fab_pass "$1"
	else
		fab_fail "$1" "exit $rc after SIGTERM"
		show "$SM_OUT.out"
		tail -n 5 "$SM_OUT.log" 2>/dev/null | sed 's/^/    /'
	fi
}

# run_once NAME OUT HOST [IBSM OPTIONS...]: ibsm -o from HOST, cache and
# dumps in OUT.cache (kept between runs), log OUT.log; PASS NAME on exit 0.
run_once() {
	local name=$1 out=$2 host=$3 rc
	shift 3
	mkdir -p "$out.cache"
	fab_run "$host" "$IBSM" -o -f "$out.log" --cache-dir "$out.cache" \
		--dump-dir "$out.cache" "$@" >"$out.summary" 2>"$out.err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fab_pass "$name"
		echo "    ibsm: $(head -n 1 "$out.summary")"
	else
		fab_fail "$name" "ibsm -o exit $rc"
		show "$out.summary" "$out.err"
		grep -E 'ERR|WARN' "$out.log" 2>/dev/null | tail -n 5 | sed 's/^/    /'
	fi
	return "$rc"
}

# lid_map TOPO: "GUID PORT LID" of every CA port and every switch (port 0).
lid_map() {
	awk '$1 == "CA" { print $4, $3, $2 } $1 == "SW" { print $4, 0, $2 }' "$1" |
		sort -u
}

# switch_names NET: the names of the switches of an ibsim topology file.
switch_names() {
	awk '$1 == "Switch" { s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); print s }' "$1"
}

# ---- a. bring-up of every bundled topology --------------------------------
if part a; then
	mapfile -t topos < <(fab_topologies)
	for net in "${topos[@]}"; do
		name=$(basename "$net" .net)
		[ "$ibsm_ok" = 1 ] || {
			fab_fail "$name-up" "ibsm not built"
			continue
		}
		fab_sim_start "$net" "$name" || {
			fab_fail "$name-ibsim" "ibsim did not start"
			continue
		}
		out=$FAB_TMP/$name.sm
		t0=$(date +%s.%N)
		sm_start "$SM_NODE" "$out" -p "$PRIO"
		if line=$(sm_wait_up "$out" 0 120); then
			t1=$(sm_log_epoch "$line")
			fab_pass "$name-up"
			echo "    SUBNET UP $(sm_elapsed "$t0" "$t1") s after start"
			check_subnet "$name" "$FAB_TMP/$name.diags" "$net"
			check_sminfo "$name-sminfo" "$FAB_TMP/$name.diags/topo"
		else
			fab_fail "$name-up" "no SUBNET UP in the log"
			show "$out.out"
			tail -n 10 "$out.log" | sed 's/^/    /'
		fi
		stop_sm "$name-sigterm"
		fab_sim_stop
	done
fi

# ---- b. LIDs survive a restart through the guid2lid cache -----------------
if part b && [ "$ibsm_ok" = 1 ]; then
	net=$FAB_TOPO/fat3-pods.net
	out=$FAB_TMP/restart
	: >"$out.lids1"
	: >"$out.lids3"
	if fab_sim_start "$net" restart1; then
		# Odd LIDs the default assignment would never give: ibsm keeps
		# valid LIDs it finds, so the cache gets a distinctive map.
		fab_cmd 'Baselid "H0005"[1] 300' 'Baselid "H0017"[1] 301' \
			'Baselid "leaf-p02-01"[0] 320' 'Baselid "core-003"[0] 250' \
			>/dev/null || fab_fail "restart-baselid" "ibsim Baselid failed"
		run_once "restart-first-run" "$out" "$SM_NODE"
		fab_run "$DIAG" ibnetdiscover -p >"$out.topo1" 2>&1
		lid_map "$out.topo1" >"$out.lids1"
		fab_sim_stop
	fi
	if fab_sim_start "$net" restart2; then
		fab_run "$DIAG" ibnetdiscover -p >"$out.topo0" 2>&1
		if [ ! -s "$out.topo0" ]; then
			fab_fail "restart-fabric-reset" "ibnetdiscover -p failed"
		elif awk '$1 ~ /^(CA|SW)$/ && $2 != 0 { bad = 1 } END { exit bad }' \
			"$out.topo0"; then
			fab_pass "restart-fabric-reset"
		else
			fab_fail "restart-fabric-reset" "LIDs are not all 0 after the restart"
		fi
		run_once "restart-second-run" "$out" "$SM_NODE"
		fab_run "$DIAG" ibnetdiscover -p >"$out.topo2" 2>&1
		lid_map "$out.topo2" >"$out.lids2"
		n=$(wc -l <"$out.lids1")
		if [ "$n" -gt 0 ] && diff "$out.lids1" "$out.lids2" >"$out.diff"; then
			fab_pass "restart-same-lids"
			echo "    $n ports, LIDs $(awk '{ print $3 }' "$out.lids1" |
				sort -n | sed -n '1p;$p' | paste -sd-)"
		else
			fab_fail "restart-same-lids" "$(grep -c '^>' "$out.diff") of $n ports differ"
			show "$out.diff"
		fi
		check_subnet "restart" "$FAB_TMP/restart.diags" "$net"
		fab_sim_stop
	fi
	# OpenSM reads the same guid2lid cache and must find the same LIDs.
	# tests/run installs OpenSM (tools/bootstrap.sh): without it these
	# interop checks fail, they are never skipped.
	if ! command -v opensm >/dev/null; then
		fab_fail "restart-opensm-reads-cache" \
			"opensm is not installed (tools/bootstrap.sh installs it)"
	elif ! fab_sim_start "$net" restart3; then
		fab_fail "restart-opensm-reads-cache" "ibsim did not start"
	else
		mkdir -p "$FAB_TMP/osm.tmp" "$FAB_TMP/osm.cache"
		cp "$out.cache/guid2lid" "$FAB_TMP/osm.cache/" 2>/dev/null
		OSM_CACHE_DIR=$FAB_TMP/osm.cache OSM_TMP_DIR=$FAB_TMP/osm.tmp \
			fab_run "$SM_NODE" opensm -o -f "$FAB_TMP/osm.log" \
			>"$FAB_TMP/osm.out" 2>&1
		fab_run "$DIAG" ibnetdiscover -p >"$out.topo3" 2>&1
		lid_map "$out.topo3" >"$out.lids3"
		if [ -s "$out.lids1" ] && diff "$out.lids1" "$out.lids3" >"$out.diff3"; then
			fab_pass "restart-opensm-reads-cache"
		else
			fab_fail "restart-opensm-reads-cache" \
				"$(grep -c '^>' "$out.diff3") ports differ under OpenSM"
			show "$out.diff3"
		fi
		fab_sim_stop
	fi
	# And the other way: ibsm reads the guid2lid OpenSM just wrote.
	if [ ! -s "$FAB_TMP/osm.cache/guid2lid" ]; then
		fab_fail "restart-ibsm-reads-opensm-cache" \
			"no guid2lid written by OpenSM to read"
	elif ! fab_sim_start "$net" restart4; then
		fab_fail "restart-ibsm-reads-opensm-cache" "ibsim did not start"
	else
		mkdir -p "$FAB_TMP/fromosm.cache"
		cp "$FAB_TMP/osm.cache/guid2lid" "$FAB_TMP/fromosm.cache/"
		run_once "restart-from-opensm-cache" "$FAB_TMP/fromosm" "$SM_NODE"
		fab_run "$DIAG" ibnetdiscover -p >"$out.topo4" 2>&1
		lid_map "$out.topo4" >"$out.lids4"
		if [ -s "$out.lids3" ] && diff "$out.lids3" "$out.lids4" >"$out.diff4"; then
			fab_pass "restart-ibsm-reads-opensm-cache"
		else
			fab_fail "restart-ibsm-reads-opensm-cache" \
				"$(grep -c '^>' "$out.diff4") ports differ from OpenSM's"
			show "$out.diff4"
		fi
		fab_sim_stop
	fi
fi

# ---- c. LMC 2 -------------------------------------------------------------
if part c && [ "$ibsm_ok" = 1 ]; then
	net=$FAB_TOPO/dualrail-32.net
	out=$FAB_TMP/lmc
	if fab_sim_start "$net" lmc; then
		if run_once "lmc2-up" "$out" "$SM_NODE" -l 2; then
			check_subnet "lmc2" "$out.diags" "$net" 2
			sm_lid=$(port_field "$out.diags/topo" "$SM_NODE" 1 2)
			bad=0
			nports=0
			: >"$out.portinfo"
			while read -r lid port guid; do
				nports=$((nports + 1))
				pi=$(fab_run "$DIAG" smpquery portinfo "$lid" "$port" 2>&1 </dev/null)
				plid=$(sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p' <<<"$pi")
				plmc=$(sed -n 's/^LMC:\.*\([0-9]*\)$/\1/p' <<<"$pi")
				psm=$(sed -n 's/^SMLid:\.*\([0-9]*\)$/\1/p' <<<"$pi")
				echo "$guid $port lid=$plid lmc=$plmc smlid=$psm" >>"$out.portinfo"
				if [ "$plid" != "$lid" ] || [ "$plmc" != 2 ] ||
					[ $((plid % 4)) != 0 ] || [ "$psm" != "$sm_lid" ]; then
					bad=$((bad + 1))
					[ "$bad" -le 5 ] && echo "    $guid port $port: Lid $plid" \
						"LMC $plmc SMLid $psm (SM LID $sm_lid)"
				fi
			done < <(awk '$1 == "CA" { print $2, $3, $4 }' "$out.diags/topo" | sort -u)
			if [ "$nports" -gt 0 ] && [ "$bad" = 0 ]; then
				fab_pass "lmc2-portinfo"
				echo "    $nports CA ports: LMC 2, base LID multiple of 4, SMLid $sm_lid"
			else
				fab_fail "lmc2-portinfo" "$bad of $nports CA ports wrong"
			fi
		fi
		fab_sim_stop
	fi
fi

# ---- d. Unlink / ReLink under the daemon ----------------------------------
# event NAME CMD DELTA [--avoid...]: send CMD to ibsim, wait for the next
# SUBNET UP, verify; TIMING lines; if the first verification fails, keep
# polling (up to 30 s) to tell how long the routes took.
event() {
	local name=$1 cmd=$2 delta=$3 off t0 t1 t2 line i ok=0
	shift 3
	off=$(stat -c %s "$SM_OUT.log")
	t0=$(date +%s.%N)
	if ! fab_cmd "$cmd" >/dev/null; then
		fab_fail "$name" "ibsim refused: $cmd"
		return 1
	fi
	if ! line=$(sm_wait_up "$SM_OUT" "$off" 60); then
		fab_fail "$name-subnet-up" "no SUBNET UP within 60 s of: $cmd"
		tail -n 10 "$SM_OUT.log" | sed 's/^/    /'
		return 1
	fi
	t1=$(sm_log_epoch "$line")
	fab_pass "$name-subnet-up"
	echo "TIMING ${name}_to_subnet_up $(sm_elapsed "$t0" "$t1") s"
	if check_subnet "$name" "$FAB_TMP/$name.diags" "$net" 0 "$delta" "$@"; then
		t2=$(date +%s.%N)
		echo "TIMING ${name}_to_routes_valid $(sm_elapsed "$t0" "$t2") s"
		check_sminfo "$name-sminfo" "$FAB_TMP/$name.diags/topo"
		return 0
	fi
	for ((i = 0; i < 30; i++)); do
		sleep 1
		if sm_diags "$DIAG" "$FAB_TMP/$name.poll" &&
			sm_verify "$FAB_TMP/$name.poll" \
				--ends $(($(sm_net_ends "$net") + delta)) "$@" >/dev/null; then
			ok=1
			break
		fi
	done
	t2=$(date +%s.%N)
	if [ "$ok" = 1 ]; then
		echo "    routes became valid later: TIMING ${name}_to_routes_valid $(sm_elapsed "$t0" "$t2") s"
	else
		echo "    routes still not valid $(sm_elapsed "$t0" "$t2") s after the event"
	fi
	return 1
}

if part d && [ "$ibsm_ok" = 1 ]; then
	net=$FAB_TOPO/fat3-pods.net
	if fab_sim_start "$net" links; then
		sm_start "$SM_NODE" "$FAB_TMP/links.sm" -p "$PRIO"
		if sm_wait_up "$FAB_TMP/links.sm" 0 60 >/dev/null; then
			check_subnet "links-before" "$FAB_TMP/links-before.diags" "$net"
			topo=$FAB_TMP/links-before.diags/topo
			# A leaf-spine link in the middle of the fabric (not on the
			# SM's own leaf), both its ends.
			read -r lsw lport rsw rport < <(awk '
			$1 == "Switch" { s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); sw = s; next }
			sw == "leaf-p02-02" && /^\[[0-9]+\].*"spine-p02-/ {
				p = $1; gsub(/[^0-9]/, "", p)
				s = $0; sub(/^[^"]*"/, "", s); peer = s; sub(/".*/, "", peer)
				sub(/^[^"]*"[^\[]*\[/, "", s); sub(/\].*/, "", s)
				print sw, p, peer, s; exit
			}' "$net")
			lguid=$(port_field "$topo" "$lsw" "$lport" 4)
			rguid=$(port_field "$topo" "$rsw" "$rport" 4)
			echo "    link: \"$lsw\"[$lport] ($lguid) - \"$rsw\"[$rport] ($rguid)"
			event unlink "Unlink \"$lsw\"[$lport]" -2 \
				--avoid "$lguid:$lport" --avoid "$rguid:$rport"
			# Only the routes that crossed the link moved (routing/
			# incr.h): fewer LFT blocks than the full re-route.
			line=$(grep 'routing: incremental' "$FAB_TMP/links.sm.log" | tail -n 1)
			incr=$(sed -nE 's/.* ([0-9]+) LFT blocks change.*/\1/p' <<<"$line")
			full=$(sed -nE 's/.*a full re-route: ([0-9]+)\).*/\1/p' <<<"$line")
			echo "    ${line#*routing: }"
			if [ -n "$incr" ] && [ -n "$full" ] && [ "$incr" -lt "$full" ]; then
				fab_pass links-unlink-incremental
			else
				fab_fail links-unlink-incremental "want an incremental re-route with fewer blocks: '$line'"
			fi
			# The trap was answered by a quick sweep (sm/quick.c): the
			# switch that trapped was read, the fabric was not.  (The
			# other end's trap may come later and start an ordinary
			# heavy sweep after it: any heavy sweep of this log from a
			# quick sweep's model counts, none ran before.)
			if grep -q 'quick sweep: .* 1 link(s) lost' "$FAB_TMP/links.sm.log" &&
				grep 'heavy sweep: ' "$FAB_TMP/links.sm.log" |
				grep -q '; quick sweep '; then
				fab_pass links-unlink-quick
			else
				fab_fail links-unlink-quick "no quick sweep for the lost link"
			fi
			# A lost link is a warning naming both ends by their node
			# descriptions (and GUIDs), either end first.
			ends1="\"$lsw\" 0x[0-9a-f]* port $lport - \"$rsw\" 0x[0-9a-f]* port $rport"
			ends2="\"$rsw\" 0x[0-9a-f]* port $rport - \"$lsw\" 0x[0-9a-f]* port $lport"
			if grep -q "\[WARN\] ERR 0315: quick sweep: .* 1 link(s) lost ($ends1)" "$FAB_TMP/links.sm.log" ||
				grep -q "\[WARN\] ERR 0315: quick sweep: .* 1 link(s) lost ($ends2)" "$FAB_TMP/links.sm.log"; then
				fab_pass links-unlink-warning-names-ends
			else
				fab_fail links-unlink-warning-names-ends "$(grep 'link(s) lost' "$FAB_TMP/links.sm.log")"
			fi
			event relink "ReLink \"$lsw\"[$lport]" 0
			if grep -q 'routing: full re-route: a link of .* is new' "$FAB_TMP/links.sm.log"; then
				fab_pass links-relink-full-reroute
			else
				fab_fail links-relink-full-reroute "no 'full re-route: a link ... is new' line"
			fi
			# A host's link: the quick sweep leaves the host out.
			event unlinkhost "Unlink \"$lsw\"[1]" -2 --avoid "$lguid:1"
			if grep -q 'quick sweep: .* 1 node(s) no longer reached' \
				"$FAB_TMP/links.sm.log"; then
				fab_pass links-unlinkhost-quick
			else
				fab_fail links-unlinkhost-quick "no quick sweep leaving the host out"
			fi
			event relinkhost "ReLink \"$lsw\"[1]" 0
			if sm_alive; then
				fab_pass "links-daemon-alive"
			else
				fab_fail "links-daemon-alive" "ibsm exited"
			fi
		else
			fab_fail "links-up" "no SUBNET UP"
			tail -n 10 "$FAB_TMP/links.sm.log" | sed 's/^/    /'
		fi
		stop_sm "links-sigterm"
		fab_sim_stop
	fi
fi

# ---- e. 10% MAD loss at every switch ---------------------------------------
# drop_stats OFFSET: MADs ibsim delivered and dropped since byte OFFSET of
# its log (needs Verbose 1).
drop_stats() {
	local seg
	seg=$(tail -c +"$(($1 + 1))" "$FAB_SIM_LOG")
	echo "ibsim dropped $(grep -c 'drop pkt due error rate' <<<"$seg") MADs," \
		"delivered $(grep -c 'reached host' <<<"$seg")"
}

# lossy NAME OUT: with the ibsim Error commands of LOSS_ON in force, ibsm
# -o (PASS NAME-up on exit 0), LOSS_OFF, then the checks of (a).
lossy() {
	local name=$1 out=$2 mark
	if ! fab_cmd "${LOSS_ON[@]}" 'Verbose 1' >/dev/null; then
		fab_fail "$name" "ibsim Error command failed"
		return 1
	fi
	mark=$(stat -c %s "$FAB_SIM_LOG")
	run_once "$name-up" "$out" "$SM_NODE"
	echo "    $(drop_stats "$mark")"
	fab_cmd 'Verbose 0' "${LOSS_OFF[@]}" >/dev/null
	check_subnet "$name" "$out.diags" "$net"
}

if part e && [ "$ibsm_ok" = 1 ]; then
	# e1. Exactly 10% of the SMPs: the SM's own port drops 10% of the
	# MADs entering it, i.e. of the answers, whatever the distance.
	net=$FAB_TOPO/fat3-pods.net
	if fab_sim_start "$net" drops-smport; then
		LOSS_ON=("Error \"$SM_NODE\"[1] 10")
		LOSS_OFF=("Error \"$SM_NODE\"[1] 0")
		lossy drops10-smport "$FAB_TMP/drops-smport"
		fab_sim_stop
	fi
	# e2. 10% at every port of every switch: a MAD is dropped with that
	# probability at each switch it enters, so an SMP to a host on
	# another leaf (3 switches each way) is lost 47% of the time.
	net=$FAB_TOPO/fat2-small.net
	LOSS_ON=()
	LOSS_OFF=()
	while read -r sw; do
		LOSS_ON+=("Error \"$sw\" 10")
		LOSS_OFF+=("Error \"$sw\" 0")
	done < <(switch_names "$net")
	if fab_sim_start "$net" drops-switches; then
		lossy drops10-switches "$FAB_TMP/drops-switches"
		# e3. The subnet is up; a restarted SM meets the same loss
		# (same cache dir).
		if [ "${BRINGUP_LOSSY_RESTART:-1}" = 1 ]; then
			mkdir -p "$FAB_TMP/drops-restart.cache"
			cp "$FAB_TMP/drops-switches.cache/guid2lid" \
				"$FAB_TMP/drops-restart.cache/" 2>/dev/null
			lossy drops10-switches-restart "$FAB_TMP/drops-restart"
		fi
		fab_sim_stop
	fi
	# e5. One switch drops half of what enters it: the destinations
	# behind it get fewer SMPs at a time, the others keep going.
	net=$FAB_TOPO/fat3-pods.net
	bad=$(switch_names "$net" | grep -m1 spine)
	if [ -n "$bad" ] && fab_sim_start "$net" drops-one; then
		LOSS_ON=("Error \"$bad\" 50")
		LOSS_OFF=("Error \"$bad\" 0")
		lossy drops50-one-switch "$FAB_TMP/drops-one"
		w=$(grep -m1 'SMP window:' "$FAB_TMP/drops-one.log")
		echo "    $bad: ${w#*SMP window: }"
		thr=$(sed -nE 's/.* ([0-9]+) destinations throttled after ([0-9]+) losses.*/\1 \2/p' <<<"$w")
		high=$(sed -nE 's/.*now, [0-9]+-([0-9]+) so far.*/\1/p' <<<"$w")
		if [ -n "$thr" ] && [ "${thr% *}" -ge 1 ] && [ "${thr#* }" -ge 1 ] &&
			[ "${high:-0}" -gt 4 ]; then
			fab_pass drops50-one-switch-throttled
		else
			fab_fail drops50-one-switch-throttled \
				"want >= 1 destination throttled and the window above 4: $w"
		fi
		fab_sim_stop
	fi
	net=$FAB_TOPO/fat2-small.net
	# e4. The daemon through a lossy period: heavy sweeps while the
	# switches drop 10% (a host link flaps three times), then the loss
	# ends.  Within RECOVER_S seconds (light sweeps every 2 s) the routes
	# must be valid again.
	if fab_sim_start "$net" drops-daemon; then
		sm_start "$SM_NODE" "$FAB_TMP/drops-daemon.sm" -s 2
		if sm_wait_up "$FAB_TMP/drops-daemon.sm" 0 60 >/dev/null; then
			fab_cmd "${LOSS_ON[@]}" >/dev/null
			for _ in 1 2 3; do
				fab_cmd 'Unlink "H0016"[1]' >/dev/null
				sleep 0.7
				fab_cmd 'ReLink "H0016"[1]' >/dev/null
				sleep 0.7
			done
			sleep 1
			fab_cmd "${LOSS_OFF[@]}" >/dev/null
			mark=$(stat -c %s "$FAB_TMP/drops-daemon.sm.log")
			t0=$(date +%s.%N)
			deadline=$(($(date +%s) + ${RECOVER_S:-12}))
			ends=$(sm_net_ends "$net")
			ok=0
			while [ "$(date +%s)" -lt "$deadline" ]; do
				if sm_diags "$DIAG" "$FAB_TMP/drops-daemon.diags" &&
					sm_verify "$FAB_TMP/drops-daemon.diags" \
						--ends "$ends" >"$FAB_TMP/drops-daemon.verify"; then
					ok=1
					break
				fi
				sleep 1
			done
			t1=$(date +%s.%N)
			if [ "$ok" = 1 ]; then
				fab_pass "drops10-daemon-recovers"
				echo "TIMING loss_cleared_to_routes_valid $(sm_elapsed "$t0" "$t1") s"
			else
				fab_fail "drops10-daemon-recovers" \
					"routes not valid $(sm_elapsed "$t0" "$t1") s after the loss ended"
				grep -v '^links:\|^lids:' "$FAB_TMP/drops-daemon.verify" |
					head -n 4 | sed 's/^/    /'
				echo "    heavy sweeps since the loss ended:" \
					"$(tail -c +"$((mark + 1))" "$FAB_TMP/drops-daemon.sm.log" |
						grep -c 'heavy sweep:')"
				grep 'heavy sweep:' "$FAB_TMP/drops-daemon.sm.log" | tail -n 1 |
					cut -c 1-140 | sed 's/^/    last: /'
			fi
		else
			fab_fail "drops10-daemon-up" "no SUBNET UP"
		fi
		stop_sm "drops10-daemon-sigterm"
		fab_sim_stop
	fi
fi

# ---- f. LID-routed SMPs ------------------------------------------------------
# lid_counts LOG OFFSET: the sums of "D L F" (directed route, LID-routed,
# fell back) over the "heavy sweep SMPs:" lines after byte OFFSET.
lid_counts() {
	tail -c +"$(($2 + 1))" "$1" | awk '
	/heavy sweep SMPs:/ {
		for (i = 1; i <= NF; i++) {
			if ($(i + 1) == "directed" && $(i + 2) == "route,") d += $i
			if ($(i + 1) == "LID-routed") l += $i
			if ($(i + 1) == "fell") f += $i
		}
		n++
	}
	END { print d + 0, l + 0, f + 0, n + 0 }'
}

if part f && [ "$ibsm_ok" = 1 ]; then
	net=$FAB_TOPO/fat2-small.net
	CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
	lsock=$FAB_TMP/lid.sock
	if fab_sim_start "$net" lidsmp; then
		sm_start "$SM_NODE" "$FAB_TMP/lid.sm" -p "$PRIO" --control-socket "$lsock"
		if sm_wait_up "$FAB_TMP/lid.sm" 0 60 >/dev/null; then
			read -r d l f n < <(lid_counts "$FAB_TMP/lid.sm.log" 0)
			echo "    first sweep: $d directed route, $l LID-routed"
			fab_check lid-first-sweep-dr test "$n" -ge 1 -a "$l" = 0 -a "$d" -gt 0
			off=$(stat -c %s "$FAB_TMP/lid.sm.log")
			"$CTL" --socket "$lsock" resweep heavy >/dev/null
			if sm_wait_up "$FAB_TMP/lid.sm" "$off" 30 >/dev/null; then
				read -r d l f n < <(lid_counts "$FAB_TMP/lid.sm.log" "$off")
				echo "    resweep: $d directed route, $l LID-routed, $f fell back"
				fab_check lid-resweep-lid-routed test "$n" -ge 1 -a "$l" -gt "$d" -a "$f" = 0
				st=$("$CTL" --socket "$lsock" status | sed -n 's/^smps_lid_routed //p')
				fab_check lid-status-counter test "${st:-0}" -ge "$l" -a "${st:-0}" -gt 0
				check_subnet lid-resweep "$FAB_TMP/lid-resweep.diags" "$net"
			else
				fab_fail lid-resweep "no SUBNET UP after resweep heavy"
			fi
			topo=$FAB_TMP/lid-resweep.diags/topo
			lguid=$(port_field "$topo" spine-02 2 4)
			rguid=$(port_field "$topo" leaf-02 6 4)
			# lid_phase NAME CMD: a console command or a heavy
			# resweep, then the next SUBNET UP; D L F N of its sweeps.
			lid_phase() {
				local name=$1 cmd=$2
				off=$(stat -c %s "$FAB_TMP/lid.sm.log")
				if [ "$cmd" = resweep ]; then
					"$CTL" --socket "$lsock" resweep heavy >/dev/null
				else
					fab_cmd "$cmd" >/dev/null
				fi
				if ! sm_wait_up "$FAB_TMP/lid.sm" "$off" 30 >/dev/null; then
					fab_fail "$name" "no SUBNET UP"
					tail -n 5 "$FAB_TMP/lid.sm.log" | sed 's/^/    /'
					return 1
				fi
				sleep 1		# a second trap's sweep, if any
				read -r d l f n < <(lid_counts "$FAB_TMP/lid.sm.log" "$off")
				echo "    $name: $d directed route, $l LID-routed, $f fell back ($n sweeps)"
			}
			# A trap: the link may lie on the old routes, so that
			# sweep is all directed route (nothing waits out a lost
			# LID-routed SMP); the next resweep, on the new routes,
			# is LID-routed again without a loss.
			if lid_phase lid-unlink 'Unlink "spine-02"[2]'; then
				fab_check lid-unlink-trap-sweep-dr test "$l" = 0 -a "$f" = 0 -a "$d" -gt 0
				check_subnet lid-unlink "$FAB_TMP/lid-unlink.diags" "$net" 0 -2 \
					--avoid "$lguid:2" --avoid "$rguid:6"
			fi
			if lid_phase lid-unlink-resweep resweep; then
				fab_check lid-unlink-resweep-lid-routed test "$l" -gt "$d" -a "$f" = 0
			fi
			if lid_phase lid-relink 'ReLink "spine-02"[2]'; then
				fab_check lid-relink-trap-sweep-dr test "$l" = 0 -a "$f" = 0
				check_subnet lid-relink "$FAB_TMP/lid-relink.diags" "$net"
			fi
			if lid_phase lid-relink-resweep resweep; then
				fab_check lid-relink-resweep-lid-routed test "$l" -gt "$d" -a "$f" = 0
			fi
		else
			fab_fail lid-up "no SUBNET UP"
		fi
		stop_sm lid-sigterm
		fab_sim_stop
	fi
fi

echo "test_bringup: $((SECONDS - START)) s"
fab_summary
