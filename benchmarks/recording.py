#!/usr/bin/env python3
"""Recording: its cost per message, what the open chunk's size and flush interval
cost, and how much of a run a SIGKILL leaves recoverable.

    .venv/bin/python benchmarks/recording.py [--until 300] [--repeat 3] [--kill-after 10]
        [--only cost,stall,table,kill] [--stall 0.08] [--stall-for 20]

1. **Cost per small message** (issue 21: <= 5 µs). The quickstart (messages of 40-100
   bytes) for ``--until`` simulated seconds, flat out, in this process: without a
   recording (``run.record = false``; the digest is still computed), with it, and with
   it but written on the stepping thread (``writer_thread = False``: the thread's
   worth), the three interleaved, ``--repeat`` times (median). CPU of the stepping
   thread in the stepping loop, CPU of the whole process (all threads) over the run,
   wall of the loop; the recording's cost per message is the difference to the run
   without it. Then the pieces, on that run's messages: serializing (a component's
   ``SerializeToString(deterministic=True)``, done with or without a recording), the
   digest, the recorder on the stepping thread and in all, and the ``mcap`` package's
   writer (what the recorder used before, the reference). "met" when serialize +
   digest + the whole recorder (all threads) <= 5 µs per message.
2. **A stalled disk.** The quickstart's messages (``--stall-for`` simulated seconds)
   written at its real-time rate (250 a second) into a disk that stops taking data for
   ``--stall`` s every half second: a named pipe of one page read by a process that
   pauses (what a shared disk under write-back throttling does to a ``write`` call,
   made repeatable). With the writer thread and with everything on the stepping
   thread: how long each ``Recorder.write`` call held the stepping thread.
3. **Chunk size and flush interval.** The recorder alone, per (chunk size, flush
   interval), writes the run's messages with its clock advancing at the run's message
   rate (so the flushes fall as in the run, and the load of a shared machine does not
   blur the comparison): its CPU (all threads) against the run's. Also the file size,
   the chunks written and how long (wall) a chunk stays open on average, at the
   flat-out rate and at the real-time rate (the same messages, the clock at 1/250 s per
   message): what a crash loses.
4. **SIGKILL.** ``moonpool run`` of the quickstart (plus a component noting the wall
   clock of every simulated instant, tests/support/wallclock.py) killed with SIGKILL
   after ``--kill-after`` seconds, in real time (the case the issue reported: nothing
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


TARGET_US = 5.0  # issue 21: recording <= 5 µs per small message
KINDS = ("off", "thread", "inline")  # no recording; writer thread; all on the stepping thread


def _quickstart(kind: str, until_s: float, out: Path) -> dict[str, float]:
    """One flat-out quickstart run in this process: CPU of the stepping thread in the
    stepping loop, CPU of the process over the whole run (all threads), loop wall (s),
    messages."""
    import functools

    from moonpool.orchestrator import run as run_mod
    from moonpool.orchestrator.execution import Execution
    from moonpool.orchestrator.recording import Recorder
    from moonpool.orchestrator.rigfile import load_and_check

    loop: list[float] = []
    run = Execution.run

    def timed(execution, progress=None):  # the stepping thread's CPU in the loop only
        t0 = time.thread_time()
        try:
            return run(execution, progress)
        finally:
            loop.append(time.thread_time() - t0)

    rig = load_and_check(ROOT / "rigs" / "quickstart.toml",
                         ["run.plots=false", f"run.record={str(kind != 'off').lower()}"],
                         until_s=until_s)
    Execution.run = timed
    if kind == "inline":
        run_mod.Recorder = functools.partial(Recorder, writer_thread=False)
    try:
        c0 = time.process_time()
        summary = run_mod.run_rig(rig, out).summary
        cpu = time.process_time() - c0
    finally:
        Execution.run = run
        run_mod.Recorder = Recorder
    assert summary["status"] == "ok", summary["error"]
    return {"loop_cpu": loop[0], "cpu": cpu, "wall": summary["loop_wall_time_s"],
            "messages": summary["messages"]}


def _pieces(stream: Path, repeat: int, work: Path) -> dict[str, float]:
    """µs per message of each piece on the messages of ``stream`` (median of
    ``repeat``): serialize, digest, the recorder (stepping thread; all threads), the
    mcap package's writer."""
    import statistics

    from mcap.writer import CompressionType, Writer

    from moonpool.components.sdk import wire
    from moonpool.orchestrator.recording import Digest, Recorder, read_recording

    messages = [(m.topic, m.type_name, m.log_time_ns, m.payload)
                for m in read_recording(stream)]
    decoded = [wire.decode(type_name, payload) for _, type_name, _, payload in messages]
    n = len(messages)
    runs: dict[str, list[float]] = {}
    for r in range(repeat):
        c0 = time.thread_time()
        for msg in decoded:
            msg.SerializeToString(deterministic=True)
        runs.setdefault("serialize", []).append(time.thread_time() - c0)

        digest = Digest()
        prefixes = {t: Digest.topic_prefix(t) for t, _, _, _ in messages}
        rows = [(prefixes[t], log, payload) for t, _, log, payload in messages]
        c0 = time.thread_time()
        for prefix, log, payload in rows:
            digest.update_prefixed(prefix, log, payload)
        runs.setdefault("digest", []).append(time.thread_time() - c0)

        c0, t0 = time.process_time(), time.thread_time()
        rec = Recorder(work / f"pieces-{r}.mcap")
        ids = {t: rec.add_topic(t, ty) for t, ty, _, _ in messages}
        rows = [(ids[t], log, payload) for t, _, log, payload in messages]
        t1 = time.thread_time()
        for channel, log, payload in rows:
            rec.write(channel, log, payload)
        runs.setdefault("recorder (stepping thread)", []).append(time.thread_time() - t1)
        rec.close()
        runs.setdefault("recorder (all threads)", []).append(
            time.process_time() - c0 - (t1 - t0))

        c0 = time.process_time()
        with open(work / f"mcap-{r}.mcap", "wb") as f:
            writer = Writer(f, compression=CompressionType.ZSTD)
            writer.start(profile="", library="benchmark")
            schemas: dict[str, int] = {}
            channels: dict[str, int] = {}
            for t, ty, _, _ in messages:
                if t not in channels:
                    if ty not in schemas:
                        schemas[ty] = writer.register_schema(ty, "protobuf", b"")
                    channels[t] = writer.register_channel(t, "protobuf", schemas[ty])
            for t, _, log, payload in messages:
                writer.add_message(channels[t], log_time=log, data=payload, publish_time=log)
            writer.finish()
        runs.setdefault("mcap package writer (before)", []).append(time.process_time() - c0)
    return {k: 1e6 * statistics.median(v) / n for k, v in runs.items()}


