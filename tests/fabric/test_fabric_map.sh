#!/usr/bin/env bash
# tests/fabric/test_fabric_map.sh - the fabric map (ibsmctl fabric --html)
# in a real browser: Debian's chromium, headless, opens each page from
# file:// and map_check.py checks what it left (--dump-dom, console on
# stderr): no console message, one element per switch and per cable
# between switches, and every cable in the colour of its findings.
#
#   1. offline, fat2-small with known faults: one cable running 1x where
#      the reference (fat2-small.net itself) has 4x EDR, and an error-rate
#      finding (counters raised) given as `ibsmctl health --json` lines;
#      both views (health, and load via #load); screenshot;
#   2. offline, a 3D torus (grid layout) and a random graph (force
#      layout): counts, no console message; screenshots;
#   3. live: ibsm on ibsim with the faulty fat2 and, as its reference,
#      what ibnetdiscover saw of the good one, the performance manager on
#      and 500 symbol errors set on leaf-02[6] (PerformanceSet);
#      `ibsmctl fabric` reads the subnet through the SA and the findings
#      and loads from the control socket; the map's colours follow
#      `ibsmctl health --json`: the 1x cable a warning, leaf-02[6]'s
#      cable critical, every other ok.
#
# Screenshots go to $FAB_MAP_OUT (default IBSM_BUILD/fabric-map).
# chromium comes with the packages tools/bootstrap.sh installs.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHECK=$FAB_LIB/map_check.py
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
OUT=${FAB_MAP_OUT:-${IBSM_BUILD:-$FAB_TOP/build}/fabric-map}
mkdir -p "$T/sock" "$OUT"

fab_check chromium-installed test -x "$CHROMIUM"

