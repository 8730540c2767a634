#!/usr/bin/env python3
"""Crash-safe recording: what the open chunk's size and flush interval cost, and how
much of a run a SIGKILL leaves recoverable.

    .venv/bin/python benchmarks/recording.py [--until 120] [--repeat 3] [--kill-after 10]

1. **Overhead.** The quickstart for ``--until`` simulated seconds, flat out, in this
   process (``run_rig``), once without a recording (``run.record = false``: the digest is
   still computed) and once per (chunk size, flush interval), the recorder swapped for
   one with those settings; each ``--repeat`` times, interleaved, the least CPU time
   (``time.process_time``) kept. Prints per setting: recording overhead = CPU with
   recording / CPU without − 1, file size, chunks written and wall seconds per chunk
   (how long the open chunk stays in memory: what a crash can lose).
2. **SIGKILL.** ``moonpool run`` of the quickstart (plus a component noting the wall clock
   of every simulated instant, tests/support/wallclock.py) killed with SIGKILL after
   ``--kill-after`` seconds, in real time (the case the issue reported: nothing
   recoverable) and flat out. Counts the messages recovered among those published up
   to one second before the kill (the reference: the same rig run to that instant).
   "met" when >= 90 % for both.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"
sys.path.insert(0, str(SUPPORT))

CHUNKS_KIB = (32, 64, 256, 1024)
FLUSHES_S = (0.1, 0.5, 1.0, None)  # None: only when full (before issue 24)


def _run(until_s: float, out: Path, recorder=None, record: bool = True) -> tuple[float, float]:
    """(CPU s, wall s) of one in-process quickstart run."""
    from moonpool.orchestrator import run as run_mod
    from moonpool.orchestrator.recording import Recorder
    from moonpool.orchestrator.rigfile import load_and_check

    rig = load_and_check(ROOT / "rigs" / "quickstart.toml",
                         ["run.plots=false", f"run.record={'true' if record else 'false'}"],
                         until_s=until_s)
    run_mod.Recorder = recorder or Recorder
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        result = run_mod.run_rig(rig, out)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        run_mod.Recorder = Recorder
    assert result.summary["status"] == "ok", result.summary["error"]
    return cpu, wall


def overhead(until_s: float, repeat: int, work: Path) -> None:
    from mcap.reader import make_reader

    from moonpool.orchestrator.recording import Recorder

    settings = [(c, f) for c in CHUNKS_KIB for f in FLUSHES_S]
    best: dict = {}
    for r in range(repeat):
        base = _run(until_s, work / f"none-{r}", record=False)
        best["none"] = min(best.get("none", (1e9, 0)), base)
        for chunk, flush in settings:
            out = work / f"c{chunk}-f{flush}-{r}"
            rec = functools.partial(Recorder, chunk_size=chunk * 1024,
                                    flush_interval_s=flush if flush else 1e9)
            cpu_wall = _run(until_s, out, rec)
            best[chunk, flush] = min(best.get((chunk, flush), (1e9, 0)), cpu_wall)
    cpu0 = best["none"][0]
    print(f"quickstart {until_s:g} s flat out; without recording {cpu0:.2f} s CPU "
          f"(best of {repeat}); load: {os.getloadavg()[0]:.1f}")
    print("| chunk | flush every | overhead (CPU) | file | chunks | wall s per chunk |")
    print("| --- | --- | --- | --- | --- | --- |")
    for chunk, flush in settings:
        cpu, wall = best[chunk, flush]
        path = work / f"c{chunk}-f{flush}-0" / "recording.mcap"
        with open(path, "rb") as f:
            chunks = make_reader(f).get_summary().statistics.chunk_count
        print(f"| {chunk} KiB | {f'{flush:g} s' if flush else 'when full'} | "
              f"{100 * (cpu / cpu0 - 1):+.1f} % | {path.stat().st_size / 1e3:.0f} kB | {chunks} | "
              f"{wall / max(chunks, 1):.2f} |")


def _clock_rig(work: Path) -> tuple[Path, Path]:
    stamps = work / "stamps.txt"
    text = (ROOT / "rigs" / "quickstart.toml").read_text().replace(
        'order = ["sensor", "pid", "vehicle"]', 'order = ["clock", "sensor", "pid", "vehicle"]')
    text += (f'\n[components.clock]\nentry = "wallclock:WallClock"\nrate_hz = 50\n'
             f'[components.clock.parameters]\npath = "{stamps}"\n')
    rig = work / "quickstart_clock.toml"
    rig.write_text(text)
    return rig, stamps


def sigkill(kill_after_s: float, realtime: bool, work: Path) -> float:
    """The fraction recovered of the messages published up to a second before a kill."""
    from wallclock import reached

    from moonpool.orchestrator.recording import read_recording

    work.mkdir(parents=True)
    rig, stamps = _clock_rig(work)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SUPPORT),
                                                       os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--until",
           "100000", "--out", str(work / "out"), "--quiet", *(["--realtime"] if realtime else [])]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while not stamps.exists() or not stamps.read_text():
        time.sleep(0.01)
    time.sleep(kill_after_s)
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    proc.wait()
    t1, at_kill = reached(stamps, killed - 1.0), reached(stamps, killed)
    recovered = sum(1 for m in read_recording(work / "out" / "recording.mcap")
                    if m.log_time_ns <= t1)
    # The reference: the same rig (deterministic) run to just past t1.
    ref = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig),
                          "--until", f"{t1 * 1e-9 + 0.1:.3f}", "--out", str(work / "ref"),
                          "--quiet", "--set", "run.plots=false"], cwd=ROOT, env=env)
    assert ref.returncode == 0
    published = sum(1 for m in read_recording(work / "ref" / "recording.mcap")
                    if m.log_time_ns <= t1)
    size = (work / "out" / "recording.mcap").stat().st_size
    print(f"SIGKILL after {kill_after_s:g} s, {'real time' if realtime else 'flat out'}: "
          f"simulated {at_kill * 1e-9:.1f} s at the kill, {t1 * 1e-9:.1f} s a "
          f"second before; recovered {recovered} of the {published} messages published by "
          f"then ({100 * recovered / published:.1f} %); file {size / 1e3:.0f} kB")
    return recovered / published


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--until", type=float, default=120.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kill-after", type=float, default=10.0)
    ap.add_argument("--skip-overhead", action="store_true")
    args = ap.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="moonpool-recording-bench-") as tmp:
        work = Path(tmp)
        if not args.skip_overhead:
            overhead(args.until, args.repeat, work / "overhead")
        fractions = [sigkill(args.kill_after, rt, work / f"kill-{rt}") for rt in (True, False)]
    ok = min(fractions) >= 0.9
    print(f">= 90 % of the messages up to a second before a SIGKILL recoverable: "
          f"{'met' if ok else 'NOT met'}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
