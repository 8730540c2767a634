"""A component that ends the run as a failure (``Component.finish(reason,
failed=True)``, StepResult.failed on the wire): status "failed", exit 1, the reason
as the error, the component as failed_component, the finishing step's output
recorded, and every component's metrics kept (the failing one's too) — the same in
process, in a child process and in a process group."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, SUPPORT
from moonpool.orchestrator.recording import decode_recorded, read_recording

RIG = """
[run]
until = "10s"
seed = 1

[components.good]
entry = "faulty:Healthy"
run = "{mode}"
{group}
rate_hz = 10
[components.good.parameters]
at_step = -1

[components.mission]
entry = "faulty:FinishesFailed"
run = "{mode}"
{group}
rate_hz = 10
[components.mission.parameters]
at_step = 7
"""


@pytest.mark.parametrize("mode,group", [("inproc", ""), ("process", ""),
                                        ("process", 'group = "g"')])
def test_finish_failed_ends_the_run_as_failed_with_everything_recorded(tmp_path, mode, group):
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG.format(mode=mode, group=group))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig),
                           "--out", str(out), "--quiet"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["failed_component"] == "mission"
    assert summary["error"] == "mission: safe abort at step 7"
    assert summary["terminated"]["failed"] is True
    assert summary["sim_time_s"] == pytest.approx(0.8)  # the end of the 8th step
    # metrics of the failing component are kept (a step already sent to a child
    # process for the next instant may have run: it is discarded, not recorded)
    assert summary["metrics"]["mission"]["steps"] >= 8.0
    # the finishing step's output is in the recording, nothing after it
    counts = [decode_recorded(m).signals[0].value for m in read_recording(out / "recording.mcap")
              if m.topic == "/mission/count"]
    assert counts == [float(k) for k in range(1, 9)]


def test_finish_well_exits_0_and_says_no_error(tmp_path):
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG.format(mode="inproc", group="") + "failed = false\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig),
                           "--out", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "terminated" and summary["error"] is None
    assert "terminated" in summary and "failed" not in summary["terminated"]
    # the terminal says how it ended, and no "error: run failed: None"
    assert "done at step 7" in proc.stdout and "error" not in proc.stderr, proc.stderr
