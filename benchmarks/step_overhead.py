#!/usr/bin/env python3
"""Stepping overhead: a chain of N trivial components at a 1 ms period.

    .venv/bin/python benchmarks/step_overhead.py [--ticks 5000] [--record]
        [--repeat R] [--only 8:1g,8:2g,8:proc,8:echo]

For N = 1, 2, 4, 8 the chain Counter -> Relay -> ... is run in-process and with
every component in its own process (ipc), Jacobi (all N stepped in parallel at
every tick), and in as many process groups as there are cores (neighbouring
components together; one StepBatch message per group and tick). Prints wall-clock
µs per tick and per component step, and, as the floor, the same fan-out to N
pure-pyzmq echo processes (zmq_echo.py). The recording
is off unless --record (the digest is always computed). Results go into
docs/benchmarks.md by hand, with the machine and the date.

Wall-clock figures on a small shared machine depend on what else runs, so each
row also gives, over the stepping loop only: the CPU time per tick of the
orchestrator's process and of the component processes (main and libzmq threads
alike), and the CPU the rest of the machine used meanwhile ("others", in cores).
With ``--repeat R`` each row is measured R times and the wall figure is printed
as min / median / max; ``--wait-quiet S`` waits (up to S seconds) before each run
for the rest of the machine to fall idle.

``--only`` picks rows: ``N:inproc``, ``N:proc`` (one process each), ``N:Gg``
(G process groups), ``N:Gh`` (half of the chain in-process, the other half in G
process groups), ``N:echo`` (the floor).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from moonpool.orchestrator.execution import Execution  # noqa: E402
from moonpool.orchestrator.rig import (  # noqa: E402
    ComponentConfig,
    ConnectionConfig,
    Rig,
    RunConfig,
    Schedule,
)
from moonpool.orchestrator.run import run_rig  # noqa: E402

_CLK = os.sysconf("SC_CLK_TCK")


def chain_rig(n: int, placement: str, ticks: int, record: bool, groups: int = 0,
              inproc: int = 0) -> Rig:
    """The chain; with ``groups`` > 0 (process placement) the components are split
    into that many process groups of neighbours; with ``inproc`` > 0 the first
    ``inproc`` of them stay in the orchestrator's process (a mixed layout: the
    orchestrator steps those while the group processes step theirs)."""
    sched = Schedule(Fraction(1000))  # 1 ms
    grouped = n - inproc

    def where(i: int) -> tuple[str, str]:  # contiguous: the first ones in g0, and so on
        if i < inproc:
            return "inproc", ""
        return placement, f"g{(i - inproc) * groups // grouped}" if groups else ""

    comps = [ComponentConfig("c0", "chain:Counter", where(0)[0], sched, base_dir=HERE,
                             group=where(0)[1])]
    conns = []
    for i in range(1, n):
        comps.append(ComponentConfig(f"c{i}", "chain:Relay", where(i)[0], sched, base_dir=HERE,
                                     group=where(i)[1]))
        conns.append(ConnectionConfig(f"c{i-1}", "out", f"c{i}", "in"))
    run = RunConfig(until_ns=ticks * 1_000_000, seed=0, algorithm="jacobi", record=record,
                    plots=False)
    return Rig(Path("chain.toml"), f"chain{n}", run, tuple(comps), tuple(conns))


def _process_cpu_s(pid: int) -> float:
    """CPU time (user + system, all threads) of a live process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLK


def _machine_busy_s() -> float:
    """CPU time the whole machine has spent busy since boot (all cores), from /proc."""
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    idle = cpu[3] + (cpu[4] if len(cpu) > 4 else 0)  # idle + iowait
    return (sum(cpu[:8]) - idle) / _CLK


class _LoopCpu:
    """CPU used during Execution.run only: this process, its component processes,
    and everything else on the machine (the benchmark wraps Execution.run; it
    changes nothing in what is measured)."""

    def __init__(self) -> None:
        self.orchestrator = self.components = self.others = 0.0
        self._run = Execution.run
        outer = self

        def run(execution: Execution, progress=None) -> None:
            conns = [getattr(a, "conn", a) for a in execution.adapters.values()]  # groups
            pids = sorted({c.proc.pid for c in conns if hasattr(c, "proc")})
            c0 = sum(_process_cpu_s(p) for p in pids)
            m0, p0, w0 = _machine_busy_s(), time.process_time(), time.perf_counter()
            try:
                outer._run(execution, progress)
            finally:
                wall = time.perf_counter() - w0
                outer.orchestrator = time.process_time() - p0
                outer.components = sum(_process_cpu_s(p) for p in pids) - c0
                busy = _machine_busy_s() - m0
                outer.others = max(0.0, busy - outer.orchestrator - outer.components) / wall

        Execution.run = run


