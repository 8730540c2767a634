"""`moonpool calibrate intrinsics` and `moonpool calibrate water` as a user runs them
(real processes): checkerboard photos of a known camera -> K and dist; the vehicle at
known depths -> R_wc and the camera height through refraction; then a dataset rendered
by the true camera, localized with the calibrated setup, must score about as well as
with the true setup. Bad input exits 2 with an error naming the file and the fix."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil

import cv2
import numpy as np
import pytest
from conftest import ROOT, moonpool
from moonpool.components.localization.pool_setup import example_setup, load_setup, setup_to_dict

_spec = importlib.util.spec_from_file_location("calibration_synth",
                                               ROOT / "tests" / "unit" / "test_calibration.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)  # the board and tag image synthesis of the unit tests

TRUE = example_setup()


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("calibrate")
    (root / "true.json").write_text(json.dumps(setup_to_dict(TRUE)))
    # 1. Intrinsics: 10 in-air photos of a 10 x 7 checkerboard (40 mm) by the true camera.
    synth.write_board_images(root / "board", "checkerboard", 10, 7, 0.04, TRUE.camera_matrix,
                             TRUE.dist_coeffs, TRUE.image_size, 10, seed=11, fill=0.5, S=4)
    setup = root / "setup.json"
    r1 = moonpool("calibrate", "intrinsics", str(root / "board"), "--board", "checkerboard",
                  "--cols", "10", "--rows", "7", "--square-m", "0.04", "--out", str(setup))
    assert r1.returncode == 0, r1.stderr
    # 2. The user adds the vehicle's tag layout.
    d = json.loads(setup.read_text())
    d["tag_size_m"] = TRUE.tag_size_m
    d["tags"] = setup_to_dict(TRUE)["tags"]
    setup.write_text(json.dumps(d))
    # 3. The vehicle at three depths over the pool, three places surveyed (x, y, yaw)
    #    to tie the camera to the pool's frame.
    synth.render_tag_folder(root / "tags", TRUE, synth.places(18, 21), known=3)
    r2 = moonpool("calibrate", "water", str(setup), str(root / "tags"), "--json",
                  str(root / "water.json"))
    assert r2.returncode == 0, r2.stderr
    return root, r1, r2


def test_intrinsics_summary_and_accuracy(calibrated):
    root, r1, _ = calibrated
    print(r1.stdout)
    assert "RMS reprojection error" in r1.stdout and "10 given, 10 used, 0 rejected" in r1.stdout
    assert "wrote " in r1.stdout and "not complete yet" in r1.stdout
    s = load_setup(root / "setup.json")
    fx, fy, cx, cy = s.K
    tfx, tfy, tcx, tcy = TRUE.K
    assert abs(fx / tfx - 1) < 2e-3 and abs(fy / tfy - 1) < 2e-3
    assert abs(cx - tcx) < 1.5 and abs(cy - tcy) < 1.5
    assert s.image_size == TRUE.image_size


def test_water_summary_and_accuracy(calibrated):
    root, _, r2 = calibrated
    print(r2.stdout)
    assert "18 images, 18 used, 0 rejected" in r2.stdout
    assert "camera height above the water" in r2.stdout and " mm (fit" in r2.stdout
    rep = json.loads((root / "water.json").read_text())
    s = load_setup(root / "setup.json")
    height = s.water_z - s.t_wc[2]
    assert abs(height - 2.5) < 0.006  # through the calibrated (not true) intrinsics
    assert rep["height_m"] == pytest.approx(height)
    dR = np.degrees(np.linalg.norm(cv2.Rodrigues(TRUE.R_wc.T @ s.R_wc)[0]))
    print(f"height error {(height - 2.5) * 1000:+.2f} mm, rotation error {dR:.4f} deg, camera "
          f"x, y error {(s.camera_center[:2] - TRUE.camera_center[:2]) * 1000} mm")
    assert dR < 0.1
    assert np.all(np.abs(s.camera_center[:2] - TRUE.camera_center[:2]) < 0.01)
    assert s.tags == TRUE.tags and rep["free"]["heading"] and rep["free"]["x"]


def test_round_trip_localization(calibrated, tmp_path):
    """A dataset rendered by the true camera, localized with the true setup and with the
    calibrated one: about the same accuracy."""
    root, _, _ = calibrated
    ds = tmp_path / "ds"
    r = moonpool("dataset", "pool", str(ds), "--locations", "10", "--images-per-location", "2",
                 "--seed", "4", "--setup", str(root / "true.json"))
    assert r.returncode == 0, r.stderr
    out = {}
    for name, src in (("true", root / "true.json"), ("calibrated", root / "setup.json")):
        shutil.copy(src, ds / "setup.json")
        js = tmp_path / f"{name}.json"
        r = moonpool("localize", str(ds), "--method", "refraction", "--json", str(js), "--csv",
                     str(tmp_path / f"{name}.csv"))
        assert r.returncode == 0, r.stderr
        out[name] = json.loads(js.read_text())["refraction"]
    print(out)
    t, c = out["true"], out["calibrated"]
    assert c["n"] == t["n"] == 20
    t_rmse = t["horizontal_rmse_m"]
    assert c["horizontal_rmse_m"] < max(2.0 * t_rmse, t_rmse + 0.003)
    assert c["horizontal_rmse_m"] < 0.006
    assert c["yaw_rmse_rad"] < t["yaw_rmse_rad"] + math.radians(0.3)


def test_bad_input_exits_2(tmp_path):
    imgs = []
    for k in range(3):
        p = tmp_path / f"blank{k}.png"
        cv2.imwrite(str(p), np.full((90, 120), 100 + 20 * k, np.uint8))
        imgs.append(str(p))
    base = ["calibrate", "intrinsics", "--board", "checkerboard", "--cols", "9", "--rows", "6",
            "--square-m", "0.025", "--out", str(tmp_path / "s.json")]
    r = moonpool(*base, *imgs)
    assert r.returncode == 2
    assert "no checkerboard 9 x 6 squares" in r.stderr and "blank0.png" in r.stderr
    assert "fix:" in r.stderr
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff not a jpeg")
    r = moonpool(*base, *imgs, str(bad))
    assert r.returncode == 2 and "bad.jpg: not a readable image" in r.stderr, r.stderr
    big = tmp_path / "big.png"
    cv2.imwrite(str(big), np.zeros((100, 130), np.uint8))
    r = moonpool(*base, *imgs, str(big))
    assert r.returncode == 2 and "big.png: the image is 130x100 px but" in r.stderr, r.stderr
    r = moonpool(*base, str(tmp_path / "nope.png"))
    assert r.returncode == 2 and "nope.png: no such file" in r.stderr
    # Too few images: two good photos.
    paths, _ = synth.write_board_images(tmp_path / "few", "checkerboard", 9, 6, 0.025,
                                        synth.K_TRUE, synth.D_TRUE, synth.SIZE, 2, seed=3)
    r = moonpool(*base, *map(str, paths))
    assert r.returncode == 2 and "found in only 2 of 2 images; at least 4" in r.stderr, r.stderr
    assert not (tmp_path / "s.json").exists()
    # Water: no manifest; a setup without intrinsics.
    (tmp_path / "setup.json").write_text(json.dumps(setup_to_dict(TRUE)))
    r = moonpool("calibrate", "water", str(tmp_path / "setup.json"), str(tmp_path))
    assert r.returncode == 2 and "manifest.jsonl" in r.stderr and "fix:" in r.stderr
    (tmp_path / "manifest.jsonl").write_text('{"image": "blank0.png", "depth_m": 1}\n')
    (tmp_path / "k.json").write_text(json.dumps({"tag_size_m": 0.1}))
    r = moonpool("calibrate", "water", str(tmp_path / "k.json"), str(tmp_path))
    assert r.returncode == 2 and "K: missing" in r.stderr and "calibrate intrinsics" in r.stderr
    r = moonpool("calibrate", "intrinsics", *imgs)  # no --board
    assert r.returncode == 2
