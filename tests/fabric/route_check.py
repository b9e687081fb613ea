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
    args = ap.parse_args()
    return {"links": cmd_links, "lids": cmd_lids, "missing": cmd_missing,
            "tracert": cmd_tracert, "routes": cmd_routes}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
