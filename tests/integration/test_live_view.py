"""The live view (issue 22): `moonpool run RIG --live PORT` serves the run to Foxglove
over WebSocket. A headless client (tests/support/live_client.py: the `websockets`
package, the SDK's ``foxglove.sdk.v1`` subprotocol) connects, receives the advertised
channels, subscribes to all of them and decodes each message with the schema its
channel advertised; the content is checked against the run's own recording:

- every output of the rig, the 3-D scene (``/live/scene``, ``foxglove.SceneUpdate``)
  and the transforms (``/live/transforms``, ``foxglove.FrameTransform``): the
  vehicle's transform equals the recorded VehicleState at the same log time;
- camera images (``{topic}/foxglove``, ``foxglove.RawImage``) of the pool camera, the
  deep-sea camera and the imaging sonar: their pixels equal the recording's
  attachment at the same log time;
- the scene: the pool's walls where scenes/pool/scene.toml puts them, the tags where
  the camera's setup puts them (on the vehicle's frame), the hadal seabed on the
  scene's own seabed depths;
- in a real-time HIL session: rigs/hil/pool_mcu.toml, its thrusters an MCU bridge
  talking to the MCU emulator over a pseudo-terminal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import RIGS, ROOT, moonpool

from moonpool.orchestrator.recording import decode_recorded, read_recording

pytest.importorskip("websockets")
pytest.importorskip("foxglove")
from live_client import free_port, watch  # noqa: E402 - after the skips

SCENE, TRANSFORMS = "/live/scene", "/live/transforms"


def _start(rig: Path, port: int, out: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--live", str(port),
         "--out", str(out), "--quiet", "--set", "run.plots=false", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _recorded(out: Path) -> dict[tuple[str, int], list]:
    """(topic, log time) -> the recorded messages (attachments joined) of a run, in
    order (an Initialize output and the first step's may share a log time)."""
    out_: dict[tuple[str, int], list] = {}
    for m in read_recording(out / "recording.mcap"):
        out_.setdefault((m.topic, m.log_time_ns), []).append(m)
    return out_


def _transform_is_the_state(tf, state) -> None:
    p, q = state.position_ned_m, state.orientation
    assert (tf.parent_frame_id, tf.translation.x, tf.translation.y, tf.translation.z) == \
        ("ned", p.x, p.y, p.z)
    expected = (q.x, q.y, q.z, q.w) if (q.w or q.x or q.y or q.z) else (0.0, 0.0, 0.0, 1.0)
    assert (tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w) == expected


def _pose_checked(seen, recorded, topic="/vehicle/state") -> int:
    """Every kept transform of ``topic``'s frame equals the recorded state at its time."""
    frame = topic.lstrip("/")
    checked = 0
    for t, tf in seen.messages[TRANSFORMS]:
        if tf.child_frame_id == frame:
            stamp = tf.timestamp.seconds * 10**9 + tf.timestamp.nanos
            states = [s for s in map(decode_recorded, recorded[(topic, t)])
                      if s.header.sim_time_ns == stamp]
            assert len(states) == 1, (t, stamp)
            _transform_is_the_state(tf, states[0])
            checked += 1
    return checked


def _image_checked(seen, recorded, topic: str) -> tuple[int, int]:
    """The first streamed frame of ``topic`` equals the recording's at its log time."""
    t, img = seen.messages[topic + "/foxglove"][0]
    [rec] = recorded[(topic, t)]
    header = decode_recorded(rec)
    assert (img.width, img.height, img.encoding) == (header.width, header.height,
                                                     header.encoding or "mono8")
    assert img.data == rec.attachment and len(img.data) == img.step * img.height
    return img.width, img.height


def _entities(seen) -> dict[str, object]:
    """The last scene update's entities by id (updates replace entities by id)."""
    out = {}
    for _, update in seen.messages[SCENE]:
        out.update({e.id: e for e in update.entities})
    return out


def _points(entity) -> np.ndarray:
    return np.array([[p.x, p.y, p.z] for tri in entity.triangles for p in tri.points])


def test_live_view_streams_every_topic_the_scene_and_the_poses(tmp_path):
    port = free_port()
    proc = _start(RIGS / "quickstart.toml", port, tmp_path / "o", "--until", "20",
                  "--realtime", "1")
    topics = ["/pid/setpoint", "/pid/wrench", "/sensor/pressure", "/vehicle/state"]
    try:
        seen = watch(port, 60, keep=lambda t: 20 if t == TRANSFORMS else 3,
                     done=lambda s: all(s.counts.get(t) for t in [*topics, SCENE])
                     and s.counts.get(TRANSFORMS, 0) >= 10)
    finally:
        proc.terminate()  # SIGTERM: the run stops cleanly and closes its recording
        _, err = proc.communicate(timeout=60)
    assert sorted(seen.channels) == sorted([*topics, SCENE, TRANSFORMS]), err
    assert {t: seen.channels[t]["schemaName"] for t in (SCENE, TRANSFORMS)} == {
        SCENE: "foxglove.SceneUpdate", TRANSFORMS: "foxglove.FrameTransform"}
    assert all(ch["encoding"] == "protobuf" for ch in seen.channels.values())
    assert sorted(seen.messages) == sorted(seen.channels), (seen.counts, err)  # one of each decoded
    assert seen.messages["/vehicle/state"][0][1].header.source == "vehicle"
    assert seen.messages["/sensor/pressure"][0][1].header.source == "sensor"
    assert "live view: ws://127.0.0.1:" in err
    # The root transform, then the vehicle's pose at each VehicleState.
    roots = [tf for _, tf in seen.messages[TRANSFORMS] if tf.child_frame_id == "ned"]
    assert roots and roots[0].parent_frame_id == "enu"
    q = roots[0].rotation  # NED under ENU: pi about (1, 1, 0)/sqrt(2)
    assert np.allclose([q.x, q.y, q.z, q.w], [0.5**0.5, 0.5**0.5, 0, 0])
    assert _pose_checked(seen, _recorded(tmp_path / "o")) >= 5
    # The scene holds the axes of the vehicle's frame (the quickstart has no scene file).
    axes = _entities(seen)["axes/vehicle/state"]
    assert (axes.frame_id, axes.frame_locked, len(axes.arrows)) == ("vehicle/state", True, 3)


def test_the_live_view_does_not_change_the_stream(tmp_path):
    digests = []
    for name, extra in (("plain", []), ("live", ["--live", str(free_port())])):
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "2", "--quiet",
                        "--set", "run.plots=false", "--out", str(tmp_path / name), *extra)
        assert proc.returncode == 0, proc.stderr
        digests.append(json.loads((tmp_path / name / "summary.json").read_text())["digest"])
    assert digests[0] == digests[1]


