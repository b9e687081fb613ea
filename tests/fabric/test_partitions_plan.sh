#!/usr/bin/env bash
# tests/fabric/test_partitions_plan.sh - `ibsmctl partitions plan` predicts
# what `apply` changes, judged with smpquery (infiniband-diags).
#
# ibsm runs with -P on fat2-small and on dualrail-32 (two-port HCAs, two
# rails: a CA's ports have LIDs of their own and NodeRecords each).  For
# each of two edits of its file:
#   1. add a partition with GUID members (one full, one limited) and make
#      a limited member of another partition full;
#   2. remove a partition (ALL_CAS=limited: every CA port and the switch
#      ports facing them lose a key) and drop a member;
# `ibsmctl partitions plan FILE --from NEW --json` reads the fabric through
# the SA and lists the ports whose P_Key tables would change, with their
# new tables.  Then `apply --from NEW --pidfile` and, after ibsm's next
# SUBNET UP, `smpquery pkeys` of every CA port and every switch external
# port: the ports whose tables changed must be exactly those plan listed,
# their tables exactly plan's new ones (and before, plan's old ones).
# Also: plan warns when a partition's rate= (or mtu=) is above what its
# member ports can carry; plan of the file in force lists nothing; list/show resolve
# members against the fabric (and say so), or say "file only" with
# --offline.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}
DIAG=H0002
TOPOS=${PLAN_TOPOS:-"fat2-small.net dualrail-32.net"}

guid_of() {
	fab_run "$1" ibstat | sed -n 's/.*Port GUID: //p' | head -n 1
}
# tables OUT: "LID:PORT index:key ..." (non-zero entries, smpquery's
# order) for every CA port and every linked switch external port.
tables() {
	local topo=$T/topo
	fab_run "$DIAG" ibnetdiscover -p >"$topo" 2>/dev/null
	awk '($1 == "CA" || $1 == "SW") && $3 != 0 && $8 != "" { print $2, $3 }' \
		"$topo" | sort -u | while read -r lid port; do
		printf '%s:%s' "$lid" "$port"
		fab_run "$DIAG" smpquery pkeys "$lid" "$port" 2>/dev/null |
			awk '/^ *[0-9]+: / { i = $1 + 0; for (k = 2; k <= NF; k++) {
				if ($k != "0x0000") printf " %d:%s", i, $k; i++ } }'
		echo
	done | sort >"$1"
}

# wait_up N: wait until ibsm's log has more than N "SUBNET UP" lines.
ups() { grep -c "SUBNET UP$" "$T/sm/ibsm.log"; }
wait_up() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(ups)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# check_plan NAME PLAN.json BEFORE AFTER: plan's ports are exactly those
# whose tables differ between BEFORE and AFTER, with plan's old and new.
check_plan() {
	python3 - "$@" <<'PY'
import json, sys
name, plan, before, after = sys.argv[1:5]
def load(p):
    t = {}
    for line in open(p):
        w = line.split()
        if w:
            t[w[0]] = sorted(w[1:], key=lambda e: int(e.split(':')[0]))
    return t
b, a = load(before), load(after)
p = json.load(open(plan))
norm = lambda l: sorted((e.split(':')[0] + ':0x%04x' % int(e.split(':')[1], 16)
                         for e in l), key=lambda e: int(e.split(':')[0]))
pred = {'%d:%d' % (x['lid'], x['port']): x for x in p['ports']}
seen = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
ok = True
if set(pred) != seen:
    print('  plan lists %s, changed %s' % (sorted(set(pred) - seen),
                                           sorted(seen - set(pred))))
    ok = False
for k, x in pred.items():
    if norm(x['new']) != norm(a.get(k, [])):
        print('  %s: plan %s, smpquery %s' % (k, x['new'], a.get(k)))
        ok = False
    if norm(x['old']) != norm(b.get(k, [])):
        print('  %s: plan old %s, smpquery before %s' % (k, x['old'], b.get(k)))
        ok = False
print('%s: %d ports planned, %d changed' % (name, len(pred), len(seen)))
sys.exit(0 if ok and seen else 1)
PY
}

