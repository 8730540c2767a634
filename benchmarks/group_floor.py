#!/usr/bin/env python3
"""What process groups could reach at best: G pure-pyzmq echo processes that each
busy-wait ``work`` µs per message (the Python cost of stepping their members), and
an orchestrator that busy-waits ``orch`` µs per tick (its per-member routing,
digest and bookkeeping). No moonpool code: the floor for a given amount of work.

    .venv/bin/python benchmarks/group_floor.py G WORK_US ORCH_US
e.g. 8 components of ~10 µs (server) and ~12 µs (orchestrator) in 2 groups:
    .venv/bin/python benchmarks/group_floor.py 2 40 96
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

import zmq


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def serve(endpoint: str, work_s: float) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    while True:
        frames = sock.recv_multipart()
        if frames[1] == b"quit":
            return
        _busy(work_s)
        sock.send_multipart(frames)


def main() -> int:
    groups, work_us, orch_us = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    folder = tempfile.mkdtemp(prefix="mp-gfloor-")
    endpoints = [f"ipc://{folder}/{i}.sock" for i in range(groups)]
    procs = [subprocess.Popen([sys.executable, __file__, "serve", ep, str(work_us * 1e-6)])
             for ep in endpoints]
    ctx = zmq.Context()
    socks = []
    for ep in endpoints:
        s = ctx.socket(zmq.DEALER)
        s.connect(ep)
        socks.append(s)
    ticks = 5000
    try:
        for k in range(ticks // 10 + 300):
            for s in socks:
                s.send(b"x" * 200)
            for s in socks:
                s.recv()
        t0 = time.perf_counter()
        for k in range(ticks):
            _busy(orch_us * 0.5e-6)  # preparing the batches
            for s in socks:
                s.send(b"x" * 200)
            for s in socks:
                s.recv()
            _busy(orch_us * 0.5e-6)  # publishing the results
        per_tick = (time.perf_counter() - t0) / ticks * 1e6
    finally:
        for s in socks:
            s.send(b"quit")
        for p in procs:
            p.wait(10)
    print(f"{groups} group(s), {work_us:g} µs work per group, {orch_us:g} µs orchestrator "
          f"work per tick: {per_tick:.0f} µs/tick")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(main())
