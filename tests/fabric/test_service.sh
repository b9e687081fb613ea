#!/usr/bin/env bash
# tests/fabric/test_service.sh - ibsm as a system service.
#
# 1. systemd's notifications: ibsm on ibsim (tiny.net) with NOTIFY_SOCKET
#    naming a datagram socket this test reads (notify_listen.py) and
#    WATCHDOG_USEC=400000: READY=1 arrives once, after SUBNET UP and with
#    a MASTER status; STATUS= lines parse and count the fabric's nodes;
#    light sweeps show in them; WATCHDOG=1 keeps arriving (every 0.2 s);
#    STOPPING=1 at SIGTERM.
# 2. Logs: SIGUSR1 after the log file was moved away makes a new file
#    under the old name; with JOURNAL_STREAM naming stderr, errors and
#    warnings are copied there with their syslog priority ("<3>") while
#    the file keeps its timestamps; with -f stdout on the journal every
#    line carries its priority.
# 3. make install DESTDIR: the daemon, tools, launcher, generator, units,
#    man pages, logrotate file and example config, and nothing missing.
#    systemd-analyze verify accepts the units (skipped, loudly, and not
#    counted when systemd-analyze is absent).
# 4. The launcher/generator on fake /etc trees: RHEL opensm.conf.1, .2,
#    .2~ and .rpmnew give exactly instances 1 and 2; GUIDS= + PRIORITY=;
#    Debian PORTS= gives one instance per GUID; PORTS=ALL reads a fake
#    sysfs; PORTS=NONE none.  Then, as doc/migration.md moves a host:
#    OpenSM's guid2lid is copied into the instance's cache directory and
#    `ibsm-launch exec 0xGUID` (ibsm@0xGUID.service's ExecStart) brings
#    the simulated subnet up with its own log, cache and pid file, keeping
#    OpenSM's LIDs; the logrotate file's postrotate command makes it
#    reopen its log.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${IBSM_BUILD:-$(cd "$(dirname "$IBSM")/.." && pwd)}
LISTEN=$FAB_LIB/notify_listen.py
SM=$FAB_TMP/sm
NLOG=$FAB_TMP/notify.log

# ibsm's own pid (fab_spawn's PID is the `timeout` around it).
ibsm_pid() {
	fab_descendant "$FAB_SM_PID" ibsm
}