# ------------------------------------------------ edits, plan, apply
# run_edit NAME NEWFILE: plan, apply, compare with smpquery.
run_edit() {
	local name=$1 new=$2 n
	tables "$T/$name.before"
	if ! fab_run "$DIAG" "$CTL" partitions plan "$conf" --from "$new" --json \
		>"$T/$name.plan.json" 2>"$T/$name.plan.err"; then
		fab_fail "$N-$name-plan" "$(cat "$T/$name.plan.err")"
		return
	fi
	fab_run "$DIAG" "$CTL" partitions plan "$conf" --from "$new" \
		>"$T/$name.plan.txt" 2>&1
	echo "  plan ($name):"
	sed 's/^/    /' "$T/$name.plan.txt"
	n=$(ups)
	fab_check "$N-$name-apply" "$CTL" partitions apply "$conf" --from "$new" \
		--pidfile "$T/sm/ibsm.pid"
	if ! wait_up "$n"; then
		fab_fail "$N-$name-subnet-up" "no SUBNET UP after the SIGHUP"
		return
	fi
	tables "$T/$name.after"
	if out=$(check_plan "$name" "$T/$name.plan.json" "$T/$name.before" \
		"$T/$name.after"); then
		fab_pass "$N-$name-plan-equals-apply (${out##*: })"
	else
		fab_fail "$N-$name-plan-equals-apply" "$out"
	fi
}

