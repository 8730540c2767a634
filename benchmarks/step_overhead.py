#!/usr/bin/env python3
"""Stepping overhead: a chain of N trivial components at a 1 ms period.

    .venv/bin/python benchmarks/step_overhead.py [--ticks 5000] [--record]

For N = 1, 2, 4, 8 the chain Counter -> Relay -> ... is run in-process and with
every component in its own process (ipc), Jacobi (all N stepped in parallel at
every tick), and in as many process groups as there are cores (neighbouring
components together; one StepBatch message per group and tick). Prints wall-clock
µs per tick and per component step, and, as the floor, the same fan-out to N
pure-pyzmq echo processes (zmq_echo.py). The recording
is off unless --record (the digest is always computed). Results go into
docs/benchmarks.md by hand, with the machine and the date.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from moonpool.orchestrator.rig import (  # noqa: E402
    ComponentConfig,
    ConnectionConfig,
    Rig,
    RunConfig,
    Schedule,
)
from moonpool.orchestrator.run import run_rig  # noqa: E402


def chain_rig(n: int, placement: str, ticks: int, record: bool, groups: int = 0) -> Rig:
    """The chain; with ``groups`` > 0 (process placement) the components are split
    into that many process groups of neighbours."""
    sched = Schedule(Fraction(1000))  # 1 ms

    def group(i: int) -> str:  # contiguous: c0..c(n/g-1) in g0, and so on
        return f"g{i * groups // n}" if groups else ""

    comps = [ComponentConfig("c0", "chain:Counter", placement, sched, base_dir=HERE,
                             group=group(0))]
    conns = []
    for i in range(1, n):
        comps.append(ComponentConfig(f"c{i}", "chain:Relay", placement, sched, base_dir=HERE,
                                     group=group(i)))
        conns.append(ConnectionConfig(f"c{i-1}", "out", f"c{i}", "in"))
    run = RunConfig(until_ns=ticks * 1_000_000, seed=0, algorithm="jacobi", record=record,
                    plots=False)
    return Rig(Path("chain.toml"), f"chain{n}", run, tuple(comps), tuple(conns))


def measure(n: int, placement: str, ticks: int, record: bool, out: Path,
            groups: int = 0) -> tuple[float, float]:
    rig = chain_rig(n, placement, ticks, record, groups)
    result = run_rig(rig, out / f"{placement}-{n}-{groups}")
    if not result.ok:
        raise SystemExit(f"benchmark run failed: {result.summary['error']}")
    # Exclude setup/teardown: use the execution's own loop time when available.
    wall = result.summary["loop_wall_time_s"]
    ticks_done = result.summary["ticks"]
    per_tick_us = wall / ticks_done * 1e6
    return per_tick_us, per_tick_us / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=5000)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("runs/bench-step-overhead"))
    args = ap.parse_args()
    print(f"# step_overhead: {platform.node() and 'host'} {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{args.ticks} ticks at 1 ms, record={'on' if args.record else 'off'}")
    print(f"{'N':>3} {'placement':>9} {'us/tick':>10} {'us/component-step':>18}")
    for placement in ("inproc", "process"):
        for n in (1, 2, 4, 8):
            tick, comp = measure(n, placement, args.ticks, args.record, args.out)
            print(f"{n:>3} {placement:>9} {tick:>10.1f} {comp:>18.1f}")
    # One process group per core: the same components, one message per group and tick.
    cores = max(1, min(os.cpu_count() or 1, 8))
    for n, g in [(n, min(n, cores)) for n in (1, 2, 4, 8)] + [(8, 1), (8, 4)]:
        tick, comp = measure(n, "process", args.ticks, args.record, args.out, groups=g)
        label = f"{g} group" + ("s" if g > 1 else "")
        print(f"{n:>3} {label:>9} {tick:>10.1f} {comp:>18.1f}")
    # The floor: the same fan-out with pure pyzmq echo processes, no moonpool code.
    from zmq_echo import echo_tick_us

    for n in (1, 2, 4, 8):
        tick = echo_tick_us(n, args.ticks)
        print(f"{n:>3} {'zmq-echo':>9} {tick:>10.1f} {tick / n:>18.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
