#!/usr/bin/env bash
# tests/fabric/test_babbling_port.sh - babbling_port_policy with OpenSM
# 3.3.23 as referee.  A host sends the same trap 129 (local link
# integrity threshold, its own LID and port 1 in the Notice) 300 times,
# LID-routed to the SM (tests/fabric/trap_forge), on a fresh ibsim each
# time:
#   - babbling_port_policy FALSE: the link stays up (smpquery portinfo of
#     the switch port facing the host: PhysLinkState LinkUp), for both
#     SMs;
#   - TRUE: both SMs disable the switch port facing the host (the end of
#     the link nearer the SM): PhysLinkState Disabled; ibsm logs both ends
#     once, and the port stays Disabled through the heavy sweep that
#     follows;
#   - TRUE, a switch (sw-b) sends them about its own port facing a host:
#     both SMs disable that switch port;
#   - TRUE, but the traps come from another host and name the first
#     host's port: ibsm disables nothing (OpenSM, which does not check
#     who sends a trap, disables the named port; shown, not compared).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
FORGE=${TRAP_FORGE:-$BUILD/tests/fabric/trap_forge}
[ -x "$FORGE" ] || {
	fab_fail trap-forge-built "$FORGE"
	fab_summary
	exit 1
}
fab_need_opensm

NET=$FAB_TMP/net
cat >"$NET" <<'EOF'
Switch 8 "sw-a"
[1]	"H0001"[1]
[2]	"H0002"[1]
[3]	"H0003"[1]
[4]	"sw-b"[4]

Switch 8 "sw-b"
[1]	"H0004"[1]
[4]	"sw-a"[4]

Hca 1 "H0001"
[1]	"sw-a"[1]

Hca 1 "H0002"
[1]	"sw-a"[2]

Hca 1 "H0003"
[1]	"sw-a"[3]

Hca 1 "H0004"
[1]	"sw-b"[1]
EOF

# phys PORT: PhysLinkState of sw-a's port PORT, read from H0004 (by
# directed route: H0004, sw-b, sw-a)
phys() {
	fab_run H0004 smpquery -D portinfo 0,1,4 "$1" 2>/dev/null |
		sed -nE 's/^PhysLinkState:\.*(.*)$/\1/p'
}

# lid_of HOST: the LID of HOST's port 1
lid_of() {
	fab_run "$1" smpquery -D portinfo 0 1 2>/dev/null |
		sed -nE 's/^Lid:\.*([0-9]+)$/\1/p'
}

