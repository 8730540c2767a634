"""The HIL rigs (rigs/hil/): rigs/pool.toml with devices swapped in by the rig file alone.

- Every rigs/hil/*.toml is rigs/pool.toml except for the swapped component tables
  (and the connection into the renderer, which the camera device does not have):
  compared as parsed rigs, not as text.
- A HIL session: the MCU emulator as a real process on a pseudo-terminal, a video made
  from a short simulated recording (scripts/record_pool_video.py), rigs/hil/pool_hil.toml
  run in real time through the CLI: the localizer measures poses on the decoded frames,
  the bridge's feedback is the emulator's, and the thrust is zero at the end.
- The session replayed offline with both devices replaced by their recording
  reproduces the localizer, filter, controller and allocator exactly.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import RIGS, ROOT, moonpool
from moonpool.orchestrator.recording import (
    component_topics,
    decode_recorded,
    digest_of_recording,
    read_recording,
    recording_info,
)
from moonpool.orchestrator.rigfile import check_rig, load_rig

HIL = RIGS / "hil"
SWAPS = {  # rig -> {component: entry of the device that replaces it}
    "pool_mcu": {"thrusters": "devices.mcu_bridge"},
    "pool_camera": {"camera": "devices.camera"},
    "pool_hil": {"camera": "devices.camera", "thrusters": "devices.mcu_bridge"},
}
SECONDS = 3.0
SUPPLY_V = 15.5  # not the emulator's default (16 V): the feedback's voltage says who sent it


def _paths_resolved(value, base: Path):
    """Parameters with relative file paths made absolute (the HIL rigs are one folder
    deeper: "../../fmus/..." there is "../fmus/..." in rigs/pool.toml)."""
    if isinstance(value, dict):
        return {k: _paths_resolved(v, base) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_paths_resolved(v, base) for v in value)
    if isinstance(value, str) and (value.startswith(".") or value.startswith("/")) \
            and (base / value).exists():
        # An absolute path (a profile's own 'file') comes as the reader joined it.
        return str((base / value).resolve())
    return value


def test_hil_rigs_are_the_pool_rig_with_only_the_devices_swapped(fmus):
    assert sorted(p.stem for p in HIL.glob("*.toml")) == sorted(SWAPS)
    pool = load_rig(RIGS / "pool.toml")
    for name, swaps in SWAPS.items():
        hil = load_rig(HIL / f"{name}.toml")
        assert (hil.name, hil.description) == (pool.name, pool.description), name
        # The same run, except that a HIL session must keep up with the wall clock.
        assert hil.run.realtime_strict and not pool.run.realtime_strict, name
        assert replace(hil.run, realtime_strict=False) == pool.run, name
        assert hil.plots == pool.plots, name
        assert [c.name for c in hil.components] == [c.name for c in pool.components], name
        for mine, theirs in zip(hil.components, pool.components, strict=True):
            if mine.name in swaps:
                assert mine.entry == swaps[mine.name], (name, mine.name)
                assert mine.entry != theirs.entry
                # Same name, schedule and placement: it takes the simulated one's place.
                assert (mine.schedule, mine.placement) == (theirs.schedule, theirs.placement)
                continue
            assert mine.base_dir == HIL and theirs.base_dir == RIGS
            assert _paths_resolved(mine.parameters, mine.base_dir) == \
                _paths_resolved(theirs.parameters, theirs.base_dir), (name, mine.name)
            assert replace(mine, parameters={}, base_dir=RIGS) == \
                replace(theirs, parameters={}), (name, mine.name)
        # Every connection stays, except those into the renderer's input: the camera
        # device has none (it films the pool).
        dropped = [c for c in pool.connections if c not in hil.connections]
        assert [c for c in hil.connections if c not in pool.connections] == [], name
        expected = ["vehicle.state -> camera.state"] if "camera" in swaps else []
        assert [str(c) for c in dropped] == expected, name
        assert [c for c in pool.connections if c not in dropped] == list(hil.connections)
        # And they check, components and ports included; what may be missing on this
        # machine is the devices (the MCU's port, the video), and nothing else.
        for problem in check_rig(hil):
            assert problem.key in ("components.thrusters.parameters",
                                   "components.camera.parameters"), (name, problem)
            assert "does not exist" in problem.message, (name, problem)
    # The bridge talks to the emulator's link; the camera plays the recorded video.
    rig = load_rig(HIL / "pool_hil.toml")
    assert rig.component("thrusters").parameters["port"] == "/tmp/moonpool-mcu"
    cam = rig.component("camera").parameters
    assert (HIL / cam["source"]).resolve() == ROOT / "runs/hil/pool_camera.avi"
    assert cam["pacing"] == "step"


# ------------------------------------------------------------------- the session


def _messages(recording: Path, topic: str):
    return [decode_recorded(m) for m in read_recording(recording) if m.topic == topic]


@pytest.fixture(scope="module")
def session(tmp_path_factory, fmus):
    """A video from SECONDS of the simulated pool rig, then rigs/hil/pool_hil.toml run in
    real time for SECONDS against the MCU emulator (a child process on a pty), with the
    camera's frames recorded (to replay them)."""
    from moonpool.components.bridges.mcu_emulator import spawn

    tmp = tmp_path_factory.mktemp("hil")
    video = tmp / "pool_camera.avi"
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts/record_pool_video.py"), "--seconds", str(SECONDS),
         "--out", str(video), "--keep-run", str(tmp / "sim"), "--no-evaluate"],
        check=False, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-3000:]
    link = tmp / "mcu"
    with spawn("--link", str(link), watchdog=0.5, status_interval=0.02,
               supply_voltage=SUPPLY_V) as emu:
        proc = moonpool("run", str(HIL / "pool_hil.toml"), "--realtime", "--until", str(SECONDS),
                        "--set", f"components.thrusters.parameters.port={link}",
                        "--set", f"components.camera.parameters.source={video}",
                        "--set", "run.record_exclude=[]", "--set", "run.plots=false",
                        # The HIL rigs fail a session that falls behind the wall clock;
                        # this checks the devices, not this (shared) machine's
                        # punctuality, which tests/integration/test_realtime_verdict.py does.
                        "--set", "run.realtime_strict=false",
                        "--out", str(tmp / "hil"), "--quiet", timeout=120)
        # After the run: the bridge has sent STOP; wait for the rotors to spin down.
        ended = time.monotonic()
        stopped = emu.wait_for(lambda e: e["event"] == "status" and e["t_mono"] >= ended
                               and max(map(abs, e["thrust_n"])) < 0.01, 3.0)
        exit_event = emu.stop()
    return {"tmp": tmp, "video": video, "sim": tmp / "sim/recording.mcap", "proc": proc,
            "out": tmp / "hil", "rec": tmp / "hil/recording.mcap", "emu": emu,
            "stopped": stopped, "exit": exit_event}


