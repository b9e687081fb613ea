#!/usr/bin/env bash
# tests/bench/mcast_resweep.sh - what a topology change costs the
# multicast side of ibsm: the trees rebuilt and the MFT blocks compared
# after the heavy sweep a trap 128 starts, next to the sweep itself.
# By hand, not in tests/run.
#
#   tests/bench/mcast_resweep.sh [-g GROUPS] [-h HOSTS] [TOPOLOGY.net]
#
# On a fresh ibsim of the topology (default: the bundled 1,152-host fat
# tree) ibsm comes up on H0001 (no periodic sweep); HOSTS hosts (default
# 16: H0003, H0021, ..., one per leaf) join GROUPS groups each (default
# 250, ibsm's groups-per-port limit is 256), two hosts per block of
# groups (hosts 2k and 2k+1 join ff12:e01b::k:0 on), one client at a
# time (ibsim takes 10 clients): HOSTS / 2 x GROUPS groups of two
# members on two leaves.  Then a leaf-spine link goes down and comes
# back (ibsim console Unlink / ReLink); each change sends trap 128 and
# ibsm runs a heavy sweep.  Printed for each: ibsm's "heavy sweep:" line
# (discovery, programming and activation times) and its "multicast: N groups, N trees rebuilt" line
# for the multicast update that follows (trees rebuilt and the time to
# build them, MFT Sets sent and the time until they were answered).
#
# Measure a release build (tools/bootstrap.sh release; IBSM=.../sm/ibsm,
# IBSM_BUILD=... for mc_join).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

groups=250
nhosts=16
while getopts "g:h:" o; do
	case $o in
	g) groups=$OPTARG ;;
	h) nhosts=$OPTARG ;;
	*)
		echo "usage: $0 [-g GROUPS] [-h HOSTS] [TOPOLOGY.net]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
net=${1:-$FAB_TOPO/fat2-1152.net}
BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
MJ=${MC_JOIN:-$BUILD/tests/fabric/mc_join}
[ -x "$MJ" ] || { echo "mcast_resweep: $MJ not built" >&2; exit 1; }

fab_sim_start "$net" resweep || exit 1
dir=$FAB_TMP/resweep
fab_ibsm_start H0001 "$dir" -s 0 || exit 1
log=$dir/ibsm.log

t0=$(date +%s.%N)
for ((k = 0; k < nhosts; k++)); do
	h=$(printf 'H%04d' $((3 + 18 * k)))
	mgid=$(printf 'ff12:e01b::%x:0' $((k / 2 + 1)))
	out=$(fab_run "$h" "$MJ" -m "$mgid" -c -N "$groups" -w 8 -T 120 join 2>&1)
	grep -q "^joins" <<<"$out" || { echo "joins of $h failed: $out" >&2; exit 1; }
done
echo "joins: $((nhosts * groups)) in $(echo "$(date +%s.%N) - $t0" | bc) s"
sleep 2
echo "after the joins: $(grep 'multicast: [0-9]* groups, [0-9]* trees rebuilt' "$log" | tail -n 1 | sed 's/.*multicast: //')"

# change CMD: one topology change; waits for the heavy sweep and the
# multicast update after it.
change() {
	local sweeps mc i
	sweeps=$(grep -c 'heavy sweep:' "$log")
	fab_cmd "$1" >/dev/null || { echo "ibsim refused $1" >&2; exit 1; }
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c 'heavy sweep:' "$log")" -gt "$sweeps" ] && break
		sleep 0.1
	done
	sleep 3
	echo "$1:"
	grep 'heavy sweep:' "$log" | tail -n 1 | sed 's/.*heavy sweep: /  sweep: /'
	mc=$(awk -v n="$sweeps" '/heavy sweep:/ { s++ } s > n && /multicast: [0-9]* groups, [0-9]* trees rebuilt/' "$log")
	sed 's/.*multicast: /  multicast: /' <<<"$mc"
}
change 'Unlink "leaf-08"[19]'
change 'ReLink "leaf-08"[19]'
fab_ibsm_stop
fab_sim_stop
