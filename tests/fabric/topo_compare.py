#!/usr/bin/env python3
"""topo_compare.py - compare two fabric topologies in ibnetdiscover format.

    topo_compare.py [options] REFERENCE OTHER
    topo_compare.py --summary FILE

Both files are ibnetdiscover topology output (or ibsm's --dump-fabric,
which uses the same format).  Either may also be an ibsim .net file
(nodes named "leaf-01", "H0001"; no GUIDs): its nodes are then matched to
the other file's nodes by node description, so a discovery can be checked
against the topology it ran on.  Each file is read into

    nodes  {node guid: Node(type, nports, desc, sysimgguid, vendid, devid)}
    links  {((guid A, port A), (guid B, port B))}  (ends sorted)

where a link end is (node guid, port number) for switches and CAs alike,
plus the port GUIDs of CA ports and each link's width and speed
("4xEDR").  Node GUIDs come from the quoted names ibnetdiscover gives
nodes and peers ("S-", "H-" or "R-" and 16 hex digits), checked against
the record's switchguid=/caguid=/rtguid= line.

Exit status 0 when the topologies are equal, 1 with a list of the
differences (missing/extra nodes, field mismatches, missing/extra links),
2 on a usage or parse error.
"""

import argparse
import re
import sys

GUID_NAME = re.compile(r'^[SHR]-([0-9a-fA-F]{1,16})$')
HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]*)"\s*(?:#\s*(.*))?$')
# "[1]", "[1](portguid)", optionally "[1][ext 5]", then the peer:
# "\"S-0002c903000a1b2c\"[3]" and optionally "(portguid)" (CA peers).
PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*'
    r'"([^"]*)"\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*'
    r'(?:#\s*(.*))?$')
SPEED = re.compile(r'^\d+x[A-Za-z0-9]+$')
KEYVAL = re.compile(r'^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)'
                    r'=(0x[0-9a-fA-F]+|[0-9]+)')
TYPES = {"Switch": "Switch", "Ca": "Ca", "Hca": "Ca", "Rt": "Rt"}


class ParseError(Exception):
    pass


class Node:
    FIELDS = ("type", "nports", "desc", "sysimgguid", "vendid", "devid")

    def __init__(self, ntype, nports, desc, extra):
        self.type = ntype
        self.nports = nports
        self.desc = desc
        self.sysimgguid = extra.get("sysimgguid")
        self.vendid = extra.get("vendid")
        self.devid = extra.get("devid")

    def show(self):
        return '%s %d "%s"' % (self.type, self.nports, self.desc)


class Topology:
    def __init__(self, path):
        self.path = path
        self.nodes = {}          # guid -> Node
        self.links = {}          # (end, end) -> {"speed": ..., "lid": ...}
        self.portguids = {}      # (guid, port) -> port guid (CA ports)
        self.half = {}           # (guid, port) -> (peer guid, peer port)
        self.problems = []       # inconsistencies inside the file
        self.speed_problems = []  # links whose two ends differ in speed
        self.named = False       # keyed by ibsim node names, not GUIDs
        self.label = {}          # key -> name to show for unmatched nodes


def guid_of_name(name):
    m = GUID_NAME.match(name)
    return int(m.group(1), 16) if m else None


def parse_desc(comment):
    """'"desc" base port 0 lid 3 lmc 0' -> desc (quoted or bare)."""
    if comment is None:
        return ""
    comment = comment.strip()
    if comment.startswith('"'):
        end = comment.find('"', 1)
        return comment[1:end] if end > 0 else comment[1:]
    return comment


def parse_port_tail(comment):
    """Width/speed and the peer's lid from the tail of a port line."""
    speed = lid = None
    if comment:
        # Drop quoted descriptions, keep the tokens around them.
        tokens = re.sub(r'"[^"]*"', " ", comment).split()
        for i, tok in enumerate(tokens):
            if SPEED.match(tok):
                speed = tok
            if tok == "lid" and i + 1 < len(tokens) and tokens[i + 1].isdigit():
                lid = int(tokens[i + 1])
    return speed, lid


