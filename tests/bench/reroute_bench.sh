#!/usr/bin/env bash
# tests/bench/reroute_bench.sh - incremental re-routing after a link loss
# what a lost spine link costs with incremental_reroute
# TRUE (the default) and FALSE, on the same fabric and the same links.
#
# Starts ibsim on a fabric (default tests/topologies/fat2-1152.net) and the
# ibsm daemon on H0001, then for each of LINKS leaf-to-spine links in
# turn (default 5, picked with SEED from the leaves' up-links): Unlink it,
# wait for the next SUBNET UP, ReLink it, wait again, then 2 s (so that
# the pacing of trap sweeps does not delay the next Unlink).  With TRUE
# the Unlink's trap gets a quick sweep (sm/quick.c); FALSE turns that off
# too, as it turns off the incremental re-route.  Then the same with
# a second daemon run with incremental_reroute FALSE.  Per Unlink:
#
#   up      console command -> "SUBNET UP" (the log's time stamp), s
#   sets    Sets of the sweep's program stage (LFT blocks and SwitchInfo:
#           no port changes otherwise), from the "heavy sweep:" line
#   incr / full   LFT blocks that change, from the "routing: incremental"
#           line (the full figure is what the engine's new tables would
#           have changed); "-" when the sweep re-routed fully
#
# After the first Unlink of each run the diags judge the subnet from H0002
# (ibnetdiscover, iblinkinfo, ibroute: tests/fabric/route_check.py links,
# LIDs and every CA-to-LID route), which takes a minute on 1,152 hosts.
# Prints a line per event and the medians.  By hand, not from tests/run.
#
#	tests/bench/reroute_bench.sh [-n NETFILE] [-l LINKS] [-S SEED] [-k]
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing).
set -u -o pipefail

user_ibsm=${IBSM:-}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

net=$FAB_TOPO/fat2-1152.net
nlinks=5
seed=1
while getopts "n:l:S:kh" opt; do
	case $opt in
	n) net=$(readlink -f "$OPTARG") ;;
	l) nlinks=$OPTARG ;;
	S) seed=$OPTARG ;;
	k) FAB_KEEP=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done

die() {
	echo "reroute_bench: $*" >&2
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

# The leaves' up-links, "LEAF PORT": ports of switches named leaf-* whose
# peer is a switch; LINKS of them, picked with SEED.
awk '
	/^Switch/ { s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); node = s; next }
	/^Hca/ { node = ""; next }
	node ~ /^leaf/ && /^[ \t]*\[[0-9]+\][ \t]*"/ {
		p = $0; sub(/^[ \t]*\[/, "", p); sub(/\].*/, "", p)
		q = $0; sub(/^[^"]*"/, "", q); sub(/".*/, "", q)
		if (q !~ /^H[0-9]+$/) print node, p
	}' "$net" >"$FAB_TMP/uplinks"
total=$(wc -l <"$FAB_TMP/uplinks")
[ "$total" -gt 0 ] || die "no leaf-to-switch links in $net (leaves are named leaf-*)"
RANDOM=$seed
: >"$FAB_TMP/picked"
for ((i = 0; i < nlinks; i++)); do
	sed -n "$((RANDOM % total + 1))p" "$FAB_TMP/uplinks" >>"$FAB_TMP/picked"
done
ends=$(sm_net_ends "$net")

echo "fabric: $(grep -c '^Hca' "$net") hosts, $(grep -c '^Switch' "$net") switches ($(basename "$net")); $nlinks leaf up-links, seed $seed"
echo "ibsm:   $IBSM"

rows=$FAB_TMP/rows
: >"$rows"

# run MODE TRUE|FALSE: one daemon, every picked link down and up again.
run() {
	local mode=$1 conf=$FAB_TMP/$1.conf out=$FAB_TMP/$1 leaf port off t0 line t1
	local d sets incr full judged=0
	echo "incremental_reroute $2" >"$conf"
	fab_sim_start "$net" "rr-$mode" || die "ibsim did not start"
	sm_start H0001 "$out" -F "$conf" -s 0 || die "ibsm did not start"
	sm_wait_up "$out" 0 300 >/dev/null || die "no first SUBNET UP"
	while read -r leaf port; do
		off=$(stat -c %s "$out.log")
		t0=$(date +%s.%N)
		fab_cmd "Unlink \"$leaf\"[$port]" >/dev/null || die "Unlink refused"
		line=$(sm_wait_up "$out" "$off" 120) || die "no SUBNET UP after Unlink"
		t1=$(sm_log_epoch "$line")
		d=$(sm_elapsed "$t0" "$t1")
		sets=$(tail -c +"$((off + 1))" "$out.log" | grep 'heavy sweep:' |
			tail -n 1 | sed -nE 's/.*program [0-9.]+ s \(([0-9]+) Sets.*/\1/p')
		line=$(tail -c +"$((off + 1))" "$out.log" | grep 'routing: incremental' | tail -n 1)
		incr=$(sed -nE 's/.* ([0-9]+) LFT blocks change.*/\1/p' <<<"$line")
		full=$(sed -nE 's/.*a full re-route: ([0-9]+)\).*/\1/p' <<<"$line")
		printf '%-6s Unlink %-10s[%2s]  up %6.3f s  sets %5s  blocks incr %5s full %5s\n' \
			"$mode" "$leaf" "$port" "$d" "${sets:--}" "${incr:--}" "${full:--}"
		echo "$mode $d ${sets:--} ${incr:--} ${full:--}" >>"$rows"
		if [ "$judged" = 0 ]; then
			judged=1
			sm_diags H0002 "$FAB_TMP/$mode.diags" >/dev/null 2>&1
			if sm_verify "$FAB_TMP/$mode.diags" --ends "$((ends - 2))" >"$FAB_TMP/$mode.verify" 2>&1; then
				echo "$mode   routes after the Unlink: valid (diags)"
			else
				echo "$mode   routes after the Unlink: NOT valid:"
				head -n 5 "$FAB_TMP/$mode.verify"
			fi
		fi
		off=$(stat -c %s "$out.log")
		fab_cmd "ReLink \"$leaf\"[$port]" >/dev/null || die "ReLink refused"
		sm_wait_up "$out" "$off" 120 >/dev/null || die "no SUBNET UP after ReLink"
		# an isolated event: past the pacing of trap sweeps (no sooner
		# than 3 x the last sweep's duration after it)
		sleep 2
	done <"$FAB_TMP/picked"
	sm_stop || echo "$mode: ibsm did not exit cleanly"
	fab_sim_stop
}

run incr TRUE
run full FALSE

# median MODE COLUMN
median() {
	awk -v m="$1" -v c="$2" '$1 == m && $c != "-" { print $c }' "$rows" |
		sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}
echo
printf '%-28s %12s %12s\n' "median over $nlinks Unlinks" incremental full
printf '%-28s %12s %12s\n' "event -> SUBNET UP (s)" "$(median incr 2)" "$(median full 2)"
printf '%-28s %12s %12s\n' "Sets sent" "$(median incr 3)" "$(median full 3)"
printf '%-28s %12s %12s\n' "LFT blocks (incr log line)" "$(median incr 4)" "$(median incr 5)"
echo "bench-reroute links=$nlinks incr_up_s=$(median incr 2) full_up_s=$(median full 2)" \
	"incr_sets=$(median incr 3) full_sets=$(median full 3)"
