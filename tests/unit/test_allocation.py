"""Thrust allocation (components/actuation/geometry.py, allocation.py) against
independent references: a hand-built B, scipy's bounded least squares (lsq_linear),
scipy's LP (HiGHS) for the largest attainable multiple of a demand, the pseudo-inverse."""

from __future__ import annotations

import copy
import math
import tomllib

import numpy as np
import pytest
from conftest import ROOT
from moonpool.components.actuation import allocation as AL
from moonpool.components.actuation.allocation import Allocation, direction_error, max_scale
from moonpool.components.actuation.geometry import (
    configuration_matrix,
    producible_subset,
    thrusters_from_profile,
    unproducible_axes,
)
from moonpool.components.sdk.errors import ParameterError, PortError
from scipy.optimize import lsq_linear

PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"


def _profile(name="bluerov2_heavy"):
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


@pytest.fixture(scope="module")
def rov():
    return _profile()


def _inside(al, n, rng):
    return rng.uniform(al.f_min, al.f_max, size=(n, al.n)) @ al.B.T


def _outside(al, n, rng):
    """Random normalised directions, 1.1-3 times beyond the attainable boundary (LP)."""
    out = []
    for _ in range(n):
        z = rng.normal(size=6)
        d = z / np.linalg.norm(z) * al.axis_scale
        out.append(d * max_scale(al.B, al.f_min, al.f_max, d) * rng.uniform(1.1, 3.0))
    return np.array(out)


# ------------------------------------------------------------------ geometry


def test_configuration_matrix_matches_a_hand_built_one():
    profile = {"thrusters": [
        {"name": "a", "position": [1.0, 0.0, 0.0], "direction": [0.0, 1.0, 0.0],
         "max_forward_n": 1, "max_reverse_n": 1},
        {"name": "b", "position": [0.0, 0.0, 0.5], "direction": [1.0, 0.0, 0.0],
         "max_forward_n": 1, "max_reverse_n": 1},
        {"name": "c", "position": [0.0, -2.0, 0.0], "direction": [0.0, 0.0, -1.0],
         "max_forward_n": 1, "max_reverse_n": 1},
    ]}
    B = configuration_matrix(thrusters_from_profile(profile))
    # r x d by hand: (1,0,0)x(0,1,0) = (0,0,1); (0,0,.5)x(1,0,0) = (0,.5,0);
    # (0,-2,0)x(0,0,-1) = (2,0,0)
    expected = np.array([
        [0, 1, 0], [1, 0, 0], [0, 0, -1],
        [0, 0, 2], [0, 0.5, 0], [1, 0, 0],
    ], dtype=float)
    np.testing.assert_allclose(B, expected, atol=1e-15)


def test_bluerov2_geometry_is_full_rank_and_t1_column_is_right(rov):
    specs = thrusters_from_profile(rov)
    B = configuration_matrix(specs)
    assert B.shape == (6, 8) and np.linalg.matrix_rank(B) == 6
    s = math.sqrt(0.5)
    d = np.array([s, -s, 0.0])  # at r = (0.156, 0.111, 0.085)
    # r x d = (ry dz - rz dy, rz dx - rx dz, rx dy - ry dx)
    m = [0.111 * 0 - 0.085 * -s, 0.085 * s - 0.156 * 0, 0.156 * -s - 0.111 * s]
    np.testing.assert_allclose(B[:, 0], np.r_[d, m], atol=1e-15)
    assert unproducible_axes(B) == []


# ------------------------------------------------------------- inside the set


@pytest.mark.parametrize("saturation,tol", [("preserve-direction", 1e-9),
                                            ("least-squares", 1e-4)])
def test_attainable_demands_are_met(rov, saturation, tol):
    al = Allocation.from_profile(rov, saturation=saturation)
    rng = np.random.default_rng(1)
    for tau in _inside(al, 300, rng):
        r = al.allocate(tau)
        assert np.all(r.force_n >= al.f_min) and np.all(r.force_n <= al.f_max)
        rel = np.linalg.norm(r.achieved - tau) / np.linalg.norm(tau)
        assert rel < tol, (tau, rel, r.status)
        assert not r.saturated
        np.testing.assert_allclose(r.achieved, al.B @ r.force_n)


