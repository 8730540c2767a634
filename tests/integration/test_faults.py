"""A component that raises, hangs, or whose process is SIGKILLed: the run ends
within 5 s of the fault with exit 1, names the component, writes summary.json
with status failed, leaves a readable recording up to the fault, and no process
of the run survives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SUPPORT, alive
from moonpool.orchestrator.recording import read_recording

pytestmark = pytest.mark.slow

RIG = """
[run]
until = "{until}"
seed = 1

[components.good]
entry = "faulty:Healthy"
run = "{mode}"
rate_hz = 100
[components.good.parameters]
at_step = -1
pid_file = "{tmp}/good.pid"

[components.bad]
entry = "faulty:{kind}"
run = "{mode}"
rate_hz = 100
step_timeout = "2s"
[components.bad.parameters]
at_step = {at_step}
pid_file = "{tmp}/bad.pid"
fault_file = "{tmp}/fault.time"
"""


def _start(tmp: Path, kind: str, mode: str, at_step: int = 50, until: str = "60s"):
    rig = tmp / "rig.toml"
    rig.write_text(RIG.format(until=until, mode=mode, kind=kind, tmp=tmp, at_step=at_step))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--out",
         str(tmp / "out"), "--quiet"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _finish(proc: subprocess.Popen, tmp: Path, fault_time: float | None = None):
    out, err = proc.communicate(timeout=60)
    ended = time.time()
    if fault_time is None:
        fault_time = float((tmp / "fault.time").read_text())
    print(f"[{tmp.name}] run ended {ended - fault_time:.2f} s after the fault")
    return out, err, ended - fault_time


def _check_failed_run(tmp: Path, proc, err: str, seconds: float, what: str):
    assert proc.returncode == 1, err
    assert seconds < 5.0, f"run ended {seconds:.2f} s after the fault"
    assert "'bad'" in err and what in err, err
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert "'bad'" in summary["error"] and what in summary["error"]
    assert summary["failed_component"] == "bad"
    msgs = [m for m in read_recording(tmp / "out" / "recording.mcap") if m.topic == "/bad/count"]
    assert 0 < len(msgs) <= 50
    assert msgs[-1].log_time_ns <= 50 * 10_000_000 + 10_000_000
    for name in ("good", "bad"):
        pid_file = tmp / f"{name}.pid"
        if pid_file.exists() and int(pid_file.read_text()) != proc.pid:
            assert not alive(int(pid_file.read_text())), f"{name} survived the run"
    return summary


@pytest.mark.parametrize("mode", ["inproc", "process"])
def test_component_raising_in_step_fails_the_run(tmp_path, mode):
    proc = _start(tmp_path, "Raises", mode)
    _, err, seconds = _finish(proc, tmp_path)
    summary = _check_failed_run(tmp_path, proc, err, seconds, "ValueError")
    assert "deliberate failure" in summary["error"]


@pytest.mark.parametrize("mode", ["inproc", "process"])
def test_hanging_component_times_out(tmp_path, mode):
    proc = _start(tmp_path, "Hangs", mode)
    _, err, seconds = _finish(proc, tmp_path)
    _check_failed_run(tmp_path, proc, err, seconds, "within 2 s")


def test_component_killing_itself_is_detected(tmp_path):
    proc = _start(tmp_path, "KillsItself", "process")
    _, err, seconds = _finish(proc, tmp_path)
    _check_failed_run(tmp_path, proc, err, seconds, "SIGKILL")


def test_component_killed_from_outside_is_detected(tmp_path):
    proc = _start(tmp_path, "Healthy", "process", at_step=-1, until="3600s")
    pid_file = tmp_path / "bad.pid"
    deadline = time.time() + 30
    while not pid_file.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let it run a little
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    killed = time.time()
    _, err, seconds = _finish(proc, tmp_path, killed)
    assert proc.returncode == 1, err
    assert seconds < 5.0
    assert "'bad'" in err and "SIGKILL" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["failed_component"] == "bad"
    assert 0 < summary["sim_time_s"] < 3600
    msgs = list(read_recording(tmp_path / "out" / "recording.mcap"))
    assert len(msgs) > 0
    assert not alive(int((tmp_path / "good.pid").read_text()))


def test_ctrl_c_shuts_down_cleanly(tmp_path):
    proc = _start(tmp_path, "Healthy", "process", at_step=-1, until="3600s")
    for name in ("good", "bad"):
        deadline = time.time() + 30
        while not (tmp_path / f"{name}.pid").exists() and time.time() < deadline:
            time.sleep(0.05)
    # Interrupt once messages are on disk (256 KiB of chunks, written at least every 0.5 s), however loaded the
    # machine: the point is that what was recorded survives the interrupt.
    recording = tmp_path / "out" / "recording.mcap"
    deadline = time.time() + 30
    while time.time() < deadline and not (recording.exists() and recording.stat().st_size > 256 * 1024):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    t0 = time.time()
    _, err, seconds = _finish(proc, tmp_path, t0)
    assert proc.returncode == 1, err
    assert seconds < 5.0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "failed" and "interrupted" in summary["error"]
    for name in ("good", "bad"):
        assert not alive(int((tmp_path / f"{name}.pid").read_text()))
    assert len(list(read_recording(tmp_path / "out" / "recording.mcap"))) > 0


def test_orchestrator_killed_leaves_no_orphans(tmp_path):
    proc = _start(tmp_path, "Healthy", "process", at_step=-1, until="3600s")
    for name in ("good", "bad"):
        deadline = time.time() + 30
        while not (tmp_path / f"{name}.pid").exists() and time.time() < deadline:
            time.sleep(0.05)
    pids = [int((tmp_path / f"{n}.pid").read_text()) for n in ("good", "bad")]
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.time() + 5
    while any(alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "component processes outlived a SIGKILLed orchestrator"
