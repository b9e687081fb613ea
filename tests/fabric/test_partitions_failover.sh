#!/usr/bin/env bash
# tests/fabric/test_partitions_failover.sh - a new master applies the
# partitions on disk, not those it read when it started.  Judged by
# `smpquery pkeys` (and sminfo for the roles).
#
# Master A (priority 10, H0001) and standby B (5, H0002) share one -P
# file.  A host (H0007) is added to partition 0x0010 with `ibsmctl
# partitions set` and the default partition's mtu=5 (4096, above
# ibsim's MtuCap: no host can join its broadcast group) becomes mtu=4,
# both applied with `partitions apply --from` against A; A programs
# 0x8010, and its broadcast group, empty, takes MTU 2048 (saquery).
# 1. A is killed with -9: B takes over and H0007 keeps 0x8010.
# 2. (fresh simulator: a killed client keeps its slot) the same edit,
#    then the file on disk broken (no reload): B takes over, names the
#    error with FILE:LINE and keeps the last good file, the edit.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
CTL=${IBSMCTL:-$BUILD/tools/ibsmctl}
NET=$FAB_TOPO/fat2-small.net
DIAG=H0004
A_PID= B_PID=
conf=$FAB_TMP/partitions.conf

lid_of() {
	fab_run "$DIAG" ibnetdiscover -p 2>/dev/null |
		awk -v h="'$1 " '$1 == "CA" && index($0, h) { print $2; exit }'
}
state_at() {
	fab_run "$DIAG" sminfo "$1" 2>/dev/null | grep -o 'SMINFO_[A-Z]*' | head -n 1
}
# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
	local n=$(($1 * 5)) i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
# has_key LID KEY: port 1 of LID holds KEY (smpquery pkeys).
has_key() {
	fab_run "$DIAG" smpquery pkeys "$1" 1 2>/dev/null | grep -qw "$2"
}
lacks_key() {
	! has_key "$@"
}
# bcast_mtu: the MTU code of the default partition's IPv4 broadcast group
# (saquery MCMR; the selector bits dropped).
bcast_mtu() {
	local v
	v=$(fab_run "$DIAG" saquery MCMR --mgid ff12:401b:ffff::ffff:ffff 2>/dev/null |
		sed -n 's/^[[:space:]]*mtu\.*//Ip' | head -n 1)
	[ -n "$v" ] && echo $((v & 0x3f))
}

# phase N [break]: A and B up, the edit through A, A killed with -9.
phase() {
	local n=$1 how=${2:-} g7 l7 la lb
	fab_sim_start "$NET" "pf$n" || { fab_fail "$n-sim" ibsim; return; }
	printf 'Default=0x7fff, ipoib, mtu=5 : ALL=full ;\nstorage=0x0010 : SELF=full ;\n' >"$conf"
	rm -rf "$FAB_TMP"/A.* "$FAB_TMP"/B.*
	sm_start_named A H0001 -p 10 -P "$conf" --control-socket "$FAB_TMP/A.sock"
	if ! wait_for 60 grep -qs 'SUBNET UP' "$FAB_TMP/A.log"; then
		fab_fail "$n-master-up" "$(tail -n 3 "$FAB_TMP/A.log")"
		return
	fi
	sm_start_named B H0002 -p 5 -P "$conf" --control-socket "$FAB_TMP/B.sock"
	lb=$(lid_of H0002)
	la=$(lid_of H0001)
	l7=$(lid_of H0007)
	g7=$(fab_run H0007 ibstat | sed -n 's/.*Port GUID: //p' | head -n 1)
	fab_check "$n: B is STANDBY" wait_for 20 eval '[ "$(state_at "$lb")" = SMINFO_STANDBY ]'
	fab_check "$n: H0007 outside storage at first" lacks_key "$l7" 0x8010
	fab_check "$n: broadcast group MTU 4096 at first" [ "$(bcast_mtu)" = 5 ]
	sed 's/mtu=5/mtu=4/' "$conf" >"$FAB_TMP/new.conf"
	"$CTL" partitions set "$FAB_TMP/new.conf" storage "$g7=full" >/dev/null &&
		"$CTL" partitions apply "$conf" --from "$FAB_TMP/new.conf" \
			--socket "$FAB_TMP/A.sock" >/dev/null
	fab_check "$n: edit applied through A" [ $? -eq 0 ]
	fab_check "$n: A programmed 0x8010 on H0007" wait_for 10 has_key "$l7" 0x8010
	fab_check "$n: A's broadcast group, empty, takes MTU 2048" \
		wait_for 5 eval '[ "$(bcast_mtu)" = 4 ]'
	sleep 2.5	# B reads the file once it has settled (1 s), standing by
	if [ "$how" = break ]; then
		echo 'broken=0x0020 : ALL ; bad=0xZZ : ALL ;' >>"$conf"
		sleep 2.5
	fi
	mark=$(wc -l <"$FAB_TMP/B.log")
	sm_stop_named A KILL
	fab_check "$n: B is MASTER after A's kill -9" \
		wait_for 20 eval '[ "$(state_at "$lb")" = SMINFO_MASTER ]'
	fab_check "$n: B's SUBNET UP" wait_for 20 eval \
		'tail -n +"$mark" "$FAB_TMP/B.log" | grep -q "SUBNET UP"'
	sleep 1
	fab_check "$n: H0007 keeps 0x8010 under B (smpquery pkeys)" has_key "$l7" 0x8010
	fab_check "$n: B's broadcast group has MTU 2048 ($(bcast_mtu))" [ "$(bcast_mtu)" = 4 ]
	fab_check "$n: B's own port (SELF) holds 0x8010" has_key "$lb" 0x8010
	fab_check "$n: A's port, no longer SELF, lost it" lacks_key "$la" 0x8010
	if [ "$how" = break ]; then
		fab_check "$n: B names the broken file FILE:LINE" \
			grep -q "ERR 0701: $conf:3:[0-9]*: " "$FAB_TMP/B.log"
		fab_check "$n: no partition 0x0020 anywhere" lacks_key "$l7" 0x0020
	fi
	sm_stop_named B
	fab_check "$n: B exits cleanly" [ $? -eq 0 ]
	fab_sim_stop
}

phase 1
phase 2 break
fab_summary
