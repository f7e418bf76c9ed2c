#!/usr/bin/env python3
"""A delay line between two network namespaces, for kernels without netem.

    netdelay.py --delay-ms 25 NS_A DEV_A NS_B DEV_B

Makes a TUN device DEV_A inside the network namespace NS_A and DEV_B inside
NS_B (namespaces made with `ip netns add`), then copies every IP packet that
one device sends to the other, each after DELAY ms: what `tc qdisc add dev
... root netem delay DELAY` on both ends of a veth pair does, in user space.
Packets keep their order; nothing is dropped, reordered or rate-limited.
The caller gives the devices their addresses; they vanish when this process
exits (SIGTERM, SIGINT). Prints "ready" on stdout once both exist.
bench/h2_latency.sh runs it when the kernel has no sch_netem.
"""

import argparse
import collections
import ctypes
import fcntl
import os
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000


def enter(ns):
    """Moves this process into the named network namespace."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {ns}: {os.strerror(err)}")
    finally:
        os.close(fd)


def tun(ns, name):
    """A TUN device (IP packets, no header) made in namespace `ns`."""
    enter(ns)
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--delay-ms", type=float, required=True)
    p.add_argument("ns_a")
    p.add_argument("dev_a")
    p.add_argument("ns_b")
    p.add_argument("dev_b")
    args = p.parse_args()
    delay = args.delay_ms / 1000.0

    a = tun(args.ns_a, args.dev_a)
    b = tun(args.ns_b, args.dev_b)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    print("ready", flush=True)

    # Per destination: packets in arrival order with the time they are due.
    queues = {a: collections.deque(), b: collections.deque()}
    other = {a: b, b: a}
    counts = {"a_to_b": 0, "b_to_a": 0, "write_errors": 0}
    poller = select.epoll()
    poller.register(a, select.EPOLLIN)
    poller.register(b, select.EPOLLIN)
    try:
        relay(poller, queues, other, delay, counts, b)
    finally:
        print(f"netdelay: {counts}", file=sys.stderr, flush=True)


def relay(poller, queues, other, delay, counts, b):
    while True:
        now = time.monotonic()
        for dst, queue in queues.items():
            while queue and queue[0][0] <= now:
                _, packet = queue.popleft()
                try:
                    os.write(dst, packet)
                    counts["a_to_b" if dst == b else "b_to_a"] += 1
                except OSError:
                    counts["write_errors"] += 1
        due = [q[0][0] for q in queues.values() if q]
        timeout = max(0.0, min(due) - time.monotonic()) if due else 1.0
        for fd, _ in poller.poll(timeout):
            arrived = time.monotonic()
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                queues[other[fd]].append((arrived + delay, packet))


if __name__ == "__main__":
    main()
