#!/usr/bin/env python3
"""route_check.py - check a subnet's state from infiniband-diags output alone.

Nothing here reads ibsm's own files: the input is what the diags print.

  route_check.py links IBLINKINFO [--ends N]
      IBLINKINFO is `iblinkinfo --line`.  Every port that has a peer must be
      Active/LinkUp, the peer must list this port as its own peer (both ends
      seen), and with --ends N there must be exactly N such port lines (each
      link counts twice, once per end).

  route_check.py lids TOPO [--lmc N]
      TOPO is `ibnetdiscover -p`.  Every switch and every CA port has a
      non-zero LID, every CA port's range base..base+2^N-1 (LMC N) lies
      below 0xc000, its base is a multiple of 2^N, and no two ranges (nor a
      range and a switch LID) overlap.

  route_check.py missing TOPO LFTS [--lmc N]
      Print "SWITCHLID FIRST LAST" for every switch whose LFT dump lacks an
      entry for an assigned LID (ibroute may leave out the highest LID): the
      range to query again (ibroute -a -n SWITCHLID FIRST LAST, else
      ibtracert) and append to LFTS.

  route_check.py tracert DLID < IBTRACERT
      Turn the output of `ibtracert SWITCHLID DLID` into LFT records of
      every switch on the path (its out port toward DLID; 0 at the switch
      that owns DLID), in the format of `ibroute -a -n`, to append to LFTS.
      ibroute misses the entry of the highest LID when that LID starts a
      64-LID block (LinearFdbTop = 64 * k); ibtracert still reads it.

  route_check.py routes TOPO LFTS [--lmc N] [--avoid GUID:PORT ...]
      LFTS is the concatenated output of `ibroute -a -n LID` of every switch
      (plus any ranges queried again).  From every CA port, every assigned
      LID (every LID of every LMC range, every switch LID) must be reached by
      following the LFTs hop by hop over the links of TOPO: no missing or
      invalid (255) entry on the way, no loop, no dead port, and the walk
      must end at the port that owns the LID (port 0 of a switch for a
      switch LID).  With --avoid, no LFT entry for an assigned LID on that
      switch may point out of that port.

  route_check.py load TOPO LFTS [--lmc N] [--max-ratio R] [--min-ratio R]
      All-to-all load: every CA port sends to every other CA port's base
      LID through the LFTs; each route adds one to every directed
      inter-switch link it crosses (a link is one switch port facing a
      switch).  ideal = total load / directed inter-switch links of TOPO;
      ratio = max link load / ideal.  Fails when a route is broken, when
      the ratio is above --max-ratio or (to show that a check can fail) not
      above --min-ratio.

  route_check.py vls TOPO SMPQUERY
      The VLs the SL-to-VL tables (`smpquery sl2vl`, concatenated) map
      SLs 0-14 to, for output ports that face a link and input ports that
      are linked or 0.

  route_check.py lmc-share TOPO LFTS --lmc N
      For every CA port and every other CA port, the pairs of LIDs of the
      destination's LMC range whose paths (through the LFTs, from the
      source's switch) cross a common directed inter-switch link: APM and
      multi-path MPI want none.  Prints the pairs and the share.

  route_check.py cdg TOPO LFTS --sl SAQUERY --sl2vl SMPQUERY [--lmc N]
                 [--want-cycles]
      Channel dependency graph per VL (Dally and Seitz): a channel is a
      directed inter-switch link; a route entering a switch on channel a
      and leaving on channel b makes (b, VL_b) depend on (a, VL_a).  The SL
      of a route is the one `saquery -p --src-to-dst SLID:DLID` reported
      (SAQUERY: their concatenated output), for at least one CA port of
      every source switch and every destination: the other CA ports of a
      switch take the SL of a sampled port of that switch (an SM gives
      paths their SL per source switch) unless they were sampled
      themselves.  The VL on each channel is SL2VL[in][out](SL) of the
      switch it leaves, from `smpquery sl2vl SWITCHLID OUTPORT` (SMPQUERY:
      concatenated).  Routes go from every CA port to every other CA
      port's base LID (data traffic; `plan` lists the queries).
      Prints the channels, dependencies and cycles (back edges of a
      depth-first search) of every VL in use; fails on a missing SL or
      table, an SL on VL 15, and on any cycle (with --want-cycles: fails
      unless there is one).
      With --dst-class FILE ("LID CLASS" lines: the QoS class of the
      routes to that destination LID): prints each class's routes, SLs and
      VLs (every hop whose table is in SMPQUERY, the last hop to the CA
      too), and fails unless every class has routes and no two classes
      share a VL (--want-shared: fails unless two do).

  route_check.py plan TOPO sl|sl2vl|sl2vl-all
      (sl2vl-all: every linked switch port, those facing CAs too)

  route_check.py plan TOPO sl|sl2vl
      The queries the cdg check needs, one per line: for `sl`, "SLID DLID"
      from the first CA port of every switch with CA ports to every other
      CA port's base LID (for saquery -p --src-to-dst SLID:DLID); for
      `sl2vl`, "SWITCHLID PORT" of every switch port facing a switch (for
      smpquery sl2vl SWITCHLID PORT).

  route_check.py degrade NET --fraction F [--seed S]
      Print the ibsim topology NET with a share F of its switch-to-switch
      links removed (both ends), chosen at random (seed S) among links
      whose removal leaves every switch connected to the rest, at most one
      per switch while there are such links.

Exit status 0 when every check holds; otherwise 1 and one line per problem
(the first --max of them) on stdout.
"""

