#!/usr/bin/env python3
"""map_check.py - check a fabric map as a browser left it.

  map_check.py DOM LOG --switches N --links M [--findings FILE]
               [--expect GUID/PORT=STATE ...] [--view health|load]

DOM is what `chromium --headless --dump-dom` printed for the page (the
DOM after its script ran), LOG chromium's stderr with
--enable-logging=stderr: any console message there (a script error, a
resource refused) fails the check.  The DOM must hold N switch elements
(class "sw", each with a distinct data-guid) and M cable elements
(class "link", data-a and data-b), the script must have run (the view
button of the view shown is marked "on"), and every cable must have the
colour of the view shown: in the health view the colour of the worst
finding on either end; in the load view its load colour.  --findings
FILE (`ibsmctl health --json`, or lines of findings in that form) gives
the findings the colours must follow; --expect names cables that must
be in a given state (ok, warning, critical), so a fault that went
missing from both the findings and the map is noticed too; without
--findings every cable --expect does not name must be ok.
"""

import argparse
import json
import re
import sys
from html.parser import HTMLParser

COLOUR = {"ok": "#43a047", "warning": "#fb8c00", "critical": "#e53935"}
RANK = {"ok": 0, "warning": 1, "critical": 2}


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.switches = []
        self.links = []
        self.buttons = {}
        self.body = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "circle" and "sw" in cls:
            self.switches.append(a)
        elif tag == "path" and "link" in cls:
            self.links.append(a)
        elif tag == "button":
            self.buttons[a.get("id")] = a
        elif tag == "body":
            self.body = a

    handle_startendtag = handle_starttag


def load_findings(path):
    """The findings of `health --json` (a document) or of finding lines."""
    text = open(path).read()
    try:
        doc = json.loads(text)
        return doc.get("findings", [])
    except ValueError:
        out = []
        for line in text.splitlines():
            line = line.strip().rstrip(",")
            if line.startswith('{"severity"'):
                out.append(json.loads(line))
        return out


def end_key(guid, port):
    return "0x%016x/%d" % (int(str(guid), 0), int(port))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dom")
    ap.add_argument("log")
    ap.add_argument("--switches", type=int, required=True)
    ap.add_argument("--links", type=int, required=True)
    ap.add_argument("--findings")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--view", default="health")
    ap.add_argument("--svg-only", action="store_true",
                    help="a bare SVG: no page, no script, no view switch")
    o = ap.parse_args()
    bad = []

    console = [l for l in open(o.log, errors="replace")
               if ":CONSOLE" in l]
    if console:
        bad.append("console messages:\n  " + "  ".join(console))

    d = Dom()
    d.feed(open(o.dom, errors="replace").read())
    guids = [s.get("data-guid") for s in d.switches]
    if len(d.switches) != o.switches or len(set(guids)) != o.switches:
        bad.append("%d switch elements (%d distinct GUIDs), expected %d"
                   % (len(d.switches), len(set(guids)), o.switches))
    if len(d.links) != o.links:
        bad.append("%d cable elements, expected %d" % (len(d.links), o.links))
    if o.svg_only:
        pass
    elif d.body.get("data-view") != o.view:
        bad.append("view %r shown, expected %r" % (d.body.get("data-view"),
                                                    o.view))
    if not o.svg_only and (d.buttons.get("v-" + o.view) or {}).get("class") != "on":
        bad.append("the page's script did not run (button v-%s not on)"
                   % o.view)

    want = {}
    if o.findings:
        for f in load_findings(o.findings):
            sev = f["severity"]
            for g, p in ((f["node_guid"], f["port"]),
                         (f.get("peer_guid", "0"), f.get("peer_port", 0))):
                if int(str(g), 0):
                    k = end_key(g, p)
                    if RANK[sev] > RANK.get(want.get(k, "ok"), 0):
                        want[k] = sev
    expect = {}
    for e in o.expect:
        k, _, state = e.partition("=")
        expect[k] = state

    seen = set()
    for l in d.links:
        a, b = l.get("data-a"), l.get("data-b")
        seen.update((a, b))
        state = l.get("data-health")
        if o.findings is not None:
            w = max((want.get(a, "ok"), want.get(b, "ok")), key=RANK.get)
            if state != w:
                bad.append("cable %s - %s is %s, its findings say %s"
                           % (a, b, state, w))
        if o.findings is None and expect:
            # without findings, --expect names every cable not ok
            w = max((expect.get(a, "ok"), expect.get(b, "ok")), key=RANK.get)
            if state != w:
                bad.append("cable %s - %s is %s, expected %s" % (a, b, state, w))
        for k in (a, b):
            if k in expect and state != expect[k]:
                bad.append("cable %s - %s is %s, expected %s"
                           % (a, b, state, expect[k]))
        colour = l.get("data-lc") if o.view == "load" else COLOUR.get(state)
        if l.get("stroke") != colour or l.get("data-hc") != COLOUR.get(state):
            bad.append("cable %s - %s (%s) drawn %s, expected %s"
                       % (a, b, state, l.get("stroke"), colour))
        if o.view == "load" and not re.match(r"^#[0-9a-f]{6}$",
                                             l.get("data-lc") or ""):
            bad.append("cable %s - %s has no load colour" % (a, b))
    for k in expect:
        if k not in seen:
            bad.append("no cable has end %s" % k)

    for b in bad:
        print("map_check: " + b)
    if not bad:
        print("map_check: %d switches, %d cables, colours as expected (%s "
              "view)" % (len(d.switches), len(d.links), o.view))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
