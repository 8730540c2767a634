"""The NMPC (components/control/nmpc.py) on its own prediction model.

The "plant" here is the NMPC's model itself (``NmpcSolver.predict``, RK4 of the
Fossen model of the BlueROV2 Heavy profile), optionally with a disturbance the
controller is not told about. Closed loops on the real FMU are in
tests/scenarios/test_controllers_fmu.py; solve time is measured by
benchmarks/nmpc.py, never asserted here.
"""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
from conftest import ROOT
from moonpool.components.control.nmpc import Nmpc, level_torques
from moonpool.components.control.state import Kinematics
from moonpool.components.sdk.errors import ParameterError
from moonpool.v1 import navigation_pb2, vehicle_pb2

PROFILE = tomllib.loads((ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml").read_text())
DT = 0.1


@pytest.fixture(scope="module")
def nmpc() -> Nmpc:
    c = Nmpc()
    c.name, c.period_ns = "nmpc", round(DT * 1e9)
    c.configure(Nmpc.Parameters(profile=PROFILE))
    return c


def setpoint(p, yaw_deg=0.0, vel=(0.0, 0.0, 0.0)) -> navigation_pb2.Setpoint:
    sp = navigation_pb2.Setpoint(yaw_rad=math.radians(yaw_deg))
    sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z = p
    sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z = vel
    return sp


def closed_loop(c: Nmpc, x0, sp_at, steps: int, disturbance=None):
    """Run the controller against its own model; returns states and applied wrenches."""
    c.initialize(0)
    x = np.asarray(x0, float)
    xs, taus = [x], []
    d = np.zeros(4) if disturbance is None else np.asarray(disturbance, float)
    for k in range(steps):
        tau = c.control(Kinematics.from_euler_state(x), sp_at(k * DT), DT)
        taus.append(tau)
        x = c.solver.predict(x, tau[[0, 1, 2, 5]], DT, d)
        xs.append(x)
    return np.array(xs), np.array(taus)


def start(n=0.0, e=0.0, d=1.0, yaw_deg=0.0):
    return np.r_[n, e, d, 0.0, 0.0, math.radians(yaw_deg), np.zeros(6)]


def test_reaches_a_4dof_setpoint_within_the_input_box(nmpc):
    target = (1.0, -0.6, 1.5)
    xs, taus = closed_loop(nmpc, start(), lambda t: setpoint(target, 120.0), 150)
    final = xs[-1]
    assert np.linalg.norm(final[0:3] - target) < 0.005
    assert abs(math.remainder(final[5] - math.radians(120), 2 * math.pi)) < math.radians(0.5)
    assert np.linalg.norm(final[6:12]) < 0.01
    s = nmpc.settings
    u = taus[:, [0, 1, 2, 5]]
    assert np.all(u >= np.array(s.u_min) - 1e-6) and np.all(u <= np.array(s.u_max) + 1e-6)
    assert np.max(np.abs(u[:, 0])) > 10.0  # it really pushed
    assert max(abs(xs[:, 3]).max(), abs(xs[:, 4]).max()) < math.radians(10)  # levelled
    m = nmpc.terminate()
    assert m["solves"] == 150 and m["failures"] == 0
    assert m["solve_ms_p99"] >= m["solve_ms_p50"] > 0 and m["period_ms"] == pytest.approx(100.0)


def test_input_box_defaults_to_the_profile(nmpc):
    s = nmpc.settings
    np.testing.assert_allclose(s.u_max, [0.8 * 125.1579, 0.8 * 125.1579, 0.8 * 154.0, 0.8 * 33.418],
                               rtol=1e-4)
    np.testing.assert_allclose(s.u_min, [-0.8 * 125.1579, -0.8 * 125.1579, -0.8 * 200.0, -0.8 * 33.418],
                               rtol=1e-4)


def test_turns_the_short_way_across_plus_minus_pi(nmpc):
    # From 170° to −170°: 20° through ±180°, never the 340° the other way.
    xs, taus = closed_loop(nmpc, start(yaw_deg=170.0), lambda t: setpoint((0.0, 0.0, 1.0), -170.0), 60)
    assert taus[0][5] > 0  # yaw moment towards increasing ψ
    err = [abs(math.remainder(x[5] - math.radians(-170), 2 * math.pi)) for x in xs]
    assert max(err) <= math.radians(20) + 1e-6
    assert err[-1] < math.radians(0.5)


def test_offset_free_under_an_unknown_disturbance(nmpc):
    """A constant world force and yaw moment the NMPC is not told about: the disturbance
    estimate finds it and the pose error goes to zero."""
    d_true = np.array([6.0, -4.0, 3.0, 0.4])
    target = (0.3, 0.2, 1.2)
    xs, _ = closed_loop(nmpc, start(), lambda t: setpoint(target, 30.0), 300, disturbance=d_true)
    assert np.linalg.norm(xs[-1][0:3] - target) < 0.002
    assert abs(math.remainder(xs[-1][5] - math.radians(30), 2 * math.pi)) < math.radians(0.2)
    np.testing.assert_allclose(nmpc.disturbance, d_true, rtol=0.05, atol=0.05)


def test_follows_a_constant_velocity_reference(nmpc):
    v = np.array([0.15, -0.08, 0.03])
    p0 = np.array([0.0, 0.0, 1.0])
    xs, _ = closed_loop(nmpc, start(), lambda t: setpoint(p0 + v * t, 0.0, tuple(v)), 150)
    t_end = 150 * DT
    assert np.linalg.norm(xs[-1][0:3] - (p0 + v * t_end)) < 0.005
    R = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])  # yaw held at 0
    np.testing.assert_allclose(R @ xs[-1][6:9], v, atol=0.003)