import argparse
import re
import sys

TOPO_RE = re.compile(
    r"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+)\s+(.*)$")
PEER_RE = re.compile(
    r"\s-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+)\s+\(")
DESC_RE = re.compile(r"\(\s*'(.*)'\s+-\s+'(.*)'\s*\)\s*$")
LONE_DESC_RE = re.compile(r"'(.*)'\s*$")
LFT_HEAD_RE = re.compile(
    r"^Unicast lids \[[^\]]*\] of switch (?:Lid|DR path) .*?guid (0x[0-9a-fA-F]+)")
LFT_LINE_RE = re.compile(r"^(0x[0-9a-fA-F]+)\s+(\d+)\b")
LINK_RE = re.compile(
    r'^(0x[0-9a-fA-F]+)\s+"(.*?)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)==>\s*'
    r'(?:(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+)\[)?')

UNICAST_TOP = 0xbfff


class Problems:
    """Collects problem lines; prints the first `limit` of them."""

    def __init__(self, limit):
        self.limit = limit
        self.count = 0

    def add(self, msg):
        self.count += 1
        if self.count <= self.limit:
            print(msg)

    def finish(self, what):
        if self.count > self.limit:
            print(f"... and {self.count - self.limit} more")
        if self.count:
            print(f"{what}: {self.count} problem(s)")
            return 1
        return 0


class Topo:
    """The fabric as `ibnetdiscover -p` shows it.

    Ports are keyed (GUID, port number) where GUID is the port GUID the
    tool prints: a switch's node GUID for each of its ports, a CA port's own
    port GUID.  iblinkinfo keys ports the same way.
    """

    def __init__(self, path):
        self.kind = {}      # guid -> "CA" / "SW" / "RT"
        self.desc = {}      # guid -> node description
        self.lid = {}       # guid -> LID (switch: its port 0; CA: that port)
        self.ca_port = {}   # CA port guid -> port number
        self.peer = {}      # (guid, port) -> (guid, port)
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                self._parse(line.rstrip("\n"))

    def _parse(self, line):
        m = TOPO_RE.match(line)
        if not m:
            return
        kind, lid, port, guid, rest = m.groups()
        guid = int(guid, 16)
        lid = int(lid)
        port = int(port)
        self.kind[guid] = kind
        if kind == "SW":
            # Every line of a switch shows the switch's own (port 0) LID.
            self.lid.setdefault(guid, lid)
        else:
            self.lid[guid] = lid
            self.ca_port[guid] = port
        p = PEER_RE.search(rest)
        d = DESC_RE.search(rest)
        if d:
            self.desc.setdefault(guid, d.group(1))
        else:
            d = LONE_DESC_RE.search(rest)
            if d:
                self.desc.setdefault(guid, d.group(1))
        if p:
            pkind, plid, pport, pguid = p.groups()
            pguid = int(pguid, 16)
            self.peer[(guid, port)] = (pguid, int(pport))
            self.kind.setdefault(pguid, pkind)
            if pkind != "SW":
                self.lid.setdefault(pguid, int(plid))
                self.ca_port.setdefault(pguid, int(pport))
            else:
                self.lid.setdefault(pguid, int(plid))
            if d:
                self.desc.setdefault(pguid, d.group(2))

    def name(self, guid, port=None):
        d = self.desc.get(guid, "?")
        if port is None:
            return f"{d!r} (0x{guid:016x})"
        return f"{d!r}[{port}] (0x{guid:016x})"

    def switches(self):
        return sorted(g for g, k in self.kind.items() if k == "SW")

    def cas(self):
        return sorted(g for g, k in self.kind.items() if k != "SW")

    def ranges(self, lmc):
        """(first, last, guid) of every assigned LID range, sorted."""
        out = []
        for g, k in self.kind.items():
            lid = self.lid.get(g, 0)
            if not lid:
                continue
            n = 1 if k == "SW" else 1 << lmc
            out.append((lid, lid + n - 1, g))
        out.sort()
        return out


def read_lfts(path):
    """switch guid -> {lid: port} from concatenated `ibroute -a -n` dumps."""
    lfts = {}
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LFT_HEAD_RE.match(line)
            if m:
                cur = lfts.setdefault(int(m.group(1), 16), {})
                continue
            m = LFT_LINE_RE.match(line)
            if m and cur is not None:
                cur[int(m.group(1), 16)] = int(m.group(2))
    return lfts


