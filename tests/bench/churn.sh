#!/usr/bin/env bash
# tests/bench/churn.sh - the daemon under link churn.
#
# Starts ibsim on a fabric (default tests/topologies/fat2-1152.net) and the
# ibsm daemon on H0001, then:
#   1. FLAPS single flaps (default 50): a random link (switch-switch or
#      switch-host, never H0001's own) goes down (ibsim Unlink), a second
#      later comes back (ReLink), a second later the next one;
#   2. BURSTS bursts (default 5) of BURST links (default 10) at once: all
#      of them down in one console command, then, once the subnet is up
#      and checked, all of them back in one command.
# Every event is timed from the console command to the next "SUBNET UP"
# in ibsm's log (the log's own time stamp).  After the single flaps and
# after each half of a burst, the diags judge the subnet
# (tests/fabric/route_check.py on ibnetdiscover, iblinkinfo and ibroute:
# links, LIDs and every CA-to-LID route, no loop, no dead end) and the
# time from the event to routes verified is recorded too.  The heavy
# sweeps a burst caused are counted from the log: a burst must coalesce
# into few sweeps, not one per link.
#
# Prints one line per event, then: events, crashes (0: the daemon is alive
# at the end and exits cleanly on SIGTERM), subnets judged and how many
# failed, the median / p90 / max of event -> SUBNET UP and of burst ->
# routes verified, heavy sweeps per burst.
#
#	tests/bench/churn.sh [-n NETFILE] [-f FLAPS] [-b BURSTS] [-s BURST]
#	                     [-S SEED] [-k] [-- IBSM OPTIONS...]
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm.  Not part of
# tests/run (several minutes on the 1,152-host fabric).
set -u -o pipefail

user_ibsm=${IBSM:-}
FAB_TIMEOUT=${FAB_TIMEOUT:-3600}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

net=$FAB_TOPO/fat2-1152.net
flaps=50
bursts=5
burst=10
seed=1
while getopts "n:f:b:s:S:kh" opt; do
	case $opt in
	n) net=$(readlink -f "$OPTARG") ;;
	f) flaps=$OPTARG ;;
	b) bursts=$OPTARG ;;
	s) burst=$OPTARG ;;
	S) seed=$OPTARG ;;
	k) FAB_KEEP=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
ibsm_args=("$@")

die() {
	echo "churn: $*" >&2
	exit 1
}

if [ -n "$user_ibsm" ]; then
	IBSM=$(readlink -f "$user_ibsm")
else
	IBSM=$FAB_TOP/build/release/sm/ibsm
	[ -x "$IBSM" ] || "$FAB_TOP/tools/bootstrap.sh" release >/dev/null ||
		die "release build failed"
fi
[ -x "$IBSM" ] || die "$IBSM is not built"

