#!/usr/bin/env bash
# tests/fabric/test_config.sh - opensm.conf and OpenSM's command line.
#
# 1. No simulator: every option OpenSM 3.3.23's own `opensm --help` lists
#    is walked from that help text and given to ibsm (with a sample value
#    where it takes one) under --check-config: none may exit 2 (an unknown
#    option or a refused value), each must exit 0.  Options of features
#    ibsm lacks say so on stderr ("--do_mesh_analysis: do_mesh_analysis is
#    yet; ignored").  `opensm -c` output passes `ibsm -F FILE --check-config`;
#    `ibsm -c` output is read by OpenSM with no complaint and gives back
#    OpenSM's own keys and values (but for ibsm's default log file).
#    Files with errors (tests/config/bad/, a partitions.conf, a reference
#    topology) are named with FILE:LINE.
# 2. On ibsim (tiny): `-p 3` over `sm_priority 7` in the -F file, seen by
#    sminfo from another host; a run with -o and a handful of OpenSM
#    options brings the subnet up.
# 3. Reload: the daemon from a file with sm_priority 2; the file changed
#    to 5 and SIGHUP: the change is logged ("sm_priority 2 -> 5") and
#    sminfo reports 5.  A change of a key needing a restart (lmc) is
#    named in ERR 0904 and not applied; a file with an error (sm_priority
#    99) changes nothing (ERR 0901, sminfo still 5).
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v opensm >/dev/null || {
	fab_fail config-opensm-installed "opensm is needed for its --help and -c"
	fab_summary
	exit 1
}

# ------------------------------------------------- OpenSM's own options
PARTS=$FAB_TOP/tests/partitions/rhel-5.5.conf
EMPTY=$FAB_TMP/empty.txt
: >"$EMPTY"
opensm -c "$FAB_TMP/opensm.conf" >/dev/null 2>&1

# A valid argument for an option of `opensm --help`, by its <placeholder>.
sample() {
	local opt=$1 meta=$2
	case $opt in
	--config) echo "$FAB_TMP/opensm.conf" ;;
	--create-config) echo "$FAB_TMP/created.conf" ;;
	--guid | --smkey | --cc_key) echo 0x0002c90300001234 ;;
	--subnet_prefix) echo 0xfe80000000000000 ;;
	--routing_engine) echo minhop ;;
	--console) echo local ;;
	--part_enforce) echo both ;;
	--Pconfig) echo "$PARTS" ;;
	--dump_files_dir) echo "$FAB_TMP" ;;
	--log_file) echo "$FAB_TMP/walk.log" ;;
	--log_prefix) echo ibsm ;;
	--D) echo 0x03 ;;
	--debug) echo 0 ;;
	--console-port) echo 10000 ;;
	--timeout) echo 200 ;;
	--maxsmps | --retries) echo 4 ;;
	--priority) echo 5 ;;
	*)
		case $meta in
		*file* | *path* | *File*) echo "$EMPTY" ;;
		*) echo 1 ;;
		esac
		;;
	esac
}

help=$(opensm --help 2>&1)
walked=0
bad_opts=
while IFS= read -r line; do
	# "--name, -x <arg>", "--name <arg>", "--name, -x [a|b]", "--name"
	[[ $line =~ ^(--[A-Za-z][A-Za-z0-9_-]*)(,\ (-[A-Za-z?]))?(\ ([<[].*))?$ ]] || continue
	long=${BASH_REMATCH[1]}
	short=${BASH_REMATCH[3]}
	meta=${BASH_REMATCH[5]}
	meta=${meta%%(DEPRECATED)*}
	meta=${meta%% *  *}
	[ "$long" = "--help" ] && continue # exits 0 at once: checked below
	for spell in "$long" $short; do
		[ "$spell" = "-?" ] && continue
		args=("$spell")
		case $meta in
		"<"* | "["*) args+=("$(sample "$long" "$meta")") ;;
		esac
		out=$(timeout 20 "$IBSM" "${args[@]}" --check-config 2>&1 >/dev/null)
		rc=$?
		walked=$((walked + 1))
		if [ "$rc" -ne 0 ]; then
			bad_opts="$bad_opts ${args[*]} (exit $rc: ${out%%$'\n'*});"
		fi
	done
done <<<"$help"
echo "    options walked from opensm --help: $walked"
if [ "$walked" -ge 100 ] && [ -z "$bad_opts" ]; then
	fab_pass config-every-opensm-option-accepted
else
	fab_fail config-every-opensm-option-accepted "walked $walked;$bad_opts"
fi
for o in -h --help -?; do
	if "$IBSM" "$o" >/dev/null 2>&1; then
		fab_pass "config-help$o"
	else
		fab_fail "config-help$o"
	fi
