#!/usr/bin/env bash
# tests/fabric/test_ctl.sh - ibsm's control socket (sm/ctl/) through
# ibsmctl on ibsim: status (plain and --json), resweep heavy/light,
# reroute, loglevel, reload (a changed priority seen by sminfo; a broken
# opensm.conf and a broken partitions file answered with their FILE:LINE
# errors and nothing applied), dump-config (each key's source: default,
# FILE:LINE, command line), partitions apply through the socket; then
# 10,000 malformed requests, a stalled client, too many clients, and the
# daemon still answers status and exits clean under ASan; the socket is
# 0600 and a second user is refused (by the file's mode and, with the
# mode opened, by the SO_PEERCRED check); ibsm run by that user serves
# that user and root and refuses a third uid.  The user parts need root,
# useradd and setpriv (else they are skipped, saying so; check_ctl tests
# ctl_peer_allowed).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/fabric/lib_sm.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
T=$FAB_TMP
SOCK=$T/sock/ibsm.sock
DIAG=H0002
FLOOD=${CTL_FLOOD:-10000}
mkdir -p "$T/sock"

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

fab_sim_start "$FAB_TOPO/tiny.net" ctl || {
	fab_fail sim-start
	[ -n "${made_user:-}" ] && userdel "$user" 2>/dev/null

fab_summary
	exit 1
}

cat >"$T/opensm.conf" <<'EOF'
# a test's opensm.conf
sm_priority 3
sweep_interval 0
EOF
cat >"$T/partitions.conf" <<'EOF'
Default=0x7fff, ipoib : ALL=full ;
storage=0x0002 : ALL_CAS=full ;
EOF

sm_start H0001 "$T/sm" -F "$T/opensm.conf" -P "$T/partitions.conf" \
	--control-socket "$SOCK" -J "$T/sm.pid"
if ! sm_wait_up "$T/sm" 0 60 >/dev/null; then
	fab_fail subnet-up
	tail -n 20 "$T/sm.log" "$T/sm.out"
	[ -n "${made_user:-}" ] && userdel "$user" 2>/dev/null

fab_summary
	exit 1
fi
fab_pass subnet-up

# The socket: there, a socket, 0600, owned by the daemon's user.
fab_check socket-mode test "$(stat -c '%F %a %u' "$SOCK")" = "socket 600 $(id -u)"

# status
out=$(ctl status)
fab_check status-exit0 test $? -eq 0
fab_check status-master grep -qx 'state MASTER' <<<"$out"
fab_check status-priority grep -qx 'priority 3' <<<"$out"
fab_check status-switches grep -qx 'switches 2' <<<"$out"
fab_check status-cas grep -qx 'cas 4' <<<"$out"
fab_check status-partitions grep -qx 'partitions 2' <<<"$out"
ctl --json status >"$T/status.json"
fab_check status-json python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "MASTER", d
assert d["subnet_up"] is True, d
assert d["switches"] == 2 and d["cas"] == 4, d
assert d["heavy_sweeps"] >= 1 and isinstance(d["uptime_s"], float), d
assert d["port_guid"].startswith("0x"), d
assert d["last_heavy_sweep"] == "done", d
assert 0 < d["last_heavy_sweep_s"] < 30, d
assert 0 <= d["last_heavy_sweep_ago_s"] <= d["uptime_s"], d
' "$T/status.json"

field() {
	ctl status | sed -n "s/^$1 //p"
}

# resweep heavy: one more heavy sweep, one more SUBNET UP
h0=$(field heavy_sweeps)
ago0=$(field last_heavy_sweep_ago_s)
off=$(stat -c %s "$T/sm.log")
out=$(ctl resweep heavy)
fab_check resweep-heavy-ok grep -q 'heavy sweep requested' <<<"$out"
sm_wait_up "$T/sm" "$off" 30 >/dev/null
fab_check resweep-heavy-counted test "$(field heavy_sweeps)" -gt "$h0"
# the last heavy sweep: the one just done, later than the one before
fab_check resweep-heavy-last awk -v a="$(field last_heavy_sweep_ago_s)" \
	-v b="$ago0" 'BEGIN { exit !(a < b && a < 5) }'

