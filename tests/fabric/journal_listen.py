#!/usr/bin/env python3
"""journal_listen.py SOCKET OUT [SECONDS]: journald's side of the native
journal protocol (systemd's JOURNAL_NATIVE_PROTOCOL), for tests.  Binds a
unix datagram socket at SOCKET (e.g. /run/systemd/journal/socket inside a
private mount namespace) and writes every entry it receives to OUT as one
JSON object per line, {"FIELD": "value", ...}, until SECONDS (default
300) pass or SIGTERM.  A datagram holds "NAME=value\\n" fields, or for a
value with a newline "NAME\\n" + 64-bit little-endian length + value +
"\\n"; an entry too big for a datagram comes as a memfd (SCM_RIGHTS),
read here too."""
import array
import json
import os
import signal
import socket
import struct
import sys
import time


def parse(data):
    fields = {}
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        if nl < 0:
            break
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack_from("<Q", data, nl + 1)
            v = data[nl + 9:nl + 9 + n]
            i = nl + 9 + n + 1
        fields[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    return fields


def main():
    path, out = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    end = time.monotonic() + limit
    with open(out, "a", buffering=1) as f:
        while time.monotonic() < end:
            s.settimeout(max(0.1, end - time.monotonic()))
            try:
                data, anc, _, _ = s.recvmsg(1 << 17, socket.CMSG_SPACE(4))
            except socket.timeout:
                continue
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fd = array.array("i", cdata[:4])[0]
                    with os.fdopen(fd, "rb") as m:
                        data = m.read()
            print(json.dumps(parse(data), sort_keys=True), file=f)


if __name__ == "__main__":
    main()