def test_small_demand_gets_the_least_effort_solution(rov):
    """No limit active: min ‖u‖² s.t. B̂u = τ̂ is the (normalised) pseudo-inverse. The
    allocator returns it without OSQP; OSQP on the same QP must agree."""
    al = Allocation.from_profile(rov)
    P = np.linalg.pinv(al.B / al.axis_scale[:, None] * al.f_ref[None, :])
    rng = np.random.default_rng(2)
    for _ in range(50):
        tau = rng.normal(size=6) * al.axis_scale * 0.05
        ref = P @ (tau / al.axis_scale) * al.f_ref
        r = al.allocate(tau)
        assert r.status == "no limit active"
        np.testing.assert_allclose(r.force_n, ref, atol=1e-9)
        u, status, _ = al._solve_qp(tau / al.axis_scale)  # force the OSQP path
        assert "polished" in status
        np.testing.assert_allclose(u * al.f_ref, ref, atol=1e-9)


# ------------------------------------------------------------ outside the set


def test_least_squares_matches_scipy_lsq_linear(rov):
    """The weighted, regularised bounded least squares against scipy's solver."""
    weights = (1.0, 2.0, 1.0, 0.5, 0.5, 3.0)
    al = Allocation.from_profile(rov, saturation="least-squares", weights=weights,
                                 regularization=1e-4)
    rng = np.random.default_rng(3)
    g = np.sqrt(np.asarray(weights)) / al.axis_scale   # W^½ in physical units
    F = al.f_ref
    lam = al.regularization
    A = np.vstack([g[:, None] * al.B * F[None, :], math.sqrt(lam) * np.eye(al.n)])
    for tau in np.vstack([_outside(al, 40, rng), _inside(al, 20, rng)]):
        ref = lsq_linear(A, np.r_[g * tau, np.zeros(al.n)], bounds=(al.lo, al.hi),
                         tol=1e-14, lsmr_tol="auto", method="bvls")
        r = al.allocate(tau)
        np.testing.assert_allclose(r.force_n / F, ref.x, atol=2e-6)


def test_preserve_direction_reaches_the_lp_optimum(rov):
    al = Allocation.from_profile(rov)
    rng = np.random.default_rng(4)
    for tau in _outside(al, 60, rng):
        r = al.allocate(tau)
        a_star = max_scale(al.B, al.f_min, al.f_max, tau)
        assert a_star < 1
        assert r.scale == pytest.approx(a_star, rel=1e-7)
        assert direction_error(tau, r.achieved, al.metric) < 1e-9
        assert r.saturated and r.thruster_saturated.any()
        assert np.all(r.force_n >= al.f_min) and np.all(r.force_n <= al.f_max)


def test_direction_never_worse_than_pinv_clip_and_better_on_average(rov):
    qp = Allocation.from_profile(rov)
    clip = Allocation.from_profile(rov, method="pinv-clip")
    scale = Allocation.from_profile(rov, method="pinv-scale")
    rng = np.random.default_rng(5)
    e_qp, e_clip = [], []
    for tau in _outside(qp, 200, rng):
        e_qp.append(direction_error(tau, qp.allocate(tau).achieved, qp.metric))
        e_clip.append(direction_error(tau, clip.allocate(tau).achieved, qp.metric))
        rs = scale.allocate(tau)
        # uniform scaling keeps the direction but gets no further than the QP
        assert direction_error(tau, rs.achieved, qp.metric) < 1e-9
        assert rs.scale <= qp.allocate(tau).scale + 1e-9
    e_qp, e_clip = np.array(e_qp), np.array(e_clip)
    assert np.all(e_qp <= e_clip + 1e-9)
    assert e_qp.mean() < 0.1 * e_clip.mean()


