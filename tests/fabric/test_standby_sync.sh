#!/usr/bin/env bash
# tests/fabric/test_standby_sync.sh - a standby's copy of the master's SA
# state (sm/ha/sync.c), fetched over ibsim.
#
# Until the state machine has a STANDBY, ibsm's hidden debug mode
# IBSM_DEBUG_COPY_FROM=LID makes a second ibsm a standby of the SM at LID
# (no sweep): it prints its first complete copy and exits.  On a fabric
# of one switch and two hosts (small enough that umad2sim's junk in bytes
# 168-199 of every MAD's data, see doc/design.md, touches no field the
# copy keeps): ibsm master on H0001; H0001 and H0002 join a group
# (full, non), H0002 registers a ServiceRecord (lease 3600) and subscribes
# to trap 64; the copy made from H0002 holds every port's LID as the
# master assigned it, the group's two members with their JoinStates and
# the master's MLID, the service with a remaining lease <= 3600, the
# subscription with its QPN; nothing dropped.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
CLIENT=$BUILD/tests/fabric/sa_client
MJ=$BUILD/tests/fabric/mc_join
for f in "$CLIENT" "$MJ"; do
	[ -x "$f" ] || {
		fab_fail setup "$f is not built"
		fab_summary
		exit 1
	}
done

NET=$FAB_TMP/two-hosts.net
cat >"$NET" <<'NET'
Switch 8 "sw"
[1]	"H0001"[1]
[2]	"H0002"[1]

Hca 1 "H0001"
[1]	"sw"[1]

Hca 1 "H0002"
[1]	"sw"[2]
NET

fab_sim_start "$NET" sync || exit 1
fab_ibsm_start H0001 "$FAB_TMP/a" -s 0 || {
	fab_fail master-up
	fab_summary
	exit 1
}
line=$(fab_run H0002 sminfo 2>&1)
master=$(sed -n 's/.*sm lid \([0-9]*\).*/\1/p' <<<"$line")
[ -n "$master" ] || {
	fab_fail sminfo "$line"
	fab_summary
	exit 1
}

MGID=ff12:e01b::5a
j1=$(fab_run H0001 "$MJ" -J full -m "$MGID" -c join 2>&1)
j2=$(fab_run H0002 "$MJ" -J non -m "$MGID" join 2>&1)
mlid=$(sed -n 's/.* mlid=\([^ ]*\).*/\1/p' <<<"$j1" | head -n 1)
if [[ $j1 == *status=SUCCESS* && $j2 == *status=SUCCESS* && -n $mlid ]]; then
	fab_pass "joins (mlid $mlid)"
else
	fab_fail joins "$j1 / $j2"
fi
svc=$(fab_run H0002 "$CLIENT" service-set 0x5151 sync-test 3600 2>&1)
[[ $svc == service* ]] && fab_pass service-set || fab_fail service-set "$svc"
# bounded: umad2sim's exit can deadlock (test_sa.sh)
FAB_TIMEOUT=20 fab_run H0002 "$CLIENT" subscribe 64 3 issm >"$FAB_TMP/sub.out" 2>&1 &
sub=$!
for ((i = 0; i < 100; i++)); do
	grep -q subscribed "$FAB_TMP/sub.out" 2>/dev/null && break
	sleep 0.1
done
grep -q subscribed "$FAB_TMP/sub.out" && fab_pass subscribe ||
	fab_fail subscribe "$(cat "$FAB_TMP/sub.out")"

# The standby's copy, from H0002.
mkdir -p "$FAB_TMP/b"
IBSM_DEBUG_COPY_FROM=$master fab_run H0002 "$IBSM" -f "$FAB_TMP/b/ibsm.log" \
	--cache-dir "$FAB_TMP/b" --dump-dir "$FAB_TMP/b" \
	>"$FAB_TMP/copy.out" 2>"$FAB_TMP/copy.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^copy ' "$FAB_TMP/copy.out"; then
	fab_pass "copy taken ($(head -n 1 "$FAB_TMP/copy.out"))"
else
	fab_fail copy "exit $rc: $(tail -n 5 "$FAB_TMP/copy.err" "$FAB_TMP/b/ibsm.log")"
fi
if grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" \
	"$FAB_TMP/copy.err"; then
	fab_fail copy-sanitizers "$(head -n 20 "$FAB_TMP/copy.err")"
fi
sed 's/^/    /' "$FAB_TMP/copy.out"

# What the copy must hold.
fab_check copy-nothing-dropped grep -q '^copy .* dropped 0 over 0$' "$FAB_TMP/copy.out"
fab_check copy-three-lids test "$(grep -c '^lid ' "$FAB_TMP/copy.out")" -eq 3
# Every LID as the master's guid2lid has it.
lids_ok=1
while read -r guid lo _; do
	[ -n "$guid" ] || continue
	grep -qi "^lid $guid $((lo))\$" "$FAB_TMP/copy.out" || lids_ok=0
done < <(grep '^0x' "$FAB_TMP/a/guid2lid")
[ "$(grep -c '^0x' "$FAB_TMP/a/guid2lid")" -eq 3 ] || lids_ok=0
fab_check copy-lids-are-the-masters test "$lids_ok" -eq 1
fab_check copy-members-two test "$(grep -c "^member .* mlid $mlid " "$FAB_TMP/copy.out")" -eq 2
fab_check copy-join-states bash -c "grep -q '^member .* join 0x1\$' '$FAB_TMP/copy.out' &&
	grep -q '^member .* join 0x2\$' '$FAB_TMP/copy.out'"
lease=$(sed -n 's/^service 0x5151 sync-test lease \([0-9]*\) .*/\1/p' "$FAB_TMP/copy.out")
fab_check copy-service-remaining-lease bash -c "[ -n '$lease' ] && [ '$lease' -le 3600 ] && [ '$lease' -ge 3500 ]"
fab_check copy-subscription grep -q '^subscription port .* trap 64 qpn [1-9]' "$FAB_TMP/copy.out"

wait "$sub"	# the subscriber's 3 s without a Report (it stays subscribed)
fab_ibsm_stop || fab_fail master-exit "exit $?"
fab_summary