# wait_phys PORT STATE: up to 10 s for sw-a[PORT] to show STATE
wait_phys() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(phys "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

# start WHICH NAME POLICY: a fresh ibsim and WHICH (opensm or ibsm) on
# H0001 with babbling_port_policy POLICY, until SUBNET UP
SM_PID=
start() {
	local which=$1 name=$2 dir=$FAB_TMP/$2 i
	mkdir -p "$dir"
	printf 'babbling_port_policy %s\n' "$3" >"$dir/opensm.conf"
	fab_sim_start "$NET" "$name" || return 1
	if [ "$which" = opensm ]; then
		fab_spawn H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
			opensm -d2 -F "$dir/opensm.conf" -f "$dir/opensm.log" \
			>"$dir/out" 2>&1
		SM_PID=$FAB_SPAWN_PID
		for ((i = 0; i < 300; i++)); do
			grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null && return 0
			kill -0 "$SM_PID" 2>/dev/null || return 1
			sleep 0.1
		done
		return 1
	fi
	fab_ibsm_start H0001 "$dir" -F "$dir/opensm.conf"
}

stop() {
	if [ "$1" = opensm ]; then
		kill -TERM "$SM_PID" 2>/dev/null
		wait "$SM_PID" 2>/dev/null
		rm -f "$FAB_TMP/pids/$SM_PID"
	elif fab_ibsm_stop; then
		fab_pass "$2-stops-clean"
	else
		fab_fail "$2-stops-clean" "exit status $?"
	fi
	fab_sim_stop
}

# forge NAME HOST [OPTIONS]: 300 traps 129 from HOST
forge() {
	local name=$1 host=$2
	shift 2
	fab_run "$host" "$FORGE" -n 300 -r 250 "$@" 129 >"$FAB_TMP/$name.forge" 2>&1
	fab_check "$name-sent-300" grep -q "^sent 300 " "$FAB_TMP/$name.forge"
}

declare -A RESULT
for which in opensm ibsm; do
	# --- FALSE: the link stays up
	name=$which-off
	if start "$which" "$name" FALSE; then
		fab_pass "$name-up"
	else
		fab_fail "$name-up"
	fi
	forge "$name" H0002
	sleep 2
	RESULT[$name]=$(phys 2)
	[ "$which" = ibsm ] && fab_check ibsm-off-says-why \
		grep -q "ERR 0311: trap 129 from LID .* repeated 250 times; babbling_port_policy FALSE" \
		"$FAB_TMP/$name/ibsm.log"
	stop "$which" "$name"

	# --- TRUE: the port facing the host is disabled
	name=$which-on
	if start "$which" "$name" TRUE; then
		fab_pass "$name-up"
	else
		fab_fail "$name-up"
	fi
	forge "$name" H0002
	wait_phys 2 Disabled
	RESULT[$name]=$(phys 2)
	RESULT[$name-other]=$(phys 3)
	if [ "$which" = ibsm ]; then
		log=$FAB_TMP/$name/ibsm.log
		fab_check ibsm-on-logs-both-ends grep -q \
			"ERR 0319: babbling port: trap 129 repeated 250 times by port 1 of .*; disabling port 2 of Switch .*\"sw-a\", the link to port 1 of Ca .*\"H0002\"" "$log"
		n=$(grep -c "ERR 0319" "$log")
		fab_check "ibsm-on-logged-once ($n)" test "$n" -eq 1
		# the sweep the change causes, and the port still Disabled after it
		for ((i = 0; i < 50; i++)); do
			awk '/ERR 0319/ { e = 1 } e && /SUBNET UP/ { f = 1 } END { exit !f }' "$log" && break
			sleep 0.2
		done
		fab_check ibsm-on-swept-after awk '/ERR 0319/ { e = 1 } e && /SUBNET UP/ { f = 1 } END { exit !f }' "$log"
		fab_check ibsm-on-stays-disabled test "$(phys 2)" = Disabled
	fi
	stop "$which" "$name"
done

# --- TRUE, traps from H0003 naming H0002's port
name=ibsm-forged
if start ibsm "$name" TRUE; then
	fab_pass "$name-up"
else
	fab_fail "$name-up"
fi
victim=$(lid_of H0002)
forge "$name" H0003 -l "$victim" -p 1
sleep 2
RESULT[$name]=$(phys 2)
RESULT[$name-other]=$(phys 3)
fab_check ibsm-forged-says-why grep -q \
	"ERR 0317: trap 129 from LID .* repeated 250 times names LID $victim port 1, not a port of the node that sends it" \
	"$FAB_TMP/$name/ibsm.log"
stop ibsm "$name"

name=opensm-forged
if start opensm "$name" TRUE; then
	victim=$(lid_of H0002)
	forge "$name" H0003 -l "$victim" -p 1
	wait_phys 2 Disabled
	RESULT[$name]=$(phys 2)
	stop opensm "$name"
fi

# --- TRUE, a switch babbling about its own port facing H0004: sw-b's
# port 1 (the switch is the end nearer the SM)
swb_port1() {
	fab_run H0002 smpquery -D portinfo 0,1,4 1 2>/dev/null |
		sed -nE 's/^PhysLinkState:\.*(.*)$/\1/p'
}
for which in opensm ibsm; do
	name=$which-switch
	if start "$which" "$name" TRUE; then
		fab_pass "$name-up"
	else
		fab_fail "$name-up"
	fi
	forge "$name" sw-b -p 1
	for ((i = 0; i < 50; i++)); do
		[ "$(swb_port1)" = Disabled ] && break
		sleep 0.2
	done
	RESULT[$name]=$(swb_port1)
	stop "$which" "$name"
done

echo "    sw-a port facing the babbler (H0002)    OpenSM      ibsm"
for c in off on forged; do
	printf '      babbling_port_policy %-14s %-11s %s\n' "$c" \
		"${RESULT[opensm-$c]:-}" "${RESULT[ibsm-$c]:-}"
done
if [ "${RESULT[opensm-off]:-}" = LinkUp ] && [ "${RESULT[ibsm-off]:-}" = LinkUp ]; then
	fab_pass "policy-false-stays-up (both LinkUp)"
else
	fab_fail policy-false-stays-up "OpenSM '${RESULT[opensm-off]:-}', ibsm '${RESULT[ibsm-off]:-}'"
fi
if [ "${RESULT[opensm-on]:-}" = Disabled ] && [ "${RESULT[ibsm-on]:-}" = Disabled ]; then
	fab_pass "policy-true-disables (both Disabled)"
else
	fab_fail policy-true-disables "OpenSM '${RESULT[opensm-on]:-}', ibsm '${RESULT[ibsm-on]:-}'"
fi
printf '      switch sw-b babbling about port 1 %-11s %s\n' \
	"${RESULT[opensm-switch]:-}" "${RESULT[ibsm-switch]:-}"
if [ "${RESULT[opensm-switch]:-}" = Disabled ] && [ "${RESULT[ibsm-switch]:-}" = Disabled ]; then
	fab_pass "switch-trap-disables (both Disabled)"
else
	fab_fail switch-trap-disables "OpenSM '${RESULT[opensm-switch]:-}', ibsm '${RESULT[ibsm-switch]:-}'"
fi
fab_check ibsm-on-other-port-up test "${RESULT[ibsm-on-other]:-}" = LinkUp
fab_check ibsm-forged-nothing-disabled test "${RESULT[ibsm-forged]:-}" = LinkUp
fab_check ibsm-forged-sender-up test "${RESULT[ibsm-forged-other]:-}" = LinkUp

fab_summary
