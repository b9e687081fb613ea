#!/usr/bin/env bash
# tests/fabric/test_sa.sh - the SA agent under hostile input.
#
# ibsm runs as master on a fat tree; a client sends 10,000 malformed SA
# MADs (random methods, attributes, component masks, versions, RMPP
# flags, truncated and oversized lengths).  ibsm must answer or drop each,
# stay up (sminfo still answered, SA still answering), and exit cleanly
# on SIGTERM: under the sanitizers a leak or memory error fails the test.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FUZZ=${SA_FUZZ:-$(dirname "$IBSM")/../tests/fabric/sa_fuzz}
CLIENT=${SA_CLIENT:-$(dirname "$IBSM")/../tests/fabric/sa_client}
COUNT=${SA_FUZZ_COUNT:-10000}

fab_sim_start "$FAB_TOPO/fat2-small.net" sa || exit 1
if ! fab_ibsm_start H0001 "$FAB_TMP/sm"; then
	fab_fail sa-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass sa-ibsm-up

out=$FAB_TMP/fuzz.out
if fab_run H0002 "$FUZZ" -n "$COUNT" -s 7 >"$out" 2>&1; then
	fab_pass "sa-fuzz-$COUNT-sent"
else
	fab_fail "sa-fuzz-$COUNT-sent" "$(tail -n 3 "$out")"
fi
sed 's/^/    /' "$out"
answered=$(sed -n 's/^sent [0-9]* answered \([0-9]*\).*/\1/p' "$out")
if [ "${answered:-0}" -gt 0 ]; then
	fab_pass sa-fuzz-answered
else
	fab_fail sa-fuzz-answered "no answer to any malformed MAD"
fi

# Still alive and still the master: sminfo from another host.
sminfo_master() {
	fab_run "$1" sminfo | grep -q SMINFO_MASTER
}
fab_check sa-sminfo-after-fuzz sminfo_master H0003

# expect NAME PATTERN OUTPUT: PASS when OUTPUT matches the glob PATTERN.
expect() {
	# shellcheck disable=SC2053 # the pattern is a glob on purpose
	if [[ $3 == $2 ]]; then
		fab_pass "$1"
	else
		fab_fail "$1" "got: $3"
	fi
}

# ServiceRecord: register from one host, query and delete from another.
expect sa-service-set "service 0x0000000000001234 ibsm-test lease 3600" \
	"$(fab_run H0005 "$CLIENT" service-set 0x1234 ibsm-test 3600)"
expect sa-service-get "*ibsm-test*" "$(fab_run H0006 "$CLIENT" service-get 0x1234)"
expect sa-service-delete "*ibsm-test*" \
	"$(fab_run H0006 "$CLIENT" service-delete 0x1234)"
expect sa-service-gone-no-records "status 0x0300" \
	"$(fab_run H0006 "$CLIENT" service-get 0x1234)"
# A lease of 1 s runs out.
fab_run H0005 "$CLIENT" service-set 0x99 short-lease 1 >/dev/null
sleep 2.5
expect sa-service-lease-expired "status 0x0300" \
	"$(fab_run H0006 "$CLIENT" service-get 0x99)"

# InformInfo: subscribers get a Report when a link goes (trap 128 from the
# switch, forwarded) and when the host behind it leaves (trap 65, made by
# the SM).  ibsim delivers requests on QP 0/1 only to clients it counts
# as SMs, so the subscriber sets SIM_SET_ISSM (real HCAs need no such
# thing).
subscribe() {
	SIM_SET_ISSM=1 fab_run "$1" "$CLIENT" subscribe "$2" 20 \
		>"$FAB_TMP/sub-$2.out" 2>&1
}
# report_check NAME HOST TRAP 'CONSOLE COMMAND': subscribe HOST to TRAP,
# run the command, expect a Report of that trap.
report_check() {
	local name=$1 host=$2 trap=$3 cmd=$4 pid i
	subscribe "$host" "$trap" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q subscribed "$FAB_TMP/sub-$trap.out" 2>/dev/null && break
		sleep 0.1
	done
	fab_cmd "$cmd" >/dev/null
	if wait "$pid" && grep -q "^report $trap" "$FAB_TMP/sub-$trap.out"; then
		fab_pass "$name"
	else
		fab_fail "$name" "$(cat "$FAB_TMP/sub-$trap.out")"
	fi
}
report_check sa-inform-report-128-on-unlink H0007 128 'Unlink "H0016"[1]'
report_check sa-inform-report-65-gid-out H0008 65 'Unlink "H0015"[1]'

if fab_ibsm_stop; then
	fab_pass sa-ibsm-clean-exit
else
	fab_fail sa-ibsm-clean-exit "exit status or sanitizer report"
fi
grep "SA: " "$FAB_TMP/sm/ibsm.log" | sed 's/^.*\] /    /'
fab_summary
