#!/usr/bin/env python3
"""Crash-safe recording: what the open chunk's size and flush interval cost, and how
much of a run a SIGKILL leaves recoverable.

    .venv/bin/python benchmarks/recording.py [--until 120] [--repeat 3] [--kill-after 10]

1. **Overhead.** The quickstart for ``--until`` simulated seconds, flat out, in this
   process without a recording (``run.record = false``: the digest is still computed):
   its CPU time (least of ``--repeat``) and message rate. Then the recorder alone,
   per (chunk size, flush interval), writes that run's messages with its clock
   advancing at the run's message rate (so the flushes fall as in the run, and the
   load of a shared machine does not blur the comparison): its CPU time against the
   run's is the recording overhead. Also the file size, the chunks written and how
   long (wall) a chunk stays open on average, at the flat-out rate and at the real-time
   rate (the same messages, the clock at 1/250 s per message): what a crash loses.
2. **SIGKILL.** ``moonpool run`` of the quickstart (plus a component noting the wall clock
   of every simulated instant, tests/support/wallclock.py) killed with SIGKILL after
   ``--kill-after`` seconds, in real time (the case the issue reported: nothing
   recoverable) and flat out. Counts the messages recovered among those published up
   to one second before the kill (the reference: the same rig run to that instant).
   "met" when >= 90 % for both.
"""

from __future__ import annotations

import argparse
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


def _baseline(until_s: float, repeat: int, work: Path) -> tuple[float, int, float]:
    """(CPU s, messages, wall s) of the quickstart run in this process without recording
    (the digest is still computed), the least CPU of ``repeat`` runs; and its recording
    (one more run, with it) in work/stream: the messages replayed below."""
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    best = (float("inf"), 0, 0.0)
    for r in range(repeat):
        rig = load_and_check(ROOT / "rigs" / "quickstart.toml",
                             ["run.plots=false", "run.record=false"], until_s=until_s)
        c0, w0 = time.process_time(), time.perf_counter()
        summary = run_rig(rig, work / f"none-{r}").summary
        best = min(best, (time.process_time() - c0, summary["messages"],
                          time.perf_counter() - w0))
    rig = load_and_check(ROOT / "rigs" / "quickstart.toml", ["run.plots=false"],
                         until_s=until_s)
    assert run_rig(rig, work / "stream").summary["status"] == "ok"
    return best


def overhead(until_s: float, repeat: int, work: Path) -> None:
    """The recorder alone, fed the run's messages at the run's own message rate (its
    clock replaced by one advancing 1/rate per message), against the CPU the whole run
    spends per message without recording."""
    from mcap.reader import make_reader

    from moonpool.orchestrator.recording import read_recording, recording_info

    cpu0, count, wall0 = _baseline(until_s, repeat, work)
    rate = count / wall0
    stream = work / "stream" / "recording.mcap"
    types = recording_info(stream).topics
    messages = [(m.topic, m.log_time_ns, m.payload) for m in read_recording(stream)]
    per_message0 = cpu0 / count
    print(f"quickstart {until_s:g} s flat out without recording: {count} messages, "
          f"{cpu0:.2f} s CPU ({1e6 * per_message0:.1f} us per message), {rate:.0f} "
          f"messages per wall second; load {os.getloadavg()[0]:.1f}")
    realtime_rate = count / until_s  # messages per wall second when run in real time
    print("| chunk | flush every | recorder CPU per message | overhead on the run | file | "
          "chunks | open chunk, mean (flat out) | open chunk, mean (real time) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for chunk in CHUNKS_KIB:
        for flush in FLUSHES_S:
            best, spans = float("inf"), {}
            for r, pace in [(r, rate) for r in range(repeat)] + [(repeat, realtime_rate)]:
                path = work / f"c{chunk}-f{flush}-{r}.mcap"
                cpu = _record(messages, types, path, chunk, flush, pace)
                with open(path, "rb") as f:
                    chunks = make_reader(f).get_summary().statistics.chunk_count
                spans[pace] = (len(messages) / pace / max(chunks, 1), chunks)
                if pace == rate:
                    best = min(best, cpu)
            size = (work / f"c{chunk}-f{flush}-0.mcap").stat().st_size
            print(f"| {chunk} KiB | {f'{flush:g} s' if flush else 'when full'} | "
                  f"{1e6 * best / len(messages):.2f} us | {100 * best / cpu0:.1f} % | "
                  f"{size / 1e3:.0f} kB | {spans[rate][1]} | {spans[rate][0]:.2f} s | "
                  f"{spans[realtime_rate][0]:.2f} s |")


def _record(messages: list, types: dict, path: Path, chunk_kib: int, flush: float | None,
            rate: float) -> float:
    """CPU s of recording ``messages`` with the recorder's clock advancing 1/rate per
    message (the flushes fall as in a run at that message rate)."""
    from moonpool.orchestrator.recording import Recorder
    from moonpool.orchestrator.recording import writer as writer_mod

    real_clock = writer_mod.time.monotonic
    clock = iter(range(len(messages) * 4 + 100))
    writer_mod.time.monotonic = lambda: next(clock) / rate
    try:
        c0 = time.process_time()
        rec = Recorder(path, chunk_size=chunk_kib * 1024,
                       flush_interval_s=flush if flush else 1e9)
        ids = {t: rec.add_topic(t, types[t]) for t in types}
        for topic, t_ns, payload in messages:
            rec.write(ids[topic], t_ns, payload)
        rec.close()
        return time.process_time() - c0
    finally:
        writer_mod.time.monotonic = real_clock


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
    ap.add_argument("--until", type=float, default=300.0)
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
