#!/usr/bin/env bash
# tests/fabric/test_sa_compare.sh - ibsm's SA answers against OpenSM's.
#
# One ibsim fabric.  OpenSM 3.3.23 runs first as master (daemon, its
# guid2lid cache in a directory of ours); a client registers a service
# and subscribes to a trap; saquery asks every query of QUERIES below.
# OpenSM is stopped (by PID), ibsm starts on the same simulator with
# OpenSM's cache directory, so it gives the same LIDs; the same client
# steps and queries follow.  sa_compare.py then compares the answers
# record by record, field by field, with every LID replaced by the GUID
# of its port in that SM's subnet (ibnetdiscover -p after each SM), and
# after dropping only the fields listed in its DROP table (SMInfo
# ActCount: each SM counts its own activity).
#
# Every query fits one MAD: umad2sim has no RMPP, so saquery sees only the
# first segment of longer answers, from either SM.  The records asked for
# are at most 176 bytes: only ServiceRecord's last 8 bytes (the second
# ServiceData64) reach the bytes umad2sim spoils (SA data bytes 168-199,
# MAD bytes 224-255; they arrive as zeros), and the service registered
# here keeps them zero.
#
# Then the raw answers to requests that fail (status, AttributeOffset) are
# compared the same way with sa_client raw.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CLIENT=${SA_CLIENT:-$(dirname "$IBSM")/../tests/fabric/sa_client}
CMP="python3 $FAB_LIB/sa_compare.py"
NET=${SA_COMPARE_NET:-$FAB_TOPO/fat2-small.net}
Q=H0002				# the host saquery runs on

# The queries: NAME|saquery arguments.  {ca} {ca2} {sw} are replaced by
# the LIDs the answering SM gave hosts H0005, H0010 and switch leaf-02.
# One line per query; a NAME ending in -none is a query both SMs must
# answer with no record (MFTR: no multicast group has members, so no
# switch has an MFT entry).  P_KeyTableRecords are for trusted requesters only
# (SM_Key 1, as OpenSM's default sa_key); test_sa_tables.sh asks many
# more PKTR/SL2VL/VLAR/MFTR forms.
QUERIES=(
	"CPI|-c"
	"NR-ca|NR {ca}"
	"NR-sw|NR {sw}"
	"PIR-ca|PIR {ca}/1"
	"PIR-sw0|PIR {sw}/0"
	"PIR-sw1|PIR {sw}/1"
	"PIR-sw5|PIR {sw}/5"
	"PIR-smsw2|PIR {smsw}/2"
	"LR-ca|LR {ca}/1"
	"LR-sw|LR {sw}/5"
	"LR-to-ca|LR -- {ca}/1"
	"SWIR|SWIR {sw}"
	"LFTR-0|LFTR {sw}/0"
	"SMIR|SMIR"
	"GIR-ca|GIR {ca}/0"
	"GIR-sw|GIR {sw}/0"
	"PR-ca-ca|PR --slid {ca} --dlid {ca2}"
	"PR-sw-ca|PR --slid {sw} --dlid {ca2}"
	"PR-self|PR --slid {ca} --dlid {ca}"
	"SR|SR"
	"IIR|IIR"
	"PKTR-ca|--smkey 1 PKTR {ca}/1/0"
	"PKTR-sw|--smkey 1 PKTR {sw}/1/0"
	"SL2VL-sw|SL2VL {sw}/1/2"
	"SL2VL-ca|SL2VL {ca}/1/0"
	"VLAR-ca|VLAR {ca}/1/1"
	"VLAR-sw|VLAR {sw}/2/3"
	"MFTR-sw-none|MFTR {sw}/0/0"
)

# Raw requests (sa_client raw METHOD ATTR MASK [HEX]), answers compared as
# "status S attr_offset A": NAME|arguments[|status ibsm must give].  With
# a status, OpenSM's answer is not compared: OpenSM 3.3.23 sends none
# for an attribute it does not know or a method an attribute does not
# take (it logs ERR 1A01 / 1A02 and drops the request), while the spec
# wants every request answered, here with 0x000c "method/attribute
# combination not supported" (13.4.7, table 112).
RAW=(
	"NR-get-no-lid|0x01 0x11 0x1 ffff"
	"NR-get-many|0x01 0x11 0x0"
	"CPI-gettable|0x12 0x01 0x0"
	"unknown-attr|0x12 0x00fe 0x0|status 0x000c attr_offset 0"
	"NR-set|0x02 0x11 0x0|status 0x000c attr_offset 0"
	"PR-mask-bit-30|0x12 0x35 0x40000030 {prlids}"
	"PR-mask-bit-24|0x12 0x35 0x01000030 {prlids}"
	"NR-mask-bit-40|0x12 0x11 0x10000000001 {calid}"
	"LR-mask-bit-20|0x12 0x20 0x100001 {calid}"
)

