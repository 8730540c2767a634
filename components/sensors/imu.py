"""Strap-down IMU: specific force and angular rate at the mount, with the stochastic
errors of a real MEMS or tactical-grade device (docs/sensors.md (imu)).

Truth (seed 004, "Canonical IMU"), from the dynamics' own acceleration, never a
finite difference::

    a = v̇ + ω×v + ω̇×r + ω×(ω×r)          (body frame, at the lever arm r)
    f = R_bsᵀ (a − R_wbᵀ g),  g = (0, 0, +g) NED  → (0, 0, −g) at rest and level
    ω_s = R_bsᵀ ω

Measurement per triad (gyro, accelerometer), sample k, dt the sample period::

    y_k = Q(clip(M x_k + b_k + n_k + v_k))
    M   = I + diag(scale_factor) + off-diagonal misalignment
    b_k = Σ_j b_j,k + b_RW,k + c_T (T_k − T_ref)              (reported as truth)
    b_j,k = φ_j b_j,k−1 + σ_GM √(1 − φ_j²) w_k,  φ_j = e^(−dt/T_j), b_j,0 = σ_GM w_0
    T_j = T_c · √10^j,  j = 0 … J−1                           (the bias-instability band)
    b_RW,k = b_RW,k−1 + K √dt w_k,  b_RW,0 = 0
    n_k = N / √dt · w_k                                        (white, noise density N)
    v_k = (A_0 + A_1 s̄_k) Σ_j sin(2π f_j k dt + φ_j)          (vibration; s̄ = mean |thruster speed|)

Every w is a keyed standard normal (one channel per quantity), so a batch equals
single steps bit for bit. The stateful processes are run with ``scipy.signal.lfilter``
carrying the previous value, which performs exactly the same floating-point
operations for one sample as for many.

Bias instability. A datasheet's "bias instability" B is read from the Allan
deviation's flat floor, σ_min = 0.664 B: the floor of flicker noise (S(f) ∝ 1/f). One
first-order Gauss–Markov process has an Allan hump, not a floor, and the complete
curve's minimum then lies where white noise, the hump's 1/√τ tail and the random walk
meet, far from 0.664 B (27 % low for the MEMS accelerometer, 90 % for the tactical
gyro). So the bias is a sum of J equal-variance Gauss–Markov processes two per decade
(``flicker_band``: from T_c to where the random walk alone reaches the floor, or beyond
the horizon), which is flicker noise within 0.3 % over that band, and its common σ_GM is
*calibrated* (``gm_sigma_for``) so that the minimum of the complete theoretical Allan
deviation (white + band + RRW, τ from 1 ms to 10⁷ s) is exactly 0.664 B. A configuration
whose white noise and random walk alone reach 0.664 B is refused with the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.signal import lfilter

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import cross, rot_from_quat, rot_rows
from ..sdk.noise import KeyedNoise
from .common import G, Latency, Mount, floats3, quaternion_of, refuse, rint, set_valid

FLICKER_FACTOR = 0.664
"""Allan floor of flicker (bias instability) noise: σ_min = sqrt(2 ln 2 / π) B."""
GM_PEAK = 0.6173636604994069
"""max_τ of the Allan deviation of a unit-variance first-order GM, reached at τ* below."""
GM_PEAK_TAU = 1.8973
"""τ*/T_c where a first-order GM's Allan deviation peaks."""
FLICKER_STEP = math.sqrt(10.0)
"""Ratio of successive correlation times in the flicker band (two per decade)."""
FLICKER_MAX_PROCESSES = 24
"""At most this many Gauss–Markov processes per triad (12 decades)."""
ALLAN_HORIZON_S = 1e7
"""The complete Allan curve the floor is calibrated on: τ from 1 ms to this (116 days)."""
_TAU_GRID = np.logspace(-3.0, math.log10(ALLAN_HORIZON_S), 2001)

# ------------------------------------------------------------------ Allan theory


def gm_allan_variance(tau, sigma: float, corr_s: float):
    """Allan variance of a first-order Gauss–Markov process (stationary std sigma,
    correlation time corr_s) at averaging time tau, x = τ/T::

        σ²(τ) = σ²/x · [2 − (3 − 4e^(−x) + e^(−2x))/x]

    evaluated for x < 0.05 by its Taylor series σ²(2x/3 − x²/2 + 7x³/30 − x⁴/12 +
    31x⁵/1260), where the closed form loses every digit to cancellation.
    """
    tau = np.asarray(tau, dtype=float)
    if sigma == 0.0 or corr_s <= 0.0:
        return np.zeros_like(tau)
    x = np.atleast_1d(tau / corr_s)
    out = np.empty_like(x)
    s = x < 0.05
    xs, xl = x[s], x[~s]
    out[s] = xs * (2 / 3 + xs * (-1 / 2 + xs * (7 / 30 + xs * (-1 / 12 + xs * 31 / 1260))))
    out[~s] = (2.0 - (3.0 - 4.0 * np.exp(-xl) + np.exp(-2.0 * xl)) / xl) / xl
    out = sigma * sigma * out
    return out.reshape(tau.shape)