# wait_for SECONDS COMMAND...: poll COMMAND every 0.1 s.
wait_for() {
	local s=$1 i
	shift
	for ((i = 0; i < s * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

start_listener() {
	: >"$2"
	python3 "$LISTEN" "$1" "$2" 600 &
	: >"$FAB_TMP/pids/$!"
	wait_for 10 grep -q '^listening' "$2"
}

# ------------------------------------------------- 1. notify + 2. logs
fab_sim_start "$FAB_TOPO/tiny.net" service || exit 1
nodes=$(grep -Ec '^(Switch|Hca|Ca|Rt)[[:space:]]' "$FAB_TOPO/tiny.net")
switches=$(grep -Ec '^Switch[[:space:]]' "$FAB_TOPO/tiny.net")

start_listener "$FAB_TMP/notify.sock" "$NLOG" || {
	fab_fail notify-listener "$(cat "$NLOG")"
	fab_summary
	exit 1
}
mkdir -p "$SM/logs"
: >"$SM/ibsm.out"
journal=$(stat -c '%d:%i' "$SM/ibsm.out")
export NOTIFY_SOCKET=$FAB_TMP/notify.sock WATCHDOG_USEC=400000
export JOURNAL_STREAM=$journal
# As fab_ibsm_start does, with the log in a directory of its own and
# stderr on the file JOURNAL_STREAM names.
LOG=$SM/logs/ibsm.log
fab_spawn H0001 "$IBSM" -f "$LOG" --cache-dir "$SM" --dump-dir "$SM" -s 1 \
	>"$SM/ibsm.out" 2>&1
FAB_SM_BG=$FAB_SPAWN_PID FAB_SM_PID=$FAB_SPAWN_PID FAB_SM_DIR=$SM
unset NOTIFY_SOCKET WATCHDOG_USEC JOURNAL_STREAM
if wait_for 30 grep -qs "SUBNET UP" "$LOG"; then
	fab_pass service-subnet-up
else
	fab_fail service-subnet-up "$(tail -n 20 "$LOG" "$SM/ibsm.out")"
fi

# READY=1: exactly once, in a message whose status is MASTER, after the
# log's SUBNET UP (the log says when it was sent).
if wait_for 10 grep -q 'READY=1' "$NLOG" &&
	[ "$(grep -c 'READY=1' "$NLOG")" -eq 1 ] &&
	grep 'READY=1' "$NLOG" | grep -q 'STATUS=MASTER: '; then
	fab_pass service-ready-once-as-master
else
	fab_fail service-ready-once-as-master "$(cat "$NLOG")"
fi
up_line=$(grep -n 'SUBNET UP' "$LOG" | head -n 1 | cut -d: -f1)
ready_line=$(grep -n 'READY=1 sent' "$LOG" | head -n 1 | cut -d: -f1)
if [ -n "$up_line" ] && [ -n "$ready_line" ] && [ "$ready_line" -gt "$up_line" ]; then
	fab_pass service-ready-after-subnet-up
else
	fab_fail service-ready-after-subnet-up "SUBNET UP line ${up_line:-none}, READY line ${ready_line:-none}"
fi
# Before READY=1, only DISCOVERING statuses.
before_ready=$(sed -n '/READY=1/q;p' "$NLOG" | grep -o 'STATUS=[A-Z]*' | sort -u | tr '\n' ' ')
if [ "$before_ready" = "STATUS=DISCOVERING " ]; then
	fab_pass service-not-ready-while-discovering
else
	fab_fail service-not-ready-while-discovering "statuses before READY=1: '$before_ready'"
fi

# STATUS lines parse: state, nodes (switches + CAs), LIDs, last sweep,
# sweep counts; a light sweep (-s 1) shows up within a few seconds.
wait_for 10 grep -q 'last sweep light' "$NLOG"
parse=$(python3 - "$NLOG" "$nodes" "$switches" <<'EOF'
import re, sys
path, nodes, switches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rx = re.compile(r"^(MASTER|STANDBY): (\d+) nodes \((\d+) switches, (\d+) CAs\),"
                r" LIDs 1-(\d+); last sweep (heavy|light) at"
                r" (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC; (\d+) heavy, (\d+) light sweeps$")
statuses = []
for line in open(path):
    for part in line.rstrip("\n").split(" ", 1)[-1].split("|"):
        if part.startswith("STATUS="):
            statuses.append(part[7:])
up = [s for s in statuses if s.startswith(("MASTER", "STANDBY"))]
bad = [s for s in up if not rx.match(s)]
kinds = set()
for s in up:
    m = rx.match(s)
    if not m:
        continue
    n, sw, ca = int(m.group(2)), int(m.group(3)), int(m.group(4))
    if n != nodes or sw != switches or sw + ca != n:
        bad.append(s)
    kinds.add(m.group(6))
print("statuses=%d up=%d bad=%d kinds=%s" % (len(statuses), len(up), len(bad),
                                             ",".join(sorted(kinds))))
for s in bad[:3]:
    print("unparsed:", s)
sys.exit(0 if up and not bad and kinds == {"heavy", "light"} else 1)
EOF
)
parse_rc=$?
if [ "$parse_rc" -eq 0 ]; then
	fab_pass service-status-lines-parse
else
	fab_fail service-status-lines-parse "$parse"
fi
echo "    $parse"

# WATCHDOG=1 keeps coming: every 0.2 s, so at least 5 in 2 s.
w0=$(grep -c 'WATCHDOG=1' "$NLOG")
sleep 2
w1=$(grep -c 'WATCHDOG=1' "$NLOG")
echo "    WATCHDOG=1 messages in 2 s: $((w1 - w0))"
if [ $((w1 - w0)) -ge 5 ]; then
	fab_pass service-watchdog-pings
else
	fab_fail service-watchdog-pings "$((w1 - w0)) in 2 s"
fi

# SIGUSR1 after logrotate moved the file: a new file under the old name.
pid=$(ibsm_pid)
mv "$LOG" "$LOG.1"
kill -USR1 "$pid"
if wait_for 10 grep -q 'SIGUSR1: log file reopened' "$LOG" 2>/dev/null &&
	kill -0 "$pid" && ! grep -q 'SIGUSR1' "$LOG.1"; then
	fab_pass service-sigusr1-new-log-file
else
	fab_fail service-sigusr1-new-log-file "$(ls -l "$SM/logs")"
fi

# Journal: the log file has timestamps and no priority prefixes; an error
# (the log's directory gone at SIGUSR1: ERR 0313) is also on stderr,
# prefixed <3>, and nothing of priority info (<6>) is.
mv "$SM/logs" "$SM/logs.gone"
kill -USR1 "$pid"
wait_for 10 grep -q 'ERR 0313' "$SM/ibsm.out"
if grep -q '^<3>\[ERR\] ERR 0313: SIGUSR1: cannot reopen the log file' "$SM/ibsm.out" &&
	! grep -q '^<6>' "$SM/ibsm.out" &&
	grep -q '^[A-Z][a-z][a-z] [ 0-9][0-9] .*\[ERR\] ERR 0313' "$SM/logs.gone/ibsm.log" &&
	! grep -q '^<[0-9]>' "$SM/logs.gone/ibsm.log"; then
	fab_pass service-journal-errors-prefixed
else
	fab_fail service-journal-errors-prefixed "$(head -n 5 "$SM/ibsm.out")"
fi
mv "$SM/logs.gone" "$SM/logs"
kill -USR1 "$pid"
wait_for 10 grep -q 'SIGUSR1: log file reopened' "$LOG"

if fab_ibsm_stop; then
	fab_pass service-ibsm-exit-0
else
	fab_fail service-ibsm-exit-0 "$(tail -n 20 "$SM/ibsm.out")"
fi
if wait_for 5 grep -q 'STOPPING=1' "$NLOG"; then
	fab_pass service-stopping
else
	fab_fail service-stopping "$(tail -n 3 "$NLOG")"
fi

# An abstract NOTIFY_SOCKET ("@name") works too; a watchdog meant for
# another process (WATCHDOG_PID not ours) is not fed.
A=$FAB_TMP/abstract
mkdir -p "$A"
start_listener "@ibsm-test-$$" "$A/notify.log"
fab_spawn H0001 env NOTIFY_SOCKET="@ibsm-test-$$" WATCHDOG_USEC=100000 \
	WATCHDOG_PID=1 "$IBSM" -f "$A/ibsm.log" --cache-dir "$A" --dump-dir "$A" \
	>"$A/out" 2>&1
apid=$FAB_SPAWN_PID
wait_for 30 grep -q 'READY=1' "$A/notify.log"
sleep 1
kill -TERM "$(fab_descendant "$apid" ibsm)" 2>/dev/null
wait "$apid"
rm -f "$FAB_TMP/pids/$apid"
if grep -q 'READY=1' "$A/notify.log" && ! grep -q 'WATCHDOG=1' "$A/notify.log" &&
	! grep -q 'systemd watchdog' "$A/ibsm.log"; then
	fab_pass service-abstract-socket-foreign-watchdog
else
	fab_fail service-abstract-socket-foreign-watchdog "$(cat "$A/notify.log")"
fi

# -f stdout on the journal: every line with its priority, no timestamp.
J=$FAB_TMP/journal
mkdir -p "$J"
: >"$J/stdout"
export JOURNAL_STREAM
JOURNAL_STREAM=$(stat -c '%d:%i' "$J/stdout")
fab_run H0001 "$IBSM" -o -f stdout --cache-dir "$J" --dump-dir "$J" \
	>"$J/stdout" 2>"$J/stderr"
rc=$?
unset JOURNAL_STREAM
# -o's own summary line ("SUBNET UP in ...") is the program's output.
unprefixed=$(grep -v '^<[3467]>\[' "$J/stdout" | grep -vc '^SUBNET UP in ')
if [ "$rc" -eq 0 ] && grep -q '^<6>\[INFO\] SUBNET UP$' "$J/stdout" &&
	[ "$unprefixed" -eq 0 ]; then
	fab_pass service-journal-stdout-prefixed
else
	fab_fail service-journal-stdout-prefixed "exit $rc, $unprefixed lines without a priority: $(head -n 3 "$J/stdout")"
fi

# OpenSM's default log file when -f is not given (opensm(8)): as --help
# says it, or as the default configuration (-c FILE, where ibsm has it)
# writes it.
help=$("$IBSM" --help)
if grep -q 'default /var/log/opensm.log' <<<"$help" ||
	{ "$IBSM" -c "$FAB_TMP/default.conf" >/dev/null 2>&1 &&
		grep -q '^log_file /var/log/opensm.log$' "$FAB_TMP/default.conf"; }; then
	fab_pass service-default-log-file
else
	fab_fail service-default-log-file "$(grep -A1 log_file <<<"$help")"
fi

# ------------------------------------------------------- 3. make install
DEST=$FAB_TMP/dest
if make -s -C "$BUILD" install DESTDIR="$DEST" >"$FAB_TMP/install.out" 2>&1; then
	fab_pass service-make-install
else
	fab_fail service-make-install "$(tail -n 10 "$FAB_TMP/install.out")"
fi
prefix=$(sed -n 's/^prefix = //p' "$BUILD/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$BUILD/Makefile" | sed "s|\${prefix}|$prefix|")
missing=
for f in sbin/ibsm sbin/ibsm-launch bin/ibsmctl bin/ibhost \
	lib/systemd/system/ibsm@.service lib/systemd/system/ibsm.target \
	lib/systemd/system/ibsm-ports.service \
	lib/systemd/system-generators/ibsm-generator \
	share/man/man8/ibsm.8 share/man/man8/ibsmctl.8 share/man/man8/ibhost.8 \
	share/doc/ibsm/opensm.conf.example share/doc/ibsm/migration.md \
	share/doc/ibsm/ibhost.ini.example; do
	[ -e "$DEST$prefix/$f" ] || missing="$missing $prefix/$f"
done
[ -f "$DEST$sysconfdir/logrotate.d/ibsm" ] || missing="$missing $sysconfdir/logrotate.d/ibsm"
for f in sbin/ibsm sbin/ibsm-launch lib/systemd/system-generators/ibsm-generator; do
	[ -x "$DEST$prefix/$f" ] || missing="$missing $f(not executable)"
done
echo "    installed: $(cd "$DEST" && find . -type f | sort | tr '\n' ' ')"
if [ -z "$missing" ]; then
	fab_pass service-install-files
else
	fab_fail service-install-files "missing:$missing"
fi
UNIT=$DEST$prefix/lib/systemd/system
LAUNCH=$DEST$prefix/sbin/ibsm-launch
GEN=$DEST$prefix/lib/systemd/system-generators/ibsm-generator
if grep -q "^ExecStart=$prefix/sbin/ibsm-launch exec %i$" "$UNIT/ibsm@.service" &&
	grep -q '^Type=notify$' "$UNIT/ibsm@.service" &&
	grep -q '^WatchdogSec=' "$UNIT/ibsm@.service" &&
	grep -q "^IBSM=\${IBSM:-$prefix/sbin/ibsm}$" "$LAUNCH"; then
	fab_pass service-unit-paths
else
	fab_fail service-unit-paths "$(grep -h '^Exec\|^IBSM=' "$UNIT/ibsm@.service" "$LAUNCH")"
fi

# systemd-analyze verify, on copies whose ExecStart points into DESTDIR.
if command -v systemd-analyze >/dev/null; then
	V=$FAB_TMP/verify
	mkdir -p "$V"
	sed "s|=$prefix/sbin/|=$DEST$prefix/sbin/|; s|=$prefix/bin/|=$DEST$prefix/bin/|" "$UNIT/ibsm@.service" >"$V/ibsm@.service"
	cp "$UNIT/ibsm.target" "$V/"
	if systemd-analyze verify --man=no "$V/ibsm@.service" "$V/ibsm.target" \
		>"$V/out" 2>&1 && ! grep -q . "$V/out"; then
		fab_pass service-systemd-analyze-verify
	else
		fab_fail service-systemd-analyze-verify "$(cat "$V/out")"
	fi
	# The check can fail: a broken copy is refused.
	sed 's/^Type=notify$/Type=notifyy/' "$V/ibsm@.service" >"$V/bad@.service"
	if systemd-analyze verify --man=no "$V/bad@.service" >"$V/bad.out" 2>&1 &&
		! grep -q . "$V/bad.out"; then
		fab_fail service-systemd-analyze-refuses-bad "a bad unit passed"
	else
		fab_pass service-systemd-analyze-refuses-bad
	fi
else
	echo "SKIP service-systemd-analyze-verify: systemd-analyze is not installed" \
		"(NOT counted as passed)" >&2
	echo "SKIP service-systemd-analyze-verify (systemd-analyze not installed)"
fi

# --------------------------------------------------- 4. launcher/generator
launch() {
	env -u RUNTIME_DIRECTORY -u CACHE_DIRECTORY IBSM="$IBSM" \
		IBSM_ETC="$1" IBSM_SYSFS="${SYSFS:-/nonexistent}" "$LAUNCH" "${@:2}"
}
list_of() {
	launch "$@" list 2>"$FAB_TMP/launch.err" | tr '\n' ' '
}

RH=$FAB_TMP/etc-rhel
mkdir -p "$RH/rdma" "$RH/sysconfig"
for f in opensm.conf opensm.conf.1 opensm.conf.2 opensm.conf.2~ opensm.conf.rpmnew \
	opensm.conf.rpmsave opensm.conf.orig opensm.conf.1.bak; do
	echo "sm_priority 3" >"$RH/rdma/$f"
done
# opensm.conf.1: a copy of `opensm -c` output, naming OpenSM's default
# log and dump directory (every instance would share them); .2 names its
# own log file.
printf 'log_file /var/log/opensm.log\ndump_files_dir /var/log/\n' >>"$RH/rdma/opensm.conf.1"
echo "log_file /var/log/subnet2.log" >>"$RH/rdma/opensm.conf.2"
printf 'GUIDS="0x0002c90300000001"\nPRIORITY=5\n' >"$RH/sysconfig/opensm"
got=$(list_of "$RH")
if [ "$got" = "1 2 " ]; then
	fab_pass service-launcher-rhel-numbered-files
else
	fab_fail service-launcher-rhel-numbered-files "instances: '$got'"
fi
g=$FAB_TMP/gen-rhel
mkdir -p "$g"
IBSM_ETC=$RH "$GEN" "$g" "$g" "$g"
got=$(find "$g/ibsm.target.wants" -mindepth 1 -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')
target=$(readlink "$g/ibsm.target.wants/ibsm@1.service")
if [ "$got" = "ibsm@1.service ibsm@2.service " ] &&
	[ "$target" = "$prefix/lib/systemd/system/ibsm@.service" ]; then
	fab_pass service-generator-two-instances
else
	fab_fail service-generator-two-instances "wants: '$got' -> $target"
fi
c1=$(launch "$RH" command 1)
c2=$(launch "$RH" command 2)
if [ "$c1" = "$IBSM -F $RH/rdma/opensm.conf.1 -f /var/log/ibsm.1.log --cache-dir /var/cache/ibsm/1 --dump-dir /var/cache/ibsm/1 -J /run/ibsm/1/ibsm.pid --control-socket /run/ibsm/1/ibsm.sock" ] &&
	[ "$c2" = "$IBSM -F $RH/rdma/opensm.conf.2 --cache-dir /var/cache/ibsm/2 --dump-dir /var/cache/ibsm/2 -J /run/ibsm/2/ibsm.pid --control-socket /run/ibsm/2/ibsm.sock" ]; then
	fab_pass service-launcher-rhel-commands
else
	fab_fail service-launcher-rhel-commands "$c1 / $c2"
fi
# Exit 2 (not restarted by the unit), with a message naming what was
# expected.
launch "$RH" command 3 >/dev/null 2>"$FAB_TMP/bad3.err"
rc3=$?
launch "$RH" command 'x;y' >/dev/null 2>"$FAB_TMP/badxy.err"
rcxy=$?
if [ "$rc3" -eq 2 ] && grep -q "instance 3: no $RH/rdma/opensm.conf.3" "$FAB_TMP/bad3.err" &&
	[ "$rcxy" -eq 2 ] && grep -q "expected a number N" "$FAB_TMP/badxy.err"; then
	fab_pass service-launcher-refuses-bad-instance
else
	fab_fail service-launcher-refuses-bad-instance "exit $rc3, $rcxy: $(cat "$FAB_TMP"/bad*.err)"
fi
if grep -q '^RestartPreventExitStatus=2$' "$UNIT/ibsm@.service"; then
	fab_pass service-unit-no-restart-on-exit-2
else
	fab_fail service-unit-no-restart-on-exit-2
fi

# RHEL's simple method: GUIDS= and PRIORITY= without numbered files.
rm -f "$RH"/rdma/opensm.conf.[0-9]*
printf 'GUIDS="0x0002C90300000001 0002c90300000002"\nPRIORITY=5\n' >"$RH/sysconfig/opensm"
got=$(list_of "$RH")
c=$(launch "$RH" command 0x0002c90300000002)
if [ "$got" = "0x0002c90300000001 0x0002c90300000002 " ] &&
	[ "$c" = "$IBSM -F $RH/rdma/opensm.conf -g 0x0002c90300000002 -p 5 -f /var/log/ibsm.0x0002c90300000002.log --cache-dir /var/cache/ibsm/0x0002c90300000002 --dump-dir /var/cache/ibsm/0x0002c90300000002 -J /run/ibsm/0x0002c90300000002/ibsm.pid --control-socket /run/ibsm/0x0002c90300000002/ibsm.sock" ]; then
	fab_pass service-launcher-rhel-guids-priority
else
	fab_fail service-launcher-rhel-guids-priority "'$got' / $c"
fi
: >"$RH/sysconfig/opensm"
got=$(list_of "$RH")
if [ "$got" = "default " ]; then
	fab_pass service-launcher-default-instance
else
	fab_fail service-launcher-default-instance "'$got'"
fi

# Debian: /etc/opensm + /etc/default/opensm PORTS=.
DEB=$FAB_TMP/etc-debian
mkdir -p "$DEB/opensm" "$DEB/default"
printf '# PORTS="ALL"\nPORTS="0x0002c90300000011 0x0002c90300000012 0x0002c90300000013"\n' \
	>"$DEB/default/opensm"
got=$(list_of "$DEB")
if [ "$got" = "0x0002c90300000011 0x0002c90300000012 0x0002c90300000013 " ]; then
	fab_pass service-launcher-debian-ports
else
	fab_fail service-launcher-debian-ports "'$got' $(cat "$FAB_TMP/launch.err")"
fi
printf 'PORTS=NONE\n' >"$DEB/default/opensm"
got=$(list_of "$DEB")
if [ -z "$got" ]; then
	fab_pass service-launcher-debian-ports-none
else
	fab_fail service-launcher-debian-ports-none "'$got'"
fi
printf 'PORTS=ALL\n' >"$DEB/default/opensm"
SYSFS=$FAB_TMP/sysfs
mkdir -p "$SYSFS/mlx5_0/ports/1/gids" "$SYSFS/mlx5_0/ports/2/gids"
echo "fe80:0000:0000:0000:0002:c903:0000:0021" >"$SYSFS/mlx5_0/ports/1/gids/0"
echo InfiniBand >"$SYSFS/mlx5_0/ports/1/link_layer"
echo "fe80:0000:0000:0000:0202:c9ff:fe00:0022" >"$SYSFS/mlx5_0/ports/2/gids/0"
echo Ethernet >"$SYSFS/mlx5_0/ports/2/link_layer"
got=$(SYSFS=$SYSFS list_of "$DEB")
if [ "$got" = "0x0002c90300000021 " ]; then
	fab_pass service-launcher-debian-ports-all
else
	fab_fail service-launcher-debian-ports-all "'$got'"
fi

# ibsm@<GUID>.service's ExecStart on the simulated subnet: H0001's port.
guid=$(fab_run H0001 ibstat -p 2>/dev/null | head -n 1)
printf 'PORTS="%s"\n' "$guid" >"$DEB/default/opensm"
inst=$(list_of "$DEB" | tr -d ' ')
I=$FAB_TMP/inst
mkdir -p "$I/log"
# The guide's move: OpenSM ran here and wrote its guid2lid; it is copied
# into the instance's cache directory before the instance first starts.
OC=$FAB_TMP/opensm-cache
mkdir -p "$OC"
fab_run H0001 env OSM_CACHE_DIR="$OC" OSM_TMP_DIR="$OC" opensm -o \
	-f "$OC/opensm.log" >"$OC/out" 2>&1
install -d "$I/cache/$inst"
cp "$OC/guid2lid" "$I/cache/$inst/"
fab_spawn H0001 env IBSM="$IBSM" IBSM_ETC="$DEB" IBSM_LOG_DIR="$I/log" \
	RUNTIME_DIRECTORY="$I/run/$inst" CACHE_DIRECTORY="$I/cache/$inst" \
	"$LAUNCH" exec "$inst" >"$I/out" 2>&1
ipid=$FAB_SPAWN_PID
# sminfo names the master by its GUID without leading zeros.
sminfo_master_guid() {
	local out g
	out=$(fab_run H0002 sminfo) || return 1
	g=$(sed -n 's/.*sm guid \(0x[0-9a-fA-F]*\),.*SMINFO_MASTER.*/\1/p' <<<"$out")
	[ -n "$g" ] && [ "$(printf '0x%016x' "$g")" = "$1" ]
}
ilog=$I/log/ibsm.$inst.log
if [ -n "$guid" ] && wait_for 60 grep -qs 'SUBNET UP' "$ilog" &&
	grep -q "port GUID $inst" "$ilog" &&
	[ -s "$I/run/$inst/ibsm.pid" ] && [ -s "$I/cache/$inst/guid2lid" ] &&
	[ -s "$I/cache/$inst/opensm-subnet.lst" ] &&
	sminfo_master_guid "$inst"; then
	fab_pass service-launcher-exec-guid-instance
else
	fab_fail service-launcher-exec-guid-instance "guid '$guid' inst '$inst': $(tail -n 5 "$ilog" "$I/out" 2>&1)"
fi

# The instance's control socket, in its run directory.
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
if [ -S "$I/run/$inst/ibsm.sock" ] &&
	"$CTL" --socket "$I/run/$inst/ibsm.sock" status | grep -qx "port_guid $inst"; then
	fab_pass service-launcher-control-socket
else
	fab_fail service-launcher-control-socket "$(ls -l "$I/run/$inst" 2>&1)"
fi

lids() {
	grep '^0x' "$1" | sort
}
if [ -s "$OC/guid2lid" ] && [ "$(lids "$OC/guid2lid")" = "$(lids "$I/cache/$inst/guid2lid")" ]; then
	fab_pass service-opensm-guid2lid-kept
else
	fab_fail service-opensm-guid2lid-kept "$(tail -n 3 "$OC/out"; diff <(lids "$OC/guid2lid") <(lids "$I/cache/$inst/guid2lid"))"
fi

# The logrotate file's postrotate command, pointed at this run dir.
post=$(sed -n '/postrotate/,/endscript/p' "$DEST$sysconfdir/logrotate.d/ibsm" |
	sed '1d;$d' | sed "s|/run/ibsm/|$I/run/|g; s|/run/ibsm.pid|$I/none.pid|")
mv "$ilog" "$ilog.1"
sh -c "$post"
if wait_for 10 grep -q 'SIGUSR1: log file reopened' "$ilog" 2>/dev/null; then
	fab_pass service-logrotate-postrotate-reopens
else
	fab_fail service-logrotate-postrotate-reopens "post: $post"
fi
kill -TERM "$(cat "$I/run/$inst/ibsm.pid")" 2>/dev/null
wait "$ipid"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e "$I/run/$inst/ibsm.pid" ] &&
	! grep -q 'ERROR: AddressSanitizer\|runtime error:' "$I/out"; then
	fab_pass service-launcher-instance-stops
else
	fab_fail service-launcher-instance-stops "exit $rc: $(tail -n 5 "$I/out")"
fi
rm -f "$FAB_TMP/pids/$ipid"

fab_summary
