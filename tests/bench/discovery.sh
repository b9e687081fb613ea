#!/usr/bin/env bash
# tests/bench/discovery.sh - discovery time of ibsm beside ibnetdiscover.
#
# Generates the 3-level fat tree of 4,608 hosts and 768 switches (16 pods
# of 16 leaves with 18 hosts each, 16 spines per pod, 256 cores: a leaf has
# 18 hosts + 16 uplinks, a spine 16 down + 16 up, a core 16 down, one per
# pod), starts ibsim on it once, then runs each tool RUNS times on the same
# fabric from host H0001 under /usr/bin/time -v and reports the median
# wall time and peak RSS of each, ibsm's SMP count (smps=N from its summary
# line) and the ratios.  Also checks that ibsm's dump equals
# ibnetdiscover's.
#
#	tests/bench/discovery.sh [-r RUNS] [-k] [-- IBSM OPTIONS...]
#
#	-r RUNS	runs per tool (default 3)
#	-k	keep the temp dir (topology, dumps, logs)
#	IBSM OPTIONS, e.g. -- -n 16, go to every ibsm run.
#
# The daemon is $IBSM, else <repo>/sm/ibsm, else <repo>/build/release/sm/ibsm
# (built by tools/bootstrap.sh release if missing).
#
# The last line is machine-readable:
#	bench-discovery hosts=4608 switches=768 ibsm_wall_s=.. ibsm_smps=..
#	ibsm_rss_kb=.. ibnetdiscover_wall_s=.. ibnetdiscover_rss_kb=..
#	wall_ratio=.. rss_ratio=.. equal=yes|no
set -u -o pipefail

user_ibsm=${IBSM:-}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

runs=3
while getopts "r:kh" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	k) FAB_KEEP=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
# Discovery only (no Sets), so every run sees the same fabric.
ibsm_args=(--discover-only "$@")

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y time >/dev/null 2>&1 ||
			{ apt-get update >/dev/null 2>&1 && apt-get install -y time >/dev/null 2>&1; }
	fi
	[ -x /usr/bin/time ] || {
		echo "bench: /usr/bin/time missing (apt-get install time)" >&2
		exit 1
	}
fi
# The daemon: $IBSM, else the in-tree sm/ibsm, else a release build in
# build/release (made by tools/bootstrap.sh when missing).
if [ -z "$user_ibsm" ] && [ ! -x "$IBSM" ]; then
	if [ ! -x "$FAB_TOP/build/release/sm/ibsm" ]; then
		"$FAB_TOP/tools/bootstrap.sh" release >/dev/null || exit 1
	fi
	IBSM=$FAB_TOP/build/release/sm/ibsm
fi
[ -x "$IBSM" ] || {
	echo "bench: $IBSM is not built" >&2
	exit 1
}
if ldd "$IBSM" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "bench: warning: $IBSM is a sanitizer build; its times mean little" >&2
fi
echo "ibsm: $IBSM"

net=$FAB_TMP/ft3-4608.net
"$FAB_TOPO/gen-topo" fat3 --pods 16 --leaves-per-pod 16 --hosts-per-leaf 18 \
	--spines-per-pod 16 --cores 256 -o "$net" || exit 1
hosts=$(grep -c '^Hca ' "$net")
switches=$(grep -c '^Switch ' "$net")
echo "fabric: $(sed -n 2p "$net" | sed 's/^# //') (ibsim $(fab_net_limits "$net"))"
if [ "$hosts" != 4608 ] || [ "$switches" != 768 ]; then
	echo "bench: generated $hosts hosts, $switches switches" >&2
	exit 1
fi

t0=$(date +%s.%N)
fab_sim_start "$net" bench || exit 1
t1=$(date +%s.%N)
echo "ibsim: ready in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"

