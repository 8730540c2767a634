"""The hydrodynamics FMUs (FMI 3.0 and 2.0) built from C, through co-simulation: validation,
structure of the dynamics, terminal speeds, FMU state, parameter checks, and an
independent numerical solution of the same equations (scipy solve_ivp)."""

from __future__ import annotations

import shutil
import tomllib

import numpy as np
import pytest

from conftest import ROOT

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description, extract  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.fmi3 import FMU3Slave  # noqa: E402

PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"
OUTPUTS = ["n", "e", "d", "qw", "qx", "qy", "qz", "roll", "pitch", "yaw",
           "u", "v", "w", "p", "q", "r", "du", "dv", "dw", "dp", "dq", "dr", "rho"]


class Hydro:
    """Drive the FMU through fmpy's low-level API (FMI 2 or 3, same calls here)."""

    def __init__(self, path, version, params=None, unpacked=None):
        self.md = read_model_description(str(path))
        self.dir = unpacked or extract(str(path))
        self.version = version
        self.vars = {v.name: v for v in self.md.modelVariables}
        cls = FMU3Slave if version == 3 else FMU2Slave
        self.fmu = cls(guid=self.md.guid, unzipDirectory=self.dir,
                       modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName="hydro")
        self.fmu.instantiate()
        self.t = 0.0
        self.messages = []
        if version == 2:
            self.fmu.setupExperiment(startTime=0.0)
        if params:
            self.set(params)

    def set(self, values):
        for name, value in values.items():
            v = self.vars[name]
            t = v.type
            if t in ("Float64", "Real"):
                (self.fmu.setFloat64 if self.version == 3 else self.fmu.setReal)([v.valueReference], [float(value)])
            elif t in ("Int32", "Integer"):
                (self.fmu.setInt32 if self.version == 3 else self.fmu.setInteger)([v.valueReference], [int(value)])
            else:
                self.fmu.setBoolean([v.valueReference], [bool(value)])

    def init(self):
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        return self

    def get(self, names=OUTPUTS):
        vrs = [self.vars[n].valueReference for n in names]
        vals = (self.fmu.getFloat64 if self.version == 3 else self.fmu.getReal)(vrs)
        return np.array(vals)

    def step(self, dt):
        self.fmu.doStep(self.t, dt)
        self.t += dt

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def profile(name):
    with open(PROFILES / f"{name}.toml", "rb") as f:
        return tomllib.load(f)["parameters"]


def neutral(params):
    """Same vehicle made exactly neutrally buoyant (V = m / rho)."""
    p = dict(params)
    p["volume"] = p["mass"] / p["rho_surface"]
    return p


# ---------------------------------------------------------------------------
# An independent implementation of the documented equations (docs/hydrodynamics.md)
# written with numpy/scipy: rotation from scipy, C_RB in Fossen's velocity-independent
# form (2011, eq. 3.60) rather than the generic form used in the C code.
# ---------------------------------------------------------------------------

