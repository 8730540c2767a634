"""Model exchange of the hydrodynamics FMUs (FMI 3.0 and 2.0): validation, the state
vector, derivatives against the co-simulation dynamics, and CVode (fmpy) against the
FMUs' own co-simulation RK4 under constant inputs."""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest


fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description  # noqa: E402
from fmpy.fmi2 import FMU2Model, FMU2Slave  # noqa: E402
from fmpy.fmi3 import FMU3Model, FMU3Slave  # noqa: E402

STATES = ["n", "e", "d", "qw", "qx", "qy", "qz", "u", "v", "w", "p", "q", "r"]
DERIVATIVES = ["der(n)", "der(e)", "der(d)", "der(qw)", "der(qx)", "der(qy)", "der(qz)",
               "du", "dv", "dw", "dp", "dq", "dr"]
NX = len(STATES)
# Constant wrench for the ME/CS comparison: surge 20 N, heave 5 N, yaw moment 1 N m.
WRENCH = {"tau_X": 20.0, "tau_Z": 5.0, "tau_N": 1.0}
STOP = 20.0


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def _constant_input(values: dict[str, float]) -> np.ndarray:
    names = list(values)
    return np.array([(0.0, *values.values()), (STOP, *values.values())],
                    dtype=[("time", np.float64)] + [(n, np.float64) for n in names])


