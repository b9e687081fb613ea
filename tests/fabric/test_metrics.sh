#!/usr/bin/env bash
# tests/fabric/test_metrics.sh - the Prometheus endpoint (sm/metrics/) on
# ibsim, infiniband-diags and promtool the referees:
#  - a scrape passes `promtool check metrics` (Debian's prometheus);
#    GET/HEAD only, 404 elsewhere, 405 for other methods;
#  - the families and labels of treydock/infiniband_exporter are there;
#    health findings counted as iblinkinfo sees the fault (a 1x link
#    under health_expected_width 4x);
#  - /fabric serves the fabric map (fabmap/): one element per switch and
#    per inter-switch cable;
#  - PerformanceSet raises a switch port's SymbolErrorCounter: the next
#    scrape after a counter sweep has perfquery's value;
#  - Unlink of an inter-switch link: the next scrape after the heavy
#    sweep has lost its uplink series and one link;
#  - 1,000 concurrent connections, most malformed (metrics_flood.py),
#    then 240 more 8 at a time, each parsed and answered (400, 404, 405,
#    431) with valid scrapes served among them: the SM survives, still
#    answers, and a heavy sweep asked for during the flood completes (the
#    time to SUBNET UP is printed beside the one without the flood, not
#    asserted);
#  - a better SM started on H0002 (priority 10), its metrics address
#    taken (ERR 2002, it runs on), takes over by handover: the scrape
#    says standby, as sminfo does, with the age of its copy of the
#    master's SA state; it stops: master again;
#  - an SM without metrics_listen has no listening TCP socket; a bad
#    value is a configuration error.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/ctl.sock
DIAG=H0003
PROMTOOL=${PROMTOOL:-promtool}
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT

cat >"$T/opensm.conf" <<EOF
perfmgr TRUE
perfmgr_sweep_time_s 1
health_expected_width 4x
sweep_interval 0
metrics_listen 127.0.0.1:$PORT
EOF

sm_sim_and_sm_up "$FAB_TOPO/tiny.net" metrics "$T/sm" -F "$T/opensm.conf" \
	--control-socket "$SOCK" -p 5

# scrape FILE: a scrape at least METRICS_CACHE_S (1 s) after the last,
# so that it is built anew; headers in FILE.hdr.
scrape() {
	sleep 1.1
	curl -s -m 10 -o "$1" -D "$1.hdr" "$URL/metrics"
}
# value FILE SERIES-PREFIX: the value of the first series starting so.
value() {
	awk -v s="$2" 'index($0, s) == 1 { print $NF; exit }' "$1"
}
sweeps_done() {
	sed -n 's/.*perfmgr: sweep \([0-9]*\) done:.*/\1/p' "$T/sm.log" |
		tail -n 1
}
wait_sweeps() {
	local n0 n i
	n0=$(sweeps_done)
	for ((i = 0; i < 150; i++)); do
		n=$(sweeps_done)
		[ "${n:-0}" -ge $((${n0:-0} + 2)) ] && return 0
		sleep 0.1
	done
	return 1
}
# listening PID: its listening TCP sockets (its fds' inodes in
# /proc/net/tcp and tcp6, state 0A).
listening() {
	local inodes
	inodes=$(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null |
		sed 's/socket:\[\(.*\)\]/\1/')
	[ -n "$inodes" ] || return 0
	awk -v list="$inodes" 'BEGIN { n = split(list, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		$4 == "0A" && ($10 in want) { print }' /proc/net/tcp /proc/net/tcp6
}

fab_check first-counter-sweep wait_sweeps
fab_run "$DIAG" ibnetdiscover -p >"$T/disc" 2>/dev/null
SWA=$(awk -v d="( 'sw-a tiny switch' -" '$1 == "SW" && index($0, d) { print $2; exit }' "$T/disc")
SWA_GUID=$(awk -v d="( 'sw-a tiny switch' -" '$1 == "SW" && index($0, d) { print $4; exit }' "$T/disc")
SWA_GUID=$(printf '0x%016x' "$SWA_GUID")
A_LID=$(awk '$1 == "CA" && index($0, "( '"'"'H0001 ") { print $2; exit }' "$T/disc")

