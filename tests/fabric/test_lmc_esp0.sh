#!/usr/bin/env bash
# tests/fabric/test_lmc_esp0.sh - lmc_esp0 with OpenSM 3.3.23 as referee:
# lmc 2 on a fabric of two switches with enhanced port 0 (ibsim's
# `enhanced port 0` header) and four CAs, once with lmc_esp0 FALSE and
# once TRUE, each file to `opensm` and to `ibsm` on a fresh ibsim.  Read
# back with infiniband-diags: `smpquery portinfo` of each switch's port 0
# (LID, LMC) and of a CA port (LMC), and the SA's PortInfoRecord for the
# switch's base LID and base LID + 1 (an enhanced port 0 with LMC 2 owns
# four LIDs; with lmc_esp0 FALSE only one, as a base port 0).  OpenSM's
# values and ibsm's must be equal, and be what the key says.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm

NET=$FAB_TMP/net
cat >"$NET" <<'EOF'
Switch 8 "sw-a" enhanced port 0
[1]	"H0001"[1]
[2]	"H0003"[1]
[3]	"sw-b"[3]

Switch 8 "sw-b" enhanced port 0
[1]	"H0002"[1]
[2]	"H0004"[1]
[3]	"sw-a"[3]

Hca 1 "H0001"
[1]	"sw-a"[1]

Hca 1 "H0002"
[1]	"sw-b"[1]

Hca 1 "H0003"
[1]	"sw-a"[2]

Hca 1 "H0004"
[1]	"sw-b"[2]
EOF

# collect OUT: "what value" lines, read from H0002.  The switches' LIDs
# themselves go to OUT.lids: OpenSM and ibsm hand out LIDs in different
# orders (ibsm: switches first), so what is compared is what the LMC
# decides: LMC, the alignment of the base LID, and which LIDs the SA
# takes for the switch.
collect() {
	local out=$1 path lid lmc end
	: >"$out"
	: >"$out.lids"
	for path in 0,1 0,1,3; do
		smp="$(fab_run H0002 smpquery -D portinfo "$path" 0 2>>"$out.err")"
		lid=$(sed -nE 's/^Lid:\.*([0-9]+)$/\1/p' <<<"$smp")
		lmc=$(sed -nE 's/^LMC:\.*([0-9]+)$/\1/p' <<<"$smp")
		echo "switch-$path port0-lid ${lid:-none}" >>"$out.lids"
		echo "switch-$path port0-lmc ${lmc:-none}" >>"$out"
		[ -n "$lid" ] || continue
		echo "switch-$path port0-lid-aligned $([ $((lid % (1 << ${lmc:-0}))) = 0 ] && echo yes || echo no)" >>"$out"
		# the SA's PortInfoRecord at the base LID and at the next one:
		# whose it is (EndPortLid: the switch's base LID) and its LMC
		fab_run H0002 saquery PIR "$lid/0" >"$out.pir-$path" 2>>"$out.err"
		end=$(sed -nE 's/^[[:space:]]*EndPortLid\.*([0-9]+)$/\1/p' "$out.pir-$path" | head -n 1)
		echo "switch-$path sa-base-is-switch $([ "$end" = "$lid" ] && echo yes || echo "no:$end")" >>"$out"
		lmc=$(sed -nE 's/^[[:space:]]*LMC:\.*([0-9]+)$/\1/p' "$out.pir-$path" | head -n 1)
		echo "switch-$path sa-pir-lmc ${lmc:-none}" >>"$out"
		fab_run H0002 saquery PIR "$((lid + 1))/0" >"$out.pir1-$path" 2>>"$out.err"
		end=$(sed -nE 's/^[[:space:]]*EndPortLid\.*([0-9]+)$/\1/p' "$out.pir1-$path" | head -n 1)
		echo "switch-$path sa-base+1-is-switch $([ "$end" = "$lid" ] && echo yes || echo no)" >>"$out"
	done
	lmc=$(fab_run H0002 smpquery -D portinfo 0 1 2>>"$out.err" |
		sed -nE 's/^LMC:\.*([0-9]+)$/\1/p')
	echo "ca-H0002 lmc ${lmc:-none}" >>"$out"
}

