"""Single-axis calibration trials: their design, and their simulation by the
hydrodynamics FMU with realistic sensor noise, to check ``moonpool calibrate hydro``
against a known profile (docs/calibration-hydro.md, "Designing trials").

Call order::

    design(level, sine_amplitude) -> [Shape]       the thrust of each trial of one axis
    simulate(fmu, params, axis, shape) -> (t, tau, true velocity)
    true + sensor_noise(axis, true, seed)          the measured velocity
    write_csv(path, axis, t, tau, measured)        the trial CSV that calibrate reads

Design, per axis, with a thrust level L (the vehicle's working thrust on that axis)
and a sinusoid amplitude S (chosen for a velocity amplitude of about 0.3 m/s or
rad/s: S ≈ 0.3 ω m_RB):

- fitted: steps of ±0.03 L and ±0.1 L held 100 s (low speeds, where the linear damping
  D1·ν is comparable with D2·ν², long enough to average the sensor noise; both signs so
  that a constant force (heave: B − W) is not taken for D1), steps of 0.3 L, L and 2 L
  held 20 s then released (the quadratic damping and the coast-down), and a sinusoid of
  amplitude S and period 4 s for 120 s, where the inertial term (m + A) ν̇ dominates
  the damping: it determines the added mass, also where A is a small part of the
  inertia (REMUS surge, 0.84 kg beside 31 kg);
- held out: a sinusoid of 1.5 L, period 8 s, and a step of 0.6 L (30 s each).

The measured velocity is the FMU's plus the noise of moonpool's sensors at 10 Hz:
linear axes a DVL's white noise, σ = 5 mm/s + 0.3 % of |ν| (the default Janus DVL's
beam noise 3 mm/s + 0.2 % mapped through its 25° beams, docs/sensors.md (dvl)); yaw
rate the MEMS IMU preset's gyro (``ImuModel``: white noise, the bias-instability band,
rate random walk, quantization), sampled at 10 Hz.
"""

from __future__ import annotations

import math
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..sensors.common import G
from ..sensors.imu import ImuModel, ImuModelParams

THRUST = {"u": "tau_X", "v": "tau_Y", "w": "tau_Z", "p": "tau_K", "q": "tau_M", "r": "tau_N"}
DT = 0.1
"""Trial sample period, s (a DVL's 10 Hz)."""
DVL_NOISE_MPS = 0.005
"""White noise floor of the measured linear velocity, m/s."""
DVL_NOISE_FRACTION = 0.003
"""White noise proportional to |ν| of the measured linear velocity."""
LEVELS = {
    "bluerov2_heavy": {"u": (20.0, 10.0), "v": (20.0, 10.0), "w": (15.0, 15.0), "r": (1.5, 3.0)},
    "remus100": {"u": (3.0, 15.0), "v": (10.0, 28.0), "w": (10.0, 28.0), "r": (2.0, 3.5)},
}
"""(L, S) per axis for the shipped profiles' trials, N or N·m. L keeps every step inside
the single-axis regime (REMUS surge below about 0.9 m/s, where the Munk moment starts to
pitch the bare hull); S ≈ 0.3 ω (m + A) at ω = 2π/4 s."""


@dataclass(frozen=True)
class Shape:
    """The thrust of one trial."""

    name: str
    """Short name (step_+0.03, sine_4s, …)."""
    thrust: np.ndarray
    """Thrust at each sample (held over the sample period), N or N·m."""
    held_out: bool
    """True for the trials replayed (NRMSE), not fitted."""


def _step(level: float, on_s: float, length_s: float) -> np.ndarray:
    t = np.arange(round(length_s / DT)) * DT
    return np.where(t < on_s - 1e-9, level, 0.0)


def _sine(amplitude: float, period_s: float, length_s: float) -> np.ndarray:
    t = np.arange(round(length_s / DT)) * DT
    return amplitude * np.sin(2.0 * math.pi * t / period_s)


def design(level: float, sine_amplitude: float) -> list[Shape]:
    """The trials of one axis (module docstring): fitted ones first, held-out last."""
    out = [Shape(f"step_{f:+g}", _step(f * level, 100.0, 110.0), False)
           for f in (0.03, -0.03, 0.1, -0.1)]
    out += [Shape(f"step_{f:+g}", _step(f * level, 20.0, 30.0), False) for f in (0.3, 1.0, 2.0)]
    out.append(Shape("sine_4s", _sine(sine_amplitude, 4.0, 120.0), False))
    out.append(Shape("sine_8s", _sine(1.5 * level, 8.0, 30.0), True))
    out.append(Shape("step_+0.6", _step(0.6 * level, 20.0, 30.0), True))
    return out


@contextmanager
def initialized(fmu: Path | str, params: dict, name: str = "trial"):
    """The hydrodynamics FMU (co-simulation, FMI 3, through fmpy) instantiated with the
    start values ``params`` and initialized: yields (instance, variables by name);
    terminated, freed and its unpacked folder removed on exit."""
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Slave

    md = read_model_description(str(fmu))
    unzipped = extract(str(fmu))
    refs = {v.name: v for v in md.modelVariables}
    inst = FMU3Slave(guid=md.guid, unzipDirectory=unzipped,
                     modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
    try:
        inst.instantiate()
        for key, value in params.items():
            v = refs[key]
            if v.type == "Float64":
                inst.setFloat64([v.valueReference], [float(value)])
            elif v.type == "Int32":
                inst.setInt32([v.valueReference], [int(value)])
            else:
                inst.setBoolean([v.valueReference], [bool(value)])
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        yield inst, refs
        inst.terminate()
        inst.freeInstance()
    finally:
        shutil.rmtree(unzipped, ignore_errors=True)


def simulate(fmu: Path | str, params: dict, axis: str, shape: Shape,
             depth_m: float = 5.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drive the FMU (the full coupled 6-DOF model) from rest at ``depth_m`` with the
    trial's thrust on ``axis`` (every other input zero) and return the sample instants,
    the thrust and the true velocity of the axis."""
    n = len(shape.thrust)
    true = np.empty(n)
    with initialized(fmu, dict(params, init_d=depth_m)) as (inst, refs):
        vel, tau = refs[axis].valueReference, refs[THRUST[axis]].valueReference
        for k in range(n):
            true[k] = inst.getFloat64([vel])[0]
            inst.setFloat64([tau], [float(shape.thrust[k])])
            inst.doStep(k * DT, DT)
    return np.arange(n) * DT, shape.thrust.copy(), true


def sensor_noise(axis: str, true: np.ndarray, seed: int) -> np.ndarray:
    """The measurement error added to the true velocity (module docstring)."""
    if axis in ("p", "q", "r"):
        i = "pqr".index(axis)
        w = np.zeros((len(true), 3))
        w[:, i] = true
        imu = ImuModel(ImuModelParams.mems(), DT, seed, "trial_gyro")
        return imu.run(np.tile([0.0, 0.0, -G], (len(true), 1)), w)["gyro"][:, i] - true
    rng = np.random.default_rng(seed)
    return (DVL_NOISE_MPS + DVL_NOISE_FRACTION * np.abs(true)) * rng.standard_normal(len(true))


def write_csv(path: Path | str, axis: str, t: np.ndarray, tau: np.ndarray,
              measured: np.ndarray) -> None:
    """One trial CSV in the format ``calibration.read_trial`` reads."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"t,{THRUST[axis]},{axis}\n")
        f.writelines(f"{a:.3f},{b:.9g},{c:.9g}\n" for a, b, c in zip(t, tau, measured))
