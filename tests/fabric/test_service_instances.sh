#!/usr/bin/env bash
# tests/fabric/test_service_instances.sh - two ibsm@N instances from
# two opensm.conf.N files, each on its own simulated subnet.
#
# A fake RHEL /etc: rdma/opensm.conf.1 and .2, each a copy of a default
# opensm.conf (log_file /var/log/opensm.log, dump_files_dir /var/log/)
# with its own guid, subnet_prefix and sm_priority, beside backup copies
# opensm.conf.2~ and opensm.conf.rpmnew whose content would not start.
# ibsm-launch lists exactly instances 1 and 2; `ibsm-launch exec N` (the
# ExecStart of ibsm@N.service) for each, attached to its own ibsim
# (tiny.net and fat2-small.net), brings its subnet up: its own log
# file, guid2lid, dumps and pid file; sminfo on each subnet names its
# instance's GUID and priority; a host's PortInfo carries its subnet's
# prefix; ibsmctl without --socket names both instances.  Debian's
# PORTS=ALL (no simulator): the generator output defers the ports to
# ibsm-ports.service, whose start finds them.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
LAUNCH=$BUILD/systemd/ibsm-launch
T=$FAB_TMP/inst

wait_for() {
	local s=$1 i
	shift
	for ((i = 0; i < s * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# Two simulators at once: lib.sh keeps one in FAB_SOCK/FAB_SIM_*; the
# first one's are saved and the library told it has none, so starting
# the second does not stop it.  Both are in $FAB_TMP/pids (cleanup).
fab_sim_start "$FAB_TOPO/tiny.net" one || exit 1
SOCK1=$FAB_SOCK
FAB_SIM_PID=
FAB_SIM_FD=
fab_sim_start "$FAB_TOPO/fat2-small.net" two || exit 1
SOCK2=$FAB_SOCK

on() {	# on N COMMAND...: a client of subnet N, at its host H0001
	local n=$1
	shift
	if [ "$n" = 1 ]; then FAB_SOCK=$SOCK1; else FAB_SOCK=$SOCK2; fi
	fab_run H0001 "$@"
}
guid1=$(on 1 ibstat -p | head -n 1)
guid2=$(on 2 ibstat -p | head -n 1)

E=$FAB_TMP/etc
mkdir -p "$E/rdma" "$E/sysconfig"
conf() {	# conf N GUID PREFIX PRIORITY
	cat <<EOF
# a copy of the distribution's opensm.conf, edited for subnet $1
guid $2
subnet_prefix $3
sm_priority $4
log_file /var/log/opensm.log
dump_files_dir /var/log/
EOF
}
conf 1 "$guid1" 0xfe80000000000a01 3 >"$E/rdma/opensm.conf.1"
conf 2 "$guid2" 0xfe80000000000a02 7 >"$E/rdma/opensm.conf.2"
echo "this is not a configuration" >"$E/rdma/opensm.conf.2~"
echo "neither is this" >"$E/rdma/opensm.conf.rpmnew"
: >"$E/sysconfig/opensm"

got=$(IBSM_ETC=$E "$LAUNCH" list | tr '\n' ' ')
if [ "$got" = "1 2 " ]; then
	fab_pass instances-listed-1-2
else
	fab_fail instances-listed-1-2 "'$got'"
fi

start() {	# start N: ibsm@N's ExecStart, attached to subnet N
	local n=$1
	if [ "$n" = 1 ]; then FAB_SOCK=$SOCK1; else FAB_SOCK=$SOCK2; fi
	mkdir -p "$T/log"
	fab_spawn H0001 env IBSM="$IBSM" IBSM_ETC="$E" IBSM_LOG_DIR="$T/log" \
		RUNTIME_DIRECTORY="$T/run/$n" CACHE_DIRECTORY="$T/cache/$n" \
		"$LAUNCH" exec "$n" >"$T/out.$n" 2>&1
	eval "PID$n=\$FAB_SPAWN_PID"
}
start 1
start 2

for n in 1 2; do
	log=$T/log/ibsm.$n.log
	if wait_for 60 grep -qs 'SUBNET UP' "$log" &&
		[ -s "$T/run/$n/ibsm.pid" ] && [ -s "$T/cache/$n/guid2lid" ] &&
		[ -s "$T/cache/$n/opensm-subnet.lst" ]; then
		fab_pass "instance-$n-subnet-up-own-files"
	else
		fab_fail "instance-$n-subnet-up-own-files" "$(tail -n 5 "$log" "$T/out.$n" 2>&1)"
	fi
done
# Each log holds its own subnet only (tiny.net: 2 switches; fat2-small: more).
if grep -q 'SUBNET UP in .*: 2 switches, 4 CAs' "$T/log/ibsm.1.log" &&
	! grep -q 'SUBNET UP in .*: 2 switches, 4 CAs' "$T/log/ibsm.2.log"; then
	fab_pass instances-own-logs
else
	fab_fail instances-own-logs "$(grep -h 'SUBNET UP in' "$T"/log/*.log)"
fi

# sminfo on each subnet: that instance's GUID and priority.
sminfo_is() {	# sminfo_is N GUID PRIORITY
	local out g
	out=$(on "$1" sminfo) || return 1
	g=$(sed -n 's/.*sm guid \(0x[0-9a-fA-F]*\),.*/\1/p' <<<"$out")
	[ "$(printf '0x%016x' "$g")" = "$2" ] &&
		grep -q "priority $3 .*SMINFO_MASTER" <<<"$out"
}
if sminfo_is 1 "$guid1" 3 && sminfo_is 2 "$guid2" 7; then
	fab_pass instances-sminfo-guid-priority
else
	fab_fail instances-sminfo-guid-priority "$(on 1 sminfo; on 2 sminfo)"
fi

# The subnet prefix each instance gives its subnet (PortInfo:GIDPrefix).
prefix_is() {	# prefix_is N PREFIX
	on "$1" smpquery portinfo -G "$(on "$1" ibstat -p | head -n 1)" 1 2>/dev/null |
		grep -qi "^GidPrefix:\.*$2"
}
if prefix_is 1 0xfe80000000000a01 && prefix_is 2 0xfe80000000000a02; then
	fab_pass instances-subnet-prefixes
else
	fab_fail instances-subnet-prefixes "$(on 1 smpquery portinfo -G "$guid1" 1 | grep -i gidprefix; on 2 smpquery portinfo -G "$guid2" 1 | grep -i gidprefix)"
fi

# Each instance answers its own control socket (ibsm-launch puts it in
# the instance's run directory): its own port and priority.
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
for n in 1 2; do
	eval "g=\$guid$n"
	p=$([ "$n" = 1 ] && echo 3 || echo 7)
	st=$("$CTL" --socket "$T/run/$n/ibsm.sock" status 2>&1)
	if grep -qx "port_guid $g" <<<"$st" && grep -qx "priority $p" <<<"$st" &&
		grep -qx 'state MASTER' <<<"$st"; then
		fab_pass "instance-$n-own-control-socket"
	else
		fab_fail "instance-$n-own-control-socket" "$st"
	fi
done

# ibsmctl without --socket, on the instances' run directory: two
# instances named, -i N picks one.
out=$(IBSM_RUN_DIR=$T/run "$CTL" status 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "instances 1, 2; pick one with -i/--instance NAME" <<<"$out" &&
	IBSM_RUN_DIR=$T/run "$CTL" -i 2 status 2>&1 | grep -qx "port_guid $guid2"; then
	fab_pass instances-ibsmctl-names-instances
else
	fab_fail instances-ibsmctl-names-instances "exit $rc: $out"
fi

for n in 1 2; do
	kill -TERM "$(cat "$T/run/$n/ibsm.pid")" 2>/dev/null
	eval "p=\$PID$n"
	wait "$p"
	rc=$?
	rm -f "$FAB_TMP/pids/$p"
	if [ "$rc" -eq 0 ] && ! grep -q 'ERROR: AddressSanitizer\|runtime error:' "$T/out.$n"; then
		fab_pass "instance-$n-clean-exit"
	else
		fab_fail "instance-$n-clean-exit" "exit $rc: $(tail -n 5 "$T/out.$n")"
	fi
done

# Debian PORTS=ALL: the generator runs at early boot, before the HCAs
# have ports (an empty sysfs here), and must not pick ibsm@default (one
# SM on a dual-port host): it makes ibsm.target want ibsm-ports.service,
# which finds the ports when it starts (two InfiniBand ports and an
# Ethernet one by then) and starts one ibsm@PORTGUID.service for each.
D=$FAB_TMP/etc-debian
S=$FAB_TMP/sysfs
G=$FAB_TMP/gen
mkdir -p "$D/opensm" "$D/default" "$S" "$G"
printf '# ports\nPORTS=ALL\n' >"$D/default/opensm"
IBSM_ETC=$D IBSM_SYSFS=$S IBSM_UNIT_DIR=/lib/systemd/system \
	"$BUILD/systemd/ibsm-launch" generate "$G" 2>"$G.err"
wants=$(for w in "$G"/ibsm.target.wants/*; do [ -e "$w" ] || [ -L "$w" ] && printf '%s ' "${w##*/}"; done)
if [ "$wants" = "ibsm-ports.service " ] &&
	[ "$(readlink "$G/ibsm.target.wants/ibsm-ports.service")" = /lib/systemd/system/ibsm-ports.service ]; then
	fab_pass ports-all-generator-defers
else
	fab_fail ports-all-generator-defers "wants '$wants' $(cat "$G.err")"
fi
U=$BUILD/systemd/ibsm-ports.service
if grep -qx 'Type=oneshot' "$U" && grep -q '^ExecStart=/.*/ibsm-launch start-ports$' "$U" &&
	grep -q '^After=.*rdma-hw.target' "$U" && grep -qx 'PartOf=ibsm.target' "$U"; then
	fab_pass ports-all-unit
else
	fab_fail ports-all-unit "$(grep -v '^#' "$U" 2>&1)"
fi
# systemd-analyze verify accepts the unit (its ExecStart pointed at the
# build's launcher)
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$G/verify"
	sed "s|^ExecStart=[^ ]*/ibsm-launch |ExecStart=$BUILD/systemd/ibsm-launch |" "$U" \
		>"$G/verify/ibsm-ports.service"
	cp "$FAB_TOP/systemd/ibsm.target" "$G/verify/"
	if systemd-analyze verify --man=no "$G/verify/ibsm-ports.service" \
		"$G/verify/ibsm.target" >"$G/verify.out" 2>&1 && ! grep -q . "$G/verify.out"; then
		fab_pass ports-all-unit-verified
	else
		fab_fail ports-all-unit-verified "$(cat "$G/verify.out")"
	fi
else
	echo "SKIP ports-all-unit-verified (systemd-analyze not installed; NOT counted as passed)"
fi
for p in 1 2 3; do
	mkdir -p "$S/mlx5_0/ports/$p/gids"
done
echo "fe80:0000:0000:0000:0002:c903:0000:0031" >"$S/mlx5_0/ports/1/gids/0"
echo InfiniBand >"$S/mlx5_0/ports/1/link_layer"
echo "fe80:0000:0000:0000:0002:c903:0000:0032" >"$S/mlx5_0/ports/2/gids/0"
echo InfiniBand >"$S/mlx5_0/ports/2/link_layer"
echo "fe80:0000:0000:0000:0202:c9ff:fe00:0033" >"$S/mlx5_0/ports/3/gids/0"
echo Ethernet >"$S/mlx5_0/ports/3/link_layer"
# systemctl as ibsm-ports.service's start runs it: its arguments recorded
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$G/systemctl.log" >"$G/systemctl"
chmod +x "$G/systemctl"
IBSM_ETC=$D IBSM_SYSFS=$S IBSM_SYSTEMCTL=$G/systemctl \
	"$BUILD/systemd/ibsm-launch" start-ports >"$G/start.out" 2>&1
rc=$?
want="start --no-block ibsm@0x0002c90300000031.service ibsm@0x0002c90300000032.service"
if [ "$rc" -eq 0 ] && [ "$(cat "$G/systemctl.log" 2>/dev/null)" = "$want" ]; then
	fab_pass ports-all-resolved-at-start
else
	fab_fail ports-all-resolved-at-start "exit $rc: $(cat "$G/systemctl.log" "$G/start.out" 2>&1)"
fi
# each is an ordinary GUID instance: ibsm -g that port
cmd=$(IBSM_ETC=$D "$BUILD/systemd/ibsm-launch" command 0x0002c90300000032 2>&1)
fab_check ports-all-instance-binds-port grep -q -- " -g 0x0002c90300000032 " <<<"$cmd"
# a file that lists GUIDs still gets its ibsm@GUID units from the generator
printf 'PORTS="0x0002c90300000031"\n' >"$D/default/opensm"
rm -rf "$G/ibsm.target.wants"
IBSM_ETC=$D IBSM_SYSFS=$S IBSM_UNIT_DIR=/lib/systemd/system \
	"$BUILD/systemd/ibsm-launch" generate "$G"
wants=$(for w in "$G"/ibsm.target.wants/*; do [ -e "$w" ] || [ -L "$w" ] && printf '%s ' "${w##*/}"; done)
fab_check ports-list-generator-instances test "$wants" = "ibsm@0x0002c90300000031.service "

fab_summary
