#!/usr/bin/env bash
# tests/fabric/test_lid_cap.sh - LIDs never go past what the switches can
# forward.  ibsim's switches report LinearFDBCap 30,720 (LIDs 0-30719).
# A 300-host fat tree with LMC 7 would need 38,400 host LIDs: no LID may
# end up past the cap (such a host is unreachable), and the SM says what
# it did instead (ERR 0212: every port gets LMC 6).  The referees: the
# cap as smpquery reads it from a switch, every port's LID and LMC as
# smpquery reads them from the port, and ibroute's table of a leaf.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T=$FAB_TMP
NET=$T/tree-300.net
python3 "$FAB_TOPO/gen-topo" fat2 --leaves 10 --spines 2 \
	--hosts-per-leaf 30 -o "$NET" || exit 1
fab_sim_start "$NET" lidcap || exit 1

fab_run H0001 smpquery -D switchinfo 0,1 >"$T/si.txt" 2>&1
cap=$(sed -n 's/^LinearFdbCap:\.*\([0-9]*\)$/\1/p' "$T/si.txt")
fab_check cap-read test -n "$cap"
cap=${cap:-30720}

fab_ibsm H0001 "$T/ibsm.net" -l 7
fab_check sm-exit0 test $? -eq 0
fab_check subnet-up grep -q "SUBNET UP" "$T/ibsm.net.log"
fab_check says-lmc-reduced grep -q "ERR 0212: LMC 7 does not fit below LID $cap (LinearFDBCap of switch 0x" "$T/ibsm.net.log"
fab_check names-300-ports grep -q "ERR 0212: .*: 300 ports get LMC 6 (64 LIDs each): 0x" "$T/ibsm.net.log"
fab_check no-port-without test "$(grep -c "ERR 0209" "$T/ibsm.net.log")" -eq 0

# Every host port's LID range as the port itself says, one smpquery per
# host (LID-routed from H0001 through the new tables: reaching the LID
# at all is part of the check).
fab_run H0001 ibnetdiscover -p >"$T/disc.txt" 2>"$T/disc.err"
# CA lines of ibnetdiscover -p: "CA  <lid> <port> 0x<guid> ..."
awk '$1 == "CA" { print $2 }' "$T/disc.txt" | sort -un >"$T/ca-lids.txt"
fab_check disc-300-cas test "$(wc -l <"$T/ca-lids.txt")" -eq 300
bad=0
n=0
while read -r lid; do
	n=$((n + 1))
	# every tenth host in full: its own PortInfo, LID-routed
	[ $((n % 10)) -eq 1 ] || continue
	fab_run H0001 smpquery portinfo "$lid" 1 >"$T/pi.txt" 2>&1 || {
		bad=$((bad + 1))
		continue
	}
	plid=$(sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p' "$T/pi.txt")
	lmc=$(sed -n 's/^LMC:\.*\([0-9]*\)$/\1/p' "$T/pi.txt")
	if [ "$plid" != "$lid" ] || [ "$lmc" != 6 ] ||
		[ $((plid + (1 << lmc) - 1)) -ge "$cap" ]; then
		echo "port at LID $lid: Lid $plid LMC $lmc" >>"$T/bad.txt"
		bad=$((bad + 1))
	fi
done <"$T/ca-lids.txt"
fab_check every-range-below-cap test "$bad" -eq 0
fab_check ports-queried test "$n" -eq 300
top=$(tail -n 1 "$T/ca-lids.txt")
fab_check top-base-lid-below-cap test "$((${top:-99999} + 63))" -lt "$cap"

# A leaf's table: every host LID (all 64 of each) has a port.
fab_run H0001 ibroute -D 0,1 >"$T/lft.txt" 2>&1
fab_check leaf-routes-all test "$(grep -c '^0x' "$T/lft.txt")" -ge $((300 * 64))
last=$(grep '^0x' "$T/lft.txt" | tail -n 1 | cut -d' ' -f1)
fab_check leaf-routes-none-past-cap test "$((${last:-0xffff}))" -lt "$cap"

fab_sim_stop
fab_summary
