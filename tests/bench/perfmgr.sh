#!/usr/bin/env bash
# tests/bench/perfmgr.sh - a full counter sweep: ibsm's performance
# manager beside OpenSM's (perfmgr TRUE), on the same fabric in one run.
#
# Generates the 3-level fat tree of 4,608 hosts and 768 switches (as
# bringup.sh does), starts ibsim on it once, then runs each SM in turn as
# the master on H0001 (OpenSM first), with the same settings:
#	perfmgr TRUE, perfmgr_sweep_time_s SWEEP (-t),
#	perfmgr_max_outstanding_queries WINDOW (-q), sweep_interval 0
# (no light sweeps: after SUBNET UP the performance manager is the only
# work either SM does, so the CPU it uses between two counter sweeps is
# the sweep's).  For each SM it waits for SUBNET UP and the first
# counter sweep (OpenSM's first one reads ClassPortInfo only), then
# measures SWEEPS (-w) sweeps:
#	time	seconds from a sweep's start to its last answer:
#		OpenSM: its log at VERBOSE for osm_perfmgr.c only (a
#		per_module_logging_file): "Gathering PerfMgr stats" starts a
#		sweep, each answer logs "pc_recv_process: Processing received
#		MAD"; the sweep ends at the last answer before the next start
#		ibsm: its own line "perfmgr: sweep N done: P ports, Q MADs, T s"
#	cpu	user + system CPU of the SM process per sweep (/proc/PID/stat
#		ticks at a sweep's start, SWEEPS sweeps apart, divided by SWEEPS)
#	ports, mads	ports read and answers received per sweep
#	ibsim	ibsim's CPU per sweep (it answers every MAD on one thread)
# then the medians and the ratios ibsm/OpenSM.
#
#	tests/bench/perfmgr.sh [-n NETFILE] [-t SWEEP] [-w SWEEPS] [-q WINDOW] [-s SMS]
#			[-T TRANSPORT] [-b RUNS] [-k] [-- IBSM OPTIONS...]
#
#	-n NETFILE	another ibsim topology instead of the generated one
#	-t SWEEP	perfmgr_sweep_time_s of both SMs (default 20; a sweep
#			must end well within it)
#	-w SWEEPS	sweeps measured per SM (default 3)
#	-q WINDOW	perfmgr_max_outstanding_queries of both SMs (default
#			32: with OpenSM's default 500 its perfmgr and ibsim
#			deadlock under umad2sim, both socket buffers full,
#			within the second sweep even on 128 hosts)
#	-s SMS		which SMs run, in order (default "opensm ibsm")
#	-T ibsim	ibsm --transport ibsim; default umad
#	-b RUNS		then ibsm's bring-up as a daemon with perfmgr on (a
#			counter sweep every second) and off, alternately, RUNS
#			times each: "SUBNET UP in T s" from its log, medians
#	-k		keep the temp dir (logs, configuration files)
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm (built with
# tools/bootstrap.sh release when missing).  Not part of tests/run.
set -u -o pipefail

user_ibsm=${IBSM:-}
FAB_TIMEOUT=${FAB_TIMEOUT:-3600}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

netfile=
sweep=20
nsweeps=3
window=32
bringups=0
sms="opensm ibsm"
transport=umad
while getopts "n:t:w:q:s:T:b:kh" opt; do
	case $opt in
	n) netfile=$OPTARG ;;
	t) sweep=$OPTARG ;;
	w) nsweeps=$OPTARG ;;
	q) window=$OPTARG ;;
	s) sms=$OPTARG ;;
	T) transport=$OPTARG ;;
	b) bringups=$OPTARG ;;
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

case "$sweep$nsweeps$window$bringups" in
'' | *[!0-9]*) die "-t, -w, -q and -b want whole numbers" ;;
esac
[ "$nsweeps" -ge 1 ] || die "-w wants at least 1"
command -v opensm >/dev/null || die "opensm missing (apt-get install opensm)"

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
echo "fabric: $hosts hosts, $switches switches, $(($(sm_net_ends "$net") / 2)) links ($(basename "$net"))"
echo "ibsm:   $IBSM ${ibsm_args[*]}"
echo "opensm: $(command -v opensm) ($(opensm --version 2>/dev/null | grep -m1 -o 'OpenSM [0-9.]*'))"
echo "perfmgr_sweep_time_s $sweep, perfmgr_max_outstanding_queries $window, $nsweeps sweeps measured per SM"

