#!/usr/bin/env bash
# tests/fabric/test_config_real.sh - the opensm.conf files sites publish
# (tests/config/real/, sources in its README) against OpenSM 3.3.23.
#
# 1. No simulator, every file: `opensm -F FILE -c OUT` (OpenSM 3.3.23 for
#    real) and `ibsm -F FILE --check-config`.  Every file OpenSM accepts,
#    ibsm accepts (exit 0, warnings allowed).  Every key of the file that
#    ibsm does not implement (by `ibsm -c`'s own comments) or does not
#    know is named in the --check-config output.  A file of QoS table
#    keys is not "no errors" (its keys do nothing without qos TRUE).
#    With --strict, a file with warnings is refused (exit 2).
#    --check-config -P prints the partition warnings `ibsmctl partitions
#    check` prints.
# 2. On ibsim (tiny): the daemon starts with a representative few (OpenSM
#    3.3.x site and RHEL files, Mellanox 5.x files with ar_updn and
#    virt_*), each until SUBNET UP, sminfo from another host naming it
#    master and that host's port Active; `ibsmctl dump-config` lists the
#    file's warnings and the routing engine it mapped.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

REAL=$FAB_TOP/tests/config/real
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP

command -v opensm >/dev/null || {
	fab_fail config-real-opensm-installed "opensm 3.3.23 is the referee"
	fab_summary
	exit 1
}

# The keys ibsm does not implement, from its own -c output ("# key: ...;
# not implemented in ibsm yet").
"$IBSM" -c "$T/ibsm-default.conf" >/dev/null 2>&1
sed -n 's/^# \([a-z0-9_]*\): .*; not implemented in ibsm yet$/\1/p' \
	"$T/ibsm-default.conf" | sort -u >"$T/not-impl"
# dimn_ports_file is not written by -c (nor by OpenSM's): OpenSM's
# deprecated name of port_search_ordering_file, implemented as it is.
{
	sed -n 's/^#\{0,1\}\([a-z0-9_-]*\) .*/\1/p' "$T/ibsm-default.conf"
	echo dimn_ports_file
} | sort -u >"$T/known"
fab_check config-real-not-implemented-list test "$(wc -l <"$T/not-impl")" -ge 20

# The keys of an opensm.conf by OpenSM's rule: cut at '#', first word.
file_keys() {
	sed 's/#.*//' "$1" | awk 'NF { print $1 }' | sort -u
}

files=0
accepted=0
bad=
unlisted=
for f in "$REAL"/*.conf; do
	name=${f##*/}
	files=$((files + 1))
	(cd "$T" && timeout 30 opensm -F "$f" -c "$T/$name.opensm-c" \
		>"$T/$name.opensm.log" 2>&1)
	orc=$?
	out=$("$IBSM" -F "$f" --check-config 2>&1)
	irc=$?
	printf '%s\n' "$out" >"$T/$name.check"
	echo "    $name: opensm -c exit $orc, ibsm --check-config exit $irc," \
		"$(grep -c '^ibsm: warning' <<<"$out") warnings"
	[ "$orc" -eq 0 ] || continue
	accepted=$((accepted + 1))
	[ "$irc" -eq 0 ] || bad="$bad $name (exit $irc: $(grep -v '^ibsm: warning' <<<"$out" | head -n 2));"
	# every key ibsm does not implement or does not know: named
	while read -r key; do
		if grep -qxF "$key" "$T/not-impl" || ! grep -qxF "$key" "$T/known"; then
			grep -qE "(^|[ ,'])$key([ ,:']|$)" <<<"$out" ||
				unlisted="$unlisted $name:$key"
		fi
	done < <(file_keys "$f")
done
echo "    $files files, $accepted accepted by OpenSM 3.3.23"
if [ "$files" -ge 10 ] && [ "$accepted" -eq "$files" ] && [ -z "$bad" ]; then
	fab_pass config-real-opensm-accepts-ibsm-accepts
else
	fab_fail config-real-opensm-accepts-ibsm-accepts "$files files, $accepted accepted by OpenSM;$bad"
fi
if [ -z "$unlisted" ]; then
	fab_pass config-real-unimplemented-keys-named
else
	fab_fail config-real-unimplemented-keys-named "not named:$unlisted"
fi

# QoS table keys alone: not "no errors"; named as inert without qos TRUE.
q=$T/ibv-message-passing-qos.conf.check
if ! grep -q "no errors" "$q" &&
	grep -q "warning: .*qos_vlarb_high.*set while qos is FALSE" "$q"; then
	fab_pass config-real-qos-only-not-clean
else
	fab_fail config-real-qos-only-not-clean "$(cat "$q")"
