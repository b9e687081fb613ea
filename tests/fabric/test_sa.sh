#!/usr/bin/env bash
# tests/fabric/test_sa.sh - the SA agent under hostile input.
#
# ibsm runs as master on a fat tree; a client sends 10,000 malformed SA
# MADs (random methods, attributes, component masks, versions, RMPP
# flags, truncated and oversized lengths).  ibsm must answer or drop each,
# stay up (sminfo still answered, SA still answering), and exit cleanly
# on SIGTERM: under the sanitizers a leak or memory error fails the test.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FUZZ=${SA_FUZZ:-$(dirname "$IBSM")/../tests/fabric/sa_fuzz}
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

if fab_ibsm_stop; then
	fab_pass sa-ibsm-clean-exit
else
	fab_fail sa-ibsm-clean-exit "exit status or sanitizer report"
fi
grep "SA: " "$FAB_TMP/sm/ibsm.log" | sed 's/^.*\] /    /'
fab_summary
