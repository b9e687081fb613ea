#!/usr/bin/env bash
# tests/fabric/test_sminfo_hostile.sh - a host that speaks the SM-to-SM
# protocol (SMInfo, 14.4.1) to the SMs, judged by infiniband-diags
# (sminfo from another host) and by the answers the hostile host gets.
#
# Fabric: two switches, five hosts.  ibsm prio 10 on H0001 is master
# (default SM_Key 1, which the host knows), ibsm prio 5 on H0002 stands
# by.  H0005 runs tests/fabric/sm_hostile:
#   1. SubnSet(SMInfo) DISABLE, HANDOVER, STANDBY and DISCOVER to the
#      master, claiming to be a master of priority 15 with the right key:
#      each is answered with an error status, and `sminfo` from H0004
#      still names the master at its LID in MASTER; 200 more DISABLEs
#      leave at most a rate-limited handful of log lines;
#   2. the same DISABLE, HANDOVER and DISCOVER to the standby, claiming
#      the master's own GUID: refused (error status), the standby stays
#      STANDBY and the master MASTER;
#   3. SubnGet(SMInfo) with SM_Key 0 and with a wrong key: SM_Key 0 in
#      the answer; with the right key: the key;
#   4. a Get claiming a standby of priority 15 (a fake SM: the port has
#      no IsSM and answers no SMInfo): `ibsmctl sms` on the master does
#      not list it and the master stays MASTER (no handover to it);
#   5. a flood of SMInfo Gets (as fast as the host sends them): while it
#      runs, `saquery` from H0004 is answered every time (latencies
#      printed), and afterwards the master is still MASTER and answers.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
HOSTILE=$BUILD/tests/fabric/sm_hostile
PROBE=$BUILD/tests/fabric/sa_hostile
CTL=${IBSMCTL:-$BUILD/tools/ibsmctl}
DIAG=H0004
FAKE=0x0002c9ffff00dead
# shellcheck disable=SC2034 # set by sm_start_named through printf -v
A_PID='' B_PID=''
for f in "$HOSTILE" "$PROBE" "$CTL"; do
	[ -x "$f" ] || {
		fab_fail setup "$f is not built"
		fab_summary
		exit 1
	}
done

NET=$FAB_TMP/two-switches.net
sm_net_two_switches "$NET"

# master_at LID: sminfo (the master the diag host's port knows) names LID
# in MASTER.
master_at() {
	fab_run "$DIAG" sminfo 2>/dev/null | grep -q "^sminfo: sm lid $1 .*SMINFO_MASTER"
}

# hostile OUT ARGS...: sm_hostile from H0005, its answer line into OUT.
hostile() {
	local out=$1
	shift
	fab_run H0005 "$HOSTILE" "$@" >"$out" 2>&1
}

# refused OUT: an answer with a non-zero status.
refused() {
	grep -q '^status 0x[0-9a-f]*[1-9a-f][0-9a-f]* ' "$1" ||
		{ cat "$1"; return 1; }
}

fab_sim_start "$NET" smhostile || exit 1
# A stuck SM is killed after 2 minutes instead of FAB_TIMEOUT's 5.
FAB_TIMEOUT=120
sm_start_named A H0001 -p 10 --control-socket "$FAB_TMP/A.sock"
sm_wait_for 60 grep -q 'SUBNET UP' "$FAB_TMP/A.log" ||
	fab_fail "master up" "no SUBNET UP"
sm_start_named B H0002 -p 5 --control-socket "$FAB_TMP/B.sock"
sm_wait_for 30 grep -q -- '-> STANDBY' "$FAB_TMP/B.log" ||
	fab_fail "standby up" "B did not stand by"
