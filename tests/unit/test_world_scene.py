"""Scene files and scenes (components/world/scenefile.py, terrain.py, scene.py): the
shipped scenes load and their targets are hit with the right labels, procedural
seabeds are reproducible, poses and bodies are placed where they say, height maps
are read, and a bad file gets every problem listed at once."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.world.scene import Body, Scene
from moonpool.components.world.scenefile import validate_scene
from moonpool.v1 import vehicle_pb2

ROOT = Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"
DOWN = np.array([0.0, 0.0, 1.0])

HEADER = """
format = "moonpool.scene/1"
[origin]
latitude_deg = 10.0
longitude_deg = 20.0
[classes.mud]
id = 1
backscatter_db = -30.0
reflectance = [0.4, 0.4, 0.4]
[classes.thing]
id = 5
backscatter_db = -5.0
reflectance = [0.9, 0.1, 0.1]
"""


def write(tmp_path: Path, text: str, name: str = "scene.toml") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trench() -> Scene:
    return Scene.load("trench_floor/scene.toml", base_dir=SCENES)


def test_shipped_scenes_validate_and_load():
    for name in ("trench_floor", "wreck", "pool"):
        path = SCENES / name / "scene.toml"
        assert validate_scene(path) == [], name
        scene = Scene.load(path)
        assert scene.name == name and len(scene.faces) > 0
        assert all(cid in scene.classes for cid, _ in scene.instances.values())
        # every shipped file is small
        assert sum(f.stat().st_size for f in (SCENES / name).rglob("*") if f.is_file()) < 200_000


def test_trench_targets_are_hit_with_their_labels(trench: Scene):
    engine = trench.engine()
    assert engine is trench.engine()  # built once
    for name, cls in (("starfish", "starfish"), ("lost_instrument", "instrument")):
        inst = trench.instance_id(name)
        cid, _ = trench.instances[inst]
        assert trench.classes[cid].name == cls
        tri = np.flatnonzero(trench.triangle_instances == inst)
        centre = trench.vertices[np.unique(trench.faces[tri])].mean(axis=0)
        hits = engine.cast(centre - [0.0, 0.0, 10.0], DOWN)
        assert hits.label[0] == trench.class_id(cls) and hits.instance[0] == inst
        assert hits.distance_m[0] < 10.0
    # the starfish is starfish-sized: ~0.2 m across, 2 cm thick, resting on the floor
    tri = np.flatnonzero(trench.triangle_instances == trench.instance_id("starfish"))
    v = trench.vertices[np.unique(trench.faces[tri])]
    span = v.max(axis=0) - v.min(axis=0)
    assert 0.15 < max(span[:2]) < 0.25 and span[2] < 0.1
    assert 5990.0 < trench.seabed_depth(0.0, 0.0) < 6010.0
    assert trench.environment.latitude_deg == pytest.approx(11.35)
    assert float(trench.environment.sound_speed_mps(6000.0)) > 1540.0


def test_seabed_depth_agrees_with_the_rays(trench: Scene):
    rng = np.random.default_rng(0)
    ne = rng.uniform(-95, 95, (5000, 2))
    depth = trench.seabed_depth(ne[:, 0], ne[:, 1])
    hits = trench.engine().cast(np.column_stack([ne, depth - 20.0]), DOWN)
    on_floor = hits.label == trench.class_id("sediment")
    assert on_floor.mean() > 0.9  # the rest: rocks and targets
    np.testing.assert_allclose(hits.point_ned[on_floor, 2], depth[on_floor], atol=1e-6)
    assert np.isnan(trench.seabed_depth(150.0, 0.0))


def test_procedural_seabed_same_seed_same_scene(tmp_path: Path):
    text = """
