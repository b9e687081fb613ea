#!/usr/bin/env bash
# tests/fabric/test_discovery.sh - ibsm's discovery against ibnetdiscover.
#
# For every bundled topology (tests/topologies/*.net): start ibsim, take
# ibnetdiscover's view from H0001 as the reference, check it against the
# .net file itself, then run one `ibsm -o --dump-fabric` sweep and compare
# its dump with the reference.  On fat3-pods (3 tiers, 104 nodes) also:
#   - drops: 10% of the SMPs lost at the SM's own port, then 2% lost at
#     every switch port; discovery must still be complete and equal;
#   - unlink: after `Unlink` of a spine-core link the new dump lacks exactly
#     that link (and equals a fresh ibnetdiscover); after `ReLink` it is
#     back to the original.
#
# One "PASS name" / "FAIL name" line per check, then "N passed, M failed".
# Runs from any directory; the daemon is $IBSM (default <repo>/sm/ibsm).
# Set TOPOS="tiny fat2-small" to run a subset, FAB_KEEP=1 to keep files.
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Retries for the sweeps that run with SMP loss: 10% loss and 10 retries
# leave one failed SMP in 10^11.
DROP_RETRIES=${DROP_RETRIES:-10}

ibsm_ok=1
if [ ! -x "$IBSM" ]; then
	ibsm_ok=0
	fab_log "test_discovery: $IBSM is not built; every ibsm check fails"
fi

# ibsm_check NAME REF OUT [IBSM OPTIONS]: a sweep from H0001 into OUT, its
# exit status and summary line checked, its dump compared with REF.
ibsm_check() {
	local name=$1 ref=$2 out=$3 rc
	shift 3
	if [ "$ibsm_ok" = 0 ]; then
		fab_fail "$name" "$IBSM not built"
		return 1
	fi
	# Discovery only: this test is about what the sweep finds.
	fab_ibsm H0001 "$out" --discover-only "$@"
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$out" ]; then
		fab_fail "$name" "ibsm exit $rc"
		{
			cat "$out.summary" "$out.err"
			tail -n 15 "$out.log"
		} 2>/dev/null | head -n 30 | sed 's/^/    /'
		return 1
	fi
	if [ ! -s "$out.summary" ]; then
		fab_fail "$name" "no summary line on stdout"
		return 1
	fi
	fab_check "$name" fab_compare --max 12 "$ref" "$out"
}

# check_dropped NAME OFFSET: ibsim (at Verbose 1) logged dropped MADs after
# OFFSET of its log, i.e. the last ibsm sweep really met SMP loss.
check_dropped() {
	local seg reached dropped
	[ "$ibsm_ok" = 1 ] || return 0
	seg=$(tail -c +"$(($2 + 1))" "$FAB_SIM_LOG")
	reached=$(grep -c 'reached host' <<<"$seg")
	dropped=$(grep -c 'drop pkt due error rate' <<<"$seg")
	if [ "$dropped" -gt 0 ]; then
		fab_pass "$1"
	else
		fab_fail "$1" "no MAD dropped"
	fi
	echo "    ibsim: $dropped of $reached MADs dropped during the sweep"
}

