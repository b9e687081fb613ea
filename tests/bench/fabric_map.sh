#!/usr/bin/env bash
# tests/bench/fabric_map.sh - the fabric map of the big fabrics: how long
# `ibsmctl fabric` takes to make the page and headless chromium to show it.
#
# Two fabrics from gen-topo: the 3-level fat tree of 4,608 hosts and 768
# switches (tests/bench/discovery.sh's) and a random graph of 1,000
# switches of degree 4 with a host each (seed 7).  For each, RUNS times
# (median reported):
#   gen_s      ibsmctl fabric --topology FILE --html (loading, routing
#              with the auto engine for the load view, layout, writing);
#   gen_nr_s   the same with --routing none (layout and writing alone);
#   ready_ms   the page's own figure in chromium: navigation start to
#              the end of its script, its layout forced (data-ready-ms
#              on the body);
#   paint_ms   navigation start to the second animation frame after the
#              script (painted once; data-painted-ms; measured under
#              --virtual-time-budget, which runs the frames);
#   browser_s  wall time of chromium --dump-dom on the page minus that on
#              an empty page (what the page adds to a browser's start).
# Then a screenshot of each (1280x800; made smaller with pngquant when
# it is installed) into doc/img/ (-s) or the temp dir: the tree in the health view with three faulty cables (findings
# given with --findings: two critical, one warning), the random graph in
# the load view (its hot cables).
#
#	tests/bench/fabric_map.sh [-r RUNS] [-k] [-s]
#
#	-r RUNS	runs per figure (default 3)
#	-k	keep the temp dir
#	-s	save the screenshots as doc/img/fabric-map-ft3-4608.png and
#		doc/img/fabric-map-random-1000.png
#
# ibsmctl is $IBSMCTL, else build/release/tools/ibsmctl (built by
# tools/bootstrap.sh release when missing).  Installs chromium (as root)
# when it is missing.  The last lines are machine-readable:
#	bench-fabric-map fabric=ft3-4608 switches=768 cables=8192 gen_s=..
#	gen_nr_s=.. ready_ms=.. paint_ms=.. browser_s=.. html_bytes=..
set -u -o pipefail

# shellcheck source-path=SCRIPTDIR source=../fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"

runs=3
save=0
while getopts "r:ksh" opt; do
	case $opt in
	r) runs=$OPTARG ;;
	k) FAB_KEEP=1 ;;
	s) save=1 ;;
	h)
		sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done

CTL=${IBSMCTL:-$FAB_TOP/build/release/tools/ibsmctl}
if [ -z "${IBSMCTL:-}" ] && [ ! -x "$CTL" ]; then
	"$FAB_TOP/tools/bootstrap.sh" release >/dev/null || exit 1
fi
[ -x "$CTL" ] || { echo "bench: $CTL is not built" >&2; exit 1; }
if ldd "$CTL" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "bench: warning: $CTL is a sanitizer build; its times mean little" >&2
fi
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] && [ "$(id -u)" -eq 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends chromium >/dev/null 2>&1
fi
[ -x "$CHROMIUM" ] || { echo "bench: chromium missing" >&2; exit 1; }
T=$FAB_TMP
IMG=$T
[ "$save" = 1 ] && IMG=$FAB_TOP/doc/img && mkdir -p "$IMG"

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# chrome ARGS...: headless chromium with a profile of its own.
chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$T/chrome.$RANDOM" "$@"
}

# dom_wall PAGE: seconds chromium --dump-dom takes on PAGE.
dom_wall() {
	local s e
	s=$(now)
	chrome --window-size=1280,800 --dump-dom "file://$1" >/dev/null 2>&1
	e=$(now)
	awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }'
}