# resweep light
l0=$(field light_sweeps)
fab_check resweep-light-ok ctl resweep light
for ((i = 0; i < 100; i++)); do
	[ "$(field light_sweeps)" -gt "$l0" ] && break
	sleep 0.1
done
fab_check resweep-light-counted test "$(field light_sweeps)" -gt "$l0"
ctl resweep sideways >/dev/null 2>"$T/err"
fab_check resweep-bad-arg-exit1 test $? -eq 1
fab_check resweep-bad-arg-says grep -q "expected 'resweep'" "$T/err"

# reroute: a heavy sweep with every LFT sent whole
h0=$(field heavy_sweeps)
off=$(stat -c %s "$T/sm.log")
out=$(ctl reroute)
fab_check reroute-ok grep -q 'LFTs of 2 switches sent whole' <<<"$out"
sm_wait_up "$T/sm" "$off" 30 >/dev/null
fab_check reroute-counted test "$(field heavy_sweeps)" -gt "$h0"
fab_check reroute-routes-ok fab_run "$DIAG" ibtracert 1 2

# reroute during a heavy sweep: "resweep heavy" and "reroute" on one
# connection (the second line is read once the first is answered: the
# sweep it started is still discovering).  The reroute is deferred to the
# heavy sweep after it, which sends both switches' LFTs whole: its
# program phase has Sets though nothing changed in the fabric.
h0=$(field heavy_sweeps)
off=$(stat -c %s "$T/sm.log")
out=$(python3 - "$SOCK" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"resweep heavy\nreroute\n")
s.shutdown(socket.SHUT_WR)
buf = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    buf += d
print(buf.decode())
PYEOF
)
fab_check reroute-busy-deferred grep -q 'OK heavy sweep requested after the sweep in progress' <<<"$out"
# the two sweeps done, and both logged (the count goes up before the
# sweep's line is written)
for ((i = 0; i < 100; i++)); do
	[ "$(field heavy_sweeps)" -ge $((h0 + 2)) ] &&
		[ "$(tail -c +"$((off + 1))" "$T/sm.log" |
			grep -c 'program [0-9.]* s (')" -ge 2 ] && break
	sleep 0.1
done
new=$(tail -c +"$((off + 1))" "$T/sm.log")
fab_check reroute-busy-two-sweeps test "$(field heavy_sweeps)" -ge $((h0 + 2))
fab_check reroute-busy-forgotten grep -q 'reroute: LFTs of 2 switches sent whole (asked for during the last sweep)' <<<"$new"
# the second sweep of the two programs something (the LFTs), the first not
progs=$(grep -o 'program [0-9.]* s ([0-9]* Sets' <<<"$new" | sed 's/.*(\([0-9]*\) Sets/\1/' | tr '\n' ' ')
fab_check reroute-busy-lfts-sent awk -v p="$progs" 'BEGIN { n = split(p, a, " "); exit !(n >= 2 && a[1] == 0 && a[2] >= 2) }'
fab_check reroute-busy-routes-ok fab_run "$DIAG" ibtracert 1 2

# loglevel: debug lines appear, then stop again
off=$(stat -c %s "$T/sm.log")
fab_check loglevel-debug ctl loglevel debug
fab_check loglevel-status grep -qx 'log_level debug' <<<"$(ctl status)"
ctl resweep >/dev/null
sm_wait_up "$T/sm" "$off" 30 >/dev/null
fab_check loglevel-debug-lines grep -q '\[DEBUG\]' <(tail -c +"$((off + 1))" "$T/sm.log")
fab_check loglevel-info ctl loglevel info
ctl loglevel loud >/dev/null 2>&1
fab_check loglevel-bad-exit1 test $? -eq 1
# OpenSM's -D flags: 0x03 (errors and info) is info, 0x0f debug
out=$(ctl loglevel 0x0f)
fab_check loglevel-opensm-flags-debug grep -qF -- '-> debug (OpenSM log flags 0x0f)' <<<"$out"
fab_check loglevel-opensm-flags-status grep -qx 'log_level debug' <<<"$(ctl status)"
out=$(ctl loglevel 0x03)
fab_check loglevel-opensm-flags-info grep -qF -- 'debug -> info (OpenSM log flags 0x03)' <<<"$out"