def parse(path):
    topo = Topology(path)
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ParseError("%s: %s" % (path, e.strerror))
    extra = {}
    cur = None                   # guid of the current record
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        where = "%s:%d" % (path, lineno)
        if not line or line.startswith("#"):
            if not line:
                cur = None
            continue
        m = KEYVAL.match(line)
        if m:
            if cur is not None:
                extra = {}
                cur = None
            extra[m.group(1)] = int(m.group(2), 0)
            continue
        m = HEADER.match(line)
        if m:
            ntype = TYPES[m.group(1)]
            # ibnetdiscover names nodes "S-<guid>"; in an ibsim .net file
            # names are free and switchguid=/caguid= only set the base
            # GUID of the nodes that follow: key those nodes by name.
            guid = guid_of_name(m.group(3))
            line_guid = extra.get({"Switch": "switchguid", "Ca": "caguid",
                                   "Rt": "rtguid"}[ntype])
            if guid is None:
                guid = m.group(3)
                topo.named = True
            elif line_guid is not None and line_guid != guid:
                topo.problems.append("%s: node name %s but GUID line 0x%x"
                                     % (where, m.group(3), line_guid))
            if guid in topo.nodes:
                topo.problems.append("%s: node %s listed twice" % (where, show_key(guid)))
            desc = parse_desc(m.group(4))
            if isinstance(guid, str) and not desc:
                desc = guid          # ibsim's default description
            topo.nodes[guid] = Node(ntype, int(m.group(2)), desc, extra)
            extra = {}
            cur = guid
            continue
        m = PORT.match(line)
        if m:
            if cur is None:
                raise ParseError("%s: port line outside a node record" % where)
            port, lpguid, pname, pport, ppguid, tail = m.groups()
            port, pport = int(port), int(pport)
            peer = guid_of_name(pname)
            if peer is None:
                if not isinstance(cur, str):
                    raise ParseError("%s: peer name %r carries no GUID" % (where, pname))
                peer = pname
            node = topo.nodes[cur]
            if port < 1 or port > node.nports:
                topo.problems.append("%s: port %d outside 1..%d" % (where, port, node.nports))
            if lpguid:
                topo.portguids[(cur, port)] = int(lpguid, 16)
            if ppguid:
                topo.portguids[(peer, pport)] = int(ppguid, 16)
            here, there = (cur, port), (peer, pport)
            if here in topo.half and topo.half[here] != there:
                topo.problems.append("%s: %s linked twice" % (where, show_end(here)))
            topo.half[here] = there
            speed, lid = parse_port_tail(tail)
            key = tuple(sorted((here, there)))
            info = topo.links.setdefault(key, {})
            if speed:
                if info.get("speed") not in (None, speed):
                    topo.speed_problems.append("%s: %s here, %s on the other end"
                                               % (where, speed, info["speed"]))
                info["speed"] = speed
                info.setdefault("speed_at", {})[here] = speed
            info.setdefault("lids", {})[there] = lid
            continue
        if line.startswith(("vendid", "devid", "sysimgguid", "switchguid",
                            "caguid", "rtguid")):
            raise ParseError("%s: bad line %r" % (where, raw))
        raise ParseError("%s: cannot parse %r" % (where, raw))
    # Both ends of a link are listed when both nodes are in the file.
    for (a, b) in topo.links:
        for here, there in ((a, b), (b, a)):
            if here[0] in topo.nodes and topo.half.get(here) is None:
                topo.problems.append(
                    "%s: link %s lists only one end (%s has no line)"
                    % (path, show_link((a, b)), show_end(here)))
            elif here[0] not in topo.nodes:
                topo.problems.append("%s: link to unknown node %s"
                                     % (path, show_key(here[0])))
    return topo


def show_key(key):
    return '"%s"' % key if isinstance(key, str) else "0x%016x" % key


def show_end(end):
    return "%s[%d]" % (show_key(end[0]), end[1])


def translate(named, ref):
    """Re-key an ibsim .net topology by the GUIDs of ref (by description)."""
    by_desc = {}
    for guid, node in ref.nodes.items():
        by_desc.setdefault(node.desc, []).append(guid)
    fake = 0xfff0000000000000
    new = {}
    for name in sorted(named.nodes):
        guids = by_desc.get(named.nodes[name].desc, [])
        if len(guids) == 1:
            new[name] = guids[0]
        else:                # absent, or ambiguous description
            fake += 1
            new[name] = fake
            named.label[fake] = name
    t = Topology(named.path)
    t.label = named.label
    t.problems = named.problems
    t.speed_problems = named.speed_problems
    t.nodes = {new[k]: n for k, n in named.nodes.items()}

    def end(e):
        return (new.get(e[0], e[0]), e[1])
    for key, info in named.links.items():
        t.links[tuple(sorted((end(key[0]), end(key[1]))))] = info
    t.half = {end(k): end(v) for k, v in named.half.items()}
    return t


def show_link(key):
    return "%s <-> %s" % (show_end(key[0]), show_end(key[1]))


def node_name(topo, guid):
    node = topo.nodes.get(guid)
    return '"%s"' % node.desc if node else "?"


