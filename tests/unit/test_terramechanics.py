"""Bekker–Wong terramechanics (components/terramechanics, docs/terramechanics.md).

The maths is checked against closed forms and against integrals written here
independently (scipy.integrate.quad over the contact, not the module's
Gauss–Legendre quadrature); the component against the same references through its
real message interface; bad parameters are refused by name.
"""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
from conftest import RIGS, moonpool
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.terramechanics import bekker
from moonpool.components.terramechanics.component import (
    SoilModel,
    Terramechanics,
    mass_matrix,
    running_gear,
    vehicle_parameters,
)
from moonpool.components.terramechanics.soils import DEEP_SEA_CLAY, PRESETS, TOYOURA_SAND, soil_from
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2
from scipy.integrate import quad

PROFILE = tomllib.loads((RIGS / "profiles" / "crawler.toml").read_text())
SOFT = soil_from("toyoura_sand", {"n": 0.7, "k_c": 900.0, "k_phi": 2.0e5})  # n != 1
SOILS = [TOYOURA_SAND, DEEP_SEA_CLAY, SOFT]


# ------------------------------------------------------------ presets


def test_toyoura_preset_has_the_issue_values():
    s = PRESETS["toyoura_sand"]
    assert (s.c, s.k_c, s.k_phi, s.n) == (800.0, 1370.0, 8.14e5, 1.0)
    assert math.degrees(s.phi) == pytest.approx(37.2)
    assert s.K > 0 and s.K_y > 0 and "Ishigami" in s.source
    clay = PRESETS["deep_sea_clay"]
    assert "ASSUMPTION" not in clay.source and "assumption" in clay.source


# ---------------------------------------------------------- static sinkage


@pytest.mark.parametrize("soil", SOILS, ids=lambda s: f"{s.name}-n{s.n}")
@pytest.mark.parametrize("W", [500.0, 2268.6, 20_000.0])
def test_static_sinkage_matches_closed_form(soil, W):
    b, l = 0.3, 1.5
    closed = (W / (b * l * (soil.k_c / b + soil.k_phi))) ** (1 / soil.n)
    assert bekker.static_sinkage_track(soil, W, b, l) == pytest.approx(closed, rel=1e-12)
    # The numerically integrated normal load at that sinkage carries W ...
    f = bekker.track_contact(soil, b, l, closed, closed, 0.0)
    assert float(f.normal_n) == pytest.approx(W, rel=1e-12)
    # ... and so does an independent integral of Bekker's pressure.
    p = lambda s: (soil.k_c / b + soil.k_phi) * closed ** soil.n
    assert b * quad(p, 0, l)[0] == pytest.approx(W, rel=1e-12)


@pytest.mark.parametrize("soil", SOILS, ids=lambda s: f"{s.name}-n{s.n}")
def test_vehicle_rests_at_the_closed_form_sinkage(soil):
    """The component's whole-vehicle model (both tracks, 3-D geometry) finds the
    depth where the soil carries the net weight: the closed form per track."""
    gear = running_gear(PROFILE)
    model = SoilModel(soil, gear, 4000.0)
    W = 4537.0
    z = model.static_sinkage(W)
    b, l = gear.track_b[0], gear.track_l[0]
    assert z == pytest.approx(bekker.static_sinkage_track(soil, W / 2, b, l), rel=1e-9)


# ------------------------------------------------------- drawbar pull vs slip