FAB_TIMEOUT=300
LA=$(fab_run "$DIAG" sminfo 2>/dev/null | sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p')
"$CTL" --socket "$FAB_TMP/A.sock" status >"$FAB_TMP/A.status" 2>&1
GA=$(awk '$1 == "port_guid" { print $2 }' "$FAB_TMP/A.status")
LB=$(sm_lid_of H0002)
fab_check "setup: master at LID $LA, standby at LID $LB" \
	test -n "$LA" -a -n "$GA" -a -n "$LB"

# ------------------------------------------- 1. Sets to the master
for mod in disable handover standby discover; do
	hostile "$FAB_TMP/set-$mod" set "$mod" -l "$LA" -s master -p 15
	fab_check "1: $mod from a host to the master: error status" \
		refused "$FAB_TMP/set-$mod"
done
# 200 more DISABLEs: still refused, and the log keeps to its rate limit
# (10 lines at once, then 1 a second per code).
hostile "$FAB_TMP/set-many" set disable -l "$LA" -s master -p 15 -n 200
nref=$(grep -c '^status 0x[0-9a-f]*[1-9a-f][0-9a-f]* ' "$FAB_TMP/set-many")
fab_check "1: 200 more DISABLEs: $nref answered with an error status" \
	test "$nref" -eq 200
n1122=$(grep -c 'ERR 1122' "$FAB_TMP/A.log")
fab_check "1: refusals logged within the rate limit ($n1122 lines for 204)" \
	test "$n1122" -ge 4 -a "$n1122" -le 16
fab_check "1: sminfo: still MASTER at LID $LA" master_at "$LA"
fab_check "1: sminfo at LID $LA: MASTER" sm_state_is "$LA" MASTER
fab_check "1: master logged no change of state" \
	bash -c "! grep -q 'MASTER -> ' '$FAB_TMP/A.log'"

# ------------------------------------------- 2. Sets to the standby
for mod in disable handover discover; do
	hostile "$FAB_TMP/sb-$mod" set "$mod" -l "$LB" -g "$GA" -s master -p 10
	fab_check "2: $mod to the standby in the master's name: error status" \
		refused "$FAB_TMP/sb-$mod"
done
fab_check "2: sminfo at LID $LB: STANDBY" sm_state_is "$LB" STANDBY
fab_check "2: sminfo: still MASTER at LID $LA" master_at "$LA"

# ------------------------------------------- 3. the key in Gets
hostile "$FAB_TMP/get0" get -l "$LA" -k 0
hostile "$FAB_TMP/getbad" get -l "$LA" -k 0x1234
hostile "$FAB_TMP/getkey" get -l "$LA" -k 1
fab_check "3: Get with SM_Key 0: key 0 in the answer" \
	grep -q '^status 0x0000 .* key 0x0000000000000000 ' "$FAB_TMP/get0"
fab_check "3: Get with a wrong SM_Key: key 0 in the answer" \
	grep -q '^status 0x0000 .* key 0x0000000000000000 ' "$FAB_TMP/getbad"
fab_check "3: Get with the SM_Key: the key in the answer" \
	grep -q '^status 0x0000 .* key 0x0000000000000001 .* state master' \
	"$FAB_TMP/getkey"

# ------------------------------------------- 4. a fake standby
hostile "$FAB_TMP/fake" get -l "$LA" -s standby -p 15 -g "$FAKE"
sleep 1.5
"$CTL" --socket "$FAB_TMP/A.sock" sms >"$FAB_TMP/A.sms" 2>&1
fab_check "4: ibsmctl sms on the master: no fake SM $FAKE" \
	bash -c "! grep -qi '^$FAKE ' '$FAB_TMP/A.sms'"
fab_check "4: ibsmctl sms on the master: the real standby" \
	grep -q " $LB 5 STANDBY " "$FAB_TMP/A.sms"
fab_check "4: sminfo: still MASTER at LID $LA" master_at "$LA"

# ------------------------------------------- 5. a flood of SMInfo Gets
# saquery_ms: one `saquery -s` from the diag host (at most 5 s); its
# wall time in ms on stdout; fails when it got no answer.
saquery_ms() {
	local t0 rc
	t0=$(date +%s%N)
	FAB_TIMEOUT=5 fab_run "$DIAG" saquery -s >/dev/null 2>&1
	rc=$?
	echo $((($(date +%s%N) - t0) / 1000000))
	return "$rc"
}
base=''
for i in 1 2 3; do
	base="$base $(saquery_ms)"
done
# The SA's own latency (PathRecord and SMInfo Gets, 20 a second, from
# H0003), before and during the flood: figures for the log.
FAB_TIMEOUT=20 fab_run H0003 "$PROBE" probe -r 20 -t 2 >"$FAB_TMP/probe.before" 2>&1
FAB_TIMEOUT=20 fab_spawn H0005 "$HOSTILE" flood -l "$LA" -n 60000 -t 6
FLOOD=$FAB_SPAWN_PID
FAB_TIMEOUT=20 fab_spawn H0003 "$PROBE" probe -r 20 -t 4 >"$FAB_TMP/probe.during" 2>&1
PROBE_PID=$FAB_SPAWN_PID
lat='' ok=0 n=0
for i in 1 2 3 4 5 6 7 8; do
	sleep 0.3
	kill -0 "$FLOOD" 2>/dev/null || break
	n=$((n + 1))
	if ms=$(saquery_ms); then
		ok=$((ok + 1))
	else
		lat="$lat ${ms}(lost)"
		break		# the loop is stuck: no use asking again
	fi
	lat="$lat $ms"
done
fab_log "saquery ms (process start to exit): before the flood:$base; during it:$lat"
fab_check "5: saquery answered during the flood ($ok of $n)" \
	test "$n" -ge 3 -a "$ok" -eq "$n"
wait "$PROBE_PID"
rm -f "$FAB_TMP/pids/$PROBE_PID"
wait "$FLOOD"
rm -f "$FAB_TMP/pids/$FLOOD"
sed 's/^/    before the flood: /' "$FAB_TMP/probe.before"
sed 's/^/    during the flood: /' "$FAB_TMP/probe.during"
fab_check "5: sminfo after the flood: MASTER at LID $LA" sm_state_is "$LA" MASTER
fab_check "5: saquery after the flood" fab_run "$DIAG" saquery -s

sm_stop_named B
fab_check "standby exits cleanly" [ $? -eq 0 ]
sm_stop_named A
fab_check "master exits cleanly" [ $? -eq 0 ]
fab_summary
