#!/usr/bin/env python3
"""sa_compare.py - compare saquery answers of two SMs field by field.

  sa_compare.py lidmap IBNETDISCOVER_P_OUTPUT        LID -> GUID, one a line
  sa_compare.py lid MAPFILE GUID                     the LID of a GUID
  sa_compare.py diff MAP_A OUT_A MAP_B OUT_B [FIELD=V1,V2...]
                                                     compare two outputs
  sa_compare.py lftcheck LFTR_OUT IBROUTE_OUT         LFTRecord = switch LFT

`diff` parses the text saquery prints (one "... dump:" block per record,
"name....value" lines), replaces every LID by the port GUID that SM gave
it (MAP_A for OUT_A, MAP_B for OUT_B: the SMs may number ports
differently), drops the fields listed in DROP below (each with the reason
it may legitimately differ), and prints every remaining difference.
Exit status 0: same records, same order, same fields; 1: differences
(listed); 2: OUT_A holds no record at all (a comparison of two empty
answers proves nothing, so the tests ask only queries that have answers).

FIELD=V1,V2... (saquery's field name, any case): that field may differ
between the two answers as long as each holds one of the values listed;
a value outside the list is a difference.  For a field that records a
race of the SM rather than a fact of the subnet: a switch's PortInfo
LocalPortNum is the port the SM's last PortInfo SMP entered the switch
by, on the directed route of the first NodeInfo answer of the sweep
(OpenSM and ibsm alike), so a switch reachable over two equal paths
reports either entry port, depending on which answer came back first.
"""

import re
import sys

# Fields that hold a LID (saquery's names, lower case): compared as the
# GUID of the port that has that LID in the answering SM's subnet.
LID_FIELDS = {
    "lid", "endportlid", "smlid", "fromlid", "tolid", "dlid", "slid",
    "lid range begin", "lid range end", "lid_range_begin", "lid_range_end",
    "lidrangebegin", "lidrangeend",
}

# Fields that legitimately differ between two SMs answering for the same
# subnet, by record block title (lower case, "*" for all), with reasons.
DROP = {
    "sminfo dump:": {
        # ActCount counts the SM's own SMPs/sweeps (IBA 14.2.5.13): each SM
        # has its own count since it started.
        "actcount": "a counter of the answering SM's activity",
    },
}

# A new record starts at a line that does not begin with white space and
# ends in "dump:" (saquery's title lines) or is the ClassPortInfo title.
TITLE = re.compile(r"^\S.*(dump:|ClassPortInfo:)\s*$")
# "name.....value", "name:.....value" (PortInfo), "name.....: value"
FIELD = re.compile(r"^\s*([^.\t][^.]*?):?\.{2,}:?\s?(.*)$")
LFT_ROW = re.compile(r"^\s*(\d+)\t(\d+)\s*$")


def read_map(path):
    m = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2:
                m[int(p[0], 0)] = p[1]
    return m


