#!/usr/bin/env python3
"""torus_holes.py - ibsm's torus engine on tori with a switch removed at
random places, then also a random link: the engine each run ends up with
(auto's choice), max link load / ideal and cycles per VL, from ibsm's own
report (--route-only; no ibsim).  The figures of doc/benchmarks.md
"Tori, Dragonfly+ and LMC multipath" (the 20 random places):

  tests/bench/torus_holes.py build/release/sm/ibsm [--dims 8,8,4]
      [--hosts 2] [--cases 20] [--seed 7] [--old OTHER_IBSM]

--old runs a second binary on the same fabrics (before/after).  A
benchmark: no assertion.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GEN = os.path.join(TOP, "tests", "topologies", "gen-topo")
CUT = os.path.join(TOP, "tests", "bench", "cut_net.py")


def name(c):
    return "torus-" + "-".join("%s%02d" % (a, v + 1) for a, v in zip("xyz", c))


def report(ibsm, net):
    """'ENGINE RATIO CYCLES' from ibsm --route-only NET."""
    out = subprocess.run([ibsm, "--route-only", net], capture_output=True,
                         text=True, check=False).stdout
    eng = re.search(r"^engine: (?:\w+: auto: .*?-> )?([\w+-]+):", out, re.M)
    ratio = re.search(r"max/ideal ([\d.]+)", out)
    cyc = re.search(r"cycles per \w+: ([\d ]+)", out)
    return "%s %s cycles %s" % (
        eng.group(1) if eng else "?", ratio.group(1) if ratio else "?",
        "+".join(cyc.group(1).split()) if cyc else "?")


def cut(args, dst):
    with open(dst, "w", encoding="utf-8") as f:
        subprocess.run([sys.executable, CUT] + args, stdout=f, check=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ibsm")
    ap.add_argument("--old")
    ap.add_argument("--dims", default="8,8,4")
    ap.add_argument("--hosts", default="2")
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    dims = [int(x) for x in a.dims.split(",")]
    rnd = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "torus.net")
        subprocess.run([GEN, "torus", "--dims", a.dims, "--hosts-per-switch",
                        a.hosts, "-o", full], stdout=subprocess.DEVNULL,
                       check=True)
        done = 0
        while done < a.cases:
            hole = [rnd.randrange(d) for d in dims]
            end = [rnd.randrange(d) for d in dims]
            d = rnd.randrange(len(dims))
            other = list(end)
            other[d] = (other[d] + 1) % dims[d]
            if hole in (end, other):
                continue
            done += 1
            sw = os.path.join(tmp, "sw.net")
            both = os.path.join(tmp, "both.net")
            cut([full, "--switch", name(hole)], sw)
            cut([sw, "--link", name(end), name(other)], both)
            for what, net in (("switch", sw), ("switch+link", both)):
                line = "%s %s%s: %s" % (
                    name(hole), what,
                    " " + name(end) + "-" + name(other) if net == both
                    else "", report(a.ibsm, net))
                if a.old:
                    line += " | old: " + report(a.old, net)
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
