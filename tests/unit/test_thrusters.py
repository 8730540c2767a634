"""Thruster model and component (components/actuation/thrusters.py): directional
curves and their inverse, speed limits, the exact first-order lag, the exact mean
thrust over a step (against numerical quadrature), and the component's messages."""

from __future__ import annotations

import copy
import math
import tomllib

import numpy as np
import pytest
from conftest import ROOT
from moonpool.components.actuation.geometry import configuration_matrix, thrusters_from_profile
from moonpool.components.actuation.thrusters import ThrusterModel, Thrusters, mean_thrust
from moonpool.components.sdk.errors import ParameterError, PortError
from moonpool.v1 import vehicle_pb2
from scipy.integrate import quad

PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"


def _profile(name="bluerov2_heavy"):
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


@pytest.fixture()
def model():
    return ThrusterModel(thrusters_from_profile(_profile()))


def test_curve_is_directional_and_its_inverse_is_exact(model):
    t = model.specs[0]
    assert (t.c_forward, t.c_reverse, t.max_speed_radps) == (3.7224e-4, 2.8663e-4, 366.5)
    w = np.array([100.0, -100.0, 0.0, 200.0, -200.0, 366.5, -366.5, 1.0])
    T = model.thrust(w)
    np.testing.assert_allclose(T[:5], [3.7224, -2.8663, 0.0, 14.8896, -11.4652])
    # forward about 30 % stronger than reverse at the same speed (NOTES: T200)
    assert T[5] / -T[6] == pytest.approx(50 / 38.5, rel=1e-4)
    f = np.array([10.0, -10.0, 0.0, 49.9, -38.4, 25.0, -1.0, 1e-3])
    np.testing.assert_allclose(model.thrust(model.speed_for_force(f)), f, rtol=1e-12, atol=1e-15)


def test_force_beyond_the_limits_is_bounded(model):
    w = model.speed_for_force([80.0, -80.0, 50.0, -38.5, 0, 0, 0, 0])
    T = model.thrust(w)
    np.testing.assert_allclose(T[:4], [50.0, -38.5, 50.0, -38.5], rtol=1e-4)
    assert np.all(np.abs(w) <= model.w_max)


def test_speed_commands_are_clamped(model):
    w = model.clamp_speed([500.0, -500.0, 100.0, -100.0, 0, 0, 0, 0])
    np.testing.assert_array_equal(w[:4], [366.5, -366.5, 100.0, -100.0])


def test_lag_is_the_exact_first_order_response(model):
    """omega(t) = omega_sp (1 - e^(-t/tau)) from rest, whatever the step size."""
    sp = model.speed_for_force(np.full(8, 30.0))
    tau = model.tau[0]
    for dt, n in ((0.01, 20), (0.001, 200), (0.2, 1)):
        model.omega = np.zeros(8)
        for _ in range(n):
            model.advance(sp, dt)
        np.testing.assert_allclose(model.omega, sp * (1 - math.exp(-0.2 / tau)), rtol=1e-12)


def test_mean_thrust_matches_quadrature_including_sign_changes():
    cf, cr = 3.7224e-4, 2.8663e-4

    def T(w):
        return cf * w * w if w >= 0 else -cr * w * w

    rng = np.random.default_rng(0)
    crossings = 0
    for _ in range(200):
        w0, a = rng.uniform(-366.5, 366.5, 2)
        h = float(rng.choice([1e-3, 1e-2, 0.1]))
        tau = float(rng.choice([0.01, 0.05, 0.5]))
        ref = quad(lambda s, a=a, w0=w0, tau=tau: T(a + (w0 - a) * math.exp(-s / tau)), 0, h,
                   epsabs=1e-13, epsrel=1e-12, limit=200)[0] / h
        mean, w1 = mean_thrust([w0], [a], h, tau, cf, cr)
        assert mean[0] == pytest.approx(ref, rel=1e-9, abs=1e-12)
        assert w1[0] == pytest.approx(a + (w0 - a) * math.exp(-h / tau), rel=1e-13)
        crossings += w0 * w1[0] < 0
    assert crossings > 10  # the split at omega = 0 was exercised
    # no lag: the set-point at once
    mean, w1 = mean_thrust([100.0], [-100.0], 0.01, 0.0, cf, cr)
    assert mean[0] == pytest.approx(-cr * 1e4) and w1[0] == -100.0


def test_inconsistent_curve_is_refused_naming_the_thruster():
    p = _profile()
    p["thrusters"][3]["c_forward"] = 1e-4  # 13.4 N at 366.5 rad/s < 50 N
    with pytest.raises(ParameterError, match="t4.*forward curve reaches only"):
        ThrusterModel(thrusters_from_profile(p))


def test_curve_defaults_when_the_profile_has_none():
    m = ThrusterModel(thrusters_from_profile(_profile("finsrov")), max_speed_radps=300.0,
                      time_constant_s=0.1)
    assert np.all(m.w_max == 300.0) and np.all(m.tau == 0.1)
    np.testing.assert_allclose(m.thrust(m.speed_for_force(np.full(8, 40.0))), 40.0)
    np.testing.assert_allclose(m.thrust(m.speed_for_force(np.full(8, -31.0))), -31.0)


