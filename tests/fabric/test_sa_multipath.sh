#!/usr/bin/env bash
# tests/fabric/test_sa_multipath.sh - MultiPathRecord (SubnAdmGetMulti).
#
# ibsm runs as master with LMC 1 on a fat tree; `ibsmctl query multipath`
# asks for paths between hosts.  Every path returned is checked
#   - against the LFTs as the diags read them: ibtracert SLID DLID must
#     lead from the SGID's port to the DGID's port;
#   - against the PathRecord Get of the same LID pair (ibsmctl query paths
#     SLID DLID): same GIDs, MTU, rate, lifetime, P_Key, Reversible;
# the LID pairs of one GID pair must be distinct (LMC), NumbPath must bound
# the answer, and malformed requests (counts of 0, counts beyond the
# payload, a truncated or oversized PayloadLength, an unknown GID) must be
# answered with an error status while the SM stays up.
#
# Under ibsim, umad2sim garbles data bytes 168-199 of each MAD it delivers,
# so exact record checks use answers of at most two PathRecords (128
# bytes); longer answers are checked for their record count and their
# first segment's first two records.
# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CTL=${IBSMCTL:-$(dirname "$IBSM")/../tools/ibsmctl}

fab_sim_start "$FAB_TOPO/fat2-small.net" mpath || exit 1
if ! fab_ibsm_start H0001 "$FAB_TMP/sm" -l 1; then
	fab_fail mpath-ibsm-up "ibsm did not bring the subnet up"
	fab_summary
	exit 1
fi
fab_pass mpath-ibsm-up

guid() { fab_run "$1" ibstat -p | head -n 1; }
G2=$(guid H0002); G7=$(guid H0007); G12=$(guid H0012); G14=$(guid H0014)
G5=$(guid H0005)
# which host has which port GUID, for reading ibtracert's "To ca" lines
HOSTS="$G2=H0002 $G7=H0007 $G12=H0012 $G14=H0014 $G5=H0005"

# mp NAME ARGS...: run a multipath query from H0003, JSON in $FAB_TMP/NAME.json
mp() {
	local name=$1
	shift
	fab_run H0003 "$CTL" -j query multipath "$@" >"$FAB_TMP/$name.json" \
		2>"$FAB_TMP/$name.err"
}

# check_paths NAME COUNT [PAIRS]: the answer NAME has COUNT records; the
# first min(COUNT, 2) are checked in full against ibtracert and PathRecord;
# PAIRS (sgid>dgid,...) lists the GID pair of each record in order.
check_paths() {
	local name=$1 want=$2 pairs=${3:-} n i slid dlid
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
		"$FAB_TMP/$name.json" 2>/dev/null)
	if [ "$n" != "$want" ]; then
		echo "$name: $n records, want $want: $(cat "$FAB_TMP/$name.err")"
		return 1
	fi
	for ((i = 0; i < n && i < 2; i++)); do
		read -r slid dlid < <(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))[int(sys.argv[2])]
print(r["slid"], r["dlid"])' "$FAB_TMP/$name.json" "$i")
		fab_run H0003 ibtracert "$slid" "$dlid" >"$FAB_TMP/$name.tr$i" 2>&1 || {
			echo "$name: ibtracert $slid $dlid failed"
			return 1
		}
		fab_run H0003 "$CTL" -j query paths "$slid" "$dlid" \
			>"$FAB_TMP/$name.pr$i" 2>&1 || {
			echo "$name: PathRecord Get $slid $dlid failed"
			return 1
		}
	done
	python3 - "$FAB_TMP/$name" "$n" "$pairs" "$HOSTS" <<'EOF' || return 1
import json, re, sys
base, n, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
hosts = {int(g, 16): h for g, h in (w.split("=") for w in sys.argv[4].split())}
recs = json.load(open(base + ".json"))

def guid_of(gid):
    # fe80::10:3 -> 0x100003
    parts = gid.split("::")[-1].split(":")
    return int("".join(p.rjust(4, "0") for p in parts), 16)

ok = True
def bad(msg):
    global ok
    ok = False
    print(msg)

for i in range(min(n, 2)):
    r = recs[i]
    tr = open("%s.tr%d" % (base, i)).read()
    m_from = re.search(r'^From \w+ .*"(\S+) HCA-1"', tr, re.M)
    m_to = re.search(r'^To \w+ .*"(\S+) HCA-1"', tr, re.M)
    if not m_from or not m_to:
        bad("record %d: no From/To in ibtracert output:\n%s" % (i, tr))
        continue
    pr = json.load(open("%s.pr%d" % (base, i)))
    pr = pr[0] if isinstance(pr, list) else pr
    # SL: the Get asks for none; the multipath answers echo the one asked
    for k in ("slid", "dlid", "sgid", "dgid", "pkey", "mtu", "rate",
              "pkt_life", "reversible"):
        if r[k] != pr[k]:
            bad("record %d: %s %r, PathRecord Get says %r" % (i, k, r[k], pr[k]))
    # ibtracert names the nodes at both ends of the walk of the LFTs
    hs = hosts.get(guid_of(r["sgid"]), "?")
    hd = hosts.get(guid_of(r["dgid"]), "?")
    if (m_from.group(1), m_to.group(1)) != (hs, hd):
        bad("record %d: path %s -> %s but the LFTs lead %s -> %s" %
            (i, hs, hd, m_from.group(1), m_to.group(1)))