def allan_deviation_model(tau, noise_density: float, gm_sigma: float, corr_s,
                          random_walk: float):
    """Theoretical Allan deviation of one axis: white (N²/τ) + the Gauss–Markov
    processes of correlation times ``corr_s`` (one time or a sequence), each of
    stationary std ``gm_sigma``, + rate random walk (K²τ/3)."""
    tau = np.asarray(tau, dtype=float)
    var = noise_density**2 / tau + random_walk**2 * tau / 3.0
    for T in np.atleast_1d(np.asarray(corr_s, dtype=float)):
        var = var + gm_allan_variance(tau, gm_sigma, float(T))
    return np.sqrt(var)


def flicker_band(bias_instability: float, corr_s: float, random_walk: float) -> tuple[float, ...]:
    """Correlation times T_j = T_c·√10^j (j = 0, 1, …) of the Gauss–Markov processes
    whose equal-variance sum approximates flicker noise (S(f) ∝ 1/f: a flat Allan
    floor) from τ ≈ 2 T_c up to where the rate random walk takes over,
    τ_K = 3 (0.664 B)²/K² (the τ at which K alone reaches the floor), or, if that
    lies beyond, up to 10·ALLAN_HORIZON_S so that the floor is flat over the whole
    horizon. Two processes per decade keep the floor's ripple below 0.3 %."""
    F = FLICKER_FACTOR * bias_instability
    top = 10.0 * ALLAN_HORIZON_S
    if random_walk > 0.0:
        top = min(top, 3.0 * F * F / (random_walk * random_walk))
    top /= GM_PEAK_TAU  # the last process's Allan peak at τ_K
    n = 1 + max(0, math.ceil(math.log(top / corr_s) / math.log(FLICKER_STEP) - 1e-9))
    if n > FLICKER_MAX_PROCESSES:
        raise ValueError(
            f"the bias-instability band from T_c = {corr_s:.4g} s to {top:.4g} s needs {n} "
            f"Gauss-Markov processes (at most {FLICKER_MAX_PROCESSES})")
    return tuple(float(corr_s * FLICKER_STEP**j) for j in range(n))


def allan_floor(noise_density: float, gm_sigma: float, corr_s, random_walk: float) -> tuple[float, float]:
    """(minimum, its τ) of ``allan_deviation_model`` over the complete curve, τ from
    1 ms to ALLAN_HORIZON_S on a grid of 200 points per decade (the Allan deviation is
    smooth on that scale: the grid error of the minimum is below 1e-4)."""
    a = allan_deviation_model(_TAU_GRID, noise_density, gm_sigma, corr_s, random_walk)
    i = int(np.argmin(a))
    return float(a[i]), float(_TAU_GRID[i])


@lru_cache(maxsize=256)
def gm_sigma_for(noise_density: float, bias_instability: float, corr_s: float,
                 random_walk: float) -> float:
    """σ_GM, the common stationary std of the flicker band's processes
    (``flicker_band``), such that the minimum of the triad's complete theoretical
    Allan deviation (white + band + rate random walk, τ up to ALLAN_HORIZON_S) equals
    0.664·B. The minimum grows monotonically with σ_GM, so it is the root of one
    scalar equation (Brent's method, relative tolerance 1e-10).

    Raises ValueError, naming the figures, when white noise and random walk alone
    already give a minimum ≥ 0.664·B (their floor is 2NK/√3 in variance, at
    τ = √3 N/K), or when the band would need too many processes.
    """
    B, N, K, T = bias_instability, noise_density, random_walk, corr_s
    if B == 0.0:
        return 0.0
    if not T > 0.0:
        raise ValueError("the bias correlation time must be > 0")
    F = FLICKER_FACTOR * B
    band = flicker_band(B, T, K)
    base, tau0 = allan_floor(N, 0.0, band, K)
    if base >= F:
        raise ValueError(
            f"white noise and random walk alone give an Allan deviation of {base:.4g} at "
            f"tau = {tau0:.4g} s, not below 0.664*B = {F:.4g}")
    hi = 10.0 * F
    while allan_floor(N, hi, band, K)[0] < F:  # a band far from the floor needs a large σ
        hi *= 10.0
    return float(brentq(lambda s: allan_floor(N, s, band, K)[0] - F, 0.0, hi,
                        xtol=1e-14 * F, rtol=1e-10))


# ------------------------------------------------------------------ parameters


