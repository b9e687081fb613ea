#!/usr/bin/env bash
# tests/fabric/test_faults.sh - hostile and broken nodes on fat2-small:
# the rest of the subnet comes up, the fault is named, nothing is routed
# to the wrong place.
#
#   a. duplicate GUID: ibsim `Guid "H0004" <H0002's GUID>` makes H0004 a
#      twin of H0002 (node and port GUID).
#      a1 (-o): exit 2 (up, degraded), ERR 0103 names both directed routes
#          (0,1,2 and 0,1,4); H0002's LID is routed to leaf-01 port 2
#          (ibroute) and ibtracert to it ends at "H0002 HCA-1"; the twin
#          has no LID and its link is not activated.
#      a2 (daemon, twin made after SUBNET UP): SIGHUP sweeps again; the
#          twin is named again, H0002 keeps its LID and route, sminfo
#          names a MASTER, the SA answers.
#      a3 (daemon): the same with H0004 copying H0009, on another leaf:
#          the twin is closer to the SM and answers first; the port the
#          last sweep knew keeps the GUID, its LID and its routes.
#   b. a switch that drops every LFT Set: ibsim `Error "leaf-04" 100 0x19`.
#      b1 (daemon): SUBNET UP anyway; ERR 0220 names leaf-04 and its LFT
#          Sets, ERR 0221 excludes it; sminfo MASTER; saquery answers;
#          hosts of other leaves are routed to each other (ibtracert);
#          the next sweep names leaf-04 again.
#      b2 (-o): exit 2 with a SUBNET UP summary line.
#
# One "PASS name" / "FAIL name" line per check, then "N passed, M failed".
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAB_TIMEOUT=${FAB_TIMEOUT:-120}
NET=$FAB_TOPO/fat2-small.net

if [ ! -x "$IBSM" ]; then
	fab_fail "ibsm-built" "$IBSM is not built"
	fab_summary
	exit 1
fi

# field NAME: the value of "NAME:....value" in smpquery's output on stdin.
field() {
	sed -n "s/^$1:\.*//p" | head -n 1
}

# lid_at PATH PORT: the LID a port holds, read over a directed route.
lid_at() {
	fab_run H0001 smpquery -D portinfo "$1" "$2" 2>/dev/null | field Lid
}

state_at() {
	fab_run H0001 smpquery -D portinfo "$1" "$2" 2>/dev/null | field LinkState
}

# lft_port LID: leaf-01's LFT entry for LID (ibroute over DR 0,1).
lft_port() {
	fab_run H0001 ibroute -D 0,1 2>/dev/null |
		awk -v l="$(printf '0x%04x' "$1")" '$1 == l { print $2 + 0 }'
}

# wait_log FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching.
wait_log() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# check_genuine NAME LID DESC PORTS: LID belongs to the port DESC, leaf-01
# routes it to one of PORTS (a regex), and a trace to it ends at DESC, not
# at the twin (H0004).
check_genuine() {
	local name=$1 lid=$2 desc=$3 ports=$4 got trace
	got=$(lft_port "$lid")
	if [[ "$got" =~ ^($ports)$ ]]; then
		fab_pass "$name-lft"
	else
		fab_fail "$name-lft" "leaf-01 routes LID $lid to port '${got}', want $ports"
	fi
	trace=$(fab_run H0001 ibtracert 1 "$lid" 2>&1)
	if grep -q "^To ca .*\"$desc\"" <<<"$trace" &&
		! grep -q 'H0004' <<<"$trace"; then
		fab_pass "$name-trace"
	else
		fab_fail "$name-trace" "ibtracert 1 $lid does not end at $desc"
		sed 's/^/    /' <<<"$trace" | head -n 8
	fi
}

# twin_daemon NAME PATH DESC PORTS: ibsm up on a fresh fabric, then H0004
# takes the GUIDs of the CA at PATH (DESC); two SIGHUP sweeps: the twin is
# named each time, the genuine port keeps its LID and routes (PORTS: how
# leaf-01 reaches it), sminfo and the SA still answer.
# in_log NAME FILE REGEX WHY: pass when FILE has a line matching REGEX,
# else fail with WHY and show the first ERR lines of FILE.
in_log() {
	if grep -q "$3" "$2"; then
		fab_pass "$1"
	else
		fab_fail "$1" "$4"
		grep ERR "$2" | head -n 5 | sed 's/^/    /'
	fi
}

