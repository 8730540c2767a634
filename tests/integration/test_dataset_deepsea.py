"""`moonpool dataset deepsea`: images, truth, poses and camera info from a scene and a
trajectory; bad input exits 2 with the fix."""

from __future__ import annotations

import json

import cv2
import numpy as np

from conftest import ROOT, moonpool


def test_dataset_from_a_line_and_from_a_csv(tmp_path):
    out = tmp_path / "ds"
    proc = moonpool("dataset", "deepsea", str(out), "--frames", "2", "--width", "80",
                    "--height", "60", "--scene", str(ROOT / "scenes/trench_floor/scene.toml"))
    assert proc.returncode == 0, proc.stderr
    info = json.loads((out / "camera_info.json").read_text())
    assert info["width"] == 80 and len(info["K"]) == 9 and len(info["distortion"]) == 5
    poses = [json.loads(x) for x in (out / "poses.jsonl").read_text().splitlines()]
    assert len(poses) == 2
    img = cv2.imread(str(out / poses[0]["image"]), cv2.IMREAD_UNCHANGED)
    assert img.shape == (60, 80, 3)
    truth = np.load(out / poses[0]["truth"])
    assert truth["labels"].shape == (60, 80) and 1 in truth["labels"]
    assert np.nanmedian(truth["z_depth_m"]) > 1.5
    classes = json.loads((out / "classes.json").read_text())
    assert classes["classes"]["3"]["name"] == "starfish"

    csv = tmp_path / "traj.csv"
    csv.write_text("t_s,north_m,east_m,down_m,roll_deg,pitch_deg,yaw_deg\n"
                   "0,6,3,5998.3,0,0,0\n0.5,6.2,3,5998.3,0,0,90\n")
    proc = moonpool("dataset", "deepsea", str(tmp_path / "ds2"), "--trajectory", str(csv),
                    "--width", "64", "--height", "48", "--set", "bit_depth=16",
                    "--scene", str(ROOT / "scenes/trench_floor/scene.toml"))
    assert proc.returncode == 0, proc.stderr
    img = cv2.imread(str(tmp_path / "ds2/images/000001.png"), cv2.IMREAD_UNCHANGED)
    assert img.dtype == np.uint16


def test_bad_input_exits_2(tmp_path):
    proc = moonpool("dataset", "deepsea", str(tmp_path / "x"), "--water", "coastel_5",
                    "--scene", str(ROOT / "scenes/trench_floor/scene.toml"))
    assert proc.returncode == 2
    assert "did you mean 'coastal_5'" in proc.stderr