def test_baselines_are_what_they_say(rov):
    clip = Allocation.from_profile(rov, method="pinv-clip")
    scale = Allocation.from_profile(rov, method="pinv-scale")
    tau = np.array([300.0, 0, 0, 0, 0, 5.0])
    P = np.linalg.pinv(clip.B / clip.axis_scale[:, None] * clip.f_ref[None, :])
    u0 = P @ (tau / clip.axis_scale)
    np.testing.assert_allclose(clip.allocate(tau).force_n,
                               np.clip(u0 * clip.f_ref, clip.f_min, clip.f_max), atol=1e-9)
    f = scale.allocate(tau).force_n
    s = f / (u0 * clip.f_ref)
    assert np.ptp(s[np.abs(u0) > 1e-9]) < 1e-9          # one common factor
    assert np.any(np.isclose(f, scale.f_max)) or np.any(np.isclose(f, scale.f_min))


def test_saturation_flags(rov):
    al = Allocation.from_profile(rov)
    small = al.allocate([10.0, 0, 0, 0, 0, 0])
    assert not small.saturated and not small.thruster_saturated.any()
    big = al.allocate([1000.0, 0, 0, 0, 0, 0])
    assert big.saturated and big.thruster_saturated.sum() >= 1
    assert 0 < big.scale < 1
    zero = al.allocate(np.zeros(6))
    assert not zero.saturated and np.all(zero.force_n == 0)


def test_derate_and_disabled_thrusters(rov):
    al = Allocation.from_profile(rov, derate=0.5, disabled=("t5",))
    r = al.allocate([1000.0, 0, 300.0, 0, 0, 0])
    assert r.force_n[4] == 0 and not r.thruster_saturated[4]
    assert np.all(r.force_n <= 25.0 + 1e-12) and np.all(r.force_n >= -19.25 - 1e-12)
    assert direction_error(r.demanded, r.achieved, al.metric) < 1e-9


def test_osqp_prints_nothing(rov, capfd):
    for sat in ("least-squares", "preserve-direction"):
        al = Allocation.from_profile(rov, saturation=sat)
        for tau in _inside(al, 20, np.random.default_rng(6)):
            al.allocate(tau)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_solver_failure_falls_back_to_uniform_scaling(rov, monkeypatch):
    al = Allocation.from_profile(rov)
    real = al._solver.solve

    def failing(raise_error=False):
        res = real(raise_error=False)
        res.info.status_val = AL.osqp.SolverStatus.OSQP_PRIMAL_INFEASIBLE
        res.info.status = "primal infeasible"
        return res

    monkeypatch.setattr(al._solver, "solve", failing)
    r = al.allocate([1000.0, 0, 0, 0, 0, 0])
    assert r.status.startswith("fallback") and al.fallbacks == 1
    assert np.all(r.force_n <= al.f_max) and np.all(r.force_n >= al.f_min)
    assert direction_error(r.demanded, r.achieved, al.metric) < 1e-9


def test_bad_demand_is_a_port_error(rov):
    al = Allocation.from_profile(rov)
    with pytest.raises(PortError, match="6 finite numbers"):
        al.allocate([1.0, float("nan"), 0, 0, 0, 0])


# ----------------------------------------------------------------- bad input


def test_geometry_that_cannot_produce_an_axis_names_it():
    remus = _profile("remus100")
    with pytest.raises(ParameterError) as exc:
        Allocation.from_profile(remus, component="alloc")
    text = str(exc.value)
    for axis in ("sway (Y)", "heave (Z)", "roll (K)", "pitch (M)", "yaw (N)"):
        assert axis in text
    assert "surge (X)" not in text.split("(fix")[0] and "alloc" in text
    # surge alone is fine when the other axes are left uncontrolled
    al = Allocation.from_profile(remus, weights=(1, 0, 0, 0, 0, 0))
    r = al.allocate([20.0, 5.0, 0, 0, 0, 0])
    assert r.force_n[0] == pytest.approx(20.0)


def test_disabling_the_vertical_thrusters_loses_heave(rov):
    with pytest.raises(ParameterError, match=r"heave \(Z\) cannot be produced") as exc:
        Allocation.from_profile(rov, disabled=("t5", "t6", "t7", "t8"))
    # the fix names the axes that remain controllable: X, Y, N (K, M follow Y, X)
    assert "weights = [1, 1, 0, 0, 0, 1]" in str(exc.value)


