#!/usr/bin/env python3
"""How punctually a rig runs in real-time mode: per-tick lateness and overruns.

``python benchmarks/realtime.py RIG [--seconds 120] [--factor 1] [--priority N]
[--overrun warn] [--no-record] [--no-gc-control] [--set K=V]... [--json]``

Runs RIG (e.g. ``rigs/pool_t1.toml``) for ``--seconds`` of simulated time paced to
the wall clock (``run.realtime``), exactly as ``moonpool run RIG --realtime`` does
(recording on unless ``--no-record``, plots off), and prints:

- the lateness of the ticks (how long after its wall-clock deadline each tick
  started): p50, p99, p99.9, max, and how many were more than 1 ms late;
- overruns (ticks whose deadline passed while the previous tick was still working);
- the components' step times (p50/p99/max), the work the ticks consist of;
- the machine: CPUs, load average before and after, and how busy the CPUs were during
  the run, split into this process and everything else (from /proc/stat and
  getrusage), so the figures can be read against the load they were measured under.

``--priority N`` runs the stepping thread as SCHED_FIFO priority N
(``run.realtime_priority``); ``--no-gc-control`` leaves Python's garbage collector to
itself (the pacer normally freezes the setup's objects and collects in the slack).
The acceptance targets of the real-time issue are printed against the figures:
lateness p99 < 1 ms and max < 5 ms at 100 Hz ticks.

The machine's own floor, in the same invocation: unless ``--floor-seconds 0``, the
empty loop of benchmarks/platform_jitter.py (moonpool's pacer stepping nothing, at
the same priority and the rig's tick rate) runs for half of ``--floor-seconds``
(default: as long as the rig) before the rig and half after it, and the rig is judged
against it (issue 21): lateness p99 <= the empty loop's p99 + 0.5 ms, max <= the empty
loop's max + 2 ms, and no overrun.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from platform_jitter import empty_loop  # noqa: E402  (the machine's floor, same code)


def _cpu_times() -> tuple[float, float, float]:
    """(busy, total, steal) jiffies of all CPUs (/proc/stat; zeros where not Linux).
    Steal: time the hypervisor ran something else while this VM wanted its CPUs."""
    try:
        fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0, 0.0, 0.0
    fields += [0.0] * (8 - len(fields))
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal
    return total - idle, total, fields[7]


def _own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rig", type=Path, help="rig file, e.g. rigs/pool_t1.toml")
    ap.add_argument("--seconds", type=float, default=120.0, help="simulated (= wall) seconds")
    ap.add_argument("--factor", type=float, default=1.0, help="real-time factor (default 1)")
    ap.add_argument("--priority", type=int, default=0,
                    help="SCHED_FIFO priority of the stepping thread (0: normal)")
    ap.add_argument("--overrun", default="warn", choices=["warn", "skip", "abort"])
    ap.add_argument("--no-record", action="store_true", help="do not write the recording")
    ap.add_argument("--no-gc-control", action="store_true",
                    help="leave the garbage collector alone while pacing")
    ap.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                    help="override a rig key (repeatable)")
    ap.add_argument("--out", type=Path, help="run folder (default: a temporary one)")
    ap.add_argument("--json", action="store_true", help="also print the realtime block as JSON")
    ap.add_argument("--floor-seconds", type=float, default=None,
                    help="seconds of the empty loop (half before the rig, half after; "
                    "default: --seconds; 0: none)")
    args = ap.parse_args(argv)
    floor_s = args.seconds if args.floor_seconds is None else args.floor_seconds

    from moonpool.orchestrator import run as run_mod
    from moonpool.orchestrator.rigfile import load_and_check

    overrides = [
        f"run.overrun={args.overrun}",
        f"run.realtime_priority={args.priority}",
        "run.plots=false",
        f"run.record={'false' if args.no_record else 'true'}",
        *args.overrides,
    ]
    rig = load_and_check(args.rig, overrides, until_s=args.seconds, realtime=args.factor)
    pacers = []
    make_pacer = run_mod.make_pacer

    def capture(rig, adapters, *rest):  # keep the pacer, for its per-tick lateness
        pacer = make_pacer(rig, adapters, *rest)
        if pacer is not None and args.no_gc_control:
            pacer._manage_gc = False
        pacers.append(pacer)
        return pacer

    run_mod.make_pacer = capture
    out = args.out or Path(tempfile.mkdtemp(prefix="moonpool-realtime-"))
    rate_hz = 1e9 / min(c.schedule.nominal_period_ns for c in rig.components) * args.factor
    floor: list[np.ndarray] = []

    load_before = os.getloadavg()
    if floor_s > 0:
        floor.append(empty_loop(floor_s / 2, rate_hz, args.priority)[0])
    busy0, total0, steal0 = _cpu_times()
    own0 = _own_cpu_s()
    result = run_mod.run_rig(rig, out)
    busy1, total1, steal1 = _cpu_times()
    own1 = _own_cpu_s()
    if floor_s > 0:
        floor.append(empty_loop(floor_s / 2, rate_hz, args.priority)[0])
    load_after = os.getloadavg()
    s = result.summary
    rt = s["realtime"] or {}

    ncpu = os.cpu_count() or 1
    wall = s["wall_time_s"]
    machine_busy = (busy1 - busy0) / (total1 - total0) if total1 > total0 else float("nan")
    steal = (steal1 - steal0) / (total1 - total0) if total1 > total0 else float("nan")
    own_share = (own1 - own0) / (wall * ncpu) if wall > 0 else float("nan")
    print(f"rig           {args.rig} ({len(rig.components)} components, {s['ticks']} ticks, "
          f"{rig.run.algorithm}), real time x{args.factor:g}, {args.seconds:g} s, "
          f"overrun {args.overrun}, scheduler {rt.get('scheduler', '?')}, "
          f"gc {'left alone' if args.no_gc_control else 'frozen + collected in slack'}, "
          f"recording {'off' if args.no_record else 'on'}")
    print(f"machine       {ncpu} CPUs, {_cpu_model()}, Linux {platform.release()}, "
          f"Python {platform.python_version()}")
    print(f"load          1-min load average {load_before[0]:.2f} before, {load_after[0]:.2f} "
          f"after; CPUs {machine_busy * 100:.0f} % busy during the run ({own_share * 100:.0f} % "
          f"this run, {(machine_busy - own_share) * 100:.0f} % other processes; "
          f"{steal * 100:.1f} % stolen by the hypervisor)")
    if s["status"] != "ok":
        print(f"run FAILED: {s['error']}")
    late = pacers[0].lateness_ns() / 1e3 if pacers and pacers[0] is not None else np.zeros(0)
    print(f"lateness      p50 {rt.get('lateness_p50_us', float('nan')):.1f} µs   "
          f"p99 {rt.get('lateness_p99_us', float('nan')):.1f} µs   "
          f"max {rt.get('lateness_max_us', float('nan')):.1f} µs "
          f"(at t = {rt.get('lateness_max_at_s') or 0:.2f} s)   "
          f"> 1 ms: {rt.get('ticks_late_over_1ms', '?')} of {rt.get('ticks', '?')} ticks")
    if late.size:
        bins = "  ".join(f"> {b:g} ms: {(late > b * 1e3).sum()}" for b in (0.1, 0.5, 1, 2, 5))
        print(f"              p99.9 {np.percentile(late, 99.9):.1f} µs;  ticks late {bins}")
    if late.size and late.max() > 1000:
        times = np.frombuffer(pacers[0].times, dtype=np.int64) / 1e9
        worst = np.argsort(late)[::-1][:8]
        print("worst ticks   " + ", ".join(f"t={times[i]:.3f} s {late[i] / 1e3:.2f} ms"
                                          for i in sorted(worst)))
    print(f"overruns      {rt.get('overruns', '?')}  (re-anchored {rt.get('reanchors', 0)}x), "
          f"gc collections in slack {rt.get('gc_collections', 0)}")
    steps = []
    for name, c in s["components"].items():
        steps.append(f"{name} {c['p50_us']:.0f}/{c['p99_us']:.0f}/{c['max_us']:.0f}")
    print("step µs       p50/p99/max  " + ", ".join(steps))
    own = [f"{name} {c['compute_p50_us']:.0f}/{c['compute_p99_us']:.0f}/{c['compute_max_us']:.0f}"
           for name, c in s["components"].items() if "compute_p50_us" in c]
    if own:  # (a group member's step time above is its whole batch's round trip)
        print("own step µs   p50/p99/max  " + ", ".join(own))
    if rt:
        ok99 = rt["lateness_p99_us"] < 1000
        okmax = rt["lateness_max_us"] < 5000
        print(f"targets       p99 < 1 ms: {'met' if ok99 else 'NOT met'};  "
              f"max < 5 ms: {'met' if okmax else 'NOT met'}")
    if rt and floor:
        empty = np.concatenate(floor)
        e99, emax = float(np.percentile(empty, 99.0)), float(empty.max())
        print(f"empty loop    {empty.size} ticks at {rate_hz:g} Hz, {floor_s / 2:g} s before and "
              f"after the rig, same priority: p50 {np.percentile(empty, 50):.1f} µs   "
              f"p99 {e99:.1f} µs   max {emax:.1f} µs")
        r99, rmax, over = rt["lateness_p99_us"], rt["lateness_max_us"], rt["overruns"]
        print(f"vs the floor  p99 {r99:.1f} <= {e99:.1f} + 500 µs: "
              f"{'met' if r99 <= e99 + 500 else 'NOT met'};  max {rmax:.1f} <= {emax:.1f} + "
              f"2000 µs: {'met' if rmax <= emax + 2000 else 'NOT met'};  overruns {over} = 0: "
              f"{'met' if over == 0 else 'NOT met'}")
    if args.json:
        print(json.dumps({"realtime": rt, "load_before": load_before, "load_after": load_after,
                          "machine_busy": machine_busy, "own_share": own_share,
                          "steal": steal}, indent=2))
    print(f"outputs in    {out}")
    return 0 if s["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
