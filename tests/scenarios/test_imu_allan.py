"""IMU acceptance (issue 4): the Allan deviation of a stationary simulated IMU (32 h at
25 Hz, 2,880,000 samples per axis; the issue asks >= 2 h) recovers the configured
angle/velocity random walk (at τ = 1 s) and bias instability (flat minimum / 0.664) on
every axis, and the rate random walk (the slope +1/2 line read at τ = 3 s) from the
Allan deviation pooled over the three identically configured axes, within ±10 %, for
gyro and accelerometer; and one bias-instability Gauss–Markov process has the
stationary variance and lag autocorrelation e^(−τ/T).

Why 32 h and pooling for K: the random walk dominates the flicker floor only from
τ ≈ 300 s (3.5 τ_K), where a short record holds few independent intervals; from 8 h the
pooled K scattered by 6 % with a single-GM bias and reached −11.5 % with the flicker band
(issue 23). 25 Hz instead of 100 Hz keeps the sample count: the Allan deviation at
τ ≥ dt does not depend on the rate. The presets themselves are checked against their
datasheet figures in test_imu_allan_presets.py.

The Allan deviation here is written from the textbook definition (overlapping
estimator on the integrated signal), independently of the model's own theory.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sensors.common import G
from moonpool.components.sdk.noise import KeyedNoise
from moonpool.components.sensors.imu import ImuModel, ImuModelParams, TriadErrors, gauss_markov

# The configuration under test: MEMS-like white noise and quantization (the ADIS16448
# preset's N, LSB, range), with B = 0.8·N·√s, K = 0.1·N/s and T_c = 10 s so that white
# noise, the bias-instability floor and the rate random walk each own a decade of τ
# inside the record (with the datasheet's own B and K the gyro random walk lies beyond
# 2 h and cannot be read; the preset stays faithful to the datasheet).
_MEMS = ImuModelParams.mems()
ALLAN = ImuModelParams(
    gyro=TriadErrors(noise_density=3.4e-4, bias_instability=2.72e-4, bias_correlation_s=10.0,
                     random_walk=3.4e-5, scale_factor=_MEMS.gyro.scale_factor,
                     misalignment=_MEMS.gyro.misalignment, temperature_coeff=(0.0, 0.0, 0.0),
                     lsb=_MEMS.gyro.lsb, range=_MEMS.gyro.range),
    accel=TriadErrors(noise_density=4e-3, bias_instability=3.2e-3, bias_correlation_s=10.0,
                      random_walk=4e-4, scale_factor=_MEMS.accel.scale_factor,
                      misalignment=_MEMS.accel.misalignment, temperature_coeff=(0.0, 0.0, 0.0),
                      lsb=_MEMS.accel.lsb, range=_MEMS.accel.range),
)

DT = 0.04
N_SAMPLES = 2_880_000  # 32 h at 25 Hz
N_GM, GM_DT = 720_000, 0.01  # 2 h at 100 Hz for the Gauss-Markov test
TOL = 0.10


def overlapping_adev(y: np.ndarray, dt: float, ms: np.ndarray) -> np.ndarray:
    """Overlapping Allan deviation of the rate samples y at τ = m·dt (IEEE 952, eq. for
    overlapping estimates): with θ the integral of y (θ_0 = 0),
    σ²(τ) = Σ (θ_{k+2m} − 2θ_{k+m} + θ_k)² / (2 τ² (L − 2m))."""
    theta = np.concatenate([[0.0], np.cumsum(y, dtype=np.float64)]) * dt
    L = len(theta)
    out = np.empty(len(ms))
    for i, m in enumerate(ms):
        d = theta[2 * m:] - 2.0 * theta[m:L - m] + theta[:L - 2 * m]
        tau = m * dt
        out[i] = math.sqrt(np.sum(d * d) / (2.0 * tau * tau * (L - 2 * m)))
    return out


def read_allan(taus: np.ndarray, adev: np.ndarray) -> tuple[float, float, float]:
    """(N at τ = 1 s, B = flat minimum / 0.664, K from the +1/2 line at τ = 3 s fitted on
    the random-walk region τ ∈ [300 s, a tenth of the record]). The region starts at
    3.5 τ_K (τ_K = 3(0.664 B)²/K² = 85 s, where the random walk alone reaches the floor):
    the flicker floor persists under the random walk and biases K read from there by
    +2.3 % (from 100 s: +7.2 %; figures from the theoretical curve)."""
    n = float(adev[np.argmin(np.abs(taus - 1.0))])
    b = float(adev.min() / 0.664)
    rw = (taus >= 300.0) & (taus <= N_SAMPLES * DT / 10)
    k = float(np.exp(np.mean(np.log(adev[rw]) - 0.5 * np.log(taus[rw] / 3.0))))
    return n, b, k


@pytest.fixture(scope="module")
def stationary():
    model = ImuModel(ALLAN, DT, seed=2024, name="imu")
    f = np.tile([0.0, 0.0, -G], (N_SAMPLES, 1))
    out = model.run(f, np.zeros((N_SAMPLES, 3)))
    ms = np.unique(np.round(np.logspace(0, math.log10(N_SAMPLES // 9), 60)).astype(int))
    ms = np.union1d(ms, [round(1.0 / DT)])  # τ = 1 s exactly
    return out, ms * DT, ms


@pytest.mark.parametrize("triad", ["gyro", "accel"])
def test_allan_recovers_configured_terms(stationary, triad, record_property):
    out, taus, ms = stationary
    cfg: TriadErrors = getattr(ALLAN, triad)
    lines, adevs, failures = [], [], []
    for axis in range(3):
        adev = overlapping_adev(out[triad][:, axis], DT, ms)
        adevs.append(adev)
        n, b, k = read_allan(taus, adev)
        errs = {"N": n / cfg.noise_density - 1, "B": b / cfg.bias_instability - 1}
        lines.append(f"{triad}[{axis}] N {n:.4g} ({errs['N']:+.1%}) B {b:.4g} ({errs['B']:+.1%}) "
                     f"min at tau {taus[np.argmin(adev)]:.1f} s; K this axis alone {k:.4g} "
                     f"({k / cfg.random_walk - 1:+.1%})")
        failures += [lines[-1] for e in errs.values() if abs(e) > TOL]
    pooled = np.sqrt(np.mean(np.square(adevs), axis=0))
    _, _, k = read_allan(taus, pooled)
    lines.append(f"{triad} pooled K {k:.4g} (configured {cfg.random_walk:.4g}, "
                 f"{k / cfg.random_walk - 1:+.1%})")
    if abs(k / cfg.random_walk - 1) > TOL:
        failures.append(lines[-1])
    print("\n".join(lines))
    assert not failures, failures
    record_property(f"allan_{triad}", "; ".join(lines))


def test_gauss_markov_variance_and_autocorrelation():
    """One bias-instability process (``gauss_markov``, the recursion the model sums over
    its flicker band) from keyed normals: the stationary variance σ² and the lag-τ
    autocorrelation e^(−τ/T) within sampling error. The standard error of a sample
    variance of an AR(1) with coefficient φ is σ²·√(2(1+φ²)/(n(1−φ²))). Split runs
    continue the process exactly."""
    T, sigma = 2.0, 1e-3
    n = N_GM
    phi = math.exp(-GM_DT / T)
    w = KeyedNoise(7, "gm").normal_range(0, n, "gm", 3)
    b = gauss_markov(w, sigma, phi, True, np.zeros(3))
    half = gauss_markov(w[: n // 2].copy(), sigma, phi, True, np.zeros(3))
    rest = gauss_markov(w[n // 2:].copy(), sigma, phi, False, half[-1])
    assert np.array_equal(np.concatenate([half, rest]), b)
    phi = math.exp(-GM_DT / T)
    n_eff = n * 3
    se_var = math.sqrt(2 * (1 + phi**2) / (n_eff * (1 - phi**2)))
    var = float(np.mean(b * b))
    assert abs(var / sigma**2 - 1) < 3 * se_var, (var, sigma**2, se_var)
    for lag_s in (0.5, 2.0, 4.0):
        lag = round(lag_s / GM_DT)
        rho = float(np.mean(b[lag:] * b[:-lag]) / var)
        # Bartlett's standard error of an AR(1) autocorrelation at lag h.
        r = math.exp(-lag_s / T)
        se = math.sqrt(((1 + phi**2) * (1 - r**2) / (1 - phi**2) - 2 * lag * r**2) / n_eff)
        print(f"GM lag {lag_s} s: rho {rho:.4f} theory {r:.4f} se {se:.4f}; var ratio "
              f"{var / sigma**2:.4f} se {se_var:.4f}")
        assert abs(rho - r) < 3 * se, (lag_s, rho, r, se)