# run_topo NET: every check on one topology, names prefixed with its name.
run_topo() {
	local out n_ca
	N=$(basename "$1" .net)
	T=$FAB_TMP/$N
	mkdir -p "$T"
	fab_sim_start "$1" "plan-$N" || { fab_fail "$N-sim" ibsim; return; }
	g3=$(guid_of H0003)
	g4=$(guid_of H0004)
	g5=$(guid_of H0005)
	g6=$(guid_of H0006)

	conf=$T/partitions.conf
	cat >"$conf" <<-EOF
	# partitions under test
	Default=0x7fff, ipoib : ALL=full ;
	storage=0x0010, ipoib : $g3=full, $g4=limited ;
	compute=0x0011 : ALL_CAS=limited ;
	scratch=0x0012 : $g5=full, $g6=full ;
	EOF

	if ! fab_ibsm_start H0001 "$T/sm" -P "$conf" -J "$T/sm/ibsm.pid"; then
		fab_fail "$N-ibsm-up" "no SUBNET UP"
		fab_ibsm_stop
		return
	fi
	fab_pass "$N-ibsm-up"

	# ------------------------------------------------ plan of the file in force
	out=$(fab_run "$DIAG" "$CTL" partitions plan "$conf" --json 2>&1)
	if [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["changed"])' \
		<<<"$out" 2>/dev/null)" = 0 ]; then
		fab_pass "$N-plan-in-force-no-change"
	else
		fab_fail "$N-plan-in-force-no-change" "$(head -c 400 <<<"$out")"
	fi

	# ------------------------------------------------ plan: group rate/MTU
	# above what the members' ports carry (their joins would be refused)
	cp "$conf" "$T/fast.conf"
	echo "fast=0x0013, ipoib, rate=18, mtu=5 : $g5=full, $g6=full ;" >>"$T/fast.conf"
	out=$(fab_run "$DIAG" "$CTL" partitions plan "$conf" --from "$T/fast.conf" 2>&1 >/dev/null)
	if grep -q "fast.conf:6: warning: partition fast: its rate=18 is above what 2 of its 2 member ports" <<<"$out" &&
		grep -q "fast.conf:6: warning: partition fast: its mtu=5 is above what 2 of its 2 member ports" <<<"$out"; then
		fab_pass "$N-plan-warns-rate-mtu-above-members"
	else
		fab_fail "$N-plan-warns-rate-mtu-above-members" "$(head -n 4 <<<"$out")"
	fi
	echo "  plan (fast): $out"
	out=$(fab_run "$DIAG" "$CTL" partitions plan "$conf" 2>&1 >/dev/null)
	if ! grep -q "is above what" <<<"$out"; then
		fab_pass "$N-plan-no-rate-warning-in-force"
	else
		fab_fail "$N-plan-no-rate-warning-in-force" "$(head -n 4 <<<"$out")"
	fi

	# ------------------------------------------------ live list / show
	out=$(fab_run "$DIAG" "$CTL" partitions show "$conf" storage 2>&1)
	if grep -q '^# resolved against the running fabric' <<<"$out" &&
		grep -q "port $g3 full .*H0003" <<<"$out" &&
		grep -q "port $g4 limited .*H0004" <<<"$out" &&
		grep -q '2 ports on the fabric: 1 full, 1 limited' <<<"$out"; then
		fab_pass "$N-show-live-members"
	else
		fab_fail "$N-show-live-members" "$(head -n 12 <<<"$out")"
	fi
	out=$(fab_run "$DIAG" "$CTL" partitions list "$conf" 2>&1)
	n_ca=$(fab_run "$DIAG" ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" && $8 != ""' | wc -l)
	if grep -q '^# resolved against the running fabric' <<<"$out" &&
		grep -Eq "^compute .* ports=$n_ca full=0 limited=$n_ca " <<<"$out"; then
		fab_pass "$N-list-live-counts ($n_ca CA ports in compute)"
	else
		fab_fail "$N-list-live-counts" "$out"
	fi
	out=$(fab_run "$DIAG" "$CTL" partitions list "$conf" --offline 2>&1)
	if grep -q '^# file only (members not resolved): --offline' <<<"$out" &&
		grep -q '^compute .* members=1$' <<<"$out"; then
		fab_pass "$N-list-offline"
	else
		fab_fail "$N-list-offline" "$out"
	fi

	# 1: a new partition with GUID members; H0004 limited -> full in storage.
	cp "$conf" "$T/new1.conf"
	"$CTL" partitions add "$T/new1.conf" "gpu=0x0020 : $g5=full, $g6=limited" &&
		"$CTL" partitions set "$T/new1.conf" storage "$g4=full"
	fab_check "$N-edit1-made" test $? -eq 0
	run_edit edit1 "$T/new1.conf"
	# The new key really is on H0005 (full) and H0006 (limited).
	if grep -q '0x8020' "$T/edit1.after" && grep -q ':0x0020' "$T/edit1.after"; then
		fab_pass "$N-edit1-gpu-programmed"
	else
		fab_fail "$N-edit1-gpu-programmed"
	fi

	# 2: compute removed (every CA port loses 0x0011), scratch loses H0006.
	cp "$conf" "$T/new2.conf"
	"$CTL" partitions remove "$T/new2.conf" compute &&
		sed -i "s/^scratch=0x0012 : $g5=full, $g6=full ;/scratch=0x0012 : $g5=full ;/" \
			"$T/new2.conf" && "$CTL" partitions check "$T/new2.conf"
	fab_check "$N-edit2-made" test $? -eq 0
	run_edit edit2 "$T/new2.conf"
	if ! grep -q '0x0011' "$T/edit2.after" && grep -q '0x0011' "$T/edit2.before"; then
		fab_pass "$N-edit2-compute-gone"
	else
		fab_fail "$N-edit2-compute-gone"
	fi

	# Nothing left to do: plan of the file now in force lists nothing.
	out=$(fab_run "$DIAG" "$CTL" partitions plan "$conf" 2>&1)
	if grep -q '^# 0 of [0-9]* P_Key tables change' <<<"$out"; then
		fab_pass "$N-plan-after-apply-no-change"
	else
		fab_fail "$N-plan-after-apply-no-change" "$(tail -n 3 <<<"$out")"
	fi

	if fab_ibsm_stop; then
		fab_pass "$N-ibsm-clean-exit"
	else
		fab_fail "$N-ibsm-clean-exit" "exit status or sanitizer report"
	fi
	fab_sim_stop
}

for topo in $TOPOS; do
	run_topo "$FAB_TOPO/$topo"
done
fab_summary
