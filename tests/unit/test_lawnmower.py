"""Lawnmower guidance (components/tasks/lawnmower.py): the waypoints, the setpoint
moving at the survey speed with its leash, the yaw and feed-forward of each segment,
and the depth setpoint from the altimeter's seabed depth minus the altitude."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.tasks.lawnmower import Lawnmower, Polyline, lawnmower_waypoints
from moonpool.v1 import acoustics_pb2, vehicle_pb2

NS = 1_000_000_000


def _state(n, e, d, roll=0.0, pitch=0.0):
    s = vehicle_pb2.VehicleState(roll_rad=roll, pitch_rad=pitch)
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = n, e, d
    return s


def _altimeter(r, valid=True):
    a = acoustics_pb2.Altimeter(range_m=r)
    a.validity.valid = valid
    return a


def _component(**kw):
    c = Lawnmower()
    c.name = "lm"
    c.configure(Lawnmower.Parameters(**kw))
    c.initialize(0)
    return c


def test_waypoints_alternate_legs_and_step_right():
    w = lawnmower_waypoints((1.0, 2.0), 90.0, 10.0, 3.0, 3)  # legs east, steps south
    np.testing.assert_allclose(w, [[1, 2], [1, 12], [-2, 12], [-2, 2], [-5, 2], [-5, 12]],
                               atol=1e-12)
    path = Polyline(w)
    assert path.total == pytest.approx(36.0)
    p, t, seg = path.at(11.5)
    np.testing.assert_allclose(p, [-0.5, 12.0], atol=1e-12)
    assert seg == 1 and t == pytest.approx([-1.0, 0.0])


def test_setpoint_moves_at_the_speed_waits_on_the_leash_and_holds_the_end():
    c = _component(start_ne_m=(0.0, 0.0), leg_length_m=4.0, leg_spacing_m=2.0, legs=2,
                   speed_mps=1.0, max_lag_m=1.5)
    for k in range(4):  # the vehicle follows the setpoint: 0.1 m per 0.1 s step
        out = c.step(k * NS // 10, NS // 10, {"state": _state(0.1 * k, 0.0, 50.0)})
    sp = out["setpoint"]
    assert sp.position_ned_m.x == pytest.approx(0.3)
    assert (sp.velocity_ned_mps.x, sp.velocity_ned_mps.y) == pytest.approx((1.0, 0.0))
    assert sp.yaw_rad == 0.0 and sp.phase == "leg 1/2"
    assert sp.position_ned_m.z == 50.0  # no altimeter yet: the first depth held
    for k in range(4, 30):  # the vehicle stops at x = 0.3: the setpoint waits 1.5 m ahead
        out = c.step(k * NS // 10, NS // 10, {"state": _state(0.3, 0.0, 50.0)})
    assert out["setpoint"].position_ned_m.x == pytest.approx(1.8 + 0.1, abs=0.11)
    c2 = _component(start_ne_m=(0.0, 0.0), leg_length_m=4.0, leg_spacing_m=2.0, legs=2,
                    speed_mps=1.0, max_lag_m=100.0)
    for k in range(120):
        out = c2.step(k * NS // 10, NS // 10, {"state": _state(0.0, 0.0, 50.0)})
        if k == 50:  # on the cross leg (4 .. 6 m of path)
            assert out["setpoint"].phase == "cross 1"
            assert out["setpoint"].yaw_rad == pytest.approx(math.pi / 2)
    sp = out["setpoint"]
    assert sp.phase == "done" and (sp.position_ned_m.x, sp.position_ned_m.y) == (0.0, 2.0)
    assert sp.velocity_ned_mps.x == 0.0 and sp.velocity_ned_mps.y == 0.0
    assert c2.terminate()["done"] == 1.0 and c2.terminate()["path_m"] == pytest.approx(10.0)


def test_depth_setpoint_is_the_filtered_seabed_depth_minus_the_altitude():
    c = _component(altitude_m=10.0, altitude_filter_s=1.0)
    out = c.step(0, NS // 10, {"state": _state(0.0, 0.0, 100.0), "altimeter": _altimeter(12.0)})
    assert out["setpoint"].position_ned_m.z == pytest.approx(102.0)  # 112 - 10: first taken
    out = c.step(NS // 10, NS // 10, {"state": _state(0.0, 0.0, 100.0),
                                      "altimeter": _altimeter(14.0)})
    a = 1 - math.exp(-0.1)
    assert out["setpoint"].position_ned_m.z == pytest.approx(102.0 + a * 2.0)
    z = out["setpoint"].position_ned_m.z
    out = c.step(2 * NS // 10, NS // 10, {"state": _state(0.0, 0.0, 100.0),
                                          "altimeter": _altimeter(40.0, valid=False)})
    assert out["setpoint"].position_ned_m.z == z  # a refused range changes nothing
    tilted = _component(altitude_m=10.0)
    out = tilted.step(0, NS // 10, {"state": _state(0.0, 0.0, 100.0, pitch=math.radians(20)),
                                    "altimeter": _altimeter(12.0)})
    assert out["setpoint"].position_ned_m.z == pytest.approx(100 + 12 * math.cos(math.radians(20)) - 10)
    sig = {s.name: s.value for s in out["altitude"].signals}
    assert sig["altitude_m"] == pytest.approx(12 * math.cos(math.radians(20)))


def test_bad_parameters_are_refused_together():
    with pytest.raises(ParameterError) as info:
        Lawnmower.Parameters(start_ne_m=(1.0,), legs=0, speed_mps=0.0)
    msg = info.value.message
    assert "start_ne_m takes 2 values" in msg and "legs >= 1" in msg and "speed_mps > 0" in msg
