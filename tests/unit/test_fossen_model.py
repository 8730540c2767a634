"""The CasADi Fossen model (components/control/fossen.py) against the real FMU.

The hydrodynamics FMU is the reference: it is started (co-simulation, no step taken)
at random states — tilted, turning, with a current, an offset CG, products of
inertia — with random inputs, and its accelerations du … dr and kinematic rates
der(n) … der(qz) are compared with the CasADi expressions at the same state. Both
backends, and the environment terms (pycnocline, hull compression, Earth rotation).
Then properties of the model that do not need the FMU, and the reachable wrench box
of the BlueROV2 Heavy computed by hand.
"""

from __future__ import annotations

import math
import shutil
import tomllib

import casadi as ca
import numpy as np
import pytest
from conftest import ROOT
from moonpool.components.actuation.geometry import thrusters_from_profile
from moonpool.components.control.fossen import (
    FossenModel,
    rotation_euler,
    rotation_quaternion,
)
from moonpool.components.control.limits import reachable_box

PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"
ACC = ["du", "dv", "dw", "dp", "dq", "dr"]
KIN = ["der(n)", "der(e)", "der(d)", "der(qw)", "der(qx)", "der(qy)", "der(qz)", "qw", "qx", "qy", "qz"]


def profile(name: str) -> dict:
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


class FmuAt:
    """The FMU initialised at a given state and inputs (FMI 3 co-simulation, no step)."""

    def __init__(self, path, values: dict) -> None:
        from fmpy import extract, read_model_description
        from fmpy.fmi3 import FMU3Slave

        md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.vars = {v.name: v for v in md.modelVariables}
        self.fmu = FMU3Slave(guid=md.guid, unzipDirectory=self.dir,
                             modelIdentifier=md.coSimulation.modelIdentifier, instanceName="ref")
        self.fmu.instantiate()
        for name, value in values.items():
            v = self.vars[name]
            if v.type == "Float64":
                self.fmu.setFloat64([v.valueReference], [float(value)])
            elif v.type == "Int32":
                self.fmu.setInt32([v.valueReference], [int(value)])
            else:
                self.fmu.setBoolean([v.valueReference], [bool(value)])
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def get(self, names) -> np.ndarray:
        return np.array(self.fmu.getFloat64([self.vars[n].valueReference for n in names]))

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def random_case(rng, params: dict) -> tuple:
    """FMU start values for a random state: (values, η = (n, e, d, φ, θ, ψ), ν, τ, v_c)."""
    euler = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), rng.uniform(-math.pi, math.pi)])
    nu = np.r_[rng.uniform(-0.8, 0.8, 3), rng.uniform(-0.8, 0.8, 3)]
    tau = np.r_[rng.uniform(-60, 60, 3), rng.uniform(-8, 8, 3)]
    current = rng.uniform(-0.3, 0.3, 3)
    depth = rng.uniform(0.5, 30.0)
    values = {**params, "init_d": depth, "init_roll": euler[0], "init_pitch": euler[1],
              "init_yaw": euler[2],
              **{f"init_{c}": nu[i] for i, c in enumerate("uvwpqr")},
              **{f"tau_{c}": tau[i] for i, c in enumerate("XYZKMN")},
              **{f"current_{c}": current[i] for i, c in enumerate("ned")}}
    return values, np.r_[0.0, 0.0, depth, euler], nu, tau, current


def casadi_nu_dot(model: FossenModel, q: np.ndarray, depth: float, nu, tau, current) -> np.ndarray:
    R = rotation_quaternion(ca.DM(q))
    return np.array(model.nu_dot(R, depth, ca.DM(nu), ca.DM(tau), ca.DM(current))).ravel()


@pytest.mark.parametrize("backend", [0, 1])
def test_accelerations_equal_the_fmu_at_random_states(fmus, backend):
    rng = np.random.default_rng(3 + backend)
    # Make the rigid body general: CG off the origin, products of inertia.
    params = {**profile("bluerov2_heavy")["parameters"], "x_g": 0.01, "y_g": -0.004, "z_g": 0.02,
              "Ixy": 0.01, "Ixz": -0.02, "Iyz": 0.005, "backend": backend}
    model = FossenModel(params)
    for _ in range(6):
        values, eta, nu, tau, current = random_case(rng, params)
        fmu = FmuAt(fmus[3], values)
        try:
            expected, kin = fmu.get(ACC), fmu.get(KIN)
        finally:
            fmu.close()
        got = casadi_nu_dot(model, kin[7:11], eta[2], nu, tau, current)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-10)


def test_environment_terms_equal_the_fmu(fmus):
    """Pycnocline density, hull compression and the Earth-rotation Coriolis force."""
    params = {**profile("hadal_small")["parameters"], "earth_rotation": True, "latitude": 11.3}
    model = FossenModel(params)
    rng = np.random.default_rng(7)
    for depth in (50.0, 480.0, 1200.0, 6000.0):
        values, _eta, nu, tau, current = random_case(rng, params)
        values["init_d"] = depth
        fmu = FmuAt(fmus[3], values)
        try:
            expected, kin, rho = fmu.get(ACC), fmu.get(KIN), fmu.get(["rho"])[0]
        finally:
            fmu.close()
        assert float(model.density(depth)) == pytest.approx(rho, rel=1e-12)
        got = casadi_nu_dot(model, kin[7:11], depth, nu, tau, current)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-10)


