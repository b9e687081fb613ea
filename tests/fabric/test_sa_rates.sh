#!/usr/bin/env bash
# tests/fabric/test_sa_rates.sh - use_original_extended_sa_rates_only,
# with OpenSM 3.3.23 as referee: on a fabric of 12x HDR links (600 Gb/s,
# rate code 22, which older clients do not know), the PathRecord between
# two hosts (saquery) carries code 22 by default and code 18 (300 Gb/s,
# 12x EDR: the fastest of the original codes) with the key TRUE, under
# OpenSM and under ibsm; a multicast group a host creates takes its
# port's rate the same way (mc_join's answer).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm
T=$FAB_TMP
BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
MJ=${MC_JOIN:-$BUILD/tests/fabric/mc_join}
NET=$T/hdr.net
cat >"$NET" <<'NET'
Switch 8 "sw-a"
[1]	"H0001"[1]	# lid 0 12xHDR
[2]	"H0002"[1]	# lid 0 12xHDR
[3]	"H0003"[1]	# lid 0 12xHDR

Hca 1 "H0001"
[1]	"sw-a"[1]	# lid 0 12xHDR

Hca 1 "H0002"
[1]	"sw-a"[2]	# lid 0 12xHDR

Hca 1 "H0003"
[1]	"sw-a"[3]	# lid 0 12xHDR
NET
printf 'use_original_extended_sa_rates_only TRUE\n' >"$T/orig.conf"

# observe NAME: the PathRecord rate from H0002 to H0003 and the rate of
# a group H0002 creates, "path CODE group CODE", into T/NAME.seen
observe() {
	local l2 l3 path group
	l2=$(fab_run H0002 smpquery -D portinfo 0 1 | sed -n 's/^Lid:\.*//p')
	l3=$(fab_run H0003 smpquery -D portinfo 0 1 | sed -n 's/^Lid:\.*//p')
	path=$(fab_run H0002 saquery -p --src-to-dst "$l2:$l3" 2>/dev/null |
		sed -nE 's/^[[:space:]]*rate\.+0x(..)$/\1/p' | head -n 1)
	group=$(fab_run H0002 "$MJ" -m ff12:e01b::d2 -c join 2>/dev/null |
		sed -nE 's/.* rate=[0-9]+:([0-9]+) .*/\1/p')
	# the path's rate without its selector bits (0x80: exactly)
	echo "path $((0x${path:-0} & 0x3f)) group ${group:-none}" >"$T/$1.seen"
}

run() {
	local name=$1 sm=$2
	shift 2
	fab_sim_start "$NET" "$name" || return 1
	if [ "$sm" = opensm ]; then
		fab_opensm_start H0001 "$T/$name" "$@"
		observe "$name"
		fab_opensm_stop
	else
		fab_ibsm_start H0001 "$T/$name" "$@" || return 1
		observe "$name"
		fab_ibsm_stop
	fi
}

run osm-orig opensm -F "$T/orig.conf"
run osm-new opensm
run ibsm-orig ibsm -F "$T/orig.conf"
run ibsm-new ibsm
for n in osm-new ibsm-new osm-orig ibsm-orig; do
	echo "    $n: $(cat "$T/$n.seen" 2>/dev/null)"
done
seen() { cat "$T/$1.seen" 2>/dev/null; }
fab_check "by default the path carries code 22 (600 Gb/s) under ibsm" \
	test "$(seen ibsm-new)" = "path 22 group 22"
fab_check "... as under OpenSM" test "$(seen osm-new)" = "$(seen ibsm-new)"
fab_check "with the key, code 18 (300 Gb/s) under ibsm" \
	test "$(seen ibsm-orig)" = "path 18 group 18"
fab_check "... as under OpenSM" test "$(seen osm-orig)" = "$(seen ibsm-orig)"
fab_summary
