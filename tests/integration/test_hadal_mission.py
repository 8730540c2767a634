"""The hadal recovery mission (issue 18, seed 003) end to end on rigs/hadal_short.toml:
the whole mission succeeds with its metrics; the same stream in-process and in child
processes; the safe aborts (an unreachable target, a suction cup that never aligns, a
lost DVL) end the run with exit 1, the reason in summary.json and the recording
intact. Real FMU, real MuJoCo, real camera renders, real processes."""

from __future__ import annotations

import json
import re

import pytest
from conftest import RIGS, ROOT, moonpool

from moonpool.orchestrator.recording import decode_recorded, read_recording

pytestmark = pytest.mark.slow

RIG = RIGS / "hadal_short.toml"
PHASES = ["descend", "survey", "detect", "stabilise", "approach", "grasp", "lift", "transit",
          "release"]
# A short start for the aborts: 6 m above the floor, the camera already near the
# starfish (6, 3) m, so the mission reaches the grasp within ~40 s of simulation.
NEAR = ["--set", "components.vehicle.parameters.start_values.init_n=4.6",
        "--set", "components.vehicle.parameters.start_values.init_e=3.0",
        "--set", "components.vehicle.parameters.start_values.init_d=5994.5",
        "--set", "components.ins.parameters.initial_position_ned_m=[4.6, 3.0, 5994.5]",
        "--set", "components.mission.parameters.survey_start_ne_m=[5.0, 3.0]"]


def _run(tmp_path, *args, rig=RIG, name="out"):
    out = tmp_path / name
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet", "--set", "run.plots=false",
                    *args, timeout=900)
    summary = json.loads((out / "summary.json").read_text())
    return proc, summary, out


def _transitions(out):
    return [decode_recorded(m) for m in read_recording(out / "recording.mcap")
            if m.topic == "/mission/transition"]


def test_the_mission_succeeds_with_its_metrics(tmp_path):
    proc, s, out = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert s["status"] == "terminated" and s["terminated"]["component"] == "mission"
    m = s["metrics"]["mission"]
    assert m["status"] == "succeeded" and m["abort_reason"] is None
    assert m["grasp_success"] == 1.0 and m["object_delivered"] == 1.0
    assert m["delivery_error_m"] < 1.0
    assert 0 < m["descent_time_s"] < m["detection_time_s"] < m["total_mission_time_s"]
    assert m["survey_length_m"] > 0
    assert m["ins_drift_at_detection_m"] < 0.5 and m["ins_drift_at_detection_percent"] < 5.0
    assert [t["to"] for t in m["transitions"]] == PHASES + ["done"]
    # every transition is a message with its reason, in the recording
    rec = _transitions(out)
    assert [r.phase for r in rec] == PHASES + ["done"]
    assert all(r.reason for r in rec)
    assert rec[-1].status == 2  # MISSION_STATUS_SUCCEEDED
    # the arm took the object once and let it go once; the camera saw it
    assert s["metrics"]["arm"]["attach"] == 1.0 and s["metrics"]["arm"]["release"] == 1.0
    assert s["metrics"]["detector"]["detected"] >= 4
    # the placement of the rig: arm and mission in their own processes
    assert s["components"]["arm"]["placement"] == "process"
    assert s["components"]["mission"]["placement"] == "process"


def test_same_digest_in_process_and_in_child_processes(tmp_path):
    # The whole mission (descent to the release), every component in this process
    # against every component in a child process of its own.
    _, a, _ = _run(tmp_path, "--mode", "inproc", name="inproc")
    _, b, _ = _run(tmp_path, "--mode", "process", name="process")
    assert a["status"] == b["status"], (a["error"], b["error"])
    assert a["metrics"]["mission"]["status"] == "succeeded", a["metrics"]["mission"]
    assert a["sim_time_s"] == b["sim_time_s"] > 100
    assert a["digest"] == b["digest"]
    assert a["components"]["arm"]["placement"] == "inproc"
    assert b["components"]["camera"]["placement"] == "process"


