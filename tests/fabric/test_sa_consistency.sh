#!/usr/bin/env bash
# tests/fabric/test_sa_consistency.sh - the SA never shows half a sweep.
#
# ibsm runs as master on the 1,152-host fat tree.  One client keeps
# fetching the whole NodeRecord table (`ibsmctl --json query nodes`,
# hundreds of RMPP segments) while the console unlinks and relinks a
# host's cable again and again: each change is a trap, then a heavy sweep
# that rebuilds the fabric model from nothing.  The SA answers from the
# model of the last completed sweep, so every table must hold either the
# whole fabric (one NodeRecord per switch and per CA port) or the whole
# fabric less the unplugged host -- never a model caught half-built, which
# would show any count below that.  The sweeps must also really have run
# while the tables were being fetched (SUBNET UP lines in ibsm's log),
# and the tables must have seen both states of the fabric.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
NET=${SA_CONSISTENCY_NET:-$FAB_TOPO/fat2-1152.net}
HOST=H1152			# the host whose cable comes and goes
FLIPS=${SA_CONSISTENCY_FLIPS:-4}

fab_sim_start "$NET" consist || exit 1
if ! fab_ibsm_start H0001 "$FAB_TMP/sm"; then
	fab_fail consist-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass consist-ibsm-up

# count_nodes OUT: the NodeRecords of one table ibsmctl fetched, or -1.
count_nodes() {
	python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' \
		"$1" 2>/dev/null || echo -1
}
full=$(awk '/^Switch[ \t]/ { n++ } /^(Hca|Ca)[ \t]/ { n++ }
	END { print n + 0 }' "$NET")

# The client: whole tables, one after the other, until told to stop.
stop=$FAB_TMP/stop
counts=$FAB_TMP/counts
: >"$counts"
(
	i=0
	while [ ! -e "$stop" ]; do
		i=$((i + 1))
		if fab_run H0003 "$CTL" --json query nodes \
			>"$FAB_TMP/nodes-$i.json" 2>"$FAB_TMP/nodes-$i.err"; then
			count_nodes "$FAB_TMP/nodes-$i.json" >>"$counts"
		else
			# The reason goes with the failure, for the report.
			echo "fail $i: $(tr '\n' ' ' <"$FAB_TMP/nodes-$i.err" |
				cut -c1-160)" >>"$counts"
		fi
	done
) &
client=$!

# Cable out, cable in, FLIPS times; wait for each sweep's SUBNET UP (the
# log says "SUBNET UP" at the end of every heavy sweep).
ups() {
	grep -c "SUBNET UP$" "$FAB_TMP/sm/ibsm.log"
}
before=$(ups)
want=$before
for ((k = 0; k < FLIPS; k++)); do
	for cmd in Unlink ReLink; do
		fab_cmd "$cmd \"$HOST\"[1]" >/dev/null
		want=$((want + 1))
		for ((i = 0; i < 200 && $(ups) < want; i++)); do
			sleep 0.05
		done
	done
done
sleep 0.5
touch "$stop"
wait "$client"
after=$(ups)

if ((after - before >= 2 * FLIPS)); then
	fab_pass "consist-sweeps ($((after - before)) heavy sweeps during the queries)"
else
	fab_fail consist-sweeps "only $((after - before)) SUBNET UP of $((2 * FLIPS))"
fi
n=$(grep -c . "$counts")
bad=$(awk -v a="$full" -v b="$((full - 1))" '$1 != a && $1 != b' "$counts" |
	head -n 5)
seen_full=$(grep -cx "$full" "$counts")
seen_less=$(grep -cx "$((full - 1))" "$counts")
if [ "$n" -ge 3 ] && [ -z "$bad" ] && [ "$seen_full" -gt 0 ] &&
	[ "$seen_less" -gt 0 ]; then
	fab_pass "consist-tables ($n NodeRecord tables, each $full or $((full - 1)) records)"
else
	fab_fail consist-tables "$n tables; unexpected: ${bad:-none}; want $full or $((full - 1))"
fi
sort "$counts" | uniq -c | sed 's/^/    tables: /'

if fab_ibsm_stop; then
	fab_pass consist-ibsm-clean-exit
else
	fab_fail consist-ibsm-clean-exit "exit status or sanitizer report"
fi
fab_summary
