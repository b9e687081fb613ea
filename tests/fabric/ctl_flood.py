#!/usr/bin/env python3
"""ctl_flood.py SOCKET MODE [ARGS]: hostile clients of ibsm's control
socket (sm/ctl/server.c), for tests/fabric/test_ctl.sh.

  flood N SEED   N malformed requests: random bytes as a line on a kept
                 connection (each must get one "ERR" answer), lines longer
                 than the limit (must get "ERR request longer" and be
                 closed), random bytes then a close without reading, half
                 lines then a close.  Prints counts; exit 1 when an answer
                 was not what the protocol promises.
  stall SECONDS  a half line, then nothing: the daemon must close the
                 connection within SECONDS, answering "status" on another
                 connection meanwhile.
  clients N      N idle connections at once: the one over the limit must
                 get "ERR busy"; the others are closed after a status on a
                 fresh connection is answered.
"""
import random
import socket
import sys
import time

MAX_LINE = 512


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def final(line):
    return line.startswith(b"ERR") or line == b"OK" or line.startswith(b"OK ")


def answer(s, buf):
    """Lines up to the terminator; (lines, rest).  lines None on EOF."""
    lines = []
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line)
            if final(line):
                return lines, buf
        data = s.recv(65536)
        if not data:
            return None, buf
        buf += data


def status_ok(path):
    s = connect(path)
    s.sendall(b"status\n")
    lines, _ = answer(s, b"")
    s.close()
    return lines is not None and lines[-1] == b"OK" and \
        any(l.startswith(b"state ") for l in lines)


def rand_line(rng, lo, hi):
    n = rng.randint(lo, hi)
    return bytes(rng.choice([b for b in range(256) if b != 10])
                 for _ in range(n))


def flood(path, n, seed):
    rng = random.Random(seed)
    counts = {"line": 0, "long": 0, "drop": 0, "half": 0, "busy": 0}
    bad = []
    s, buf = None, b""
    for i in range(n):
        kind = rng.choices(["line", "long", "drop", "half"],
                           [70, 10, 10, 10])[0]
        try:
            if kind == "line":
                if s is None:
                    s, buf = connect(path), b""
                req = rand_line(rng, 0, 300) + b"\n"
                s.sendall(req)
                lines, buf = answer(s, buf)
                if lines is None:
                    bad.append("%d: connection closed after %r" % (i, req[:40]))
                    s.close()
                    s = None
                    continue
                if lines[-1].startswith(b"ERR busy"):
                    counts["busy"] += 1
                    s.close()
                    s = None
                    continue
                # "help" or "status" are not random: anything else is ERR
                if not lines[-1].startswith(b"ERR") and \
                        req.strip() not in (b"help", b"status", b"dump-config"):
                    bad.append("%d: %r answered %r" % (i, req[:40], lines[-1]))
            elif kind == "long":
                c = connect(path)
                c.sendall(rand_line(rng, MAX_LINE, 4 * MAX_LINE) + b"\n")
                lines, _ = answer(c, b"")
                if lines is None or not (lines[-1].startswith(b"ERR request longer")
                                         or lines[-1].startswith(b"ERR busy")):
                    bad.append("%d: long line answered %r" % (i, lines))
                elif lines[-1].startswith(b"ERR busy"):
                    counts["busy"] += 1
                else:
                    # and closed after it
                    c.settimeout(5)
                    try:
                        rest = c.recv(100)
                    except ConnectionResetError:
                        rest = b""
                    if rest:
                        bad.append("%d: still open after a long line" % i)
                c.close()
            elif kind == "drop":
                c = connect(path)
                data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 600)))
                try:
                    c.sendall(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                c.close()
            else:
                c = connect(path)
                c.sendall(rand_line(rng, 1, MAX_LINE - 2))
                c.close()
            counts[kind] += 1
        except (socket.timeout, OSError) as e:
            bad.append("%d (%s): %s" % (i, kind, e))
            if s is not None:
                s.close()
            s = None
        if len(bad) > 20:
            break
    if s is not None:
        s.close()
    print("requests %d: %s" % (n, " ".join("%s=%d" % kv for kv in counts.items())))
    for b in bad[:20]:
        print("BAD", b)
    if not status_ok(path):
        print("BAD no status answer after the flood")
        return 1
    return 1 if bad else 0


def stall(path, seconds):
    s = connect(path)
    s.sendall(b"stat")
    t0 = time.monotonic()
    ok = status_ok(path)
    s.settimeout(seconds + 5)
    try:
        data = s.recv(100)
    except socket.timeout:
        print("BAD a stalled client still connected after %g s" % (seconds + 5))
        return 1
    took = time.monotonic() - t0
    print("stalled client dropped after %.1f s (data %r); status meanwhile: %s"
          % (took, data, ok))
    return 0 if ok and data == b"" and took <= seconds + 1 else 1


def clients(path, n):
    held = []
    for _ in range(n):
        held.append(connect(path))
    extra = connect(path)
    lines, _ = answer(extra, b"")
    extra.close()
    print("connection %d: %r" % (n + 1, lines))
    busy = lines is not None and lines[-1].startswith(b"ERR busy")
    for c in held:
        c.close()
    time.sleep(0.5)
    ok = status_ok(path)
    print("status after closing them: %s" % ok)
    return 0 if busy and ok else 1


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "flood":
        return flood(path, int(sys.argv[3]), int(sys.argv[4]))
    if mode == "stall":
        return stall(path, float(sys.argv[3]))
    if mode == "clients":
        return clients(path, int(sys.argv[3]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