_CPU = _LoopCpu()


def wait_quiet(max_wait_s: float, threshold: float = 0.15) -> float:
    """Wait (up to ``max_wait_s``) until the rest of the machine uses less than
    ``threshold`` cores over one second; return the last load seen (cores)."""
    deadline = time.monotonic() + max_wait_s
    while True:
        b0 = _machine_busy_s()
        time.sleep(1.0)
        load = _machine_busy_s() - b0
        if load < threshold or time.monotonic() > deadline:
            return load


def measure(n: int, placement: str, ticks: int, record: bool, out: Path,
            groups: int = 0, inproc: int = 0) -> tuple[float, float, float, float]:
    """µs per tick: wall, orchestrator CPU, component processes' CPU; and the other
    CPU load of the machine meanwhile (cores)."""
    rig = chain_rig(n, placement, ticks, record, groups, inproc)
    result = run_rig(rig, out / f"{placement}-{n}-{groups}-{inproc}")
    if not result.ok:
        raise SystemExit(f"benchmark run failed: {result.summary['error']}")
    # Exclude setup/teardown: use the execution's own loop time.
    ticks_done = result.summary["ticks"]
    us = 1e6 / ticks_done
    return (result.summary["loop_wall_time_s"] * us, _CPU.orchestrator * us,
            _CPU.components * us, _CPU.others)


def _rows(cores: int) -> list[tuple[int, str]]:
    rows = [(n, "inproc") for n in (1, 2, 4, 8)] + [(n, "proc") for n in (1, 2, 4, 8)]
    rows += [(n, f"{min(n, cores)}g") for n in (1, 2, 4, 8)] + [(8, "1g"), (8, "4g")]
    rows += [(8, "1h")]
    return rows + [(n, "echo") for n in (1, 2, 4, 8)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=5000)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="measure each row this many times")
    ap.add_argument("--only", default="", help="rows, e.g. 8:1g,8:2g,8:proc,8:echo")
    ap.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                    help="before each run, wait up to this long for the machine to be idle")
    ap.add_argument("--out", type=Path, default=Path("runs/bench-step-overhead"))
    args = ap.parse_args()
    cores = max(1, min(os.cpu_count() or 1, 8))
    rows = _rows(cores)
    if args.only:
        rows = [(int(n), kind) for n, kind in (r.split(":") for r in args.only.split(","))]
    print(f"# step_overhead: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {args.ticks} ticks at 1 ms, "
          f"record={'on' if args.record else 'off'}, {args.repeat} run(s) per row")
    print(f"{'N':>3} {'placement':>9} {'us/tick':>20} {'us/step':>8} "
          f"{'orch cpu':>9} {'comp cpu':>9} {'others':>7}")
    from zmq_echo import echo_tick_us

    for n, kind in rows:
        walls, cpu = [], []
        for _ in range(args.repeat):
            if args.wait_quiet:
                wait_quiet(args.wait_quiet)
            if kind == "echo":
                walls.append(echo_tick_us(n, args.ticks))
                continue
            placement = "inproc" if kind == "inproc" else "process"
            groups = int(kind.rstrip("gh")) if kind.endswith("g") or kind.endswith("h") else 0
            inproc = n // 2 if kind.endswith("h") else 0
            wall, orch, comp, others = measure(n, placement, args.ticks, args.record,
                                               args.out, groups, inproc)
            walls.append(wall)
            cpu.append((orch, comp, others))
        label = {"inproc": "inproc", "proc": "process", "echo": "zmq-echo"}.get(
            kind, f"{kind[:-1]} group" + ("s" if kind[:-1] != "1" else ""))
        if kind.endswith("h"):
            label = f"half+{kind[:-1]}g"
        med = statistics.median(walls)
        wall_text = (f"{min(walls):.0f}/{med:.0f}/{max(walls):.0f}" if len(walls) > 1
                     else f"{med:.1f}")
        line = f"{n:>3} {label:>9} {wall_text:>20} {med / n:>8.1f}"
        if cpu:
            orch, comp, others = (statistics.median(c[i] for c in cpu) for i in range(3))
            line += f" {orch:>9.1f} {comp:>9.1f} {others:>7.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