# 1. the text, the methods and the paths
scrape "$T/m1"
fab_check promtool-clean bash -c "'$PROMTOOL' check metrics <'$T/m1' >'$T/promtool.out' 2>&1 && [ ! -s '$T/promtool.out' ]"
head -n 5 "$T/promtool.out"
fab_check content-type grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/m1.hdr"
fab_check head-200 test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -I "$URL/metrics")" = 200
fab_check index-200 test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$URL/")" = 200
fab_check unknown-path-404 test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$URL/metrics/x")" = 404
fab_check post-405 test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -d a=b "$URL/metrics")" = 405
fab_check state-master grep -qx 'ibsm_state{state="master"} 1' "$T/m1"
# the fabric map (fabmap/): both switches, the two cables between them
code=$(curl -s -m 10 -o "$T/fabric.html" -w '%{http_code} %{content_type}' "$URL/fabric")
fab_check fabric-page test "$code" = "200 text/html; charset=utf-8"
fab_check fabric-switches test "$(grep -o '<[a-z]* class="sw"' "$T/fabric.html" | wc -l)" -eq 2
fab_check fabric-cables test "$(grep -o '<path class="link[ "]' "$T/fabric.html" | wc -l)" -eq 2
fab_check priority grep -qx 'ibsm_priority 5' "$T/m1"
# treydock/infiniband_exporter's names and types
for fam in infiniband_switch_port_transmit_data_bytes_total \
	infiniband_switch_port_symbol_error_total \
	infiniband_switch_port_link_downed_total \
	infiniband_switch_port_receive_errors_total \
	infiniband_switch_port_transmit_discards_total \
	infiniband_switch_port_vl15_dropped_total \
	infiniband_switch_port_transmit_wait_total \
	infiniband_hca_port_receive_data_bytes_total \
	infiniband_hca_port_symbol_error_total; do
	fab_check "family-$fam" grep -qx "# TYPE $fam counter" "$T/m1"
done
fab_check series-unique test -z "$(grep -v '^#' "$T/m1" | sed 's/ [^ ]*$//' | sort | uniq -d)"
fab_check families-once test "$(grep -c '^# TYPE ' "$T/m1")" -eq "$(grep '^# TYPE ' "$T/m1" | sort -u | wc -l)"
fab_check switch-info grep -q "^infiniband_switch_info{guid=\"$SWA_GUID\",switch=\"sw-a tiny switch\",lid=\"$SWA\"} 1\$" "$T/m1"
fab_check uplink-info grep -q "^infiniband_switch_uplink_info{guid=\"$SWA_GUID\",port=\"4\",switch=\"sw-a tiny switch\",uplink=\"sw-b tiny switch\",uplink_guid=\"0x[0-9a-f]*\",uplink_type=\"SW\",uplink_port=\"4\",uplink_lid=\"[0-9]*\"} 1\$" "$T/m1"
fab_check port-labels grep -q "^infiniband_switch_port_symbol_error_total{guid=\"$SWA_GUID\",port=\"3\",switch=\"sw-a tiny switch\",remote_guid=\"0x[0-9a-f]*\",remote_port=\"3\",remote_name=\"sw-b tiny switch\"} [0-9]*\$" "$T/m1"
# 4xEDR: 4 x 25 Gb/s of data = 12.5e9 bytes/s (treydock's lane table)
fab_check rate grep -q "^infiniband_switch_port_rate_bytes_per_second{guid=\"$SWA_GUID\",port=\"3\"} 12500000000\$" "$T/m1"

# health findings: health_expected_width 4x, and one link runs 1x
# (iblinkinfo counts the 1X links, each from its switch end)
slow=$(fab_run "$DIAG" iblinkinfo --line 2>/dev/null |
	grep -Ec '^0x[0-9a-f]+ +"[^"]*switch" .*==\( *1X ')
fab_check findings-warning test "$(value "$T/m1" 'ibsm_health_findings{severity="warning"}')" = "${slow:-x}"
fab_check findings-kind test "$(value "$T/m1" 'ibsm_health_findings_by_kind{kind="link_below_expected",severity="warning"}')" = 1

# the sweep histogram and the SA's answers (saquery: a NodeRecord Get)
fab_check sweep-histogram test "$(value "$T/m1" 'ibsm_sweep_duration_seconds_count{kind="heavy"}')" -ge 1
fab_run "$DIAG" saquery -N >/dev/null 2>&1
"$CTL" --socket "$SOCK" reload >/dev/null 2>&1
sa0=$(value "$T/m1" 'ibsm_sa_answers_total{attribute="NodeRecord",status="ok"}')

# 2. a counter raised in the simulator, seen in the next scrape
fab_cmd 'PerformanceSet "sw-a"[3] PortCounters.SymbolErrorCounter=77' >/dev/null
fab_check counter-sweep wait_sweeps
scrape "$T/m2"
pq=$(fab_run "$DIAG" perfquery "$SWA" 3 2>/dev/null | sed -n 's/^SymbolErrorCounter:\.*\([0-9]*\)/\1/p')
got=$(value "$T/m2" "infiniband_switch_port_symbol_error_total{guid=\"$SWA_GUID\",port=\"3\",")
fab_check counter-is-perfquerys test "${got:-x}" = 77 -a "${pq:-y}" = 77
[ "${got:-x}" = 77 ] || echo "scrape says '$got', perfquery '$pq'"
fab_check reload-counted test "$(value "$T/m2" 'ibsm_config_reloads_total{result="ok"}')" -eq 1
fab_check sa-answer-counted test "$(value "$T/m2" 'ibsm_sa_answers_total{attribute="NodeRecord",status="ok"}')" -gt "${sa0:-0}"

# 3. a link unlinked, gone from the next scrape after the heavy sweep
links0=$(value "$T/m2" "ibsm_fabric_links ")
off=$(stat -c %s "$T/sm.log")
fab_cmd 'Unlink "sw-a"[4]' >/dev/null
sm_wait_up "$T/sm" "$off" 30 >/dev/null || fab_fail unlink-sweep
scrape "$T/m3"
fab_check unlinked-uplink-gone bash -c "! grep -q 'infiniband_switch_uplink_info{guid=\"$SWA_GUID\",port=\"4\",' '$T/m3'"
fab_check unlinked-one-link-less test "$(value "$T/m3" "ibsm_fabric_links ")" -eq $((links0 - 1))
fab_check other-uplink-kept grep -q "infiniband_switch_uplink_info{guid=\"$SWA_GUID\",port=\"3\"," "$T/m3"

# 4. the flood, with a heavy sweep asked for before and during it
sweep_time() {
	local off t0 line
	off=$(stat -c %s "$T/sm.log")
	t0=$(date +%s.%N)
	"$CTL" --socket "$SOCK" resweep heavy >/dev/null || return 1
	line=$(sm_wait_up "$T/sm" "$off" 60) || return 1
	awk -v a="$t0" -v b="$(sm_log_epoch "$line")" 'BEGIN { printf "%.3f", b - a }'
}
quiet=$(sweep_time) || fab_fail sweep-before-flood
python3 "$FAB_LIB/metrics_flood.py" 127.0.0.1 "$PORT" 1000 240 >"$T/flood.out" 2>&1 &
FLOOD=$!
: >"$T/pids/$FLOOD"
sleep 0.3
busy=$(sweep_time) || fab_fail sweep-during-flood
wait "$FLOOD"
rc=$?
rm -f "$T/pids/$FLOOD"
cat "$T/flood.out"
echo "heavy sweep to SUBNET UP: ${quiet:-?} s quiet, ${busy:-?} s during the flood"
fab_check flood-client-ran test "$rc" -eq 0
fab_check flood-sm-alive sm_alive
fab_check flood-scrapes-answered grep -q 'scrapes_complete=[1-9]' "$T/flood.out"
# the paced phase (8 at a time): the malformed kinds parsed and answered
# as they should (405 for POST and DELETE, 404 for odd paths, 431 for a
# 64 KiB header, 400 for junk), and the valid scrapes served among them
paced=$(grep '^paced:' "$T/flood.out")
count() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$paced"; }
for want in scrapes_complete:10 status_405:10 status_404:10 status_431:5 status_400:5; do
	fab_check "paced-${want%%:*}" test "$(count "${want%%:*}")" -ge "${want##*:}" 2>/dev/null
done
scrape "$T/m4"
fab_check after-flood-scrape grep -qx 'ibsm_state{state="master"} 1' "$T/m4"
fab_check requests-counted test "$(value "$T/m4" ibsm_metrics_requests_total)" -gt "$(value "$T/m1" ibsm_metrics_requests_total)"
fab_check builds-counted test "$(value "$T/m4" ibsm_metrics_builds_total)" -gt "$(value "$T/m1" ibsm_metrics_builds_total)"

# 5. a better SM whose metrics address is taken (ERR 2002, it runs on):
# handover, the scrape says standby, as sminfo does
A_PID=$(fab_descendant "$SM_PID" ibsm)
fab_check metrics-on-listens test -n "$(listening "$A_PID")"
sm_start_named B H0002 -p 10 --control-socket "$T/b.sock" \
	--metrics-listen "127.0.0.1:$PORT"
wait_state() {
	local i
	for ((i = 0; i < 150; i++)); do
		curl -s -m 5 "$URL/metrics" | grep -qx "ibsm_state{state=\"$1\"} 1" && return 0
		sleep 0.2
	done
	return 1
}
fab_check scrape-standby wait_state standby
# the standby copies the master's SA state every 2 s: its age is served
sync_seen() {
	local i
	for ((i = 0; i < 50; i++)); do
		curl -s -m 5 "$URL/metrics" | grep -q '^ibsm_standby_sync_age_seconds [0-9]' && return 0
		sleep 0.2
	done
	return 1
}
fab_check standby-sync-age sync_seen
fab_run "$DIAG" sminfo "$A_LID" >"$T/sminfo" 2>&1
fab_check sminfo-agrees grep -q SMINFO_STANDBY "$T/sminfo"
fab_check bind-error-logged grep -q "ERR 2002: metrics: cannot listen on 127.0.0.1:$PORT; no metrics served: Address already in use" "$T/B.log"
sm_stop_named B
fab_check scrape-master-again wait_state master

# 6. metrics off (no key, no option): no listening socket at all
sm_start_named C H0004 -p 1 --control-socket "$T/c.sock"
sm_wait_for 20 grep -q "Entering STANDBY" "$T/C.log"
fab_check metrics-off-no-socket test -z "$(listening "$(fab_descendant "$C_PID" ibsm)")"
sm_stop_named C
# a bad value is a configuration error naming it
out=$("$IBSM" --metrics-listen 127.0.0.1 --check-config 2>&1)
rc=$?
fab_check bad-value-refused test "$rc" -eq 2 -a -n "$(grep -- "--metrics-listen 127.0.0.1: expected ADDR:PORT" <<<"$out")"

sm_stop
fab_check clean-exit test $? -eq 0
fab_summary