# first_link NET SWITCH PEERPREFIX: 'SWITCH[port]' of SWITCH's first link
# to a node whose name starts with PEERPREFIX, and the peer end.
first_link() {
	awk -v sw="$2" -v pfx="$3" '
	$1 == "Switch" && $3 == "\"" sw "\"" { on = 1; next }
	/^$/ { on = 0 }
	on && /^\[/ {
		split($0, f, "\"")
		if (index(f[2], pfx) == 1) {
			port = substr($1, 2, index($1, "]") - 2)
			peer = f[3]; sub(/^\[/, "", peer); sub(/\].*/, "", peer)
			printf "\"%s\"[%s] \"%s\"[%s]\n", sw, port, f[2], peer
			exit
		}
	}' "$1"
}

# Every bundled topology, small first.
mapfile -t topos < <(fab_topologies)

for net in "${topos[@]}"; do
	name=$(basename "$net" .net)
	if ! fab_sim_start "$net" "$name"; then
		fab_fail "$name-ibsim" "ibsim did not start"
		continue
	fi
	ref=$FAB_TMP/$name.ibnetdiscover
	fab_ibnetdiscover H0001 "$ref"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fab_fail "$name-ibnetdiscover" "exit $rc"
		head -n 5 "$ref.err" | sed 's/^/    /'
		continue
	fi
	# The reference itself must be the fabric the .net file describes.
	fab_check "$name-reference" fab_compare "$net" "$ref"
	ibsm_check "$name-ibsm" "$ref" "$FAB_TMP/$name.ibsm"
	# Multi-port hosts: attach the SM elsewhere, same fabric expected.
	if [ "$name" = dualrail-32 ] && [ "$ibsm_ok" = 1 ]; then
		fab_run H0032 "$IBSM" -o -f "$FAB_TMP/$name.h32.log" \
			--dump-fabric "$FAB_TMP/$name.h32" >/dev/null 2>&1
		fab_check "$name-ibsm-from-H0032" fab_compare "$ref" "$FAB_TMP/$name.h32"
	fi
done

# ---- SMP loss and link changes on a mid-size fabric ----------------------
net=$FAB_TOPO/fat3-pods.net
name=fat3-pods
if fab_sim_start "$net" "$name-faults"; then
	ref=$FAB_TMP/faults.ibnetdiscover
	fab_ibnetdiscover H0001 "$ref" || fab_fail "faults-ibnetdiscover"

	# With Verbose 1, ibsim logs every MAD that reaches a node and every
	# drop: proof that the sweep really lost SMPs.
	fab_cmd 'Verbose 1' >/dev/null

	# (a1) 10% of the SMPs: every SMP (or its answer) enters the SM's port
	# once, and ibsim drops each MAD entering an "Error" port with that
	# probability (then hands it back to the sender as timed out).
	if fab_cmd 'Error "H0001"[1] 10' >/dev/null; then
		mark=$(stat -c %s "$FAB_SIM_LOG")
		ibsm_check "drop10-sm-port" "$ref" "$FAB_TMP/drop10.ibsm" \
			--retries "$DROP_RETRIES"
		check_dropped "drop10-sm-port-dropped" "$mark"
	else
		fab_fail "drop10-sm-port" "ibsim Error command failed"
	fi
	fab_cmd 'Error "H0001"[1] 0' >/dev/null

	# (a2) 2% at every port of every switch: a MAD meets the rate at each
	# switch port it enters, so long paths lose up to ~20%.
	mapfile -t switches < <(awk '$1 == "Switch" { gsub(/"/, "", $3); print $3 }' "$net")
	on=() off=()
	for sw in "${switches[@]}"; do
		on+=("Error \"$sw\" 2")
		off+=("Error \"$sw\" 0")
	done
	if fab_cmd "${on[@]}" >/dev/null; then
		mark=$(stat -c %s "$FAB_SIM_LOG")
		ibsm_check "drop2-all-switch-ports" "$ref" "$FAB_TMP/drop2.ibsm" \
			--retries "$DROP_RETRIES"
		check_dropped "drop2-all-switch-ports-dropped" "$mark"
	else
		fab_fail "drop2-all-switch-ports" "ibsim Error command failed"
	fi
	fab_cmd "${off[@]}" >/dev/null
	fab_cmd 'Verbose 0' >/dev/null

	# (b) Unlink a spine-core link: ibnetdiscover and ibsm both lose
	# exactly that link.
	read -r end peer < <(first_link "$net" spine-p02-01 core-)
	if [ -z "${end:-}" ] || ! fab_cmd "Unlink $end" >/dev/null; then
		fab_fail "unlink" "cannot unlink ${end:-spine-p02-01 core link}"
	else
		after=$FAB_TMP/unlinked.ibnetdiscover
		fab_ibnetdiscover H0001 "$after"
		diff_out=$(fab_compare "$ref" "$after")
		if [ "$(grep -c '^  ' <<<"$diff_out")" = 1 ] &&
			grep -q '^  missing link .*"spine-p02-01".*"core-' <<<"$diff_out"; then
			fab_pass "unlink-ibnetdiscover-sees-it"
		else
			fab_fail "unlink-ibnetdiscover-sees-it" "$end - $peer"
			head -n 10 <<<"$diff_out" | sed 's/^/    /'
		fi
		if ibsm_check "unlink-ibsm-equals-ibnetdiscover" "$after" \
			"$FAB_TMP/unlinked.ibsm"; then
			diff_out=$(fab_compare "$ref" "$FAB_TMP/unlinked.ibsm")
			if [ "$(grep -c '^  ' <<<"$diff_out")" = 1 ] &&
				grep -q '^  missing link' <<<"$diff_out"; then
				fab_pass "unlink-ibsm-lost-one-link"
			else
				fab_fail "unlink-ibsm-lost-one-link"
				head -n 10 <<<"$diff_out" | sed 's/^/    /'
			fi
		fi
		# (c) ReLink: back to the original fabric.
		if fab_cmd "ReLink $end" >/dev/null; then
			ibsm_check "relink-ibsm-equals-original" "$ref" \
				"$FAB_TMP/relinked.ibsm"
		else
			fab_fail "relink" "ReLink $end failed"
		fi
	fi
	fab_sim_stop
else
	fab_fail "faults-ibsim" "ibsim did not start"
fi

fab_summary
