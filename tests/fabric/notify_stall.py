#!/usr/bin/env python3
"""notify_stall.py SOCKET OUT: a service manager that stops reading.
Binds a unix datagram socket at SOCKET and reads nothing, so that after
net.unix.max_dgram_qlen datagrams a blocking sender waits.  On SIGUSR1
it starts reading: every message then goes to OUT as one line
"<monotonic seconds> <message with newlines as |>", until SIGTERM.

notify_stall.py --probe SOCKET: how libsystemd's sd_notify() behaves on
such a socket: calls sd_notify(0, "WATCHDOG=1") with NOTIFY_SOCKET=SOCKET
up to 40 times, printing "returned N" after each call that returned;
a call that blocks leaves the last line at the count before it (run it
under `timeout`)."""
import ctypes
import os
import signal
import socket
import sys
import time


def probe(path):
    os.environ["NOTIFY_SOCKET"] = path
    lib = ctypes.CDLL("libsystemd.so.0")
    for i in range(40):
        lib.sd_notify(0, b"WATCHDOG=1")
        print("returned %d" % (i + 1), flush=True)


def main():
    if sys.argv[1] == "--probe":
        probe(sys.argv[2])
        return
    path, out = sys.argv[1], sys.argv[2]
    reading = []
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    signal.signal(signal.SIGUSR1, lambda *a: reading.append(1))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    with open(out, "a", buffering=1) as f:
        print("listening", file=f)
        while not reading:
            time.sleep(0.05)
        print("reading", file=f)
        s.settimeout(0.2)
        while True:
            try:
                msg = s.recv(4096)
            except socket.timeout:
                continue
            text = msg.decode("utf-8", "replace").replace("\n", "|")
            print("%.3f %s" % (time.monotonic(), text), file=f)


if __name__ == "__main__":
    main()