# the LID pairs of one GID pair are distinct
seen = set()
for r in recs[:2]:
    key = (r["sgid"], r["dgid"], r["slid"], r["dlid"])
    if key in seen:
        bad("duplicate path %r" % (key,))
    seen.add(key)
if pairs:
    want = pairs.split(",")
    for i, w in enumerate(want[:min(n, 2)]):
        s, d = w.split(">")
        got = "%#x>%#x" % (guid_of(recs[i]["sgid"]), guid_of(recs[i]["dgid"]))
        if got != "%#x>%#x" % (int(s, 16), int(d, 16)):
            bad("record %d: pair %s, want %s" % (i, got, w))
sys.exit(0 if ok else 1)
EOF
}

# One GID pair, LMC 1: two distinct LID pairs (NumbPath 2), both routed.
mp one-pair --numb-path 2 "$G2" "$G7"
fab_check mpath-one-pair-2-paths check_paths one-pair 2 "$G2>$G7,$G2>$G7"
# The two paths differ in both LIDs (LMC 1: base and base + 1).
distinct() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert r[0]["slid"] != r[1]["slid"] and r[0]["dlid"] != r[1]["dlid"], r' \
		"$FAB_TMP/one-pair.json"
}
fab_check mpath-one-pair-distinct-lids distinct
# Without NumbPath: every LID pair of the two LMC ranges (2 x 2), through
# an RMPP transfer of two segments.
mp all-pairs "$G2" "$G7"
fab_check mpath-all-lid-pairs-4 check_paths all-pairs 4
# NumbPath bounds the whole answer: 2 SGIDs x 2 DGIDs, NumbPath 3.
mp many --numb-path 3 "$G2,$G12" "$G7,$G14"
fab_check mpath-numbpath-bounds-all check_paths many 3 "$G2>$G7,$G2>$G7"
# NumbPath 2 over several pairs: only the first pair's.
mp many2 --numb-path 2 "$G12,$G2" "$G14,$G7"
fab_check mpath-numbpath-first-pair check_paths many2 2 "$G12>$G14,$G12>$G14"
# NumbPath 1, one SGID, three DGIDs: one path.
mp numb1 --numb-path 1 "$G5" "$G2,$G7,$G12"
fab_check mpath-numbpath-1 check_paths numb1 1 "$G5>$G2"
# Reversible, SL, P_Key of the default partition: still answered.
mp sel --numb-path 2 --reversible --sl 3 --pkey 0xffff "$G14" "$G5"
fab_check mpath-selectors check_paths sel 2 "$G14>$G5,$G14>$G5"
sl3() {
	python3 -c 'import json,sys
assert all(r["sl"] == 3 for r in json.load(open(sys.argv[1])))' "$FAB_TMP/sel.json"
}
fab_check mpath-selectors-sl sl3
# IndependenceSelector is accepted.
mp indep --numb-path 2 --independence 1 "$G2" "$G7"
fab_check mpath-independence-accepted check_paths indep 2
# A P_Key of a partition the hosts are not in: no paths.
mp pkey --pkey 0x8123 "$G2" "$G7"
fab_check mpath-foreign-pkey-no-paths check_paths pkey 0

# Malformed requests: an error status, never a crash.
# bad NAME STATUS ARGS...: ibsmctl exits 1 and names STATUS.
bad() {
	local name=$1 status=$2
	shift 2
	if mp "$name" "$@"; then
		fab_fail "$name" "answered: $(cat "$FAB_TMP/$name.json")"
	elif grep -q "$status" "$FAB_TMP/$name.err"; then
		fab_pass "$name"
	else
		fab_fail "$name" "$(cat "$FAB_TMP/$name.err")"
	fi
}
bad mpath-bad-sgid-count-0 ERR_REQ_INVALID --sgid-count 0 "$G2" "$G7"
bad mpath-bad-dgid-count-0 ERR_REQ_INVALID --dgid-count 0 "$G2" "$G7"
bad mpath-bad-counts-beyond-payload ERR_REQ_INVALID --dgid-count 9 "$G2" "$G7"
bad mpath-bad-counts-255 ERR_REQ_INVALID --sgid-count 255 --dgid-count 255 \
	"$G2" "$G7"
bad mpath-bad-truncated-payload ERR_REQ_INVALID --payload-len 50 "$G2" "$G7"
bad mpath-bad-payload-too-long ERR_REQ_INVALID --payload-len 4000 "$G2" "$G7"
bad mpath-bad-payload-below-header ERR_REQ_INVALID --payload-len 7 "$G2" "$G7"
bad mpath-bad-unknown-gid ERR_REQ_INVALID_GID "$G2" 0x1234
bad mpath-bad-other-subnet ERR_REQ_INVALID_GID "$G2" "2001:db8::10:d"

# Still the master, still answering.
sminfo_master() {
	fab_run H0004 sminfo | grep -q SMINFO_MASTER
}
fab_check mpath-sminfo-after-bad sminfo_master
mp after --numb-path 2 "$G7" "$G2"
fab_check mpath-answers-after-bad check_paths after 2 "$G7>$G2,$G7>$G2"

if fab_ibsm_stop; then
	fab_pass mpath-ibsm-clean-exit
else
	fab_fail mpath-ibsm-clean-exit "exit status or sanitizer report"
fi
grep "SA: " "$FAB_TMP/sm/ibsm.log" | sed 's/^.*\] /    /'
fab_summary