# Which socket without --socket: the instances under $IBSM_RUN_DIR (for
# /run/ibsm), each INSTANCE/ibsm.sock.  One there: found and used; two:
# both named, none used (exit 2); -i NAME picks one; none: said (exit 1).
R=$T/run
mkdir -p "$R/empty" "$R/one" "$R/two/two"
ln -s "$T/sock" "$R/one/one"
ln -s "$T/sock" "$R/two/one"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$R/two/two/ibsm.sock"
# (this daemon: the one whose control_socket is $SOCK, not another
# ibsm's on this host)
out=$(IBSM_RUN_DIR=$R/one "$CTL" dump-config 2>&1)
fab_check ctl-find-one-instance grep -q "^control_socket $SOCK " <<<"$out"
out=$(IBSM_RUN_DIR=$R/two "$CTL" status 2>&1)
rc=$?
fab_check ctl-find-several-exit2 test "$rc" -eq 2
fab_check ctl-find-several-named grep -qF "2 ibsm control sockets: instances one, two; pick one with -i/--instance NAME" <<<"$out"
out=$(IBSM_RUN_DIR=$R/two "$CTL" -i one dump-config 2>&1)
fab_check ctl-instance-option grep -q "^control_socket $SOCK " <<<"$out"
out=$(IBSM_RUN_DIR=$R/two "$CTL" --instance=one loglevel info 2>&1)
fab_check ctl-instance-option-long grep -q '^log level .* -> info$' <<<"$out"
out=$(IBSM_RUN_DIR=$R/empty "$CTL" status 2>&1)
rc=$?
fab_check ctl-find-none-said test "$rc" -eq 1 -a -n "$(grep -F "no ibsm control socket: neither $R/empty/ibsm.sock nor $R/empty/INSTANCE/ibsm.sock" <<<"$out")"

# dump-config: value and source of each key
ctl dump-config >"$T/dump.txt"
fab_check dump-exit0 test $? -eq 0
fab_check dump-file-line grep -qx "sm_priority 3 # $T/opensm.conf:2" "$T/dump.txt"
fab_check dump-cmdline grep -qx "control_socket $SOCK # command line" "$T/dump.txt"
fab_check dump-default grep -qx "lmc 0 # default" "$T/dump.txt"
fab_check dump-unimplemented grep -qx "avoid_throttled_links FALSE # default (not implemented)" "$T/dump.txt"
ctl --json dump-config >"$T/dump.json"
fab_check dump-json python3 -c '
import json, sys
d = {k["key"]: k for k in json.load(open(sys.argv[1]))}
assert d["sm_priority"]["value"] == "3", d["sm_priority"]
assert d["sm_priority"]["source"].endswith("opensm.conf:2"), d["sm_priority"]
assert d["avoid_throttled_links"]["implemented"] is False
assert d["qos"]["implemented"] is True
assert len(d) > 160, len(d)
' "$T/dump.json"

# reload: a new priority, reported and applied (sminfo sees it)
sed -i 's/^sm_priority 3/sm_priority 6/' "$T/opensm.conf"
out=$(ctl reload 2>&1)
fab_check reload-ok test $? -eq 0
fab_check reload-says-change grep -qx 'changed: sm_priority 3 -> 6' <<<"$out"
for ((i = 0; i < 50; i++)); do
	si=$(fab_run "$DIAG" sminfo 2>/dev/null)
	grep -q 'priority 6' <<<"$si" && break
	sleep 0.2
