#!/usr/bin/env python3
"""mc_check.py - multicast checks of tests/fabric/test_mcast.sh on what
infiniband-diags print.

  mc_check.py tree TOPO MFTS MEMBERS
      TOPO: `ibnetdiscover -p`; MFTS: `ibroute -M LID` of every switch,
      concatenated; MEMBERS: lines "MLID HOST JOINSTATE" (host name as in
      the node description, JoinState bits).  For each MLID, walks the
      forwarding from every member's port the way a switch forwards a
      multicast packet (out of every port of the MFT entry but the one it
      came in on, IB spec 18.2.4.3.2) and checks: no switch is entered
      twice (a loop or a second path), every receiving member (full or
      non member) is reached, no other CA port (send-only members,
      non-members) is.  Prints one line per problem; exit 1 if any.

  mc_check.py empty MFTS MLID...
      No switch has a port set for any of the MLIDs.

  mc_check.py groups SAQUERY-OUTPUT...
      `saquery MCMR` record dumps -> one sorted line per group:
      "MGID pkey qkey mtu rate sl scope tclass flow" (MLID left out,
      checked to be >= 0xC000).
"""
import re
import sys
from collections import defaultdict

RECEIVE = 0x1 | 0x2        # full member, non member


def parse_topo(path):
    """Links {(lid, port): (type, lid, port)} and CA ports by host name."""
    links, hosts = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) < 11 or f[0] not in ("CA", "SW") or "-" not in f:
            continue
        i = f.index("-")
        if i + 3 >= len(f) or f[i + 1] not in ("CA", "SW"):
            continue
        a = (f[0], int(f[1], 0), int(f[2], 0))
        b = (f[i + 1], int(f[i + 2], 0), int(f[i + 3], 0))
        links[a[1:]] = b
        links[b[1:]] = a
        names = re.findall(r"'([^']*)'", line)
        if f[0] == "CA" and names:
            hosts[names[0].split()[0]] = a[1:]
        if f[i + 1] == "CA" and len(names) > 1:
            hosts[names[1].split()[0]] = b[1:]
    return links, hosts


def parse_mfts(path):
    """{mlid: {switch lid: set(ports)}} from ibroute -M dumps."""
    mft = defaultdict(dict)
    lid = base = None
    for line in open(path):
        m = re.search(r"of switch Lid (\d+)", line)
        if m:
            lid, base = int(m.group(1)), None
            continue
        if "Ports:" in line and base is None:
            base = line.index("Ports:") + len("Ports: ")
            continue
        m = re.match(r"(0x[0-9a-fA-F]+)\s", line)
        if m and lid is not None and base is not None:
            ports = {(c - base) // 2 for c, ch in enumerate(line)
                     if ch == "x" and c >= base}
            mft[int(m.group(1), 16)][lid] = ports
    return mft


def walk(links, mft_mlid, start):
    """CA ports reached from CA port `start`; problems found."""
    problems, reached, seen = [], set(), set()
    first = links.get(start)
    if not first:
        return reached, ["member port %s has no link" % (start,)]
    if first[0] != "SW":
        return reached, ["member port %s is not on a switch" % (start,)]
    todo = [(first[1], first[2])]
    while todo:
        sw, inport = todo.pop()
        if sw in seen:
            problems.append("switch LID %d entered twice (loop or "
                            "second path)" % sw)
            continue
        seen.add(sw)
        for p in sorted(mft_mlid.get(sw, ())):
            if p == inport or p == 0:
                continue
            peer = links.get((sw, p))
            if not peer:
                problems.append("switch LID %d port %d: in the MFT, "
                                "not linked" % (sw, p))
                continue
            if peer[0] == "CA":
                reached.add((peer[1], peer[2]))
            else:
                todo.append((peer[1], peer[2]))
    return reached, problems


def cmd_tree(topo, mfts, members):
    links, hosts = parse_topo(topo)
    mft = parse_mfts(mfts)
    groups = defaultdict(dict)
    for line in open(members):
        f = line.split()
        if len(f) == 3:
            groups[int(f[0], 0)][f[1]] = int(f[2], 0)
    bad = 0
    for mlid, mem in sorted(groups.items()):
        for host in mem:
            if host not in hosts:
                print("0x%04x: host %s not in the topology" % (mlid, host))
                bad += 1
        recv = {hosts[h] for h, js in mem.items()
                if js & RECEIVE and h in hosts}
        for host, js in sorted(mem.items()):
            if host not in hosts:
                continue
            src = hosts[host]
            reached, problems = walk(links, mft.get(mlid, {}), src)
            for p in problems:
                print("0x%04x from %s: %s" % (mlid, host, p))
            missing = recv - {src} - reached
            extra = reached - recv
            name = {v: k for k, v in hosts.items()}
            if missing:
                print("0x%04x from %s: receivers not reached: %s" % (
                    mlid, host, " ".join(sorted(name.get(x, str(x))
                                                for x in missing))))
            if extra:
                print("0x%04x from %s: reaches non-receivers: %s" % (
                    mlid, host, " ".join(sorted(name.get(x, str(x))
                                                for x in extra))))
            bad += len(problems) + bool(missing) + bool(extra)
    return 1 if bad else 0


def cmd_empty(mfts, mlids):
    mft = parse_mfts(mfts)
    bad = 0
    for m in mlids:
        for sw, ports in sorted(mft.get(int(m, 0), {}).items()):
            if ports:
                print("0x%04x still on switch LID %d ports %s" % (
                    int(m, 0), sw, sorted(ports)))
                bad = 1
    return bad


FIELDS = ("MGID", "pkey", "qkey", "mtu", "rate", "SL", "Scope", "TClass",
          "FlowLabel")


def cmd_groups(paths):
    recs, cur = [], None
    for path in paths:
        for line in open(path):
            m = re.match(r"\s*(\w+)\.+(\S+)", line)
            if not m:
                continue
            k, v = m.groups()
            if k == "MGID":
                cur = {}
                recs.append(cur)
            if cur is not None and k not in cur:
                cur[k] = v
    bad = 0
    out = set()
    for r in recs:
        if int(r.get("mlid", "0"), 16) < 0xC000:
            print("MLID %s of %s below 0xC000" % (r.get("mlid"), r.get("MGID")),
                  file=sys.stderr)
            bad = 1
        out.add(" ".join("%s=%s" % (k, r.get(k, "?").lower()) for k in FIELDS))
    for line in sorted(out):
        print(line)
    return bad


def main(argv):
    if len(argv) >= 2 and argv[1] == "tree" and len(argv) == 5:
        return cmd_tree(*argv[2:])
    if len(argv) >= 3 and argv[1] == "empty":
        return cmd_empty(argv[2], argv[3:])
    if len(argv) >= 3 and argv[1] == "groups":
        return cmd_groups(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