DEEPSEA_RIG = """
name = "live_deepsea"
[run]
until = "3s"
algorithm = "gauss-seidel"
order = ["thrust", "camera", "sonar", "vehicle"]
[components.thrust]
entry = "sources.constant_wrench"
rate_hz = 10
[components.thrust.parameters]
schedule = [[0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
[components.vehicle]
entry = "fmu"
rate_hz = 10
profile = "{root}/fmus/hydrodynamics/profiles/bluerov2_heavy.toml"
[components.vehicle.parameters]
fmu = "{root}/fmus/build/hydrodynamics-fmi3.fmu"
start_values = {{ volume = 0.0135, init_n = 5.5, init_e = 3.0, init_d = 5998.37 }}
[components.vehicle.parameters.inputs.wrench]
type = "moonpool.v1.Wrench"
fields = {{ "force_n.x" = "tau_X", "force_n.y" = "tau_Y", "force_n.z" = "tau_Z", "torque_nm.x" = "tau_K", "torque_nm.y" = "tau_M", "torque_nm.z" = "tau_N" }}
[components.vehicle.parameters.outputs.state]
type = "moonpool.v1.VehicleState"
fields = {{ "position_ned_m.x" = "n", "position_ned_m.y" = "e", "position_ned_m.z" = "d", "orientation.w" = "qw", "orientation.x" = "qx", "orientation.y" = "qy", "orientation.z" = "qz" }}
[components.camera]
entry = "vision.camera"
rate_hz = 5
[components.camera.parameters]
scene = "{root}/scenes/trench_floor/scene.toml"
image_width = 160
image_height = 120
mount_xyz_m = [0.5, 0.0, 0.2]
[components.sonar]
entry = "sensors.imaging_sonar"
rate_hz = 5
[components.sonar.parameters]
scene = "{root}/scenes/trench_floor/scene.toml"
beam_count = 32
range_bins = 64
elevation_rays = 8
range_max_m = 10.0
mount_rpy_rad = [0.0, -0.6, 0.0]
[[connections]]
from = "thrust.wrench"
to = "vehicle.wrench"
[[connections]]
from = "vehicle.state"
to = "camera.state"
[[connections]]
from = "vehicle.state"
to = "sonar.state"
"""


