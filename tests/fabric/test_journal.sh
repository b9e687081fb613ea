#!/usr/bin/env bash
# test_journal.sh - ibsm's journal entries (ibsm built with libsystemd).
#
# With standard error on the journal's stream ($JOURNAL_STREAM names its
# device and inode, as systemd sets it), ibsm sends errors, warnings and
# events to the journal as entries with fields (sd_journal_sendv), not
# as text.  journald is not running here: the test runs itself in a
# private mount namespace (unshare -m) with a tmpfs on /run/systemd and
# its own listener (journal_listen.py) bound at
# /run/systemd/journal/socket, where libsystemd sends; the host's
# /run/systemd is untouched.
#
#   1. A duplicate GUID (ibsim `Guid "H0004" <GUID of H0002>`) before
#      the first sweep: an entry PRIORITY=3, IBSM_CODE=0103,
#      MESSAGE_ID=<base>0103, NODE_GUID= the GUID, PATH= and FIRST_PATH=
#      the two directed routes, PEER_GUID/PEER_PORT the switch port the
#      twin hangs off, MESSAGE= the log's text.
#   2. SUBNET UP: PRIORITY=6, IBSM_CODE=0330, SM_PORT_GUID=, LID=,
#      SWITCHES=, CAS=.
#   3. Nothing of those on the stream as text ("<3>..."), and the log
#      file has both lines as always.
#   Built without libsystemd: the lines on the stream with their priority
#   prefix ("<3>[ERR] ERR 0103: ..."), nothing on the socket.
#   4. No journal socket (journald not running): ibsm -o writes the
#      lines on the stream with their priority prefix, as without libsystemd.
set -u

if [ -z "${IBSM_JOURNAL_NS:-}" ]; then
	if ! unshare -m true 2>/dev/null; then
		echo "FAIL journal-namespace (unshare -m failed: root needed)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	IBSM_JOURNAL_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib_sm.sh"

MSGID_BASE=debb9365329649948ff2664af053
NET=$FAB_TOPO/fat2-small.net

if [ ! -x "$IBSM" ]; then
	fab_fail ibsm-built "$IBSM is not built"
	fab_summary
	exit 1
fi
# Built without libsystemd, the same run shows the fallback: the lines
# on the stream with their priority, nothing on the journal's socket.
WITH_SD=
"$IBSM" --version | grep -q 'with libsystemd' && WITH_SD=1
mkdir -p /run/systemd
if ! mount -t tmpfs -o mode=0755 tmpfs /run/systemd ||
	! mkdir -p /run/systemd/journal; then
	fab_fail journal-tmpfs "cannot mount a tmpfs on /run/systemd"
	fab_summary
	exit 1
fi
JSOCK=/run/systemd/journal/socket
JOUT=$FAB_TMP/journal.json
python3 "$FAB_LIB/journal_listen.py" "$JSOCK" "$JOUT" 300 &
JPID=$!
: >"$FAB_TMP/pids/$JPID"
for _ in $(seq 50); do
	[ -S "$JSOCK" ] && break
	sleep 0.1
done

field() {
	sed -n "s/^$1:\.*//p" | head -n 1
}

# entry FILTER...: the first journal entry (of one JSON object per line)
# whose fields have the given values ("KEY=VALUE" each, a VALUE ending
# in * a prefix), printed as JSON.
entry() {
	python3 - "$JOUT" "$@" <<'PY'
import json, sys
want = [a.split("=", 1) for a in sys.argv[2:]]
for line in open(sys.argv[1]):
    e = json.loads(line)
    ok = True
    for k, v in want:
        got = e.get(k)
        if got is None:
            ok = False
        elif v.endswith("*"):
            ok = got.startswith(v[:-1])
        else:
            ok = got == v
        if not ok:
            break
    if ok:
        print(json.dumps(e, sort_keys=True))
        break
PY
}

if ! fab_sim_start "$NET" journal; then
	fab_fail sim-start
	fab_summary
	exit 1
fi
g=$(fab_run H0001 smpquery -D nodeinfo 0,1,2 2>/dev/null | field Guid)
if [ -z "$g" ] || ! fab_cmd "Guid \"H0004\" $g" >/dev/null; then
	fab_fail dup-guid-made "no GUID at 0,1,2 ($g)"
	fab_summary
	exit 1
fi

SM=$FAB_TMP/sm
mkdir -p "$SM"
: >"$SM/stderr"
JS=$(stat -c '%d:%i' "$SM/stderr")
JOURNAL_STREAM=$JS fab_spawn H0001 "$IBSM" -f "$SM/ibsm.log" --cache-dir "$SM" \
	--dump-dir "$SM" --control-socket "$SM/ctl.sock" >/dev/null 2>>"$SM/stderr"
