"""Crash-safe recordings (issue 24, points 3 and 5): a full disk ends the run cleanly,
and a SIGKILL of the orchestrator loses at most about the last second.

- **SIGKILL.** The quickstart in real time, killed after 3 s: the open chunk used to
  be written only when full (256 KiB, about 25 s of the quickstart), so a kill in the
  first seconds left a 2.6 KB file with no message. The recorder now writes the open
  chunk out every 0.5 s of wall clock: every message published up to a second before
  the kill is in the file, read by the reader and indexed by `moonpool recover`. The
  same flat out, killed after 5 s: the chunks are written by the recording's writer
  thread, which must not fall behind (its queue is bounded in time).
- **A full disk.** `--out` on a 2 MiB tmpfs (mounted here; we are root in CI, and the
  test is skipped with the reason where the machine cannot mount one): exit 1 with the
  reason said once, summary.json written, the recording readable up to the failure,
  no temporary folder left and no traceback (also none from recorder.close())."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RIGS, ROOT, SUPPORT
from moonpool.orchestrator.recording import digest_of_recording, read_recording, recording_info

QUICKSTART = (RIGS / "quickstart.toml").read_text()


def _rig_with_clock(tmp_path: Path) -> tuple[Path, Path]:
    """The quickstart plus a component noting when each simulation time was reached."""
    stamps = tmp_path / "stamps.txt"
    text = QUICKSTART.replace('order = ["sensor", "pid", "vehicle"]',
                              'order = ["clock", "sensor", "pid", "vehicle"]')
    text += f'\n[components.clock]\nentry = "wallclock:WallClock"\nrate_hz = 50\n' \
            f'[components.clock.parameters]\npath = "{stamps}"\n'
    rig = tmp_path / "quickstart_clock.toml"
    rig.write_text(text)
    return rig, stamps


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


@pytest.mark.parametrize("realtime", [True, False], ids=["realtime", "flat-out"])
def test_sigkill_loses_at_most_the_last_second(tmp_path, realtime):
    """In real time, and flat out. Flat out the recording's writer thread gets the GIL
    only now and then, and without the time bound on its queue it fell behind by
    seconds in benchmarks/recording.py (58-62 % recovered after a kill at 10 s; on a
    quiet machine this 5 s run kept within the second even without the bound)."""
    from wallclock import reached

    rig, stamps = _rig_with_clock(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--until",
         "600" if realtime else "100000", *(["--realtime"] if realtime else []),
         "--out", str(out), "--quiet"],
        cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    started = None
    while True:  # real time: 3 s at 50 Hz; flat out: 5 s of wall clock
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        if stamps.exists() and stamps.stat().st_size:
            started = started or time.monotonic()
            if (stamps.read_text().count("\n") > 150 if realtime
                    else time.monotonic() - started > 5.0):
                break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    proc.wait(10)
    second_before = reached(stamps, killed - 1.0)
    assert second_before is not None and second_before > 10**9
    messages = list(read_recording(out / "recording.mcap"))
    assert messages, "no message could be recovered"
    last = max(m.log_time_ns for m in messages)
    print(f"\nkilled at t = {reached(stamps, killed) * 1e-9:.2f} s (simulated, "
          f"{'real time' if realtime else 'flat out'}): "
          f"{len(messages)} messages recovered, the last at {last * 1e-9:.2f} s; one "
          f"second before the kill the run was at {second_before * 1e-9:.2f} s; file "
          f"{(out / 'recording.mcap').stat().st_size} bytes")
    # Messages are written in time order (Gauss-Seidel): up to `last`, none is missing.
    assert last >= second_before
    assert not recording_info(out / "recording.mcap").complete
    # `moonpool recover` indexes it; the messages and their digest stay the same.
    before = digest_of_recording(out / "recording.mcap")
    done = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "recover",
                           str(out / "recording.mcap")], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{len(messages)} messages (it had no index; now it has one" in done.stdout
    assert recording_info(out / "recording.mcap").complete
    assert digest_of_recording(out / "recording.mcap") == before


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted at tmp_path/disk (needs root and a mount namespace
    that allows it)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a 2 MiB tmpfs to fill a disk (needs root, as in CI): "
                    + (made.stderr.strip() or f"mount exited {made.returncode}"))
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_full_disk_ends_the_run_cleanly(tmp_path, small_disk):
    temp = tmp_path / "temp"  # the run's own temporary folders go here (TMPDIR)
    temp.mkdir()
    out = small_disk / "run"
    # 300 s of the quickstart record about 3.3 MB: the 2 MiB disk fills part way.
    proc = subprocess.run(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(RIGS / "quickstart.toml"),
         "--until", "300", "--out", str(out)],
        cwd=ROOT, env=_env(TMPDIR=str(temp)), capture_output=True, text=True, timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    assert "Traceback" not in text, text
    assert text.count("No space left on device") == 1, text  # the reason, once
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed" and "No space left on device" in summary["error"]
    assert summary["recording_complete"] is False
    messages = list(read_recording(out / "recording.mcap"))
    print(f"\n2 MiB disk full: exit {proc.returncode}; {len(messages)} messages readable, up to "
          f"t = {messages[-1].log_time_ns * 1e-9:.2f} s; recording "
          f"{(out / 'recording.mcap').stat().st_size} bytes; summary.json status "
          f"{summary['status']}; left in the run folder: {sorted(p.name for p in out.iterdir())}")
    assert len(messages) > 10_000  # everything up to the failure (1.7 MB of it)
    times = [m.log_time_ns for m in messages]
    assert times == sorted(times) and times[-1] > 100 * 10**9
    assert list(temp.iterdir()) == []  # no temporary folder left behind
    assert sorted(p.name for p in out.iterdir()) == ["recording.mcap", "summary.json"]