# portguid TYPE NAME: port GUID of the first port of that node, from
# ibnetdiscover -p (TYPE LID PORT GUID ... 'description').
portguid() {
	awk -v t="$1" -v n="'$2" '$1 == t && index($0, n) { print $4; exit }' \
		"$FAB_TMP/topo"
}

# collect SM DIR: every query and client step against the master SM,
# answers into DIR.
collect() {
	local sm=$1 dir=$2 line name args ca ca2 sw sub
	mkdir -p "$dir"
	fab_run $Q ibnetdiscover -p >"$dir/disc" 2>/dev/null
	$CMP lidmap "$dir/disc" >"$dir/map"
	ca=$($CMP lid "$dir/map" "$CA_GUID")
	ca2=$($CMP lid "$dir/map" "$CA2_GUID")
	sw=$($CMP lid "$dir/map" "$SW_GUID")
	smsw=$($CMP lid "$dir/map" "$SMSW_GUID")
	if [ -z "$ca" ] || [ -z "$ca2" ] || [ -z "$sw" ]; then
		fab_fail "$sm-lids" "no LID for H0005/H0010/leaf-02"
		return 1
	fi
	echo "$ca $ca2 $sw" >"$dir/lids"
	# The service and the subscription live in the SA: make them anew.
	fab_run H0005 "$CLIENT" service-set 0x10000ce1 sa-compare 0xffffffff \
		>"$dir/service-set" 2>&1 ||
		fab_fail "$sm-service-set" "$(cat "$dir/service-set")"
	# No issm: no Report is awaited, only the record.
	fab_run H0007 "$CLIENT" subscribe 128 30 \
		>"$dir/subscribe" 2>&1 &
	sub=$!
	for ((i = 0; i < 100; i++)); do
		grep -q subscribed "$dir/subscribe" && break
		sleep 0.1
	done
	grep -q subscribed "$dir/subscribe" ||
		fab_fail "$sm-subscribe" "$(cat "$dir/subscribe")"
	for line in "${QUERIES[@]}"; do
		name=${line%%|*}
		args=${line#*|}
		args=${args//\{ca\}/$ca}
		args=${args//\{ca2\}/$ca2}
		args=${args//\{sw\}/$sw}
		args=${args//\{smsw\}/$smsw}
		# shellcheck disable=SC2086 # an argument list
		fab_run $Q saquery $args >"$dir/$name" 2>&1
		echo "exit $?" >"$dir/$name.rc"
	done
	for line in "${RAW[@]}"; do
		IFS='|' read -r name args _ <<<"$line"
		# PathRecord template: DLID at byte 40, SLID at byte 42
		args=${args//\{prlids\}/$(printf '%080x%04x%04x' 0 "$ca2" "$ca")}
		args=${args//\{calid\}/$(printf '%04x' "$ca")}
		# shellcheck disable=SC2086 # an argument list
		fab_run $Q "$CLIENT" raw $args >"$dir/raw-$name" 2>&1
	done
	# Each SM's LFT block 0 of the switch as the switch has it.
	fab_run $Q ibroute "$sw" >"$dir/ibroute" 2>&1
	# The subscriber waits for a Report that never comes: stop it.
	kill -TERM "$sub" 2>/dev/null
	wait "$sub" 2>/dev/null
	return 0
}

fab_sim_start "$NET" cmp || exit 1
fab_run $Q ibnetdiscover -p >"$FAB_TMP/topo" 2>/dev/null
CA_GUID=$(portguid CA "H0005 ")
CA2_GUID=$(portguid CA "H0010 ")
SW_GUID=$(portguid SW "leaf-02'")
SMSW_GUID=$(portguid SW "leaf-01'")
# A switch's PortInfo LocalPortNum is the port the SM's SMPs enter it by,
# on the directed route of the first NodeInfo answer for it in the sweep
# (OpenSM: ni_rcv_process_existing_switch() probes only on the first;
# ibsm: got_node_info()).  leaf-02 is two hops from the SM over either
# spine: each SM's answer may name either spine port (5 or 6), whichever
# answer came back first, so that field must only be one of them there.
# leaf-01 has one way in (the SM's host, H0001, on its port 1): there the
# field is compared as it is.
SW_UP=$(awk '$1 == "SW" && $8 == "SW" && index($0, "( '"'"'leaf-02'"'"' -") { print $3 }' \
	"$FAB_TMP/topo" | sort -n | paste -sd, -)
if [ -z "$CA_GUID" ] || [ -z "$CA2_GUID" ] || [ -z "$SW_GUID" ] ||
	[ -z "$SMSW_GUID" ] || [ -z "$SW_UP" ]; then
	fab_fail sa-compare-guids "no GUIDs for H0005/H0010/leaf-02"
	fab_summary
	exit 1
fi

# 1. OpenSM, its cache in $OSM (ibsm reads its guid2lid there); -d2
# flushes its log after each line, so SUBNET UP can be waited for.
OSM=$FAB_TMP/osm
mkdir -p "$OSM"
before=$(ls "$FAB_TMP/pids")
OSM_CACHE_DIR=$OSM OSM_TMP_DIR=$OSM fab_run H0001 opensm -d2 -f "$OSM/opensm.log" \
	>"$OSM/opensm.out" 2>&1 &
osm_bg=$!
osm_pid=
for ((i = 0; i < 300; i++)); do
	if [ -z "$osm_pid" ]; then
		for f in "$FAB_TMP"/pids/*; do
			f=${f##*/}
			grep -qx "$f" <<<"$before" || osm_pid=$f
		done
	fi
	grep -q "SUBNET UP" "$OSM/opensm.log" 2>/dev/null && break
	sleep 0.1
done
if grep -q "SUBNET UP" "$OSM/opensm.log" 2>/dev/null; then
	fab_pass sa-compare-opensm-up
else
	fab_fail sa-compare-opensm-up "$(tail -n 5 "$OSM/opensm.log" 2>&1)"
	fab_summary
	exit 1
fi
collect opensm "$FAB_TMP/a"
[ -n "$osm_pid" ] && kill -TERM "$osm_pid" 2>/dev/null
wait "$osm_bg" 2>/dev/null
if [ -s "$OSM/guid2lid" ]; then
	fab_pass sa-compare-opensm-guid2lid
else
	fab_fail sa-compare-opensm-guid2lid "OpenSM left no guid2lid in $OSM"
fi

# 2. ibsm on the same simulator, with OpenSM's cache, and OpenSM's lease
# policy (infinite leases stand; ibsm cuts them to a day by default).
if ! fab_ibsm_start H0001 "$OSM" --sa-max-lease 4294967295; then
	fab_fail sa-compare-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass sa-compare-ibsm-up
collect ibsm "$FAB_TMP/b"

# 3. Compare.  The same LIDs first: ibsm took OpenSM's guid2lid.
if cmp -s "$FAB_TMP/a/map" "$FAB_TMP/b/map"; then
	fab_pass sa-compare-same-lids
else
	fab_fail sa-compare-same-lids "$(diff "$FAB_TMP/a/map" "$FAB_TMP/b/map" | head -n 5)"
fi
# both_empty NAME: neither SM answered NAME with a record (exit 2 of
# sa_compare.py diff, both ways round).
both_empty() {
	local rc
	$CMP diff "$FAB_TMP/a/map" "$FAB_TMP/a/$1" "$FAB_TMP/b/map" "$FAB_TMP/b/$1"
	rc=$?
	[ "$rc" = 2 ] || return 1
	$CMP diff "$FAB_TMP/b/map" "$FAB_TMP/b/$1" "$FAB_TMP/a/map" "$FAB_TMP/a/$1"
	[ $? = 2 ]
}
for line in "${QUERIES[@]}"; do
	name=${line%%|*}
	if [[ $name == *-none ]]; then
		fab_check "sa-compare-$name" both_empty "$name"
	else
		either=()
		[[ $name == PIR-sw* ]] && either=("LocalPort=$SW_UP")
		fab_check "sa-compare-$name" $CMP diff "$FAB_TMP/a/map" \
			"$FAB_TMP/a/$name" "$FAB_TMP/b/map" "$FAB_TMP/b/$name" \
			"${either[@]}"
	fi
	fab_check "sa-compare-$name-exit" cmp "$FAB_TMP/a/$name.rc" "$FAB_TMP/b/$name.rc"
done
# LFTs are each SM's routing choice among equal-cost ports, so the
# comparison above sees only which LIDs are routed; here each SM's
# LFTRecord must be what the switch holds, as ibroute reads it.
fab_check sa-compare-LFTR-vs-ibroute-opensm $CMP lftcheck \
	"$FAB_TMP/a/LFTR-0" "$FAB_TMP/a/ibroute"
fab_check sa-compare-LFTR-vs-ibroute-ibsm $CMP lftcheck \
	"$FAB_TMP/b/LFTR-0" "$FAB_TMP/b/ibroute"
for line in "${RAW[@]}"; do
	IFS='|' read -r name _ want <<<"$line"
	# The length of an error answer is not part of the comparison: only
	# what a client acts on (status) and AttributeOffset.
	a=$(sed 's/ len .*//' "$FAB_TMP/a/raw-$name")
	b=$(sed 's/ len .*//' "$FAB_TMP/b/raw-$name")
	if [ -n "$want" ]; then
		if [ "$b" = "$want" ]; then
			fab_pass "sa-compare-raw-$name"
		else
			fab_fail "sa-compare-raw-$name" "ibsm: $b, want $want (OpenSM: $a)"
		fi
	elif [[ $a == status* ]] && [ "$a" = "$b" ]; then
		fab_pass "sa-compare-raw-$name"
	else
		fab_fail "sa-compare-raw-$name" "OpenSM: $a; ibsm: $b"
	fi
done

if fab_ibsm_stop; then
	fab_pass sa-compare-ibsm-clean-exit
else
	fab_fail sa-compare-ibsm-clean-exit "exit status or sanitizer report"
fi
fab_summary