def cost(until_s: float, repeat: int, work: Path) -> bool:
    """Section 1 (prints the figures); True when the target is met."""
    import statistics

    runs: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
    for r in range(repeat):
        for kind in KINDS:
            runs[kind].append(_quickstart(kind, until_s, work / f"{kind}-{r}"))
    med = {k: {key: statistics.median(run[key] for run in v) for key in v[0]}
           for k, v in runs.items()}
    n = med["off"]["messages"]
    size = sum(len(m) for m in _payloads(work / "thread-0" / "recording.mcap")) / n
    print(f"## 1. Cost per message: quickstart {until_s:g} s flat out, {n:.0f} messages "
          f"of {size:.0f} bytes on average, median of {repeat} (interleaved)")
    print("| run | stepping thread, CPU in the loop | process CPU, all threads | loop wall |")
    print("| --- | --- | --- | --- |")
    label = {"off": "no recording (digest only)", "thread": "recording, writer thread",
             "inline": "recording, all on the stepping thread"}
    for kind in KINDS:
        m = med[kind]
        print(f"| {label[kind]} | {1e6 * m['loop_cpu'] / n:.2f} µs | {1e6 * m['cpu'] / n:.2f} µs "
              f"| {1e6 * m['wall'] / n:.2f} µs |")
    for kind in ("thread", "inline"):
        d = {key: 1e6 * (med[kind][key] - med["off"][key]) / n
             for key in ("loop_cpu", "cpu", "wall")}
        print(f"recording's cost per message ({label[kind]}): stepping thread "
              f"{d['loop_cpu']:.2f} µs, all threads {d['cpu']:.2f} µs, wall {d['wall']:.2f} µs")
    pieces = _pieces(work / "thread-0" / "recording.mcap", repeat, work)
    print("| piece (µs per message) | " + " | ".join(pieces) + " |")
    print("| --- |" + " --- |" * len(pieces))
    print("| | " + " | ".join(f"{v:.2f}" for v in pieces.values()) + " |")
    mcap_writer = pieces["mcap package writer (before)"]
    whole = pieces["recorder (all threads)"]
    print(f"recorder against the mcap package's writer: {whole / mcap_writer:.2f}x in all "
          f"threads, {pieces['recorder (stepping thread)'] / mcap_writer:.2f}x on the "
          "stepping thread")
    stepping = (pieces["serialize"] + pieces["digest"] + pieces["recorder (stepping thread)"])
    total = pieces["serialize"] + pieces["digest"] + whole
    ok = total <= TARGET_US
    print(f"serialize + digest + MCAP write per small message: {stepping:.2f} µs on the "
          f"stepping thread, {total:.2f} µs in all threads (target <= {TARGET_US:g} µs): "
          f"{'met' if ok else 'NOT met'}")
    return ok


