"""A step stuck in native code in the orchestrator's process (an FMU's doStep that never
returns): the in-process step timeout interrupts Python code only, so the run used to
wait for ever — no error, no summary.json, Ctrl-C ignored, the recording's last half
second never written. `moonpool run` now ends such a run from the step watchdog's
thread a second after the deadline: exit 1, the error naming the component and the
fix, summary.json written, the recording closed whole (its digest the summary's),
the other components terminated.

The stuck step is a C busy loop called through ctypes (as fmpy calls an FMU: the GIL
released), in the quickstart rig beside a sensor in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import spin
from conftest import RIGS, ROOT, alive
from moonpool.orchestrator.recording import digest_of_recording, read_recording, recording_info

STUCK_PY = '''
import ctypes
from pathlib import Path

from moonpool.components.sdk.component import Component

_spin = ctypes.CDLL(str(Path(__file__).with_name("libspin.so"))).spin
_spin.argtypes, _spin.restype = [ctypes.c_double], None


class Stuck(Component):
    """Steps in no time until t = 0.5 s, then never returns (a day in C)."""

    def step(self, t_ns, dt_ns, inputs):
        if t_ns >= 500_000_000:
            _spin(86400.0)
'''


def _children_of(pid: int) -> set[int]:
    """The live processes the orchestrator ``pid`` spawned (``--parent-pid PID`` on their
    command line; they are reparented when it exits, so conftest.children_of, which
    follows parent ids, cannot see them afterwards)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a == b"--parent-pid" and b == str(pid).encode() for a, b in zip(args, args[1:])):
            found.add(int(entry.name))
    return found


def test_a_run_whose_step_is_stuck_in_native_code_ends_with_its_summary_and_recording(tmp_path):
    spin.build(tmp_path)  # libspin.so beside the component file
    (tmp_path / "stuck.py").write_text(STUCK_PY)
    text = (RIGS / "quickstart.toml").read_text()
    text = text.replace('order = ["sensor", "pid", "vehicle"]',
                        'order = ["sensor", "pid", "vehicle", "stuck"]')
    text = text.replace('entry = "quickstart.pressure"\n',
                        'entry = "quickstart.pressure"\nrun = "process"\n')
    text += ('\n[components.stuck]\nentry = "stuck.py:Stuck"\nrate_hz = 10\n'
             'step_timeout = "0.5s"\n')
    rig = tmp_path / "stuck.toml"
    rig.write_text(text)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--until", "5",
         "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    spawned: set[int] = set()  # the sensor's process, seen while the run is stuck
    deadline = time.monotonic() + 120  # (a guard: it used to never end)
    while proc.poll() is None and time.monotonic() < deadline:
        spawned |= _children_of(proc.pid)
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
        pytest.fail(f"the run did not end: {proc.communicate()[1][-2000:]}")
    stdout, stderr = proc.communicate()
    assert proc.returncode == 1, stderr
    assert "components.stuck: its step has run" in stderr and "ending the run" in stderr
    assert "Traceback" not in stderr, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["failed_component"] == "stuck"
    assert "stuck in native code" in summary["error"]
    assert 'run = "process"' in summary["error"]
    assert summary["plots_skipped"]
    # The steps before the stuck one, all in the stream (the stuck one's instant,
    # t = 0.5 s, is where it ends), the recording closed whole and equal to the digest.
    assert summary["sim_time_s"] == pytest.approx(0.5)
    assert summary["components"]["stuck"]["steps"] == 5
    info = recording_info(out / "recording.mcap")
    assert info.complete
    messages = list(read_recording(out / "recording.mcap"))
    assert len(messages) == summary["messages"] > 0
    assert max(m.log_time_ns for m in messages) <= 500_000_000
    assert digest_of_recording(out / "recording.mcap") == summary["digest"]
    # The healthy components were terminated (the pid's metrics are those of its
    # Terminate), and no process of the run is left.
    assert "pid" in summary["metrics"]
    assert spawned  # (the check looks at a process that existed: the sensor's)
    assert not any(alive(p) for p in spawned)