def test_deep_sea_camera_sonar_images_and_the_seabed(tmp_path, fmus):
    """The deep-sea camera's frames, the imaging sonar's image and the hadal seabed."""
    rig = tmp_path / "deepsea.toml"
    rig.write_text(DEEPSEA_RIG.format(root=ROOT.as_posix()))
    port = free_port()
    proc = _start(rig, port, tmp_path / "o", "--realtime", "1")
    images = ["/camera/image/foxglove", "/camera/depth/foxglove", "/sonar/image/foxglove"]
    try:
        seen = watch(port, 90, until=[*images, SCENE, TRANSFORMS], keep=lambda t: (
            1 if t.endswith("/foxglove") else 10 if t in (SCENE, TRANSFORMS) else 0),
            done=lambda s: all(s.counts.get(t) for t in images) and any(
                e.id == "trench_floor/seabed" for _, u in s.messages.get(SCENE, [])
                for e in u.entities))
    finally:
        out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    assert {seen.channels[t]["schemaName"] for t in images} == {"foxglove.RawImage"}
    recorded = _recorded(tmp_path / "o")
    assert _image_checked(seen, recorded, "/camera/image") == (160, 120)
    assert _image_checked(seen, recorded, "/camera/depth") == (160, 120)  # mono16 truth
    assert _image_checked(seen, recorded, "/sonar/image") == (32, 64)  # beams x bins
    # The seabed lies on the scene's own seabed (every second grid vertex of 0.5 m).
    from moonpool.components.world.scene import Scene

    entities = _entities(seen)
    seabed = _points(entities["trench_floor/seabed"])
    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    assert len(seabed) == 201 * 201
    assert np.allclose(seabed[:, 2], scene.seabed_depth(seabed[:, 0], seabed[:, 1]), atol=1e-9)
    assert entities["trench_floor/starfish"].frame_id == "ned"


def test_a_real_time_hil_session_is_live(tmp_path, fmus):
    """rigs/hil/pool_mcu.toml in real time, its thrusters an MCU bridge on a pty against
    the MCU emulator, watched live: the pool, the tags on the vehicle, the camera's
    frames and the vehicle's pose, each checked against the session's recording."""
    from moonpool.components.bridges.mcu_emulator import spawn
    from moonpool.components.localization.pool_setup import example_setup

    port = free_port()
    link = tmp_path / "mcu"
    with spawn("--link", str(link), watchdog=0.5, status_interval=0.02) as emu:
        proc = _start(RIGS / "hil/pool_mcu.toml", port, tmp_path / "o", "--realtime",
                      "--until", "3", "--set", f"components.thrusters.parameters.port={link}",
                      "--set", "run.record_exclude=[]",
                      # the devices are checked, not this shared machine's punctuality
                      "--set", "run.realtime_strict=false")
        try:
            seen = watch(port, 90, until=["/camera/image/foxglove", "/thrusters/feedback"],
                         keep=lambda t: 1 if t == "/camera/image/foxglove" else 40,
                         done=lambda s: s.counts.get("/camera/image/foxglove", 0) >= 1
                         and s.counts.get("/thrusters/feedback", 0) >= 1 and any(
                             tf.child_frame_id == "vehicle/state"
                             for _, tf in s.messages.get(TRANSFORMS, []))
                         and len(s.messages.get(SCENE, [])) >= 3)
        finally:
            _, err = proc.communicate(timeout=120)
        emu.stop()
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads((tmp_path / "o/summary.json").read_text())
    assert summary["realtime"]["factor"] == 1 and summary["metrics"]["thrusters"][
        "telemetry_received"] > 0
    recorded = _recorded(tmp_path / "o")
    assert _image_checked(seen, recorded, "/camera/image") == (1280, 720)
    assert _pose_checked(seen, recorded) >= 1
    # The bridge's feedback (the emulator's telemetry) streamed as it came.
    assert seen.messages["/thrusters/feedback"][0][1].header.source == "thrusters"
    entities = _entities(seen)
    # The pool's walls where the scene file puts them: 4.2 m x 3.2 m outside, from 0.3 m
    # above the water to the floor at 2 m.
    walls = _points(entities["pool/wall"])
    assert np.allclose(walls.min(0), [-2.1, -1.6, -0.3]) and np.allclose(walls.max(0),
                                                                        [2.1, 1.6, 2.0])
    assert entities["pool/seabed"].frame_id == "ned"
    # The tags ride on the vehicle: their black squares where the setup puts them.
    setup = example_setup()
    for tag in setup.tags:
        cells = entities[f"camera/tag {tag.id} cells"]
        assert (cells.frame_id, cells.frame_locked) == ("vehicle/state", True)
        corners = setup.corners_body(tag.id)
        pts = _points(cells)
        assert np.allclose(pts[:, :2].min(0), corners[:, :2].min(0))
        assert np.allclose(pts[:, :2].max(0), corners[:, :2].max(0))
        assert np.allclose(pts[:, 2], corners[0, 2] - 0.001)
    print(f"\nHIL live: realtime {summary['realtime']['lateness_p99_us']} us p99, "
          f"{seen.counts}")


def test_a_taken_port_is_bad_input_and_touches_nothing(tmp_path):
    """--live on a port another program holds: exit 2 with the fix, no traceback, and
    an earlier run in --out survives even with --force (nothing was started)."""
    import socket

    out = tmp_path / "o"
    first = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1", "--quiet",
                     "--set", "run.plots=false", "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = (out / "summary.json").read_bytes()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1", "--quiet",
                        "--out", str(out), "--force", "--live", str(held.getsockname()[1]))
    assert proc.returncode == 2, proc.stderr
    assert "cannot serve on 127.0.0.1" in proc.stderr and "--live 8766" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (out / "summary.json").read_bytes() == before