[seabed]
kind = "procedural"
class = "mud"
size_m = [40.0, 30.0]
resolution_m = 0.5
mean_depth_m = 100.0
slope = [0.1, -0.05]
[seabed.relief]
amplitude_m = 0.5
wavelength_min_m = 3.0
wavelength_max_m = 20.0
seed = {seed}
[seabed.ripples]
wavelength_m = 1.5
height_m = 0.1
direction_deg = 30.0
[seabed.boulders]
count = 10
seed = {seed}
radius_m = [0.2, 0.6]
class = "thing"
"""
    a = Scene.load(write(tmp_path, text.format(seed=1), "a.toml"))
    b = Scene.load(write(tmp_path, text.format(seed=1), "b.toml"))
    c = Scene.load(write(tmp_path, text.format(seed=2), "c.toml"))
    assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)
    assert not np.array_equal(a.vertices, c.vertices)
    assert len([1 for _, n in a.instances.values() if n.startswith("rock_")]) == 10
    # on the grid points the seabed is the closed form; relief has the asked std dev
    z = a.grid.z
    assert 0.3 < np.std(z - (100.0 + 0.1 * _grid(a)[0] - 0.05 * _grid(a)[1])) < 0.8


def _grid(scene: Scene):
    g = scene.grid
    ni, nj = g.z.shape
    return np.meshgrid(g.north0_m + g.resolution_m * np.arange(ni),
                       g.east0_m + g.resolution_m * np.arange(nj), indexing="ij")


def test_sloping_plane_and_placed_box(tmp_path: Path):
    path = write(tmp_path, """
[seabed]
kind = "procedural"
class = "mud"
size_m = [20.0, 20.0]
resolution_m = 1.0
mean_depth_m = 50.0
slope = [0.2, 0.1]

[[objects]]
name = "crate"
class = "thing"
instance = 9
shape = "box"
size_m = [2.0, 1.0, 0.5]
position_ned_m = [3.0, -2.0, -1.0]
rpy_deg = [0.0, 0.0, 90.0]
on_seabed = true
""")
    scene = Scene.load(path)
    n, e = np.array([-7.3, 0.0, 8.9]), np.array([4.4, 0.0, -9.1])
    np.testing.assert_allclose(scene.seabed_depth(n, e), 50.0 + 0.2 * n + 0.1 * e, atol=1e-9)
    top = 50.0 + 0.2 * 3.0 + 0.1 * -2.0 - 1.0 - 0.25  # on_seabed: z offset from the floor
    # yawed 90°: the 2 m side lies along east, the 1 m side along north
    hits = scene.engine().cast([[3.0, -2.0 + 0.9, 0.0], [3.0 + 0.45, -2.0, 0.0],
                                [3.0 + 0.55, -2.0, 0.0]], DOWN)
    np.testing.assert_allclose(hits.distance_m[:2], top, atol=1e-6)
    assert list(hits.instance) == [9, 9, 1] and list(hits.label) == [5, 5, 1]
    assert scene.instances[9] == (5, "crate") and scene.instances[1] == (1, "seabed")


def test_bodies_placed_from_a_vehicle_state(trench: Scene):
    body = Body.from_trimesh("other_vehicle", __import__("trimesh").creation.box(
        extents=(1.0, 0.6, 0.4)), class_id=99, instance_id=1000)
    state = vehicle_pb2.VehicleState()
    state.position_ned_m.x, state.position_ned_m.y, state.position_ned_m.z = 20.0, -5.0, 5950.0
    yaw = np.radians(90.0)
    state.orientation.w, state.orientation.z = np.cos(yaw / 2), np.sin(yaw / 2)
    engine = trench.with_bodies([body.at_state(state)])
    hits = engine.cast([[20.0, -5.0 + 0.45, 5940.0], [20.0 + 0.45, -5.0, 5940.0]], DOWN)
    assert hits.instance[0] == 1000 and hits.label[0] == 99
    assert hits.distance_m[0] == pytest.approx(10.0 - 0.2, abs=1e-6)
    assert hits.instance[1] != 1000  # 0.45 m north is off the yawed 0.6 m beam
    assert engine.parts[0] is trench.engine().parts[0]  # static BVH shared
    assert hits.triangle[0] >= trench.engine().n_triangles
    static = trench.engine().cast([[20.0, -5.0 + 0.45, 5940.0]], DOWN)
    assert static.instance[0] != 1000 and static.distance_m[0] > 40.0


def test_heightmap_npy_and_png(tmp_path: Path):
    grid = np.arange(12, dtype=float).reshape(3, 4)
    np.save(tmp_path / "floor.npy", grid)
    cv2.imwrite(str(tmp_path / "floor.png"), (grid * 1000).astype(np.uint16))
    for file, scale in (("floor.npy", 2.0), ("floor.png", 0.002)):
        path = write(tmp_path, f"""
