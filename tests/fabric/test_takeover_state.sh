#!/usr/bin/env bash
# tests/fabric/test_takeover_state.sh - a real takeover keeps the SA state
# (a standby that loses nothing), judged by infiniband-diags
# and by clients, never by ibsm's own output.
#
# Fabric: two switches, five hosts.  ibsm prio 10 on H0001 is master,
# ibsm prio 5 on H0002 stands by.  Before the kill: H0003 creates a group
# (full member) and H0005 joins it (full member); H0005 registers a
# ServiceRecord (lease 3600 s); H0003 subscribes to trap 128
# (InformInfo).  The diags run on H0004: umad2sim spoils bytes of every
# MAD (doc/design.md), and in the master's NodeRecord table it is the
# record of LID 4 that they hit, so the copy loses that port (and what a
# port it does not know holds); no host with state has LID 4.  Then the
# master is killed with -9 and the standby takes over.  After it:
#   - `saquery -g` lists the group with the same MGID and MLID;
#   - `ibroute -M` of both switches still forwards the MLID to both
#     members and to no other host (mc_check.py tree);
#   - `saquery SR` still returns the service, with a lease that went
#     down (the time that passed) and did not restart at 3600;
#   - the subscriber, which did not subscribe again, gets the Report of
#     a trap 128 raised after the takeover (a link of the dead master's
#     switch taken down);
#   - H0005 leaves the group: the MFTs drop its port, H0003 still
#     reached;
#   - the new master logged its copy installed, "in sync" (it sends no
#     ClientReregister) only when no record was refused or dropped.
# TAKEOVER_NO_COPY=1 starts the standby with the hidden knob
# IBSM_DEBUG_NO_STANDBY_COPY (it copies nothing): the checks above must
# then fail (the check that the test can fail).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
CLIENT=$BUILD/tests/fabric/sa_client
MJ=$BUILD/tests/fabric/mc_join
CHECK="python3 $FAB_LIB/mc_check.py"
DIAG=H0004
MGID=ff12:e01b::7a
SVC_ID=0x7a7a
SVC_NAME=takeover-test
# shellcheck disable=SC2034 # set by sm_start_named through printf -v
A_PID='' B_PID='' SUB_PID=''
for f in "$CLIENT" "$MJ"; do
	[ -x "$f" ] || {
		fab_fail setup "$f is not built"
		fab_summary
		exit 1
	}
done

NET=$FAB_TMP/two-switches.net
sm_net_two_switches "$NET"