# run_sm WHICH CONF OUT: a fresh ibsim, WHICH (opensm or ibsm) with CONF
# until SUBNET UP, collect into OUT, stop.
run_sm() {
	local which=$1 conf=$2 out=$3 dir=$FAB_TMP/$3.d i pid
	fab_sim_start "$NET" "$out" || {
		fab_fail "$out-sim-start"
		return 1
	}
	mkdir -p "$dir"
	if [ "$which" = opensm ]; then
		fab_spawn H0001 env OSM_CACHE_DIR="$dir" OSM_TMP_DIR="$dir" \
			opensm -d2 -F "$conf" -f "$dir/opensm.log" >"$dir/out" 2>&1
		pid=$FAB_SPAWN_PID
		for ((i = 0; i < 300; i++)); do
			grep -q "SUBNET UP" "$dir/opensm.log" 2>/dev/null && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if grep -q "SUBNET UP" "$dir/opensm.log"; then
			fab_pass "$out-up"
		else
			fab_fail "$out-up" "$(tail -n 5 "$dir/opensm.log")"
		fi
		collect "$FAB_TMP/$out"
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "$FAB_TMP/pids/$pid"
	else
		if fab_ibsm_start H0001 "$dir" -F "$conf"; then
			fab_pass "$out-up"
		else
			fab_fail "$out-up"
		fi
		if grep -q "not implemented" "$dir/ibsm.out" "$dir/ibsm.log"; then
			fab_fail "$out-implements-keys" "$(grep "not implemented" "$dir/ibsm.out")"
		fi
		collect "$FAB_TMP/$out"
		if fab_ibsm_stop; then
			fab_pass "$out-stops-clean"
		else
			fab_fail "$out-stops-clean" "exit status $?"
		fi
	fi
}

# value OUT WHAT: one value collect() wrote
value() {
	awk -v w="$2" '$1 " " $2 == w { print $3; exit }' "$FAB_TMP/$1"
}

expect() {
	local name=$1 out=$2 what=$3 want=$4 got
	got=$(value "$out" "$what")
	if [ "$got" = "$want" ]; then
		fab_pass "$name"
	else
		fab_fail "$name" "$out: $what is '$got', expected '$want'"
	fi
}

for esp0 in FALSE TRUE; do
	conf=$FAB_TMP/opensm-$esp0.conf
	printf 'lmc 2\nlmc_esp0 %s\n' "$esp0" >"$conf"
	run_sm opensm "$conf" "osm-$esp0"
	run_sm ibsm "$conf" "ibsm-$esp0"

	echo "    lmc_esp0 $esp0: what                       OpenSM  ibsm"
	paste -d' ' "$FAB_TMP/osm-$esp0" "$FAB_TMP/ibsm-$esp0" |
		awk '{ printf "      %-36s %-7s %s%s\n", $1 " " $2, $3, $6,
			($3 == $6 ? "" : "   <- differs") }'
	paste -d' ' "$FAB_TMP/osm-$esp0.lids" "$FAB_TMP/ibsm-$esp0.lids" |
		awk '{ printf "      %-36s %-7s %s   (not compared)\n", $1 " " $2, $3, $6 }'
	if [ "$(wc -l <"$FAB_TMP/osm-$esp0")" -eq 11 ] &&
		cmp -s "$FAB_TMP/osm-$esp0" "$FAB_TMP/ibsm-$esp0"; then
		fab_pass "lmc_esp0-$esp0-same-as-opensm"
	else
		fab_fail "lmc_esp0-$esp0-same-as-opensm" "$(diff "$FAB_TMP/osm-$esp0" "$FAB_TMP/ibsm-$esp0" | head -n 10)"
	fi
	if [ "$esp0" = TRUE ]; then sw_lmc=2 base1=yes; else sw_lmc=0 base1=no; fi
	for path in 0,1 0,1,3; do
		expect "ibsm-$esp0-switch-$path-lmc" "ibsm-$esp0" "switch-$path port0-lmc" "$sw_lmc"
		expect "ibsm-$esp0-switch-$path-sa-lmc" "ibsm-$esp0" "switch-$path sa-pir-lmc" "$sw_lmc"
		expect "ibsm-$esp0-switch-$path-sa-base" "ibsm-$esp0" "switch-$path sa-base-is-switch" yes
		expect "ibsm-$esp0-switch-$path-sa-base+1" "ibsm-$esp0" "switch-$path sa-base+1-is-switch" "$base1"
	done
	for path in 0,1 0,1,3; do
		expect "ibsm-$esp0-switch-$path-aligned" "ibsm-$esp0" "switch-$path port0-lid-aligned" yes
	done
	expect "ibsm-$esp0-ca-lmc" "ibsm-$esp0" "ca-H0002 lmc" 2
done

fab_summary
