#!/usr/bin/env python3
"""path_check.py - PathRecords against the LFTs the diags read.

  path_check.py TOPO LFTS PATHS.json... [--hop-limit N] [--gets GETS.json]
  path_check.py pairs TOPO


TOPO is `ibnetdiscover -p`, LFTS the `ibroute -a -n` dumps of every switch
(tests/fabric/lib_sm.sh sm_diags), PATHS.json `ibsmctl --json query
paths` run on each host (every PathRecord from that host's port), each
with PATHS.json.bytes holding the payload length ibsmctl -v reported.
umad2sim damages SA data bytes 168-199 of every RMPP segment (see
test_sa_tables_complete.sh): records overlapping them are counted but
not checked.  For every ordered pair of distinct CA ports there must be
exactly one record (GIDs name the ports; damaged ones count as present),
its SLID/DLID must be the LIDs the ports have, and the walk from the
source port along the switches' LFTs toward DLID must reach the
destination port: no missing entry, no loop.  HopLimit must be N (what
OpenSM 3.3.23 puts in a path that crosses no router: 0).  Prints the hop
counts seen; exit 1 with one line per problem (the first 20).

GETS.json (tests/bench/sa_pathbench -p on `path_check.py pairs TOPO`, the
"SLID DLID" of every ordered pair of distinct CA ports) holds one
PathRecord Get answer per pair: single-MAD answers, which umad2sim does
not damage, so every pair is checked this way (status 0, the ports'
GIDs and LIDs, HopLimit, the LFT walk), and every intact GetTable record
must name the same LIDs as the Get answer of its pair.  The number of
switches each Get's path crosses along the LFTs must be the fewest the
topology allows (min-hop routing): the path's hop count.
"""

import argparse
import collections
import ipaddress
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from route_check import Problems, Topo, read_lfts  # noqa: E402


def guid_of(gid):
    return int(ipaddress.IPv6Address(gid)) & ((1 << 64) - 1)


def walk(topo, lfts, src, dlid, dst):
    """Switch hops from CA port src to the port dst along the LFTs, or a
    reason string."""
    port = topo.ca_port[src]
    cur = topo.peer.get((src, port))
    hops = 0
    seen = set()
    while cur is not None:
        guid, _ = cur
        if guid == dst:
            return hops
        if topo.kind.get(guid) != "SW":
            return "reached %s instead" % topo.name(guid)
        if guid in seen:
            return "loop at %s" % topo.name(guid)
        seen.add(guid)
        hops += 1
        out = lfts.get(guid, {}).get(dlid)
        if out is None or out == 255:
            return "no LFT entry for LID %d at %s" % (dlid, topo.name(guid))
        if out == 0:
            return "LID %d ends at switch %s" % (dlid, topo.name(guid))
        cur = topo.peer.get((guid, out))
    return "dead port on the way"


def switch_distances(topo, src):
    """Fewest switches a packet from CA port src crosses to reach each
    node (BFS over the links ibnetdiscover shows)."""
    adj = collections.defaultdict(set)
    for (g, _), (pg, _) in topo.peer.items():
        adj[g].add(pg)
        adj[pg].add(g)
    first = topo.peer.get((src, topo.ca_port[src]))
    dist = {}
    if first is None:
        return dist
    queue = collections.deque([(first[0], 1)])
    seen = {src, first[0]}
    while queue:
        g, d = queue.popleft()
        dist[g] = d
        if topo.kind.get(g) != "SW":
            continue            # a CA is an end: paths do not cross it
        for n in adj[g]:
            if n not in seen:
                seen.add(n)
                queue.append((n, d + 1))
    return dist


def check_gets(topo, lfts, path, hop_limit, probs, hops):
    """Check the Get answers of every CA pair; returns {(s, d): record}."""
    by_lid = {topo.lid[g]: g for g in topo.ca_port}
    with open(path) as f:
        rows = json.load(f)
    got = {}
    dists = {}
    for r in rows:
        s, d = by_lid.get(r["slid"]), by_lid.get(r["dlid"])
        if s is None or d is None:
            probs.add("Get %d -> %d: not the LIDs of two CA ports" % (
                r["slid"], r["dlid"]))
            continue
        name = "Get %s -> %s" % (topo.name(s), topo.name(d))
        if r["status"] != 0:
            probs.add("%s: status 0x%04x" % (name, r["status"]))
            continue
        if (guid_of(r["sgid"]), guid_of(r["dgid"])) != (s, d):
            probs.add("%s: GIDs %s -> %s" % (name, r["sgid"], r["dgid"]))
            continue
        if (r["rec_slid"], r["rec_dlid"]) != (r["slid"], r["dlid"]):
            probs.add("%s: record SLID %d DLID %d" % (
                name, r["rec_slid"], r["rec_dlid"]))
            continue
        if r["hop_limit"] != hop_limit:
            probs.add("%s: HopLimit %d, want %d" % (
                name, r["hop_limit"], hop_limit))
        h = walk(topo, lfts, s, r["dlid"], d)
        if isinstance(h, str):
            probs.add("%s (DLID %d): %s" % (name, r["dlid"], h))
            continue
        # The route crosses as few switches as the topology allows: the
        # hop count of the path is the minimum (min-hop routing).
        if s not in dists:
            dists[s] = switch_distances(topo, s)
        want = dists[s].get(d, 0) - 1
        if h != want:
            probs.add("%s: %d switch hops along the LFTs, shortest %d" % (
                name, h, want))
        hops[h] += 1
        got[(s, d)] = r
    cas = list(topo.ca_port)
    missing = [(s, d) for s in cas for d in cas if s != d and (s, d) not in got]
    if missing:
        probs.add("%d CA port pairs without a good Get answer, e.g. %s -> %s"
                  % (len(missing), topo.name(missing[0][0]),
                     topo.name(missing[0][1])))
    return got