STALL_READER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe: a write waits for the reader
stall, every = float(sys.argv[2]), float(sys.argv[3])
last = time.monotonic()
while os.read(fd, 1 << 16):
    if time.monotonic() - last >= every:
        time.sleep(stall)  # the disk stops taking data
        last = time.monotonic()
"""


def stalled_disk(until_s: float, stall_s: float, work: Path) -> None:
    """Section 2: the quickstart's messages written at its real-time rate into a disk
    that stops taking data for ``stall_s`` every half second (a named pipe read by a
    process that pauses), with the writer thread and with everything on the stepping
    thread: how long each write() call held the stepping thread."""
    import numpy as np

    from moonpool.orchestrator.recording import Recorder, read_recording, recording_info

    stream = work / "stream.mcap"
    if not stream.exists():
        _quickstart("thread", until_s, work / "stream")
        (work / "stream" / "recording.mcap").rename(stream)
    types = recording_info(stream).topics
    messages = [(m.topic, m.log_time_ns, m.payload) for m in read_recording(stream)]
    rate = 250.0  # the quickstart's messages per second of simulated time
    print(f"## 2. A stalled disk: {len(messages)} quickstart messages at {rate:g} per "
          f"second ({len(messages) / rate:g} s), the disk stopping for "
          f"{1e3 * stall_s:g} ms every 0.5 s")
    print("| recorder | write() calls | p50 | p99 | max | calls over 1 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for thread in (True, False):
        fifo = work / f"stall-{thread}.mcap"
        os.mkfifo(fifo)
        reader = subprocess.Popen([sys.executable, "-c", STALL_READER, str(fifo),
                                   str(stall_s), "0.5"])
        rec = Recorder(fifo, writer_thread=thread)
        ids = {t: rec.add_topic(t, types[t]) for t in types}
        took = np.empty(len(messages))
        start = time.perf_counter()
        for i, (topic, t_ns, payload) in enumerate(messages):
            left = start + i / rate - time.perf_counter()
            if left > 0:
                time.sleep(left)
            t0 = time.perf_counter()
            rec.write(ids[topic], t_ns, payload)
            took[i] = time.perf_counter() - t0
        rec.close()
        reader.wait(60)
        p50, p99 = np.percentile(took, [50, 99]) * 1e6
        print(f"| {'writer thread' if thread else 'all on the stepping thread'} | {len(took)} "
              f"| {p50:.1f} µs | {p99:.1f} µs | {took.max() * 1e3:.2f} ms | "
              f"{int((took > 1e-3).sum())} |")


def _payloads(stream: Path) -> list[bytes]:
    from moonpool.orchestrator.recording import read_recording

    return [m.payload for m in read_recording(stream)]


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
    print("## 3. Chunk size and flush interval")
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
    ap.add_argument("--only", default="cost,stall,table,kill",
                    help="sections, comma-separated, of cost, stall, table, kill")
    ap.add_argument("--stall", type=float, default=0.08,
                    help="how long the disk stops taking data in the stall section, s")
    ap.add_argument("--stall-for", type=float, default=20.0,
                    help="simulated seconds of the quickstart written in the stall section")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    ok = True
    with tempfile.TemporaryDirectory(prefix="moonpool-recording-bench-") as tmp:
        work = Path(tmp)
        if "cost" in only:
            ok = cost(args.until, args.repeat, work / "cost") and ok
            print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        if "stall" in only:
            (work / "stall").mkdir()
            stalled_disk(args.stall_for, args.stall, work / "stall")
        if "table" in only:
            overhead(args.until, args.repeat, work / "overhead")
        if "kill" in only:
            print("## 4. SIGKILL")
            fractions = [sigkill(args.kill_after, rt, work / f"kill-{rt}")
                         for rt in (True, False)]
            killed_ok = min(fractions) >= 0.9
            print(f">= 90 % of the messages up to a second before a SIGKILL recoverable: "
                  f"{'met' if killed_ok else 'NOT met'}")
            ok = ok and killed_ok
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
