"""world.current: the current at the vehicle's depth from the scene's water column, or
from a speed and a direction; bad parameters named with the fix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import ROOT
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.world.current import WaterCurrentSource
from moonpool.components.world.scenefile import read_scene_file
from moonpool.v1 import vehicle_pb2

SCENE = ROOT / "scenes/trench_floor/scene.toml"


def _component(**kw):
    c = WaterCurrentSource()
    c.name, c.period_ns = "current", 100_000_000
    c.configure(WaterCurrentSource.Parameters(**kw))
    return c


def _v(msg):
    return np.array([msg.velocity_ned_mps.x, msg.velocity_ned_mps.y, msg.velocity_ned_mps.z])


def test_speed_and_direction():
    c = _component(source="parameters", speed_mps=0.1, direction_deg=90.0)
    out = c.initialize(0)["current"]
    np.testing.assert_allclose(_v(out), [0.0, 0.1, 0.0], atol=1e-15)  # towards the east
    c = _component(source="parameters", speed_mps=0.2, direction_deg=225.0)
    c.initialize(0)
    np.testing.assert_allclose(_v(c.step(0, 1, {})["current"]),
                               [-0.2 / math.sqrt(2), -0.2 / math.sqrt(2), 0.0], atol=1e-15)


def test_the_scene_s_profile_at_the_vehicle_s_depth():
    water = read_scene_file(SCENE).water
    c = _component(source="scene", scene=SCENE, initial_depth_m=0.0)
    np.testing.assert_allclose(_v(c.initialize(0)["current"]), water.current_ned_mps(0.0)[0])
    for depth in (60.0, 500.0, 3000.0, 6000.0):
        s = vehicle_pb2.VehicleState()
        s.position_ned_m.z = depth
        out = c.step(0, 1, {"state": s})["current"]
        np.testing.assert_allclose(_v(out), water.current_ned_mps(depth)[0])
        assert out.depth_m == depth
    # trench_floor: 0.3 m/s east at the surface, 0.02 m/s north at 6,000 m
    assert _v(out)[0] == pytest.approx(0.02)


@pytest.mark.parametrize("kw,words", [
    ({"source": "tides"}, "source must be"),
    ({"source": "scene"}, "needs scene"),
    ({"source": "parameters", "speed_mps": -0.1}, "speed_mps"),
])
def test_bad_parameters_are_named(kw, words):
    with pytest.raises(ParameterError, match=words) as err:
        WaterCurrentSource.Parameters(**kw)
    assert err.value.fix