fab_sim_start "$net" perfmgr || die "ibsim did not start"
hz=$(getconf CLK_TCK)

# The settings both SMs run with.  OpenSM: its full default file with
# those keys changed, and VERBOSE for osm_perfmgr.c alone (its sweep
# boundaries; the rest of its log as by default).
cat >"$FAB_TMP/ibsm.conf" <<EOF
perfmgr TRUE
perfmgr_sweep_time_s $sweep
perfmgr_max_outstanding_queries $window
sweep_interval 0
EOF
opensm -c "$FAB_TMP/opensm.conf" >/dev/null 2>&1 ||
	die "opensm -c failed"
echo "osm_perfmgr.c 0x07" >"$FAB_TMP/opensm-modules.conf"
sed -i -e "s|^perfmgr .*|perfmgr TRUE|" \
	-e "s|^perfmgr_sweep_time_s .*|perfmgr_sweep_time_s $sweep|" \
	-e "s|^perfmgr_max_outstanding_queries .*|perfmgr_max_outstanding_queries $window|" \
	-e "s|^sweep_interval .*|sweep_interval 0|" \
	-e "s|^per_module_logging_file .*|per_module_logging_file $FAB_TMP/opensm-modules.conf|" \
	"$FAB_TMP/opensm.conf"
for k in "perfmgr TRUE" "perfmgr_sweep_time_s $sweep" \
	"perfmgr_max_outstanding_queries $window" "sweep_interval 0"; do
	grep -qx "$k" "$FAB_TMP/opensm.conf" || die "opensm.conf: no '$k'"
done

# sweep_marker SM: the log line that starts (OpenSM) or ends (ibsm) a
# counter sweep; CPU is sampled when one appears.
sweep_marker() {
	case $1 in
	opensm) echo 'osm_perfmgr_process: Gathering PerfMgr stats' ;;
	ibsm) echo 'perfmgr: sweep [0-9]* done:' ;;
	esac
}

# run_sm SM: start SM on H0001, wait for SUBNET UP, sample its CPU and
# ibsim's at each sweep marker until SWEEPS + 2 markers were seen (the
# first sweep is left out), stop it.  Writes $FAB_TMP/SM.ticks: "MARKER#
# SM_TICKS SIM_TICKS" per marker.
run_sm() {
	local sm=$1 log=$FAB_TMP/$1.log out=$FAB_TMP/$1.out bg pid marker
	local seen=0 n i limit
	: >"$log"
	if [ "$sm" = opensm ]; then
		mkdir -p "$FAB_TMP/osm"
		OSM_CACHE_DIR=$FAB_TMP/osm OSM_TMP_DIR=$FAB_TMP/osm \
			fab_spawn H0001 opensm -F "$FAB_TMP/opensm.conf" -f "$log" \
			>"$out" 2>&1 || die "opensm did not start"
	else
		mkdir -p "$FAB_TMP/ibsm.cache"
		fab_spawn H0001 "$IBSM" -F "$FAB_TMP/ibsm.conf" -f "$log" \
			--cache-dir "$FAB_TMP/ibsm.cache" \
			--dump-dir "$FAB_TMP/ibsm.cache" "${ibsm_args[@]}" \
			>"$out" 2>&1 || die "ibsm did not start"
	fi
	bg=$FAB_SPAWN_PID
	for ((i = 0; i < 20; i++)); do
		pid=$(fab_descendant "$bg" "$sm") && break
		sleep 0.1
	done
	[ -n "$pid" ] || die "$sm: no process"
	marker=$(sweep_marker "$sm")
	: >"$FAB_TMP/$sm.ticks"
	# SUBNET UP, then SWEEPS + 2 markers, within a generous limit.
	limit=$((SECONDS + 300 + (nsweeps + 3) * sweep * 3))
	while ((seen < nsweeps + 2)); do
		kill -0 "$pid" 2>/dev/null || die "$sm exited (see $out)"
		((SECONDS < limit)) || die "$sm: $seen sweep markers in time"
		n=$(grep -c -- "$marker" "$log")
		if ((n > seen)); then
			echo "$n $(fab_cpu_ticks "$pid") $(fab_cpu_ticks "$FAB_SIM_PID")" \
				>>"$FAB_TMP/$sm.ticks"
			seen=$n
		fi
		sleep 0.05
	done
	grep -q 'SUBNET UP' "$log" || die "$sm: no SUBNET UP"
	kill -TERM "$bg" 2>/dev/null
	wait "$bg" 2>/dev/null
	rm -f "$FAB_TMP/pids/$bg"
	# Let the fabric settle before the next SM takes over.
	sleep 2
}

