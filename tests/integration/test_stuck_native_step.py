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
from pathlib import Path

import pytest

from conftest import RIGS, ROOT
from moonpool.components.sdk.native import compiler
from moonpool.orchestrator.recording import digest_of_recording, read_recording, recording_info

SPIN_C = r"""
#include <time.h>
void spin(double seconds) {  /* busy, never back in Python meanwhile */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do { clock_gettime(CLOCK_MONOTONIC, &b); }
    while ((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9 < seconds);
}
"""

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


def _children_of(pid: int) -> list[int]:
    """Processes started for the run with ``pid`` (the spawned components carry
    MOONPOOL_PARENT_PID) that are still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"MOONPOOL_PARENT_PID={pid}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def test_a_run_whose_step_is_stuck_in_native_code_ends_with_its_summary_and_recording(tmp_path):
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler (CC, cc, gcc or clang)")
    (tmp_path / "spin.c").write_text(SPIN_C)
    subprocess.run([cc, "-O1", "-fPIC", "-shared", "-o", str(tmp_path / "libspin.so"),
                    str(tmp_path / "spin.c")], check=True)
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
    try:
        stdout, stderr = proc.communicate(timeout=120)  # (a guard: it used to never end)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"the run did not end: {stderr[-2000:]}")
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
    assert _children_of(proc.pid) == []  # the sensor's process was terminated
