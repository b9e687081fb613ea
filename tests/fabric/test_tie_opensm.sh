#!/usr/bin/env bash
# tests/fabric/test_tie_opensm.sh - ibsm and OpenSM with the same
# priority started together settle with the SM of the lower port GUID
# (ibsm) as master and OpenSM standing by (IB spec 14.4.1), TRIES times
# (default 2, to stay inside CI's budget) on a 288-host random fabric:
# tests/bench/tie_opensm.sh does the tries (run it by hand with
# TRIES=20).  OpenSM that swept before ibsm's port had IsSM knows no
# other SM, and stayed master beside ibsm until ibsm told it with trap
# 144 (sm/trap.c).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TRIES=${TRIES:-2}
if ! command -v opensm >/dev/null; then
	fab_fail "opensm installed" "the reference is needed for this test"
	fab_summary
	exit 1
fi
TRIES=$TRIES bash "$FAB_TOP/tests/bench/tie_opensm.sh" >"$FAB_TMP/tie.out" 2>&1
rc=$?
sed 's/^/    /' "$FAB_TMP/tie.out"
fab_check "the tie with OpenSM settles with ibsm master in every try ($(tail -n 1 "$FAB_TMP/tie.out"))" \
	[ "$rc" -eq 0 ]
fab_summary