def test_euler_state_derivative_matches_the_fmu_kinematics(fmus):
    """η̇₁ = R ν₁ equals the FMU's der(n, e, d), and Θ̇ = T(Θ) ν₂ equals the rate of the
    Euler angles of the FMU's quaternion moving at its der(q)."""
    params = profile("bluerov2_heavy")["parameters"]
    model = FossenModel(params)
    f = model.euler_function()
    rng = np.random.default_rng(11)
    for _ in range(5):
        values, eta, nu, tau, current = random_case(rng, params)
        fmu = FmuAt(fmus[3], values)
        try:
            acc, kin = fmu.get(ACC), fmu.get(KIN)
        finally:
            fmu.close()
        xdot = np.array(f(np.r_[eta, nu], np.r_[tau], current)).ravel()
        np.testing.assert_allclose(xdot[0:3], kin[0:3], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(xdot[6:12], acc, rtol=1e-9, atol=1e-10)

        def euler(q):
            q = q / np.linalg.norm(q)
            R = np.array(rotation_quaternion(ca.DM(q)))
            return np.array([math.atan2(R[2, 1], R[2, 2]), -math.asin(R[2, 0]), math.atan2(R[1, 0], R[0, 0])])

        h = 1e-6
        q, qdot = kin[7:11], kin[3:7]
        rates = (euler(q + h * qdot) - euler(q - h * qdot)) / (2 * h)
        np.testing.assert_allclose(xdot[3:6], rates, rtol=1e-6, atol=1e-7)
        # And the Euler rotation matrix is the quaternion's.
        np.testing.assert_allclose(np.array(rotation_euler(*eta[3:6])),
                                   np.array(rotation_quaternion(ca.DM(q))), atol=1e-12)


def test_model_properties_without_the_fmu():
    model = FossenModel(profile("bluerov2_heavy")["parameters"])
    # M = M_RB + M_A, symmetric positive definite, with the documented diagonal.
    assert np.allclose(model.M, model.M.T) and np.all(np.linalg.eigvalsh(model.M) > 0)
    np.testing.assert_allclose(np.diag(model.M), [19.86, 20.62, 32.18, 0.449, 0.365, 0.592])
    rng = np.random.default_rng(0)
    for _ in range(5):
        nu = ca.DM(rng.normal(size=6))
        # Skew-symmetric Coriolis: no power (νᵀ C(ν) ν = 0); damping dissipates.
        assert abs(float(nu.T @ model.coriolis_rb(nu) @ nu)) < 1e-12
        assert abs(float(nu.T @ model.coriolis_added(nu) @ nu)) < 1e-12
        assert float(nu.T @ model.damping(nu) @ nu) > 0
    # Positive magnitudes: a forward force gives the closed-form terminal speed (ν̇ = 0).
    d1, d2, x = 13.7, 141.0, 40.0
    u = (-d1 + math.sqrt(d1 * d1 + 4 * d2 * x)) / (2 * d2)
    level = np.eye(3)
    acc = np.array(model.nu_dot(ca.DM(level), 0.0, ca.DM([u, 0, 0, 0, 0, 0]),
                                ca.DM([x, 0, -model.net_weight(), 0, 0, 0]))).ravel()
    np.testing.assert_allclose(acc, 0.0, atol=1e-12)
    # W − B of the BlueROV2 Heavy profile: 13.5·9.81 − 1000·9.81·0.0134.
    assert model.net_weight() == pytest.approx(13.5 * 9.81 - 1000 * 9.81 * 0.0134, rel=1e-12)


def test_negative_coefficient_is_refused():
    with pytest.raises(ValueError, match="D2_w"):
        FossenModel({"D2_w": -5.0})


def test_reachable_box_of_the_bluerov2_heavy_by_hand():
    """Horizontal thrusters at ±45°: X_max = cos 45° (2·50 + 2·38.5); heave by the four
    vertical thrusters (up: forward 50 N each; down: reverse 38.5 N each); yaw arm
    |x d_y − y d_x| = (0.156 + 0.111) cos 45°."""
    lo, hi = reachable_box(thrusters_from_profile(profile("bluerov2_heavy")))
    c = math.cos(math.pi / 4)
    assert hi[0] == pytest.approx(c * 177.0) and lo[0] == pytest.approx(-c * 177.0)
    assert hi[1] == pytest.approx(c * 177.0) and lo[1] == pytest.approx(-c * 177.0)
    assert lo[2] == pytest.approx(-200.0) and hi[2] == pytest.approx(154.0)
    assert hi[5] == pytest.approx((0.156 + 0.111) * c * 177.0)
    assert lo[5] == pytest.approx(-hi[5])
