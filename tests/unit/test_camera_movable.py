"""vision.camera's movable objects: a scene object named in movable_objects is drawn
where its object_NAME input puts it (labels and instances included), at its scene
pose until a message arrives; a name the scene lacks is refused with the fix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import ROOT
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.vision.camera import DeepSeaCamera
from moonpool.components.world.scene import Scene
from moonpool.v1 import lifecycle_pb2 as lc, vehicle_pb2

SCENE = str(ROOT / "scenes/trench_floor/scene.toml")


def _pose(n, e, d, yaw=0.0):
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = n, e, d
    s.orientation.w, s.orientation.z = math.cos(yaw / 2), math.sin(yaw / 2)
    return s


def _labels(host, k, inputs):
    outs = {o.port: o for o in host.step(k * 500_000_000, 500_000_000, inputs)}
    return np.frombuffer(bytes(outs["labels"].attachment), "<u2").reshape(90, 120)


def test_a_movable_object_is_drawn_where_its_message_puts_it():
    host = ComponentHost(DeepSeaCamera())
    params = {"scene": SCENE, "image_width": 120, "image_height": 90,
              "movable_objects": ["starfish"], "mount_xyz_m": [0.0, 0.0, 0.0]}
    host.configure(lc.Configure(instance_name="camera", seed=0, period_ns=500_000_000,
                                parameters=[lc.NamedParameter(name=k, value=to_parameter_value(v))
                                            for k, v in params.items()]))
    host.initialize(0)
    assert "object_starfish" in {p.name for p in host.describe().inputs}
    scene = Scene.load(SCENE, movable=("starfish",))
    home = scene.movable["starfish"].position_ned_m  # (6, 3, seabed there)
    star = scene.class_id("starfish")
    # no message yet: at its scene pose
    at_home = _labels(host, 0, {"state": _pose(home[0], home[1], home[2] - 1.5)})
    assert (at_home == star).sum() > 20
    # a message moves it 1 m north (here, 2 cm above the seabed): seen there, gone from home
    there = _pose(home[0] + 1.0, home[1], float(scene.seabed_depth(home[0] + 1, home[1])) - 0.02)
    moved_home = _labels(host, 1, {"state": _pose(home[0], home[1], home[2] - 1.5),
                                   "object_starfish": there})
    moved_there = _labels(host, 2, {"state": _pose(home[0] + 1.0, home[1], home[2] - 1.5),
                                    "object_starfish": there})
    assert (moved_home == star).sum() == 0
    assert (moved_there == star).sum() > 20


def test_a_movable_object_the_scene_lacks_is_refused():
    with pytest.raises(ValueError, match="no object named seastar.*starfish"):
        DeepSeaCamera.Parameters(scene=SCENE, movable_objects=("seastar",))