@dataclass(frozen=True)
class TriadErrors:
    """Error model of one sensor triad. Units: U is rad/s (gyro) or m/s² (accel)."""

    noise_density: float
    """White noise density N, U/√Hz (angle / velocity random walk)."""
    bias_instability: float
    """Bias instability B, U: the Allan floor is 0.664·B (0: no Gauss–Markov bias)."""
    bias_correlation_s: float
    """Shortest correlation time T_c of the bias-instability band, s: the floor is flat
    from τ ≈ 2 T_c (choose T_c ≈ N²/(2 (0.664 B)²), where white noise meets the floor;
    a larger T_c leaves a dip, still calibrated to 0.664 B, before the band)."""
    random_walk: float
    """Bias (rate) random walk K, U·√Hz = U/√s."""
    scale_factor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Per-axis scale-factor error (fraction; 1e-3 = 1000 ppm)."""
    misalignment: tuple[float, ...] = (0.0,) * 6
    """Cross-axis terms (xy, xz, yx, yz, zx, zy) of M, rad (small angles)."""
    temperature_coeff: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Linear bias temperature sensitivity per axis, U/°C."""
    lsb: float = 0.0
    """Quantization step, U (0: none)."""
    range: float = 0.0
    """Measurement range ±, U (0: unlimited)."""
    vibration_amplitude: float = 0.0
    """Vibration amplitude A_0 of each sinusoid, U."""
    vibration_per_radps: float = 0.0
    """Vibration amplitude per rad/s of mean |thruster speed|, A_1, U/(rad/s)."""

    @property
    def gm_band(self) -> tuple[float, ...]:
        """Correlation times T_j of the bias-instability processes, s (``flicker_band``;
        empty when B = 0)."""
        if self.bias_instability == 0.0:
            return ()
        return flicker_band(self.bias_instability, self.bias_correlation_s, self.random_walk)

    @property
    def gm_sigma(self) -> float:
        """Stationary standard deviation σ_GM of each bias-instability process, U
        (``gm_sigma_for``). Raises ValueError where 0.664·B cannot be reached."""
        return gm_sigma_for(self.noise_density, self.bias_instability,
                            self.bias_correlation_s, self.random_walk)

    @property
    def matrix(self) -> np.ndarray:
        """M = I + diag(scale_factor) + misalignment."""
        M = np.eye(3) + np.diag(self.scale_factor)
        for (i, j), m in zip(((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)), self.misalignment):
            M[i, j] += m
        return M


DEG = math.pi / 180.0
HOUR = 3600.0
MG = 1e-3 * G

# MEMS, ADIS16448-class. White noise densities from reference/NOTES.md (gyro 3.4e-4
# rad/s/√Hz, accel 4e-3 m/s²/√Hz); in-run bias stability, LSB and range from the
# ADIS16448 datasheet (14.5 °/h, 0.04 °/s, ±1000 °/s; 0.25 mg, 0.833 mg, ±18 g). The
# datasheet gives no rate random walk: K is set an order below the white noise over
# one hour (gyro 3.4e-6 rad/s/√s, accel 1e-4 m/s²/√s); T_c = 100 s for both. With
# these values the floors sit near τ ≈ 200 s and the random walk beyond 2 h
# (docs/sensors.md (imu)).
_MEMS_GYRO = TriadErrors(
    noise_density=3.4e-4, bias_instability=14.5 * DEG / HOUR, bias_correlation_s=30.0,
    random_walk=3.4e-6, scale_factor=(2e-3, -1.5e-3, 1e-3),
    misalignment=(1e-3, -5e-4, 8e-4, 6e-4, -7e-4, 4e-4),
    temperature_coeff=(1e-5, -1e-5, 5e-6), lsb=0.04 * DEG, range=1000.0 * DEG,
)
_MEMS_ACCEL = TriadErrors(
    noise_density=4e-3, bias_instability=0.25 * MG, bias_correlation_s=3.0,
    random_walk=1e-4, scale_factor=(1.5e-3, 2e-3, -1e-3),
    misalignment=(-6e-4, 5e-4, 1e-3, -8e-4, 4e-4, 7e-4),
    temperature_coeff=(1e-4, 1e-4, -1.5e-4), lsb=0.833 * MG, range=18.0 * G,
)
# Tactical grade (HG1700/ring-laser-class typical figures, not one datasheet): ARW
# 0.125 °/√h, bias instability 1 °/h, RRW 0.01 °/h/√h... expressed per second;
# accel VRW 0.03 m/s/√h, bias instability 50 µg. Gyro T_c = 300 s sits between the white
# (floor reached near τ ≈ 130 s) and RRW regions (beyond 2 h); accel T_c = 30 s (white
# noise reaches the floor near τ ≈ 2 s).
_TAC_GYRO = TriadErrors(
    noise_density=0.125 * DEG / 60.0, bias_instability=1.0 * DEG / HOUR, bias_correlation_s=60.0,
    random_walk=0.01 * DEG / HOUR / 60.0, scale_factor=(1.5e-4, -1e-4, 1e-4),
    misalignment=(5e-5, -5e-5, 4e-5, 3e-5, -4e-5, 2e-5),
    temperature_coeff=(1e-7, -1e-7, 5e-8), lsb=1e-6, range=1000.0 * DEG,
)
_TAC_ACCEL = TriadErrors(
    noise_density=0.03 / 60.0, bias_instability=50e-6 * G, bias_correlation_s=1.0,
    random_walk=1e-5, scale_factor=(3e-4, 2e-4, -2e-4),
    misalignment=(-5e-5, 5e-5, 1e-4, -8e-5, 4e-5, 7e-5),
    temperature_coeff=(1e-5, 1e-5, -1e-5), lsb=1e-5, range=40.0 * G,
)
_IDEAL = TriadErrors(noise_density=0.0, bias_instability=0.0, bias_correlation_s=1.0,
                     random_walk=0.0)