def _dp_quad(soil, b, l, z_front, z_rear, i):
    """Drawbar pull written out independently: shear stress τ(x) = (c + p(x) tan φ)
    (1 − exp(−|i x| / K)) sign(i) along the contact, x from where the soil is first
    touched; minus Bekker's compaction resistance at the sinkage of the front (where
    the soil enters; the inclined plate compacts the rest)."""
    k = soil.k_c / b + soil.k_phi

    def z(x):
        return z_front + (z_rear - z_front) * x / l

    # where the contact starts and ends (z > 0)
    xs = [x for x in np.linspace(0, l, 200001) if z(x) > 0]
    x0, x1 = xs[0], xs[-1]
    if z_front != z_rear:  # exact ends of the contact
        x_zero = -z_front * l / (z_rear - z_front)
        x0 = max(0.0, x_zero) if z_front <= 0 else 0.0
        x1 = min(l, x_zero) if z_rear <= 0 else l

    def tau(x):
        p = k * max(z(x), 0.0) ** soil.n
        return (soil.c + p * math.tan(soil.phi)) * math.copysign(
            1 - math.exp(-abs(i) * (x - x0) / soil.K), i)

    traction = b * quad(tau, x0, x1, epsabs=0, epsrel=1e-12, limit=200)[0]
    entry = max(z_front, 0.0)
    return traction - b * k * entry ** (soil.n + 1) / (soil.n + 1)


SLIPS = [-0.5, -0.05, 0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0]


@pytest.mark.parametrize("soil", SOILS, ids=lambda s: f"{s.name}-n{s.n}")
def test_drawbar_pull_vs_slip_matches_independent_integration(soil):
    b, l, W = 0.3, 1.5, 2268.6
    z = bekker.static_sinkage_track(soil, W, b, l)
    dp = bekker.drawbar_pull_track(soil, W, b, l, np.array(SLIPS))
    ref = np.array([_dp_quad(soil, b, l, z, z, i) for i in SLIPS])
    np.testing.assert_allclose(dp, ref, rtol=1e-7, atol=1e-9)  # 16 Gauss nodes: ~1e-8 worst
    # and the closed form for uniform pressure (Wong 2008 eq. 2.56)
    closed = [bekker.traction_track_uniform(soil, W, b, l, i)
              - float(bekker.compaction_resistance(soil, b, z)) for i in SLIPS]
    np.testing.assert_allclose(dp, closed, rtol=1e-7, atol=1e-9)
    # drawbar pull grows with slip, towards A c + W tan φ − R_c
    pos = dp[np.array(SLIPS) > 0]
    assert np.all(np.diff(pos) > 0)
    limit = b * l * soil.c + W * math.tan(soil.phi) - float(bekker.compaction_resistance(soil, b, z))
    assert pos[-1] < limit


@pytest.mark.parametrize("z_front,z_rear", [(0.05, 0.12), (0.12, 0.05), (-0.03, 0.08),
                                            (0.08, -0.03)])
def test_drawbar_pull_of_a_pitched_track_matches_independent_integration(z_front, z_rear):
    soil, b, l = DEEP_SEA_CLAY, 0.3, 1.5
    for i in (0.02, 0.3, -0.1):
        f = bekker.track_contact(soil, b, l, z_front, z_rear, i)
        assert float(f.drawbar_pull_n) == pytest.approx(
            _dp_quad(soil, b, l, z_front, z_rear, i), rel=1e-9)


def test_component_drawbar_pull_matches_independent_integration():
    """Through the component's messages: the crawler standing at its static sinkage,
    moving at u with belts at V, gets X = 2 DP(i), i = 1 − u/V, from the integral."""
    soil = DEEP_SEA_CLAY
    host, W = _host({"soil": "deep_sea_clay", "coupling": "explicit"}), 4537.12
    z0 = host.component.static_sinkage_m
    gear = running_gear(PROFILE)
    b, l, z_track = gear.track_b[0], gear.track_l[0], gear.track_pos[0, 2]
    assert host.component.net_weight_n == pytest.approx(W, rel=1e-5)
    k_eq = soil.k_c / b + soil.k_phi
    rc_full = b * k_eq * z0 ** 2 / 2                       # Bekker, n = 1
    for k, (u, V) in enumerate([(0.0, 0.3), (0.29, 0.3), (0.45, 0.5), (0.2, 0.6), (0.004, 0.3)]):
        host.component._override = {"left": V, "right": V}
        state = _state(depth=4000.0 - z_track + z0, u=u)
        (wrench, diag) = host.step(k * 10_000_000, 10_000_000, {"state": state})
        i = 1 - u / V
        traction = _dp_quad(soil, b, l, z0, z0, i) + rc_full
        rc = rc_full * min(u / 0.01, 1.0)       # smooth sign of travel below 1 cm/s
        signals = {s.name: s.value for s in diag.message.signals}
        assert signals["left_slip"] == pytest.approx(i, rel=1e-12)
        assert signals["left_traction_n"] == pytest.approx(traction, rel=1e-9)
        assert signals["left_drawbar_pull_n"] == pytest.approx(traction - rc, rel=1e-9)
        assert signals["right_drawbar_pull_n"] == signals["left_drawbar_pull_n"]
        assert wrench.message.force_n.x == pytest.approx(2 * (traction - rc), rel=1e-9)
        assert wrench.message.force_n.z == pytest.approx(-W, rel=1e-4)