done
fab_check reload-sminfo-priority grep -q 'priority 6' <<<"$si"

# reload: a broken opensm.conf is not applied, its errors come back
cp "$T/opensm.conf" "$T/opensm.conf.good"
printf 'sm_priority 99\nlmc x\n' >>"$T/opensm.conf"
out=$(ctl reload 2>&1)
fab_check reload-badconf-exit1 test $? -eq 1
fab_check reload-badconf-line4 grep -q "^error: $T/opensm.conf:4: sm_priority 99: expected an integer 0-15" <<<"$out"
fab_check reload-badconf-line5 grep -q "^error: $T/opensm.conf:5: lmc x: expected" <<<"$out"
fab_check reload-badconf-kept grep -qx 'priority 6' <<<"$(ctl status)"
# the log names who asked for it: the control socket, not SIGHUP
fab_check reload-badconf-logged grep -q "ERR 0901: control socket reload: $T/opensm.conf has 2 errors" "$T/sm.log"
cp "$T/opensm.conf.good" "$T/opensm.conf"

# reload: a broken partitions file: every FILE:LINE error of it, as
# `ibsmctl partitions check` prints them, and the partitions stay
cp "$T/partitions.conf" "$T/partitions.good"
printf 'x=0x0005 : ALL\n' >>"$T/partitions.conf"
printf 'y=0xZZ : ALL ;\n' >>"$T/partitions.conf"
"$CTL" partitions check "$T/partitions.conf" 2>&1 | grep -v ': warning: ' >"$T/check.err"
out=$(ctl reload 2>&1)
fab_check reload-badparts-exit1 test $? -eq 1
sed -n 's/^error: //p' <<<"$out" | grep "^$T/partitions.conf:" >"$T/reload.err"
fab_check reload-badparts-has-errors test -s "$T/check.err"
fab_check reload-badparts-same-errors diff "$T/check.err" "$T/reload.err"
fab_check reload-badparts-says-kept grep -q 'not applied: the partitions in force stay' <<<"$out"
fab_check reload-badparts-kept grep -qx 'partitions 2' <<<"$(ctl status)"

# partitions apply through the socket: a broken file is refused before
# anything is sent; a good one is reloaded with the outcome printed
"$CTL" partitions apply "$T/partitions.conf" --socket "$SOCK" >/dev/null 2>&1
fab_check apply-broken-exit1 test $? -eq 1
cp "$T/partitions.good" "$T/partitions.new"
echo 'compute=0x0003 : ALL_CAS=limited ;' >>"$T/partitions.new"
off=$(stat -c %s "$T/sm.log")
out=$("$CTL" partitions apply "$T/partitions.conf" --from "$T/partitions.new" \
	--socket "$SOCK" 2>&1)
fab_check apply-socket-exit0 test $? -eq 0
fab_check apply-socket-outcome grep -q 'changed: partitions: 1 added, 0 removed' <<<"$out"
fab_check apply-socket-reloaded grep -q 'the SM reloaded it' <<<"$out"
sm_wait_up "$T/sm" "$off" 30 >/dev/null
fab_check apply-socket-partitions grep -qx 'partitions 3' <<<"$(ctl status)"

# malformed requests: random lines, long lines, half lines, drops
start=$SECONDS
out=$(python3 "$FAB_LIB/ctl_flood.py" "$SOCK" flood "$FLOOD" 13 2>&1)
rc=$?
printf '  %s (%d s)\n' "$(head -n 1 <<<"$out")" "$((SECONDS - start))"
fab_check "flood-$FLOOD" test "$rc" -eq 0 || printf '%s\n' "$out" | head -n 20
fab_check stalled-client-dropped python3 "$FAB_LIB/ctl_flood.py" "$SOCK" stall 10
fab_check too-many-clients python3 "$FAB_LIB/ctl_flood.py" "$SOCK" clients 16
fab_check status-after-abuse grep -qx 'state MASTER' <<<"$(ctl status)"
fab_check daemon-alive sm_alive

