#!/usr/bin/env bash
# tests/fabric/test_sa_paths.sh - every PathRecord against the LFTs.
#
# ibsm runs as master on a 128-host fat tree (fat2-128.net).  `ibsmctl
# --json query paths`, run on every host, fetches every PathRecord from
# that host's port in one GetTable through RMPP; the diags read the fabric independently
# (ibnetdiscover -p, ibroute of every switch: lib_sm.sh sm_diags), and
# path_check.py checks that every ordered pair of CA ports has exactly
# one record, with the ports' LIDs, and that following the switches' LFTs
# from the source toward DLID reaches the destination.  HopLimit must be
# 0, what OpenSM 3.3.23 puts in every path that crosses no router
# (test_sa_compare.sh compares whole PathRecords with OpenSM's).
#
# umad2sim damages the last 32 bytes of every RMPP segment, so some
# GetTable records cannot be read whole; a PathRecord Get for every
# ordered pair of CA ports (sa_pathbench -p from one host: one MAD each,
# never damaged) checks every pair, and the intact GetTable records must
# agree with those answers.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
PATHGET=${SA_PATHBENCH:-$(dirname "$IBSM")/../tests/bench/sa_pathbench}
NET=${SA_PATHS_NET:-$FAB_TOPO/fat2-128.net}
NHOSTS=$(grep -c '^Hca' "$NET")

fab_sim_start "$NET" paths || exit 1
if ! fab_ibsm_start H0001 "$FAB_TMP/sm"; then
	fab_fail paths-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass paths-ibsm-up

if sm_diags H0002 "$FAB_TMP/diags"; then
	fab_pass paths-diags
else
	fab_fail paths-diags "$(head -n 3 "$FAB_TMP/diags/errors")"
fi

# Every path from each host: ibsmctl asks for the paths of its own port.
start=$(date +%s.%N)
files=()
failed=0
for ((h = 1; h <= NHOSTS; h++)); do
	host=$(printf 'H%04d' "$h")
	out=$FAB_TMP/paths-$host.json
	if ! fab_run "$host" "$CTL" --json -v query paths >"$out" 2>"$out.err"; then
		failed=$((failed + 1))
		continue
	fi
	sed -n 's/.*segment(s) of [0-9]*, \([0-9]*\) bytes.*/\1/p' "$out.err" \
		>"$out.bytes"
	files+=("$out")
done
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
if [ "$failed" -eq 0 ]; then
	fab_pass "paths-gettable-$NHOSTS-hosts (${secs}s)"
else
	fab_fail "paths-gettable-$NHOSTS-hosts" "$failed ibsmctl runs failed"
fi

# Every ordered pair once more, each with its own Get.
python3 "$FAB_LIB/path_check.py" pairs "$FAB_TMP/diags/topo" >"$FAB_TMP/pairs"
npairs=$(wc -l <"$FAB_TMP/pairs")
if fab_run H0002 "$PATHGET" -p "$FAB_TMP/pairs" -w 32 >"$FAB_TMP/gets.json" \
	2>"$FAB_TMP/gets.err" && [ "$npairs" -eq $((NHOSTS * (NHOSTS - 1))) ]; then
	fab_pass "paths-get-$npairs-pairs"
else
	fab_fail "paths-get-$npairs-pairs" "$(head -n 3 "$FAB_TMP/gets.err")"
fi

fab_check paths-vs-lfts python3 "$FAB_LIB/path_check.py" --hop-limit 0 \
	--gets "$FAB_TMP/gets.json" \
	"$FAB_TMP/diags/topo" "$FAB_TMP/diags/lfts" "${files[@]}"
python3 "$FAB_LIB/path_check.py" --gets "$FAB_TMP/gets.json" \
	"$FAB_TMP/diags/topo" "$FAB_TMP/diags/lfts" "${files[@]}" 2>&1 |
	grep -E 'records|pairs checked' | sed 's/^/    /'

# The benchmark's direct client (sa_pathbench -d: ibsim's socket, no
# umad2sim) must get the same answers as the umad client above.
head -n 2000 "$FAB_TMP/pairs" >"$FAB_TMP/pairs-direct"
if fab_run H0003 "$PATHGET" -d -p "$FAB_TMP/pairs-direct" -w 32 \
	>"$FAB_TMP/direct.json" 2>"$FAB_TMP/direct.err"; then
	fab_check paths-direct-client-same-answers python3 -c '
import json, sys
umad = json.load(open(sys.argv[1]))
direct = json.load(open(sys.argv[2]))
n = len(direct)
bad = [i for i in range(n) if direct[i] != umad[i]]
print(f"{n} pairs, {len(bad)} differ" + (f": {direct[bad[0]]} vs {umad[bad[0]]}" if bad else ""))
sys.exit(1 if bad or n != 2000 else 0)' "$FAB_TMP/gets.json" "$FAB_TMP/direct.json"
else
	fab_fail paths-direct-client-same-answers "$(head -n 3 "$FAB_TMP/direct.err")"
fi

if fab_ibsm_stop; then
	fab_pass paths-ibsm-clean-exit
else
	fab_fail paths-ibsm-clean-exit "exit status or sanitizer report"
fi
fab_summary
