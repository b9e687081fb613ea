#!/usr/bin/env python3
"""health_check.py - compare `ibsmctl health --json` with the findings a
test expects, exactly: every expected finding present, nothing else.

    health_check.py HEALTH.json EXPECT...

Each EXPECT names one finding:

    KIND
        any finding of KIND (for --absent)
    KIND:GUID:PORT[:TEXT]
        the finding of KIND at (GUID, PORT); TEXT, when given, must start
        its text (an error rate: the counter's name)
    KIND:GUID:PORT=GUID:PORT[:TEXT]
        a finding about a link, reported at either end: exactly one
        finding of KIND at one of the two ends

GUIDs in hex (0x...).  Exit 0 when the findings are exactly the expected
ones; else 1, printing what is missing, what is extra and what is
reported twice.  "--absent KIND:..." arguments (after the expected ones)
name findings that must NOT be there, the rest left unchecked
(--subset: only the expected must be there, others allowed).
"""

import json
import sys


def end(s):
    guid, port = s.split(":")
    return (int(guid, 16), int(port))


def parse(spec):
    if ":" not in spec:
        return spec, None, None     # any finding of that kind
    kind, rest = spec.split(":", 1)
    parts = rest.split(":")
    ends = []
    text = None
    if "=" in rest:
        a, b = rest.split("=", 1)
        ends.append(end(a))
        bparts = b.split(":")
        ends.append(end(":".join(bparts[:2])))
        if len(bparts) > 2:
            text = ":".join(bparts[2:])
    else:
        ends.append(end(":".join(parts[:2])))
        if len(parts) > 2:
            text = ":".join(parts[2:])
    return kind, ends, text


def matches(f, kind, ends, text):
    if f["kind"] != kind:
        return False
    if ends is None:
        return True
    where = (int(f["node_guid"], 16), f["port"])
    if where not in ends:
        return False
    return text is None or f["text"].startswith(text)


def name(f):
    return "%s %s port %d (%s): %s" % (f["kind"], f["node_guid"], f["port"],
                                       f["node_desc"], f["text"])


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as fh:
        doc = json.load(fh)
    findings = doc["findings"]
    mode = "exact"
    expect, absent = [], []
    for a in argv[2:]:
        if a == "--subset":
            mode = "subset"
        elif a == "--absent":
            mode = "absent"
        elif mode == "absent":
            absent.append(parse(a))
        else:
            expect.append(parse(a))
    used = set()
    bad = 0
    for kind, ends, text in expect:
        hits = [i for i, f in enumerate(findings) if matches(f, kind, ends, text)]
        if not hits:
            print("missing: %s at %s%s" % (kind, " or ".join(
                "0x%016x port %d" % e for e in ends),
                " (%s...)" % text if text else ""))
            bad += 1
        elif len(hits) > 1:
            print("reported %d times (once expected):" % len(hits))
            for i in hits:
                print("    " + name(findings[i]))
            bad += 1
        used.update(hits)
    for kind, ends, text in absent:
        for f in findings:
            if matches(f, kind, ends, text):
                print("still there: " + name(f))
                bad += 1
    if mode == "exact":
        for i, f in enumerate(findings):
            if i not in used:
                print("unexpected: " + name(f))
                bad += 1
    if doc.get("omitted") or doc.get("dropped"):
        print("findings omitted %s, dropped %s" % (doc.get("omitted"),
                                                   doc.get("dropped")))
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