# Every link once, as "NODE PORT KIND": the end of the link in the record
# of the node listed first (switch ends: a host's link is named from its
# switch's side, as ibsim's Unlink takes either end).  H0001's own link is
# left out: the SM would lose the fabric.
links=$FAB_TMP/links
awk '
	/^(Switch|Hca)/ { kind = $1; s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); node = s; next }
	/^[ \t]*\[[0-9]+\][ \t]*"/ {
		p = $0; sub(/^[ \t]*\[/, "", p); sub(/\].*/, "", p)
		q = $0; sub(/^[^"]*"/, "", q); peer = q; sub(/".*/, "", peer)
		pp = q; sub(/^[^[]*\[/, "", pp); sub(/\].*/, "", pp)
		if (node == "H0001" || peer == "H0001") next
		a = node "[" p "]"; b = peer "[" pp "]"
		if (seen[b]) next
		seen[a] = 1
		k = (kind == "Switch" && peer !~ /^H[0-9]+$/) ? "switch" : "host"
		print node, p, k
	}' "$net" >"$links"
n_links=$(wc -l <"$links")
[ "$n_links" -gt 0 ] || die "no links found in $net"
ends=$(sm_net_ends "$net")
RANDOM=$seed

echo "fabric: $(grep -c '^Hca' "$net") hosts, $(grep -c '^Switch' "$net") switches, $n_links links besides H0001's ($(basename "$net"))"
echo "ibsm:   $IBSM ${ibsm_args[*]}"

fab_sim_start "$net" churn || die "ibsim did not start"
sm_start H0001 "$FAB_TMP/sm" "${ibsm_args[@]}" || die "ibsm did not start"
sm_wait_up "$FAB_TMP/sm" 0 300 >/dev/null || die "no first SUBNET UP"
echo "first SUBNET UP: $(grep -m1 'SUBNET UP in' "$FAB_TMP/sm.out" "$FAB_TMP/sm.log" | head -n 1 | sed 's/.*SUBNET UP/SUBNET UP/' | cut -c1-80)"

up_times=$FAB_TMP/up_times
verified_times=$FAB_TMP/verified_times
: >"$up_times"
: >"$verified_times"
judged=0
bad=0
events=0

# pick: a random link line "NODE PORT KIND".
pick() {
	sed -n "$((RANDOM % n_links + 1))p" "$links"
}

# timed NAME CMD...: send the console commands at once, wait for the next
# SUBNET UP; prints the seconds, appends them to $up_times.
timed() {
	local name=$1 off t0 line t1 d
	shift
	off=$(stat -c %s "$FAB_TMP/sm.log")
	t0=$(date +%s.%N)
	fab_cmd "$@" >/dev/null || die "ibsim refused: $*"
	events=$((events + 1))
	if ! line=$(sm_wait_up "$FAB_TMP/sm" "$off" 120); then
		echo "$name: no SUBNET UP within 120 s"
		bad=$((bad + 1))
		return 1
	fi
	t1=$(sm_log_epoch "$line")
	d=$(sm_elapsed "$t0" "$t1")
	echo "$d" >>"$up_times"
	LAST_T0=$t0
	LAST_OFF=$off
	printf '%-28s -> SUBNET UP %7.3f s\n' "$name" "$d"
}

# judge NAME DOWN: the diags check the subnet with DOWN links missing;
# records event -> verified (retrying while the SM is still at work).
judge() {
	local name=$1 down=$2 i t2
	judged=$((judged + 1))
	for ((i = 0; i < 20; i++)); do
		if sm_diags H0001 "$FAB_TMP/diags" &&
			sm_verify "$FAB_TMP/diags" --ends $((ends - 2 * down)) \
				>"$FAB_TMP/verify" 2>&1; then
			t2=$(date +%s.%N)
			sm_elapsed "$LAST_T0" "$t2" >>"$verified_times"
			printf '%-28s    routes verified by the diags %.3f s after the event\n' \
				"$name" "$(sm_elapsed "$LAST_T0" "$t2")"
			return 0
		fi
		sleep 1
	done
	echo "$name: the diags do not agree: $(head -n 3 "$FAB_TMP/verify" | tr '\n' ' ')"
	bad=$((bad + 1))
	return 1
}

# 1. single flaps, a second apart
for ((i = 1; i <= flaps; i++)); do
	read -r node port kind < <(pick)
	timed "flap $i down $kind" "Unlink \"$node\"[$port]"
	sleep 1
	timed "flap $i up" "ReLink \"$node\"[$port]"
	sleep 1
	sm_alive || break
done
sm_alive && judge "after $flaps flaps" 0

# 2. bursts
sweeps_per_burst=()
for ((b = 1; b <= bursts; b++)); do
	sm_alive || break
	mapfile -t chosen < <(shuf -n "$burst" --random-source=<(yes "$seed$b") "$links")
	down=()
	upc=()
	for l in "${chosen[@]}"; do
		read -r node port _ <<<"$l"
		down+=("Unlink \"$node\"[$port]")
		upc+=("ReLink \"$node\"[$port]")
	done
	timed "burst $b: $burst down" "${down[@]}" || continue
	# let every trap of the burst arrive, then count the heavy sweeps it
	# caused (each ends with the "SMP window:" line)
	sleep 2
	n=$(tail -c +"$((LAST_OFF + 1))" "$FAB_TMP/sm.log" | grep -c 'SMP window:')
	sweeps_per_burst+=("$n")
	judge "burst $b: $burst down" "${#chosen[@]}"
	timed "burst $b: $burst up" "${upc[@]}" || continue
	sleep 2
	judge "burst $b: $burst up" 0
done

alive=1
sm_alive || alive=0
crashes=0
if [ "$alive" = 1 ]; then
	sm_stop || crashes=1
else
	crashes=1
fi

stats() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		printf "median %.3f s, p90 %.3f s, max %.3f s (n=%d)\n",
			v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.999)], v[NR], NR }'
}
echo
echo "events: $events (single flaps: $((2 * flaps)), bursts: $bursts x $burst links down and up)"
echo "crashes: $crashes"
echo "subnets judged by the diags: $judged, failed: $bad"
echo "event -> SUBNET UP: $(stats "$up_times")"
echo "event -> routes verified by the diags: $(stats "$verified_times")"
echo "heavy sweeps per burst of $burst: ${sweeps_per_burst[*]:-none}"
[ "$crashes" = 0 ] && [ "$bad" = 0 ]