def test_pitched_track_compaction_is_not_counted_twice():
    """A nose-up crawler at zero slip: the soil's horizontal force (world axes) is
    Bekker's compaction resistance of the rut it leaves (the rear sinkage): R_c at
    the front sinkage from the compaction term, the rest from the normal stress on
    the inclined plate."""
    soil, theta, U = DEEP_SEA_CLAY, 0.02, 0.3
    u, w = U * math.cos(theta), U * math.sin(theta)     # level travel at U, body axes
    host = _host({"soil": "deep_sea_clay", "coupling": "explicit",
                  "drive_schedule": [[0.0, u, u]]})
    depth = 4000.0 - 0.6 + 0.1
    (wrench, diag) = host.step(0, 10_000_000,
                               {"state": _state(depth, u=u, w=w, pitch=theta)})
    w = wrench.message
    horizontal = math.cos(theta) * w.force_n.x + math.sin(theta) * w.force_n.z
    z_rear = depth + 0.75 * math.sin(theta) + 0.6 * math.cos(theta) - 4000.0
    rut = float(bekker.compaction_resistance(soil, 0.3, z_rear))
    assert horizontal == pytest.approx(-2 * rut, rel=1e-3)
    d = {s.name: s.value for s in diag.message.signals}
    assert d["left_traction_n"] == pytest.approx(0.0, abs=1e-9)       # zero slip
    assert d["left_compaction_resistance_n"] < rut                    # front sinkage only


def test_slip_ratio_definitions():
    assert bekker.slip_ratio(0.5, 0.4) == pytest.approx(0.2)        # driving: 1 − v/V
    assert bekker.slip_ratio(0.4, 0.5) == pytest.approx(-0.2)       # braking: V/v − 1
    assert bekker.slip_ratio(0.0, 0.0) == 0.0                        # at rest
    assert bekker.slip_ratio(0.3, 0.0) == pytest.approx(1.0)         # spinning in place
    assert bekker.slip_ratio(-0.5, -0.4) == pytest.approx(-0.2)      # reversing, odd


# ------------------------------------------------------------------- wheels


def _wheel_quad(soil, b, r, z, i, a0=bekker.WONG_REECE_A0, a1=bekker.WONG_REECE_A1):
    """Wong–Reece wheel written out independently: (W, DP) by quad over θ."""
    k = soil.k_c / b + soil.k_phi
    t1 = math.acos(1 - z / r)
    tm = (a0 + a1 * i) * t1

    def sigma(t):
        if t >= tm:
            return k * (r * (math.cos(t) - math.cos(t1))) ** soil.n
        te = t1 - t / tm * (t1 - tm)
        return k * (r * (math.cos(te) - math.cos(t1))) ** soil.n

    def tau(t):
        j = r * ((t1 - t) - (1 - i) * (math.sin(t1) - math.sin(t)))
        return (soil.c + sigma(t) * math.tan(soil.phi)) * math.copysign(1 - math.exp(-abs(j) / soil.K), j)

    opts = {"points": [tm], "epsabs": 0, "epsrel": 1e-12, "limit": 200}
    W = r * b * quad(lambda t: sigma(t) * math.cos(t) + tau(t) * math.sin(t), 0, t1, **opts)[0]
    DP = r * b * quad(lambda t: tau(t) * math.cos(t) - sigma(t) * math.sin(t), 0, t1, **opts)[0]
    return W, DP


