"""Static scenes for viewers (sdk/scene.py, orchestrator/livescene.py, docs/live.md):
what components and the rig's ``run.view_scene`` say of the world, gathered for the
live view without starting anything, and ``moonpool check`` on ``run.view_scene``."""

from __future__ import annotations

import logging
import textwrap

import numpy as np
import pytest
from conftest import ROOT
from rigfiles import by_key, problems_of

from moonpool.components.sdk.scene import SceneFile, ScenePart, box, read_scene_file
from moonpool.components.world.scene import Scene
from moonpool.components.world.view import MAX_GRID, scene_parts
from moonpool.orchestrator.livescene import rig_scene
from moonpool.orchestrator.rigfile import load_rig

POOL = ROOT / "scenes/pool/scene.toml"

COMPONENTS = '''
from pathlib import Path
from dataclasses import dataclass
from moonpool.components.sdk.component import Component, Port, param
from moonpool.components.sdk.scene import ScenePart, SceneFile, box
from moonpool.v1 import vehicle_pb2


class Body(Component):
    outputs = (Port("state", vehicle_pb2.VehicleState),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        pass


class Marker(Component):
    """A marker on the body of its ``state`` input, a post in the world, the pool."""
    inputs = (Port("state", vehicle_pb2.VehicleState), Port("other", vehicle_pb2.VehicleState))

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        height_m: float = param(1.0, "post height")

    @classmethod
    def static_scene(cls, params):
        return [box("marker", (0.1, 0.1, 0.1), body_port="state"),
                box("post", (0.1, 0.1, params.height_m), (1.0, 2.0, -0.5)),
                box("lost", (0.1, 0.1, 0.1), body_port="other"),
                SceneFile(Path("{pool}"))]


class Sonar(Component):
    """A sensor with a scene parameter: the SDK's default static_scene."""
    inputs = (Port("state", vehicle_pb2.VehicleState),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file")
'''


def _rig(tmp_path, extra_run: str = "") -> object:
    (tmp_path / "scene_components.py").write_text(COMPONENTS.replace("{pool}", POOL.as_posix()))
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes/pool.toml").write_text(POOL.read_text())
    rig = tmp_path / "rig.toml"
    rig.write_text(textwrap.dedent(f'''
        [run]
        until = "1s"
        {extra_run}
        [components.boat]
        entry = "scene_components.py:Body"
        rate_hz = 10
        [components.marker]
        entry = "scene_components.py:Marker"
        rate_hz = 10
        [components.marker.parameters]
        height_m = 3.0
        [components.sonar]
        entry = "scene_components.py:Sonar"
        rate_hz = 10
        [components.sonar.parameters]
        scene = "{POOL.as_posix()}"
        [[connections]]
        from = "boat.state"
        to = "marker.state"
        [[connections]]
        from = "boat.state"
        to = "sonar.state"
        '''))
    return load_rig(rig)


def test_parts_are_placed_in_their_frames_and_each_scene_file_read_once(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="moonpool.live"):
        placed = rig_scene(_rig(tmp_path))
    ids = {p.id: p for p in placed}
    # The marker rides on the body connected to its "state" input; the post stands in
    # the world, as tall as the parameter says; "other" is connected to nothing.
    assert ids["marker/marker"].frame == "boat/state"
    assert ids["marker/post"].frame == "ned"
    assert np.ptp(ids["marker/post"].part.vertices[:, 2]) == pytest.approx(3.0)
    assert "marker/lost" not in ids
    assert "'lost' of component 'marker' rides on the body of input 'other'" in caplog.text
    # The pool, named by the marker and by the sonar's scene parameter: drawn once.
    pool = [p for p in placed if p.id.startswith("pool/")]
    assert sorted(p.id for p in pool) == ["pool/seabed", "pool/wall"]
    assert all(p.frame == "ned" for p in pool)


def test_a_components_failure_leaves_it_out_and_the_rest_is_drawn(tmp_path, caplog):
    rig = _rig(tmp_path)
    (tmp_path / "scene_components.py").write_text(
        COMPONENTS.replace("{pool}", POOL.as_posix()).replace(
            "return [box(\"marker\"", "raise RuntimeError('no scene today')\n        return [box(\"marker\""))
    with caplog.at_level(logging.WARNING, logger="moonpool.live"):
        placed = rig_scene(rig)
    assert "no static scene from component 'marker': no scene today" in caplog.text
    assert sorted(p.id for p in placed) == ["pool/seabed", "pool/wall"]  # the sonar's


