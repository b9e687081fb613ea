#!/usr/bin/env bash
# tests/bench/bringup.sh - subnet bring-up: ibsm -o beside OpenSM's opensm -o.
#
# Generates the 3-level fat tree of 4,608 hosts and 768 switches (16 pods
# x 16 leaves x 18 hosts, 16 spines per pod, 256 cores) with
# tests/topologies/gen-topo, starts ibsim on it once, then runs
# `opensm -o` and `ibsm -o` alternately (opensm first), RUNS times each, on
# that same fabric from host H0001, each under /usr/bin/time -v.  Reports
# per run and as the median of the runs:
#	wall	seconds from start to exit (both exit right after SUBNET UP)
#	cpu	user + system seconds
#	rss	peak resident set size
#	smps	SMPs sent, from ibsm's summary line ("N SMPs sent"); OpenSM
#		prints no count
#	mads	packets that left H0001's port during the run, read from
#		ibsim's port counters with perfquery: the same measure for both
#		SMs (SMPs including re-sends; SMPs to the local port do not
#		leave it)
#	ibsim	CPU seconds the simulator spent meanwhile (it answers every
#		SMP on one thread: on a 2-core machine its CPU and the SM's
#		share the cores, and its own is a floor for the wall time)
# and the ratios ibsm/OpenSM of the medians.  OpenSM keeps its guid2lid
# cache and dumps in temp dirs (OSM_CACHE_DIR, OSM_TMP_DIR), ibsm in its
# own; each keeps its cache from one run to its next, as a restarted SM
# does.  The first OpenSM run is the only one that meets a fabric with no
# LIDs; later runs of both find the other SM's configuration (-c: every
# run meets a fabric nobody configured).
#
#	tests/bench/bringup.sh [-r RUNS] [-n NETFILE] [-e PERCENT] [-s SMS]
#			[-T TRANSPORT] [-c] [-v] [-k] [-- IBSM OPTIONS...]
#
#	-c		cold bring-ups: ibsim is started again before every
#			run (ports down to INIT, no LIDs, empty tables) and
#			both SMs' caches are emptied, so each run is an SM's
#			first start on a fabric just powered on; the time
#			ibsim takes to start is not counted
#	-r RUNS		runs per SM (default 3)
#	-n NETFILE	another ibsim topology instead of the generated one
#	-e PERCENT	every switch drops PERCENT of the MADs entering it
#			(ibsim `Error "switch" PERCENT`, for both SMs): an
#			SMP that enters n switch ports on its way there and
#			back is lost with probability 1 - (1 - PERCENT/100)^n
#			(OpenSM 3.3.23 -o gives up at once on such a fabric:
#			"Errors during initialization"; use -s ibsm)
#	-s SMS		which SMs run, in order (default "opensm ibsm")
#	-T ibsim	ibsm --transport ibsim (mad/sim_io.h: no umad2sim
#			receiver thread and no pump thread in the SM; OpenSM
#			is unchanged); default umad
#	-v		at the end, check the subnet ibsm left through the diags
#			(tests/fabric/route_check.py; 2-3 minutes on the
#			4,608-host fabric)
#	-k		keep the temp dir (topology, logs, time reports)
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing).  Not part of tests/run.
set -u -o pipefail

user_ibsm=${IBSM:-}
# OpenSM on 5,000 nodes under the preload takes a while; one run may not
# take longer than this.
FAB_TIMEOUT=${FAB_TIMEOUT:-1800}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

runs=3
netfile=
verify=0
loss=0
sms="opensm ibsm"
transport=umad
cold=0
while getopts "r:n:e:s:T:cvkh" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	n) netfile=$OPTARG ;;
	e) loss=$OPTARG ;;
	s) sms=$OPTARG ;;
	T) transport=$OPTARG ;;
	c) cold=1 ;;
	v) verify=1 ;;
	k) FAB_KEEP=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
ibsm_args=(--transport "$transport" "$@")

die() {
	echo "bench: $*" >&2
	exit 1
}

# Tools: /usr/bin/time (package "time"), opensm, perfquery.
if [ ! -x /usr/bin/time ] && [ "$(id -u)" = 0 ]; then
	apt-get install -y time >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y time >/dev/null 2>&1; }
fi
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
command -v opensm >/dev/null || die "opensm missing (apt-get install opensm)"
command -v perfquery >/dev/null || die "perfquery missing (apt-get install infiniband-diags)"

if [ -n "$user_ibsm" ]; then
	IBSM=$(readlink -f "$user_ibsm")
else
	IBSM=$FAB_TOP/build/release/sm/ibsm
	[ -x "$IBSM" ] || "$FAB_TOP/tools/bootstrap.sh" release >/dev/null ||
		die "release build failed"
fi
[ -x "$IBSM" ] || die "$IBSM is not built"
if ldd "$IBSM" 2>/dev/null | grep -q 'lib[atu]*san'; then
	echo "bench: warning: $IBSM is a sanitizer build; its numbers mean little" >&2
