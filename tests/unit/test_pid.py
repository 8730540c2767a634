"""The world-frame 4-DOF PID (components/control/pid.py) against hand-computed values."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
from conftest import ROOT
from moonpool.components.control.pid import PidAxis, WorldFramePid, body_wrench_from_world, deadband
from moonpool.components.sdk.frames import wrap_angle
from moonpool.components.control.state import kinematics
from moonpool.components.sdk.errors import ParameterError
from moonpool.v1 import common_pb2, navigation_pb2, vehicle_pb2

PROFILE = tomllib.loads((ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml").read_text())
DT_NS = 100_000_000
ZERO4 = (0.0, 0.0, 0.0, 0.0)


# ------------------------------------------------------------------ one axis


def test_pid_axis_hand_computed_steps():
    ax = PidAxis(kp=2.0, ki=1.0, kd=0.5, integral_limit=10.0, output_limit=100.0)
    # e = 1, ė = −0.2: I = 1·1·0.1 = 0.1; u = 2·1 + 0.1 + 0.5·(−0.2) = 2.0
    assert ax.update(1.0, -0.2, 0.1) == pytest.approx(2.0)
    assert ax.integral == pytest.approx(0.1)
    # e = 0.5, ė = 0: I = 0.1 + 0.05 = 0.15; u = 1 + 0.15 = 1.15
    assert ax.update(0.5, 0.0, 0.1) == pytest.approx(1.15)
    # feed-forward adds straight to the output: I = 0.15; u = 0 + 0.15 + 3
    assert ax.update(0.0, 0.0, 0.1, feedforward=3.0) == pytest.approx(3.15)
    ax.reset()
    assert ax.integral == 0.0


def test_integral_is_clamped():
    ax = PidAxis(kp=0.0, ki=10.0, kd=0.0, integral_limit=0.5)
    assert ax.update(1.0, 0.0, 0.1) == pytest.approx(0.5)  # 10·1·0.1 = 1 → clamped to 0.5
    assert ax.update(1.0, 0.0, 0.1) == pytest.approx(0.5)
    assert ax.update(-1.0, 0.0, 0.02) == pytest.approx(0.3)  # 0.5 − 0.2
    assert ax.update(-1.0, 0.0, 1.0) == pytest.approx(-0.5)


def test_no_integration_while_saturated_in_the_direction_of_the_error():
    ax = PidAxis(kp=10.0, ki=1.0, kd=0.0, output_limit=5.0)
    # kp·e = 10 > 5 and the error pushes further: saturated, integral frozen.
    for _ in range(20):
        assert ax.update(1.0, 0.0, 0.1) == 5.0
        assert ax.saturated
    assert ax.integral == 0.0
    # Error reversed, output back inside: integrates again, I = −0.1·0.1.
    assert ax.update(-0.1, 0.0, 0.1) == pytest.approx(-1.01)
    assert not ax.saturated
    # Saturated, but the error drives the output back: integrating is allowed.
    ax.integral = 8.0
    assert ax.update(-0.2, 0.0, 0.1) == 5.0  # −2 + 7.98 = 5.98 → 5
    assert ax.integral == pytest.approx(7.98)


def test_integral_zone():
    ax = PidAxis(kp=1.0, ki=1.0, kd=0.0, integral_zone=0.5)
    ax.update(1.0, 0.0, 0.1)  # far from the setpoint: no integration
    assert ax.integral == 0.0
    ax.update(0.4, 0.0, 0.1)
    assert ax.integral == pytest.approx(0.04)


def test_deadband_is_continuous():
    assert deadband(0.05, 0.1) == 0.0
    assert deadband(-0.1, 0.1) == 0.0
    assert deadband(0.3, 0.1) == pytest.approx(0.2)
    assert deadband(-0.3, 0.1) == pytest.approx(-0.2)
    assert deadband(0.3, 0.0) == 0.3
    ax = PidAxis(kp=5.0, ki=1.0, kd=2.0, deadband=0.1)
    # Inside the band: no P, no I; the D term (velocity feedback) still acts.
    assert ax.update(0.08, -0.5, 0.1) == pytest.approx(-1.0)
    assert ax.integral == 0.0
    # Outside: the band is subtracted, e = 0.15 → 0.05; I = 0.005; u = 0.25 + 0.005.
    assert ax.update(0.15, 0.0, 0.1) == pytest.approx(0.255)


def test_yaw_wrap_and_rotation_into_body():
    assert wrap_angle(math.radians(340)) == pytest.approx(math.radians(-20))
    assert wrap_angle(-math.pi) == math.pi
    assert wrap_angle(math.pi) == math.pi
    assert wrap_angle(3 * math.pi) == pytest.approx(math.pi)
    # Facing east (ψ = 90°), a force to the north is to the vehicle's left: Y < 0.
    np.testing.assert_allclose(body_wrench_from_world(np.array([10.0, 0.0, 3.0, 1.0]), math.pi / 2),
                               [0.0, -10.0, 3.0, 1.0], atol=1e-12)
    # Facing north-east, a force to the north-east is all surge.
    np.testing.assert_allclose(body_wrench_from_world(np.array([10.0, 10.0, 0.0, 0.0]), math.pi / 4),
                               [math.sqrt(200), 0.0, 0.0, 0.0], atol=1e-12)


# ------------------------------------------------------------------ component


def make(**kw) -> WorldFramePid:
    defaults = {"kp": ZERO4, "ki": ZERO4, "kd": ZERO4, "level_gains": (0.0, 0.0),
                    "buoyancy_feedforward": False, "model_feedforward": False, "profile": PROFILE}
    c = WorldFramePid()
    c.name, c.period_ns = "pid", DT_NS
    c.configure(WorldFramePid.Parameters(**{**defaults, **kw}))
    c.initialize(0)
    return c


def state(x=0.0, y=0.0, z=1.0, yaw=0.0, u=0.0, v=0.0, w=0.0, p=0.0, q=0.0, r=0.0, roll=0.0):
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = x, y, z
    # zyx: q = Rz(ψ) Rx(φ) (no pitch)
    cy, sy, cr, sr = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(roll / 2), math.sin(roll / 2)
    s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = cy * cr, cy * sr, sy * sr, sy * cr
    s.roll_rad, s.yaw_rad = roll, yaw
    s.linear_velocity_body_mps.x, s.linear_velocity_body_mps.y, s.linear_velocity_body_mps.z = u, v, w
    s.angular_velocity_body_radps.x, s.angular_velocity_body_radps.y = p, q
    s.angular_velocity_body_radps.z = r
    return s


def setpoint(x=0.0, y=0.0, z=1.0, yaw=0.0, vel=(0.0, 0.0, 0.0), acc=(0.0, 0.0, 0.0)):
    sp = navigation_pb2.Setpoint(yaw_rad=yaw)
    sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z = x, y, z
    sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z = vel
    sp.acceleration_ned_mps2.x, sp.acceleration_ned_mps2.y, sp.acceleration_ned_mps2.z = acc
    return sp


def wrench6(msg: vehicle_pb2.Wrench) -> np.ndarray:
    return np.array([msg.force_n.x, msg.force_n.y, msg.force_n.z,
                     msg.torque_nm.x, msg.torque_nm.y, msg.torque_nm.z])


def test_zero_wrench_until_state_and_setpoint_arrive():
    c = make(kp=(10.0, 10.0, 10.0, 1.0))
    out = c.step(0, DT_NS, {"setpoint": setpoint(x=1.0)})["wrench"]
    assert out.header.frame_id == "body" and out.header.sim_time_ns == 0
    assert np.all(wrench6(out) == 0.0)


def test_world_frame_errors_rotated_into_the_body():
    c = make(kp=(10.0, 20.0, 30.0, 2.0))
    # Vehicle facing east at (0, 0, 1); setpoint 1 m north, 0.5 m east, 0.2 m deeper,
    # yaw 100° (error +10°).
    out = c.step(0, DT_NS, {"setpoint": setpoint(1.0, 0.5, 1.2, math.radians(100)),
                            "state": state(yaw=math.pi / 2)})["wrench"]
    world = np.array([10.0, 20.0 * 0.5, 30.0 * 0.2])
    np.testing.assert_allclose(wrench6(out), [world[1], -world[0], world[2], 0.0, 0.0,
                                              2.0 * math.radians(10)], atol=1e-9)


def test_yaw_error_is_wrapped_the_short_way():
    c = make(kp=(0.0, 0.0, 0.0, 2.0))
    # Setpoint 170°, vehicle at −170°: turn by −20° (through ±180°), not by +340°.
    out = c.step(0, DT_NS, {"setpoint": setpoint(yaw=math.radians(170)),
                            "state": state(yaw=math.radians(-170))})["wrench"]
    assert out.torque_nm.z == pytest.approx(2.0 * math.radians(-20))


def test_derivative_acts_on_velocity_not_on_setpoint_jumps():
    c = make(kd=(5.0, 0.0, 0.0, 0.0))
    # Moving north at 0.2 m/s (facing north), the setpoint jumps: no derivative kick,
    # only −kd·ẋ.
    out = c.step(0, DT_NS, {"setpoint": setpoint(x=3.0), "state": state(u=0.2)})["wrench"]
    assert out.force_n.x == pytest.approx(-1.0)
    # Velocity feed-forward in the setpoint: derivative of the error, kd (ẋ_ref − ẋ).
    out = c.step(DT_NS, DT_NS, {"setpoint": setpoint(x=3.0, vel=(0.3, 0.0, 0.0)),
                                "state": state(u=0.2)})["wrench"]
    assert out.force_n.x == pytest.approx(0.5)


def test_a_nan_coordinate_leaves_its_axis_free():
    c = make(kp=(10.0, 20.0, 30.0, 2.0), ki=(1.0, 1.0, 1.0, 1.0), buoyancy_feedforward=True,
             integral_zone=(10.0, 10.0, 10.0, 10.0))
    # Descent: x and y free (NaN), depth and yaw held. Facing north, 1 m off in x and y.
    out = c.step(0, DT_NS, {"setpoint": setpoint(math.nan, math.nan, 1.5, 0.1),
                            "state": state(x=1.0, y=-1.0)})["wrench"]
    w = wrench6(out)
    assert w[0] == 0.0 and w[1] == 0.0  # no force in x or y: not even the integral
    assert w[2] == pytest.approx(30.0 * 0.5 + 0.5 * 1.0 * DT_NS * 1e-9 + c.feedforward(
        setpoint(), 0.0, 1.0)[2])  # P + I + the net-weight feed-forward on z
    assert w[5] == pytest.approx(2.0 * 0.1 + 0.1 * DT_NS * 1e-9)
    assert c.axes[0].integral == 0.0 and c.axes[1].integral == 0.0
    # A number comes back: the axis works again, its integral starting from zero.
    out = c.step(DT_NS, DT_NS, {"setpoint": setpoint(0.0, math.nan, 1.5, 0.1),
                                "state": state(x=1.0, y=-1.0)})["wrench"]
    assert out.force_n.x == pytest.approx(-10.0 - 1.0 * DT_NS * 1e-9)
    assert out.force_n.y == 0.0


def test_a_known_disturbance_is_cancelled():
    c = make(kp=(10.0, 10.0, 10.0, 1.0), level_gains=(5.0, 1.0))
    base = wrench6(c.step(0, DT_NS, {"setpoint": setpoint(x=1.0), "state": state(roll=0.1)})["wrench"])
    d = vehicle_pb2.Wrench()
    d.force_n.x, d.force_n.y, d.force_n.z = 3.0, -2.0, 29.0
    d.torque_nm.x, d.torque_nm.y, d.torque_nm.z = 0.5, 11.7, -0.2
    c = make(kp=(10.0, 10.0, 10.0, 1.0), level_gains=(5.0, 1.0))
    out = wrench6(c.step(0, DT_NS, {"setpoint": setpoint(x=1.0), "state": state(roll=0.1),
                                    "disturbance": d})["wrench"])
    np.testing.assert_allclose(out, base - wrench6(d), atol=1e-12)


def test_output_limits_default_to_the_profile_box():
    c = make(kp=(1e4, 1e4, 1e4, 1e4))
    box = [0.8 * 125.1579, 0.8 * 125.1579, 0.8 * 154.0, 0.8 * 33.418]
    np.testing.assert_allclose([a.output_limit for a in c.axes], box, rtol=1e-4)
    out = c.step(0, DT_NS, {"setpoint": setpoint(5.0, 5.0, 5.0, 1.0), "state": state()})["wrench"]
    np.testing.assert_allclose(wrench6(out)[[0, 1, 2, 5]], box, rtol=1e-4)
    c = make(kp=(1e4, 1e4, 1e4, 1e4), output_limit=(10.0, 20.0, 30.0, 4.0))
    out = c.step(0, DT_NS, {"setpoint": setpoint(-5.0, -5.0, -5.0, -1.0), "state": state()})["wrench"]
    np.testing.assert_allclose(wrench6(out)[[0, 1, 2, 5]], [-10.0, -20.0, -30.0, -4.0])


def test_feed_forward_of_net_weight_and_of_the_model():
    m = PROFILE["parameters"]
    w_minus_b = m["mass"] * 9.81 - m["rho_surface"] * 9.81 * m["volume"]
    c = make(buoyancy_feedforward=True)
    out = c.step(0, DT_NS, {"setpoint": setpoint(), "state": state()})["wrench"]
    assert out.force_n.z == pytest.approx(-w_minus_b)  # slightly heavy: push up
    # At the reference, moving with it (0.2 m/s north, accelerating 0.1 m/s²):
    # X = (m + A_u) a + (D1_u + D2_u |u|) u.
    c = make(model_feedforward=True)
    out = c.step(0, DT_NS, {"setpoint": setpoint(vel=(0.2, 0.0, 0.0), acc=(0.1, 0.0, 0.0)),
                            "state": state(u=0.2)})["wrench"]
    expected = (m["mass"] + m["A_u"]) * 0.1 + (m["D1_u"] + m["D2_u"] * 0.2) * 0.2
    assert out.force_n.x == pytest.approx(expected)
    assert out.force_n.y == pytest.approx(0.0, abs=1e-12)


def test_buoyancy_feed_forward_follows_depth_on_a_compressible_hull():
    """Hadal profile (pycnocline 0–1000 m, bulk modulus 4 GPa): at 6000 m the hull has
    shrunk and the water is denser; B(d) by hand from docs/hydrodynamics.md."""
    hadal = tomllib.loads((ROOT / "fmus/hydrodynamics/profiles/hadal_small.toml").read_text())
    p = hadal["parameters"]
    g = p.get("g", 9.81)
    c = make(buoyancy_feedforward=True, profile=hadal)
    for depth in (0.0, 6000.0):
        out = c.step(0, DT_NS, {"setpoint": setpoint(z=depth), "state": state(z=depth)})["wrench"]
        top, width = p["pycnocline_depth"] - p["pycnocline_width"] / 2, p["pycnocline_width"]
        ramp = min(max((depth - top) / width, 0.0), 1.0)
        integral = 0.0 if depth <= top else width / 2 + (depth - top - width)
        rho = p["rho_surface"] + p["pycnocline_delta_rho"] * ramp
        gauge = g * (p["rho_surface"] * depth + p["pycnocline_delta_rho"] * integral)
        buoyancy = rho * g * p["volume"] * (1 - gauge / p["bulk_modulus"])
        assert out.force_n.z == pytest.approx(buoyancy - p["mass"] * g, rel=1e-9)
    assert abs(out.force_n.z) > 5.0  # 6000 m: several newtons heavier than at the surface


def test_levelling_torques():
    c = make(level_gains=(10.0, 3.0), level_limit=1.5)
    out = c.step(0, DT_NS, {"setpoint": setpoint(), "state": state(roll=0.1, p=0.2, q=-0.1)})["wrench"]
    assert out.torque_nm.x == pytest.approx(-1.5)  # −10·0.1 − 3·0.2 = −1.6, clamped
    assert out.torque_nm.y == pytest.approx(0.3, abs=1e-9)  # θ = 0: −3·(−0.1)


def test_navigation_state_is_used_and_a_refused_one_holds_the_command():
    nav = navigation_pb2.NavigationState()
    nav.validity.valid = True
    nav.position_ned_m.z = 1.0
    nav.yaw_rad = math.pi / 2  # orientation unset: yaw only
    nav.velocity_ned_mps.y = 1.0  # moving east, facing east: u = 1
    kin = kinematics(nav)
    np.testing.assert_allclose(kin.nu, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], atol=1e-12)
    assert kin.yaw == pytest.approx(math.pi / 2)

    params = WorldFramePid.Parameters(state_type="moonpool.v1.NavigationState", profile=PROFILE)
    inputs, _ = WorldFramePid.ports_for(params)
    assert {p.name: p.type for p in inputs}["state"] is navigation_pb2.NavigationState
    assert {p.name: p.type for p in WorldFramePid.ports_for(WorldFramePid.Parameters())[0]}["state"] \
        is vehicle_pb2.VehicleState
    c = make(kp=(10.0, 0.0, 0.0, 0.0), state_type="moonpool.v1.NavigationState")
    nav.position_ned_m.x = -1.0
    first = c.step(0, DT_NS, {"setpoint": setpoint(), "state": nav})["wrench"]
    assert first.force_n.y == pytest.approx(-10.0)  # 10 N north = to the left when facing east
    refused = navigation_pb2.NavigationState()
    refused.validity.reason = common_pb2.REFUSAL_REASON_NOT_READY
    again = c.step(DT_NS, DT_NS, {"setpoint": setpoint(), "state": refused})["wrench"]
    np.testing.assert_array_equal(wrench6(again), wrench6(first))


@pytest.mark.parametrize("kw, words", [
    ({"kp": (1.0, 2.0, 3.0)}, "kp"),
    ({"ki": (1.0, -2.0, 3.0, 1.0)}, "ki"),
    ({"buoyancy_feedforward": True, "profile": {}}, "profile"),
    ({"output_limit": (), "profile": {"parameters": PROFILE["parameters"]}}, "thrusters"),
    ({"level_gains": (1.0,)}, "level_gains"),
    ({"state_type": "moonpool.v1.Imu"}, "state_type"),
])
def test_bad_parameters_are_refused_with_a_fix(kw, words):
    with pytest.raises(ParameterError) as err:
        make(**kw)
    assert words in str(err.value) and err.value.fix and err.value.component == "pid"


def test_terminate_reports_steps_and_integrals():
    c = make(ki=(1.0, 0.0, 0.0, 0.0))
    c.step(0, DT_NS, {"setpoint": setpoint(x=0.1), "state": state()})
    m = c.terminate()
    assert m["steps"] == 1 and m["integral"]["x"] == pytest.approx(0.01)