def S(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


class Reference:
    def __init__(self, p):
        self.p = {k: float(v) for k, v in p.items()}
        g = lambda k, d=0.0: self.p.get(k, d)  # noqa: E731
        self.m = g("mass")
        self.rg = np.array([g("x_g"), g("y_g"), g("z_g")])
        self.rb = np.array([g("x_b"), g("y_b"), g("z_b")])
        Ig = np.array([[g("Ixx"), -g("Ixy"), -g("Ixz")], [-g("Ixy"), g("Iyy"), -g("Iyz")],
                       [-g("Ixz"), -g("Iyz"), g("Izz")]])
        self.Io = Ig - self.m * S(self.rg) @ S(self.rg)
        H = np.block([[np.eye(3), S(self.rg).T], [np.zeros((3, 3)), np.eye(3)]])
        MCG = np.block([[self.m * np.eye(3), np.zeros((3, 3))], [np.zeros((3, 3)), Ig]])
        self.MRB = H.T @ MCG @ H
        backend = int(g("backend"))
        self.A = np.array([g(f"A_{c}") for c in "uvwpqr"]) * (1.0 if backend == 0 else 0.0)
        self.M = self.MRB + np.diag(self.A)
        self.D1 = np.array([g(f"D1_{c}") for c in "uvwpqr"])
        self.D2 = np.array([g(f"D2_{c}") for c in "uvwpqr"])
        self.gacc = g("g", 9.81)
        self.W = self.m * self.gacc
        self.B = g("rho_surface", 1000.0) * self.gacc * g("volume")

    def CRB(self, nu):
        n2 = nu[3:]
        m, rg = self.m, self.rg
        return np.block([[m * S(n2), -m * S(n2) @ S(rg)], [m * S(rg) @ S(n2), -S(self.Io @ n2)]])

    def CA(self, nur):
        a1 = self.A[:3] * nur[:3]
        a2 = self.A[3:] * nur[3:]
        return np.block([[np.zeros((3, 3)), -S(a1)], [-S(a1), -S(a2)]])

    def rotation(self, q):
        from scipy.spatial.transform import Rotation
        return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()

    def rhs(self, x, tau, current=np.zeros(3)):
        q, nu = x[3:7], x[7:]
        R = self.rotation(q / np.linalg.norm(q))
        nur = nu - np.r_[R.T @ current, 0, 0, 0]
        fg = R.T @ np.array([0, 0, self.W])
        fb = -R.T @ np.array([0, 0, self.B])
        gvec = -np.r_[fg + fb, np.cross(self.rg, fg) + np.cross(self.rb, fb)]
        damp = (self.D1 + self.D2 * np.abs(nur)) * nur
        nudot = np.linalg.solve(self.M, tau - self.CRB(nu) @ nu - self.CA(nur) @ nur - damp - gvec)
        w, x_, y, z = q
        p_, q_, r_ = nu[3:]
        qdot = 0.5 * np.array([-x_ * p_ - y * q_ - z * r_, w * p_ + y * r_ - z * q_,
                               w * q_ + z * p_ - x_ * r_, w * r_ + x_ * q_ - y * p_])
        return np.r_[R @ nu[:3], qdot, nudot]

    def initial(self):
        from scipy.spatial.transform import Rotation
        g = lambda k: self.p.get(k, 0.0)  # noqa: E731
        r = Rotation.from_euler("ZYX", [g("init_yaw"), g("init_pitch"), g("init_roll")]).as_quat()
        return np.r_[[g("init_n"), g("init_e"), g("init_d")], [r[3], r[0], r[1], r[2]],
                     [g(f"init_{c}") for c in "uvwpqr"]]


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", [3, 2])
def test_hydro_fmu_validates_and_simulates(fmus, version):
    from fmpy.validation import validate_fmu
    assert validate_fmu(str(fmus[version])) == []
    res = fmpy.simulate_fmu(str(fmus[version]), stop_time=10.0, step_size=0.01,
                            start_values={"tau_X": 20.0, "tau_N": 1.0}, output=["n", "u", "du", "yaw"])
    assert res["time"][-1] == pytest.approx(10.0)
    assert np.all(np.isfinite(res["n"])) and res["u"][-1] > 0.2


def test_hydro_fmu_interface_identical_in_fmi2_and_fmi3(fmus):
    md3 = read_model_description(str(fmus[3]))
    md2 = read_model_description(str(fmus[2]))
    a = [(v.name, v.valueReference, v.causality, v.variability, v.start) for v in md3.modelVariables]
    b = [(v.name, v.valueReference, v.causality, v.variability, v.start) for v in md2.modelVariables]
    assert a == b
    assert md3.coSimulation.canGetAndSetFMUstate and md2.coSimulation.canGetAndSetFMUstate
    names = {v.name for v in md3.modelVariables}
    for n in OUTPUTS + [f"tau_{c}" for c in "XYZKMN"] + [f"ext_{c}" for c in "XYZKMN"] + \
            ["current_n", "current_e", "current_d", "backend", "substep", "pycnocline_depth",
             "pycnocline_width", "pycnocline_delta_rho", "bulk_modulus", "earth_rotation", "latitude"]:
        assert n in names


def test_hydro_fmi2_and_fmi3_give_identical_trajectories(fmus):
    runs = []
    for v in (3, 2):
        h = Hydro(fmus[v], v, {**profile("bluerov2_heavy"), "tau_X": 15.0, "tau_N": 0.7, "tau_Z": 5.0}).init()
        for _ in range(300):
            h.step(0.01)
        runs.append(h.get())
        h.close()
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("backend", [0, 1])
def test_hydro_accelerations_are_m_inverse_rhs(fmus, backend):
    """du..dr come from the dynamics: M^-1 (tau - C nu - D nu - g) at a tumbling, tilted state."""
    p = {**profile("remus100"), "x_g": 0.01, "y_g": -0.005, "Ixz": 0.02, "backend": backend,
         "init_roll": 0.3, "init_pitch": -0.2, "init_yaw": 1.0, "init_u": 1.2, "init_v": 0.1,
         "init_w": -0.2, "init_p": 0.3, "init_q": -0.2, "init_r": 0.1, "init_d": 3.0}
    tau = np.array([10, -3, 4, 0.5, -1.0, 0.8])
    cur = np.array([0.3, -0.2, 0.05])
    inputs = {**{f"tau_{c}": tau[i] for i, c in enumerate("XYZKMN")},
              **{f"current_{c}": cur[i] for i, c in enumerate("ned")}}
    h = Hydro(fmus[3], 3, {**p, **inputs}).init()
    out = h.get()
    h.close()
    ref = Reference(p)
    # M symmetric positive definite (same documented formula as the C code)
    assert np.allclose(ref.M, ref.M.T, atol=0) and np.all(np.linalg.eigvalsh(ref.M) > 0)
    expect = ref.rhs(ref.initial(), tau, cur)[7:]
    np.testing.assert_allclose(out[16:22], expect, rtol=1e-10, atol=1e-12)


def test_hydro_nu_C_nu_is_zero_for_random_nu(fmus):
    """With D = 0 and g = 0 the FMU's acceleration is -M^-1 C(nu) nu; nu^T M nu_dot = -nu^T C nu = 0."""
    rng = np.random.default_rng(1)
    base = {**profile("bluerov2_heavy"), "x_g": 0.02, "y_g": -0.01, "z_g": 0.03, "Ixy": 0.01,
            "Ixz": -0.02, "Iyz": 0.015, "g": 0.0}
    base.update({f"D{k}_{c}": 0.0 for k in (1, 2) for c in "uvwpqr"})
    M = Reference(base).M
    worst = 0.0
    for _ in range(20):
        nu = rng.normal(size=6)
        h = Hydro(fmus[3], 3, {**base, **{f"init_{c}": nu[i] for i, c in enumerate("uvwpqr")}}).init()
        nudot = h.get()[16:22]
        h.close()
        worst = max(worst, abs(nu @ M @ nudot) / (np.linalg.norm(M @ nudot) * np.linalg.norm(nu)))
    assert worst < 1e-12


def test_hydro_kinetic_energy_conserved_while_tumbling(fmus):
    p = {**profile("bluerov2_heavy"), "x_g": 0.01, "y_g": -0.005, "z_g": 0.02, "Ixz": 0.02}
    p.update({"x_b": p["x_g"], "y_b": p["y_g"], "z_b": p["z_g"]})  # r_b = r_g
    p = neutral(p)  # W = B  => g(eta) = 0
    p.update({f"D{k}_{c}": 0.0 for k in (1, 2) for c in "uvwpqr"})
    p.update({"init_u": 0.5, "init_v": -0.2, "init_w": 0.1, "init_p": 1.5, "init_q": -0.8, "init_r": 2.0})
    M = Reference(p).M
    h = Hydro(fmus[3], 3, p).init()
    nu0 = h.get()[10:16]
    E0 = 0.5 * nu0 @ M @ nu0
    for _ in range(10000):
        h.step(0.01)
    nu = h.get()[10:16]
    h.close()
    drift = abs(0.5 * nu @ M @ nu - E0) / E0
    print(f"kinetic energy relative drift over 100 s: {drift:.3e}")
    assert drift < 1e-6
    assert np.linalg.norm(nu - nu0) > 0.1  # it did tumble


@pytest.mark.parametrize("name", ["bluerov2_heavy", "remus100"])
def test_hydro_neutral_vehicle_at_rest_stays(fmus, name):
    h = Hydro(fmus[3], 3, neutral(profile(name))).init()
    for _ in range(600):
        h.step(0.1)
    pos = h.get()[0:3]
    h.close()
    print(f"{name}: max displacement after 60 s at rest: {np.abs(pos).max():.3e} m")
    assert np.abs(pos).max() < 1e-9


@pytest.mark.parametrize("axis,force,idx", [("X", 30.0, 0), ("Z", 25.0, 2), ("X", -20.0, 0)])
def test_hydro_terminal_speed_matches_closed_form(fmus, axis, force, idx):
    p = neutral(profile("bluerov2_heavy"))
    h = Hydro(fmus[3], 3, {**p, f"tau_{axis}": force}).init()
    for _ in range(300):
        h.step(0.1)
    speed = h.get()[10 + idx]
    h.close()
    c = "uvw"[idx]
    D1, D2, X = p[f"D1_{c}"], p[f"D2_{c}"], abs(force)
    expect = np.sign(force) * (-D1 + np.sqrt(D1 * D1 + 4 * D2 * X)) / (2 * D2)
    print(f"terminal {c} under {force} N: {speed:.12f} vs {expect:.12f} (rel err {abs(speed / expect - 1):.2e})")
    assert speed == pytest.approx(expect, rel=1e-9)


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_state_get_set_restores_exactly(fmus, version):
    h = Hydro(fmus[version], version, {**profile("bluerov2_heavy"), "tau_X": 10.0, "tau_N": 0.5}).init()
    for _ in range(50):
        h.step(0.01)
    state = h.fmu.getFMUState() if version == 3 else h.fmu.getFMUstate()
    t0 = h.t
    for _ in range(50):
        h.step(0.01)
    first = h.get()
    (h.fmu.setFMUState if version == 3 else h.fmu.setFMUstate)(state)
    h.t = t0
    for _ in range(50):
        h.step(0.01)
    again = h.get()
    # serialize / deserialize round trip as well
    if version == 3:
        blob = h.fmu.serializeFMUState(state)
        state2 = h.fmu.deserializeFMUState(blob)
        h.fmu.setFMUState(state2)
        h.fmu.freeFMUState(state2)
        h.t = t0
        for _ in range(50):
            h.step(0.01)
        assert np.array_equal(first, h.get())
    (h.fmu.freeFMUState if version == 3 else h.fmu.freeFMUstate)(state)
    h.close()
    assert np.array_equal(first, again)


@pytest.mark.parametrize("version", [3, 2])
@pytest.mark.parametrize("name,value", [("mass", 0.0), ("volume", -1.0), ("D2_w", -5.0),
                                        ("Ixx", float("nan")), ("substep", 0.0), ("backend", 7)])
def test_hydro_invalid_parameter_is_rejected_by_name(fmus, version, name, value):
    md = read_model_description(str(fmus[version]))
    d = extract(str(fmus[version]))
    messages = []

    cls = FMU3Slave if version == 3 else FMU2Slave
    fmu = cls(guid=md.guid, unzipDirectory=d, modelIdentifier="hydrodynamics", instanceName="hydro")
    if version == 3:
        fmu.instantiate(logMessage=lambda env, status, cat, msg: messages.append(msg.decode()))
    else:
        from fmpy.fmi2 import fmi2CallbackLoggerTYPE
        from fmpy.fmi2 import fmi2CallbackFunctions, fmi2CallbackAllocateMemoryTYPE, \
            fmi2CallbackFreeMemoryTYPE, calloc, free
        cb = fmi2CallbackFunctions()
        cb.logger = fmi2CallbackLoggerTYPE(lambda env, inst, status, cat, msg: messages.append(msg.decode()))
        cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        fmu.instantiate(callbacks=cb)
        fmu.setupExperiment(startTime=0.0)
    vr = next(v.valueReference for v in md.modelVariables if v.name == name)
    if name == "backend":
        (fmu.setInt32 if version == 3 else fmu.setInteger)([vr], [value])
    else:
        (fmu.setFloat64 if version == 3 else fmu.setReal)([vr], [value])
    fmu.enterInitializationMode()
    with pytest.raises(Exception):
        fmu.exitInitializationMode()
    assert any(name in m for m in messages), messages
    fmu.freeInstance()
    shutil.rmtree(d, ignore_errors=True)


def _fmu_trajectory(path, params, schedule, dt, t_end):
    h = Hydro(path, 3, params).init()
    ts, xs = [0.0], [h.get()[[0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15]]]
    k = 0
    for t_start, wrench in schedule:
        t_stop = schedule[k + 1][0] if k + 1 < len(schedule) else t_end
        h.set({f"tau_{c}": wrench[i] for i, c in enumerate("XYZKMN")})
        while h.t < t_stop - 1e-9:
            h.step(dt)
            ts.append(h.t)
            xs.append(h.get()[[0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15]])
        k += 1
    h.close()
    return np.array(ts), np.array(xs)


def _reference_trajectory(params, schedule, t_eval, t_end):
    from scipy.integrate import solve_ivp
    ref = Reference(params)
    x = ref.initial()
    out = [x]
    for k, (t_start, wrench) in enumerate(schedule):
        t_stop = schedule[k + 1][0] if k + 1 < len(schedule) else t_end
        sel = np.minimum(t_eval[(t_eval > t_start + 1e-9) & (t_eval <= t_stop + 1e-9)], t_stop)
        sol = solve_ivp(lambda t, y: ref.rhs(y, np.asarray(wrench, float)), (t_start, t_stop), x,
                        method="DOP853", rtol=1e-10, atol=1e-12, t_eval=sel)
        assert sol.success
        out.extend(sol.y.T)
        x = sol.y[:, -1]
    return np.array(out)


@pytest.mark.parametrize("name,schedule", [
    ("bluerov2_heavy", [(0, [20, 0, 0, 0, 0, 0]), (10, [10, 15, -8, 0.5, 0, 1.0]),
                        (20, [-15, 0, 10, 0, 0.5, -0.8]), (35, [5, -10, 0, -0.3, 0, 0.4]),
                        (50, [0, 0, 0, 0, 0, 0])]),
    ("remus100", [(0, [40, 0, 0, 0, 0, 0]), (15, [40, 0, 5, 0, 3, 2.0]),
                  (30, [30, 8, -5, 0.2, -2, -3]), (45, [0, 0, 0, 0, 0, 0])]),
])
def test_hydro_matches_independent_solution(fmus, name, schedule):
    params = profile(name)
    ts, fmu_x = _fmu_trajectory(fmus[3], params, schedule, 0.05, 60.0)
    ref_x = _reference_trajectory(params, schedule, ts, 60.0)
    err = np.linalg.norm(fmu_x[:, :3] - ref_x[:, :3], axis=1).max()
    print(f"{name}: max position error vs solve_ivp over 60 s: {err:.3e} m "
          f"(travelled {np.linalg.norm(ref_x[-1, :3]):.2f} m)")
    assert err < 1e-3
    assert np.linalg.norm(ref_x[-1, :3]) > 1.0  # the motion is not trivial


def test_hydro_environment_pycnocline_compression_and_earth_rotation(fmus):
    hadal = profile("hadal_small")
    # density output follows the documented linear ramp (seed 000: +0.3 % over 0..1000 m)
    for depth, frac in [(0.0, 0.0), (250.0, 0.25), (1000.0, 1.0), (6000.0, 1.0)]:
        h = Hydro(fmus[3], 3, {**hadal, "init_d": depth}).init()
        rho = h.get(["rho"])[0]
        h.close()
        assert rho == pytest.approx(hadal["rho_surface"] + frac * hadal["pycnocline_delta_rho"], rel=1e-14)
    # heave acceleration at rest at 6000 m follows rho(d) g V(d) - m g, with
    # p(d) = g * integral of rho and V = V0 (1 - p / K)
    d, g, r0, dr = 6000.0, 9.81, hadal["rho_surface"], hadal["pycnocline_delta_rho"]
    p_gauge = g * (r0 * d + dr * (d - 500.0))  # ramp 0..1000 m: integral = 500 + (d - 1000)
    V = hadal["volume"] * (1 - p_gauge / hadal["bulk_modulus"])
    net_up = (r0 + dr) * g * V - hadal["mass"] * g
    h = Hydro(fmus[3], 3, {**hadal, "init_d": d}).init()
    dw = h.get(["dw"])[0]
    h.close()
    assert dw == pytest.approx(-net_up / (hadal["mass"] + hadal["A_w"]), rel=1e-9)
    assert net_up < 0  # the compressed hull is heavy at 6000 m although buoyant at the surface
    # Earth rotation: surging north at 45 deg N deflects to the right (east) in the northern hemisphere
    p = {**neutral(profile("bluerov2_heavy")), "init_u": 1.0, "earth_rotation": True, "latitude": 45.0}
    h = Hydro(fmus[3], 3, p).init()
    dv = h.get(["dv"])[0]
    h.close()
    expect = 2 * 7.292115e-5 * np.sin(np.radians(45)) * 1.0 * p["mass"] / (p["mass"] + p["A_v"])
    assert dv == pytest.approx(expect, rel=1e-9)


@pytest.mark.parametrize("dt", [0.01, 0.0123, 0.1])
def test_hydro_communication_step_need_not_be_a_multiple_of_substep(fmus, dt):
    """Any communication step works (last sub-step partial); results converge to the 1 ms grid."""
    p = {**profile("bluerov2_heavy"), "tau_X": 20.0, "tau_N": 0.5}
    h = Hydro(fmus[3], 3, p).init()
    n = int(round(2.46 / dt))
    for _ in range(n):
        h.step(dt)
    a = h.get()
    t = h.t
    h.close()
    ref = Reference(p)
    from scipy.integrate import solve_ivp
    tau = np.array([20.0, 0, 0, 0, 0, 0.5])
    sol = solve_ivp(lambda _t, y: ref.rhs(y, tau), (0, t), ref.initial(), method="DOP853",
                    rtol=1e-10, atol=1e-12)
    assert np.abs(a[0:3] - sol.y[0:3, -1]).max() < 1e-9