fi

if [ -n "$netfile" ]; then
	net=$(readlink -f "$netfile")
else
	net=$FAB_TMP/ft3-4608.net
	"$FAB_TOPO/gen-topo" fat3 --pods 16 --leaves-per-pod 16 \
		--hosts-per-leaf 18 --spines-per-pod 16 --cores 256 -o "$net" ||
		die "gen-topo failed"
fi
hosts=$(grep -c '^Hca' "$net")
switches=$(grep -c '^Switch' "$net")
if [ -z "$netfile" ] && { [ "$hosts" != 4608 ] || [ "$switches" != 768 ]; }; then
	die "generated $hosts hosts and $switches switches, not 4608 and 768"
fi
echo "fabric: $hosts hosts, $switches switches, $(($(sm_net_ends "$net") / 2)) links ($(basename "$net"))"
echo "ibsm:   $IBSM ${ibsm_args[*]}"
echo "opensm: $(command -v opensm) ($(opensm --version 2>/dev/null | grep -m1 -o 'OpenSM [0-9.]*'))"

case $loss in
'' | *[!0-9]*) die "-e wants a whole percentage" ;;
esac
if [ "$loss" -gt 0 ]; then
	mapfile -t loss_cmds < <(awk -v p="$loss" '$1 == "Switch" {
		s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s)
		printf "Error \"%s\" %d\n", s, p }' "$net")
fi

