#!/usr/bin/env bash
# tests/fabric/test_sa_rmpp_hold.sh - hosts that hold RMPP answers open.
#
# H0003 and H0004 (tests/fabric/sa_hostile slowack) each keep 4 NodeRecord
# GetTables in flight and ACK segment 1 with window 1 of each answer every
# 0.3 s, again and again, replacing at once every answer the SA gives up;
# the SA's pool is 8 transfers (--sa-max-transfers 8), so the two of them
# fill it.  A repeated ACK is no progress: each held answer must be ABORTed
# within its lifetime (timeout x (retries + 1) + segments at 100/s: 0.93 s
# for the 13 segments of fat2-small's NodeRecords at the defaults), and
# H0005, asking while the pool is full, must be served: its whole table
# through RMPP (ibsmctl query nodes, its own RMPP receiver), one record
# per node as ibnetdiscover counts them, by taking a slot from a holder
# over its fair share (the "preempted" count of the SA limits line).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

hostile=${SA_HOSTILE:-$(dirname "$IBSM")/../tests/fabric/sa_hostile}
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
[ -x "$hostile" ] || { echo "test_sa_rmpp_hold: $hostile not built" >&2; exit 1; }

fab_sim_start "$FAB_TOPO/fat2-small.net" rmpphold || exit 1
dir=$FAB_TMP/sm
if ! fab_ibsm_start H0001 "$dir" --sa-max-transfers 8; then
	fab_fail "ibsm brings fat2-small up"
	fab_summary
	exit 1
fi
fab_pass "ibsm brings fat2-small up"
# one NodeRecord per switch and per CA port (one each on fat2-small)
fab_run H0002 ibnetdiscover >"$FAB_TMP/topo" 2>/dev/null
nodes=$(awk '/^(Switch|Ca)[ \t]/ { n++ } END { print n + 0 }' "$FAB_TMP/topo")

fab_spawn H0003 "$hostile" slowack -n 4 -i 0.3 -t 6 >"$FAB_TMP/h3" 2>&1
p3=$FAB_SPAWN_PID
fab_spawn H0004 "$hostile" slowack -n 4 -i 0.3 -t 6 >"$FAB_TMP/h4" 2>&1
p4=$FAB_SPAWN_PID
sleep 2
fab_run H0005 "$CTL" --json query nodes >"$FAB_TMP/nodes.json" 2>"$FAB_TMP/nodes.err"
rc=$?
fab_check "H0005 served while the pool is held (exit $rc)" test "$rc" -eq 0
fab_check "H0005 got every NodeRecord ($nodes)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
recs = d if isinstance(d, list) else next(v for v in d.values() if isinstance(v, list))
assert len(recs) == int(sys.argv[2]), (len(recs), sys.argv[2])
' "$FAB_TMP/nodes.json" "$nodes"
wait "$p3" "$p4"
rm -f "$FAB_TMP/pids/$p3" "$FAB_TMP/pids/$p4"
sed 's/^/    /' "$FAB_TMP/h3" "$FAB_TMP/h4" "$FAB_TMP/nodes.err"

# field FILE WORD: the number after WORD.
field() {
	sed -n "s/.* $2 \([0-9.]*\).*/\1/p" "$1" | head -n 1
}
for h in h3 h4; do
	held=$(field "$FAB_TMP/$h" held)
	aborted=$(field "$FAB_TMP/$h" aborted)
	max=$(field "$FAB_TMP/$h" max_held)
	fab_check "$h held answers (${held:-?})" test "${held:-0}" -ge 4
	fab_check "$h lost them to ABORTs (${aborted:-?})" test "${aborted:-0}" -ge 4
	# 0.93 s of lifetime, plus the ACK interval and scheduling
	fab_check "$h held none longer than its lifetime (${max:-?} s)" \
		awk -v m="${max:-99}" 'BEGIN { exit !(m < 2.0) }'
done

fab_check "the SM is still master" fab_wait_master 10
if fab_ibsm_stop; then
	fab_pass "ibsm exits cleanly"
else
	fab_fail "ibsm exits cleanly"
fi
grep "SA limits" "$dir/ibsm.log" | tail -n 1 | sed 's/^/    /'
fab_check "a holder's transfer was preempted for H0005" \
	grep -Eq "SA limits: transfers 8 .* [1-9][0-9]* preempted" "$dir/ibsm.log"
fab_summary
