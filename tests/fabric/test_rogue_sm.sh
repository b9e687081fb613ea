#!/usr/bin/env bash
# tests/fabric/test_rogue_sm.sh - an SM of another SM_Key cannot take the
# subnet (IB spec 14.4.1), judged by the diags.
#
# ibsm (priority 1) is master of fat2-small.  OpenSM 3.3.23 with priority
# 15 and another sm_key starts on H0002: ibsm stays MASTER, `ibsmctl sms`
# lists OpenSM as untrusted (its LID and the switch port it sits behind),
# and `ibsmctl health` reports it.  OpenSM stops: within one sweep
# interval the diags see ibsm's LIDs again and routes that verify.  With
# the same SM_Key, the usual election: the 15 wins.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/ibsm.sock
DIAG=H0004
SWEEP=4

if ! command -v opensm >/dev/null; then
	fab_fail "opensm installed" "the rogue is OpenSM"
	fab_summary
	exit 1
fi
ctl() { "$CTL" --socket "$SOCK" "$@"; }

lid_of() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk -v h="'$1 " '$1 == "CA" && index($0, h) { print $2; exit }'
}
state_at() {
	fab_run "$DIAG" sminfo "$1" 2>/dev/null | grep -o 'SMINFO_[A-Z]*' | head -n 1
}
lids() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk '$1 == "CA" || $1 == "SW" { print $4, $2 }' | sort >"$1"
	[ -s "$1" ]
}
O_PID=
start_osm() {	# start_osm KEY NAME: OpenSM priority 15 on H0002, in $T/NAME
	local d=$T/$2
	mkdir -p "$d"
	fab_spawn H0002 env OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" \
		opensm -p 15 -k "$1" -s 2 -f "$d/log" >>"$d/out" 2>&1
	O_PID=$FAB_SPAWN_PID
}
stop_osm() {
	kill -TERM "$(fab_descendant "$O_PID" opensm)" 2>/dev/null
	kill -TERM "$O_PID" 2>/dev/null
	wait "$O_PID" 2>/dev/null
	rm -f "$T/pids/$O_PID"
	O_PID=
}

# 1. ibsm master, priority 1, light sweeps every $SWEEP s.
sm_sim_and_sm_up "$FAB_TOPO/fat2-small.net" rogue "$T/sm" -p 1 \
	-s "$SWEEP" --control-socket "$SOCK"
LA=$(lid_of H0001)
lids "$T/lids.before"
sm_diags "$DIAG" "$T/d.before" || fab_fail diags-before

# 2. The rogue: priority 15, another key.
start_osm 0x00000000deadbeef rogue
for ((i = 0; i < 100; i++)); do
	ctl sms 2>/dev/null | grep -q untrusted && break
	sleep 0.2
done
ctl sms >"$T/sms.txt" 2>&1
sed 's/^/    /' "$T/sms.txt"
sleep "$SWEEP"
lids "$T/lids.mid"
sm_diags "$DIAG" "$T/d.mid"
echo "    while the rogue ran: $(diff "$T/lids.before" "$T/lids.mid" | grep -c '^>') ports with another LID, $(diff "$T/d.before/lfts" "$T/d.mid/lfts" | grep -c '^>') LFT entries not ibsm's; ibsm's light sweeps found ports naming the rogue $(grep -c 'ERR 0231' "$T/sm.log") times"
fab_check ibsm-stays-master test "$(state_at "$LA")" = SMINFO_MASTER
fab_check sms-lists-rogue-untrusted grep -q \
	"^0x0000000000100003 .* untrusted: another SM_Key" "$T/sms.txt"
fab_check sms-names-its-switch-port grep -q "untrusted.* behind 0x[0-9a-f]*\[[0-9]*\]" \
	"$T/sms.txt"
fab_check rogue-logged grep -q "ERR 1125: SM 0x0000000000100003 .*another SM_Key" \
	"$T/sm.log"
ctl health --json >"$T/health.json" 2>/dev/null
fab_check health-finding python3 - "$T/health.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d.get("findings", []) if x.get("kind") == "untrusted_sm"]
sys.exit(0 if f else 1)
EOF
fab_check ibsm-never-left-master bash -c "! grep -q 'SM 1109\|SM 1105\|-> STANDBY' '$T/sm.log'"

# 3. The rogue stops: ibsm's LIDs and routes, within one sweep interval.
stop_osm
t0=$(date +%s.%N)
back=timeout
while awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$((3 * SWEEP))" \
	'BEGIN { exit !(b - a < l) }'; do
	if lids "$T/lids.after" && diff -q "$T/lids.before" "$T/lids.after" >/dev/null &&
		[ "$(state_at "$LA")" = SMINFO_MASTER ] &&
		sm_diags "$DIAG" "$T/d.after" &&
		diff -q "$T/d.before/lfts" "$T/d.after/lfts" >/dev/null; then
		back=$(sm_elapsed "$t0" "$(date +%s.%N)")
		break
	fi
	sleep 0.2
done
echo "    ibsm's LIDs and forwarding tables seen again $back s after the rogue stopped (sweep interval $SWEEP s)"
fab_check lids-back-within-a-sweep awk -v t="$back" -v s="$SWEEP" \
	'BEGIN { exit !(t != "timeout" && t <= s + 1) }'
routes_ok() { sm_diags "$DIAG" "$T/diags" && sm_verify "$T/diags"; }
fab_check routes-verify routes_ok

# 4. The same key: OpenSM's 15 wins the election.
start_osm 0x0000000000000001 same-key
LO=$(lid_of H0002)
won=0
for ((i = 0; i < 150; i++)); do
	[ "$(state_at "$LO")" = SMINFO_MASTER ] && [ "$(state_at "$LA")" = SMINFO_STANDBY ] &&
		{ won=1; break; }
	sleep 0.2
done
fab_check same-key-15-wins test "$won" -eq 1
stop_osm
sm_stop
fab_check sm-clean-exit test $? -eq 0
fab_summary
