#!/usr/bin/env python3
"""Where a process group's tick goes: the chain of N trivial FMUs of peers.py, all in
one process group, with the orchestrator's side of each tick cut into its phases.

    .venv/bin/python benchmarks/group_phases.py [--n 8] [--ticks 5000] [--repeat 3]

Under Jacobi member k's inputs at t + dt are member k-1's outputs at t. The group's
server delivers those itself (local routes), so the orchestrator sends the next
instant's batch as soon as it has collected the batch before the previous one: two
batches in flight, the group stepping while the orchestrator works. Each tick of the
orchestrator is then

- **serial**: from a batch result's arrival to the next batch being sent (unpacking
  the result, checking every output, routing what leaves the group, gathering and
  encoding the next inputs);
- **send**: handing the batch to ZeroMQ;
- **overlapped**: handing the collected messages to the digest and the recording;
- **wait**: waiting for the next batch result: what is left of the group's work (its
  serve loop, hosts and components) and of the round trip once the orchestrator is done.

(Before the group delivered its own connections — `b129c4f` — the two sides took
turns and the tick was their sum: serial + send + the group's whole work + the round
trip.) The round trip of a bare pyzmq echo (one process, measured in the same run) is
printed beside it. Only timestamps are taken (``time.perf_counter_ns`` around two calls
of the group's adapter); the figures are medians over the ticks, the printed ones the
median of ``--repeat`` runs. Nothing here is a target: it shows which side of a group's
tick a change would shorten (docs/benchmarks.md).
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
    print(f"{'tick (the run summary)':<34} {med['tick']:8.1f} µs")
    print(f"{'  serial':<34} {med['serial']:8.1f}")
    print(f"{'  send':<34} {med['send']:8.1f}")
    print(f"{'  overlapped (writes)':<34} {med['overlapped']:8.1f}")
    print(f"{'  wait (for the group)':<34} {med['wait']:8.1f}")
    print(f"{'echo round trip, one process':<34} {echo:8.1f}")
    print(f"{'orchestrator per tick':<34} {orchestrator:8.1f}   serial + send + overlapped")
    print(f"# load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