# sweeps_opensm: one line per measured sweep, "TIME PORTS MADS", from
# OpenSM's log: a sweep runs from a "Gathering" line to the last answer
# before the next one.  Sweeps 2 .. SWEEPS + 1.
sweeps_opensm() {
	awk -v first=2 -v last=$((nsweeps + 1)) '
	function t(line,   a, s) {	# "Nov 29 07:51:47 176550 ..." -> seconds
		split($3, a, ":")
		return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6
	}
	function flush() {
		if (k >= first && k <= last && mads > 0)
			printf "%.3f %d %d\n", end - start, ports, mads
	}
	/osm_perfmgr_process: Gathering PerfMgr stats/ {
		flush(); k++; start = t(); end = start; ports = 0; mads = 0; next
	}
	/perfmgr_query_counters: Getting stats for node/ { ports++ }
	/pc_recv_process: Processing received MAD/ { mads++; end = t() }
	END { flush() }' "$FAB_TMP/opensm.log"
}

# sweeps_ibsm: the same from ibsm's "perfmgr: sweep N done: P ports, Q
# MADs, T s" lines, sweeps 2 .. SWEEPS + 1.
sweeps_ibsm() {
	sed -n 's/.*perfmgr: sweep [0-9]* done: \([0-9]*\) ports, \([0-9]*\) MADs, \([0-9.]*\) s.*/\3 \1 \2/p' \
		"$FAB_TMP/ibsm.log" | sed -n "2,$((nsweeps + 1))p"
}

# cpu_per_sweep SM COLUMN: CPU seconds per sweep from the ticks at the
# markers 2 and SWEEPS + 2 (COLUMN 2: the SM, 3: ibsim).
cpu_per_sweep() {
	awk -v c="$2" -v w="$nsweeps" -v hz="$hz" '
	NR == 2 { a = $c } NR == w + 2 { b = $c }
	END { if (b != "") printf "%.3f\n", (b - a) / hz / w; else print "-" }' \
		"$FAB_TMP/$1.ticks"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.3f", a / b; else print "-" }'
}

declare -A time cpu sim ports mads
for sm in $sms; do
	case $sm in
	opensm | ibsm) ;;
	*) die "-s: opensm and/or ibsm, not $sm" ;;
	esac
	run_sm "$sm"
	"sweeps_$sm" >"$FAB_TMP/$sm.sweeps"
	[ -s "$FAB_TMP/$sm.sweeps" ] || die "$sm: no sweep measured (see $FAB_TMP/$sm.log)"
	while read -r t p m; do
		printf '%-6s sweep: %7.3f s  %6d ports  %6d MADs\n' "$sm" "$t" "$p" "$m"
		# PortCounters and PortCountersExtended per port (ibsim's
		# CapMask has the latter): fewer answers, a sweep cut short
		((m >= 2 * p)) ||
			echo "bench: warning: $sm: $m answers for $p ports (lost or not asked)" >&2
	done <"$FAB_TMP/$sm.sweeps"
	time[$sm]=$(awk '{ print $1 }' "$FAB_TMP/$sm.sweeps" | median)
	ports[$sm]=$(awk '{ print $2 }' "$FAB_TMP/$sm.sweeps" | median)
	mads[$sm]=$(awk '{ print $3 }' "$FAB_TMP/$sm.sweeps" | median)
	cpu[$sm]=$(cpu_per_sweep "$sm" 2)
	sim[$sm]=$(cpu_per_sweep "$sm" 3)