# browse URL BASE [PNG]: the DOM after the page's script ran into
# BASE.dom, chromium's log (console messages) into BASE.log, and with PNG
# a screenshot (1600x1000) in the same run.  A profile of its own per
# run, so tests side by side do not share one.
browse() {
	local shot=()
	[ $# -gt 2 ] && shot=(--hide-scrollbars --window-size=1600,1000 "--screenshot=$3")
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$T/chrome.$RANDOM" --enable-logging=stderr \
		--v=0 --virtual-time-budget=2000 "${shot[@]}" --dump-dom "$1" \
		>"$2.dom" 2>"$2.log" && [ -s "$2.dom" ] &&
		{ [ $# -lt 3 ] || [ -s "$3" ]; }
}

# guid_of SVG NAME: the node GUID of the switch called NAME on the map.
guid_of() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
svg = open(sys.argv[1]).read()
m = re.search(r'data-guid="(0x[0-9a-f]+)"[^>]*><title>' + re.escape(sys.argv[2]) + r'\n', svg)
print(m.group(1) if m else "")
EOF
}

# The faulty fat2: leaf-01[5] - spine-01[1] enables 1x only on both ends.
BAD=$T/fat2-bad.net
sed -e '/^Switch 36 "leaf-01"/,/^$/ s/^\[5\]\t"spine-01"\[1\].*/[5]\t"spine-01"[1] w=1/' \
	-e '/^Switch 36 "spine-01"/,/^$/ s/^\[1\]\t"leaf-01"\[5\].*/[1]\t"leaf-01"[5] w=1/' \
	"$FAB_TOPO/fat2-small.net" >"$BAD"
fab_check bad-copy-made test "$(grep -c 'w=1' "$BAD")" -eq 2

# 1. Offline, known faults.
"$CTL" fabric --topology "$BAD" --svg "$T/pre.svg" >"$T/pre.out" 2>&1
L1=$(guid_of "$T/pre.svg" leaf-01) L2=$(guid_of "$T/pre.svg" leaf-02)
S2=$(guid_of "$T/pre.svg" spine-02)
fab_check svg-names-switches test -n "$L1" -a -n "$L2" -a -n "$S2"
fab_check svg-well-formed python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
sys.exit(not (r.tag == ns + "svg" and
              len(r.findall(".//" + ns + "circle[@class=\"sw\"]")) == 6))' "$T/pre.svg"
# the bare SVG in the browser too
fab_check offline-svg-browser browse "file://$T/pre.svg" "$T/pre"
fab_check offline-svg-dom python3 "$CHECK" "$T/pre.dom" "$T/pre.log" \
	--svg-only --switches 6 --links 8
cat >"$T/findings.json" <<EOF
{"severity": "critical", "kind": "error_rate", "node_guid": "$L2", "node_desc": "leaf-02", "port": 6, "lid": 0, "peer_guid": "$S2", "peer_desc": "spine-02", "peer_port": 2, "peer_lid": 0, "detail": 0, "value": 5000, "limit": 100, "text": "SymbolErrorCounter 5000 per hour (threshold 100)"}
EOF
# a findings file with a bad line: refused, naming the line
printf '%s\n' '{"healthy": false, "findings": [' \
	'{"severity": "fatal", "kind": "error_rate", "node_guid": "0x1"}' \
	']}' >"$T/bad.json"
"$CTL" fabric --topology "$BAD" --findings "$T/bad.json" --html "$T/x.html" \
	2>"$T/bad.err"
fab_check bad-findings-refused test $? -eq 1 -a ! -e "$T/x.html"
fab_check bad-findings-names-line grep -q "bad.json:2: unknown severity" \
	"$T/bad.err"
fab_check offline-html "$CTL" fabric --topology "$BAD" --reference \
	"$FAB_TOPO/fat2-small.net" --findings "$T/findings.json" \
	--html "$T/fat2.html"
grep -q 'link_below_reference' "$T/fat2.html"
fab_check offline-reference-finding test $? -eq 0
fab_check offline-fat2-browser browse "file://$T/fat2.html" "$T/fat2" \
	"$OUT/fat2-faults.png"
fab_check offline-fat2-colours python3 "$CHECK" "$T/fat2.dom" "$T/fat2.log" \
	--switches 6 --links 8 --expect "$L1/5=warning" --expect "$L2/6=critical"
fab_check offline-fat2-load-view browse "file://$T/fat2.html#load" "$T/fat2l"
fab_check offline-fat2-load-colours python3 "$CHECK" "$T/fat2l.dom" \
	"$T/fat2l.log" --switches 6 --links 8 --view load \
	--expect "$L1/5=warning" --expect "$L2/6=critical"

# 2. Offline, a grid and a force layout.
for net in torus-3x3x3:27:81 random-24:24:48; do
	IFS=: read -r name sw links <<<"$net"
	"$CTL" fabric --topology "$FAB_TOPO/$name.net" --html "$T/$name.html"
	fab_check "offline-$name-html" test $? -eq 0
	fab_check "offline-$name-browser" browse "file://$T/$name.html" "$T/$name" \
		"$OUT/$name.png"
	fab_check "offline-$name-dom" python3 "$CHECK" "$T/$name.dom" \
		"$T/$name.log" --switches "$sw" --links "$links"
done

# 3. Live.  The reference: what ibnetdiscover sees of the good fabric.
fab_sim_start "$FAB_TOPO/fat2-small.net" mapref || {
	fab_fail sim-start
	fab_summary
	exit 1
}
fab_check reference-discovered fab_ibnetdiscover H0002 "$T/ref.topo"
fab_sim_stop
cat >"$T/opensm.conf" <<EOF
sweep_interval 0
topology_ref $T/ref.topo
perfmgr TRUE
perfmgr_sweep_time_s 1
EOF
sm_sim_and_sm_up "$BAD" map "$T/sm" -F "$T/opensm.conf" --control-socket "$SOCK"
# counters raised on leaf-02[6] (to spine-02): an error-rate finding
fab_check counters-raised fab_cmd \
	'PerformanceSet "leaf-02"[6] PortCounters.SymbolErrorCounter=500'
# the reference finding of the 1x cable and the error rate, as ibsm
# reports them
ok=1
for ((i = 0; i < 100; i++)); do
	"$CTL" --socket "$SOCK" health --json >"$T/health.json" 2>/dev/null
	grep -q '"link_below_reference"' "$T/health.json" &&
		grep -q '"error_rate".*"node_desc": "leaf-02", "port": 6' \
			"$T/health.json" && { ok=0; break; }
	sleep 0.2
done
fab_check live-findings-reported test "$ok" -eq 0
fab_check live-html fab_run H0002 "$CTL" fabric --socket "$SOCK" \
	--html "$T/live.html"
fab_check live-browser browse "file://$T/live.html" "$T/live" \
	"$OUT/fat2-live.png"
fab_check live-colours python3 "$CHECK" "$T/live.dom" "$T/live.log" \
	--switches 6 --links 8 --findings "$T/health.json" \
	--expect "0x0000000000200000/5=warning" \
	--expect "0x0000000000200001/6=critical"
# the cable's tooltip: its counters, the finding once with its text (the
# daemon's JSON objects span lines)
python3 - "$T/live.dom" <<'EOF'
import re, sys
d = open(sys.argv[1]).read()
t = [m.group(1) for m in re.finditer(r'<path class="link h2[^>]*><title>(.*?)</title>', d, re.S)]
sys.exit(not (len(t) == 1 and "SymbolErrorCounter 500," in t[0] and
              t[0].count("critical error_rate") == 1 and
              "per hour (threshold" in t[0]))
EOF
fab_check live-tooltip-counters-and-finding test $? -eq 0
# the loads came through (routes loads): every cable of the tree carries
# routes, all-to-all
fab_check live-loads python3 -c 'import re, sys
v = [float(x) for x in re.findall(r"data-load=\"([0-9.]+)\"", open(sys.argv[1]).read())]
sys.exit(not (len(v) == 8 and min(v) > 0))' "$T/live.dom"
fab_check live-load-view browse "file://$T/live.html#load" "$T/livel"
fab_check live-load-colours python3 "$CHECK" "$T/livel.dom" "$T/livel.log" \
	--switches 6 --links 8 --view load --findings "$T/health.json"
sm_stop
fab_sim_stop
fab_summary