def test_the_rigs_view_scene_is_drawn_and_checked(tmp_path):
    rig = _rig(tmp_path, 'view_scene = "scenes/pool.toml"')
    assert rig.run.view_scene == (tmp_path / "scenes/pool.toml").resolve()
    # The same pool through two paths is two files: drawn from both.
    assert sum(p.id == "scenes/wall" for p in rig_scene(rig)) == 1
    (tmp_path / "scenes/bad.toml").write_text('format = "moonpool.scene/9"\n')
    (tmp_path / "scenes/broken.toml").write_text(
        POOL.read_text().replace('kind = "procedural"', 'kind = "procedurall"'))
    rig_path = tmp_path / "rig.toml"
    for value, expected in (("scenes/missing.toml", "does not exist"),
                            ("scenes/bad.toml", "no reader for scene format 'moonpool.scene/9'"),
                            ("scenes/broken.toml", "procedurall"),
                            ("3", None)):
        text = rig_path.read_text().replace('view_scene = "scenes/pool.toml"',
                                            f'view_scene = "{value}"' if expected else "view_scene = 3")
        bad = tmp_path / f"bad_{len(value)}.toml"
        bad.write_text(text)
        problem = by_key(problems_of(bad, check=True))["run.view_scene"]
        assert (expected or "expected the path of a scene file") in problem.message, problem


def test_the_sdk_default_static_scene_is_a_scene_parameter():
    from moonpool.components.sensors.altimeter import AltimeterSensor
    from moonpool.components.sdk.wire import build_parameters

    with_scene = build_parameters(AltimeterSensor.Parameters, {"scene": str(POOL)})
    assert AltimeterSensor.static_scene(with_scene) == (SceneFile(POOL),)
    assert AltimeterSensor.static_scene(build_parameters(AltimeterSensor.Parameters, {})) == ()


def test_a_scene_file_as_viewers_draw_it():
    """The world's reader: one part per class, the seabed on a coarser grid of the
    scene's own depths, every object's triangles as the sensors have them."""
    assert read_scene_file(POOL)[0].name == "seabed"  # through the registered reader
    path = ROOT / "scenes/trench_floor/scene.toml"
    scene = Scene.load(path)
    parts = {p.name: p for p in scene_parts(path)}
    seabed = parts["seabed"]
    assert max(scene.grid.z.shape) > MAX_GRID >= np.sqrt(len(seabed.vertices))
    np.testing.assert_allclose(seabed.vertices[:, 2], scene.seabed_depth(
        seabed.vertices[:, 0], seabed.vertices[:, 1]), atol=1e-9)
    starfish = scene.triangle_instances == scene.instance_id("starfish")
    np.testing.assert_array_equal(np.sort(parts["starfish"].vertices[parts["starfish"].faces],
                                          axis=None),
                                  np.sort(scene.vertices[scene.faces[starfish]], axis=None))
    assert parts["starfish"].color[:3] == scene.classes[scene.class_id("starfish")].reflectance


def test_scene_parts_refuse_bad_meshes():
    with pytest.raises(ValueError, match="outside the vertices"):
        ScenePart("x", np.zeros((3, 3)), [[0, 1, 3]])
    with pytest.raises(ValueError, match=r"must be \(V, 3\)"):
        ScenePart("x", np.zeros((3, 2)), [[0, 1, 2]])
    b = box("b", (1.0, 2.0, 3.0), (1.0, 1.0, 1.0))
    np.testing.assert_allclose(b.vertices.min(0), [0.5, 0.0, -0.5])
    np.testing.assert_allclose(b.vertices.max(0), [1.5, 2.0, 2.5])
    # Closed and wound outwards: the signed volume is the box's.
    v = b.vertices[b.faces]
    volume = np.einsum("ij,ij->i", v[:, 0], np.cross(v[:, 1], v[:, 2])).sum() / 6.0
    assert volume == pytest.approx(6.0)