twin_daemon() {
	local name=$1 path=$2 desc=$3 ports=$4 dir g lid sm_pid rc
	fab_sim_start "$NET" "$name" || return 1
	dir=$FAB_TMP/$name
	if ! fab_ibsm_start H0001 "$dir" -s 1; then
		fab_fail "$name-up" "no SUBNET UP before the twin"
		return 1
	fi
	g=$(fab_run H0001 smpquery -D nodeinfo "$path" 2>/dev/null | field Guid)
	lid=$(lid_at "$path" 1)
	fab_cmd "Guid \"H0004\" $g" >/dev/null
	# A heavy sweep now (the GUID change itself raises no trap): SIGHUP
	# to ibsm itself, the child of `timeout` (which would turn a signal
	# it relays into a SIGKILL 5 s later).
	sm_pid=$(pgrep -P "$FAB_SM_PID" | head -n 1)
	kill -HUP "$sm_pid"
	if wait_log "$dir/ibsm.log" "ERR 0103: duplicate node GUID $g: .*path 0,1,4 is left out" 1 30 &&
		kill -HUP "$sm_pid" &&
		wait_log "$dir/ibsm.log" "ERR 0103: duplicate node GUID $g: .*path 0,1,4 is left out" 2 30; then
		fab_pass "$name-named-every-sweep"
	else
		fab_fail "$name-named-every-sweep" "ERR 0103 naming 0,1,4 not logged on two sweeps"
		grep ERR "$dir/ibsm.log" | head -n 5 | sed 's/^/    /'
	fi
	wait_log "$dir/ibsm.log" "SUBNET UP" 3 30
	if [ "$(lid_at "$path" 1)" = "$lid" ] && [ "$(lid_at 0,1,4 1)" != "$lid" ]; then
		fab_pass "$name-genuine-keeps-lid"
	else
		fab_fail "$name-genuine-keeps-lid" "$desc LID $(lid_at "$path" 1), was $lid; twin $(lid_at 0,1,4 1)"
	fi
	check_genuine "$name" "$lid" "$desc" "$ports"
	if fab_run H0005 sminfo 2>/dev/null | grep -q SMINFO_MASTER; then
		fab_pass "$name-sminfo-master"
	else
		fab_fail "$name-sminfo-master"
	fi
	if fab_run H0005 saquery -N 2>/dev/null | grep -q NodeRecord; then
		fab_pass "$name-sa-answers"
	else
		fab_fail "$name-sa-answers"
	fi
	fab_ibsm_stop
	rc=$?
	[ "$rc" = 0 ] && fab_pass "$name-clean-exit" || fab_fail "$name-clean-exit" "exit $rc"
}

# ---- a1. duplicate GUID, -o ---------------------------------------------
fab_sim_start "$NET" twin || exit 1
g2=$(fab_run H0001 smpquery -D nodeinfo 0,1,2 2>/dev/null | field Guid)
if [ -z "$g2" ] || ! fab_cmd "Guid \"H0004\" $g2" >/dev/null; then
	fab_fail "a1-guid" "cannot give H0004 the GUID of H0002 ('$g2')"
else
	out=$FAB_TMP/twin
	fab_ibsm H0001 "$out"
	rc=$?
	if [ "$rc" = 2 ] && grep -q "SUBNET UP" "$out.summary"; then
		fab_pass "a1-up-degraded"
	else
		fab_fail "a1-up-degraded" "exit $rc (want 2 and a SUBNET UP line)"
		tail -n 5 "$out.log" | sed 's/^/    /'
	fi
	in_log a1-both-routes-named "$out.log" \
		"ERR 0103: duplicate node GUID $g2: path 0,1,4 .* path 0,1,2 " \
		"no ERR 0103 naming 0,1,4 and 0,1,2"
	if grep -q "SUBNET UP in .* 15 CAs" "$out.summary"; then
		fab_pass "a1-rest-up"
	else
		fab_fail "a1-rest-up" "$(cat "$out.summary")"
	fi
	lid2=$(lid_at 0,1,2 1)
	if [ -n "$lid2" ] && [ "$lid2" != 0 ]; then
		fab_pass "a1-genuine-lid"
		check_genuine a1 "$lid2" "H0002 HCA-1" 2
	else
		fab_fail "a1-genuine-lid" "H0002 has LID '$lid2'"
	fi
	twin_lid=$(lid_at 0,1,4 1)
	twin_state=$(state_at 0,1 4)
	if [ "$twin_lid" = 0 ] && [ "$twin_state" != Active ] &&
		[ "$twin_state" != Armed ]; then
		fab_pass "a1-twin-left-out"
	else
		fab_fail "a1-twin-left-out" "twin LID '$twin_lid', leaf-01 port 4 '$twin_state'"
	fi