uid=
# A second user: refused by the 0600 file, and with the mode opened (a
# mistake an admin could make) by the SO_PEERCRED check.
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null &&
	command -v setpriv >/dev/null; then
	user=ibsmctltest
	if ! id "$user" >/dev/null 2>&1 &&
		useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$user" 2>/dev/null; then
		made_user=1	# removed again at the end
	fi
	if id "$user" >/dev/null 2>&1; then
		uid=$(id -u "$user")
		as_user() {
			setpriv --reuid="$uid" --regid="$(id -g "$user")" \
				--clear-groups "$@"
		}
		chmod 0711 "$T"
		chmod 0755 "$T/sock"
		out=$(as_user "$CTL" --socket "$SOCK" status 2>&1)
		rc=$?
		fab_check user-refused-by-mode test "$rc" -eq 1
		fab_check user-refused-by-mode-says grep -q 'Permission denied' <<<"$out"
		chmod 0666 "$SOCK"
		out=$(as_user "$CTL" --socket "$SOCK" status 2>&1)
		rc=$?
		fab_check user-refused-by-peercred test "$rc" -eq 1
		fab_check user-refused-by-peercred-says grep -q "permission denied: uid $uid is neither root nor the socket's owner" <<<"$out"
		fab_check user-refused-logged grep -q "ERR 1003: control socket: pid [0-9]* uid $uid refused" "$T/sm.log"
		chmod 0600 "$SOCK"
		fab_check root-still-served grep -qx 'state MASTER' <<<"$(ctl status)"
	else
		fab_fail second-user "useradd could not create $user"
	fi
else
	echo "SKIP second-user: not root or no useradd/setpriv (ctl_peer_allowed is unit-tested in check_ctl)"
fi

sm_stop
rc=$?
fab_check sm-stop-exit0 test "$rc" -eq 0
fab_check socket-removed test ! -e "$SOCK"
fab_check no-sanitizer-report bash -c "! grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' '$T/sm.out'"

# ibsm run by that second user: the socket is the user's, the user and
# root are served, a third uid (with the mode opened) is refused.
if [ -n "${uid:-}" ]; then
	U=$T/user
	mkdir -p "$U/sm.cache"
	: >"$U/sm.log"
	chown -R "$uid:$(id -g "$user")" "$U"
	chmod 0777 "$T/run"	# umad2sim writes sys-<pid> there
	FAB_WRAP=(setpriv --reuid="$uid" --regid="$(id -g "$user")" --clear-groups)
	sm_start H0001 "$U/sm" --control-socket "$U/ibsm.sock"
	FAB_WRAP=()
	if sm_wait_up "$U/sm" 0 60 >/dev/null; then
		fab_check owner-socket-mode test "$(stat -c '%F %a %u' "$U/ibsm.sock")" = "socket 600 $uid"
		fab_check owner-served bash -c "setpriv --reuid=$uid --regid=$(id -g "$user") --clear-groups '$CTL' --socket '$U/ibsm.sock' status | grep -qx 'state MASTER'"
		fab_check owner-root-served grep -qx 'state MASTER' <<<"$("$CTL" --socket "$U/ibsm.sock" status)"
		chmod 0666 "$U/ibsm.sock"
		out=$(setpriv --reuid=65001 --regid=65001 --clear-groups "$CTL" --socket "$U/ibsm.sock" status 2>&1)
		rc=$?
		fab_check owner-third-uid-refused test "$rc" -eq 1
		fab_check owner-third-uid-refused-says grep -q "permission denied: uid 65001 is neither root nor the socket's owner" <<<"$out"
	else
		fab_fail owner-sm-up "$(tail -n 3 "$U/sm.out")"
	fi
	sm_stop
	rc=$?
	fab_check owner-sm-stop-exit0 test "$rc" -eq 0
fi

[ -n "${made_user:-}" ] && userdel "$user" 2>/dev/null

fab_summary
