#!/usr/bin/env bash
# tests/fabric/test_ignore_other_sm.sh - ignore_other_sm TRUE, OpenSM's
# meaning: the SM asks no other SM for its SMInfo, so it does not yield
# to a master of higher priority.  A master (H0001, priority 10) runs; a
# second ibsm of priority 1 (H0003) becomes its STANDBY; started again
# with ignore_other_sm TRUE it becomes MASTER beside it (sminfo of its
# LID, as infiniband-diags see it) and brings the subnet up itself.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

DIAG=H0002
sm_net_two_switches "$FAB_TMP/net"
fab_sim_start "$FAB_TMP/net" ignore || {
	fab_fail sim-start
	fab_summary
	exit 1
}
sm_start_named A H0001 -p 10 --control-socket "$FAB_TMP/a.sock"
if sm_wait_for 30 grep -q "SUBNET UP" "$FAB_TMP/A.log"; then
	fab_pass master-up
else
	fab_fail master-up "$(tail -n 5 "$FAB_TMP/A.log")"
fi

# without the key: a standby of the master
sm_start_named B H0003 -p 1 --control-socket "$FAB_TMP/b.sock"
LB=$(sm_wait_for 10 sm_lid_of H0003 && sm_lid_of H0003)
if sm_wait_for 30 sm_state_is "$LB" STANDBY; then
	fab_pass default-standby
else
	fab_fail default-standby "$(fab_run "$DIAG" sminfo "$LB" 2>&1)"
fi
sm_stop_named B || fab_fail b-stops-clean

# with it: master beside the other one
printf 'ignore_other_sm TRUE\nsm_priority 1\n' >"$FAB_TMP/ignore.conf"
: >"$FAB_TMP/B.log"
sm_start_named B H0003 -F "$FAB_TMP/ignore.conf" --control-socket "$FAB_TMP/b.sock"
if sm_wait_for 30 grep -q "SUBNET UP" "$FAB_TMP/B.log" &&
	sm_wait_for 10 sm_state_is "$LB" MASTER; then
	fab_pass ignore-other-sm-master
else
	fab_fail ignore-other-sm-master "$(fab_run "$DIAG" sminfo "$LB" 2>&1; tail -n 5 "$FAB_TMP/B.log")"
fi
if grep -q "STANDBY" "$FAB_TMP/B.log"; then
	fab_fail ignore-never-standby "$(grep STANDBY "$FAB_TMP/B.log" | head -n 3)"
else
	fab_pass ignore-never-standby
fi
sm_stop_named B || fab_fail b2-stops-clean
sm_stop_named A || fab_fail a-stops-clean
fab_summary