@dataclass(frozen=True)
class ImuModelParams:
    """Error model of an IMU (both triads) and its environment inputs."""

    gyro: TriadErrors = _MEMS_GYRO
    """Gyroscope errors (U = rad/s)."""
    accel: TriadErrors = _MEMS_ACCEL
    """Accelerometer errors (U = m/s²)."""
    reference_temperature_c: float = 25.0
    """Temperature at which the temperature bias term is zero, °C."""
    vibration_freqs_hz: tuple[float, ...] = (47.0, 23.0)
    """Frequencies of the vibration sinusoids, Hz (phases keyed per axis)."""

    @classmethod
    def mems(cls, **kw: Any) -> ImuModelParams:
        """ADIS16448-class MEMS preset."""
        return cls(gyro=_MEMS_GYRO, accel=_MEMS_ACCEL, **kw)

    @classmethod
    def tactical(cls, **kw: Any) -> ImuModelParams:
        """Tactical-grade preset."""
        return cls(gyro=_TAC_GYRO, accel=_TAC_ACCEL, **kw)

    @classmethod
    def ideal(cls, **kw: Any) -> ImuModelParams:
        """No errors at all (truth passes through)."""
        return cls(gyro=_IDEAL, accel=_IDEAL, **kw)


PRESETS = {"mems": ImuModelParams.mems, "tactical": ImuModelParams.tactical,
           "ideal": ImuModelParams.ideal}

# ------------------------------------------------------------------ truth


def specific_force_and_rate(quat, vel, omega, accel, omega_dot, mount: Mount = Mount()):
    """Noise-free specific force and angular rate at the mount, sensor frame.

    Arrays (n, 4) / (n, 3) (or single vectors): quaternion body→NED, body velocity,
    body angular rate, dynamics' body acceleration v̇, angular acceleration ω̇.
    Returns (f_s, ω_s), each (n, 3) (or (3,)).
    """
    q = np.asarray(quat, dtype=float)
    w = np.asarray(omega, dtype=float)
    r = mount.r if w.shape == (3,) else np.broadcast_to(mount.r, w.shape)
    a = (np.asarray(accel, dtype=float) + cross(w, vel) + cross(omega_dot, r)
         + cross(w, cross(w, r)))
    R_wb = rot_from_quat(q)
    g_body = np.einsum("...ji,j->...i", R_wb, np.array([0.0, 0.0, G]))  # R_wbᵀ g
    R_bs = mount.R_bs
    f_s = (a - g_body) @ R_bs  # R_bsᵀ x for row vectors
    w_s = w @ R_bs
    return f_s, w_s


def _cross1(a, b) -> tuple[float, float, float]:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def specific_force_and_rate1(quat, vel, omega, accel, omega_dot,
                             mount: Mount = Mount()) -> tuple[np.ndarray, np.ndarray]:
    """:func:`specific_force_and_rate` of one sample (sequences of floats), computed in
    Python floats: the same operations in the same order, so the same bits (tested),
    at a fraction of NumPy's per-call cost on 3-vectors. The two rotations into the
    sensor frame stay NumPy products: BLAS rounds them its own way (fused multiply-adds),
    which a Python sum would not repeat. Returns (f_s, ω_s), each (3,)."""
    r = mount.lever_arm_m
    w = omega
    wxv, axr, wxr = _cross1(w, vel), _cross1(omega_dot, r), _cross1(w, r)
    wxwxr = _cross1(w, wxr)
    R = rot_rows(quat[0], quat[1], quat[2], quat[3])
    R_bs = mount.R_bs
    # a − R_wbᵀ g, with g = (0, 0, G): einsum's sum from 0 (the sign of a zero kept)
    d = np.array([accel[i] + wxv[i] + axr[i] + wxwxr[i]
                  - (0.0 + R[0][i] * 0.0 + R[1][i] * 0.0 + R[2][i] * G) for i in range(3)])
    return d @ R_bs, np.array([float(w[0]), float(w[1]), float(w[2])]) @ R_bs


# ------------------------------------------------------------------ the model


def gauss_markov(w: np.ndarray, sigma: float, phi: float, first: bool,
                 previous: np.ndarray) -> np.ndarray:
    """One first-order Gauss–Markov process over n samples (exact discretisation)::

        b_k = φ b_{k−1} + σ √(1 − φ²) w_k,     b_0 = σ w_0 (stationary start)

    w: (n, 3) standard normals; ``first``: w[0] is sample 0; previous: b_{k−1} of the
    sample before w[0] (ignored when ``first``). ``lfilter`` carrying the previous value
    performs the same operations for one sample as for many (batch = steps, bit for bit).
    """
    x = sigma * math.sqrt(1.0 - phi * phi) * w
    if first:
        x[0] = sigma * w[0]
    out, _ = lfilter([1.0], [1.0, -phi], x, axis=0, zi=(phi * previous)[None, :])
    return out


@dataclass
class _TriadState:
    """The bias processes' last values, Python floats: b_{k−1} of each Gauss–Markov
    member (3 each) and the random walk's (3)."""

    gm: list[list[float]] = field(default_factory=list)
    rw: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])


def _gm_channel(key: str, j: int) -> str:
    """Keyed-noise channel of the j-th bias-instability process of a triad."""
    return f"{key}_gm" if j == 0 else f"{key}_gm{j}"


