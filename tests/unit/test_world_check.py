"""Bad scenes through `moonpool check` (docs/world.md, "Checked before the run"): a
missing scene file, an unreadable mesh, a height map without its resolution and a
sensor that needs a scene but has none are refused by the rig check (the sensors'
Parameters validate the scene), each problem named with its file and fix, all at
once, without starting anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from moonpool.components.sdk.errors import ParameterError, RigValidationError
from moonpool.components.sensors.altimeter import AltimeterSensor
from moonpool.orchestrator.rigfile import load_and_check

HEIGHTMAP_SCENE = """
[origin]
latitude_deg = 10.0
longitude_deg = 20.0
[classes.mud]
id = 1
backscatter_db = -30.0
reflectance = [0.4, 0.4, 0.4]
[seabed]
kind = "heightmap"
class = "mud"
file = "floor.npy"
origin_ned_m = [0.0, 0.0, 50.0]
"""

MESH_SCENE = """
[origin]
latitude_deg = 10.0
longitude_deg = 20.0
[classes.thing]
id = 1
backscatter_db = -10.0
reflectance = [0.4, 0.4, 0.4]
[[objects]]
name = "junk"
class = "thing"
mesh = "broken.stl"
position_ned_m = [0.0, 0.0, 10.0]
"""

RIG = """
[run]
until = "1s"

[components.state]
entry = "sources.constant_wrench"
rate_hz = 10

[components.alt]
entry = "sensors.altimeter"
rate_hz = 10
[components.alt.parameters]
scene = "scenes/missing.toml"

[components.mb]
entry = "sensors.multibeam"
rate_hz = 10
[components.mb.parameters]
scene = "scenes/heightmap.toml"

[components.sonar]
entry = "sensors.imaging_sonar"
rate_hz = 10
[components.sonar.parameters]
scene = "scenes/mesh.toml"

[components.good]
entry = "sensors.ctd"
rate_hz = 10
[components.good.parameters]
scene = "../main_scenes/trench_floor/scene.toml"
"""


def _write_rig(tmp_path: Path) -> Path:
    scenes = tmp_path / "rig" / "scenes"
    scenes.mkdir(parents=True)
    np.save(scenes / "floor.npy", np.full((4, 4), 1.0))
    (scenes / "heightmap.toml").write_text(HEIGHTMAP_SCENE, encoding="utf-8")
    (scenes / "broken.stl").write_bytes(b"\x00\x01 not a mesh")
    (scenes / "mesh.toml").write_text(MESH_SCENE, encoding="utf-8")
    (tmp_path / "main_scenes").symlink_to(Path(__file__).resolve().parents[2] / "scenes")
    rig = tmp_path / "rig" / "rig.toml"
    rig.write_text(RIG, encoding="utf-8")
    return rig


def test_check_lists_every_scene_problem_with_file_and_fix(tmp_path: Path):
    rig = _write_rig(tmp_path)
    with pytest.raises(RigValidationError) as info:
        load_and_check(rig)
    problems = {p.key: p.message for p in info.value.problems}
    text = "\n".join(str(p) for p in info.value.problems)
    # One problem per bad sensor, at its parameters; the good scene passes.
    assert set(problems) == {"components.alt.parameters", "components.mb.parameters",
                             "components.sonar.parameters"}, text
    assert "scenes/missing.toml" in problems["components.alt.parameters"]
    assert "scene file not found" in problems["components.alt.parameters"]
    assert "fix: give the path of a scene" in problems["components.alt.parameters"]
    hm = problems["components.mb.parameters"]
    assert "scenes/heightmap.toml" in hm and "seabed.resolution_m" in hm, hm
    assert "grid spacing" in hm
    mesh = problems["components.sonar.parameters"]
    assert "scenes/mesh.toml" in mesh and "objects[0].mesh: 'broken.stl'" in mesh, mesh


def test_scene_problems_are_all_listed_and_the_scene_water_conflict_refused(tmp_path: Path):
    scene = tmp_path / "heightmap.toml"
    scene.write_text(HEIGHTMAP_SCENE.replace('file = "floor.npy"', 'file = "gone.npy"'),
                     encoding="utf-8")
    with pytest.raises(ParameterError) as info:
        AltimeterSensor.Parameters(scene=scene, water={"surface_temperature_c": 10.0})
    msg = info.value.message
    assert msg.startswith("3 problems with the scene"), msg
    assert "seabed.resolution_m" in msg and "'gone.npy' not found" in msg
    assert "both `scene` and a `water` table" in msg


def test_a_sensor_that_needs_a_scene_is_refused_without_one():
    from moonpool.components.sensors.acoustic import check_scene_parameters

    class P:
        scene = None
        water: dict = {}

    check_scene_parameters(P())  # the flat-seabed fallback: fine
    with pytest.raises(ParameterError, match="no `scene` given but it casts against bodies; "
                                             "give `scene = "):
        check_scene_parameters(P(), needs_scene="it casts against bodies")


@pytest.mark.slow
def test_moonpool_check_exits_2_and_prints_them(tmp_path: Path):
    rig = _write_rig(tmp_path)
    exe = Path(sys.executable).with_name("moonpool")
    proc = subprocess.run([str(exe), "check", str(rig)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "3 problems" in proc.stderr, proc.stderr
    for name in ("missing.toml", "heightmap.toml", "mesh.toml"):
        assert name in proc.stderr
