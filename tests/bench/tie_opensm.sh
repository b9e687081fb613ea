#!/usr/bin/env bash
# tests/bench/tie_opensm.sh - ibsm and OpenSM with the same priority,
# started together: the SM with the lower port GUID must be master (IB
# spec 14.4.1: priority, then GUID), every time.
#
# Each try: a fresh ibsim on NET (default: a random graph of 48 switches
# of degree 4 with 6 hosts each, 288 hosts, generated once into the temp
# directory), ibsm -p PRIO on H0001 (the lowest CA GUID) and OpenSM -p
# PRIO on H0002 started back to back; then, every 0.25 s for at most
# LIMIT s, each SM's own SMInfo as sminfo reads it on its host (directed
# route of no hops: the SM of that port answers).  A try settles when
# ibsm says MASTER and OpenSM STANDBY; it fails when that does not hold
# by LIMIT s, or when it does not hold SETTLE s later.  Prints one line
# per try (the time to settle, and for how long both said MASTER), then
# "settled N of TRIES".  Exit status 0 only when every try settled.
#
#   IBSM=build/release/sm/ibsm TRIES=20 bash tests/bench/tie_opensm.sh
#   NET=tests/topologies/fat2-small.net TRIES=5 bash tests/bench/tie_opensm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

TRIES=${TRIES:-20}
PRIO=${PRIO:-7}
LIMIT=${LIMIT:-22}
SETTLE=${SETTLE:-3}
if [ -z "${NET:-}" ]; then
	NET=$FAB_TMP/random-288.net
	python3 "$FAB_TOPO/gen-topo" random --switches 48 --degree 4 \
		--hosts-per-switch 6 --seed 27 -o "$NET" || exit 1
fi
command -v opensm >/dev/null || {
	echo "opensm is not installed"
	exit 1
}

# state_of HOST: the SMInfo state of the SM on HOST's port.
state_of() {
	fab_run "$1" sminfo -D 0 2>/dev/null | grep -o 'SMINFO_[A-Z]*' | head -n 1
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

one_try() {	# one_try N: prints the try's line; 0 when it settled
	local n=$1 d=$FAB_TMP/try$1 I O t0 si so both=0 settled= rc=1 last
	mkdir -p "$d/ibsm" "$d/osm"
	fab_sim_start "$NET" "tie$n" >/dev/null || return 1
	fab_spawn H0001 "$IBSM" -p "$PRIO" -f "$d/ibsm.log" --cache-dir "$d/ibsm" \
		--dump-dir "$d/ibsm" >"$d/ibsm.out" 2>&1
	I=$FAB_SPAWN_PID
	fab_spawn H0002 env OSM_CACHE_DIR="$d/osm" OSM_TMP_DIR="$d/osm" \
		opensm -p "$PRIO" -f "$d/osm.log" >"$d/osm.out" 2>&1
	O=$FAB_SPAWN_PID
	t0=$(now)
	while :; do
		si=$(state_of H0001)
		so=$(state_of H0002)
		if [ "$si" = SMINFO_MASTER ] && [ "$so" = SMINFO_MASTER ]; then
			both=$((both + 1))
		fi
		if [ "$si" = SMINFO_MASTER ] && [ "$so" = SMINFO_STANDBY ]; then
			settled=$(since "$t0")
			break
		fi
		awk -v e="$(since "$t0")" -v l="$LIMIT" 'BEGIN { exit !(e > l) }' && break
		sleep 0.25
	done
	last="ibsm $si, OpenSM $so"
	if [ -n "$settled" ]; then
		sleep "$SETTLE"
		si=$(state_of H0001)
		so=$(state_of H0002)
		last="ibsm $si, OpenSM $so"
		[ "$si" = SMINFO_MASTER ] && [ "$so" = SMINFO_STANDBY ] && rc=0
	fi
	echo "try $n: settled ${settled:-never} s; both MASTER in $both reads;" \
		"$SETTLE s later: $last"
	kill -TERM "$(fab_descendant "$O" opensm)" 2>/dev/null
	kill -TERM "$I" "$O" 2>/dev/null
	wait "$I" "$O" 2>/dev/null
	rm -f "$FAB_TMP/pids/$I" "$FAB_TMP/pids/$O"
	grep -q 'ERROR: AddressSanitizer\|runtime error:' "$d/ibsm.out" && {
		echo "    sanitizer report in $d/ibsm.out"
		rc=1
	}
	fab_sim_stop
	return $rc
}

ok=0
echo "$(grep -c '^Hca' "$NET") hosts, $(grep -c '^Switch' "$NET") switches;" \
	"priority $PRIO on both; ibsm on H0001 (lower GUID), OpenSM on H0002"
for ((t = 1; t <= TRIES; t++)); do
	one_try "$t" && ok=$((ok + 1))
done
echo "settled $ok of $TRIES"
[ "$ok" -eq "$TRIES" ]
