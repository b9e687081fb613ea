#!/usr/bin/env bash
# tests/fabric/test_mc_share.sh - four hosts cannot take the last
# multicast LIDs from a fifth.
#
# ibsim's switches hold 1,024 MLIDs (MulticastFDBCap).  H0003-H0006 each
# create 256 groups at once (tests/fabric/mc_join -N 256, 4 requests in
# flight each): 1,024 groups, more than the MLIDs left beside the IPoIB
# broadcast group.  Then H0007 creates 20 groups: every one must be
# created, with an MLID that saquery (MCMemberRecord by MGID) and the
# MulticastForwardingTable of H0007's leaf switch (ibroute -M) agree on.
# Each of the four gets a fair part, whichever came first, and they are
# refused before the pool runs dry (NO_RESOURCES: a host at its share of
# the MLIDs while they run short); the SM says so in its log.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MJ=${MC_JOIN:-$(dirname "$IBSM")/../tests/fabric/mc_join}
[ -x "$MJ" ] || { echo "test_mc_share: $MJ not built" >&2; exit 1; }

fab_sim_start "$FAB_TOPO/fat2-small.net" mcshare || exit 1
dir=$FAB_TMP/sm
if ! fab_ibsm_start H0001 "$dir"; then
	fab_fail "ibsm brings fat2-small up"
	fab_summary
	exit 1
fi
fab_pass "ibsm brings fat2-small up"

# field LINE KEY: the value of KEY=... in an mc_join line.
field() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1" | head -n 1
}

pids=()
for h in 3 4 5 6; do
	fab_spawn "H000$h" "$MJ" -c -N 256 -w 4 -m "ff15:a01c::$h:0:0" join \
		>"$FAB_TMP/h$h" 2>&1
	pids+=("$FAB_SPAWN_PID")
done
for p in "${pids[@]}"; do
	wait "$p"
	rm -f "$FAB_TMP/pids/$p"
done
total=0
refused=0
for h in 3 4 5 6; do
	line=$(grep '^joins ' "$FAB_TMP/h$h")
	echo "    H000$h: $line"
	ok=$(field "$line" ok)
	failed=$(field "$line" failed)
	total=$((total + ${ok:-0}))
	refused=$((refused + ${failed:-0}))
	# whoever came first, each got a fair part
	fab_check "H000$h got groups (ok ${ok:-?}, refused ${failed:-?})" \
		test "${ok:-0}" -ge 150
done
fab_check "the four were refused before the MLIDs ran out (hold $total, refused $refused)" \
	test "$total" -lt 1000 -a "$refused" -ge 24

line=$(fab_run H0007 "$MJ" -c -N 20 -v -m "ff15:a01c::7:0:0" join 2>&1 |
	tee "$FAB_TMP/h7" | grep '^joins ')
echo "    H0007: $line"
fab_check "a fifth host creates its 20 groups (ok $(field "$line" ok))" \
	test "$(field "$line" ok)" = 20

# The last of H0007's groups as the diags see it.
mgid=ff15:a01c::7:0:13
fab_run H0002 saquery --mgid "$mgid" MCMR >"$FAB_TMP/mcmr" 2>&1
mlid=$(sed -n 's/^[[:space:]]*[Mm]lid\.*\(0x[0-9a-fA-F]*\)$/\1/p' "$FAB_TMP/mcmr" | head -n 1)
fab_check "saquery knows H0007's group $mgid (MLID ${mlid:-none})" test -n "$mlid"
leaf=$(fab_run H0007 smpquery -D nodeinfo 0,1 2>/dev/null |
	sed -n 's/^Guid:\.*//p' | head -n 1)
# the tree is programmed after the join: give it a few seconds
for ((i = 0; i < 50; i++)); do
	fab_run H0007 ibroute -M -D 0,1 >"$FAB_TMP/mft" 2>&1
	grep -qi "^${mlid:-none} " "$FAB_TMP/mft" && break
	sleep 0.1
done
fab_check "H0007's leaf ($leaf) forwards MLID ${mlid:-none}" \
	grep -qi "^${mlid:-none} " "$FAB_TMP/mft"

if fab_ibsm_stop; then
	fab_pass "ibsm exits cleanly"
else
	fab_fail "ibsm exits cleanly"
fi
fab_check "the log names a refused host's share" \
	grep -q "by port 0x[0-9a-f]*: the requester created its most groups, or its share of the multicast LIDs" "$dir/ibsm.log"
fab_summary