def test_coupled_axes_are_named_with_their_relation(rov):
    # only the four horizontal thrusters, at z = 0.085 m below the origin: a surge
    # force always brings the pitch moment M = 0.085·X
    B = configuration_matrix(thrusters_from_profile(rov))[:, :4]
    msgs = unproducible_axes(B, [0, 4, 5])  # X, M, N
    assert msgs == [("surge (X) and pitch (M) cannot be produced independently by this "
                     "thruster geometry: every wrench it makes satisfies M = 0.085·X")]
    assert producible_subset(B, [0, 4, 5]) == [0, 5]


def test_one_way_thrusters_that_cannot_reverse_an_axis():
    remus = _profile("remus100")
    remus["thrusters"][0]["max_reverse_n"] = 0.0
    with pytest.raises(ParameterError, match=r"-X") as exc:
        Allocation.from_profile(remus, weights=(1, 0, 0, 0, 0, 0))
    assert "propeller" in str(exc.value)


@pytest.mark.parametrize("change,match", [
    ({"max_reverse_n": -5.0}, "t3.*exclude zero thrust"),
    ({"max_forward_n": 0.0, "max_reverse_n": 0.0}, "t3.*no thrust range"),
    ({"direction": [0.0, 0.0, 0.0]}, "t3.*zero vector"),
    ({"direction": [1.0, 1.0, 0.0]}, "t3.*not a unit vector"),
    ({"position": [0.0, 1.0]}, "t3.*position must be 3 numbers"),
    ({"c_foward": 1e-4}, "t3.*did you mean 'c_forward'"),
    ({"max_forward_n": "fifty"}, "t3.*finite number"),
])
def test_bad_thruster_tables_are_refused_naming_the_thruster(rov, change, match):
    bad = copy.deepcopy(rov)
    bad["thrusters"][2].update(change)
    with pytest.raises(ParameterError, match=match):
        Allocation.from_profile(bad)


def test_infeasible_limits_name_the_thruster(rov):
    B = configuration_matrix(thrusters_from_profile(rov))
    names = [f"t{i}" for i in range(1, 9)]
    lo, hi = -np.full(8, 38.5), np.full(8, 50.0)
    lo2 = lo.copy()
    lo2[6] = 60.0
    with pytest.raises(ParameterError, match=r"t7.*infeasible limits, f_min = 60 N > f_max = 50 N"):
        Allocation(B, lo2, hi, names=names)
    hi2 = hi.copy()
    hi2[1] = lo[1]
    with pytest.raises(ParameterError, match="t2"):
        Allocation(B, lo, hi2, names=names)


@pytest.mark.parametrize("kw,match", [
    ({"method": "magic"}, "method must be one of"),
    ({"saturation": "clip"}, "saturation must be one of"),
    ({"weights": (1, 1, 1)}, "weights must be 6"),
    ({"weights": (0,) * 6}, "not all 0"),
    ({"regularization": -1.0}, "regularization"),
    ({"disabled": ("t9",)}, "unknown thrusters"),
    ({"derate": 1.5}, "derate"),
])
def test_bad_options_are_refused(rov, kw, match):
    with pytest.raises(ParameterError, match=match):
        Allocation.from_profile(rov, **kw)


def test_every_shipped_profile_with_thrusters_parses():
    with_thrusters = 0
    for path in sorted(PROFILES.glob("*.toml")):
        profile = tomllib.loads(path.read_text())
        if "thrusters" not in profile:
            # Passive bodies (the lander) and hull-only variants: the allocator
            # refuses them, naming the table to add.
            with pytest.raises(ParameterError, match=r"\[\[thrusters\]\]"):
                thrusters_from_profile(profile)
            continue
        specs = thrusters_from_profile(profile)
        with_thrusters += 1
        assert specs and all(abs(np.linalg.norm(t.direction) - 1) < 1e-9 for t in specs)
    assert with_thrusters >= 6
