"""The starfish detector on rendered images: found with its position at 2 m, refused
with a reason where it is not in view or nothing is lit."""

import numpy as np
import pytest

from moonpool.components.vision.camera import DEFAULT_LIGHTS, lights_from_table
from moonpool.components.vision.detector import DetectorOptions, detect
from moonpool.components.vision.geometry import CameraModel, CameraMount
from moonpool.components.vision.render import DeepSeaRenderer
from moonpool.components.vision.sensor import SensorOptions, frame_rng
from moonpool.components.vision.water import water_type
from moonpool.components.world.scene import Scene

from conftest import ROOT


@pytest.fixture(scope="module")
def world():
    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    cam = CameraModel.from_fov(320, 240, 70.0)
    r = DeepSeaRenderer(scene, cam, CameraMount((0.0, 0.0, 0.0)), water_type("jerlov_IB"),
                        lights_from_table(DEFAULT_LIGHTS), sensor=SensorOptions(auto_exposure=True))
    inst = scene.instance_id("starfish")
    target = scene.vertices[np.unique(scene.faces[scene.triangle_instances == inst])].mean(axis=0)
    return scene, cam, r, target


def _view(world, dn, de, h, lights=True):
    scene, cam, r, target = world
    xy = target[:2] + [dn, de]
    C = np.array([xy[0], xy[1], float(scene.seabed_depth(*xy)) - h])
    if not lights:
        r = DeepSeaRenderer(scene, cam, r.mount, r.water, (), r.radiometry, r.sensor)
    out = r.render(C, (1.0, 0.0, 0.0, 0.0), frame_rng(np.array([5, 6], np.uint64), 0))
    return C, out


def test_starfish_found_and_located_at_2m(world):
    scene, cam, r, target = world
    C, out = _view(world, 0.3, -0.2, 2.0)
    blob, why = detect(out.image, 255.0, DetectorOptions(), 2.0, cam.K[0])
    assert blob is not None, why
    d = out.frame.pose.R_wc @ cam.rays_at(np.array([blob.center_px]))[0]
    X = C + 2.0 / d[2] * d
    assert np.hypot(*(X[:2] - target[:2])) < 0.05


def test_refused_with_a_reason_when_not_in_view_or_dark(world):
    _, cam, _, _ = world
    _, out = _view(world, 6.0, 6.0, 2.0)  # the starfish 8 m away
    blob, why = detect(out.image, 255.0, DetectorOptions(), 2.0, cam.K[0])
    assert blob is None and why
    _, out = _view(world, 0.0, 0.0, 2.0, lights=False)  # hadal depth, no lamps: black
    blob, why = detect(out.image, 255.0, DetectorOptions(), 2.0, cam.K[0])
    assert blob is None and "dark" in why