[seabed]
kind = "heightmap"
class = "mud"
file = "{file}"
resolution_m = 0.5
origin_ned_m = [10.0, 20.0, 300.0]
depth_scale_m = {scale}
depth_offset_m = 1.0
""", f"{file}.toml")
        scene = Scene.load(path)
        np.testing.assert_allclose(scene.seabed_depth([10.0, 11.0, 10.0], [20.0, 21.5, 20.25]),
                                   [301.0, 301.0 + 2.0 * 11, 301.0 + 2.0 * 0.5], atol=1e-9)
        hits = scene.engine().cast([10.5, 20.5, 0.0], DOWN)
        assert hits.distance_m[0] == pytest.approx(301.0 + 2.0 * 5, abs=1e-6)


def test_every_problem_is_listed_at_once(tmp_path: Path):
    path = write(tmp_path, """
colour = "blue"
[water]
surface_temprature_c = 20.0
deep_salinity_psu = "salty"
[seabed]
kind = "heightmap"
class = "mudd"
file = "missing.npy"
origin_ned_m = [0.0, 0.0]

[[objects]]
name = "a"
class = "thing"
mesh = "nowhere.stl"
position_ned_m = [0.0, 0.0, 1.0]

[[objects]]
name = "b"
class = "thing"
shape = "cone"
position_ned_m = [0.0, 0.0]
""")
    problems = validate_scene(path)
    text = "\n".join(problems)
    expected = [
        "colour: unknown key",
        "water.surface_temprature_c: unknown key (did you mean 'surface_temperature_c'?)",
        "water.deep_salinity_psu: must be a number",
        "seabed.class: unknown class 'mudd' (did you mean 'mud'?)",
        "seabed.resolution_m: a height map needs its grid spacing",
        "seabed.file: file 'missing.npy' not found",
        "seabed.origin_ned_m: must be a list of 3 numbers",
        "objects[0].mesh: file 'nowhere.stl' not found",
        "objects[1].shape: must be one of box, sphere, cylinder",
        "objects[1].position_ned_m: must be a list of 3 numbers",
    ]
    for item in expected:
        assert item in text, item
    assert all(p.startswith(str(path)) for p in problems)
    assert len(problems) == len(expected)
    with pytest.raises(ParameterError) as info:
        Scene.load(path)
    assert f"{len(expected)} problems in the scene file" in str(info.value)
    assert all(item in str(info.value) for item in expected)


def test_unreadable_and_invalid_files(tmp_path: Path):
    assert "scene file not found" in validate_scene(tmp_path / "none.toml")[0]
    bad = tmp_path / "bad.toml"
    bad.write_text("[origin\n", encoding="utf-8")
    assert "not valid TOML" in validate_scene(bad)[0]
    broken = tmp_path / "broken.stl"
    broken.write_bytes(b"\x00\x01 not a mesh")
    path = write(tmp_path, """
[[objects]]
name = "junk"
class = "thing"
mesh = "broken.stl"
position_ned_m = [0.0, 0.0, 1.0]
""")
    with pytest.raises(ParameterError, match=r"objects\[0\]\.mesh"):
        Scene.load(path)
    assert "objects[0].mesh: 'broken.stl'" in validate_scene(path)[0]


def test_make_scenes_writes_the_committed_files(tmp_path: Path):
    import importlib.util

    script = ROOT / "scripts" / "make_scenes.py"
    spec = importlib.util.spec_from_file_location("make_scenes", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path / "scenes")
    written = sorted(p.relative_to(tmp_path / "scenes") for p in (tmp_path / "scenes").rglob("*")
                     if p.is_file())
    assert written and all((SCENES / rel).read_bytes() == (tmp_path / "scenes" / rel).read_bytes()
                           for rel in written)
