"""`moonpool localize` on a dataset it did not render: images ray traced by
tests/support/independent_render.py, written from docs/localization.md alone (no code
shared with components/localization), so a convention that the localizer and its own
renderer got wrong together would show here.

The rig differs from the project's example on purpose: 1280 x 960 px, f ~ 900 px, the
camera turned 28 deg about the vertical and tilted ~3 deg, stronger distortion (with
tangential and k3 terms), a world origin 0.35 m above the water (water_z = 0.35),
n_air = 1.000277, three 12 cm tags (one turned 90 deg, one turned -0.6 rad and raised
1.5 cm), the camera keys in a "camera" group. Images: grey, RGB and 16-bit PNG and
colour JPEG, tiled floor with grout and a lane stripe, a stray tag of another id on the
floor, vignetting, blur 0.4-0.9 px, read + shot noise. The calibration and the
pressure/IMU readings are exact, so what is left is the image (corner) noise.
"""

from __future__ import annotations

import csv
import json
import math
import shutil

import numpy as np
import pytest
from conftest import moonpool
from independent_render import DatasetSpec, default_scene, write_dataset

pytestmark = pytest.mark.slow

IMAGES = 16


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("independent") / "ds"
    info = write_dataset(out, default_scene(), DatasetSpec(images=IMAGES, seed=7))
    assert info["images"] == IMAGES and all(n == IMAGES // 4 for n in info["formats"].values())
    return out, info


@pytest.fixture(scope="module")
def results(dataset, tmp_path_factory):
    return localize(dataset[0], tmp_path_factory.mktemp("results"), "independent")


def localize(folder, tmp_path, name):
    js, table = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
    r = moonpool("localize", str(folder), "--json", str(js), "--csv", str(table))
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    return json.loads(js.read_text()), list(csv.DictReader(table.open()))


def test_localizes_an_independently_rendered_dataset(dataset, results):
    folder, _ = dataset
    res, rows = results
    ref, pnp = res["refraction"], res["pinhole"]

    # Detection: every layout tag is >= 33 px across (12 cm at <= 3.3 m apparent range,
    # f ~ 900 px: >= 4 px per cell) and >= 12 px inside the image, so every image must
    # give a valid measurement from all three tags (the stray floor tag is ignored).
    assert ref["n"] == IMAGES and ref["refused"] == {}
    for row in rows:
        seen = set(row["tags_seen"].split())
        assert {"3", "17", "250"} <= seen, row
        assert row["refraction_valid"] == "1"

    # Accuracy. With exact calibration and sensors only the corner noise is left:
    # ~0.1 px per corner (noise 1.8 DN on ~150 DN edges, blur <= 0.9 px), one pixel is
    # ~3.7 mm on the tag plane ((h_air + h_water n_a/n_w) / f = (2.3 + 0.97) / 896), and
    # 12 corners average it: ~0.1 mm per axis, ~0.15 mm horizontal. The bounds allow
    # 3x that; a convention slip costs more: a quarter-pixel shift of the pixel grid
    # gives 0.8 mm RMSE, half a pixel 2.3 mm, p1/p2 swapped 1.8 mm, a tag turned by 180
    # deg or a sign of yaw_b_rad flipped centimetres (measured with this renderer).
    assert ref["horizontal_rmse_m"] < 0.0005
    assert ref["p95_m"] < 0.0010
    # yaw: 0.37 mm per corner over corners ~0.15 m from the centre, 12 corners: ~0.7 mrad
    assert ref["yaw_rmse_rad"] < 0.002
    # z is water_z + the pressure depth, exactly (water_z = 0.35 here, not 0)
    assert abs(ref["depth_bias_m"]) < 1e-6

    # The images do carry the refraction: pinhole PnP, which ignores the water, puts the
    # tags at the paraxial apparent depth, too shallow by ~(1 - n_a/n_w) x their depth
    # below the surface (more off axis), and misses horizontally by millimetres.
    recs = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
    tag_depth = np.mean([r["truth"]["depth_m"] - 0.125 for r in recs])  # tags ~0.125 m up
    paraxial = -tag_depth * (1 - 1.000277 / 1.3335)
    print(f"pinhole depth bias {pnp['depth_bias_m']:.4f} m, paraxial {paraxial:.4f} m")
    assert pnp["n"] == IMAGES
    assert 0.8 * paraxial > pnp["depth_bias_m"] > 1.6 * paraxial, (pnp["depth_bias_m"], paraxial)
    assert pnp["horizontal_rmse_m"] > 5 * ref["horizontal_rmse_m"]


def test_other_documented_spellings_of_setup_json_give_the_same_poses(dataset, results,
                                                                      tmp_path):
    # setup.json allows the camera keys at the top level, K as a 3 x 3 matrix, R_wc as 9
    # numbers (rounded: replaced by the nearest rotation) and an 8-term OpenCV distortion
    # whose extra terms are 0. The same images must give the same poses (to a few um:
    # R_wc rounded to 1e-7 moves a point 2.3 m away by < 1 um).
    folder, _ = dataset
    alt = tmp_path / "alt"
    shutil.copytree(folder, alt)
    s = json.loads((folder / "setup.json").read_text())
    cam = s.pop("camera")
    fx, fy, cx, cy = cam["K"]
    s.update({
        "K": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]],
        "dist": cam["dist"] + [0.0, 0.0, 0.0],
        "R_wc": [round(v, 7) for row in cam["R_wc"] for v in row],
        "t_wc": cam["t_wc"], "image_size": cam["image_size"],
    })
    (alt / "setup.json").write_text(json.dumps(s))
    _, rows_a = results
    _, rows_b = localize(alt, tmp_path, "flat")
    assert len(rows_a) == len(rows_b) == IMAGES
    for a, b in zip(rows_a, rows_b):
        for k in ("refraction_x_m", "refraction_y_m"):
            assert abs(float(a[k]) - float(b[k])) < 5e-6, (a["image"], k)
        assert abs(math.remainder(float(a["refraction_yaw_rad"]) - float(b["refraction_yaw_rad"]),
                                  2 * math.pi)) < 1e-5
