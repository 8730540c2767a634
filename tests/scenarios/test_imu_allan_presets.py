"""IMU presets against their datasheet figures, read with an independent Allan
estimator (allantools' overlapping ADEV) the textbook way (IEEE 952), for the MEMS and
tactical presets, gyro and accelerometer (issue 23):

- B = Allan floor / 0.664 within ±5 % **per axis**: the floor read from each axis's
  curve as its minimum over τ ∈ [1 s, record/1000] (``read_floor`` of
  docs/figures/imu_allan_records.py, imported here so that the test and the study use
  one estimator), from a record of 24 h for the accelerometers, 4 days for the MEMS gyro
  and 64 days for the tactical gyro. Those are the shortest records on which the study
  (8 seeds × 3 axes per length, seeds 7000+; this test draws seed 2024) finds the reading
  unbiased and scattering by ≤ 1.5 % (1σ) per axis, so that ±5 % holds at about 3σ. On
  24 h the gyros do not reach 3σ: the MEMS gyro's floor (a valley at τ ≈ 170 s between
  white noise and random walk) reads −0.1 ± 2.0 % over τ ≤ day/300 (2.5σ), and the
  tactical gyro's floor, reached only beyond τ ≈ 1,000 s where a day holds few
  independent averages, +3 ± 7 % at best (54 % of the axes within 5 %): the datasheet's
  N and B fix how much of a day's spectrum the bias instability owns (docs/sensors.md
  (imu), "Reading B from a record").
- N = the slope −1/2 line read at τ = 1 s, fitted where white noise owns the curve
  (τ ≤ 0.3 s) of 1 h at 10 Hz, per axis, within ±10 %;
- K = the slope +1/2 line read at τ = 3 s, fitted on τ ∈ [16 τ_K, record/10] of the
  Allan deviation pooled over the three identically configured axes, within ±10 %;
  τ_K = 3 (0.664 B)²/K² is where the random walk alone reaches the floor (at 16 τ_K it
  is 4× the floor, which then biases K by +3 %); the record is 2,560 τ_K long (for the
  tactical gyro τ_K = 4.8e7 s: its random walk is not visible in any record a lab would
  take, which this record makes explicit).

Records are sampled at dt = min(record/864,000, T_c/10), so 864,000 samples or more (the
tactical gyro's 64 d at dt = 6 s: 921,600), without quantization (``imu_allan_records.stationary``). The figures are in docs/sensors.md (imu).
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from conftest import ROOT
from moonpool.components.sensors.imu import FLICKER_FACTOR, ImuModelParams

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location(
    "imu_allan_records", ROOT / "docs" / "figures" / "imu_allan_records.py")
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)

SEED = 2024
WHITE_DT, WHITE_SAMPLES = 0.1, 36_000  # 1 h at 10 Hz for N
RECORD_DAYS = {("mems", "gyro"): 4, ("mems", "accel"): 1, ("tactical", "gyro"): 64,
               ("tactical", "accel"): 1}
TOL_B, TOL_NK = 0.05, 0.10


def _pooled(y: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """τ and the Allan deviation pooled over the three axes (mean Allan variance)."""
    curves = [study.oadev(y[:, axis], dt) for axis in range(3)]
    return curves[0][0], np.sqrt(np.mean([c[1] ** 2 for c in curves], axis=0))


@pytest.mark.parametrize("grade, triad", list(RECORD_DAYS))
def test_preset_allan_figures(grade, triad):
    cfg = getattr(getattr(ImuModelParams, grade)(), triad)
    F = FLICKER_FACTOR * cfg.bias_instability
    lines, failures = [], []

    # N: the slope -1/2 line where white noise owns the curve, read at 1 s, per axis.
    y = study.stationary(grade, WHITE_DT, WHITE_SAMPLES, SEED)[triad]
    for axis in range(3):
        taus, adev = study.oadev(y[:, axis], WHITE_DT)
        white = taus <= 0.3 + 1e-9
        n = float(np.exp(np.mean(np.log(adev[white]) + 0.5 * np.log(taus[white]))))
        e_n = n / cfg.noise_density - 1
        lines.append(f"{grade} {triad}[{axis}] N {n:.4g} ({e_n:+.1%})")
        if abs(e_n) > TOL_NK:
            failures.append(lines[-1])

    # B per axis: the floor over tau in [1 s, record/1000].
    record = RECORD_DAYS[(grade, triad)] * 86_400.0
    dt = study.sample_period(record, cfg)
    y = study.stationary(grade, dt, round(record / dt), SEED)[triad]
    for axis in range(3):
        taus, adev = study.oadev(y[:, axis], dt)
        b = study.read_floor(taus, adev, record) / FLICKER_FACTOR
        e_b = b / cfg.bias_instability - 1
        lines.append(f"{grade} {triad}[{axis}] B {b:.4g} ({e_b:+.1%}) from "
                     f"{record / 86_400:g} d at dt {dt:.3g} s")
        if abs(e_b) > TOL_B:
            failures.append(lines[-1])

    # K: the slope +1/2 line read at 3 s, on [16 tau_K, record/10] of a 2560 tau_K record.
    tau_k = 3.0 * (F / cfg.random_walk) ** 2
    dt_k = 2560.0 * tau_k / study.SAMPLES
    taus, pooled = _pooled(study.stationary(grade, dt_k, study.SAMPLES, SEED)[triad], dt_k)
    rw = (taus >= 16.0 * tau_k) & (taus <= study.SAMPLES * dt_k / 10)
    k = float(np.exp(np.mean(np.log(pooled[rw]) - 0.5 * np.log(taus[rw] / 3.0))))
    e_k = k / cfg.random_walk - 1
    lines.append(f"{grade} {triad} K pooled {k:.4g} ({e_k:+.1%}) from {study.SAMPLES * dt_k:.3g} s "
                 f"at dt {dt_k:.3g} s ({int(rw.sum())} taus)")
    if abs(e_k) > TOL_NK:
        failures.append(lines[-1])
    print("\n".join(lines))
    assert not math.isnan(k) and not failures, failures
