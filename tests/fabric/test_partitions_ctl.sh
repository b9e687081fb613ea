#!/usr/bin/env bash
# tests/fabric/test_partitions_ctl.sh - `ibsmctl partitions` on files,
# with no simulator (the subcommand opens no port): check on good and
# broken files (exit 0 / 1, the exact FILE:LINE:COLUMN lines of the
# broken files' .err), list/show, and add/remove/set round trips compared
# with cmp against expected files: every byte around the edit kept, the
# old file kept as FILE~, a refused edit leaving the file untouched.
# Also `ibsmctl qos check` on tests/qos (exit 0 / 2, the .err lines).
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset LD_PRELOAD
CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
PD=$FAB_TOP/tests/partitions
T=$FAB_TMP

# check on every good file: exit 0, no error line.
for f in "$PD"/*.conf; do
	fab_check "check-good-$(basename "$f" .conf)" \
		"$CTL" partitions check "$f"
done

# check on every broken file: exit 1 and exactly the .err lines.
for f in "$PD"/bad/*.conf; do
	n=$(basename "$f" .conf)
	out=$(cd "$PD" && "$CTL" partitions check "bad/$n.conf" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | grep -v ': warning: ')" = \
		"$(cat "$PD/bad/$n.err")" ]; then
		fab_pass "check-bad-$n"
	else
		fab_fail "check-bad-$n" "exit $rc"
		printf '%s\n' "$out" | head -n 5 | sed 's/^/    /'
	fi
done

# ibsmctl qos check (a QoS policy file, no port either): exit 0 and a
# summary on every good file, exit 2 and exactly the .err line on every
# broken one.
QD=$FAB_TOP/tests/qos
for f in "$QD"/*.conf; do
	fab_check "qos-check-good-$(basename "$f" .conf)" \
		"$CTL" qos check "$f"
done
out=$("$CTL" qos check "$QD/opensm-doc.conf")
fab_check qos-check-summary grep -q \
	'OK: 4 port groups, 2 QoS levels, 4 match rules, 14 qos-ulps rules' <<<"$out"
for f in "$QD"/bad/*.conf; do
	n=$(basename "$f" .conf)
	out=$(cd "$QD" && "$CTL" qos check "bad/$n.conf" 2>&1)
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$out" = "$(cat "$QD/bad/$n.err")" ]; then
		fab_pass "qos-check-bad-$n"
	else
		fab_fail "qos-check-bad-$n" "exit $rc"
		printf '%s\n' "$out" | head -n 5 | sed 's/^/    /'
	fi
done

# list/show
out=$("$CTL" partitions list "$PD/rhel-5.5.conf")
fab_check list-rhel grep -q '^ib0 2 *0x0002 ipoib' <<<"$out"
# No simulator here: no SM to resolve members with, and list says so.
fab_check list-says-file-only grep -q '^# file only (members not resolved): ' <<<"$out"
out=$("$CTL" partitions show "$PD/rhel-5.5.conf" 'ib0 2')
fab_check show-rhel-mgid grep -q 'mgid=ff12:601b::1:3' <<<"$out"
"$CTL" partitions show "$PD/rhel-5.5.conf" nosuch >/dev/null 2>&1
fab_check show-missing-exit1 test $? -eq 1

# The file under edit, and what each edit must give.
cat >"$T/p.conf" <<'CONF'
# lab partitions
Default=0x7fff, ipoib : ALL=full ;

storage=0x0002, defmember=full :   # filers
    0x0002c90300000001,
    # b is out for repair
    0x0002c90300000002=limited ;
compute=0x0003 : ALL_CAS=limited;
CONF
cp "$T/p.conf" "$T/orig.conf"

cat >"$T/want-add.conf" <<'CONF'
# lab partitions
Default=0x7fff, ipoib : ALL=full ;

storage=0x0002, defmember=full :   # filers
    0x0002c90300000001,
    # b is out for repair
    0x0002c90300000002=limited ;
compute=0x0003 : ALL_CAS=limited;
gpu=0x0004, ipoib : ALL_CAS=full;
CONF
"$CTL" partitions add "$T/p.conf" 'gpu=0x0004, ipoib : ALL_CAS=full'
fab_check add-exit0 test $? -eq 0
fab_check add-bytes cmp "$T/p.conf" "$T/want-add.conf"
fab_check add-backup cmp "$T/p.conf~" "$T/orig.conf"

cat >"$T/want-set.conf" <<'CONF'
# lab partitions
Default=0x7fff, ipoib : ALL=full ;

storage=0x0002, defmember=full :   # filers
    0x0002c90300000001,
    # b is out for repair
    0x0002c90300000002=full, 0x0002c90300000003=limited ;
compute=0x0003 : ALL_CAS=limited;
gpu=0x0004, ipoib : ALL_CAS=full;
CONF
"$CTL" partitions set "$T/p.conf" storage 0x0002c90300000002=full &&
	"$CTL" partitions set "$T/p.conf" storage 0x0002c90300000003=limited
fab_check set-exit0 test $? -eq 0
fab_check set-bytes cmp "$T/p.conf" "$T/want-set.conf"

"$CTL" partitions remove "$T/p.conf" gpu
fab_check remove-exit0 test $? -eq 0
grep -v '^gpu=' "$T/want-set.conf" >"$T/want-rm.conf"
fab_check remove-bytes cmp "$T/p.conf" "$T/want-rm.conf"

# Refused: an edit giving a broken file, a missing partition, a bad
# definition.  Exit 1, the file and its backup as they were.
cp "$T/p.conf" "$T/before.conf"
cp "$T/p.conf~" "$T/before.bak"
out=$("$CTL" partitions add "$T/p.conf" 'bad=0xzz : ALL' 2>&1)
rc=$?
fab_check refuse-add-exit1 test "$rc" -eq 1
fab_check refuse-add-names-line grep -q "^$T/p.conf:9:[0-9]*: " <<<"$out"
"$CTL" partitions set "$T/p.conf" storage 'zz=full' 2>/dev/null
fab_check refuse-set-exit1 test $? -eq 1
"$CTL" partitions remove "$T/p.conf" nosuch 2>/dev/null
fab_check refuse-remove-exit1 test $? -eq 1
fab_check refuse-file-untouched cmp "$T/p.conf" "$T/before.conf"
fab_check refuse-backup-untouched cmp "$T/p.conf~" "$T/before.bak"
fab_check no-temp-files test "$(find "$T" -maxdepth 1 -name 'p.conf?*' | wc -l)" -eq 1

# Concurrent edits, each under the file's lock: 20 adds at once keep all
# 20.  The file is a link to the file edited (which stays a link), with
# mode 0640 and its owner and group (root:daemon when run as root); a
# temp file an edit killed 20 minutes ago left is removed, a young one
# (an edit in progress) is not.
mkdir -p "$T/real"
cp "$T/p.conf" "$T/real/c.conf"
chmod 0640 "$T/real/c.conf"
[ "$(id -u)" -eq 0 ] && chown root:daemon "$T/real/c.conf"
owner=$(stat -c %U:%G "$T/real/c.conf")
ln -s real/c.conf "$T/c.conf"
touch -d '-20 min' "$T/real/c.conf.tmpAbC123" "$T/real/c.conf~.tmpAbC123"
touch "$T/real/c.conf.tmpXyZ789"
pids=()
for ((k = 1; k <= 20; k++)); do
	"$CTL" partitions add "$T/real/c.conf" \
		"conc$k=$(printf 0x%04x $((0x100 + k))) : ALL_CAS=limited" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do
	wait "$p" || fails=$((fails + 1))
done
n=$(grep -c '^conc[0-9]*=' "$T/real/c.conf")
fab_check concurrent-adds-exit0 test "$fails" -eq 0
fab_check "concurrent-adds-all-kept ($n of 20)" test "$n" -eq 20
fab_check concurrent-adds-parse "$CTL" partitions check "$T/c.conf"
"$CTL" partitions add "$T/c.conf" "vialink=0x0200 : ALL_CAS=limited"
fab_check link-add-edits-target grep -q '^vialink=' "$T/real/c.conf"
fab_check symlink-kept test -L "$T/c.conf"
fab_check symlink-target-same test "$(readlink "$T/c.conf")" = real/c.conf
fab_check mode-kept test "$(stat -c %a "$T/real/c.conf")" = 640
fab_check "owner-kept ($owner)" test "$(stat -c %U:%G "$T/real/c.conf")" = "$owner"
fab_check backup-mode-kept test "$(stat -c %a:%U:%G "$T/real/c.conf~")" = "640:$owner"
fab_check stale-temp-removed test ! -e "$T/real/c.conf.tmpAbC123"
fab_check stale-backup-temp-removed test ! -e "$T/real/c.conf~.tmpAbC123"
fab_check young-temp-kept test -e "$T/real/c.conf.tmpXyZ789"

# apply: a stand-in SM (sleep under the name ibsm, which SIGHUP ends
# with status 129) shows who gets the signal.  A broken file or a pid
# file naming no ibsm sends nothing; a valid file sends one SIGHUP.
cp "$(command -v sleep)" "$T/ibsm"
env --default-signal=HUP "$T/ibsm" 60 &	# even under nohup
fake=$!
echo "$fake" >"$T/sm.pid"
printf 'x=0x0005 : ALL\n' >"$T/broken.conf"	# an unfinished definition
printf 'y=0xZZ : ALL ;\n' >>"$T/broken.conf"
"$CTL" partitions apply "$T/broken.conf" --pidfile "$T/sm.pid" 2>/dev/null
fab_check apply-broken-exit1 test $? -eq 1
cp "$T/p.conf" "$T/q.conf"
"$CTL" partitions apply "$T/q.conf" --from "$T/broken.conf" \
	--pidfile "$T/sm.pid" 2>/dev/null
fab_check apply-from-broken-exit1 test $? -eq 1
fab_check apply-from-broken-untouched cmp "$T/q.conf" "$T/p.conf"
echo $$ >"$T/bash.pid"
"$CTL" partitions apply "$T/p.conf" --pidfile "$T/bash.pid" 2>/dev/null
fab_check apply-not-an-sm-exit1 test $? -eq 1
fab_check apply-no-signal-yet kill -0 "$fake"
"$CTL" partitions apply "$T/q.conf" --from "$T/want-add.conf" \
	--pidfile "$T/sm.pid" >/dev/null
fab_check apply-exit0 test $? -eq 0
fab_check apply-from-written cmp "$T/q.conf" "$T/want-add.conf"
fab_check apply-from-backup cmp "$T/q.conf~" "$T/p.conf"
wait "$fake"
fab_check apply-sighup-sent test $? -eq 129

fab_summary