def _aborted(proc, s, out, phase, words):
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert s["status"] == "failed" and s["failed_component"] == "mission"
    assert s["terminated"]["failed"] is True
    m = s["metrics"]["mission"]
    assert m["status"] == "aborted" and m["last_phase"] == phase, m["transitions"]
    for w in words:
        assert w in s["error"] and w in m["abort_reason"], (w, s["error"])
    # the recording is intact to the end, the abort transition in it with its reason
    rec = _transitions(out)
    assert rec[-1].phase == "aborted" and rec[-1].status == 3  # MISSION_STATUS_ABORTED
    assert words[0] in rec[-1].reason
    # (the last messages: those of the mission's last step, which ends at sim_time_s)
    last = max(msg.log_time_ns for msg in read_recording(out / "recording.mcap")) * 1e-9
    assert s["sim_time_s"] - 0.1 - 1e-9 <= last <= s["sim_time_s"]
    assert rec[-1].header.sim_time_ns * 1e-9 == pytest.approx(s["sim_time_s"] - 0.1)
    return m


def test_an_unreachable_target_aborts_safely(tmp_path):
    # The vehicle hovers with the target 1.5 m under its origin, in the camera's view
    # but 1.23 m from the arm's shoulder: beyond its 0.65 m reach.
    proc, s, out = _run(tmp_path, *NEAR, "--set",
                        "components.mission.parameters.grasp_point_m=[0.689, 0.0, 1.5]")
    _aborted(proc, s, out, "grasp", ["unreachable target", "outside the arm's workspace"])


def test_a_suction_cup_that_never_aligns_aborts_safely(tmp_path):
    # The cup would need its normal within 0.001 degree of the target's: it never attaches.
    proc, s, out = _run(tmp_path, *NEAR,
                        "--set", "components.arm.parameters.normal_tol_deg=0.001",
                        "--set", "components.mission.parameters.grasp_timeout_s=12")
    m = _aborted(proc, s, out, "grasp", ["timeout: grasp", "never aligned"])
    assert m["grasp_success"] == 0.0 and s["metrics"]["arm"]["attach"] == 0.0


def test_a_lost_dvl_aborts_safely(tmp_path):
    # From 20 s on the DVL is told it is at the surface: the floor 6 km away, no lock.
    text = RIG.read_text().replace('"../', f'"{ROOT}/')
    text += '\n[[scenario]]\nat = "20s"\nset = "dvl.state:position_ned_m.z"\nvalue = 0.0\n'
    rig = tmp_path / "hadal_lost_dvl.toml"
    rig.write_text(text)
    proc, s, out = _run(tmp_path, *NEAR, rig=rig)
    _aborted(proc, s, out, s["metrics"]["mission"]["last_phase"], ["lost DVL lock"])
    assert s["sim_time_s"] == pytest.approx(25.0, abs=1.0)  # 5 s without bottom track


@pytest.mark.parametrize("name, entry", [("mission", "mission.manager"),
                                         ("arm", "manipulation.arm")])
def test_the_mission_manager_and_the_arm_served_elsewhere_give_the_same_stream(
        tmp_path, name, entry):
    """`moonpool serve mission.manager` (or the arm) on a TCP port (a host of its own,
    here the loopback) and the rig's component as `run = "remote"`: the same digest as
    in-process."""
    import subprocess
    import sys
    import time

    log = tmp_path / "serve.log"
    with open(log, "w") as f:
        server = subprocess.Popen(
            [sys.executable, "-m", "moonpool.orchestrator.cli", "--log-level", "INFO", "serve",
             entry, "--bind", "tcp://127.0.0.1:*"],
            cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "serving" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        line = next(x for x in log.read_text().splitlines() if "serving" in x)
        endpoint = line.split(" on ", 1)[1].split(" ", 1)[0]
        text = RIG.read_text().replace('"../', f'"{ROOT}/')
        start = text.index(f"[components.{name}]")
        placed = f'entry = "{entry}"\n'
        assert text[start:].startswith(f"[components.{name}]\n{placed}")
        section = text[start:].replace(placed, f'endpoint = "{endpoint}"\n', 1)
        # A served component's files are relative to the folder the server serves
        # (here the checkout: `moonpool serve` confines them to it).
        after = re.search(rf"\n\[\[|\n\[components\.(?!{name}\.)", section)
        end = after.start() if after else len(section)
        section = section[:end].replace(f'"{ROOT}/', '"') + section[end:]
        text = text[:start] + section.replace('run = "process"', 'run = "remote"', 1)
        rig = tmp_path / f"hadal_remote_{name}.toml"
        rig.write_text(text)
        _, remote, _ = _run(tmp_path, "--until", "12", rig=rig, name="remote")
    finally:
        server.terminate()
        server.wait(10)
    _, local, _ = _run(tmp_path, "--until", "12", "--mode", "inproc", name="inproc")
    assert remote["status"] == local["status"] == "ok", remote["error"]
    assert remote["components"][name]["placement"] == "remote"
    assert remote["digest"] == local["digest"]