# ----------------------------------------------------------------- component


def _component(**kw):
    c = Thrusters()
    c.name = "thrusters"
    c.configure(Thrusters.Parameters(profile=_profile(), **kw))
    return c


def _cmd(forces):
    return vehicle_pb2.ThrusterCommand(force_n=list(forces))


def _vec(w):
    return np.array([w.force_n.x, w.force_n.y, w.force_n.z,
                     w.torque_nm.x, w.torque_nm.y, w.torque_nm.z])


def test_component_wrench_is_B_times_mean_thrust_and_settles_on_the_command():
    c = _component()
    init = c.initialize(0)
    assert np.all(_vec(init["wrench"]) == 0) and len(init["feedback"].thrusters) == 8
    f = np.array([20.0, -15.0, 10.0, 5.0, -30.0, 30.0, 0.0, 45.0])
    B = configuration_matrix(thrusters_from_profile(_profile()))
    dt = 10_000_000
    model = ThrusterModel(thrusters_from_profile(_profile()))
    sp = model.speed_for_force(f)
    for k in range(3):
        out = c.step(k * dt, dt, {"command": _cmd(f)})
        mean = model.advance(sp, 0.01)
        np.testing.assert_allclose(_vec(out["wrench"]), B @ mean, rtol=1e-12, atol=1e-12)
        assert out["wrench"].header.sim_time_ns == k * dt
        assert out["wrench"].header.frame_id == "body"
        fb = out["feedback"]
        assert fb.header.sim_time_ns == (k + 1) * dt
        np.testing.assert_allclose([s.speed_radps for s in fb.thrusters], model.omega)
        np.testing.assert_allclose([s.force_n for s in fb.thrusters], model.thrust(model.omega))
        assert all(s.validity.valid for s in fb.thrusters)
    for k in range(3, 200):  # 2 s = 40 time constants
        out = c.step(k * dt, dt, {"command": _cmd(f)})
    np.testing.assert_allclose(_vec(out["wrench"]), B @ f, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([s.force_n for s in out["feedback"].thrusters], f, rtol=1e-9)


def test_component_starts_at_rest_and_holds_the_last_set_point():
    c = _component(time_constant_s=0.0)
    c.initialize(0)
    out = c.step(0, 10_000_000, {})
    assert np.all(_vec(out["wrench"]) == 0)
    c.step(10_000_000, 10_000_000, {"command": _cmd([10.0] * 8)})
    # the profile's time constant (0.05 s) wins over the parameter
    assert c.model.tau[0] == 0.05
    for k in range(2, 200):  # no new command: the set-point stays
        out = c.step(k * 10_000_000, 10_000_000, {})
    np.testing.assert_allclose([s.force_n for s in out["feedback"].thrusters], 10.0, rtol=1e-9)


def test_component_accepts_speed_commands():
    c = _component()
    c.initialize(0)
    cmd = vehicle_pb2.ThrusterCommand(speed_radps=[400.0, -100.0] + [0.0] * 6)
    for k in range(300):
        out = c.step(k * 10_000_000, 10_000_000, {"command": cmd})
    speeds = [s.speed_radps for s in out["feedback"].thrusters]
    assert speeds[0] == pytest.approx(366.5) and speeds[1] == pytest.approx(-100.0)


def test_component_refuses_a_command_of_the_wrong_size():
    c = _component()
    c.initialize(0)
    with pytest.raises(PortError, match="8 thrusters"):
        c.step(0, 10_000_000, {"command": _cmd([1.0, 2.0, 3.0])})
    with pytest.raises(PortError, match="non-finite"):
        c.step(0, 10_000_000, {"command": _cmd([float("nan")] * 8)})


def test_component_without_profile_thrusters_is_a_parameter_error():
    c = Thrusters()
    c.name = "thr"
    with pytest.raises(ParameterError, match="no \\[\\[thrusters\\]\\]"):
        c.configure(Thrusters.Parameters(profile={"parameters": {}}))
    bad = copy.deepcopy(_profile())
    bad["thrusters"][0]["time_constant_s"] = -1
    with pytest.raises(ParameterError, match="t1.*time_constant_s"):
        c.configure(Thrusters.Parameters(profile=bad))


def test_fast_step_agrees_with_the_reference_integral():
    """ThrusterModel.advance (cached exponentials, split only on sign changes) against
    mean_thrust, with and without lag, across sign changes and step sizes."""
    specs = thrusters_from_profile(_profile())
    rng = np.random.default_rng(3)
    for tau in (0.05, 0.0):
        m = ThrusterModel(specs)
        m.tau[:] = tau
        for _ in range(300):
            sp = rng.uniform(-366.5, 366.5, 8)
            h = float(rng.choice([1e-3, 1e-2, 0.1]))
            ref, w1 = mean_thrust(m.omega.copy(), sp, h, m.tau, m.c_f, m.c_r)
            np.testing.assert_allclose(m.advance(sp, h), ref, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(m.omega, w1, rtol=1e-13, atol=1e-12)
