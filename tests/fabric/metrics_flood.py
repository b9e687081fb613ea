#!/usr/bin/env python3
"""metrics_flood.py HOST PORT [N [M]] - N concurrent connections (default
1000) to ibsm's metrics endpoint, most of them malformed: valid GET/HEAD,
POST with a body, unknown methods, odd paths, junk bytes, NUL bytes, a
64 KiB header, a request cut off and held open, an HTTP/0.9 line,
connections closed at once.  Most of a burst is closed unanswered by the
endpoint's per-address limit; then M more (default 0) of the same kinds,
8 at a time (within that limit), so that each is parsed and answered.
Prints one line per phase: the outcome counts (status codes, closed
without an answer, refused) and how many valid scrapes came back
complete.  Exit 0 unless the client itself failed."""
import asyncio
import collections
import random
import sys

KINDS = ["get", "head", "post", "delete", "path", "junk", "nul", "big",
         "cut", "http09", "close", "get_keepalive"]


def request(kind, rnd):
    if kind == "get":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    if kind == "get_keepalive":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    if kind == "head":
        return b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    if kind == "post":
        body = b"x" * 4096
        return (b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n" % len(body)) + body
    if kind == "delete":
        return b"DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    if kind == "path":
        return b"GET /../../etc/passwd%00?%%%x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    if kind == "junk":
        return bytes(rnd.getrandbits(8) for _ in range(512)) + b"\r\n\r\n"
    if kind == "nul":
        return b"GET /metr\x00ics HTTP/1.1\r\nHost: \x00\r\n\r\n"
    if kind == "big":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n"
    if kind == "cut":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Partial: "
    if kind == "http09":
        return b"GET /metrics\r\n\r\n"
    return b""


async def one(host, port, kind, rnd, out, hold=2):
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except Exception:
        out["refused"] += 1
        return
    try:
        if kind == "close":
            w.close()
            out["closed_by_client"] += 1
            return
        w.write(request(kind, rnd))
        try:
            await w.drain()
        except Exception:
            pass
        if kind == "cut":
            await asyncio.sleep(hold)
            if hold < 1:
                out["cut_closed_by_client"] += 1
                return
        try:
            data = await asyncio.wait_for(r.read(), 15)
        except asyncio.TimeoutError:
            out["timeout"] += 1
            return
        except Exception:
            out["reset"] += 1
            return
        if not data:
            out["closed_no_answer"] += 1
            return
        line = data.split(b"\r\n", 1)[0].decode("latin1")
        parts = line.split()
        code = parts[1] if len(parts) > 1 else "?"
        out["status_" + code] += 1
        if kind == "get" and code == "200" and b"ibsm_state{" in data:
            out["scrapes_complete"] += 1
    finally:
        w.close()


async def paced(host, port, m, rnd, out):
    sem = asyncio.Semaphore(8)

    async def go(i):
        async with sem:
            await one(host, port, KINDS[i % len(KINDS)], rnd, out, 0.2)
    await asyncio.gather(*(go(i) for i in range(m)))


def show(name, out):
    print(name + ": " + " ".join("%s=%d" % kv for kv in sorted(out.items())))


async def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    m = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rnd = random.Random(31)
    out = collections.Counter()
    await asyncio.gather(*(one(host, port, KINDS[i % len(KINDS)], rnd, out)
                           for i in range(n)))
    show("flood", out)
    if m:
        out = collections.Counter()
        await paced(host, port, m, rnd, out)
        show("paced", out)


asyncio.run(main())
