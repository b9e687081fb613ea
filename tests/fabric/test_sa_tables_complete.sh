#!/usr/bin/env bash
# tests/fabric/test_sa_tables_complete.sh - whole SA tables through RMPP.
#
# ibsm runs as master on the 1,152-host fat tree; `ibsmctl --json query
# nodes|ports|links|switches|lfts` fetches each table with its own RMPP
# receiver (umad2sim has none), so the answers run to hundreds of
# segments.  The record counts must be those of the fabric as the diags
# see it, independently of ibsm:
#
#   nodes     one NodeRecord per end port: each switch, each CA port
#             (ibnetdiscover)
#   ports     one PortInfoRecord per port: switch ports 0..N, CA ports
#   links     every cabled port, each link seen from both ends
#   switches  one SwitchInfoRecord per switch
#   lfts      sum over switches of ceil((LinearFDBTop + 1) / 64), with
#             LinearFDBTop read from each switch (smpquery switchinfo)
#
# and every record must be distinct (a repeated segment would keep the
# count and lose a record) -- every record that umad2sim left intact.
# It hands over its received MADs from a buffer too short for them (see
# tests/asan.supp): here SA data bytes 168-199 of every 200-byte segment
# (MAD bytes 224-255) arrive as zeros or junk, in every full segment of
# every table, whatever the record type; the sender (mad/rmpp.c) fills
# them.  Records overlapping those bytes are not looked at (their count
# still is).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
NET=${SA_TABLES_NET:-$FAB_TOPO/fat2-1152.net}

fab_sim_start "$NET" tables || exit 1
if ! fab_ibsm_start H0001 "$FAB_TMP/sm"; then
	fab_fail tables-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass tables-ibsm-up

# The fabric as ibnetdiscover sees it.
fab_run H0002 ibnetdiscover >"$FAB_TMP/topo" 2>/dev/null
fab_run H0002 ibnetdiscover -p >"$FAB_TMP/ports" 2>/dev/null
read -r n_sw sw_ports n_ca_ports n_cabled < <(awk '
	/^Switch[ \t]/ { sw++; swp += $2 + 1; node = "sw"; next }
	/^(Ca|Rt)[ \t]/ { node = "ca"; next }
	/^\[[0-9]+\]/ { cabled++; if (node == "ca") cap++ }
	END { print sw + 0, swp + 0, cap + 0, cabled + 0 }' "$FAB_TMP/topo")
# CA ports with PortInfo that no cable reaches are also listed by -p.
n_ca_ports_p=$(awk '$1 == "CA" { n++ } END { print n + 0 }' "$FAB_TMP/ports")
[ "$n_ca_ports_p" -gt "$n_ca_ports" ] && n_ca_ports=$n_ca_ports_p
if [ "$n_sw" -gt 0 ] && [ "$n_ca_ports" -gt 0 ]; then
	fab_pass tables-ibnetdiscover
else
	fab_fail tables-ibnetdiscover "switches $n_sw, CA ports $n_ca_ports"
fi

# LFT blocks: ceil((LinearFDBTop + 1) / 64) per switch, from the switches.
lft_blocks=0
while read -r lid; do
	top=$(fab_run H0002 smpquery switchinfo "$lid" 2>/dev/null |
		sed -n 's/^LinearFdbTop:\.*//p')
	[ -n "$top" ] || { lft_blocks=-1; break; }
	lft_blocks=$((lft_blocks + (top + 1 + 63) / 64))
done < <(awk '$1 == "SW" && !seen[$2]++ { print $2 }' "$FAB_TMP/ports")

declare -A want=(
	[nodes]=$((n_sw + n_ca_ports))
	[ports]=$((sw_ports + n_ca_ports))
	[links]=$n_cabled
	[switches]=$n_sw
	[lfts]=$lft_blocks
)

# count_records FILE BYTES: records in an ibsmctl --json table of BYTES
# payload bytes; the records that do not overlap umad2sim's junk bytes
# (168-199 of each 200-byte segment), and how many of those are distinct.
count_records() {
	python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
stride = int(sys.argv[2]) // max(len(rows), 1)
def clean(i):
    a, b = i * stride, (i + 1) * stride
    return all(b <= k * 200 + 168 or a >= k * 200 + 200
               for k in range(a // 200, (b - 1) // 200 + 1))
ok = [json.dumps(r, sort_keys=True) for i, r in enumerate(rows) if clean(i)]
print(len(rows), len(ok), len(set(ok)))
' "$1" "$2"
}

for kind in nodes ports links switches lfts; do
	out=$FAB_TMP/$kind.json
	start=$(date +%s.%N)
	if ! fab_run H0003 "$CTL" --json -v query "$kind" >"$out" 2>"$out.err"; then
		fab_fail "tables-$kind" "ibsmctl failed: $(tail -n 2 "$out.err")"
		continue
	fi
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
	bytes=$(sed -n 's/.*segment(s) of [0-9]*, \([0-9]*\) bytes.*/\1/p' "$out.err")
	read -r got clean distinct < <(count_records "$out" "${bytes:-0}")
	if [ "$got" = "${want[$kind]}" ] && [ "${clean:-0}" -gt 0 ] &&
		[ "$distinct" = "$clean" ]; then
		fab_pass "tables-$kind ($got records, $clean intact, ${secs}s)"
	else
		fab_fail "tables-$kind" "got $got records ($clean intact, $distinct distinct), fabric has ${want[$kind]}"
	fi
	grep "segment(s)" "$out.err" | sed 's/^/    /'
done

if fab_ibsm_stop; then
	fab_pass tables-ibsm-clean-exit
else
	fab_fail tables-ibsm-clean-exit "exit status or sanitizer report"
fi
fab_summary
