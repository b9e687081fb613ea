#!/usr/bin/env python3
"""notify_listen.py SOCKET OUT [SECONDS]: the service manager's side of
sd_notify(3) for tests.  Binds a unix datagram socket at SOCKET and
appends every message to OUT as one line: "<monotonic seconds> <message
with newlines as |>", until SECONDS (default 300) pass or SIGTERM.
SOCKET "@name" is in the abstract namespace, as systemd may name it."""
import os
import signal
import socket
import sys
import time


def main():
    path, out = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    if path.startswith("@"):
        addr = "\0" + path[1:]
    else:
        addr = path
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(addr)
    end = time.monotonic() + limit
    with open(out, "a", buffering=1) as f:
        print("listening", file=f)
        while time.monotonic() < end:
            s.settimeout(max(0.1, end - time.monotonic()))
            try:
                msg = s.recv(4096)
            except socket.timeout:
                continue
            text = msg.decode("utf-8", "replace").replace("\n", "|")
            print("%.3f %s" % (time.monotonic(), text), file=f)


if __name__ == "__main__":
    main()