fi
# A Mellanox 5.x file: its engine mapped, its keys said once each.
u=$T/ufm-openai-recipe-2022.conf.check
if grep -q "routing_engine ar_updn: ar_updn -> updn" "$u" &&
	[ "$(grep -c "virt_max_ports_in_process: a key of Mellanox" "$u")" -eq 1 ] &&
	grep -q "routing_threads_num: a key of Mellanox OpenSM 5.x; ibsm routes" "$u"; then
	fab_pass config-real-mellanox-said
else
	fab_fail config-real-mellanox-said "$(cat "$u")"
fi
# RHEL's /etc/rdma file: its dimn_ports_file known, its partitions file
# (absent here) the default partition, as OpenSM.
r=$T/rhel6-opensm-3.3.9.conf.check
if grep -q "partition_config_file /etc/rdma/partitions.conf: does not exist; no partitions file" "$r" &&
	! grep -q "unknown key 'dimn_ports_file'" "$r"; then
	fab_pass config-real-rhel-starts
else
	fab_fail config-real-rhel-starts "$(cat "$r")"
fi
"$IBSM" -F "$REAL/ufm-openai-recipe-2022.conf" --check-config --strict >/dev/null 2>&1
fab_check config-real-strict-refuses test $? -eq 2
"$IBSM" -F "$REAL/ib-pkey-setup.conf" --check-config --strict >/dev/null 2>&1
fab_check config-real-strict-clean-passes test $? -eq 0

# --check-config -P: the partition warnings `ibsmctl partitions check`
# prints, the same lines.
printf 'Default=0x7fff, ipoib : ALL=both ;\n' >"$T/parts-both.conf"
want=$("$CTL" partitions check "$T/parts-both.conf" 2>&1)
out=$("$IBSM" -P "$T/parts-both.conf" --check-config 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ -n "$want" ] && grep -q "warning: 'both' needs allow_both_pkeys\|warning: .*both" <<<"$want" &&
	grep -qxF "ibsm: $want" <<<"$out"; then
	fab_pass config-real-check-P-partition-warnings
else
	fab_fail config-real-check-P-partition-warnings "ibsmctl: $want; ibsm (exit $rc): $out"
fi

# ------------------------------------------------- the daemon on ibsim
if ! fab_sim_start "$FAB_TOPO/tiny.net" real; then
	fab_fail sim-start
	fab_summary
	exit 1
fi
n=0
for name in scinet10-opensm.conf rhel6-opensm-3.3.9.conf \
	dell-omnia-opensm.conf ufm-openai-recipe-2022.conf \
	mlnx-ofed-sriov-guide.conf; do
	n=$((n + 1))
	sock=$T/sm$n.sock
	sm_start H0001 "$T/sm$n" -F "$REAL/$name" --control-socket "$sock"
	if ! sm_wait_up "$T/sm$n" 0 40 >/dev/null; then
		fab_fail "config-real-daemon-up-$name" "$(tail -n 5 "$T/sm$n.out" "$T/sm$n.log")"
		sm_stop
		continue
	fi
	master=$(fab_run H0002 sminfo 2>&1)
	state=$(fab_run H0002 ibstat 2>&1 | grep -m1 "State:")
	if grep -q SMINFO_MASTER <<<"$master" && grep -q Active <<<"$state"; then
		fab_pass "config-real-daemon-up-$name"
	else
		fab_fail "config-real-daemon-up-$name" "sminfo: $master; $state"
	fi
	if [ "$name" = ufm-openai-recipe-2022.conf ]; then
		dump=$("$CTL" --socket "$sock" dump-config 2>&1)
		if grep -q "^# warning: .*routing_engine ar_updn: ar_updn -> updn" <<<"$dump" &&
			grep -q "^# warning: .*virt_max_ports_in_process" <<<"$dump" &&
			grep -q "^routing_engine updn " <<<"$dump" &&
			grep -q "ERR 0906: .*ar_updn -> updn" "$T/sm$n.log"; then
			fab_pass config-real-dump-config-warnings
		else
			fab_fail config-real-dump-config-warnings "$(head -n 8 <<<"$dump")"
		fi
		"$CTL" --socket "$sock" --json dump-config >"$T/dump.json" 2>&1
		fab_check config-real-dump-config-json-status python3 -c '
import json, sys
d = {k["key"]: k for k in json.load(open(sys.argv[1]))}
assert d["use_ucast_cache"]["status"] == "mapped", d["use_ucast_cache"]
assert d["use_ucast_cache"]["value"] == "TRUE", d["use_ucast_cache"]
assert d["sm_priority"]["status"] == "implemented", d["sm_priority"]
assert d["event_plugin_name"]["status"] == "not applicable"
assert "dimn_ports_file" not in d
' "$T/dump.json"
	fi
	sm_stop
	fab_check "config-real-daemon-stops-clean-$name" test $? -eq 0
done
fab_summary
