#!/usr/bin/env bash
# tests/fabric/test_mcast_keys.sh - the multicast keys of opensm.conf:
# disable_multicast (OpenSM's -d3), use_mfttop, mcgroup_join_validation
# and ipoib_mcgroup_creation_validation, with OpenSM 3.3.23 as referee on
# the same fabric (tiny.net) and file.  The validations: a join of the
# IPoIB broadcast group with another Q_Key, and the creation of another
# IPoIB group of its partition with another Q_Key, are refused by
# default and taken with the key FALSE, under both SMs.  use_mfttop FALSE: the SA's CapabilityMask2 loses
# IsMulticastFDBTopSupported (ibsim's switches do not advertise the
# field, so no SwitchInfo Set shows it).  disable_multicast:
# the SA's ClassPortInfo (saquery -c) drops IsUDMulticastSupported from
# its CapabilityMask and no switch gets a multicast forwarding entry
# (ibroute -M) after two hosts joined the IPoIB broadcast group, while
# the groups are still records of the SA (saquery -m).  Without the key
# the switches forward that group's MLID: the check that could fail.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fab_need_opensm
T=$FAB_TMP
BUILD=${IBSM_BUILD:-$(dirname "$IBSM")/..}
MJ=${MC_JOIN:-$BUILD/tests/fabric/mc_join}
BCAST=ff12:401b:ffff::ffff:ffff
printf '%s FALSE\n' use_mfttop mcgroup_join_validation \
	ipoib_mcgroup_creation_validation >"$T/off.conf"
printf 'disable_multicast TRUE\n' >>"$T/off.conf"

# observe OUT: the SA's CapabilityMask, the MFT entries of both switches
# (ibroute -M, "MLID port..." lines) and the MLIDs of the SA's groups.
observe() {
	local out=$1 lid h
	: >"$out"
	for h in H0002 H0004; do
		fab_run "$h" "$MJ" -m "$BCAST" join >>"$out.err" 2>&1
	done
	sleep 1		# the MFTs follow the joins
	# refused (non-zero exit) or taken, each
	fab_run H0003 "$MJ" -m "$BCAST" -q 0x1234 join >>"$out.err" 2>&1 &&
		echo "join-other-qkey taken" >>"$out" ||
		echo "join-other-qkey refused" >>"$out"
	fab_run H0003 "$MJ" -m ff12:401b:ffff::1:2 -c -q 0x1234 join \
		>>"$out.err" 2>&1 &&
		echo "ipoib-other-qkey taken" >>"$out" ||
		echo "ipoib-other-qkey refused" >>"$out"
	fab_run H0002 saquery -c 2>>"$out.err" |
		sed -nE 's/^[[:space:]]*Capability mask( 2)?\.+(0x[0-9a-fA-F]+)$/capmask\1 \2/p' |
		sed 's/^capmask 2 /capmask2 /' >>"$out"
	fab_run H0002 ibnetdiscover -p >"$out.topo" 2>>"$out.err"
	for lid in $(awk '$1 == "SW" { print $2 }' "$out.topo" | sort -u); do
		fab_run H0002 ibroute -M "$lid" 2>>"$out.err" |
			awk '/^0x[cC]/ { print "mft", $1 }' >>"$out"
	done
	fab_run H0002 saquery -m 2>>"$out.err" |
		sed -nE 's/^[[:space:]]*Mlid\.+(.*)$/group \1/p' | sort -u >>"$out"
}

# run_osm NAME [ARGS]: OpenSM on a fresh simulator until SUBNET UP
run_osm() {
	local name=$1
	shift
	fab_sim_start "$FAB_TOPO/tiny.net" "$name" || return 1
	fab_opensm_start H0001 "$T/$name" "$@"
	observe "$T/$name.seen"
	fab_opensm_stop
}

# run_ibsm NAME [ARGS]: ibsm on a fresh simulator until SUBNET UP
run_ibsm() {
	local name=$1
	shift
	fab_sim_start "$FAB_TOPO/tiny.net" "$name" || return 1
	fab_ibsm_start H0001 "$T/$name" "$@" || return 1
	observe "$T/$name.seen"
	fab_ibsm_stop
}

run_osm osm-off -F "$T/off.conf"
run_ibsm ibsm-off -F "$T/off.conf" && fab_pass ibsm-off-up || fab_fail ibsm-off-up
run_ibsm ibsm-d3 -d3 && fab_pass ibsm-d3-up || fab_fail ibsm-d3-up
run_ibsm ibsm-on && fab_pass ibsm-on-up || fab_fail ibsm-on-up
run_osm osm-on

for f in osm-off ibsm-off ibsm-d3 osm-on ibsm-on; do
	echo "    $f: $(tr '\n' ' ' <"$T/$f.seen")"
done
capmask() { awk '$1 == "capmask" { print $2 }' "$T/$1.seen"; }
capmask2() { awk '$1 == "capmask2" { print $2 }' "$T/$1.seen"; }
mfts() { grep -c '^mft' "$T/$1.seen"; }
groups() { grep -c '^group' "$T/$1.seen"; }

fab_check "disable_multicast: no MFT entry under OpenSM ($(mfts osm-off))" \
	test "$(mfts osm-off)" -eq 0
fab_check "disable_multicast: no MFT entry under ibsm ($(mfts ibsm-off))" \
	test "$(mfts ibsm-off)" -eq 0
fab_check "-d3: no MFT entry under ibsm ($(mfts ibsm-d3))" \
	test "$(mfts ibsm-d3)" -eq 0
fab_check "by default the members' switch forwards the broadcast group ($(mfts ibsm-on))" \
	test "$(mfts ibsm-on)" -ge 1
fab_check "the SA's CapabilityMask is OpenSM's ($(capmask ibsm-off) = $(capmask osm-off))" \
	test -n "$(capmask osm-off)" -a "$(capmask ibsm-off)" = "$(capmask osm-off)"
fab_check "it lacks IsUDMulticastSupported (0x0200)" \
	test $(($(capmask ibsm-off) & 0x200)) -eq 0
fab_check "which it has by default ($(capmask ibsm-on))" \
	test $(($(capmask ibsm-on) & 0x200)) -ne 0
fab_check "use_mfttop FALSE: CapabilityMask2 is OpenSM's ($(capmask2 ibsm-off) = $(capmask2 osm-off))" \
	test -n "$(capmask2 osm-off)" -a "$(capmask2 ibsm-off)" = "$(capmask2 osm-off)"
fab_check "it lacks IsMulticastFDBTopSupported (0x8)" \
	test $(($(capmask2 ibsm-off) & 0x8)) -eq 0
fab_check "which it has by default ($(capmask2 ibsm-on))" \
	test $(($(capmask2 ibsm-on) & 0x8)) -ne 0
outcome() { awk -v k="$2" '$1 == k { print $2 }' "$T/$1.seen"; }
for k in join-other-qkey ipoib-other-qkey; do
	fab_check "$k: refused by default under OpenSM" test "$(outcome osm-on $k)" = refused
	fab_check "$k: refused by default under ibsm" test "$(outcome ibsm-on $k)" = refused
	fab_check "$k: taken with the validation FALSE under OpenSM" test "$(outcome osm-off $k)" = taken
	fab_check "$k: taken with the validation FALSE under ibsm" test "$(outcome ibsm-off $k)" = taken
done
fab_check "the groups are still SA records (OpenSM $(groups osm-off), ibsm $(groups ibsm-off))" \
	test "$(groups ibsm-off)" -ge 1 -a "$(groups ibsm-off)" -eq "$(groups osm-off)"
fab_summary