# faults SVG OUT: findings (health --json lines) for three of the map's
# cables, picked by their place in the drawing: two critical, one warning.
faults() {
	python3 - "$1" >"$2" <<'EOF'
import re, sys
links = re.findall(r'data-a="(0x[0-9a-f]+)/(\d+)" data-b="(0x[0-9a-f]+)/(\d+)"',
                   open(sys.argv[1]).read())
for i, (sev, text) in enumerate((("critical", "link runs 1xEDR, the reference has 4xEDR"),
                                 ("critical", "SymbolErrorCounter 4000 per hour"),
                                 ("warning", "PortXmitWait 12% of the time"))):
    a, pa, b, pb = links[(i + 1) * len(links) // 4]
    kind = ("link_below_reference", "error_rate", "congestion")[i]
    print('{"severity": "%s", "kind": "%s", "node_guid": "%s", "port": %s, '
          '"peer_guid": "%s", "peer_port": %s, "text": "%s"}'
          % (sev, kind, a, pa, b, pb, text))
EOF
}

printf '<!DOCTYPE html><html><body>x</body></html>\n' >"$T/empty.html"
for ((i = 0; i < runs; i++)); do dom_wall "$T/empty.html"; done | median >"$T/empty.s"
echo "chromium: $("$CHROMIUM" --version 2>/dev/null | head -n 1); empty page" \
	"$(cat "$T/empty.s") s"

G=$FAB_TOPO/gen-topo
"$G" fat3 --pods 16 --leaves-per-pod 16 --hosts-per-leaf 18 \
	--spines-per-pod 16 --cores 256 -o "$T/ft3-4608.net" >/dev/null || exit 1
"$G" random --switches 1000 --degree 4 --hosts-per-switch 1 --seed 7 \
	-o "$T/random-1000.net" >/dev/null || exit 1

results=()
for name in ft3-4608 random-1000; do
	net=$T/$name.net page=$T/$name.html
	gen=() gen_nr=() paint=() ready=() wall=()
	for ((i = 0; i < runs; i++)); do
		s=$(now)
		"$CTL" fabric --topology "$net" --routing none --svg "$T/$name.svg" || exit 1
		e=$(now)
		gen_nr+=("$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", b - a }')")
		s=$(now)
		"$CTL" fabric --topology "$net" --html "$page" || exit 1
		e=$(now)
		gen+=("$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", b - a }')")
		# (a busy machine may make chromium give up: up to 3 tries)
		p=
		for ((try = 0; try < 3 && ${#p} == 0; try++)); do
			chrome --window-size=1280,800 --virtual-time-budget=10000 \
				--dump-dom "file://$page" >"$T/$name.dom" 2>/dev/null
			p=$(grep -o 'data-painted-ms="[0-9]*"' "$T/$name.dom" |
				grep -o '[0-9]*')
		done
		[ -n "$p" ] || { echo "bench: $name: the page did not paint" >&2; exit 1; }
		paint+=("$p")
		ready+=("$(grep -o 'data-ready-ms="[0-9]*"' "$T/$name.dom" | grep -o '[0-9]*')")
		w=$(dom_wall "$page")
		wall+=("$(awk -v a="$(cat "$T/empty.s")" -v b="$w" 'BEGIN { printf "%.3f", b - a }')")
	done
	sw=$(grep -o 'data-switches="[0-9]*"' "$page" | grep -o '[0-9]*')
	cables=$(grep -o 'data-links="[0-9]*"' "$page" | grep -o '[0-9]*')
	line="bench-fabric-map fabric=$name switches=$sw cables=$cables"
	line+=" gen_s=$(printf '%s\n' "${gen[@]}" | median)"
	line+=" gen_nr_s=$(printf '%s\n' "${gen_nr[@]}" | median)"
	line+=" ready_ms=$(printf '%s\n' "${ready[@]}" | median)"
	line+=" paint_ms=$(printf '%s\n' "${paint[@]}" | median)"
	line+=" browser_s=$(printf '%s\n' "${wall[@]}" | median)"
	line+=" html_bytes=$(stat -c %s "$page")"
	results+=("$line")
	echo "$name: page $(stat -c %s "$page") bytes; gen ${gen[*]} s;" \
		"without routing ${gen_nr[*]} s; ready at ${ready[*]} ms;" \
		"painted at ${paint[*]} ms;" \
		"browser +${wall[*]} s"
done

# The screenshots: the tree with faults (health view), the random graph
# by load.
faults "$T/ft3-4608.svg" "$T/ft3-faults.json"
"$CTL" fabric --topology "$T/ft3-4608.net" --findings "$T/ft3-faults.json" \
	--title "ibsm fabric map: 3-level fat tree, 4,608 hosts" \
	--html "$T/ft3-faults.html" || exit 1
"$CTL" fabric --topology "$T/random-1000.net" --load \
	--title "ibsm fabric map: random graph, 1,000 switches" \
	--html "$T/random-load.html" || exit 1
chrome --hide-scrollbars --window-size=1280,800 \
	--screenshot="$IMG/fabric-map-ft3-4608.png" "file://$T/ft3-faults.html" \
	>/dev/null 2>&1
chrome --hide-scrollbars --window-size=1280,800 \
	--screenshot="$IMG/fabric-map-random-1000.png" \
	"file://$T/random-load.html" >/dev/null 2>&1
# smaller files when pngquant is there (a palette is plenty for a map)
if command -v pngquant >/dev/null; then
	for f in "$IMG"/fabric-map-ft3-4608.png "$IMG"/fabric-map-random-1000.png; do
		pngquant --quality=60-90 --speed 1 --force --output "$f.q" "$f" &&
			mv "$f.q" "$f"
	done
fi
echo "screenshots: $IMG/fabric-map-ft3-4608.png $IMG/fabric-map-random-1000.png"
printf '%s\n' "${results[@]}"
