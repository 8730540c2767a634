#!/usr/bin/env python3
"""Where a process group's tick goes: the chain of N trivial FMUs of peers.py, all in
one process group, with the orchestrator's side of each tick cut into its phases.

    .venv/bin/python benchmarks/group_phases.py [--n 8] [--ticks 5000] [--repeat 3]

A group is stepped in lockstep: the orchestrator sends the instant's StepBatch,
waits for its result, and only then can build the next batch (under Jacobi, member
k's inputs at t + dt are member k-1's outputs at t). Each tick is therefore

- **serial**: from the batch result's arrival to the next batch being sent
  (unpacking the result, checking and routing every output, gathering and encoding
  the next inputs) — the group waits meanwhile;
- **send**: handing the batch to ZeroMQ;
- **overlapped**: what the orchestrator does while the group steps (handing the
  collected messages to the digest and the recording);
- **wait**: from the end of that to the result's arrival: the group's own work (its
  serve loop, hosts and components) plus the round trip through ZeroMQ.

The round trip of a bare pyzmq echo (one process, measured in the same run) is
printed beside it, and from it the group's own work per tick (wait + overlapped -
echo). Only timestamps are taken (``time.perf_counter_ns`` around two calls of the
group's adapter); the figures are medians over the ticks, the printed ones the median
of ``--repeat`` runs. Nothing here is a target: it shows which side of a group's tick
a change would shorten, and what lockstep leaves (the sum of both sides) against
what a group that routes its members' messages itself could reach (the larger of
the two), docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fmu_step import build_trivial  # noqa: E402
from peers import moonpool_chain  # noqa: E402
from zmq_echo import echo_tick_us  # noqa: E402

PHASES = ("serial", "send", "overlapped", "wait")


def group_phases(fmu_path: Path, n: int, ticks: int, work: Path) -> dict[str, float]:
    """One run of the chain in one group: the tick and its phases, median µs."""
    from moonpool.orchestrator.adapters.group import ProcessGroup
    from moonpool.orchestrator.adapters.process import ProcessAdapter

    clock = time.perf_counter_ns
    marks: list[tuple[str, int]] = []
    flush, wait_reply = ProcessGroup.flush, ProcessAdapter.wait_reply

    def timed_flush(self):
        marks.append(("f", clock()))
        flush(self)
        marks.append(("F", clock()))

    def timed_wait(self):
        marks.append(("w", clock()))
        got = wait_reply(self)
        marks.append(("W", clock()))
        return got

    ProcessGroup.flush, ProcessAdapter.wait_reply = timed_flush, timed_wait
    try:
        tick_us, _ = moonpool_chain(fmu_path, n, ticks, "mp-group", work)
    finally:
        ProcessGroup.flush, ProcessAdapter.wait_reply = flush, wait_reply
    # Steady state: reply (W), batch sent (f..F), collecting starts (w), reply (W).
    phases: dict[str, list[float]] = {p: [] for p in PHASES}
    for i in range(len(marks) - 4):
        window = marks[i:i + 5]
        if "".join(m[0] for m in window) != "WfFwW":
            continue
        t = [m[1] for m in window]
        for name, (a, b) in zip(PHASES, ((0, 1), (1, 2), (2, 3), (3, 4))):
            phases[name].append((t[b] - t[a]) / 1e3)
    if len(phases["wait"]) < ticks // 2:
        raise SystemExit(f"only {len(phases['wait'])} of {ticks} ticks had the lockstep "
                         "pattern: is the group stepped as one batch per tick?")
    out = {name: statistics.median(v) for name, v in phases.items()}
    out["tick"] = tick_us
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="members of the group (the chain's length)")
    ap.add_argument("--ticks", type=int, default=5000, help="ticks of 1 ms per run")
    ap.add_argument("--repeat", type=int, default=3, help="runs (the median is printed)")
    args = ap.parse_args()
    if args.n < 1 or args.ticks < 100 or args.repeat < 1:
        ap.error("--n must be at least 1, --ticks at least 100, --repeat at least 1")
    work = Path(tempfile.mkdtemp(prefix="moonpool-phases-"))
    try:
        fmu_path = build_trivial(work, version=2)
        load = os.getloadavg()
        print(f"# group phases: {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, one group of {args.n}, {args.ticks} ticks, "
              f"median of {args.repeat}; load average before {load[0]:.2f}")
        runs, echoes = [], []
        for _ in range(args.repeat):  # interleaved with the echo floor of one process
            runs.append(group_phases(fmu_path, args.n, args.ticks, work))
            echoes.append(echo_tick_us(1, args.ticks))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    echo = statistics.median(echoes)
    orchestrator = med["serial"] + med["send"] + med["overlapped"]
    group = med["wait"] + med["overlapped"] - echo
    print(f"{'tick (the run summary)':<34} {med['tick']:8.1f} µs")
    print(f"{'  serial (group waits)':<34} {med['serial']:8.1f}")
    print(f"{'  send':<34} {med['send']:8.1f}")
    print(f"{'  overlapped (group steps)':<34} {med['overlapped']:8.1f}")
    print(f"{'  wait (group steps, round trip)':<34} {med['wait']:8.1f}")
    print(f"{'echo round trip, one process':<34} {echo:8.1f}")
    print(f"{'orchestrator per tick':<34} {orchestrator:8.1f}   serial + send + overlapped")
    print(f"{'the group per tick (derived)':<34} {group:8.1f}   wait + overlapped - echo")
    print(f"{'lockstep: their sum + echo':<34} {orchestrator + group + echo - med['overlapped']:8.1f}"
          "   (what the tick is)")
    print(f"{'pipelined at best: the larger':<34} {max(orchestrator, group):8.1f}"
          "   (a group routing its own members' messages; not built)")
    print(f"# load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
