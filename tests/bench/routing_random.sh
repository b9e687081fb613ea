#!/usr/bin/env bash
# tests/bench/routing_random.sh - routing on random graphs (degree 8):
# ibsm's nue beside its dfsssp and OpenSM's dfsssp and nue, on the same
# fabrics in the same run.
#
#   offline   ibsm --route-only on the generated topology: the report's
#             own figures (max link load / ideal, channel dependency
#             cycles per layer, routing time, peak RSS) and user CPU time
#             (the machine is shared: wall time there is not the engine's)
#   ibsim     each SM as master on ibsim (OpenSM: opensm -R ENGINE
#             --nue_max_num_vls VLS, its defaults otherwise); LFTs read
#             with ibroute; all-to-all max link load / ideal by
#             tests/fabric/route_check.py load.  Per-VL cycles through the
#             diags need one saquery per source switch and destination
#             (320,000 on 200 switches): left to tests/fabric/test_nue.sh
#             on a small graph; here the report's verifier counts them.
#
# By hand, not from tests/run (a benchmark: no assertion).
#
#   IBSM=build/release/sm/ibsm tests/bench/routing_random.sh [OUT.md]
#   SIZES="200 400"  switches per graph (8 hosts each), SIM=0: offline only,
#   BIG=1: also the 1,000-switch, 15-hosts-per-switch graph (offline only),
#   VLS=8: VLs for nue (both SMs).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/../fabric/lib_sm.sh"

export ASAN_OPTIONS=${ASAN_OPTIONS:-"verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:suppressions=$FAB_TOP/tests/asan.supp"}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-"print_stacktrace=1:halt_on_error=1"}
OUT=${1:-/dev/stdout}
CHECK=(python3 "$FAB_LIB/route_check.py")
SIZES=${SIZES:-"200 400"}
VLS=${VLS:-8}
N=$FAB_TMP/nets
mkdir -p "$N"

# offline NET ENGINE: one table row from ibsm --route-only.
offline() {
	local net=$1 engine=$2 f=$FAB_TMP/offline.$$ user
	/usr/bin/time -f '%U' -o "$f.time" "$IBSM" --route-only "$net" \
		-R "$engine" --nue_max_num_vls "$VLS" >"$f" 2>"$f.err"
	user=$(tail -n 1 "$f.time")
	awk -v e="$engine" -v u="$user" -v n="$(basename "$net" .net)" '
		/^engine:/ { sub(/^engine: /, ""); eng = $0 }
		/max\/ideal/ { r = $NF }
		/^cdg:/ { c = $0; sub(/.*cycles per layer: /, "", c) }
		/^cost:/ { t = $3; m = $(NF - 1) " " $NF }
		END { printf "| %s | ibsm %s | %s | %s | %s s (user %s s), %s | %s |\n",
			n, e, r, c, t, u, m, substr(eng, 1, 90) }' "$f"
	rm -f "$f" "$f.err" "$f.time"
}

# sim NAME NET KIND ENGINE: max link load / ideal from ibroute's LFTs.
sim() {
	local name=$1 net=$2 kind=$3 engine=$4 d ratio="-" i pid
	d=$FAB_TMP/$name-$kind-$engine
	mkdir -p "$d"
	fab_sim_start "$net" "$name-$kind-$engine" >/dev/null 2>&1 || {
		echo "| $name | $kind $engine (ibsim) | ibsim did not start | | | |"
		return
	}
	if [ "$kind" = ibsm ]; then
		FAB_UP_TIMEOUT=600 fab_ibsm_start H0001 "$d/sm" -R "$engine" \
			--nue_max_num_vls "$VLS" >/dev/null 2>&1 && ratio=up
	else
		fab_spawn H0001 env OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" \
			opensm -d2 -R "$engine" --nue_max_num_vls "$VLS" \
			-f "$d/opensm.log" >/dev/null 2>&1
		pid=$FAB_SPAWN_PID
		for ((i = 0; i < 6000; i++)); do
			grep -q "SUBNET UP" "$d/opensm.log" 2>/dev/null &&
				{ ratio=up; break; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	if [ "$ratio" = up ] && sm_diags H0002 "$d" >/dev/null 2>&1; then
		ratio=$("${CHECK[@]}" load "$d/topo" "$d/lfts" 2>/dev/null |
			sed -n 's/.*ratio \([0-9.]*\)$/\1/p')
		"${CHECK[@]}" routes "$d/topo" "$d/lfts" >/dev/null 2>&1 ||
			ratio="$ratio (broken routes)"
	fi
	if [ "$kind" = ibsm ]; then
		fab_ibsm_stop >/dev/null 2>&1
	else
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "$FAB_TMP/pids/$pid"
	fi
	fab_sim_stop
	echo "| $name | $kind $engine (ibsim, ibroute) | ${ratio:--} | | | |"
}

{
	echo "| fabric | SM engine | max link load / ideal | cycles per VL | time, memory | engine summary |"
	echo "|---|---|---|---|---|---|"
	for s in $SIZES; do
		net=$N/random-$s.net
		"$FAB_TOPO/gen-topo" random --switches "$s" --degree 8 \
			--hosts-per-switch 8 --seed 1 -o "$net"
		offline "$net" nue
		offline "$net" dfsssp
		offline "$net" minhop
		[ "${SIM:-1}" = 0 ] && continue
		sim "random-$s" "$net" ibsm nue
		sim "random-$s" "$net" opensm dfsssp
		sim "random-$s" "$net" opensm nue
	done
	if [ "${BIG:-0}" = 1 ]; then
		net=$N/random-1000.net
		"$FAB_TOPO/gen-topo" random --switches 1000 --degree 8 \
			--hosts-per-switch 15 --seed 1 -o "$net"
		offline "$net" nue
		offline "$net" dfsssp
	fi
} >"$OUT"