def test_acceleration_feed_forward_tracks_a_circle_closer(nmpc):
    """On a circle (r = 0.5 m, 0.15 m/s) the default extrapolation p + v t + ½ a t² over
    the horizon beats a constant-velocity one (which cuts the bend)."""
    r, speed = 0.5, 0.15
    w = speed / r

    def sp_at(t):
        c, s_ = math.cos(w * t), math.sin(w * t)
        msg = setpoint((r * c, r * s_, 1.0), 0.0, (-speed * s_, speed * c, 0.0))
        msg.acceleration_ned_mps2.x, msg.acceleration_ned_mps2.y = -speed * w * c, -speed * w * s_
        return msg

    def error(c):
        xs, _ = closed_loop(c, start(n=r), sp_at, 160)
        ref = np.array([[r * math.cos(w * k * DT), r * math.sin(w * k * DT)] for k in range(len(xs))])
        return np.sqrt(np.mean(np.sum((xs[80:, 0:2] - ref[80:]) ** 2, axis=1)))

    velocity_only = Nmpc()
    velocity_only.name, velocity_only.period_ns = "nmpc", round(DT * 1e9)
    velocity_only.configure(Nmpc.Parameters(profile=PROFILE, reference_extrapolation="velocity"))
    e_acc, e_vel = error(nmpc), error(velocity_only)
    assert e_acc < 0.5 * e_vel and e_acc < 0.005


def test_solver_failure_falls_back_to_the_previous_plan(nmpc, monkeypatch):
    nmpc.initialize(0)
    kin = Kinematics.from_euler_state(start())
    sp = setpoint((1.0, 0.0, 1.0))
    first = nmpc.control(kin, sp, DT)
    plan_next = nmpc.solver._unpack(nmpc.solver.z)[1][1]

    def broken(**kwargs):
        raise RuntimeError("qrqp failed")

    monkeypatch.setattr(nmpc.solver, "solver", broken)
    second = nmpc.control(kin, sp, DT)
    np.testing.assert_allclose(second[[0, 1, 2, 5]], plan_next)
    assert not np.allclose(second, first)
    out = nmpc.step(2 * round(DT * 1e9), round(DT * 1e9),
                    {"setpoint": sp, "state": _state_msg()})  # still no crash
    assert out["wrench"].header.frame_id == "body"
    m = nmpc.terminate()
    assert m["failures"] == 2 and m["solves"] == 3


def _state_msg() -> vehicle_pb2.VehicleState:
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.z = 1.0
    s.orientation.w = 1.0
    return s


def test_zero_wrench_until_inputs_and_levelling_in_the_output(nmpc):
    nmpc.initialize(0)
    out = nmpc.step(0, round(DT * 1e9), {"state": _state_msg()})["wrench"]
    assert out.header.frame_id == "body"
    assert (out.force_n.x, out.force_n.y, out.force_n.z, out.torque_nm.z) == (0.0, 0.0, 0.0, 0.0)
    x = start()
    x[3], x[9] = 0.05, -0.1  # rolled, rolling back
    tau = nmpc.control(Kinematics.from_euler_state(x), setpoint((0.0, 0.0, 1.0)), DT)
    K, M = level_torques(x, nmpc.settings.level_gains)
    assert tau[3] == pytest.approx(K) and tau[4] == pytest.approx(M) and K == pytest.approx(-0.2)


@pytest.mark.parametrize("kw, words", [
    ({"profile": {}}, "profile"),
    ({"horizon": 0}, "horizon"),
    ({"horizon_dt_s": 0.0}, "horizon_dt_s"),
    ({"position_weight": (1.0, 2.0)}, "position_weight"),
    ({"disturbance_gain": 1.5}, "disturbance_gain"),
    ({"reference_extrapolation": "spline"}, "reference_extrapolation"),
    ({"input_limit": (), "profile": {"parameters": PROFILE["parameters"]}}, "thrusters"),
])
def test_bad_parameters_are_refused_with_a_fix(kw, words):
    c = Nmpc()
    c.name = "nmpc"
    with pytest.raises(ParameterError) as err:
        c.configure(Nmpc.Parameters(**{"profile": PROFILE, **kw}))
    assert words in str(err.value) and err.value.fix