done

# Unknown options and missing arguments still exit 2.
for args in "--no-such-option" "-j" "--------" "-p" "--config"; do
	# shellcheck disable=SC2086 # one or two words
	out=$("$IBSM" $args 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "^ibsm: .*\(unknown option\|expected an argument\)" <<<"$out"; then
		fab_pass "config-refused$args"
	else
		fab_fail "config-refused$args" "exit $rc: $out"
	fi
done

out=$("$IBSM" --do_mesh_analysis -S /x -I -B --perfmgr --check-config 2>&1)
if grep -qF -- "--do_mesh_analysis: do_mesh_analysis is not implemented yet; ignored" <<<"$out" &&
	grep -qF -- "-S: sa_db_file is not implemented yet; ignored" <<<"$out" &&
	! grep -qF -- "-I" <<<"$out" &&
	! grep -qF -- "-B" <<<"$out" &&
	! grep -qF -- "--perfmgr" <<<"$out"; then
	fab_pass config-unimplemented-option-said
else
	fab_fail config-unimplemented-option-said "$out"
fi

# A refused value still exits 2, naming what was expected.
out=$("$IBSM" -p 16 --check-config 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "ibsm: -p 16: expected an integer 0-15" <<<"$out"; then
	fab_pass config-bad-option-value
else
	fab_fail config-bad-option-value "exit $rc: $out"
fi

# opensm -c output: starts, no warning (every value is OpenSM's
# default), the keys ibsm does not implement named on one line.
out=$("$IBSM" -F "$FAB_TMP/opensm.conf" --check-config 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q "warning:\|unknown key\|would not start" <<<"$out" &&
	grep -q "ibsm starts with it: 0 warnings" <<<"$out" &&
	grep -q "set to their defaults, not implemented either: .*cc_cct" <<<"$out"; then
	fab_pass config-opensm-c-checks-clean
else
	fab_fail config-opensm-c-checks-clean "exit $rc: $out"
fi

# tests/config/bad/: each file rejected by --check-config (exit 2) with
# the exact FILE:LINE message its first line names; an unknown key is a
# warning (exit 0), an error only under --strict.
nbad=0
badout=
for f in "$FAB_TOP"/tests/config/bad/*.conf; do
	want=$(sed -n '1s/^# expect: \([0-9]*\): /\1: /p' "$f")
	out=$("$IBSM" -F "$f" --check-config 2>&1)
	rc=$?
	nbad=$((nbad + 1))
	if [ "$rc" -ne 2 ] || ! grep -qxF "ibsm: $f:$want" <<<"$out"; then
		badout="$badout ${f##*/}: exit $rc: $out;"
	fi
done
out=$("$IBSM" -F "$FAB_TOP/tests/config/unknown.conf" --check-config 2>&1)
rc=$?
grep -qxF "ibsm: warning: $FAB_TOP/tests/config/unknown.conf:3: unknown key 'sm_prority' (ignored)" <<<"$out" &&
	[ "$rc" -eq 0 ] || badout="$badout unknown.conf: exit $rc: $out"
out=$("$IBSM" -F "$FAB_TOP/tests/config/unknown.conf" --check-config --strict 2>&1)
rc=$?
grep -q "1 warning, errors under --strict" <<<"$out" &&
	[ "$rc" -eq 2 ] || badout="$badout unknown.conf --strict: exit $rc: $out"
if [ "$nbad" -ge 25 ] && [ -z "$badout" ]; then
	fab_pass config-check-bad-files
else
	fab_fail config-check-bad-files "$nbad files;$badout"
fi
# A file naming a partitions.conf with errors: its FILE:LINE too.
printf 'partition_config_file %s\n' "$FAB_TOP/tests/partitions/bad/$(ls "$FAB_TOP/tests/partitions/bad" | head -1)" >"$FAB_TMP/parts.conf"
out=$("$IBSM" -F "$FAB_TMP/parts.conf" --check-config 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -q "^ibsm: $FAB_TOP/tests/partitions/bad/[^:]*:[0-9]*:" <<<"$out"; then
	fab_pass config-check-names-partitions
else
	fab_fail config-check-names-partitions "exit $rc: $out"
fi

# A reference topology with an error (topology_ref, --topology-ref): its
# FILE:LINE too; a good one passes.
printf 'Switch 4 "S1"\n[1] "H1"[1]\nCa 1 "H1"\n[9] "S1"[2]\n' >"$FAB_TMP/ref-bad.topo"
printf 'topology_ref %s\n' "$FAB_TMP/ref-bad.topo" >"$FAB_TMP/ref.conf"
out=$("$IBSM" -F "$FAB_TMP/ref.conf" --check-config 2>&1)
rc=$?
out2=$("$IBSM" --topology-ref "$FAB_TOPO/tiny.net" --check-config 2>&1)
rc2=$?
if [ "$rc" -eq 2 ] && grep -q "^ibsm: $FAB_TMP/ref-bad.topo:4: expected a port number 1-1" <<<"$out" &&
	[ "$rc2" -eq 0 ]; then
	fab_pass config-check-names-topology-ref
else
	fab_fail config-check-names-topology-ref "exit $rc: $out; good file: exit $rc2: $out2"
fi

# Every configuration error at start exits 2, the status ibsm@.service
# does not restart on: a bad -F file, an unreadable one, a bad -P file,
# a bad partitions file named by opensm.conf, a bad value, a bad option.
# None of them reaches the port (no simulator runs here).
first() { echo "$1"; }
badconf=$(first "$FAB_TOP"/tests/config/bad/*.conf)
badparts=$(first "$FAB_TOP"/tests/partitions/bad/*.conf)
startout=
start_exit() { # WHAT ARGS...: the daemon's start must exit 2
	local what=$1 rc
	shift
	out=$(timeout 20 "$IBSM" -f "$FAB_TMP/start.log" --cache-dir "$FAB_TMP/start" \
		--control-socket '(null)' "$@" 2>&1 </dev/null)
	rc=$?
	[ "$rc" -eq 2 ] || startout="$startout $what: exit $rc: ${out%%$'\n'*};"
}
start_exit bad-F -F "$badconf"
start_exit unreadable-F -F "$FAB_TMP/no-such.conf"
start_exit bad-P -P "$badparts"
start_exit bad-P-in-F -F "$FAB_TMP/parts.conf"
start_exit bad-value -p 16
start_exit bad-option --no-such-option
start_exit log-file-in-no-directory -f "$FAB_TMP/no-such-dir/ibsm.log"
start_exit check-unreadable -F "$FAB_TMP/no-such.conf" --check-config
if [ -z "$startout" ]; then
	fab_pass config-errors-exit-2
else
	fab_fail config-errors-exit-2 "$startout"
fi

# With standard error the journal's stream ($JOURNAL_STREAM names it),
# every line ibsm writes there carries its syslog priority: the warnings
# of an option and a key not implemented ("<4>", not taken for errors by
# the unit's SyslogLevel=err) and the error of no port ("<3>").
printf 'quasi_ftree_indexing TRUE\n' >"$FAB_TMP/unimpl.conf"
: >"$FAB_TMP/journal.err"
journal=$(stat -c '%d:%i' "$FAB_TMP/journal.err")
JOURNAL_STREAM=$journal timeout 20 "$IBSM" \
	-F "$FAB_TMP/unimpl.conf" --do_mesh_analysis -g 0x0000000000000001 -f "$FAB_TMP/journal.log" \
	--cache-dir "$FAB_TMP/journal" --control-socket '(null)' \
	2>>"$FAB_TMP/journal.err" </dev/null >/dev/null
out=$(cat "$FAB_TMP/journal.err")
if [ -n "$out" ] && ! grep -v '^<[0-7]>' <<<"$out" | grep -q . &&
	grep -q '^<4>ibsm: --do_mesh_analysis: do_mesh_analysis is not implemented yet; ignored$' <<<"$out" &&
	grep -q '^<4>ibsm: .*unimpl.conf: 1 key not implemented yet and ignored: quasi_ftree_indexing$' <<<"$out" &&
	grep -q '^<4>\[WARN\] ERR 0905: ' <<<"$out" && grep -q '^<3>ibsm: cannot open' <<<"$out"; then
	fab_pass config-journal-lines-have-priority
else
	fab_fail config-journal-lines-have-priority "$out"
fi

# ibsm -c, read back by OpenSM (its -c after -F writes what it read).
if "$IBSM" -c "$FAB_TMP/ibsm.conf" >/dev/null 2>&1 &&
	out=$(opensm -F "$FAB_TMP/ibsm.conf" -c "$FAB_TMP/back.conf" 2>&1) &&
	! grep -qi "error\|unknown\|invalid\|warning" <<<"$out" &&
	diff <(grep -v '^#' "$FAB_TMP/opensm.conf" | grep . | grep -v '^log_file ') \
		<(grep -v '^#' "$FAB_TMP/back.conf" | grep . | grep -v '^log_file ') \
		>"$FAB_TMP/back.diff"; then
	fab_pass config-ibsm-c-read-by-opensm
else
	fab_fail config-ibsm-c-read-by-opensm "$out $(head -5 "$FAB_TMP/back.diff" 2>/dev/null)"
fi

# ---------------------------------------------------- on the simulator
fab_sim_start "$FAB_TOPO/tiny.net" config || {
	fab_summary
	exit 1
}

priority() {
	fab_run H0002 sminfo 2>/dev/null | sed -n 's/.* priority \([0-9]*\) .*/\1/p'
}

# The ibsm process itself (fab_spawn's PID is the `timeout` around it).
ibsm_pid() {
	pgrep -P "$FAB_SM_PID" | head -n 1
}

# A run with -o and OpenSM options ibsm implements or ignores.
cp "$FAB_TMP/opensm.conf" "$FAB_TMP/once.conf"
if fab_run H0001 "$IBSM" -F "$FAB_TMP/once.conf" -o -f "$FAB_TMP/once.log" \
	--cache-dir "$FAB_TMP/once" --dump_files_dir "$FAB_TMP/once" \
	-e -y -x -Q -W -Z both -R minhop -t 200 --retries 3 -n 4 \
	>"$FAB_TMP/once.out" 2>&1 && grep -q "SUBNET UP" "$FAB_TMP/once.log"; then
	fab_pass config-once-with-opensm-options
else
	fab_fail config-once-with-opensm-options "$(tail -5 "$FAB_TMP/once.out" "$FAB_TMP/once.log")"
fi

# -p 3 over sm_priority 7
CONF=$FAB_TMP/sm.conf
sed 's/^sm_priority .*/sm_priority 7/' "$FAB_TMP/opensm.conf" >"$CONF"
if fab_ibsm_start H0001 "$FAB_TMP/p3" -F "$CONF" -p 3 -s 1; then
	p=$(priority)
	if [ "$p" = 3 ]; then
		fab_pass config-cmdline-over-file
	else
		fab_fail config-cmdline-over-file "sminfo priority '$p', want 3"
	fi
else
	fab_fail config-cmdline-over-file "no SUBNET UP"
fi
fab_ibsm_stop || fab_fail config-p3-stop-clean "exit status or sanitizer report"

# The file alone: sm_priority 2; then 5 on SIGHUP.
sed 's/^sm_priority .*/sm_priority 2/' "$FAB_TMP/opensm.conf" >"$CONF"
LOG=$FAB_TMP/hup/ibsm.log
wait_log() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -qF -- "$1" "$LOG" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
if fab_ibsm_start H0001 "$FAB_TMP/hup" -F "$CONF" -s 1 && [ "$(priority)" = 2 ]; then
	fab_pass config-file-priority
else
	fab_fail config-file-priority "sminfo priority '$(priority)', want 2"
fi
sed -i 's/^sm_priority .*/sm_priority 5/' "$CONF"
kill -HUP "$(ibsm_pid)"
if wait_log "config: sm_priority 2 -> 5" && [ "$(priority)" = 5 ]; then
	fab_pass config-sighup-priority
else
	fab_fail config-sighup-priority "sminfo priority '$(priority)'; $(grep config: "$LOG")"
fi
sed -i 's/^lmc .*/lmc 1/' "$CONF"
kill -HUP "$(ibsm_pid)"
if wait_log "ERR 0904: SIGHUP: lmc changed in $CONF"; then
	fab_pass config-sighup-restart-key-named
else
	fab_fail config-sighup-restart-key-named "$(grep ERR "$LOG")"
fi
sed -i 's/^sm_priority .*/sm_priority 99/' "$CONF"
kill -HUP "$(ibsm_pid)"
if wait_log "ERR 0902: $CONF:" && wait_log "ERR 0901: SIGHUP: $CONF has 1 error: nothing changed" &&
	[ "$(priority)" = 5 ]; then
	fab_pass config-sighup-bad-file-changes-nothing
else
	fab_fail config-sighup-bad-file-changes-nothing "priority $(priority); $(grep ERR "$LOG")"
fi
# Each daemon here is a restart on the same subnet (after the -o run):
# its port kept its LID and sent trap 144 when ibsm took IsSM, before
# the first sweep knew the port.  That is our own trap, not an unknown
# port's (ERR 0306).
if [ -s "$FAB_TMP/p3/ibsm.log" ] && [ -s "$LOG" ] &&
	! grep -h 'ERR 0306' "$FAB_TMP/p3/ibsm.log" "$LOG" | grep -q .; then
	fab_pass config-restart-own-trap-not-rejected
else
	fab_fail config-restart-own-trap-not-rejected "$(grep -h 'ERR 0306' "$FAB_TMP/p3/ibsm.log" "$LOG")"
fi
if fab_ibsm_stop; then
	fab_pass config-hup-stop-clean
else
	fab_fail config-hup-stop-clean "exit status or sanitizer report"
fi

fab_summary