class Model:
    """An FMU instantiated for model exchange, driven through fmpy's low-level API."""

    def __init__(self, path, version, params=None):
        self.md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.version = version
        self.vars = {v.name: v for v in self.md.modelVariables}
        cls = FMU3Model if version == 3 else FMU2Model
        self.fmu = cls(guid=self.md.guid, unzipDirectory=self.dir,
                       modelIdentifier=self.md.modelExchange.modelIdentifier, instanceName="hydro-me")
        self.fmu.instantiate()
        if version == 2:
            self.fmu.setupExperiment(startTime=0.0)
        self.set(params or {})
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        flags = self.fmu.newDiscreteStates() if version == 2 else self.fmu.updateDiscreteStates()
        assert not any(flags[:5])  # no update needed, no termination, nothing changed, no time event
        self.fmu.enterContinuousTimeMode()

    def set(self, values):
        for name, value in values.items():
            vr = [self.vars[name].valueReference]
            (self.fmu.setFloat64 if self.version == 3 else self.fmu.setReal)(vr, [float(value)])

    def get(self, names):
        vrs = [self.vars[n].valueReference for n in names]
        return np.array((self.fmu.getFloat64 if self.version == 3 else self.fmu.getReal)(vrs))

    def states(self):
        x = np.zeros(NX)
        self.fmu.getContinuousStates(_ptr(x), NX)
        return x

    def set_states(self, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        self.fmu.setContinuousStates(_ptr(x), NX)

    def derivatives(self):
        dx = np.zeros(NX)
        (self.fmu.getContinuousStateDerivatives if self.version == 3 else self.fmu.getDerivatives)(_ptr(dx), NX)
        return dx

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def _random_state(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return np.r_[rng.normal(size=3) * 5, q, rng.normal(size=3) * 0.5, rng.normal(size=3) * 0.3]


def _rotation(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_validates_and_declares_13_states(fmus, version):
    from fmpy.validation import validate_fmu
    assert validate_fmu(str(fmus[version])) == []
    md = read_model_description(str(fmus[version]))
    assert md.modelExchange is not None and md.coSimulation is not None
    assert md.modelExchange.modelIdentifier == md.coSimulation.modelIdentifier == "hydrodynamics"
    assert md.numberOfContinuousStates == NX and md.numberOfEventIndicators == 0
    assert [d.variable.name for d in md.derivatives] == DERIVATIVES
    assert [d.variable.derivative.name for d in md.derivatives] == STATES
    assert md.modelExchange.needsCompletedIntegratorStep


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_state_derivatives_and_outputs_follow_the_set_state(fmus, version):
    m = Model(fmus[version], version, {"init_n": 1.0, "init_d": 2.0, "init_yaw": 0.3, "init_u": 0.4})
    x0 = m.states()
    assert x0[:3] == pytest.approx([1.0, 0.0, 2.0])
    assert x0[3:7] == pytest.approx([np.cos(0.15), 0, 0, np.sin(0.15)])
    assert x0[7] == 0.4
    if version == 3:
        assert m.fmu.getNumberOfContinuousStates() == NX and m.fmu.getNumberOfEventIndicators() == 0
    nominals = np.zeros(NX)
    m.fmu.getNominalsOfContinuousStates(_ptr(nominals), NX)
    assert np.all(nominals == 1.0)

    rng = np.random.default_rng(7)
    m.set({"tau_X": 12.0, "tau_M": 0.4, "current_e": 0.2})
    for _ in range(3):
        x = _random_state(rng)
        m.set_states(x)
        m.fmu.setTime(1.5)
        dx = m.derivatives()
        # the state variables (outputs) are the state; der(*) / du..dr are the derivatives
        assert np.array_equal(m.get(STATES), x)
        assert np.array_equal(m.get(DERIVATIVES), dx)
        assert m.get(["time"])[0] == 1.5
        # kinematics
        assert dx[:3] == pytest.approx(_rotation(x[3:7]) @ x[7:10], abs=1e-12)
        w = x[10:13]
        qw, qv = x[3], x[4:7]
        assert dx[3] == pytest.approx(-0.5 * qv @ w, abs=1e-12)
        assert dx[4:7] == pytest.approx(0.5 * (qw * w + np.cross(qv, w)), abs=1e-12)
        # Euler outputs from the quaternion
        yaw = np.arctan2(2 * (qw * x[6] + x[4] * x[5]), 1 - 2 * (x[5] ** 2 + x[6] ** 2))
        assert m.get(["yaw"])[0] == pytest.approx(yaw, abs=1e-12)
        # inputs change the derivatives when read again
        m.set({"tau_X": 30.0})
        assert m.derivatives()[7] > dx[7]
        m.set({"tau_X": 12.0})
        enter_event, terminate = m.fmu.completedIntegratorStep()
        assert not enter_event and not terminate
    z = np.zeros(1)
    m.fmu.getEventIndicators(_ptr(z), 0)
    m.close()


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_derivatives_equal_co_simulation_accelerations(fmus, version):
    """getDerivatives at the state the co-simulation FMU reached = its du..dr outputs."""
    md = read_model_description(str(fmus[version]))
    d = extract(str(fmus[version]))
    cls = FMU3Slave if version == 3 else FMU2Slave
    cs = cls(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
             instanceName="cs")
    cs.instantiate()
    if version == 2:
        cs.setupExperiment(startTime=0.0)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    get = cs.getFloat64 if version == 3 else cs.getReal
    set_ = cs.setFloat64 if version == 3 else cs.setReal
    cs.enterInitializationMode()
    cs.exitInitializationMode()
    set_([vr[k] for k in WRENCH], list(WRENCH.values()))
    t = 0.0
    for _ in range(150):
        cs.doStep(t, 0.02)
        t += 0.02
    x_cs = np.array(get([vr[n] for n in STATES]))
    der_cs = np.array(get([vr[n] for n in DERIVATIVES]))
    cs.terminate()
    cs.freeInstance()
    shutil.rmtree(d, ignore_errors=True)

    m = Model(fmus[version], version, WRENCH)
    m.set_states(x_cs)
    dx = m.derivatives()
    m.close()
    assert np.abs(x_cs[3:7] @ x_cs[3:7] - 1) < 1e-14
    assert np.allclose(dx, der_cs, rtol=0, atol=1e-13)


def _me_and_cs(path, **kw):
    out = STATES + ["roll", "pitch", "yaw", "du", "dw", "dr"]
    common = dict(stop_time=STOP, output_interval=0.1, input=_constant_input(WRENCH), output=out, **kw)
    me = fmpy.simulate_fmu(str(path), fmi_type="ModelExchange", relative_tolerance=1e-8, **common)
    cs = fmpy.simulate_fmu(str(path), fmi_type="CoSimulation", **common)
    return me, cs


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_cvode_matches_co_simulation(fmus, version):
    me, cs = _me_and_cs(fmus[version])
    assert me["time"][-1] == pytest.approx(STOP) and np.array_equal(me["time"], cs["time"])
    pos = max(np.max(np.abs(me[k] - cs[k])) for k in "ned")
    vel = max(np.max(np.abs(me[k] - cs[k])) for k in "uvwpqr")
    assert pos < 1e-4 and vel < 1e-4, (pos, vel)
    assert max(np.max(np.abs(me[k] - cs[k])) for k in ("qw", "qx", "qy", "qz", "yaw")) < 1e-4
    # the vehicle really moved: forward, down, and turned
    assert np.hypot(cs["n"][-1], cs["e"][-1]) > 0.5 and cs["d"][-1] > 0.3 and abs(cs["r"][-1]) > 0.5
    q2 = me["qw"] ** 2 + me["qx"] ** 2 + me["qy"] ** 2 + me["qz"] ** 2
    assert np.max(np.abs(q2 - 1)) < 1e-6


def test_hydro_me_fmi3_and_fmi2_agree(fmus):
    runs = [_me_and_cs(fmus[v])[0] for v in (3, 2)]
    for k in STATES + ["yaw", "du"]:
        assert np.allclose(runs[0][k], runs[1][k], rtol=0, atol=1e-12), k


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_tunable_parameters_only_in_event_mode(fmus, version):
    m = Model(fmus[version], version, {"init_u": 0.5})
    du = m.derivatives()[7]
    m.fmu.enterEventMode()
    m.set({"D2_u": 0.0})
    flags = m.fmu.newDiscreteStates() if version == 2 else m.fmu.updateDiscreteStates()
    assert not any(flags[:5])
    m.fmu.enterContinuousTimeMode()
    assert m.derivatives()[7] > du     # less drag
    m.fmu.enterEventMode()
    m.set({"D2_u": -1.0})
    with pytest.raises(Exception):     # an invalid value is rejected when applied
        m.fmu.newDiscreteStates() if version == 2 else m.fmu.updateDiscreteStates()
    m.fmu.freeInstance()
    shutil.rmtree(m.dir, ignore_errors=True)

    m = Model(fmus[version], version)
    with pytest.raises(Exception):     # continuous-time mode: only inputs may change
        m.set({"D2_u": 0.0})
    m.fmu.freeInstance()
    shutil.rmtree(m.dir, ignore_errors=True)


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_fmu_state_restores_continuous_state(fmus, version):
    m = Model(fmus[version], version, WRENCH)
    x = _random_state(np.random.default_rng(3))
    m.set_states(x)
    dx = m.derivatives()
    state = m.fmu.getFMUState()
    m.set_states(x * 0.5)
    assert not np.array_equal(m.states(), x)
    m.fmu.setFMUState(state)
    assert np.array_equal(m.states(), x) and np.array_equal(m.derivatives(), dx)
    m.fmu.freeFMUState(state)
    m.close()
