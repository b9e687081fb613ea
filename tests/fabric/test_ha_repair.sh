#!/usr/bin/env bash
# tests/fabric/test_ha_repair.sh - a standby that took over for a moment
# leaves the fabric to the master (IB spec 14.4.1: only the master
# configures the subnet), judged by smpquery and saquery.
#
# fat2-small: ibsm prio 10 on H0001 is master, ibsm prio 5 on H0002
# stands by, both with a light sweep every SWEEP s.  Each try: ibsim
# drops every MAD at H0001 for LOSS s (`Error "H0001" 100`), so the
# standby takes over and points every port at itself (MasterSMLID); then
# the loss ends.  Within SWEEP + SLACK s of that:
#   - every host's port (smpquery portinfo from the diags' host) names
#     the master's LID as MasterSMLID, with MasterSMSL 0;
#   - saquery (which goes to the SM that MasterSMLID names) answers a
#     PathRecord query (one MAD: umad2sim has no RMPP, and multi-MAD
#     answers would hold the diags port's SA transfers);
#   - the master is MASTER and the other STANDBY (sminfo at each LID);
# and it stays so SETTLE s later (the standby sweeps no more after it
# met the better master: SETTLE, SWEEP + 2 s, passes the light sweep
# that the standby's incomplete takeover sweep would have turned into a
# heavy sweep SWEEP s after taking over, which came before the loss
# ended).  TRIES (default 1) repeats it on the same fabric; the time
# each try took is printed.  Then a one-shot SM (ibsm -o) on H0003
# points every port at itself and exits: the master sets them again
# within SWEEP + SLACK s.
set -uo pipefail

# The SMs live through every try (fab_spawn kills a client after
# FAB_TIMEOUT s): about 40 s a try on a loaded machine.
FAB_TIMEOUT=${FAB_TIMEOUT:-$((120 + ${TRIES:-1} * 60))}

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

NET=${REPAIR_NET:-$FAB_TOPO/fat2-small.net}
TRIES=${TRIES:-1}
LOSS=${LOSS:-4}
SWEEP=${SWEEP:-6}
SLACK=${SLACK:-4}
SETTLE=${SETTLE:-$((SWEEP + 2))}
DIAG=H0004
A_PID= B_PID=

state_at() {
	fab_run "$DIAG" sminfo "$1" 2>/dev/null | grep -o 'SMINFO_[A-Z]*' | head -n 1
}

# The CA LIDs, from ibnetdiscover -p.
ca_lids() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk '$1 == "CA" { print $2 }' | sort -un
}

# ports_wrong MASTERLID: "LID:MasterSMLID/MasterSMSL" of every host port
# that does not name MASTERLID with SL 0 (or does not answer); nothing
# when all do.
ports_wrong() {
	local lid out sm sl
	for lid in $CA_LIDS; do
		out=$(fab_run "$DIAG" smpquery portinfo "$lid" 1 2>/dev/null)
		sm=$(sed -n 's/^SMLid:\.*\([0-9]*\)$/\1/p' <<<"$out")
		sl=$(sed -n 's/^SMSL:\.*\([0-9]*\)$/\1/p' <<<"$out")
		[ "$sm" = "$1" ] && [ "$sl" = 0 ] || printf '%s:%s/%s ' "$lid" "${sm:-?}" "${sl:-?}"
	done
}

# all_good: ports, SA and the two SMs' states as they must be (the
# standby's only while it runs).
all_good() {
	[ -z "$(ports_wrong "$LA")" ] &&
		fab_run "$DIAG" saquery -p --src-to-dst "$LA:$LB" </dev/null 2>/dev/null |
			grep -q 'PathRecord' &&
		[ "$(state_at "$LA")" = SMINFO_MASTER ] &&
		{ [ -z "$B_PID" ] || [ "$(state_at "$LB")" = SMINFO_STANDBY ]; }
}

fab_sim_start "$NET" repair || exit 1
sm_start_named A H0001 -p 10 -s "$SWEEP"
for ((i = 0; i < 600; i++)); do
	grep -q 'SUBNET UP' "$FAB_TMP/A.log" 2>/dev/null && break
	sleep 0.1
done
sm_start_named B H0002 -p 5 -s "$SWEEP"
LA=$(fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
	awk '$1 == "CA" && index($0, "'"'"'H0001 ") { print $2; exit }')
