#!/usr/bin/env python3
"""cut_net.py - an ibsim topology with a link or a switch taken out.

  cut_net.py NET --link NAME_A NAME_B   drop the links between two nodes
  cut_net.py NET --switch NAME          drop a switch and the hosts whose
                                        only links lead to it
  cut_net.py NET --globals F [--seed S] drop a share F of the links between
                                        two host-less switches (Dragonfly+
                                        global links), chosen at random
Prints the new topology on stdout (both ends of every dropped link go).
"""
import argparse
import re
import sys

HEAD = re.compile(r'^(Switch|Hca|Rt)\s+\d+\s+"([^"]+)"')
PORT = re.compile(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\]')


def blocks(lines):
    """[(name or None, [lines])]: the header comment, then one per node."""
    out = [(None, [])]
    for line in lines:
        m = HEAD.match(line)
        if m:
            out.append((m.group(2), [line]))
        else:
            out[-1][1].append(line)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("net")
    ap.add_argument("--link", nargs=2, metavar="NAME")
    ap.add_argument("--switch", metavar="NAME")
    ap.add_argument("--globals", type=float, metavar="F")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    with open(a.net, encoding="utf-8") as f:
        bl = blocks(f.read().split("\n"))
    gone = set()
    if a.switch:
        gone.add(a.switch)
        for name, ls in bl:
            peers = {PORT.match(l).group(2) for l in ls if PORT.match(l)}
            if name and peers and peers <= {a.switch}:
                gone.add(name)
    cut = set()
    if a.globals:
        import random
        hosty = {n for n, ls in bl if n and any(
            PORT.match(l) and not PORT.match(l).group(2).startswith(
                ("dfp-", "torus-", "mesh-", "leaf", "spine", "core", "rand"))
            for l in ls)}
        kind = {n: ls[0].split()[0] for n, ls in bl if n}
        links = sorted({tuple(sorted((n, PORT.match(l).group(2))))
                        for n, ls in bl if n and kind[n] == "Switch"
                        for l in ls if PORT.match(l)
                        and kind.get(PORT.match(l).group(2)) == "Switch"
                        and n not in hosty
                        and PORT.match(l).group(2) not in hosty})
        rng = random.Random(a.seed)
        cut = set(rng.sample(links, max(1, round(len(links) * a.globals))))
        sys.stderr.write("cut_net: %d of %d global links removed\n"
                         % (len(cut), len(links)))
    if not a.link and not a.switch and not cut:
        ap.error("--link, --switch or --globals")
    found = False
    for name, ls in bl:
        if name in gone:
            found = True
            continue
        for l in ls:
            m = PORT.match(l)
            if m and m.group(2) in gone:
                continue
            if m and a.link and {name, m.group(2)} == set(a.link):
                found = True
                continue
            if m and tuple(sorted((name, m.group(2)))) in cut:
                found = True
                continue
            sys.stdout.write(l + "\n")
    if not found:
        sys.exit("cut_net.py: nothing to cut in %s" % a.net)


if __name__ == "__main__":
    main(sys.argv[1:])