def compare(a, b, opts):
    diffs = []
    if a.named and b.named:
        raise ParseError("two ibsim .net files: nothing to match GUIDs with")
    if a.named:
        a = translate(a, b)
    elif b.named:
        b = translate(b, a)
    for t in (a, b):
        for fake, name in t.label.items():
            if fake in t.nodes:
                t.nodes[fake].desc += " (ibsim name %s, no match)" % name
    for t in (a, b):
        diffs += ["inconsistent: %s" % p for p in t.problems]
        if t.speed_problems and not opts.ignore_speed:
            diffs.append("inconsistent: %s: %d link(s) with a different speed "
                         "on each end, e.g. %s" % (t.path, len(t.speed_problems),
                                                   "; ".join(t.speed_problems[:2])))
    for guid in sorted(a.nodes.keys() - b.nodes.keys()):
        diffs.append("missing node 0x%016x %s" % (guid, a.nodes[guid].show()))
    for guid in sorted(b.nodes.keys() - a.nodes.keys()):
        diffs.append("extra node 0x%016x %s" % (guid, b.nodes[guid].show()))
    fields = [f for f in Node.FIELDS
              if not (f == "desc" and opts.ignore_desc)]
    for guid in sorted(a.nodes.keys() & b.nodes.keys()):
        na, nb = a.nodes[guid], b.nodes[guid]
        for f in fields:
            va, vb = getattr(na, f), getattr(nb, f)
            if f in ("sysimgguid", "vendid", "devid") and (va is None or vb is None):
                continue
            if va != vb:
                fmt = "0x%x" if isinstance(va, int) and f != "nports" else "%r"
                diffs.append("node 0x%016x %s: %s %s != %s" % (
                    guid, na.show(), f, fmt % va if va is not None else None,
                    fmt % vb if vb is not None else None))
    for end in sorted(a.portguids.keys() & b.portguids.keys()):
        if a.portguids[end] != b.portguids[end]:
            diffs.append("port %s: port guid 0x%x != 0x%x" % (
                show_end(end), a.portguids[end], b.portguids[end]))
    for key in sorted(a.links.keys() - b.links.keys()):
        diffs.append("missing link %s (%s - %s)" % (
            show_link(key), node_name(a, key[0][0]), node_name(a, key[1][0])))
    for key in sorted(b.links.keys() - a.links.keys()):
        diffs.append("extra link %s (%s - %s)" % (
            show_link(key), node_name(b, key[0][0]), node_name(b, key[1][0])))
    for key in sorted(a.links.keys() & b.links.keys()):
        la, lb = a.links[key], b.links[key]
        if not opts.ignore_speed:
            sa, sb = la.get("speed_at", {}), lb.get("speed_at", {})
            for end in sorted(sa.keys() & sb.keys()):
                if sa[end] != sb[end]:
                    diffs.append("link %s: speed on the %s line %s != %s" % (
                        show_link(key), show_end(end), sa[end], sb[end]))
        if opts.lids and la.get("lids") != lb.get("lids"):
            diffs.append("link %s: lids %s != %s" % (
                show_link(key), la.get("lids"), lb.get("lids")))
    return diffs


def summary(t):
    sw = sum(1 for n in t.nodes.values() if n.type == "Switch")
    return "%d nodes (%d switches, %d CAs/routers), %d links" % (
        len(t.nodes), sw, len(t.nodes) - sw, len(t.links))


def main(argv):
    p = argparse.ArgumentParser(
        description="Compare two ibnetdiscover-format topology files.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="REFERENCE OTHER (or one FILE with --summary)")
    p.add_argument("--summary", action="store_true",
                   help="print node and link counts of each FILE and exit")
    p.add_argument("--ignore-desc", action="store_true",
                   help="do not compare node descriptions")
    p.add_argument("--ignore-speed", action="store_true",
                   help="do not compare link width/speed")
    p.add_argument("--lids", action="store_true",
                   help="also compare the LIDs printed on port lines")
    p.add_argument("--max", type=int, default=40,
                   help="differences to print (default 40, 0 = all)")
    opts = p.parse_args(argv)
    try:
        topos = [parse(f) for f in opts.files]
        if len(topos) == 2 and not opts.summary:
            diffs = compare(topos[0], topos[1], opts)
    except ParseError as e:
        print("topo_compare: %s" % e, file=sys.stderr)
        return 2
    if opts.summary:
        for t in topos:
            print("%s: %s" % (t.path, summary(t)))
        return 0
    if len(topos) != 2:
        p.error("need exactly two files to compare")
    a, b = topos
    if not diffs:
        print("equal: %s" % summary(a))
        return 0
    shown = diffs if opts.max <= 0 else diffs[:opts.max]
    print("%d difference(s) between %s (%s) and %s (%s):"
          % (len(diffs), a.path, summary(a), b.path, summary(b)))
    for d in shown:
        print("  " + d)
    if len(shown) < len(diffs):
        print("  ... %d more" % (len(diffs) - len(shown)))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