@pytest.mark.parametrize("i", [0.0, 0.05, 0.2, 0.5])
def test_wheel_forces_match_independent_integration(i):
    soil, b, r, z = TOYOURA_SAND, 0.15, 0.25, 0.03
    f = bekker.wheel_contact(soil, b, r, z, i, nodes=24)
    W, DP = _wheel_quad(soil, b, r, z, i)
    assert float(f.normal_n) == pytest.approx(W, rel=1e-6)
    assert float(f.drawbar_pull_n) == pytest.approx(DP, rel=1e-6, abs=1e-6 * W)


def test_wheel_sinkage_is_near_bekkers_closed_form():
    """Bekker's z₀ (parabolic arc, no shear, maximum stress at the bottom) is an
    approximation of the Wong–Reece wheel: with a₀ = a₁ = 0 (θ_m = 0, σ maximum at
    the bottom) the loads agree within a few per cent for shallow sinkage."""
    soil, b, D, W = TOYOURA_SAND, 0.15, 0.5, 300.0
    z0 = bekker.static_sinkage_wheel_bekker(soil, W, b, D)
    f = bekker.wheel_contact(soil, b, D / 2, z0, 0.0, a0=0.0, a1=0.0, nodes=24)
    sigma_only = float(np.sum(f.sigma * np.cos(f.theta) * f.weight))
    assert sigma_only == pytest.approx(W, rel=0.05)


def test_wheeled_vehicle_through_the_component():
    """Four rigid wheels from a profile's [[wheels]]: the vehicle rests where the
    Wong–Reece loads carry its weight, symmetric, and driven wheels pull."""
    profile = {"parameters": dict(PROFILE["parameters"]), "wheels": [
        {"name": n, "position_m": [x, y, 0.4], "radius_m": 0.3, "width_m": 0.25}
        for n, x, y in (("fl", 0.6, -0.6), ("fr", 0.6, 0.6), ("rl", -0.6, -0.6),
                        ("rr", -0.6, 0.6))]}
    host = _host({"coupling": "explicit", "drive_schedule": [[0.0, 0.3, 0.3, 0.3, 0.3]]},
                 profile=profile)
    c = host.component
    z0, W = c.static_sinkage_m, c.net_weight_n
    assert 0 < z0 < 0.3
    depth = 4000.0 - 0.7 + z0                      # wheel bottoms 0.4 + 0.3 m below CO
    (wrench, diag) = host.step(0, 10_000_000, {"state": _state(depth, u=0.3)})
    d = {s.name: s.value for s in diag.message.signals}
    # at zero slip the wheels carry the weight (the shear adds a little vertical lift)
    assert -wrench.message.force_n.z == pytest.approx(W, rel=0.02)
    assert d["fl_normal_load_n"] == d["fr_normal_load_n"] == d["rl_normal_load_n"]
    assert abs(wrench.message.force_n.y) < 1e-9 and abs(wrench.message.torque_nm.z) < 1e-9
    (wrench, diag) = host.step(10_000_000, 10_000_000, {"state": _state(depth, u=0.2)})
    d = {s.name: s.value for s in diag.message.signals}
    assert d["fl_slip"] == pytest.approx(1 - 0.2 / 0.3) and d["fl_traction_n"] > 0


# ------------------------------------------------------- component behaviour