def print_pairs(topo_path):
    topo = Topo(topo_path)
    cas = sorted(topo.ca_port, key=lambda g: topo.lid[g])
    for s in cas:
        for d in cas:
            if s != d:
                print(topo.lid[s], topo.lid[d])
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "pairs":
        return print_pairs(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("topo")
    ap.add_argument("lfts")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--hop-limit", type=int, default=0)
    ap.add_argument("--gets")
    args = ap.parse_args()
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    probs = Problems(20)
    cas = [g for g in topo.cas() if g in topo.ca_port]
    recs = []
    damaged = 0
    for path in args.paths:
        with open(path) as f:
            rows = json.load(f)
        with open(path + ".bytes") as f:
            stride = int(f.read().strip() or 0) // max(len(rows), 1)
        for i, r in enumerate(rows):
            a, b = i * stride, (i + 1) * stride
            r["intact"] = all(b <= k * 200 + 168 or a >= k * 200 + 200
                              for k in range(a // 200, (b - 1) // 200 + 1))
            recs.append(r)
    seen = collections.Counter()
    hops = collections.Counter()
    srcs = {}
    for r in recs:
        if not r["intact"]:
            damaged += 1
            continue
        s, d = guid_of(r["sgid"]), guid_of(r["dgid"])
        srcs[r["slid"]] = s
        if s not in topo.ca_port or d not in topo.ca_port or s == d:
            continue        # switch ends, and a port's path to itself
        seen[(s, d)] += 1
        if r["slid"] != topo.lid[s] or r["dlid"] != topo.lid[d]:
            probs.add("%s -> %s: SLID %d DLID %d, ports have %d and %d" % (
                topo.name(s), topo.name(d), r["slid"], r["dlid"],
                topo.lid[s], topo.lid[d]))
            continue
        if r["hop_limit"] != args.hop_limit:
            probs.add("%s -> %s: HopLimit %d, want %d" % (
                topo.name(s), topo.name(d), r["hop_limit"], args.hop_limit))
        h = walk(topo, lfts, s, r["dlid"], d)
        if isinstance(h, str):
            probs.add("%s -> %s (DLID %d): %s" % (
                topo.name(s), topo.name(d), r["dlid"], h))
        else:
            hops[h] += 1
    pairs = len(cas) * (len(cas) - 1)
    gets = {}
    if args.gets:
        ghops = collections.Counter()
        gets = check_gets(topo, lfts, args.gets, args.hop_limit, probs, ghops)
        for r in recs:
            s, d = guid_of(r["sgid"]), guid_of(r["dgid"])
            g = gets.get((s, d))
            if r["intact"] and g and (r["slid"], r["dlid"]) != (
                    g["slid"], g["dlid"]):
                probs.add("%s -> %s: GetTable LIDs %d/%d, Get %d/%d" % (
                    topo.name(s), topo.name(d), r["slid"], r["dlid"],
                    g["slid"], g["dlid"]))
        print("%d CA port pairs checked through single Gets; switch hops: %s"
              % (len(gets), ", ".join("%d: %d" % kv
                                      for kv in sorted(ghops.items()))))
    for s in cas:
        for d in cas:
            if s != d and seen[(s, d)] > 1:
                probs.add("%s -> %s: %d PathRecords" % (
                    topo.name(s), topo.name(d), seen[(s, d)]))
    # Every source port answered for as many records as there are end
    # ports (damaged ones included): nothing missing.
    per_file = len(recs) // max(len(args.paths), 1)
    ends = len(cas) + len(topo.switches())
    if per_file != ends or len(recs) != per_file * len(args.paths):
        probs.add("%d records from %d sources, want %d per source" % (
            len(recs), len(args.paths), ends))
    print("%d records (%d damaged by umad2sim), %d CA port pairs, %d walked;"
          " switch hops: %s" % (
        len(recs), damaged, pairs, sum(hops.values()),
        ", ".join("%d: %d" % kv for kv in sorted(hops.items()))))
    return probs.finish("PathRecords vs LFTs")


if __name__ == "__main__":
    sys.exit(main())