# one_run TOOL I: run TOOL once under time -v; prints "wall_s rss_kb smps".
one_run() {
	local tool=$1 i=$2 tv=$FAB_TMP/$1-$2.time out=$FAB_TMP/$1-$2.net rc
	FAB_WRAP=(/usr/bin/time -v -o "$tv")
	if [ "$tool" = ibsm ]; then
		fab_ibsm H0001 "$out" "${ibsm_args[@]}"
	else
		fab_ibnetdiscover H0001 "$out"
	fi
	rc=$?
	FAB_WRAP=()
	if [ "$rc" -ne 0 ]; then
		echo "bench: $tool run $i failed (exit $rc)" >&2
		cat "$out.err" "$out.summary" 2>/dev/null | head -n 20 >&2
		return 1
	fi
	local wall rss smps=-
	wall=$(fab_time_field "$tv" 'Elapsed (wall clock) time')
	rss=$(fab_time_field "$tv" 'Maximum resident set size')
	# h:mm:ss or m:ss.ss -> seconds
	wall=$(awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.3f", s }' <<<"$wall")
	if [ "$tool" = ibsm ]; then
		# "smps=N" in the summary line (or, failing that, "N SMPs sent")
		smps=$(grep -o 'smps=[0-9]*' "$out.summary" | head -n 1 | cut -d= -f2)
		[ -n "$smps" ] ||
			smps=$(grep -oE '[0-9]+ SMPs sent' "$out.summary" | head -n 1 | cut -d' ' -f1)
		smps=${smps:--}
	fi
	echo "$wall $rss $smps"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

declare -A wall rss smps
for tool in ibnetdiscover ibsm; do
	: >"$FAB_TMP/$tool.runs"
	for ((i = 1; i <= runs; i++)); do
		r=$(one_run "$tool" "$i") || exit 1
		read -r w m s <<<"$r"
		[ "$s" = - ] && s= || s=", smps=$s"
		echo "$tool run $i: wall $w s, peak RSS $m KB$s"
		echo "$r" >>"$FAB_TMP/$tool.runs"
	done
	wall[$tool]=$(cut -d' ' -f1 "$FAB_TMP/$tool.runs" | median)
	rss[$tool]=$(cut -d' ' -f2 "$FAB_TMP/$tool.runs" | median)
	smps[$tool]=$(cut -d' ' -f3 "$FAB_TMP/$tool.runs" | median)
done

if fab_compare "$FAB_TMP/ibnetdiscover-1.net" "$FAB_TMP/ibsm-1.net" >"$FAB_TMP/compare.out"; then
	equal=yes
else
	equal=no
	head -n 10 "$FAB_TMP/compare.out"
fi

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}
wall_ratio=$(ratio "${wall[ibsm]}" "${wall[ibnetdiscover]}")
rss_ratio=$(ratio "${rss[ibsm]}" "${rss[ibnetdiscover]}")

echo
printf '%-14s %12s %12s %10s\n' "" "wall (s)" "peak RSS KB" "SMPs"
printf '%-14s %12s %12s %10s\n' ibsm "${wall[ibsm]}" "${rss[ibsm]}" "${smps[ibsm]}"
printf '%-14s %12s %12s %10s\n' ibnetdiscover "${wall[ibnetdiscover]}" \
	"${rss[ibnetdiscover]}" -
printf '%-14s %12s %12s\n' "ibsm/ibnetd." "$wall_ratio" "$rss_ratio"
echo "ibsm summary: $(head -n 1 "$FAB_TMP/ibsm-1.net.summary")"
echo "dumps equal: $equal (median of $runs runs each)"
echo "bench-discovery hosts=$hosts switches=$switches" \
	"ibsm_wall_s=${wall[ibsm]} ibsm_smps=${smps[ibsm]} ibsm_rss_kb=${rss[ibsm]}" \
	"ibnetdiscover_wall_s=${wall[ibnetdiscover]} ibnetdiscover_rss_kb=${rss[ibnetdiscover]}" \
	"wall_ratio=$wall_ratio rss_ratio=$rss_ratio equal=$equal"
[ "$equal" = yes ]