class ImuModel:
    """Vectorised stochastic IMU. ``run(f_true, w_true, ...)`` produces the next
    ``len(f_true)`` samples (indices ``next_index …``), continuing the bias processes;
    one call of n samples equals n calls of one sample, bit for bit."""

    def __init__(self, params: ImuModelParams, dt: float, seed: int, name: str) -> None:
        if not dt > 0:
            raise ValueError("the sample period dt must be > 0")
        self.params, self.dt = params, float(dt)
        # One sample per step: each channel's next 64 draws are made at once (the same
        # values as one by one).
        self.noise = KeyedNoise(seed, name, ahead=64)
        self._triads = {}
        for key, tp in (("gyro", params.gyro), ("accel", params.accel)):
            sig = tp.gm_sigma
            band = tp.gm_band if sig > 0 else ()
            phases = (2.0 * math.pi * self.noise.uniform_range(0, len(params.vibration_freqs_hz),
                                                               f"{key}_vib_phase", 3)
                      if params.vibration_freqs_hz else np.zeros((0, 3)))
            phis = tuple(math.exp(-self.dt / T) for T in band)
            self._triads[key] = dict(tp=tp, M=tp.matrix, sigma=sig, phis=phis,
                                     gains=tuple(sig * math.sqrt(1.0 - phi * phi) for phi in phis),
                                     channels=tuple(_gm_channel(key, j) for j in range(len(band))),
                                     rw_step=tp.random_walk * math.sqrt(self.dt), phases=phases,
                                     rw_channel=f"{key}_rw", white_channel=f"{key}_white")
            self._triads[key]["MT"] = self._triads[key]["M"].T
            # run's white-noise factor, N / √dt, made once
            self._triads[key]["white_gain"] = tp.noise_density / math.sqrt(self.dt)
        self.reset()

    def reset(self) -> None:
        """Back to sample 0."""
        self.next_index = 0
        self._state = {key: _TriadState(gm=[[0.0, 0.0, 0.0] for _ in t["phis"]])
                       for key, t in self._triads.items()}

    def gm_sigma(self, triad: str) -> float:
        """σ_GM (each bias-instability process) of "gyro" or "accel"."""
        return self._triads[triad]["sigma"]

    def _bias(self, key: str, first: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        if n == 1:
            gm, rw = self._bias1(key, first)
            return np.array([gm]), np.array([rw])
        t, st = self._triads[key], self._state[key]
        gm = np.zeros((n, 3))
        for j, phi in enumerate(t["phis"]):
            b = gauss_markov(self.noise.normal_range(first, n, _gm_channel(key, j), 3),
                             t["sigma"], phi, first == 0, np.array(st.gm[j]))
            st.gm[j] = b[-1].tolist()
            gm = gm + b
        if t["rw_step"] > 0:
            x = t["rw_step"] * self.noise.normal_range(first, n, f"{key}_rw", 3)
            if first == 0:
                x[0] = 0.0
            rw, _ = lfilter([1.0], [1.0, -1.0], x, axis=0, zi=np.array([st.rw]))
        else:
            rw = np.zeros((n, 3))
        st.rw = rw[-1].tolist()
        return gm, rw

    def _bias1(self, key: str, k: int) -> tuple[list[float], list[float]]:
        """``_bias`` of one sample k, in Python floats (the GM sum and the random walk,
        3 each): the operations ``lfilter`` performs for one sample (y = z + x with
        z = φ b_{k−1}, resp. z = b_RW,k−1), in the same order, so the same bits
        (``test_same_seed_one_by_one_equals_batch``)."""
        t, st = self._triads[key], self._state[key]
        normals = self.noise.normals4_row
        gm = st.gm
        t0 = t1 = t2 = 0.0
        sigma = t["sigma"]
        for j, (phi, gain, channel) in enumerate(zip(t["phis"], t["gains"], t["channels"])):
            w0, w1, w2, _ = normals(k, channel)
            if k == 0:
                b0, b1, b2 = sigma * w0, sigma * w1, sigma * w2
            else:
                p0, p1, p2 = gm[j]
                b0, b1, b2 = phi * p0 + gain * w0, phi * p1 + gain * w1, phi * p2 + gain * w2
            gm[j] = [b0, b1, b2]
            t0, t1, t2 = t0 + b0, t1 + b1, t2 + b2
        rw = st.rw
        step = t["rw_step"]
        if step > 0 and k > 0:
            w0, w1, w2, _ = normals(k, t["rw_channel"])
            rw = [rw[0] + step * w0, rw[1] + step * w1, rw[2] + step * w2]
        elif step > 0:
            rw = [rw[0] + 0.0, rw[1] + 0.0, rw[2] + 0.0]
        else:
            rw = [0.0, 0.0, 0.0]
        st.rw = rw
        return [t0, t1, t2], rw

    def run(self, f_true, w_true, temperature_c=None, thruster_speed=None) -> dict[str, np.ndarray]:
        """The next n samples. f_true, w_true: (n, 3) noise-free specific force (m/s²) and
        rate (rad/s) in the sensor frame; temperature_c: (n,) °C (default: the reference);
        thruster_speed: (n,) mean |thruster speed|, rad/s (default 0).

        Returns arrays: ``accel``, ``gyro`` (n, 3) measurements; ``accel_bias``,
        ``gyro_bias`` (n, 3) total biases (truth); ``accel_saturated``,
        ``gyro_saturated`` (n,) bool (some axis beyond the range: value clipped);
        ``index`` (n,) sample indices.
        """
        f_true = np.atleast_2d(np.asarray(f_true, dtype=float))
        w_true = np.atleast_2d(np.asarray(w_true, dtype=float))
        n = f_true.shape[0]
        first = self.next_index
        p = self.params
        temp = (np.full(n, p.reference_temperature_c) if temperature_c is None
                else np.broadcast_to(np.asarray(temperature_c, dtype=float), (n,)))
        speed = (np.zeros(n) if thruster_speed is None
                 else np.broadcast_to(np.asarray(thruster_speed, dtype=float), (n,)))
        idx = np.arange(first, first + n)
        t = idx * self.dt
        out: dict[str, np.ndarray] = {"index": idx}
        for key, x in (("gyro", w_true), ("accel", f_true)):
            tr = self._triads[key]
            tp: TriadErrors = tr["tp"]
            gm, rw = self._bias(key, first, n)
            bias = gm + rw + np.outer(temp - p.reference_temperature_c, tp.temperature_coeff)
            y = x @ tr["M"].T + bias
            if tp.noise_density > 0:
                y = y + (tp.noise_density / math.sqrt(self.dt)) * self.noise.normal_range(
                    first, n, f"{key}_white", 3)
            if (tp.vibration_amplitude or tp.vibration_per_radps) and p.vibration_freqs_hz:
                amp = tp.vibration_amplitude + tp.vibration_per_radps * speed
                vib = np.zeros((n, 3))
                for fj, ph in zip(p.vibration_freqs_hz, tr["phases"]):
                    vib += np.sin(2.0 * math.pi * fj * t[:, None] + ph[None, :])
                y = y + amp[:, None] * vib
            if tp.lsb > 0:
                y = tp.lsb * np.round(y / tp.lsb)
            sat = np.zeros(n, dtype=bool)
            if tp.range > 0:
                sat = np.any(np.abs(y) > tp.range, axis=1)
                y = np.clip(y, -tp.range, tp.range)
            out[key], out[f"{key}_bias"], out[f"{key}_saturated"] = y, bias, sat
        self.next_index = first + n
        return out

    def run1(self, f_true, w_true, temperature_c: float | None = None,
             thruster_speed: float = 0.0) -> dict[str, Any]:
        """:meth:`run` of one sample (a sensor's step), in Python floats: the same
        operations in the same order, so the same bits (``test_run1_equals_run``), at a
        fraction of NumPy's per-call cost on 3-vectors. The scale-factor and
        misalignment product stays NumPy's ``(1, 3) @ Mᵀ``, as in ``run``: BLAS rounds
        it its own way (fused multiply-adds). f_true, w_true: (3,) arrays.

        Returns ``run``'s keys with one sample each: ``accel``, ``gyro``,
        ``accel_bias``, ``gyro_bias`` lists of 3 floats, ``*_saturated`` bools and
        ``index`` an int."""
        k = self.next_index
        p = self.params
        ref = p.reference_temperature_c
        d_temp = (ref if temperature_c is None else float(temperature_c)) - ref
        t = k * self.dt
        out: dict[str, Any] = {"index": k}
        for key, x in (("gyro", w_true), ("accel", f_true)):
            tr = self._triads[key]
            tp: TriadErrors = tr["tp"]
            (g0, g1, g2), (r0, r1, r2) = self._bias1(key, k)
            c0, c1, c2 = tp.temperature_coeff
            bias = [g0 + r0 + d_temp * c0, g1 + r1 + d_temp * c1, g2 + r2 + d_temp * c2]
            m0, m1, m2 = (x[None, :] @ tr["MT"])[0].tolist()
            y = [m0 + bias[0], m1 + bias[1], m2 + bias[2]]
            if tp.noise_density > 0:
                c = tr["white_gain"]
                w0, w1, w2, _ = self.noise.normals4_row(k, tr["white_channel"])
                y = [y[0] + c * w0, y[1] + c * w1, y[2] + c * w2]
            if (tp.vibration_amplitude or tp.vibration_per_radps) and p.vibration_freqs_hz:
                amp = tp.vibration_amplitude + tp.vibration_per_radps * thruster_speed
                vib = [0.0, 0.0, 0.0]
                for fj, ph in zip(p.vibration_freqs_hz, tr["phases"]):
                    sj = np.sin(2.0 * math.pi * fj * t + ph).tolist()
                    vib = [vib[a] + sj[a] for a in range(3)]
                y = [y[a] + amp * vib[a] for a in range(3)]
            lsb = tp.lsb
            if lsb > 0:
                y = [lsb * rint(y[0] / lsb), lsb * rint(y[1] / lsb), lsb * rint(y[2] / lsb)]
            sat = False
            if tp.range > 0:
                r = tp.range
                sat = abs(y[0]) > r or abs(y[1]) > r or abs(y[2]) > r
                if sat:
                    y = [min(max(v, -r), r) for v in y]
            out[key], out[f"{key}_bias"], out[f"{key}_saturated"] = y, bias, sat
        self.next_index = k + 1
        return out


# ------------------------------------------------------------------ component

_TRIAD_FIELDS = ("noise_density", "bias_instability", "bias_correlation_s", "random_walk",
                 "scale_factor", "misalignment", "temperature_coeff", "lsb", "range",
                 "vibration_amplitude", "vibration_per_radps")
_UNITS = {"gyro": ("rad/s", "rad/s/sqrt(Hz)", "rad/s/sqrt(s)"),
          "accel": ("m/s^2", "m/s^2/sqrt(Hz)", "m/s^2/sqrt(s)")}


def _triad_params(prefix: str, d: TriadErrors) -> dict[str, Any]:
    u, und, urw = _UNITS[prefix]
    docs = {
        "noise_density": ("white noise density N", und),
        "bias_instability": ("bias instability B (Allan floor = 0.664 B)", u),
        "bias_correlation_s": ("shortest correlation time of the bias-instability band", "s"),
        "random_walk": ("bias random walk K", urw),
        "scale_factor": ("per-axis scale-factor error (fraction)", "1"),
        "misalignment": ("cross-axis terms (xy, xz, yx, yz, zx, zy)", "rad"),
        "temperature_coeff": ("bias temperature sensitivity per axis", f"{u}/degC"),
        "lsb": ("quantization step (0: none)", u),
        "range": ("measurement range +- (0: unlimited)", u),
        "vibration_amplitude": ("vibration amplitude of each sinusoid", u),
        "vibration_per_radps": ("vibration amplitude per rad/s of mean |thruster speed|",
                                f"{u}/(rad/s)"),
    }
    return {f"{prefix}_{k}": (getattr(d, k), *docs[k]) for k in _TRIAD_FIELDS}


def _make_parameters():
    ns: dict[str, Any] = {"__annotations__": {}}
    ann = ns["__annotations__"]

    def add(name, typ, default, doc, unit=""):
        ann[name] = typ
        ns[name] = param(default, doc, unit=unit)

    add("grade", str, "", "preset 'mems', 'tactical' or 'ideal' for every gyro_*/accel_* "
        "parameter (those must then stay at their defaults); '' uses the gyro_*/accel_* "
        "values, whose defaults are the MEMS preset")
    for prefix, d in (("gyro", _MEMS_GYRO), ("accel", _MEMS_ACCEL)):
        for name, (default, doc, unit) in _triad_params(prefix, d).items():
            add(name, tuple[float, ...] if isinstance(default, tuple) else float, default,
                f"{prefix}: {doc}", unit)
    add("vibration_freqs_hz", tuple[float, ...], (47.0, 23.0), "vibration sinusoid frequencies", "Hz")
    add("temperature_c", float, 25.0, "sensor temperature at the start", "degC")
    add("temperature_rate_cps", float, 0.0, "linear temperature drift", "degC/s")
    add("reference_temperature_c", float, 25.0, "temperature of zero thermal bias", "degC")
    add("mount_xyz_m", tuple[float, ...], (0.0, 0.0, 0.0), "lever arm, body frame (FRD)", "m")
    add("mount_rpy_rad", tuple[float, ...], (0.0, 0.0, 0.0),
        "sensor axes relative to the body (roll, pitch, yaw, ZYX)", "rad")
    add("latency_s", float, 0.0, "output latency (stamped with the sample time)", "s")
    cls = type("Parameters", (), ns)
    return dataclass(frozen=True, kw_only=True)(cls)


class ImuSensor(Component):
    """Strap-down IMU: specific force and angular rate at the mount with scale factor,
    misalignment, white noise, Gauss-Markov bias instability, bias random walk,
    temperature drift, vibration, quantization and range; biases reported as truth."""

    inputs = (
        Port("state", vehicle_pb2.VehicleState, "true vehicle state (with the dynamics' acceleration)"),
        Port("thrusters", vehicle_pb2.ThrusterFeedback,
             "optional: mean |speed| scales the vibration amplitude"),
    )
    outputs = (Port("imu", sensors_pb2.Imu, "specific force and angular rate, sensor frame"),)

    Parameters = _make_parameters()

    @classmethod
    def _triads(cls, params) -> dict[str, TriadErrors]:
        """The gyro and accelerometer error models of ``params`` (a grade's preset or
        the gyro_*/accel_* values); ParameterError for values no model has."""
        def bad(msg: str, fix: str):
            raise ParameterError(msg, fix=fix)

        triads = {}
        if params.grade:
            if params.grade not in PRESETS:
                bad(f"unknown grade {params.grade!r}", f"use one of {sorted(PRESETS)} or ''")
            defaults = type(params)()
            changed = [f"{p}_{k}" for p in ("gyro", "accel") for k in _TRIAD_FIELDS
                       if getattr(params, f"{p}_{k}") != getattr(defaults, f"{p}_{k}")]
            if changed:
                bad(f"grade {params.grade!r} conflicts with explicit {', '.join(changed)}",
                    "give either grade or the gyro_*/accel_* parameters")
            model = PRESETS[params.grade]()
            triads = {"gyro": model.gyro, "accel": model.accel}
        else:
            for prefix in ("gyro", "accel"):
                kw = {k: getattr(params, f"{prefix}_{k}") for k in _TRIAD_FIELDS}
                for k, n in (("scale_factor", 3), ("misalignment", 6), ("temperature_coeff", 3)):
                    if len(kw[k]) != n:
                        bad(f"{prefix}_{k} needs {n} values, got {len(kw[k])}",
                            f"give {n} numbers")
                    kw[k] = tuple(float(v) for v in kw[k])
                for k in ("noise_density", "bias_instability", "random_walk", "lsb", "range",
                          "vibration_amplitude", "vibration_per_radps"):
                    if kw[k] < 0:
                        bad(f"{prefix}_{k} must be >= 0", f"set {prefix}_{k} >= 0")
                if not kw["bias_correlation_s"] > 0:
                    bad(f"{prefix}_bias_correlation_s must be > 0", "give a positive time")
                triads[prefix] = TriadErrors(**kw)
        for prefix, tp in triads.items():
            try:
                tp.gm_sigma
            except ValueError as exc:
                bad(f"{prefix}: {exc}", f"raise {prefix}_bias_instability or lower "
                    f"{prefix}_noise_density / {prefix}_random_walk")
        for name, n in (("mount_xyz_m", 3), ("mount_rpy_rad", 3)):
            if len(getattr(params, name)) != n:
                bad(f"{name} needs {n} values", f"give {n} numbers")
        if params.latency_s < 0:
            bad("latency_s must be >= 0", "set latency_s >= 0")
        return triads

    @classmethod
    def check_parameters(cls, params) -> None:
        """The grade or the error models, the mount and the latency (``_triads``)."""
        cls._triads(params)

    def configure(self, params) -> None:
        if not self.period_ns > 0:
            raise ParameterError("the IMU needs a fixed rate", component=self.name,
                                 fix="set rate_hz (or period) for this component")
        triads = self.checked(params, self._triads)
        self.p = params
        self.mount = Mount(tuple(params.mount_xyz_m), tuple(params.mount_rpy_rad))
        self.model_params = ImuModelParams(
            gyro=triads["gyro"], accel=triads["accel"],
            reference_temperature_c=params.reference_temperature_c,
            vibration_freqs_hz=tuple(float(f) for f in params.vibration_freqs_hz))
        self.dt = self.period_ns * 1e-9
        self._vibrates = bool(self.model_params.vibration_freqs_hz) and any(
            tp.vibration_amplitude or tp.vibration_per_radps
            for tp in (self.model_params.gyro, self.model_params.accel))

    def initialize(self, start_time_ns: int):
        self.model = ImuModel(self.model_params, self.dt, self.seed, self.name)
        self.latency = Latency(round(self.p.latency_s * 1e9))
        self.k = 0
        return None

    def temperature(self, k):
        """Sensor temperature at sample k, °C."""
        return self.p.temperature_c + self.p.temperature_rate_cps * np.asarray(k) * self.dt

    def step(self, t_ns, dt_ns, inputs):
        # One sample per step, in Python floats (specific_force_and_rate1, run1: the
        # same bits as the vectorised model).
        k, self.k = self.k, self.k + 1
        state = inputs.get("state")
        speed = 0.0
        if self._vibrates:  # the mean |thruster speed| scales the vibration
            thr = inputs.get("thrusters")
            if thr is not None and len(thr.thrusters):
                speed = float(np.mean([abs(s.speed_radps) for s in thr.thrusters]))
        msg = sensors_pb2.Imu(header=self.header(t_ns, self.name))
        f_true = w_true = _ZERO3
        if state is not None:
            f_true, w_true = specific_force_and_rate1(
                quaternion_of(state), floats3(state.linear_velocity_body_mps),
                floats3(state.angular_velocity_body_radps),
                floats3(state.linear_acceleration_body_mps2),
                floats3(state.angular_acceleration_body_radps2), self.mount)
        # The bias processes advance every sample, refused or not (sample k = step k).
        p = self.p
        temp = p.temperature_c + p.temperature_rate_cps * k * self.dt  # self.temperature(k)
        out = self.model.run1(f_true, w_true, temp, speed)
        msg.temperature_c = temp
        _put(msg.true_accel_bias_mps2, out["accel_bias"])
        _put(msg.true_gyro_bias_radps, out["gyro_bias"])
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
        else:
            _put(msg.true_specific_force_mps2, f_true.tolist())
            _put(msg.true_angular_rate_radps, w_true.tolist())
            if not state.HasField("linear_acceleration_body_mps2"):
                refuse(msg.validity, common_pb2.REFUSAL_REASON_UPSTREAM_INVALID,
                       "the vehicle state carries no linear acceleration; the specific force "
                       "is not invented from differences")
            elif out["accel_saturated"] or out["gyro_saturated"]:
                which = [s for s in ("accel", "gyro") if out[f"{s}_saturated"]]
                refuse(msg.validity, common_pb2.REFUSAL_REASON_SATURATED,
                       f"{' and '.join(which)} beyond the measurement range "
                       f"(accel ±{self.model_params.accel.range:g} m/s², "
                       f"gyro ±{self.model_params.gyro.range:g} rad/s)")
            else:
                _put(msg.specific_force_mps2, out["accel"])
                _put(msg.angular_rate_radps, out["gyro"])
                set_valid(msg.validity)
        if not self.latency.latency_ns:  # released at once (what push, pop_ready give)
            return {"imu": msg}
        self.latency.push(t_ns, msg)
        ready = self.latency.pop_ready(t_ns)
        return {"imu": ready[-1]} if ready else None


def _put(v, a) -> None:
    v.x, v.y, v.z = a[0], a[1], a[2]


_ZERO3 = np.zeros(3)
_ZERO3.flags.writeable = False


__all__ = ["ImuSensor", "ImuModel", "ImuModelParams", "TriadErrors", "specific_force_and_rate",
           "allan_deviation_model", "gm_allan_variance", "gm_sigma_for", "PRESETS"]
