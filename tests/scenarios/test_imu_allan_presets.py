"""IMU presets against their datasheet figures, read with an independent Allan
estimator (allantools' overlapping ADEV) the textbook way (IEEE 952): for the MEMS and
tactical presets, gyro and accelerometer, every axis:

- B = Allan floor / 0.664 within ±5 % (issue 23): floor = the minimum of the estimated
  curve over τ ∈ [1 s, record/20] of a 24 h stationary record;
- N = the slope −1/2 line read at τ = 1 s, fitted where white noise owns the curve
  (τ ≤ 0.3 s), within ±10 %;
- K = the slope +1/2 line read at τ = 3 s, fitted on τ ∈ [16 τ_K, record/10] of the
  Allan deviation pooled over the three identically configured axes, within ±10 %;
  τ_K = 3 (0.664 B)²/K² is where the random walk alone reaches the floor (at 16 τ_K it
  is 4× the floor, which then biases K by +3 %).

Records are 864,000 samples. The Allan deviation of the model at τ ≥ dt does not depend
on the sample rate (white noise of density N, Gauss–Markov and random-walk processes are
discretised exactly), so the 24 h record is sampled at 10 Hz instead of the rigs'
100 Hz, and K is read from a second record of 640 τ_K sampled at 640 τ_K / 864,000
(for the tactical gyro τ_K = 4.8e7 s: the random walk is not visible in any record a
lab would take, which the second record makes explicit). The figures of one seed are
in docs/sensors.md (imu).
"""

from __future__ import annotations

import math
from dataclasses import replace

import allantools
import numpy as np
import pytest

from moonpool.components.sensors.common import G
from moonpool.components.sensors.imu import (FLICKER_FACTOR, ImuModel, ImuModelParams,
                                              allan_deviation_model)

pytestmark = pytest.mark.slow

SAMPLES = 864_000
DAY_S = 86_400.0
WHITE_DT, WHITE_SAMPLES = 0.1, 36_000  # 1 h at 10 Hz for N
SEED = 2024
TOL_B, TOL_NK = 0.05, 0.10


def _record(params: ImuModelParams, dt: float, triad: str, n: int = SAMPLES) -> np.ndarray:
    """n stationary, level samples of one triad, (n, 3)."""
    out = ImuModel(params, dt, SEED, "imu").run(np.tile([0.0, 0.0, -G], (n, 1)),
                                                np.zeros((n, 3)))
    return out[triad]


def _oadev(y: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """allantools' overlapping Allan deviation at 90 log-spaced τ = m·dt, m ≤ len/5."""
    ms = np.unique(np.round(np.logspace(0, math.log10(len(y) // 5), 90)).astype(int))
    taus, adev, _, _ = allantools.oadev(y, rate=1.0 / dt, data_type="freq", taus=ms * dt)
    return np.asarray(taus), np.asarray(adev)


def _unquantized(params: ImuModelParams) -> ImuModelParams:
    """The preset without quantization, for the records sampled slower than 10 Hz."""
    return replace(params, gyro=replace(params.gyro, lsb=0.0),
                   accel=replace(params.accel, lsb=0.0))


def _pooled(y: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """τ and the Allan deviation pooled over the three axes (mean Allan variance)."""
    curves = [_oadev(y[:, axis], dt) for axis in range(3)]
    return curves[0][0], np.sqrt(np.mean([c[1] ** 2 for c in curves], axis=0))


@pytest.mark.parametrize("grade, triad", [("mems", "gyro"), ("mems", "accel"),
                                          ("tactical", "gyro"), ("tactical", "accel")])
def test_preset_allan_figures(grade, triad):
    params = getattr(ImuModelParams, grade)()
    cfg = getattr(params, triad)
    F = FLICKER_FACTOR * cfg.bias_instability
    lines, failures = [], []

    # N: the slope -1/2 line where white noise owns the curve, read at 1 s, per axis.
    y = _record(params, WHITE_DT, triad, WHITE_SAMPLES)
    for axis in range(3):
        taus, adev = _oadev(y[:, axis], WHITE_DT)
        white = taus <= 0.3 + 1e-9
        n = float(np.exp(np.mean(np.log(adev[white]) + 0.5 * np.log(taus[white]))))
        e_n = n / cfg.noise_density - 1
        lines.append(f"{grade} {triad}[{axis}] N {n:.4g} ({e_n:+.1%})")
        if abs(e_n) > TOL_NK:
            failures.append(lines[-1])

    # B: the floor of the pooled curve over tau in [1 s, 10 tau_f] (tau_f: where the
    # floor begins), from a record of max(24 h, 1e4 tau_f).
    grid = np.logspace(-1, 7, 801)
    theory = allan_deviation_model(grid, cfg.noise_density, cfg.gm_sigma, cfg.gm_band,
                                   cfg.random_walk)
    tau_f = float(grid[np.argmax(theory <= 1.05 * F)])
    dt_b = max(DAY_S, 1e4 * tau_f) / SAMPLES
    coarse = _unquantized(params)
    taus, pooled = _pooled(_record(coarse, dt_b, triad), dt_b)
    sel = (taus >= 1.0) & (taus <= max(10.0 * tau_f, 10.0))
    i = int(np.argmin(np.where(sel, pooled, np.inf)))
    b = float(pooled[i] / FLICKER_FACTOR)
    e_b = b / cfg.bias_instability - 1
    lines.append(f"{grade} {triad} B pooled {b:.4g} ({e_b:+.1%}) floor at tau {taus[i]:.0f} s "
                 f"from {SAMPLES * dt_b / 3600:.0f} h at dt {dt_b:.3g} s")
    if abs(e_b) > TOL_B:
        failures.append(lines[-1])

    # K: the slope +1/2 line read at 3 s, on [16 tau_K, record/10] of a 2560 tau_K record.
    tau_k = 3.0 * (F / cfg.random_walk) ** 2
    dt_k = 2560.0 * tau_k / SAMPLES
    taus, pooled = _pooled(_record(coarse, dt_k, triad), dt_k)
    rw = (taus >= 16.0 * tau_k) & (taus <= SAMPLES * dt_k / 10)
    k = float(np.exp(np.mean(np.log(pooled[rw]) - 0.5 * np.log(taus[rw] / 3.0))))
    e_k = k / cfg.random_walk - 1
    lines.append(f"{grade} {triad} K pooled {k:.4g} ({e_k:+.1%}) from {SAMPLES * dt_k:.3g} s "
                 f"at dt {dt_k:.3g} s ({int(rw.sum())} taus)")
    if abs(e_k) > TOL_NK:
        failures.append(lines[-1])
    print("\n".join(lines))
    assert not failures, failures
