#!/usr/bin/env python3
"""The machine's own timing floor for real-time mode: how late a thread that does
*nothing* wakes up at 100 Hz.

``python benchmarks/platform_jitter.py [--seconds 120] [--rate-hz 100] [--priority 50]
[--load N] [--json]``

Before blaming a rig for a late tick, measure what the machine gives an empty loop.
Two probes run one after the other, both sleeping to absolute deadlines:

- **pacer**: moonpool's :class:`~moonpool.orchestrator.realtime.Pacer` (the one
  ``moonpool run --realtime`` uses: sleep, then spin the last 200 µs), stepping
  nothing — the lateness any rig's tick has before its own work;
- **cyclictest** (Debian's ``rt-tests``, if installed): the standard Linux latency
  probe in C, ``clock_nanosleep`` to absolute deadlines, no spin — the kernel's and
  the hypervisor's part alone.

Both at ``SCHED_FIFO`` ``--priority`` (0: normal scheduling). ``--load N`` runs N
busy-looping processes at normal priority meanwhile (a stand-in for the rig's other
processes; a SCHED_FIFO thread should not notice them, a hypervisor taking the vCPU
away it will). The CPU time the hypervisor took (``steal`` in /proc/stat) during
each probe is printed beside it: on a virtual machine, lateness of milliseconds in
an empty loop comes from there, and no program inside the VM can remove it.

The real-time issue's targets (lateness p99 < 1 ms, max < 5 ms at 100 Hz) are
printed against the figures: a machine whose empty loop already comes close to
5 ms cannot meet them with any work in its ticks.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from moonpool.orchestrator.realtime import Pacer


def _steal_jiffies() -> float:
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        return float(fields[7]) if len(fields) > 7 else 0.0
    except OSError:
        return 0.0


def _busy(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def _figures(late_us: np.ndarray) -> dict[str, float]:
    p50, p99, p999 = np.percentile(late_us, [50.0, 99.0, 99.9])
    return {"n": int(late_us.size), "p50_us": float(p50), "p99_us": float(p99),
            "p99_9_us": float(p999), "max_us": float(late_us.max()),
            "over_1ms": int((late_us > 1000.0).sum())}


def empty_loop(seconds: float, rate_hz: float, priority: int) -> tuple[np.ndarray, Pacer]:
    """The Pacer pacing an empty tick at rate_hz for ``seconds``: the ticks' lateness
    (µs; the first tick anchors the schedule and is left out) and the pacer (closed)."""
    period_ns = round(1e9 / rate_hz)
    pacer = Pacer(1, "warn", period_ns=period_ns, priority=priority)
    try:
        for k in range(int(seconds * rate_hz) + 1):
            pacer(k * period_ns)
        return pacer.lateness_ns()[1:] / 1e3, pacer
    finally:
        pacer.close()


def pacer_probe(seconds: float, rate_hz: float, priority: int) -> dict[str, float]:
    """The Pacer pacing an empty tick at rate_hz for ``seconds``."""
    late, pacer = empty_loop(seconds, rate_hz, priority)
    out = _figures(late)
    out["scheduler"] = pacer.scheduler
    out["overruns"] = pacer.overruns
    return out


def cyclictest_probe(seconds: float, rate_hz: float, priority: int) -> dict[str, float] | None:
    """Debian's cyclictest, one thread, absolute deadlines, histogram to 100 ms."""
    exe = shutil.which("cyclictest")
    if exe is None:
        return None
    interval_us = round(1e6 / rate_hz)
    cmd = [exe, "-q", "-m", "-t", "1", "-i", str(interval_us), "-D", f"{int(seconds)}",
           "-h", "100000"]
    if priority:
        cmd += ["-p", str(priority)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[:200]}
    counts: list[tuple[int, int]] = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\d+)\s+(\d+)$", line.strip())
        if m and int(m.group(2)):
            counts.append((int(m.group(1)), int(m.group(2))))
    mx = re.search(r"# Max Latencies:\s+(\d+)", proc.stdout)
    if not counts:
        return {"error": "cyclictest printed no histogram"}
    late = np.repeat([float(us) for us, _ in counts], [c for _, c in counts])
    out = _figures(late)
    if mx:
        out["max_us"] = float(mx.group(1))  # beyond the histogram's range too
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--rate-hz", type=float, default=100.0)
    ap.add_argument("--priority", type=int, default=50,
                    help="SCHED_FIFO priority of the probes (0: normal scheduling)")
    ap.add_argument("--load", type=int, default=0,
                    help="busy-looping processes at normal priority during the probes")
    ap.add_argument("--no-cyclictest", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.rate_hz <= 0:
        ap.error("--seconds and --rate-hz must be > 0")
    if not 0 <= args.priority <= 99:
        ap.error("--priority must be 0-99")

    probes = [("pacer", pacer_probe)]
    if not args.no_cyclictest:
        probes.append(("cyclictest", cyclictest_probe))
    results: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}",
        "seconds": args.seconds, "rate_hz": args.rate_hz, "priority": args.priority,
        "load": args.load, "probes": {},
    }
    hz = os.sysconf("SC_CLK_TCK")
    for name, probe in probes:
        loaders = []
        if args.load:
            stop_at = time.monotonic() + args.seconds + 5
            loaders = [multiprocessing.Process(target=_busy, args=(stop_at,), daemon=True)
                       for _ in range(args.load)]
            for p in loaders:
                p.start()
        s0, t0 = _steal_jiffies(), time.monotonic()
        try:
            fig = probe(args.seconds, args.rate_hz, args.priority)
        finally:
            for p in loaders:
                p.terminate()
                p.join()
        if fig is None:
            print(f"{name}: not installed (apt-get install rt-tests)", file=sys.stderr)
            continue
        wall = time.monotonic() - t0
        fig["steal_ms_per_s"] = (_steal_jiffies() - s0) / hz * 1e3 / wall
        results["probes"][name] = fig

    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"# platform_jitter: {results['machine']}, {args.seconds:g} s at {args.rate_hz:g} Hz, "
          f"priority {args.priority or 'normal'}, load {args.load}")
    print(f"{'probe':>11} {'p50 µs':>8} {'p99 µs':>8} {'p99.9 µs':>9} {'max µs':>8} "
          f"{'>1 ms':>6} {'steal ms/s':>10}")
    for name, fig in results["probes"].items():
        if "error" in fig:
            print(f"{name:>11} error: {fig['error']}")
            continue
        print(f"{name:>11} {fig['p50_us']:8.1f} {fig['p99_us']:8.1f} {fig['p99_9_us']:9.1f} "
              f"{fig['max_us']:8.0f} {fig['over_1ms']:6d} {fig['steal_ms_per_s']:10.2f}")
    print("targets of a rig's ticks: p99 < 1000 µs, max < 5000 µs; an empty loop's max is "
          "the part of that budget the machine itself takes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
