#!/usr/bin/env bash
# tests/bench/metrics_scrape.sh - SM CPU per Prometheus scrape.
#
# ibsim on NETFILE (default tests/topologies/fat2-1152.net: 1,152 hosts,
# 82 switches, 4,608 linked ports), ibsm on H0001 with perfmgr TRUE (one
# counter sweep at SUBNET UP, none after: perfmgr_sweep_time_s 3600),
# no light sweeps, metrics_listen on a free local port (BENCH_TRANSPORT=
# ibsim: ibsm speaks ibsim's protocol, no umad2sim).  After the first
# counter sweep it measures the daemon's user+system clock ticks
# (/proc/PID/stat) over IDLE seconds without scrapes, then over N scrapes
# spaced 1.1 s (the endpoint reuses an answer for 1 s), and reports
#	per scrape = (ticks during the scrapes - idle ticks for as long) / N
# in milliseconds, with the size of one answer and curl's time for it;
# then the time from `ibsmctl resweep heavy` to SUBNET UP, quiet and
# during a flood of 1,000 concurrent connections, most of them malformed
# (tests/fabric/metrics_flood.py).
#
#	tests/bench/metrics_scrape.sh [-n NETFILE] [-N SCRAPES] [-k]
#
# The daemon is $IBSM, else <repo>/build/release/sm/ibsm.  Not part of
# tests/run.
set -u -o pipefail

user_ibsm=${IBSM:-}
# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

net=$FAB_TOPO/fat2-1152.net
n=20
while getopts n:N:k o; do
	case $o in
	n) net=$OPTARG ;;
	N) n=$OPTARG ;;
	k) export FAB_KEEP=1 ;;
	*) sed -n '2,17p' "$0"; exit 2 ;;
	esac
done
IBSM=${user_ibsm:-$FAB_TOP/build/release/sm/ibsm}
[ -x "$IBSM" ] || { echo "no $IBSM (tools/bootstrap.sh release)"; exit 1; }
T=$FAB_TMP
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT/metrics
cat >"$T/opensm.conf" <<EOF
perfmgr TRUE
perfmgr_sweep_time_s 3600
sweep_interval 0
${BENCH_TRANSPORT:+transport $BENCH_TRANSPORT}
metrics_listen 127.0.0.1:$PORT
EOF

CTL=$(dirname "$IBSM")/../tools/ibsmctl
sm_sim_and_sm_up "$net" scrape "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$T/ctl.sock"
for ((i = 0; i < 600; i++)); do
	grep -q 'perfmgr: sweep 1 done' "$T/sm.log" && break
	sleep 0.1
done
grep 'perfmgr: sweep 1 done' "$T/sm.log" | sed 's/.*perfmgr/perfmgr/'
pid=$(fab_descendant "$SM_PID" ibsm)
hz=$(getconf CLK_TCK)
sleep 2
curl -s -o "$T/one" -w 'one scrape: %{size_download} bytes, %{time_total} s (curl)\n' "$URL"
echo "series: $(grep -vc '^#' "$T/one"), families: $(grep -c '^# TYPE' "$T/one")"
dur=$(awk -v n="$n" 'BEGIN { printf "%.1f", n * 1.1 }')
t0=$(fab_cpu_ticks "$pid")
sleep "$dur"
t1=$(fab_cpu_ticks "$pid")
for ((i = 0; i < n; i++)); do
	sleep 1.1
	curl -s -o /dev/null "$URL"
done
t2=$(fab_cpu_ticks "$pid")
awk -v i=$((t1 - t0)) -v s=$((t2 - t1)) -v n="$n" -v hz="$hz" -v d="$dur" 'BEGIN {
	printf "idle: %d ticks in %s s; %d scrapes: %d ticks\n", i, d, n, s
	printf "SM CPU per scrape: %.1f ms\n", (s - i) * 1000 / hz / n }'
curl -s "$URL" | awk '$1 == "ibsm_metrics_last_build_cpu_seconds" {
	printf "the endpoint says: %.1f ms of loop CPU to build the last text\n", $2 * 1000 }'
sweep_time() {
	local off t0 line
	off=$(stat -c %s "$T/sm.log")
	t0=$(date +%s.%N)
	"$CTL" --socket "$T/ctl.sock" resweep heavy >/dev/null || return 1
	line=$(sm_wait_up "$T/sm" "$off" 120) || return 1
	awk -v a="$t0" -v b="$(sm_log_epoch "$line")" 'BEGIN { printf "%.3f", b - a }'
}
quiet=$(sweep_time)
python3 "$FAB_LIB/metrics_flood.py" 127.0.0.1 "$PORT" 1000 >"$T/flood.out" 2>&1 &
flood=$!
sleep 0.3
busy=$(sweep_time)
wait "$flood"
cat "$T/flood.out"
echo "heavy sweep to SUBNET UP: ${quiet:-?} s quiet, ${busy:-?} s during the flood"
sm_stop
fab_summary >/dev/null
