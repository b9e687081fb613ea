#!/usr/bin/env bash
# tests/fabric/test_node_names.sh - node_name_map_name: infiniband-diags'
# node-name-map (the file `ibnetdiscover --node-name-map` reads, checked
# here with ibnetdiscover itself) names the switches; ibsm shows those
# names instead of the NodeDescriptions in its dumps (opensm-subnet.lst,
# opensm-lfts.dump), in `ibsmctl health` findings (a link below the
# expected width, named by the switch at its end) and in the metrics
# labels, while the SA keeps the real NodeDescription (saquery NodeRecord).
# A map with a line that is no `GUID name` keeps the daemon from starting
# (exit 2, FILE:LINE on standard error) and fails --check-config; a map
# that is not there is a warning (OpenSM starts without it).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/ibsm.sock

cat >"$T/net" <<'EOF'
Switch 8 "sw-a"
[1]	"H0001"[1] w=3 s=7
[2]	"H0003"[1] w=3 s=7
[3]	"sw-b"[3] w=3 s=7

Switch 8 "sw-b"
[1]	"H0002"[1] w=3 s=7
[2]	"H0004"[1] w=1 s=7
[3]	"sw-a"[3] w=3 s=7

Hca 1 "H0001"
[1]	"sw-a"[1] w=3 s=7

Hca 1 "H0002"
[1]	"sw-b"[1] w=3 s=7

Hca 1 "H0003"
[1]	"sw-a"[2] w=3 s=7

Hca 1 "H0004"
[1]	"sw-b"[2] w=1 s=7
EOF
fab_sim_start "$T/net" names || {
	fab_fail sim-start
	fab_summary
	exit 1
}

# the switches' node GUIDs, from ibnetdiscover before any SM ran
fab_run H0002 ibnetdiscover >"$T/topo" 2>"$T/topo.err"
GA=$(awk '/^Switch/ && /"sw-a"/ { gsub(/"S-/, "0x", $3); gsub(/"/, "", $3); print $3 }' "$T/topo")
GB=$(awk '/^Switch/ && /"sw-b"/ { gsub(/"S-/, "0x", $3); gsub(/"/, "", $3); print $3 }' "$T/topo")
if [ -z "$GA" ] || [ -z "$GB" ]; then
	fab_fail switch-guids "$(head -n 20 "$T/topo")"
	fab_summary
	exit 1
fi

cat >"$T/node-name-map" <<EOF
# node name map, infiniband-diags format
$GA "spine-alpha"
$GB   "leaf bravo"   # a comment after the name
EOF
# the referee: ibnetdiscover reads the same map
fab_run H0002 ibnetdiscover --node-name-map "$T/node-name-map" >"$T/topo.named" 2>&1
if grep -q '"spine-alpha"' "$T/topo.named" && grep -q '"leaf bravo"' "$T/topo.named"; then
	fab_pass ibnetdiscover-reads-map
else
	fab_fail ibnetdiscover-reads-map "$(grep '^Switch' "$T/topo.named")"
fi

cat >"$T/opensm.conf" <<EOF
node_name_map_name $T/node-name-map
sweep_interval 0
health_expected_width 4x
EOF
if "$IBSM" -F "$T/opensm.conf" --check-config >"$T/check.out" 2>&1; then
	fab_pass check-config-map
else
	fab_fail check-config-map "$(cat "$T/check.out")"
fi

sm_start H0001 "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK"
if ! sm_wait_up "$T/sm" 0 60 >/dev/null; then
	fab_fail subnet-up
	tail -n 20 "$T/sm.log" "$T/sm.out"
	fab_summary
	exit 1
fi
fab_pass subnet-up
fab_check log-says-map grep -q "node names: 2 from $T/node-name-map" "$T/sm.log"

# dumps: opensm-subnet.lst and opensm-lfts.dump name the switches by the map
for ((i = 0; i < 100; i++)); do
	[ -s "$T/sm.cache/opensm-subnet.lst" ] && break
	sleep 0.1
done
fab_check subnet-lst-names grep -q "{spine-alpha}" "$T/sm.cache/opensm-subnet.lst"
fab_check subnet-lst-names-b grep -q "{leaf bravo}" "$T/sm.cache/opensm-subnet.lst"
if [ -e "$T/sm.cache/opensm-lfts.dump" ]; then
	fab_check lfts-dump-names grep -q "('spine-alpha')" "$T/sm.cache/opensm-lfts.dump"
fi

# ibsmctl health: the 1X link to H0004 is named by the switch's map name
health_named() {
	# (exit status 1: the fabric has a finding)
	"$CTL" --socket "$SOCK" health >"$T/health" 2>&1
	grep -q 'peer "leaf bravo"' "$T/health"
}
if sm_wait_for 20 health_named; then
	fab_pass health-finding-named
else
	fab_fail health-finding-named "$(head -n 20 "$T/health")"
fi

# the SA keeps the NodeDescription the node has
# (one record: umad2sim has no RMPP, a whole table is cut to one MAD)
LB=$(fab_run H0002 ibnetdiscover -p 2>/dev/null | awk '$1 == "SW" && /\( .sw-b. -/ { print $2; exit }')
fab_run H0002 saquery NodeRecord "$LB" >"$T/nr" 2>&1
if grep -q "NodeDescription\.*sw-b" "$T/nr" && ! grep -q "leaf bravo" "$T/nr"; then
	fab_pass sa-keeps-node-description
else
	fab_fail sa-keeps-node-description "$(grep -i 'NodeDesc\|sw-' "$T/nr" | head -n 5)"
fi
if sm_stop; then
	fab_pass daemon-stops-clean
else
	fab_fail daemon-stops-clean "exit $?"
fi

# a bad map: not started, FILE:LINE on the terminal, --check-config fails
printf '%s "ok"\nsw-c 0x1\n' "$GA" >"$T/bad-map"
printf 'node_name_map_name %s\n' "$T/bad-map" >"$T/bad.conf"
"$IBSM" -F "$T/bad.conf" --check-config >"$T/bad.check" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "$T/bad-map:2: expected a node GUID" "$T/bad.check"; then
	fab_pass check-config-bad-map
else
	fab_fail check-config-bad-map "exit $rc: $(cat "$T/bad.check")"
fi
# a map that is not there: a warning, as OpenSM starts without it
printf 'node_name_map_name %s/no-such-map\n' "$T" >"$T/missing.conf"
"$IBSM" -F "$T/missing.conf" --check-config >"$T/missing.check" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "warning: .*no-such-map: does not exist" "$T/missing.check"; then
	fab_pass check-config-missing-map-warns
else
	fab_fail check-config-missing-map-warns "exit $rc: $(cat "$T/missing.check")"
fi
mkdir -p "$T/bad.cache"
FAB_TIMEOUT=30 fab_run H0003 "$IBSM" -o -F "$T/bad.conf" -f "$T/bad.log" \
	--cache-dir "$T/bad.cache" --dump-dir "$T/bad.cache" >"$T/bad.out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "$T/bad-map:2: expected a node GUID" "$T/bad.out"; then
	fab_pass daemon-refuses-bad-map
else
	fab_fail daemon-refuses-bad-map "exit $rc: $(cat "$T/bad.out")"
fi

fab_summary