# sim_up [quiet]: start ibsim on the fabric (again), with the loss set.
sim_up() {
	local t0 k
	t0=$(date +%s.%N)
	fab_sim_start "$net" bench || die "ibsim did not start"
	[ -n "${1:-}" ] || echo "ibsim:  ready in $(sm_elapsed "$t0" "$(date +%s.%N)") s"
	[ "$loss" -gt 0 ] || return 0
	for ((k = 0; k < ${#loss_cmds[@]}; k += 64)); do
		fab_cmd "${loss_cmds[@]:k:64}" >/dev/null || die "ibsim Error command failed"
	done
	[ -n "${1:-}" ] ||
		echo "loss:   ${#loss_cmds[@]} switches drop $loss% of the MADs entering them"
}
sim_up
[ "$cold" = 1 ] && echo "cold:   ibsim restarted and caches emptied before every run"

osm_cache=$FAB_TMP/opensm.cache
osm_tmp=$FAB_TMP/opensm.tmp
ibsm_cache=$FAB_TMP/ibsm.cache
mkdir -p "$osm_cache" "$osm_tmp" "$ibsm_cache"

# xmit_pkts: packets that left H0001's port so far (0 while the port has no
# LID: nothing has been sent then but the first SM's own traffic, which the
# next reading includes).
xmit_pkts() {
	local v
	v=$(fab_run H0001 perfquery -x 2>/dev/null |
		sed -n 's/^PortXmitPkts:\.*\([0-9]*\)$/\1/p')
	echo "${v:-0}"
}

# seconds "h:mm:ss" | "m:ss.ss" -> seconds
seconds() {
	awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f\n", s }' <<<"$1"
}

# sim_ticks: CPU ticks (user + system) ibsim has used so far.
sim_ticks() {
	awk '{ print $14 + $15 }' "/proc/$FAB_SIM_PID/stat" 2>/dev/null || echo 0
}

# one_run TOOL I: one bring-up under time -v; appends a row to $FAB_TMP/rows:
# "TOOL I WALL CPU RSS_KB SMPS MADS SIM_CPU".
one_run() {
	local tool=$1 i=$2 tv=$FAB_TMP/$1-$2.time log=$FAB_TMP/$1-$2.log
	local out=$FAB_TMP/$1-$2.out before after rc wall cpu rss smps=-
	local sim0 sim1
	if [ "$cold" = 1 ] && { [ "$i" -gt 1 ] || [ "$tool" != "${sms%% *}" ]; }; then
		sim_up quiet
		rm -rf "${osm_cache:?}"/* "${osm_tmp:?}"/* "${ibsm_cache:?}"/*
	fi
	before=$(xmit_pkts)
	sim0=$(sim_ticks)
	FAB_WRAP=(/usr/bin/time -v -o "$tv")
	if [ "$tool" = opensm ]; then
		OSM_CACHE_DIR=$osm_cache OSM_TMP_DIR=$osm_tmp \
			fab_run H0001 opensm -o -f "$log" >"$out" 2>&1
		rc=$?
	else
		fab_run H0001 "$IBSM" -o -f "$log" --cache-dir "$ibsm_cache" \
			--dump-dir "$ibsm_cache" "${ibsm_args[@]}" >"$out" 2>&1
		rc=$?
	fi
	FAB_WRAP=()
	sim1=$(sim_ticks)
	after=$(xmit_pkts)
	if [ "$rc" -ne 0 ] || ! grep -q 'SUBNET UP' "$log" "$out"; then
		echo "bench: $tool run $i failed (exit $rc, no SUBNET UP)" >&2
		tail -n 5 "$out" "$log" >&2
		return 1
	fi
	wall=$(seconds "$(fab_time_field "$tv" 'Elapsed (wall clock) time')")
	cpu=$(awk -v u="$(fab_time_field "$tv" 'User time')" \
		-v s="$(fab_time_field "$tv" 'System time')" 'BEGIN { printf "%.2f\n", u + s }')
	rss=$(fab_time_field "$tv" 'Maximum resident set size')
	if [ "$tool" = ibsm ]; then
		smps=$(grep -oE '[0-9]+ SMPs sent' "$out" | head -n 1 | cut -d' ' -f1)
		smps=${smps:--}
	fi
	local sim
	sim=$(awk -v a="$sim0" -v b="$sim1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f\n", (b - a) / hz }')
	echo "$tool $i $wall $cpu $rss $smps $((after - before)) $sim" >>"$FAB_TMP/rows"
	printf '%-6s run %d: wall %6.2f s  cpu %6.2f s  rss %7.1f MB  smps %8s  mads %8s  ibsim cpu %5.2f s\n' \
		"$tool" "$i" "$wall" "$cpu" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" \
		"$smps" "$((after - before))" "$sim"
	[ "$tool" = ibsm ] && echo "       $(grep -m1 'SUBNET UP' "$out")"
	return 0
}

: >"$FAB_TMP/rows"
for ((i = 1; i <= runs; i++)); do
	for tool in $sms; do
		case $tool in
		opensm | ibsm) one_run "$tool" "$i" || exit 1 ;;
		*) die "-s: opensm and/or ibsm, not $tool" ;;
		esac
	done
done

# median TOOL COLUMN: median of a column of the rows of TOOL ("-" if none).
median() {
	awk -v t="$1" -v c="$2" '$1 == t && $c != "-" { print $c }' "$FAB_TMP/rows" |
		sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b > 0) printf "%.3f", a / b; else print "-" }'
}

declare -A med
for tool in opensm ibsm; do
	for col in 3 4 5 6 7 8; do
		med[$tool.$col]=$(median "$tool" "$col")
	done
done
mb() {
	awk -v r="$1" 'BEGIN { if (r == "-") print "-"; else printf "%.1f", r / 1024 }'
}

echo
echo "median of $runs runs, $hosts hosts / $switches switches:"
printf '%-16s %10s %10s %12s %10s %10s %12s\n' "" "wall (s)" "cpu (s)" "peak RSS MB" "SMPs" "MADs out" "ibsim cpu (s)"
for tool in opensm ibsm; do
	printf '%-16s %10s %10s %12s %10s %10s %12s\n' "$tool" "${med[$tool.3]}" \
		"${med[$tool.4]}" "$(mb "${med[$tool.5]}")" "${med[$tool.6]}" "${med[$tool.7]}" \
		"${med[$tool.8]}"
done
printf '%-16s %10s %10s %12s %10s %10s %12s\n' "ibsm/opensm" \
	"$(ratio "${med[ibsm.3]}" "${med[opensm.3]}")" \
	"$(ratio "${med[ibsm.4]}" "${med[opensm.4]}")" \
	"$(ratio "${med[ibsm.5]}" "${med[opensm.5]}")" "-" \
	"$(ratio "${med[ibsm.7]}" "${med[opensm.7]}")" \
	"$(ratio "${med[ibsm.8]}" "${med[opensm.8]}")"

if [ "$verify" = 1 ]; then
	echo
	echo "verifying the subnet ibsm left (diags from H0002)..."
	t0=$(date +%s.%N)
	sm_diags H0002 "$FAB_TMP/verify" || echo "bench: a diag tool failed" >&2
	if sm_verify "$FAB_TMP/verify" --ends "$(sm_net_ends "$net")"; then
		echo "subnet valid (checked in $(sm_elapsed "$t0" "$(date +%s.%N)") s)"
	else
		echo "bench: the subnet ibsm left is not valid" >&2
		exit 1
	fi
fi

echo "bench-bringup hosts=$hosts switches=$switches runs=$runs loss_pct=$loss" \
	"opensm_wall_s=${med[opensm.3]} opensm_cpu_s=${med[opensm.4]} opensm_rss_kb=${med[opensm.5]} opensm_mads=${med[opensm.7]} opensm_sim_cpu_s=${med[opensm.8]}" \
	"ibsm_wall_s=${med[ibsm.3]} ibsm_cpu_s=${med[ibsm.4]} ibsm_rss_kb=${med[ibsm.5]} ibsm_smps=${med[ibsm.6]} ibsm_mads=${med[ibsm.7]} ibsm_sim_cpu_s=${med[ibsm.8]}" \
	"wall_ratio=$(ratio "${med[ibsm.3]}" "${med[opensm.3]}")" \
	"cpu_ratio=$(ratio "${med[ibsm.4]}" "${med[opensm.4]}")" \
	"rss_ratio=$(ratio "${med[ibsm.5]}" "${med[opensm.5]}")"