LB=$(fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
	awk '$1 == "CA" && index($0, "'"'"'H0002 ") { print $2; exit }')
CA_LIDS=$(ca_lids)
for ((i = 0; i < 100; i++)); do
	[ "$(state_at "$LB")" = SMINFO_STANDBY ] && break
	sleep 0.2
done
fab_check "master LID $LA, standby LID $LB, $(wc -w <<<"$CA_LIDS") host ports" \
	all_good

ok=0
for ((try = 1; try <= TRIES; try++)); do
	fab_cmd 'Error "H0001" 100' >/dev/null
	# The standby takes over: wait for it, for at most LOSS s.
	took=no
	for ((i = 0; i < LOSS * 10; i++)); do
		if [ "$(state_at "$LB")" = SMINFO_MASTER ]; then
			took=yes
			break
		fi
		sleep 0.1
	done
	t_rest=$(awk -v l="$LOSS" -v i="$i" \
		'BEGIN { r = l - i / 10; printf "%.1f\n", (r > 0 ? r : 0) }')
	sleep "$t_rest"
	wrong_during=$(ports_wrong "$LA" | wc -w)
	fab_cmd 'Error "H0001" 0' >/dev/null
	t0=$(date +%s.%N)
	good=no
	while :; do
		if all_good; then
			good=yes
			break
		fi
		el=$(sm_elapsed "$t0" "$(date +%s.%N)")
		awk -v e="$el" -v l="$((SWEEP + SLACK))" 'BEGIN { exit !(e > l) }' && break
		sleep 0.2
	done
	el=$(sm_elapsed "$t0" "$(date +%s.%N)")
	stable=no
	if [ "$good" = yes ]; then
		sleep "$SETTLE"
		all_good && stable=yes
	fi
	echo "try $try: standby took over: $took; host ports naming another SM" \
		"during the loss: $wrong_during; all good $el s after the loss" \
		"($good), still $SETTLE s later: $stable"
	if [ "$good" = yes ] && [ "$stable" = yes ]; then
		ok=$((ok + 1))
	else
		echo "    wrong ports: $(ports_wrong "$LA"); A $(state_at "$LA"), B $(state_at "$LB")"
	fi
done
echo "repaired in $ok of $TRIES tries"
fab_check "every try: ports name the master and saquery answers within $((SWEEP + SLACK)) s, and stay so ($ok of $TRIES)" \
	[ "$ok" -eq "$TRIES" ]
sm_stop_named B
fab_check "standby exits cleanly" [ $? -eq 0 ]

# A one-shot SM (ibsm -o, no election) on H0003 points every port at
# itself and exits.  The master sets them again within SWEEP + SLACK s:
# by the sweep that the trap 144 of the one-shot SM's port starts, or by
# its light sweep (which finds ports naming another SM, ERR 0231) when
# that sweep came before the one-shot SM's Sets.  (The light sweep's
# check alone is shown by tests/unit/check_state.c.)
mkdir -p "$FAB_TMP/rogue"
fab_run H0003 "$IBSM" -o -f "$FAB_TMP/rogue/log" --cache-dir "$FAB_TMP/rogue" \
	--dump-dir "$FAB_TMP/rogue" >"$FAB_TMP/rogue/out" 2>&1
LR=$(fab_run "$DIAG" smpquery portinfo "$(head -n 1 <<<"$CA_LIDS")" 1 2>/dev/null |
	sed -n 's/^SMLid:\.*\([0-9]*\)$/\1/p')
t0=$(date +%s.%N)
good=no
for ((i = 0; i < (SWEEP + SLACK) * 5; i++)); do
	if all_good; then
		good=yes
		break
	fi
	sleep 0.2
done
echo "one-shot SM on H0003: ports named LID $LR; all naming the master again" \
	"after $(sm_elapsed "$t0" "$(date +%s.%N)") s: $good" \
	"($(grep -c 'ERR 0231' "$FAB_TMP/A.log") light sweeps found ports naming another SM)"
fab_check "a one-shot SM pointed the ports at itself (SMLid $LR, not $LA)" \
	[ -n "$LR" ] && [ "$LR" != "$LA" ]
fab_check "the master set them again within $((SWEEP + SLACK)) s" [ "$good" = yes ]

sm_stop_named A
fab_check "master exits cleanly" [ $? -eq 0 ]
fab_sim_stop
fab_summary