SM_PID=$FAB_SPAWN_PID
up=
for _ in $(seq 600); do
	grep -q 'SUBNET UP' "$SM/ibsm.log" 2>/dev/null && up=1 && break
	kill -0 "$SM_PID" 2>/dev/null || break
	sleep 0.1
done
sleep 0.5
if [ -n "$up" ]; then
	fab_pass subnet-up
else
	fab_fail subnet-up "$(tail -n 5 "$SM/ibsm.log" "$SM/stderr" 2>&1)"
fi

if [ -z "$WITH_SD" ]; then
	if grep -q "^<3>\[ERR\] ERR 0103: duplicate node GUID $g" "$SM/stderr" &&
		[ ! -s "$JOUT" ]; then
		fab_pass without-libsystemd-text-with-priority
	else
		fab_fail without-libsystemd-text-with-priority "$(head -n 2 "$SM/stderr")"
	fi
else
# 1. The duplicate GUID.
e=$(entry IBSM_CODE=0103 PRIORITY=3 "MESSAGE_ID=${MSGID_BASE}0103" \
	"NODE_GUID=$g" SYSLOG_IDENTIFIER=ibsm "MESSAGE=ERR 0103: duplicate node GUID $g: *" |
	head -n 1)
if [ -n "$e" ] && python3 -c '
import json, sys
e = json.loads(sys.argv[1])
paths = {e["PATH"], e["FIRST_PATH"]}
assert paths == {"0,1,2", "0,1,4"}, paths
assert e["PEER_GUID"].startswith("0x") and int(e["PEER_PORT"]) > 0
' "$e"; then
	fab_pass journal-dup-guid-fields
else
	fab_fail journal-dup-guid-fields "entry: ${e:-none}; 0103 entries: $(grep -c 0103 "$JOUT")"
	head -n 5 "$JOUT" | sed 's/^/    /'
fi

# 2. SUBNET UP.
port_guid=$(fab_run H0001 smpquery -D nodeinfo 0 2>/dev/null | field PortGuid)
e=$(entry MESSAGE="SUBNET UP" IBSM_CODE=0330 PRIORITY=6 \
	"MESSAGE_ID=${MSGID_BASE}0330" "SM_PORT_GUID=$port_guid" | head -n 1)
if [ -n "$e" ] && python3 -c '
import json, sys
e = json.loads(sys.argv[1])
assert int(e["LID"]) > 0 and int(e["SWITCHES"]) > 0 and int(e["CAS"]) > 0, e
' "$e"; then
	fab_pass journal-subnet-up-fields
else
	fab_fail journal-subnet-up-fields "entry: ${e:-none} (port $port_guid)"
	grep 'SUBNET' "$JOUT" | head -n 3 | sed 's/^/    /'
fi

# 3. Entries, not text on the stream; the log file as always.
if ! grep -q 'ERR 0103\|SUBNET UP' "$SM/stderr" &&
	grep -q "ERR 0103: duplicate node GUID $g" "$SM/ibsm.log" &&
	grep -q 'SUBNET UP' "$SM/ibsm.log"; then
	fab_pass journal-not-text
else
	fab_fail journal-not-text "$(grep -c . "$SM/stderr") lines on the stream"
	head -n 3 "$SM/stderr" | sed 's/^/    /'
fi
fi

kill -TERM "$SM_PID" 2>/dev/null
wait "$SM_PID"
rc=$?
rm -f "$FAB_TMP/pids/$SM_PID"
if [ "$rc" -eq 0 ] && ! grep -q 'ERROR: AddressSanitizer\|runtime error:' "$SM/stderr"; then
	fab_pass exit-clean
else
	fab_fail exit-clean "exit $rc"
	grep -A5 'ERROR: AddressSanitizer\|runtime error:' "$SM/stderr" | head -n 20
fi

# 4. No journal socket (journald not running; libsystemd would drop the
# entries without a word): ibsm -o writes the lines on the stream with
# their priority, as without libsystemd.
kill -TERM "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
rm -f "$FAB_TMP/pids/$JPID" "$JSOCK"
O=$FAB_TMP/once
mkdir -p "$O"
: >"$O/stderr"
JOURNAL_STREAM=$(stat -c '%d:%i' "$O/stderr") fab_run H0001 "$IBSM" -o -f "$O/ibsm.log" \
	--cache-dir "$O" --dump-dir "$O" >/dev/null 2>>"$O/stderr"
if grep -q "^<3>\[ERR\] ERR 0103: duplicate node GUID $g" "$O/stderr"; then
	fab_pass journal-absent-text-with-priority
else
	fab_fail journal-absent-text-with-priority "$(head -n 3 "$O/stderr")"
fi
fab_summary
