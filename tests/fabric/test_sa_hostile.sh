#!/usr/bin/env bash
# tests/fabric/test_sa_hostile.sh - one host floods the SA with the
# most costly PathRecord GetTables (a P_Key nobody holds, every pair of
# ports) while the subnet is served.
#
# fat2-128 with LMC 7 (128 LIDs per host): walked pair by pair, one
# PathRecord GetTable with P_Key 0x1234 and both ends open would cost two
# minutes of the loop's CPU, so sminfo would time out and the SM stop
# answering.  Here
# H0003 sends 100 such queries a second (tests/fabric/sa_hostile flood)
# while H0005 asks PathRecord Gets and SMInfo Gets (sa_hostile probe) and
# H0002 runs sminfo; every probe must be answered, every hostile query
# too (no records: nobody is in partition 0x1234), and the SM must still
# be master afterwards.  Then the same flood in the default partition
# (every pair of the subnet, far beyond the work budget): answered
# NO_RESOURCES or BUSY, the probes still answered.  Functional checks
# only; latencies are measured by tests/bench/sa_hostile.sh.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

hostile=${SA_HOSTILE:-$(dirname "$IBSM")/../tests/fabric/sa_hostile}
[ -x "$hostile" ] || { echo "test_sa_hostile: $hostile not built" >&2; exit 1; }

fab_sim_start "$FAB_TOPO/fat2-128.net" hostile || exit 1
dir=$FAB_TMP/sm
if ! fab_ibsm_start H0001 "$dir" -l 7 -s 5; then
	fab_fail "ibsm brings fat2-128 up with LMC 7"
	fab_summary
	exit 1
fi
fab_pass "ibsm brings fat2-128 up with LMC 7"

# field FILE WORD: the number after WORD on the first line that has it.
field() {
	sed -n "s/.* $2 \([0-9]*\).*/\1/p" "$1" | head -n 1
}

# sminfo_during SECONDS OUT: sminfo from H0002 once a second; OUT gets
# one line per try, "ok" when it named the master.
sminfo_during() {
	local i
	for ((i = 0; i < $1; i++)); do
		if fab_run H0002 sminfo 2>/dev/null | grep -q SMINFO_MASTER; then
			echo ok
		else
			echo lost
		fi
		sleep 1
	done >"$2"
}

# phase NAME PKEY: flood from H0003 for 12 s; probes and sminfo meanwhile.
phase() {
	local name=$1 pkey=$2 fpid
	fab_spawn H0003 "$hostile" flood -r 100 -t 12 -k "$pkey" \
		>"$FAB_TMP/$name.flood" 2>&1
	fpid=$FAB_SPAWN_PID
	sleep 1
	fab_run H0005 "$hostile" probe -r 20 -t 8 -l 4000 \
		>"$FAB_TMP/$name.probe" 2>&1
	echo "probe exit $?" >>"$FAB_TMP/$name.probe"
	sminfo_during 3 "$FAB_TMP/$name.sminfo"
	wait "$fpid"
	rm -f "$FAB_TMP/pids/$fpid"
	sed 's/^/    /' "$FAB_TMP/$name.flood" "$FAB_TMP/$name.probe"
}

probes_answered() {
	grep -q "^probe exit 0" "$1" && grep -q "^probe path .* lost 0 " "$1" &&
		grep -q "^probe sminfo .* lost 0 " "$1"
}

sminfo_ok() {
	! grep -q lost "$1" && [ "$(grep -c ok "$1")" -ge 3 ]
}

# --- P_Key 0x1234, ends open: no records, at once
phase pkey 0x1234
f=$FAB_TMP/pkey.flood
fab_check "PathRecord Gets and SMInfo Gets answered during a P_Key 0x1234 flood" \
	probes_answered "$FAB_TMP/pkey.probe"
fab_check "sminfo answered during the flood" sminfo_ok "$FAB_TMP/pkey.sminfo"
sent=$(field "$f" sent)
ok=$(field "$f" ok)
fab_check "hostile queries answered, no records (sent ${sent:-?}, ok ${ok:-?})" \
	test "${sent:-0}" -ge 600 -a "${ok:-0}" -ge $((${sent:-0} * 9 / 10))

# --- default partition, ends open: beyond the work budget
phase open none
f=$FAB_TMP/open.flood
fab_check "PathRecord Gets and SMInfo Gets answered during an open-paths flood" \
	probes_answered "$FAB_TMP/open.probe"
fab_check "sminfo answered during the open-paths flood" sminfo_ok "$FAB_TMP/open.sminfo"
sent=$(field "$f" sent)
refused=$(($(field "$f" busy) + $(field "$f" no_resources)))
fab_check "open-paths queries refused, NO_RESOURCES or BUSY ($refused of ${sent:-?})" \
	test "${sent:-0}" -ge 600 -a "$refused" -ge $((${sent:-0} * 9 / 10))

fab_check "the SM is still master" fab_wait_master 10
# (not through fab_check: its subshell could not wait for the SM)
if fab_ibsm_stop; then
	fab_pass "ibsm exits cleanly"
else
	fab_fail "ibsm exits cleanly"
fi
fab_check "the log counts the jobs and budgets" \
	grep -Eq "SA: [1-9][0-9]* requests answered in slices .* [1-9][0-9]* over their work budget" \
	"$dir/ibsm.log"
fab_summary