done

echo
echo "counter sweep, $hosts hosts / $switches switches (median of $nsweeps sweeps; cpu: mean per sweep):"
printf '%-12s %10s %12s %8s %8s %14s\n' "" "time (s)" "SM cpu (s)" "ports" "MADs" "ibsim cpu (s)"
for sm in opensm ibsm; do
	printf '%-12s %10s %12s %8s %8s %14s\n' "$sm" "${time[$sm]:--}" "${cpu[$sm]:--}" \
		"${ports[$sm]:--}" "${mads[$sm]:--}" "${sim[$sm]:--}"
done
printf '%-12s %10s %12s %8s %8s %14s\n' "ibsm/opensm" \
	"$(ratio "${time[ibsm]:--}" "${time[opensm]:--}")" \
	"$(ratio "${cpu[ibsm]:--}" "${cpu[opensm]:--}")" "" "" \
	"$(ratio "${sim[ibsm]:--}" "${sim[opensm]:--}")"
echo "bench-perfmgr hosts=$hosts switches=$switches sweep_time_s=$sweep sweeps=$nsweeps" \
	"opensm_time_s=${time[opensm]:--} opensm_cpu_s=${cpu[opensm]:--} opensm_ports=${ports[opensm]:--} opensm_mads=${mads[opensm]:--}" \
	"ibsm_time_s=${time[ibsm]:--} ibsm_cpu_s=${cpu[ibsm]:--} ibsm_ports=${ports[ibsm]:--} ibsm_mads=${mads[ibsm]:--}" \
	"time_ratio=$(ratio "${time[ibsm]:--}" "${time[opensm]:--}")" \
	"cpu_ratio=$(ratio "${cpu[ibsm]:--}" "${cpu[opensm]:--}")"

[ "$bringups" -gt 0 ] || exit 0

# ibsm's bring-up as a daemon, perfmgr on (every second) and off.
printf 'perfmgr TRUE\nperfmgr_sweep_time_s 1\nperfmgr_max_outstanding_queries %s\nsweep_interval 0\n' \
	"$window" >"$FAB_TMP/ibsm-on.conf"
printf 'perfmgr FALSE\nsweep_interval 0\n' >"$FAB_TMP/ibsm-off.conf"
# bringup CONF: start ibsm, print "SUBNET UP in T s"'s T, stop it.
bringup() {
	local log=$FAB_TMP/bringup.log i t=
	: >"$log"
	fab_spawn H0001 "$IBSM" -F "$1" -f "$log" \
		--cache-dir "$FAB_TMP/ibsm.cache" --dump-dir "$FAB_TMP/ibsm.cache" \
		"${ibsm_args[@]}" >"$FAB_TMP/bringup.out" 2>&1 || die "ibsm did not start"
	for ((i = 0; i < 1200; i++)); do
		t=$(sed -n 's/.*SUBNET UP in \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
		[ -n "$t" ] && break
		sleep 0.1
	done
	# a few counter sweeps after it (on), so a sweep overlapping the
	# next run's start would show
	sleep 2
	kill -TERM "$FAB_SPAWN_PID" 2>/dev/null
	wait "$FAB_SPAWN_PID" 2>/dev/null
	rm -f "$FAB_TMP/pids/$FAB_SPAWN_PID"
	sleep 1
	[ -n "$t" ] || die "bring-up: no SUBNET UP (see $log)"
	echo "$t"
}
: >"$FAB_TMP/bringups"
for ((r = 1; r <= bringups; r++)); do
	for mode in off on; do
		t=$(bringup "$FAB_TMP/ibsm-$mode.conf") || exit 1
		echo "$mode $t" >>"$FAB_TMP/bringups"
		printf 'ibsm bring-up, perfmgr %-3s: SUBNET UP in %s s\n' "$mode" "$t"
	done
done
b_off=$(awk '$1 == "off" { print $2 }' "$FAB_TMP/bringups" | median)
b_on=$(awk '$1 == "on" { print $2 }' "$FAB_TMP/bringups" | median)
echo "ibsm bring-up (daemon, median of $bringups): perfmgr off $b_off s, on $b_on s, on/off $(ratio "$b_on" "$b_off")"