fi

# ---- a2. duplicate GUID made under a running daemon ---------------------
twin_daemon a2 0,1,2 "H0002 HCA-1" 2

# ---- a3. the same with a twin closer to the SM than the node it copies --
# H0004 (0,1,4) copies H0009 (0,1,5,3,1, another leaf): the twin answers
# first, yet the port the last sweep knew keeps the GUID, LID and routes.
twin_daemon a3 0,1,5,3,1 "H0009 HCA-1" "5|6"

# ---- b1. a switch that never acknowledges its LFT Sets, daemon ----------
fab_sim_start "$NET" mute || exit 1
fab_cmd 'Error "leaf-04" 100 0x19' >/dev/null ||
	fab_fail "b-error-cmd" "ibsim refused the Error command"
g4=$(fab_run H0001 smpquery -D nodeinfo 0,1,5,4 2>/dev/null | field Guid)
dir=$FAB_TMP/mute
if FAB_UP_TIMEOUT=90 fab_ibsm_start H0001 "$dir" -s 3; then
	fab_pass "b1-subnet-up"
	in_log b1-fault-named "$dir/ibsm.log" \
		"ERR 0220: Switch $g4 \"leaf-04\" did not acknowledge [1-9][0-9]* LFT" \
		"no ERR 0220 naming leaf-04 ($g4) and its LFT Sets"
	in_log b1-excluded "$dir/ibsm.log" \
		"ERR 0221: excluding Switch $g4 \"leaf-04\"" "no ERR 0221 for leaf-04"
	if fab_run H0005 sminfo 2>/dev/null | grep -q SMINFO_MASTER; then
		fab_pass "b1-sminfo-master"
	else
		fab_fail "b1-sminfo-master"
	fi
	# H0005 (leaf-02) to H0009 (leaf-03): routed through the spines.
	lid5=$(lid_at 0,1,5,2,1 1)
	lid9=$(lid_at 0,1,5,3,1 1)
	trace=$(fab_run H0005 ibtracert "$lid5" "$lid9" 2>&1)
	rc=$?
	# Seen once under load: ibtracert ended with no output at all (the
	# tool did not run, no route was refused): once more.  (saquery -N,
	# which ran just before it then, gets a multi-segment answer it never
	# ACKs; the SM's re-sent segments reach whatever process holds that
	# ibsim client slot next, and crash umad2sim in one with no SA agent,
	# as ibtracert is.  saquery now runs after it.)
	if [ -z "$trace" ]; then
		sleep 1
		trace=$(fab_run H0005 ibtracert "$lid5" "$lid9" 2>&1)
		rc=$?
	fi
	if grep -q '^To ca .*"H0009 HCA-1"' <<<"$trace"; then
		fab_pass "b1-rest-routed"
	else
		fab_fail "b1-rest-routed" "no route from H0005 (LID '$lid5') to H0009 (LID '$lid9'), ibtracert exit $rc"
		sed 's/^/    /' <<<"$trace" | head -n 8
	fi
	if fab_run H0005 saquery -N 2>/dev/null | grep -q NodeRecord; then
		fab_pass "b1-sa-answers"
	else
		fab_fail "b1-sa-answers" "saquery -N from H0005 got no NodeRecord"
	fi
	if wait_log "$dir/ibsm.log" 'ERR 0220: .*"leaf-04".*still excluded' 2 30; then
		fab_pass "b1-named-every-sweep"
	else
		fab_fail "b1-named-every-sweep" "leaf-04 not named on later sweeps"
	fi
	fab_ibsm_stop
	rc=$?
	[ "$rc" = 0 ] && fab_pass "b1-clean-exit" || fab_fail "b1-clean-exit" "exit $rc"
else
	fab_fail "b1-subnet-up" "no SUBNET UP with leaf-04 dropping its LFT Sets"
	grep -c "ERR 0201" "$dir/ibsm.log" 2>/dev/null | sed 's/^/    failed sweeps: /'
fi

# ---- b2. the same, -o ----------------------------------------------------
out=$FAB_TMP/mute-once
fab_ibsm H0001 "$out"
rc=$?
if [ "$rc" = 2 ] && grep -q "SUBNET UP" "$out.summary" &&
	grep -q 'ERR 0220: .*"leaf-04"' "$out.log"; then
	fab_pass "b2-once-up-degraded"
else
	fab_fail "b2-once-up-degraded" "exit $rc (want 2, SUBNET UP, ERR 0220)"
	tail -n 5 "$out.log" | sed 's/^/    /'
fi

fab_sim_stop
fab_summary
