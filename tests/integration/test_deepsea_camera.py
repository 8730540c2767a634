"""vision.camera in a real run: image, camera info and per-pixel truth in the recording
(record_exclude skips one), and bad input refused by `moonpool check` with the fix."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mcap.reader import make_reader

from conftest import RIGS, moonpool
from moonpool.orchestrator.recording import read_recording
from moonpool.v1 import vision_pb2

RIG = str(RIGS / "deepsea_camera.toml")
SMALL = ["--set", "components.camera.parameters.image_width=160",
         "--set", "components.camera.parameters.image_height=120"]


def test_run_records_image_truth_and_camera_info(tmp_path):
    out = tmp_path / "run"
    proc = moonpool("run", RIG, "--until", "0.3", "--out", str(out), "--quiet", *SMALL,
                    "--set", 'run.record_exclude=["camera.normals"]', "--set", "plots=[]",
                    "--set", "run.foxglove_images=true")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    msgs = list(read_recording(out / "recording.mcap"))
    topics = {m.topic for m in msgs}
    for port in ("image", "camera_info", "range", "depth", "labels", "instances"):
        assert f"/camera/{port}" in topics
    assert "/camera/normals" not in topics
    by = {m.topic: m for m in msgs}  # the last of each
    img = vision_pb2.ImageHeader.FromString(by["/camera/image"].payload)
    assert (img.width, img.height, img.encoding) == (160, 120, "rgb8")
    pix = np.frombuffer(by["/camera/image"].attachment, np.uint8).reshape(120, 160, 3)
    assert 5 < pix.mean() < 200  # lit, not saturated
    labels = np.frombuffer(by["/camera/labels"].attachment, "<u2").reshape(120, 160)
    assert {1, 3} <= set(np.unique(labels))  # sediment and the starfish in view
    depth = np.frombuffer(by["/camera/depth"].attachment, "<u2").reshape(120, 160)
    assert 1700 < np.median(depth) < 2300  # ~2 m altitude, mm
    info = vision_pb2.CameraInfo.FromString(by["/camera/camera_info"].payload)
    assert len(info.k) == 9 and len(info.d) == 5 and info.distortion_model == "plumb_bob"
    assert info.position_ned_m.z > 5998
    dets = [vision_pb2.TargetDetection.FromString(m.payload) for m in msgs
            if m.topic == "/detector/detection"]
    assert dets and all(d.validity.valid for d in dets)  # the starfish 2 m below
    d = dets[-1]
    assert d.has_position and abs(d.position_ned_m.x - 6.0) < 0.15 and abs(d.position_ned_m.y - 3.0) < 0.15
    with open(out / "recording.mcap", "rb") as f:
        channels = {c.topic for c in make_reader(f).get_summary().channels.values()}
    for port in ("image", "range", "depth", "labels", "instances"):
        assert f"/camera/{port}/foxglove" in channels  # foxglove.RawImage views


@pytest.mark.parametrize("setting, expected", [
    ('components.camera.parameters.water_type="jerlov_Ib"', "did you mean"),
    ('components.camera.parameters.scene=""', "the camera has no scene"),
    ('components.camera.parameters.lights={a={direction_body=[0.0, 0.0, 0.0]}}',
     "points nowhere"),
    ('components.camera.parameters.lights={a={direction_body=[0.0, 0.0, -1.0], '
     'beam_angle_deg=60.0}}', "points away from everything the camera sees"),
])
def test_bad_input_is_refused_by_check(setting, expected):
    proc = moonpool("check", RIG, "--set", setting)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    assert expected in text
    assert "components.camera.parameters" in text


def test_the_shipped_rig_passes_check():
    proc = moonpool("check", RIG)
    assert proc.returncode == 0, proc.stdout + proc.stderr
