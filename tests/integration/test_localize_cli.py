"""`moonpool dataset pool` and `moonpool localize` as a user runs them (real processes):
a small generated dataset, damaged on purpose (a corrupt image, a missing one, bad
manifest lines), must be scored with the damage skipped and reported, never fatal."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from conftest import moonpool


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("pool") / "ds"
    r = moonpool("dataset", "pool", str(out), "--locations", "8", "--images-per-location", "3",
                 "--seed", "5")
    assert r.returncode == 0, r.stderr
    assert "wrote 24 images" in r.stdout
    return out


def test_generated_dataset_layout(dataset):
    assert (dataset / "setup.json").is_file() and (dataset / "generator.json").is_file()
    lines = (dataset / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 24
    rec = json.loads(lines[0])
    assert set(rec) >= {"image", "depth_m", "roll_rad", "pitch_rad", "truth", "location_id"}
    assert set(rec["truth"]) >= {"x_m", "y_m", "yaw_rad"}
    assert len(list(dataset.glob("*.png"))) == 24
    gen = json.loads((dataset / "generator.json").read_text())
    assert gen["config"]["seed"] == 5 and gen["true_setup"]["K"] != json.loads(
        (dataset / "setup.json").read_text())["K"]  # the calibration error is real


def test_localize_skips_and_reports_damage(dataset, tmp_path):
    ds = tmp_path / "damaged"
    shutil.copytree(dataset, ds)
    (ds / "000003.png").write_bytes(b"\x89PNG\r\n\x1a\nthis is not an image")
    (ds / "000007.png").unlink()
    with open(ds / "manifest.jsonl", "a") as f:
        f.write("{not json\n")
        f.write(json.dumps({"image": "000001.png", "roll_rad": 0, "pitch_rad": 0}) + "\n")
    out, table = tmp_path / "out.json", tmp_path / "per_image.csv"
    r = moonpool("localize", str(ds), "--json", str(out), "--csv", str(table))
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    assert "000003.png: not a readable image (corrupt?) (skipped)" in r.stdout
    assert "000007.png: missing (skipped)" in r.stdout
    assert "manifest.jsonl:25:" in r.stdout and "manifest.jsonl:26: missing key 'depth_m'" in r.stdout
    res = json.loads(out.read_text())
    assert set(res) == {"refraction", "pinhole"}
    for m in res.values():
        assert set(m) >= {"horizontal_rmse_m", "p95_m", "n"}
        assert m["n"] == 22
    assert res["refraction"]["horizontal_rmse_m"] < 0.01
    assert res["refraction"]["p95_m"] < 0.02
    assert res["pinhole"]["depth_bias_m"] < -0.05  # PnP through water: far too shallow
    assert res["pinhole"]["horizontal_rmse_m"] > res["refraction"]["horizontal_rmse_m"]
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 22 and rows[0]["refraction_valid"] == "1"
    assert float(rows[0]["refraction_err_m"]) < 0.02


def test_minimal_manifest_and_one_method(dataset, tmp_path):
    """Only the required keys (as an independent dataset might write them)."""
    ds = tmp_path / "minimal"
    shutil.copytree(dataset, ds)
    lines = []
    for text in (ds / "manifest.jsonl").read_text().splitlines():
        rec = json.loads(text)
        t = rec["truth"]
        lines.append(json.dumps({"image": rec["image"], "depth_m": rec["depth_m"],
                                 "roll_rad": rec["roll_rad"], "pitch_rad": rec["pitch_rad"],
                                 "truth": {k: t[k] for k in ("x_m", "y_m", "yaw_rad")}}))
    (ds / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "pin.json"
    r = moonpool("localize", str(ds), "--method", "pinhole", "--json", str(out), "--csv",
                 str(tmp_path / "pin.csv"))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert list(res) == ["pinhole"] and res["pinhole"]["n"] == 24


def test_bad_input_exits_2(dataset, tmp_path):
    ds = tmp_path / "bad"
    shutil.copytree(dataset, ds)
    setup = json.loads((ds / "setup.json").read_text())
    del setup["K"]
    (ds / "setup.json").write_text(json.dumps(setup))
    r = moonpool("localize", str(ds), "--csv", str(tmp_path / "x.csv"))
    assert r.returncode == 2
    assert "K: missing" in r.stderr
    assert moonpool("localize", str(tmp_path / "nowhere")).returncode == 2
    r = moonpool("dataset", "pool", str(dataset), "--locations", "1")
    assert r.returncode == 2 and "not empty" in r.stderr
    r = moonpool("dataset", "pool", str(tmp_path / "n"), "--set", "bogus=1")
    assert r.returncode == 2 and "unknown dataset option 'bogus'" in r.stderr


SOURCE = '''
import math
from moonpool.components import Component, Port
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.v1 import vehicle_pb2


class Hover(Component):
    """A vehicle drifting slowly across the pool (closed form)."""

    outputs = (Port("state", vehicle_pb2.VehicleState),)

    def step(self, t_ns, dt_ns, inputs):
        t = t_ns * 1e-9
        s = vehicle_pb2.VehicleState(header=self.header(t_ns, "ned"))
        s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = 0.2 * t - 0.3, 0.1, 0.9
        roll, pitch, yaw = 0.02, -0.01, 0.5 + 0.2 * t
        w, x, y, z = quat_from_euler(roll, pitch, yaw)
        s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = w, x, y, z
        s.roll_rad, s.pitch_rad, s.yaw_rad = roll, pitch, yaw
        s.linear_velocity_body_mps.x = 0.2
        s.linear_acceleration_body_mps2.SetInParent()  # at rest: zero, but present
        s.water_density_kgpm3 = 997.0
        return {"state": s}
'''

RIG = '''
name = "pool_camera"
[run]
until = "0.5s"
seed = 4
plots = false
record = false
algorithm = "gauss-seidel"
order = ["source", "pressure", "imu", "camera", "localizer"]

[components.source]
entry = "hover.py:Hover"
rate_hz = 30
[components.pressure]
entry = "sensors.pressure"
rate_hz = 30
[components.pressure.parameters]
rho_surface = 997.0
[components.imu]
entry = "sensors.imu"
rate_hz = 30
[components.camera]
entry = "moonpool.components.localization.camera:OverheadCamera"
rate_hz = 30
[components.camera.parameters]
exposure_s = 0.004
[components.localizer]
entry = "moonpool.components.localization.localizer:Localizer"
rate_hz = 30

[[connections]]
from = "source.state"
to = "pressure.state"
[[connections]]
from = "source.state"
to = "imu.state"
[[connections]]
from = "source.state"
to = "camera.state"
[[connections]]
from = "source.state"
to = "localizer.truth"
[[connections]]
from = "camera.image"
to = "localizer.image"
[[connections]]
from = "pressure.pressure"
to = "localizer.pressure"
[[connections]]
from = "imu.imu"
to = "localizer.imu"
'''


def test_camera_and_localizer_in_a_rig(tmp_path):
    """The two components under the orchestrator, each in its own process: images travel
    as raw frames between processes."""
    (tmp_path / "hover.py").write_text(SOURCE)
    (tmp_path / "rig.toml").write_text(RIG)
    out = tmp_path / "run"
    r = moonpool("run", str(tmp_path / "rig.toml"), "--out", str(out), "--quiet", "--mode",
                 "process", cwd=tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    summary = json.loads((out / "summary.json").read_text())
    m = summary["metrics"]["localizer"]
    assert m["images"] == 15 and m["valid"] == 15, m
    # the IMU's default noise and the pressure sensor's 50 Pa make this a few mm
    assert m["horizontal_rmse_m"] < 0.01, m


def test_generate_with_a_custom_setup(tmp_path):
    """Another camera (1920x1080, 3 m up, turned 30 deg) and another layout (ids 5 and 42,
    10 cm tags turned by +-45 deg): the generator renders it, the localizer reads it."""
    import math

    from moonpool.components.localization.pool_setup import (TagMount, example_setup,
                                                             nadir_rotation, write_setup)

    s = example_setup((1920, 1080))
    R = nadir_rotation(math.radians(30), 0.02, -0.01)
    s = s.__class__(K=(1400.0, 1400.0, 960.0, 540.0), dist=(-0.02, 0.004, 0.0, 0.0, 0.0),
                    R_wc_rows=tuple(map(tuple, R)), t_wc=(0.1, 0.0, -3.0), tag_size_m=0.10,
                    tags=(TagMount(5, (0.08, 0.05, -0.12), math.pi / 4),
                          TagMount(42, (-0.08, -0.05, -0.12), -math.pi / 4)),
                    image_size=(1920, 1080))
    write_setup(s, tmp_path / "true.json")
    ds = tmp_path / "custom"
    r = moonpool("dataset", "pool", str(ds), "--locations", "4", "--images-per-location", "2",
                 "--setup", str(tmp_path / "true.json"), "--set", "pool_x_m=[-1.0, 1.0]",
                 "--set", "pool_y_m=[-0.8, 0.8]")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "c.json"
    r = moonpool("localize", str(ds), "--json", str(out), "--csv", str(tmp_path / "c.csv"))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["refraction"]["n"] == 8 and res["refraction"]["horizontal_rmse_m"] < 0.01