def _host(extra: dict | None = None, profile: dict | None = None) -> ComponentHost:
    params = {"seabed_depth_m": 4000.0, "profile": profile or PROFILE, **(extra or {})}
    host = ComponentHost(Terramechanics())
    host.configure(lc.Configure(instance_name="terra", seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    return host


def _state(depth=4000.0, u=0.0, v=0.0, r=0.0, pitch=0.0, w=0.0):
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.z = depth
    s.orientation.w, s.orientation.y = math.cos(pitch / 2), math.sin(pitch / 2)
    s.linear_velocity_body_mps.x, s.linear_velocity_body_mps.y = u, v
    s.linear_velocity_body_mps.z = w
    s.angular_velocity_body_radps.z = r
    return s


def test_straight_driving_is_symmetric_and_side_slip_is_resisted():
    host = _host({"coupling": "explicit", "drive_schedule": [[0.0, 0.5, 0.5]]})
    z0 = host.component.static_sinkage_m
    depth = 4000.0 - 0.6 + z0

    def run(k, **kw):
        wrench, diag = host.step(k * 10_000_000, 10_000_000, {"state": _state(depth, **kw)})
        return wrench.message, {s.name: s.value for s in diag.message.signals}

    w, d = run(0, u=0.49, pitch=0.01)
    assert d["left_lateral_n"] == d["right_lateral_n"] == pytest.approx(0.0, abs=1e-9)
    assert d["left_traction_n"] == d["right_traction_n"] > 0
    assert d["left_sinkage_m"] == d["right_sinkage_m"]
    assert abs(w.force_n.y) < 1e-9 and abs(w.torque_nm.x) < 1e-6 and abs(w.torque_nm.z) < 1e-6
    # sliding sideways to the right: both tracks push left
    w, d = run(1, u=0.49, v=0.02)
    assert d["left_lateral_n"] < 0 and d["right_lateral_n"] < 0 and w.force_n.y < 0
    # yawing right: the lateral shear resists it (a yaw moment to the left); the outer
    # (left) track runs faster over the ground than the inner one, so it slips less
    w, d = run(2, u=0.49, r=0.05)
    assert w.torque_nm.z < 0 and d["left_lateral_n"] < 0 and d["right_lateral_n"] < 0
    assert d["left_ground_speed_mps"] > d["right_ground_speed_mps"]
    assert d["left_slip"] < d["right_slip"]


def test_drive_input_overrides_the_schedule():
    from moonpool.v1 import signals_pb2

    host = _host({"drive_schedule": [[0.0, 0.1, 0.1], [1.0, 0.3, 0.3]], "coupling": "explicit"})
    c = host.component
    assert list(c.drive_speeds(0.5)) == pytest.approx([0.2, 0.2])
    assert list(c.drive_speeds(5.0)) == pytest.approx([0.3, 0.3])
    drive = signals_pb2.Signals(signals=[signals_pb2.Signal(name="left", value=-0.2)])
    (_, diag) = host.step(0, 10_000_000, {"state": _state(), "drive": drive})
    got = {s.name: s.value for s in diag.message.signals}
    assert (got["left_drive_speed_mps"], got["right_drive_speed_mps"]) == (-0.2, 0.1)


def test_mass_matrix_matches_the_fmu_form():
    p = vehicle_parameters(PROFILE)
    M = mass_matrix(p)
    assert np.allclose(M, M.T) and np.all(np.linalg.eigvalsh(M) > 0)
    m, zg = p["mass"], p["z_g"]
    assert M[0, 0] == m + p["A_u"] and M[0, 4] == pytest.approx(m * zg)   # −m S(r_g), surge–pitch
    assert M[4, 4] == pytest.approx(p["Iyy"] + m * zg ** 2 + p["A_q"])


def test_implicit_coupling_is_stable_where_explicit_is_not():
    """A 1-DOF surge model of the crawler on sand with its belts at 0.1 m/s, 100 Hz
    zero-order hold: the explicit force (from the speed at the start of the step)
    ends in a limit cycle of several mm/s; backward Euler, the component's coupling,
    settles on the steady speed."""
    from scipy.optimize import brentq

    soil, b, l, W = TOYOURA_SAND, 0.3, 1.5, 4537.0 / 2
    M, V, dt = 2600.0, 0.1, 0.01
    z = bekker.static_sinkage_track(soil, W, b, l)

    def force(u):
        i = float(bekker.slip_ratio(V, u))
        dp = 2 * float(bekker.track_contact(soil, b, l, z, z, i).drawbar_pull_n)
        return dp - 150 * u - 1000 * u * abs(u)               # the crawler's drag

    steady = brentq(force, 0.0, V, xtol=1e-14)
    explicit, implicit = [0.0], [0.0]
    for _ in range(300):
        u = explicit[-1]
        explicit.append(u + dt * force(u) / M)
        u = implicit[-1]
        implicit.append(brentq(lambda x, u=u: M * (x - u) / dt - force(x), -1.0, 1.0, xtol=1e-14))
    tail_e, tail_i = np.array(explicit[-50:]), np.array(implicit[-50:])
    assert np.ptp(tail_e) > 5e-3
    assert np.ptp(tail_i) < 1e-12 and tail_i[-1] == pytest.approx(steady, abs=1e-10)


# ------------------------------------------------------------- bad parameters


@pytest.mark.parametrize("extra,named", [
    ({"soil_parameters": {"c_pa": -100.0}}, "c_pa"),
    ({"soil_parameters": {"k_phi": -1.0}}, "k_phi"),
    ({"soil_parameters": {"k_c": -5.0}}, "k_c"),
    ({"soil_parameters": {"n": 0.0}}, "soil_parameters.n"),
    ({"soil_parameters": {"K_m": 0.0}}, "K_m"),
    ({"soil_parameters": {"K_y_m": -0.01}}, "K_y_m"),
    ({"soil_parameters": {"phi_deg": 95.0}}, "phi_deg"),
    ({"soil_parameters": {"k_c": 0.0, "k_phi": 0.0}}, "k_c and k_phi"),
    ({"soil_parameters": {"cohesion": 1.0}}, "cohesion"),
    ({"soil": "moon_dust"}, "moon_dust"),
    ({"soil": "custom", "soil_parameters": {"c_pa": 1.0}}, "phi_deg"),
    ({"damping_ratio": -0.1}, "damping_ratio"),
    ({"coupling": "magic"}, "coupling"),
    ({"drive_schedule": [[0.0, 0.3]]}, "drive_schedule"),
])
def test_bad_parameters_are_refused_by_name(extra, named):
    with pytest.raises(ParameterError) as err:
        _host(extra)
    assert named in str(err.value) and err.value.component == "terra" and err.value.fix


@pytest.mark.parametrize("key,value,named", [
    ("width_m", 0.0, "width_m"),
    ("width_m", -0.3, "width_m"),
    ("length_m", 0.0, "length_m"),
    ("position_m", [0.0, 1.0], "position_m"),
])
def test_bad_track_geometry_is_refused_by_name(key, value, named):
    profile = tomllib.loads((RIGS / "profiles" / "crawler.toml").read_text())
    profile["tracks"][1][key] = value
    with pytest.raises(ParameterError) as err:
        _host(profile=profile)
    assert f"tracks[1].{named}" in str(err.value)


def test_bad_soil_is_refused_by_moonpool_check():
    """ports_for validates, so `moonpool check` refuses before anything runs."""
    out = moonpool("check", str(RIGS / "crawler.toml"),
                   "--set", "components.terra.parameters.soil_parameters.k_phi=-8.14e5")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "soil_parameters.k_phi" in out.stdout + out.stderr


def test_soil_and_width_checks_in_the_maths():
    with pytest.raises(ParameterError, match="K = 0"):
        bekker.Soil("x", c=0.0, phi=0.5, k_c=1.0, k_phi=1.0, n=1.0, K=0.0)
    with pytest.raises(ParameterError, match="b = 0"):
        bekker.static_sinkage_track(TOYOURA_SAND, 100.0, 0.0, 1.0)