def cmd_links(args):
    probs = Problems(args.max)
    ends = {}
    with open(args.iblinkinfo, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINK_RE.match(line)
            if not m:
                continue
            guid, desc, _lid, port, state, pguid, _plid, pport = m.groups()
            if pguid is None:
                continue
            key = (int(guid, 16), int(port))
            ends[key] = (int(pguid, 16), int(pport))
            words = state.replace("/", " / ").split()
            try:
                i = words.index("/")
                lstate, pstate = words[i - 1], words[i + 1]
            except (ValueError, IndexError):
                lstate, pstate = "?", "?"
            if lstate != "Active" or pstate != "LinkUp":
                probs.add(f"port {desc.strip()!r}[{port}] ({guid}): "
                          f"{lstate}/{pstate}, not Active/LinkUp")
    for key, peer in sorted(ends.items()):
        if ends.get(peer) != key:
            probs.add(f"port 0x{key[0]:016x}[{key[1]}]: peer 0x{peer[0]:016x}"
                      f"[{peer[1]}] does not list it back")
    if args.ends is not None and len(ends) != args.ends:
        probs.add(f"{len(ends)} linked ports seen, expected {args.ends}")
    rc = probs.finish("links")
    if not rc:
        print(f"links: {len(ends)} linked ports, all Active/LinkUp")
    return rc


def cmd_lids(args):
    topo = Topo(args.topo)
    probs = Problems(args.max)
    if not topo.kind:
        probs.add("no node in the topology")
    for g in topo.switches():
        if not topo.lid.get(g):
            probs.add(f"switch {topo.name(g)} has LID 0")
    for g in topo.cas():
        if not topo.lid.get(g):
            probs.add(f"CA port {topo.name(g, topo.ca_port.get(g))} has LID 0")
    step = 1 << args.lmc
    for g in topo.cas():
        lid = topo.lid.get(g, 0)
        if lid and lid % step:
            probs.add(f"CA port {topo.name(g, topo.ca_port.get(g))} base LID "
                      f"{lid} is not a multiple of {step} (LMC {args.lmc})")
    prev = None
    for first, last, g in topo.ranges(args.lmc):
        if last > UNICAST_TOP:
            probs.add(f"{topo.name(g)}: LIDs {first}-{last} beyond 0xbfff")
        if prev and first <= prev[1]:
            probs.add(f"LIDs {first}-{last} of {topo.name(g)} overlap "
                      f"{prev[0]}-{prev[1]} of {topo.name(prev[2])}")
        if not prev or last > prev[1]:
            prev = (first, last, g)
    rc = probs.finish("lids")
    if not rc:
        r = topo.ranges(args.lmc)
        print(f"lids: {len(topo.switches())} switches, {len(topo.cas())} CA "
              f"ports, LIDs {r[0][0]}-{max(x[1] for x in r)}, unique")
    return rc


def assigned(topo, lmc):
    """lid -> (guid, kind) for every assigned LID."""
    owner = {}
    for first, last, g in topo.ranges(lmc):
        for lid in range(first, last + 1):
            owner.setdefault(lid, g)
    return owner


def cmd_missing(args):
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    lids = sorted(assigned(topo, args.lmc))
    for sw in topo.switches():
        lft = lfts.get(sw, {})
        miss = [lid for lid in lids if lid not in lft]
        lid = topo.lid.get(sw)
        if miss and lid:
            print(f"{lid} {miss[0]} {miss[-1]}")
    return 0


TRACE_FROM_RE = re.compile(r"^From switch \{(0x[0-9a-fA-F]+)\}")
TRACE_HOP_RE = re.compile(
    r"^\[(\d+)\] -> (switch|ca|router) port \{(0x[0-9a-fA-F]+)\}")
TRACE_TO_RE = re.compile(r"^To switch \{(0x[0-9a-fA-F]+)\}")


def cmd_tracert(args):
    cur = None
    entries = []
    for line in sys.stdin:
        m = TRACE_FROM_RE.match(line)
        if m:
            cur = int(m.group(1), 16)
            continue
        m = TRACE_HOP_RE.match(line)
        if m and cur is not None:
            entries.append((cur, int(m.group(1))))
            cur = int(m.group(3), 16) if m.group(2) == "switch" else None
            continue
        m = TRACE_TO_RE.match(line)
        if m and cur is not None and int(m.group(1), 16) == cur:
            entries.append((cur, 0))
    for guid, port in entries:
        print(f"Unicast lids [0x{args.dlid:x}-0x{args.dlid:x}] of switch Lid 0 "
              f"guid 0x{guid:016x} (from ibtracert):")
        print(f"0x{args.dlid:04x} {port:03d}")
    return 0


def cmd_routes(args):
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    probs = Problems(args.max)
    owner = assigned(topo, args.lmc)
    avoid = set()
    for a in args.avoid or []:
        g, _, p = a.partition(":")
        avoid.add((int(g, 16), int(p)))
    for sw, port in sorted(avoid):
        lft = lfts.get(sw, {})
        bad = [lid for lid, p in sorted(lft.items())
               if p == port and lid in owner]
        if bad:
            probs.add(f"switch {topo.name(sw)} still routes {len(bad)} LID(s) "
                      f"out of unlinked port {port} (e.g. LID {bad[0]})")
    for sw in topo.switches():
        if sw not in lfts:
            probs.add(f"no LFT dump for switch {topo.name(sw)}")

    # result[(switch, lid)] = (ok, hops to the destination or reason).
    # Walks are shared: every switch on a resolved path gets its result.
    result = {}

    def walk(start, dst):
        path = []
        on_path = {}
        cur = start
        while True:
            known = result.get((cur, dst))
            if known is not None:
                ok, val = known
                break
            if cur in on_path:
                names = " -> ".join(topo.name(s) for s in path[on_path[cur]:])
                ok, val = False, f"loop: {names} -> {topo.name(cur)}"
                break
            on_path[cur] = len(path)
            path.append(cur)
            lft = lfts.get(cur)
            if lft is None:
                ok, val = False, f"no LFT of {topo.name(cur)}"
                break
            out = lft.get(dst)
            if out is None:
                ok, val = False, f"no LFT entry at {topo.name(cur)}"
                break
            if out == 255:
                ok, val = False, f"unrouted (255) at {topo.name(cur)}"
                break
            if out == 0:
                if topo.lid.get(cur) == dst:
                    ok, val = True, 0
                else:
                    ok, val = False, (f"delivered to port 0 of {topo.name(cur)}"
                                      f" whose LID is {topo.lid.get(cur)}")
                break
            if (cur, out) in avoid:
                ok, val = False, f"uses unlinked port {topo.name(cur, out)}"
                break
            nxt = topo.peer.get((cur, out))
            if nxt is None:
                ok, val = False, f"out of unlinked port {topo.name(cur, out)}"
                break
            pg, pp = nxt
            if topo.kind.get(pg) == "SW":
                cur = pg
                continue
            first = topo.lid.get(pg, 0)
            last = first + (1 << args.lmc) - 1
            if first and first <= dst <= last:
                ok, val = True, 0
            else:
                ok, val = False, (f"reached CA port {topo.name(pg, pp)} with "
                                  f"LIDs {first}-{last} from "
                                  f"{topo.name(cur, out)}")
            break
        # Every switch on the path shares the outcome; hops count down.
        for i, s in enumerate(reversed(path)):
            result[(s, dst)] = (ok, val + i + 1 if ok else val)
        return result[(start, dst)]

    nroutes = 0
    nbad = 0
    maxhops = 0
    width = 1 << args.lmc
    dsts = sorted(owner)
    # CA ports on the same switch share every walk: group them.
    attached = {}
    for ca in topo.cas():
        port = topo.ca_port.get(ca)
        src = topo.lid.get(ca, 0)
        nxt = topo.peer.get((ca, port))
        if nxt is not None and topo.kind.get(nxt[0]) == "SW":
            attached.setdefault(nxt[0], []).append(ca)
            continue
        for dst in dsts:
            if src and src <= dst < src + width:
                continue
            nroutes += 1
            if nxt is None:
                ok, val = False, "the CA port has no link"
            else:
                # Back-to-back CAs: the peer must own the LID.
                first = topo.lid.get(nxt[0], 0)
                ok = first <= dst < first + width
                val = 1 if ok else "back-to-back peer does not own it"
            if ok:
                maxhops = max(maxhops, val)
            else:
                nbad += 1
                probs.add(f"{topo.name(ca, port)} LID {src} -> LID {dst} "
                          f"({topo.name(owner[dst])}): {val}")
    for sw in sorted(attached):
        cas = attached[sw]
        here = set(cas)
        for dst in dsts:
            ok, val = walk(sw, dst)
            # A port does not route to its own LIDs.
            srcs = len(cas) - (1 if owner[dst] in here else 0)
            nroutes += srcs
            if ok:
                maxhops = max(maxhops, val)
                continue
            nbad += srcs
            for ca in cas:
                if ca == owner[dst]:
                    continue
                probs.add(f"{topo.name(ca, topo.ca_port.get(ca))} LID "
                          f"{topo.lid.get(ca, 0)} -> LID {dst} "
                          f"({topo.name(owner[dst])}): {val}")
    rc = probs.finish("routes")
    if not rc:
        print(f"routes: {nroutes} CA-port-to-LID routes valid, "
              f"{len(owner)} LIDs, at most {maxhops} switch hops")
    else:
        print(f"routes: {nbad} of {nroutes} routes broken")
    return rc


def walk_to(topo, lfts, start, dst, lmc, limit=64):
    """Switch hops from switch `start` to LID `dst`: a list of
    (switch, out port), the last one leaving for a CA (or out 0 at the
    switch owning dst); or (None, reason) when the walk fails."""
    hops = []
    seen = set()
    cur = start
    while True:
        if cur in seen or len(hops) > limit:
            return None, f"loop at {topo.name(cur)}"
        seen.add(cur)
        out = lfts.get(cur, {}).get(dst)
        if out is None or out == 255:
            return None, f"no route at {topo.name(cur)}"
        hops.append((cur, out))
        if out == 0:
            if topo.lid.get(cur) == dst:
                return hops, None
            return None, f"port 0 of {topo.name(cur)} does not own it"
        nxt = topo.peer.get((cur, out))
        if nxt is None:
            return None, f"out of unlinked port {topo.name(cur, out)}"
        if topo.kind.get(nxt[0]) == "SW":
            cur = nxt[0]
            continue
        first = topo.lid.get(nxt[0], 0)
        if first and first <= dst < first + (1 << lmc):
            return hops, None
        return None, f"reached the wrong CA port {topo.name(*nxt)}"


def ca_attach(topo):
    """CA port guid -> (switch guid, switch port) for CA ports on switches."""
    out = {}
    for ca in topo.cas():
        port = topo.ca_port.get(ca)
        nxt = topo.peer.get((ca, port))
        if nxt is not None and topo.kind.get(nxt[0]) == "SW":
            out[ca] = nxt
    return out


def isl_links(topo):
    """Directed inter-switch links: (switch, port) facing a switch."""
    return sorted(k for k, v in topo.peer.items()
                  if topo.kind.get(k[0]) == "SW" and topo.kind.get(v[0]) == "SW")


def cmd_load(args):
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    probs = Problems(args.max)
    att = ca_attach(topo)
    links = isl_links(topo)
    load = dict.fromkeys(links, 0)
    per_switch = {}
    for ca, (sw, _p) in att.items():
        per_switch[sw] = per_switch.get(sw, 0) + 1
    dsts = sorted((topo.lid[ca], ca) for ca in topo.cas() if topo.lid.get(ca))
    routes = 0
    for dst, dca in dsts:
        for sw, n in sorted(per_switch.items()):
            srcs = n - (1 if att.get(dca, (None,))[0] == sw else 0)
            if not srcs:
                continue
            hops, why = walk_to(topo, lfts, sw, dst, args.lmc)
            routes += srcs
            if hops is None:
                probs.add(f"switch {topo.name(sw)} -> LID {dst}: {why}")
                continue
            for h in hops:
                if h in load:
                    load[h] += srcs
    total = sum(load.values())
    if not links:
        probs.add("no inter-switch link")
    ideal = total / len(links) if links else 0.0
    top = max(load.values()) if load else 0
    ratio = top / ideal if ideal else 0.0
    unused = sum(1 for v in load.values() if not v)
    worst = max(load, key=load.get) if load else None
    print(f"load: {routes} routes, {len(links)} directed inter-switch links "
          f"({unused} unused), total {total}, ideal {ideal:.2f}, max {top}"
          + (f" on {topo.name(*worst)}" if worst else "")
          + f", ratio {ratio:.3f}")
    if args.max_ratio is not None and ratio > args.max_ratio:
        probs.add(f"max link load is {ratio:.3f} x ideal, above "
                  f"{args.max_ratio}")
    if args.min_ratio is not None and ratio <= args.min_ratio:
        probs.add(f"max link load is {ratio:.3f} x ideal, not above "
                  f"{args.min_ratio}")
    return probs.finish("load")


def cmd_lmc_share(args):
    """Pairs of LIDs of one destination port's LMC range whose paths from
    the same source share a directed inter-switch link."""
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    probs = Problems(args.max)
    att = ca_attach(topo)
    links = set(isl_links(topo))
    per_switch = {}
    for ca, (sw, _p) in att.items():
        per_switch[sw] = per_switch.get(sw, 0) + 1
    n = 1 << args.lmc
    pairs = shared = 0
    for dca in sorted(topo.cas()):
        base = topo.lid.get(dca)
        if not base:
            continue
        for sw, cnt in sorted(per_switch.items()):
            srcs = cnt - (1 if att.get(dca, (None,))[0] == sw else 0)
            if not srcs:
                continue
            paths = []
            for off in range(n):
                hops, why = walk_to(topo, lfts, sw, base + off, args.lmc)
                if hops is None:
                    probs.add(f"switch {topo.name(sw)} -> LID {base + off}:"
                              f" {why}")
                    hops = []
                paths.append({h for h in hops if h in links})
            for i in range(n):
                for j in range(i + 1, n):
                    pairs += srcs
                    if paths[i] & paths[j]:
                        shared += srcs
    share = 100.0 * shared / pairs if pairs else 0.0
    print(f"lmc-share: {pairs} LID pairs between the same two ports, "
          f"{shared} share an inter-switch link ({share:.1f}%)")
    return probs.finish("lmc-share")


def cmd_vls(args):
    """The VLs data can travel on: SL-to-VL tables of switch-facing output
    ports, for inputs that are linked (or port 0), SLs 0-14."""
    topo = Topo(args.topo)
    tables = read_sl2vl(args.sl2vl)
    by_lid = {topo.lid[g]: g for g, k in topo.kind.items()
              if k == "SW" and topo.lid.get(g)}
    used = set()
    for lid, tabs in tables.items():
        g = by_lid.get(lid)
        if g is None:
            continue
        for (inp, out), vls in tabs.items():
            if inp and (g, inp) not in topo.peer:
                continue
            if (g, out) not in topo.peer:
                continue
            used.update(v for sl, v in enumerate(vls) if sl < 15 and v != 15)
    print(f"vls: {len(used)} ({','.join(str(v) for v in sorted(used))})")
    return 0


SA_FIELD_RE = re.compile(r"^\s*(dlid|slid|sl)\.{3,}(\S+)")
SL2VL_HEAD_RE = re.compile(r"^# SL2VL table: Lid (\d+)")
SL2VL_ROW_RE = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$")


def read_path_sls(path):
    """(slid, dlid) -> SL from concatenated `saquery -p` output."""
    sls = {}
    rec = {}

    def flush():
        if {"slid", "dlid", "sl"} <= rec.keys():
            sls[(rec["slid"], rec["dlid"])] = rec["sl"]
        rec.clear()

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("PathRecord dump"):
                flush()
                continue
            m = SA_FIELD_RE.match(line)
            if m:
                rec[m.group(1)] = int(m.group(2), 0)
    flush()
    return sls


def read_sl2vl(path):
    """LID -> {(in, out): [VL of SL 0..15]} from `smpquery sl2vl` output."""
    tabs = {}
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SL2VL_HEAD_RE.match(line)
            if m:
                cur = tabs.setdefault(int(m.group(1)), {})
                continue
            m = SL2VL_ROW_RE.match(line)
            if m and cur is not None:
                vls = [int(x) for x in m.group(3).split("|")]
                if len(vls) == 16:
                    cur[(int(m.group(1)), int(m.group(2)))] = vls
    return tabs


def count_back_edges(nodes, edges):
    """Back edges of an iterative depth-first search over `edges`
    (node -> set of nodes): each one closes a cycle; 0 = acyclic."""
    color = dict.fromkeys(nodes, 0)
    back = []
    for root in nodes:
        if color[root]:
            continue
        color[root] = 1
        stack = [(root, iter(edges.get(root, ())))]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                c = color.get(nxt, 0)
                if c == 0:
                    color[nxt] = 1
                    stack.append((nxt, iter(edges.get(nxt, ()))))
                    break
                if c == 1:
                    back.append((node, nxt))
            else:
                color[node] = 2
                stack.pop()
    return back


def cmd_cdg(args):
    topo = Topo(args.topo)
    lfts = read_lfts(args.lfts)
    probs = Problems(args.max)
    sls = read_path_sls(args.sl)
    tabs = read_sl2vl(args.sl2vl)
    att = ca_attach(topo)
    by_lid = {}
    for g, lid in topo.lid.items():
        if lid:
            by_lid[lid] = g
    lid_of_switch = {g: topo.lid.get(g) for g in topo.switches()}
    dsts = sorted(topo.lid[ca] for ca in topo.cas() if topo.lid.get(ca))
    # The SL of a CA port's routes: its own samples, else a sampled port's
    # on the same switch.
    own = {}
    for (slid, dlid), sl in sls.items():
        ca = by_lid.get(slid)
        if ca is None:
            for first, last, g in topo.ranges(args.lmc):
                if first <= slid <= last:
                    ca = g
        if ca is None or ca not in att:
            continue
        own.setdefault(ca, {})[dlid] = sl
    per_switch = {}
    for ca, samples in sorted(own.items()):
        sw = att[ca][0]
        agg = per_switch.setdefault(sw, {})
        for dlid, sl in samples.items():
            if agg.setdefault(dlid, sl) != sl:
                probs.add(f"CA ports of switch {topo.name(sw)} have different "
                          f"SLs to LID {dlid}")
    dst_class = {}
    if args.dst_class:
        with open(args.dst_class, encoding="utf-8") as f:
            for line in f:
                w = line.split()
                if len(w) == 2:
                    dst_class[int(w[0], 0)] = w[1]
    cls_vls, cls_sls, cls_routes = {}, {}, {}
    edges = {}
    nodes = set()
    vl_paths = {}
    routes = 0
    for ca in sorted(att):
        sw, inport = att[ca]
        table = own.get(ca) or per_switch.get(sw)
        if not table:
            probs.add(f"no PathRecord SL for any CA port of switch "
                      f"{topo.name(sw)}")
            continue
        first = topo.lid.get(ca, 0)
        for dst in dsts:
            if first and first <= dst < first + (1 << args.lmc):
                continue
            sl = table.get(dst)
            if sl is None:
                sl = (per_switch.get(sw) or {}).get(dst)
            if sl is None:
                probs.add(f"no PathRecord SL from switch {topo.name(sw)} to "
                          f"LID {dst}")
                continue
            hops, why = walk_to(topo, lfts, sw, dst, args.lmc)
            if hops is None:
                probs.add(f"{topo.name(ca, topo.ca_port.get(ca))} -> LID "
                          f"{dst}: {why}")
                continue
            routes += 1
            cls = dst_class.get(dst)
            if cls is not None:
                cls_routes[cls] = cls_routes.get(cls, 0) + 1
                cls_sls.setdefault(cls, set()).add(sl)
            prev = None
            ip = inport
            for cur, out in hops:
                nxt = topo.peer.get((cur, out))
                if out == 0 or nxt is None or topo.kind.get(nxt[0]) != "SW":
                    t = tabs.get(lid_of_switch.get(cur), {}).get((ip, out))
                    if cls is not None and t is not None:
                        cls_vls.setdefault(cls, set()).add(t[sl])
                    break
                t = tabs.get(lid_of_switch.get(cur), {}).get((ip, out))
                if t is None:
                    probs.add(f"no SL2VL table of {topo.name(cur)} in {ip} "
                              f"out {out}")
                    break
                vl = t[sl]
                if vl == 15:
                    probs.add(f"SL {sl} goes to VL 15 (dropped) at "
                              f"{topo.name(cur, out)} from port {ip}")
                    break
                if cls is not None:
                    cls_vls.setdefault(cls, set()).add(vl)
                node = (cur, out, vl)
                nodes.add(node)
                vl_paths[vl] = vl_paths.get(vl, 0) + 1
                if prev is not None:
                    edges.setdefault(prev, set()).add(node)
                prev = node
                ip = nxt[1]
    back = count_back_edges(sorted(nodes), edges)
    cycles = {}
    for _a, b in back:
        cycles[b[2]] = cycles.get(b[2], 0) + 1
    total = 0
    for vl in sorted({n[2] for n in nodes}):
        chans = sum(1 for n in nodes if n[2] == vl)
        deps = sum(len(v) for k, v in edges.items() if k[2] == vl)
        print(f"cdg: VL {vl}: {chans} channels, {deps} dependencies, "
              f"{cycles.get(vl, 0)} cycles")
        total += cycles.get(vl, 0)
    print(f"cdg: {routes} routes, {len({n[2] for n in nodes})} VLs, "
          f"{total} cycles")
    shared = []
    for cls in sorted(set(dst_class.values())):
        vls = sorted(cls_vls.get(cls, ()))
        print(f"class {cls}: {cls_routes.get(cls, 0)} routes, SLs "
              f"{sorted(cls_sls.get(cls, ()))}, VLs {vls}")
        if not cls_routes.get(cls):
            probs.add(f"class {cls}: no route")
        for other in sorted(set(dst_class.values())):
            if other > cls and cls_vls.get(cls, set()) & cls_vls.get(other,
                                                                    set()):
                shared.append(f"classes {cls} and {other} share VLs "
                              f"{sorted(cls_vls[cls] & cls_vls[other])}")
    if args.want_shared:
        if not shared:
            probs.add("no two classes share a VL")
    else:
        for msg in shared:
            probs.add(msg)
    if args.want_cycles:
        if not total:
            probs.add("no cycle in any VL's channel dependency graph")
    elif total:
        for a, b in back[:3]:
            probs.add(f"VL {b[2]}: a cycle closes from {topo.name(a[0], a[1])}"
                      f" to {topo.name(b[0], b[1])}")
        probs.add(f"{total} cycle(s) in the channel dependency graphs")
    return probs.finish("cdg")


NET_HEAD_RE = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"')
NET_PORT_RE = re.compile(r'^\s*\[(\d+)\]\s*"([^"]+)"\[(\d+)\]')


def cmd_degrade(args):
    import random
    with open(args.net, encoding="utf-8") as f:
        lines = f.read().split("\n")
    kind = {}
    cur = None
    ports = []          # (line index, node, port, peer, peer port)
    for i, line in enumerate(lines):
        m = NET_HEAD_RE.match(line)
        if m:
            cur = m.group(3)
            kind[cur] = m.group(1)
            continue
        m = NET_PORT_RE.match(line)
        if m and cur is not None:
            ports.append((i, cur, int(m.group(1)), m.group(2), int(m.group(3))))
    links = sorted({tuple(sorted([(n, p), (q, qp)]))
                    for _i, n, p, q, qp in ports
                    if kind.get(n) == "Switch" and kind.get(q) == "Switch"})
    adj = {}
    for (a, _pa), (b, _pb) in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    rng = random.Random(args.seed)
    want = max(1, round(len(links) * args.fraction))
    order = links[:]
    rng.shuffle(order)
    gone = set()

    def connected():
        left = [l for l in links if l not in gone]
        g = {}
        for (a, _x), (b, _y) in left:
            g.setdefault(a, set()).add(b)
            g.setdefault(b, set()).add(a)
        sws = [n for n, k in kind.items() if k == "Switch"]
        if not sws:
            return True
        seen = {sws[0]}
        todo = [sws[0]]
        while todo:
            for m in g.get(todo.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return len(seen) == len(sws)

    # Spread the holes: at most one removed link per switch while that
    # can be had (a switch that loses several of few links has no
    # balanced routing left to find), then any link.
    hit = set()
    for spread in (True, False):
        for l in order:
            if len(gone) >= want:
                break
            ends = {l[0][0], l[1][0]}
            if l in gone or (spread and ends & hit):
                continue
            gone.add(l)
            if not connected():
                gone.discard(l)
                continue
            hit |= ends
    drop = set()
    for i, n, p, q, qp in ports:
        if tuple(sorted([(n, p), (q, qp)])) in gone:
            drop.add(i)
    sys.stdout.write("\n".join(l for i, l in enumerate(lines) if i not in drop))
    print(f"# degrade: {len(gone)} of {len(links)} switch links removed",
          file=sys.stderr)
    return 0


def cmd_plan(args):
    topo = Topo(args.topo)
    if args.what == "sl2vl":
        for sw, port in isl_links(topo):
            print(f"{topo.lid.get(sw, 0)} {port}")
        return 0
    if args.what == "sl2vl-all":
        for (g, port), _peer in sorted(topo.peer.items()):
            if topo.kind.get(g) == "SW" and port:
                print(f"{topo.lid.get(g, 0)} {port}")
        return 0
    att = ca_attach(topo)
    first = {}
    for ca in sorted(att, key=lambda g: topo.lid.get(g, 0)):
        if topo.lid.get(ca):
            first.setdefault(att[ca][0], ca)
    dsts = sorted(topo.lid[ca] for ca in topo.cas() if topo.lid.get(ca))
    for sw in sorted(first):
        slid = topo.lid[first[sw]]
        for dlid in dsts:
            if dlid != slid:
                print(f"{slid} {dlid}")
    return 0


def main():
    ap = argparse.ArgumentParser(
        description="Check links, LIDs and routes from infiniband-diags "
                    "output.")
    ap.add_argument("--max", type=int, default=20,
                    help="problems printed (default 20)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("links")
    p.add_argument("iblinkinfo")
    p.add_argument("--ends", type=int)
    p = sub.add_parser("lids")
    p.add_argument("topo")
    p.add_argument("--lmc", type=int, default=0)
    p = sub.add_parser("missing")
    p.add_argument("topo")
    p.add_argument("lfts")
    p.add_argument("--lmc", type=int, default=0)
    p = sub.add_parser("tracert")
    p.add_argument("dlid", type=int)
    p = sub.add_parser("routes")
    p.add_argument("topo")
    p.add_argument("lfts")
    p.add_argument("--lmc", type=int, default=0)
    p.add_argument("--avoid", action="append", metavar="GUID:PORT")
    p = sub.add_parser("load")
    p.add_argument("topo")
    p.add_argument("lfts")
    p.add_argument("--lmc", type=int, default=0)
    p.add_argument("--max-ratio", type=float)
    p.add_argument("--min-ratio", type=float)
    p = sub.add_parser("vls")
    p.add_argument("topo")
    p.add_argument("sl2vl")
    p = sub.add_parser("lmc-share")
    p.add_argument("topo")
    p.add_argument("lfts")
    p.add_argument("--lmc", type=int, required=True)
    p = sub.add_parser("cdg")
    p.add_argument("topo")
    p.add_argument("lfts")
    p.add_argument("--sl", required=True)
    p.add_argument("--sl2vl", required=True)
    p.add_argument("--lmc", type=int, default=0)
    p.add_argument("--want-cycles", action="store_true")
    p.add_argument("--dst-class")
    p.add_argument("--want-shared", action="store_true")
    p = sub.add_parser("plan")
    p.add_argument("topo")
    p.add_argument("what", choices=["sl", "sl2vl", "sl2vl-all"])
    p = sub.add_parser("degrade")
    p.add_argument("net")
    p.add_argument("--fraction", type=float, required=True)
    p.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    return {"links": cmd_links, "lids": cmd_lids, "missing": cmd_missing,
            "tracert": cmd_tracert, "routes": cmd_routes, "load": cmd_load,
            "cdg": cmd_cdg, "lmc-share": cmd_lmc_share, "vls": cmd_vls, "plan": cmd_plan, "degrade": cmd_degrade}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