# group_line FILE: "MGID MLID" of our group in `saquery -g` output
# (fields as "Name.....value"; the MLID as a decimal number).
group_line() {
	local g l
	read -r g l < <(awk -v m="$MGID" '
		{ v = $0; sub(/^[^.]*\.\.+/, "", v) }
		/MGID\./ { g = v }
		/Mlid\./ { if (g == m) { print g, v; exit } }' "$1")
	[ -n "$l" ] && echo "$g $((l))"
}

# lease_of FILE: the ServiceLease (decimal) of our service in `saquery
# SR` output.
lease_of() {
	local l
	l=$(awk -v n="$SVC_NAME" '
		{ v = $0; sub(/^[^.]*\.\.+/, "", v) }
		/ServiceLease\./ { l = v }
		/ServiceName\./ { if (v == n) { print l; exit } }' "$1")
	[ -n "$l" ] && echo $((l))
}

# mfts OUT MLID: `ibroute -M` of both switches, and the members file of
# mc_check.py tree for the MLID.
mfts() {
	local lid
	: >"$1"
	for lid in $(awk '$1 == "SW" { print $2 }' "$FAB_TMP/topo" | sort -un); do
		fab_run "$DIAG" ibroute -M "$lid" >>"$1" 2>&1
	done
	printf '%s H0003 1\n%s H0005 1\n' "$2" "$2" >"$1.members"
}

# ------------------------------------------------------------ before
fab_sim_start "$NET" takeover || exit 1
sm_start_named A H0001 -p 10 -s 2
sm_wait_for 60 grep -q 'SUBNET UP' "$FAB_TMP/A.log" &&
	fab_pass "master (prio 10) up" || fab_fail "master (prio 10) up"
if [ "${TAKEOVER_NO_COPY:-0}" = 1 ]; then
	echo "TAKEOVER_NO_COPY=1: the standby copies nothing (this run must fail)"
	IBSM_DEBUG_NO_STANDBY_COPY=1 sm_start_named B H0002 -p 5 -s 2
else
	sm_start_named B H0002 -p 5 -s 2
fi
LB=$(sm_lid_of H0002)
sm_wait_for 30 sm_state_is "$LB" STANDBY &&
	fab_pass "prio 5 (LID $LB) stands by" || fab_fail "prio 5 (LID $LB) stands by"

j1=$(fab_run H0003 "$MJ" -J full -m "$MGID" -c join 2>&1)
j2=$(fab_run H0005 "$MJ" -J full -m "$MGID" join 2>&1)
if [[ $j1 == *status=SUCCESS* && $j2 == *status=SUCCESS* ]]; then
	fab_pass "H0003 creates the group, H0005 joins it"
else
	fab_fail "H0003 creates the group, H0005 joins it" "$j1 / $j2"
fi
svc=$(fab_run H0005 "$CLIENT" service-set "$SVC_ID" "$SVC_NAME" 3600 2>&1)
[[ $svc == service* ]] && fab_pass "H0005 registers a service" ||
	fab_fail "H0005 registers a service" "$svc"
# The subscriber lives through the takeover and does not subscribe again.
FAB_TIMEOUT=80 fab_spawn H0003 "$CLIENT" subscribe 128 60 issm >"$FAB_TMP/sub.out" 2>&1
SUB_PID=$FAB_SPAWN_PID
sm_wait_for 10 grep -q subscribed "$FAB_TMP/sub.out" &&
	fab_pass "H0003 subscribes to trap 128" ||
	fab_fail "H0003 subscribes to trap 128" "$(cat "$FAB_TMP/sub.out")"

fab_run "$DIAG" ibnetdiscover -p >"$FAB_TMP/topo" 2>/dev/null
fab_run "$DIAG" saquery -g >"$FAB_TMP/groups.before" 2>&1
read -r mgid_before mlid_before <<<"$(group_line "$FAB_TMP/groups.before")"
fab_check "saquery -g lists $MGID (MLID ${mlid_before:-none}) before" \
	[ "${mgid_before:-}" = "$MGID" ]
mfts "$FAB_TMP/mft.before" "$mlid_before"
if [ -n "$mlid_before" ]; then
	fab_check "ibroute -M reaches both members before (MLID $mlid_before)" \
		$CHECK tree "$FAB_TMP/topo" "$FAB_TMP/mft.before" "$FAB_TMP/mft.before.members"
else
	fab_fail "ibroute -M reaches both members before" "no MLID"
fi
fab_run "$DIAG" saquery SR >"$FAB_TMP/sr.before" 2>&1
lease_before=$(lease_of "$FAB_TMP/sr.before")
fab_check "saquery SR lists $SVC_NAME (lease ${lease_before:-none}) before" \
	[ -n "$lease_before" ]

# The standby copies every 2 s: one full round after the last change.
t_state=$SECONDS
sm_wait_for 15 grep -q 'standby copy from master' "$FAB_TMP/B.log"
sleep 5

# ------------------------------------------------------------ kill -9
sm_stop_named A KILL
sm_wait_for 20 sm_state_is "$LB" MASTER &&
	fab_pass "kill -9: the standby is MASTER" ||
	fab_fail "kill -9: the standby is MASTER"
sm_wait_for 20 grep -q 'SUBNET UP' "$FAB_TMP/B.log" ||
	fab_fail "kill -9: the new master logged SUBNET UP"
sleep 1

# ------------------------------------------------------------ after
fab_run "$DIAG" saquery -g >"$FAB_TMP/groups.after" 2>&1
read -r mgid_after mlid_after <<<"$(group_line "$FAB_TMP/groups.after")"
fab_check "saquery -g lists $MGID with the same MLID after ($mlid_before -> ${mlid_after:-none})" \
	[ "${mgid_after:-}" = "$MGID" -a "${mlid_after:-}" = "$mlid_before" ]
mfts "$FAB_TMP/mft.after" "$mlid_before"
if [ -n "$mlid_before" ]; then
	fab_check "ibroute -M still reaches both members after (MLID $mlid_before)" \
		$CHECK tree "$FAB_TMP/topo" "$FAB_TMP/mft.after" "$FAB_TMP/mft.after.members"
else
	fab_fail "ibroute -M still reaches both members after" "no MLID"
fi
fab_run "$DIAG" saquery SR >"$FAB_TMP/sr.after" 2>&1
lease_after=$(lease_of "$FAB_TMP/sr.after")
elapsed=$((SECONDS - t_state))
fab_check "saquery SR lists $SVC_NAME after (lease ${lease_after:-none}, was $lease_before, $elapsed s later)" \
	[ -n "$lease_after" ]
# The lease remaining went on: lower than before, by about the time that
# passed (not restarted at 3600 by a client registering again).
fab_check "the service's lease went on through the takeover" \
	bash -c "[ -n '$lease_after' ] && [ -n '$lease_before' ] &&
		[ '$lease_after' -lt '$lease_before' ] &&
		[ '$lease_after' -ge $((lease_before - elapsed - 5)) ]"
# A trap raised after the takeover reaches the old subscription.
fab_cmd 'Unlink "sw-a"[1]' >/dev/null
sm_wait_for 10 grep -q '^report 128' "$FAB_TMP/sub.out" &&
	fab_pass "the subscription made before gets a trap 128 Report after" ||
	fab_fail "the subscription made before gets a trap 128 Report after" \
		"$(cat "$FAB_TMP/sub.out")"
# The new master knows the members: H0005 leaves, the MFTs drop its port
# and still reach H0003 (a master that lost the group refuses the leave
# and leaves the old MFT entries as they were).
j3=$(fab_run H0005 "$MJ" -J full -m "$MGID" leave 2>&1)
[[ $j3 == *status=SUCCESS* ]] && fab_pass "H0005 leaves the group after" ||
	fab_fail "H0005 leaves the group after" "$j3"
left_ok() {
	mfts "$FAB_TMP/mft.left" "$mlid_before"
	printf '%s H0003 1\n' "$mlid_before" >"$FAB_TMP/mft.left.members"
	$CHECK tree "$FAB_TMP/topo" "$FAB_TMP/mft.left" "$FAB_TMP/mft.left.members"
}
[ -n "$mlid_before" ] && sm_wait_for 5 left_ok
fab_check "ibroute -M after the leave: H0003 only" left_ok
# "in sync" (no ClientReregister) only when no record was refused or
# dropped: here umad2sim's spoiled NodeRecord is dropped, so the copy is
# not in sync and the log must say so.
copy_line=$(grep 'standby copy installed: ' "$FAB_TMP/B.log" | tail -n 1)
if [[ $copy_line =~ \(([0-9]+)\ refused,\ ([0-9]+)\ dropped,\ ([0-9]+)\ over ]]; then
	lost=$((BASH_REMATCH[1] + BASH_REMATCH[2] + BASH_REMATCH[3]))
	if [ "$lost" -eq 0 ]; then want=': in sync$'; else want=': not in sync$'; fi
	fab_check "the new master's copy: in sync only with nothing dropped ($lost lost)" \
		grep -q "$want" <<<"$copy_line"
else
	fab_fail "the new master logged its copy installed" "$copy_line"
fi

kill -TERM "$SUB_PID" 2>/dev/null
wait "$SUB_PID" 2>/dev/null
rm -f "$FAB_TMP/pids/$SUB_PID"
sm_stop_named B
fab_check "the new master exits cleanly" [ $? -eq 0 ]
fab_sim_stop
fab_summary