@pytest.mark.slow
def test_hil_session_against_the_emulator_and_a_recorded_video(session):
    proc = session["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((session["out"] / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["realtime"]["factor"] == 1
    steps = round(SECONDS * 30)
    metrics = summary["metrics"]
    late = {k: summary["realtime"][k] for k in ("lateness_p99_us", "lateness_max_us", "overruns")}
    print(f"\nHIL session: wall {summary['wall_time_s']:.2f} s, real time {late}, "
          f"camera {metrics['camera']}, localizer {metrics['localizer']}, "
          f"bridge {metrics['thrusters']}")

    # The camera device sent every frame of the video, one per step.
    assert metrics["camera"]["frames_sent"] == steps
    # The localizer measured poses on the decoded frames, nearly all valid, and where
    # the simulated run measured the recorded vehicle (depth and tilt are live: a few mm).
    poses = _messages(session["rec"], "/localizer/pose")
    assert len(poses) == steps
    valid = [p for p in poses if p.validity.valid]
    assert len(valid) >= 0.9 * steps, [p.validity.detail for p in poses if not p.validity.valid]
    recorded = {p.header.sim_time_ns: p for p in _messages(session["sim"], "/localizer/pose")
                if p.validity.valid}
    gaps = [math.hypot(p.position_m.x - recorded[t].position_m.x,
                       p.position_m.y - recorded[t].position_m.y)
            for p in valid if (t := p.header.sim_time_ns) in recorded]
    assert len(gaps) >= 0.9 * steps
    print(f"localizer on the video vs in the simulated run: {len(gaps)} frames, "
          f"max {max(gaps) * 1e3:.2f} mm")
    assert max(gaps) < 0.01

    # The bridge's feedback is the emulator's: its telemetry, at its supply voltage.
    bridge = metrics["thrusters"]
    assert bridge["commands_sent"] >= round(SECONDS * 100)  # + the STOPs at start and end
    assert bridge["telemetry_received"] > 0.5 * SECONDS * 100
    assert bridge["frames_dropped"] == 0 and bridge["watchdog_trips"] == 0
    feedback = _messages(session["rec"], "/thrusters/feedback")
    assert len(feedback) > 0.5 * SECONDS * 100
    volts = [t.voltage_v for f in feedback for t in f.thrusters]
    assert all(SUPPLY_V - 1.0 < v <= SUPPLY_V for v in volts), (min(volts), max(volts))
    assert max(abs(t.speed_radps) for f in feedback for t in f.thrusters) > 10
    counters = session["exit"]["counters"]
    # Every SET_SPEEDS of the run was applied, and the STOPs (initialize, terminate).
    assert counters["commands_applied"] + counters["stops"] == bridge["commands_sent"]
    assert counters["commands_applied"] == round(SECONDS * 100) and counters["stops"] >= 2
    assert counters["tx_frames"] >= bridge["telemetry_received"]

    # At the end the bridge stopped the thrusters: set-points zero, rotors spun down.
    events = [e["event"] for e in session["emu"].history]
    assert "stop" in events
    stopped = session["stopped"]
    assert stopped is not None, "the emulator's thrust did not reach zero within 3 s"
    assert all(s == 0 for s in stopped["setpoints_radps"])
    assert all(t == 0 for t in session["exit"]["setpoints_radps"])


def _downstream(recording: Path, *names: str) -> str:
    topics = recording_info(recording).topics
    wanted = [t for n in names for t in component_topics(topics, n)]
    assert wanted
    return digest_of_recording(recording, wanted)


@pytest.mark.slow
def test_hil_session_replayed_offline_reproduces_the_downstream(session):
    """The devices replaced by their recording (``run = "replay"``, two keys per table,
    here as --set): flat out, no emulator, no video; the localizer, filter, controller
    and allocator publish exactly what they published in the session."""
    assert session["proc"].returncode == 0
    rec = session["rec"]
    out = session["tmp"] / "replay"
    proc = moonpool("run", str(HIL / "pool_hil.toml"), "--until", str(SECONDS),
                    "--set", "components.camera.run=replay",
                    "--set", f"components.camera.recording={rec}",
                    "--set", "components.thrusters.run=replay",
                    "--set", f"components.thrusters.recording={rec}",
                    "--set", "run.plots=false", "--out", str(out), "--quiet", timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["realtime"] is None
    assert summary["components"]["camera"]["placement"] == "replay"
    assert summary["components"]["thrusters"]["placement"] == "replay"
    replayed = out / "recording.mcap"
    downstream = ("localizer", "ekf", "controller", "allocator")
    assert _downstream(replayed, *downstream) == _downstream(rec, *downstream)
    # The devices' messages came back byte for byte (the pixels are not re-recorded:
    # the rig leaves camera.image out of the recording; the digest covers them).
    assert _downstream(replayed, "thrusters") == _downstream(rec, "thrusters")
    # And the simulated world they drove too.
    world = ("vehicle", "pressure", "imu", "t1")
    assert _downstream(replayed, *world) == _downstream(rec, *world)
