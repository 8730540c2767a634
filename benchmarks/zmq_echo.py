"""The transport floor: N echo processes (pure pyzmq, ROUTER) driven in parallel by
one DEALER per process, no moonpool code at all. Used by step_overhead.py to show
how much of a multi-process tick is ZeroMQ itself."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import zmq


def serve(endpoint: str) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    while True:
        frames = sock.recv_multipart()
        if frames[1] == b"quit":
            return
        sock.send_multipart(frames)


@contextlib.contextmanager
def fan_out(n: int, script: str, *args: str) -> Iterator[list[zmq.Socket]]:
    """n processes ``python script ENDPOINT *args`` (each binding a ROUTER at ENDPOINT,
    an ipc socket in a temporary folder), and a DEALER connected to each; on leaving,
    each is sent ``quit`` and awaited, and the folder removed."""
    folder = tempfile.mkdtemp(prefix="mp-fan-")
    endpoints = [f"ipc://{folder}/{i}.sock" for i in range(n)]
    procs = [subprocess.Popen([sys.executable, script, ep, *args]) for ep in endpoints]
    ctx = zmq.Context()
    socks = []
    for ep in endpoints:
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        socks.append(s)
    try:
        yield socks
    finally:
        for s in socks:
            s.send(b"quit")
        for p in procs:
            p.wait(10)
        for s in socks:
            s.close(0)
        ctx.term()
        shutil.rmtree(folder, ignore_errors=True)


def echo_tick_us(n: int, ticks: int, size: int = 64) -> float:
    """Wall-clock µs per tick: send one message to each of n echo processes, await all."""
    payload = b"x" * size
    with fan_out(n, __file__) as socks:
        for k in range(ticks // 10 + 100):  # warm up (and wait for the binds)
            for s in socks:
                s.send(payload)
            for s in socks:
                s.recv()
        t0 = time.perf_counter()
        for k in range(ticks):
            for s in socks:
                s.send(payload)
            for s in socks:
                s.recv()
        return (time.perf_counter() - t0) / ticks * 1e6


if __name__ == "__main__":
    serve(sys.argv[1])