def lidmap(path):
    """LID -> GUID from `ibnetdiscover -p` lines: TYPE LID PORT GUID ..."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 4 and p[0] in ("CA", "SW", "RT"):
                try:
                    lid = int(p[1], 0)
                except ValueError:
                    continue
                if lid and p[3].startswith("0x"):
                    out.setdefault(lid, "0x%016x" % int(p[3], 16))
    for lid in sorted(out):
        print(lid, out[lid])


def as_int(v):
    try:
        return int(v.split()[0], 0)
    except (ValueError, IndexError):
        return None


def parse(path, lids):
    """[(title, [(field, value), ...]), ...] with LIDs replaced by GUIDs."""
    recs = []
    cur = None
    block = ""
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            if TITLE.match(line):
                cur = (line.strip(), [])
                recs.append(cur)
                block = line.strip().lower()
                continue
            if cur is None:
                continue        # saquery's own messages before any record
            s = line.strip()
            if s.lower().endswith("dump:"):
                block = s.lower()   # a sub-block (PortInfo dump:, ...)
                cur[1].append((s, ""))
                continue
            m = LFT_ROW.match(line)
            if m:
                lid = int(m.group(1))
                # Which port among equal-cost ones is each SM's routing
                # choice: compared here is only whether the LID is
                # routed (lftcheck checks every port against the switch).
                port = int(m.group(2))
                cur[1].append(("lft[%s]" % lids.get(lid, "lid %d" % lid),
                               {255: "unrouted", 0: "port 0"}.get(
                                   port, "routed")))
                continue
            m = FIELD.match(line)
            if not m:
                cur[1].append((s, ""))  # a flag name, "RID", a table head
                continue
            name, val = m.group(1).strip(), m.group(2).strip()
            key = name.lower()
            if key in DROP.get(block, {}) or key in DROP.get("*", {}):
                continue
            if key in LID_FIELDS:
                n = as_int(val)
                if n is not None and n in lids:
                    val = "port " + lids[n]
            cur[1].append((name, val))
    return recs


def diff(map_a, out_a, map_b, out_b, *either_args):
    a = parse(out_a, read_map(map_a))
    b = parse(out_b, read_map(map_b))
    either = {}
    for arg in either_args:
        name, _, vals = arg.partition("=")
        either[name.lower()] = {as_int(v) for v in vals.split(",")}
    if not a:
        print("no record in %s" % out_a)
        return 2
    bad = 0
    if len(a) != len(b):
        print("%d records vs %d" % (len(a), len(b)))
        bad += 1
    for i, (ra, rb) in enumerate(zip(a, b)):
        if ra[0] != rb[0]:
            print("record %d: %r vs %r" % (i, ra[0], rb[0]))
            bad += 1
            continue
        fa, fb = ra[1], rb[1]
        for j in range(max(len(fa), len(fb))):
            x = fa[j] if j < len(fa) else ("-", "")
            y = fb[j] if j < len(fb) else ("-", "")
            ok = either.get(x[0].lower())
            if x != y and x[0] == y[0] and ok is not None and \
                    as_int(x[1]) in ok and as_int(y[1]) in ok:
                continue
            if x != y or (ok is not None and as_int(x[1]) not in ok):
                print("record %d (%s) %s: %s | %s" %
                      (i, ra[0], x[0], x[1] or "-", y[1] or "-") if x[0] == y[0]
                      else "record %d (%s): %r | %r" % (i, ra[0], x, y))
                bad += 1
    print("%d records, %d differences" % (len(a), bad))
    return 1 if bad else 0


def lft_rows(path):
    """LID -> port of an LFTRecord dump (saquery LFTR LID/BLOCK)."""
    out = {}
    with open(path) as f:
        for line in f:
            m = LFT_ROW.match(line)
            if m:
                out[int(m.group(1))] = int(m.group(2))
    return out


def lftcheck(lftr, ibroute):
    """Every entry ibroute shows is in the LFTRecord, and every routed
    LFTRecord entry up to the last LID ibroute shows is in ibroute (it
    never prints the top LID)."""
    sa = lft_rows(lftr)
    sw = {}
    with open(ibroute) as f:
        for line in f:
            m = re.match(r"^0x([0-9a-fA-F]+)\s+(\d+)\s", line)
            if m:
                sw[int(m.group(1), 16)] = int(m.group(2))
    if not sa or not sw:
        print("no LFT entries: LFTRecord %d, ibroute %d" % (len(sa), len(sw)))
        return 1
    bad = 0
    top = max(sw)
    for lid in sorted(set(sa) | set(sw)):
        if lid > top and lid not in sw:
            continue
        a = sa.get(lid, 255)
        b = sw.get(lid, 255)
        if a != b:
            print("LID %d: LFTRecord port %d, switch port %d" % (lid, a, b))
            bad += 1
    print("%d LFT entries checked, %d differences" % (len(sw), bad))
    return 1 if bad else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "lidmap":
        lidmap(argv[2])
        return 0
    if len(argv) == 4 and argv[1] == "lid":
        g = int(argv[3], 16)
        for lid, guid in read_map(argv[2]).items():
            if int(guid, 16) == g:
                print(lid)
                return 0
        return 1
    if len(argv) == 4 and argv[1] == "lftcheck":
        return lftcheck(argv[2], argv[3])
    if len(argv) >= 6 and argv[1] == "diff":
        return diff(*argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
