"""The error-state Kalman filter (ESKF) of the INS (``navigation.ins``, ``ins.py``):
strap-down IMU mechanisation aided by DVL bottom-track velocity, pressure depth and
position fixes, without messages (testable on its own).

Reference: J. Solà, "Quaternion kinematics for the error-state Kalman filter",
arXiv:1711.02508 (2017), sections 5.3 (ESKF with local angular error, eqs. 260–270)
and 6 (injection and reset). Conventions (``moonpool.components.sdk.frames``): NED
world, FRD body, q = (w, x, y, z) rotates body vectors into NED, R = R(q).

Nominal state x (16 numbers) and error state δx (15 numbers)::

    x  = [p v q a_b ω_b]     p NED position (m), v NED velocity (m/s), q body→NED,
                             a_b accelerometer bias (m/s², body axes),
                             ω_b gyro bias (rad/s, body axes)
    δx = [δp δv δθ δa_b δω_b]   δθ the local attitude error (rad): R_true = R (I + [δθ]×)

Mechanisation on every IMU sample (f_m, ω_m rotated from the IMU's mount into the body
axes; zero-order hold of the previous sample over Δt = t_k − t_{k−1}, s)::

    f = f_m − a_b,  ω = ω_m − ω_b,  g = (0, 0, 9.80665) m/s² NED
    p ← p + v Δt + ½ (R f + g) Δt²
    v ← v + (R f + g) Δt
    q ← q ⊗ q{ω Δt}                 (q{φ} = [cos(|φ|/2), sin(|φ|/2) φ/|φ|])
    a_b ← a_b,  ω_b ← ω_b           (random walks)

Error-state propagation (Solà eq. 269–270)::

    P ← F_x P F_xᵀ + Q_i,   F_x = [[I, IΔt, 0,         0,     0   ],
                                   [0, I,   −R[f]×Δt,  −RΔt,  0   ],
                                   [0, 0,   R{ωΔt}ᵀ,   0,     −IΔt],
                                   [0, 0,   0,         I,     0   ],
                                   [0, 0,   0,         0,     I   ]]
    Q_i = diag(0, N_a² Δt I, N_g² Δt I, K_a² Δt I, K_g² Δt I)

with N_a (m/s²/√Hz) and N_g (rad/s/√Hz) the white-noise densities of the accelerometer
and gyro (velocity and angle random walk) and K_a (m/s²/√s), K_g (rad/s/√s) their bias
random walks (the IMU's bias-instability band is modelled as a random walk: choose K
to cover it over the mission, docs/navigation.md).

Observability constraint (yaw). IMU + DVL + pressure hold no heading reference: a
rotation of the whole trajectory about the vertical changes no measurement, so yaw
(and with it the horizontal position) is unobservable. Its direction in δx, at the
nominal state x,

    N(x) = [0, e_z × v, Rᵀ e_z, 0, 0]      (e_z = (0, 0, 1) NED; the horizontal
                                             translations δp ∈ span(e_n, e_e) with it)

is annihilated by both aids (H_dvl N = R_bsᵀ Rᵀ (e_z × v + v × e_z) = 0; H_p N = 0),
but an EKF linearises the propagation at the corrected estimate while its updates
were linearised at the predicted one, so F N(x_k|k−1) ≠ N(x_k+1|k): the filter then
gains information along N that no measurement holds (Huang, Mourikis & Roumeliotis
2010; Hesch et al., IEEE T-RO 30(1), 2014), and its yaw becomes overconfident and
drifts with the DVL's noise. With ``observability_constrained`` (default) F is
replaced by the closest matrix (Frobenius norm) that maps the direction the last
update saw onto the one at the new estimate, modulo horizontal translations
(Hesch et al. 2014, eq. 20 with one column)::

    r = F N_a − N_b,  r_n = r_e = 0,   F* = F − r N_aᵀ / (N_aᵀ N_a)

N_a = N at the end of the previous propagation (what the updates since then were
linearised at), N_b = N(x_k+1|k). The horizontal-translation part of r is dropped
because those directions are themselves unobservable (F maps them onto themselves),
so the constraint does not depend on where the NED origin is. A position aid (USBL)
makes yaw observable through the position growth F puts into N: the constraint does
not hide it.

Updates (z = h(x) + ν, ν ~ N(0, R_z); H = ∂h/∂δx; Joseph form)::

    y = z − h(x),  S = H P Hᵀ + R_z,  NIS = yᵀ S⁻¹ y,  K = P Hᵀ S⁻¹
    δx̂ = K y,  P ← (I − K H) P (I − K H)ᵀ + K R_z Kᵀ
    injection: p += δp̂, v += δv̂, q ← q ⊗ q{δθ̂}, a_b += δâ_b, ω_b += δω̂_b
    reset (Solà eq. 287, G = I − [½δθ̂]×): P ← G P Gᵀ

DVL bottom track (sensor frame s: lever arm r, mount R_bs)::

    z = v_s,  h = R_bsᵀ (Rᵀ v + ω × r),  ω = ω_m − ω_b
    H_δv = R_bsᵀ Rᵀ,  H_δθ = R_bsᵀ [Rᵀ v]×,  H_δω_b = R_bsᵀ [r]×
    R_z = the DVL's velocity covariance (m²/s²) + σ_v,min² I

Pressure (port at lever arm r_p; depth from the water column, section below)::

    z = d_s,  h = p_z + (R r_p)_z,  H_δp = [0 0 1],  H_δθ = −(R [r_p]×)₃,:
    R_z = σ_d²,  σ_d = σ_p / (ρ(d) g)   (m)

Position fix (USBL: beacon at lever arm r_u; the fix and its covariance turned from
the transceiver frame into NED)::

    z = p_u,  h = p + R r_u,  H_δp = I,  H_δθ = −R [r_u]×,  R_z = R_wt Σ R_wtᵀ

"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from ..sdk.frames import quat_from_rotvec, quat_multiply, rot_from_quat, rot_from_rotvec, skew
from ..sensors.imu import ImuModelParams

G = 9.80665
GRAVITY = np.array([0.0, 0.0, G])

# Error-state slices.
P_, V_, TH, BA, BG = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), slice(12, 15)


@dataclass(frozen=True)
class ImuNoise:
    """Continuous-time IMU noise the filter assumes."""

    accel_noise_density: float
    """N_a, m/s²/√Hz."""
    gyro_noise_density: float
    """N_g, rad/s/√Hz."""
    accel_bias_walk: float
    """K_a, m/s²/√s."""
    gyro_bias_walk: float
    """K_g, rad/s/√s."""


class ErrorStateKF:
    """The ESKF of the module docstring, without messages (testable on its own).

    Call order: ``start(p, v, q, a_b, ω_b, P0)`` → ``propagate(f_body, ω_body, Δt)`` per
    IMU sample, ``update_dvl`` / ``update_depth`` at their rates."""

    def __init__(self, noise: ImuNoise, gate_probability: float = 0.9999,
                 observability_constrained: bool = True) -> None:
        self.noise = noise
        self.gate = {d: float(chi2.ppf(gate_probability, d)) for d in (1, 3)}
        self.observability_constrained = observability_constrained
        self.N = np.zeros(15)
        """The unobservable yaw direction the updates since the last propagation saw."""
        self.p = np.zeros(3)
        self.v = np.zeros(3)
        self.q = np.array([1.0, 0.0, 0.0, 0.0])
        self.ba = np.zeros(3)
        self.bg = np.zeros(3)
        self.P = np.eye(15)
        self.omega = np.zeros(3)  # latest bias-corrected body rate, rad/s
        self.f = np.zeros(3)  # latest bias-corrected specific force, m/s²

    def start(self, p, v, q, ba, bg, P0) -> None:
        self.p, self.v = np.array(p, float), np.array(v, float)
        self.q = np.array(q, float) / np.linalg.norm(q)
        self.ba, self.bg = np.array(ba, float), np.array(bg, float)
        self.P = np.array(P0, float)
        self.N = self.yaw_direction()

    def yaw_direction(self) -> np.ndarray:
        """N(x) = [0, e_z × v, Rᵀ e_z, 0, 0]: a rotation about the vertical (module doc)."""
        n = np.zeros(15)
        n[V_] = (-self.v[1], self.v[0], 0.0)
        n[TH] = self.R[2, :]
        return n

    @property
    def R(self) -> np.ndarray:
        return rot_from_quat(self.q)

    def propagate(self, f_m: np.ndarray, w_m: np.ndarray, dt: float) -> None:
        """Mechanise one IMU sample (body axes) held over ``dt`` seconds."""
        f = np.asarray(f_m, float) - self.ba
        w = np.asarray(w_m, float) - self.bg
        self.f, self.omega = f, w
        if dt <= 0:
            return
        R = self.R
        a = R @ f + GRAVITY
        self.p = self.p + self.v * dt + 0.5 * a * dt * dt
        self.v = self.v + a * dt
        self.q = quat_multiply(self.q, quat_from_rotvec(w * dt))
        self.q /= np.linalg.norm(self.q)
        F = np.eye(15)
        F[P_, V_] = np.eye(3) * dt
        F[V_, TH] = -R @ skew(f) * dt
        F[V_, BA] = -R * dt
        F[TH, TH] = rot_from_rotvec(w * dt).T
        F[TH, BG] = -np.eye(3) * dt
        N_b = self.yaw_direction()
        if self.observability_constrained:
            N_a = self.N
            r = F @ N_a - N_b
            r[0:2] = 0.0  # horizontal translations are unobservable too
            F -= np.outer(r, N_a) / (N_a @ N_a)
        self.N = N_b
        n = self.noise
        Qd = np.zeros(15)
        Qd[V_] = n.accel_noise_density**2 * dt
        Qd[TH] = n.gyro_noise_density**2 * dt
        Qd[BA] = n.accel_bias_walk**2 * dt
        Qd[BG] = n.gyro_bias_walk**2 * dt
        self.P = F @ self.P @ F.T + np.diag(Qd)
        self.P = 0.5 * (self.P + self.P.T)

    def _update(self, y: np.ndarray, H: np.ndarray, Rz: np.ndarray) -> tuple[float, bool]:
        """Kalman update with innovation y; returns (NIS, applied)."""
        S = H @ self.P @ H.T + Rz
        nis = float(y @ np.linalg.solve(S, y))
        if nis > self.gate[len(y)]:
            return nis, False
        K = np.linalg.solve(S, H @ self.P).T
        dx = K @ y
        IKH = np.eye(15) - K @ H
        self.P = IKH @ self.P @ IKH.T + K @ Rz @ K.T
        # Injection and reset (Solà sections 6.2, 6.3).
        self.p = self.p + dx[P_]
        self.v = self.v + dx[V_]
        self.q = quat_multiply(self.q, quat_from_rotvec(dx[TH]))
        self.q /= np.linalg.norm(self.q)
        self.ba = self.ba + dx[BA]
        self.bg = self.bg + dx[BG]
        Gm = np.eye(15)
        Gm[TH, TH] = np.eye(3) - skew(0.5 * dx[TH])
        self.P = Gm @ self.P @ Gm.T
        self.P = 0.5 * (self.P + self.P.T)
        return nis, True

    def update_dvl(self, v_s: np.ndarray, Rz: np.ndarray, lever_arm: np.ndarray,
                   R_bs: np.ndarray) -> tuple[float, bool]:
        """Bottom-track velocity v_s (sensor frame, m/s) with covariance Rz (m²/s²)."""
        R = self.R
        vb = R.T @ self.v
        h = R_bs.T @ (vb + np.cross(self.omega, lever_arm))
        H = np.zeros((3, 15))
        H[:, V_] = R_bs.T @ R.T
        H[:, TH] = R_bs.T @ skew(vb)
        H[:, BG] = R_bs.T @ skew(lever_arm)
        return self._update(np.asarray(v_s, float) - h, H, Rz)

    def update_depth(self, d_s: float, var: float, lever_arm: np.ndarray) -> tuple[float, bool]:
        """Depth d_s (m) of the pressure port at ``lever_arm`` (body, m), variance var (m²)."""
        R = self.R
        h = self.p[2] + (R @ lever_arm)[2]
        H = np.zeros((1, 15))
        H[0, 2] = 1.0
        H[0, TH] = -(R @ skew(lever_arm))[2]
        return self._update(np.array([d_s - h]), H, np.array([[var]]))

    def update_position(self, p_u: np.ndarray, Rz: np.ndarray,
                        lever_arm: np.ndarray) -> tuple[float, bool]:
        """Position fix p_u (NED, m) of a beacon at ``lever_arm`` (body, m), covariance Rz (m²)."""
        R = self.R
        h = self.p + R @ lever_arm
        H = np.zeros((3, 15))
        H[:, P_] = np.eye(3)
        H[:, TH] = -R @ skew(lever_arm)
        return self._update(np.asarray(p_u, float) - h, H, Rz)

    def error(self, p, v, q, ba, bg) -> np.ndarray:
        """δx = truth ⊖ estimate (15,), δθ from R_estᵀ R_true (for NEES)."""
        dR = self.R.T @ rot_from_quat(q)
        # log map of a small rotation
        c = np.clip((np.trace(dR) - 1) / 2, -1.0, 1.0)
        a = math.acos(c)
        w = np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
        dth = w / 2 if a < 1e-9 else w * a / (2 * math.sin(a))
        return np.concatenate([np.asarray(p) - self.p, np.asarray(v) - self.v, dth,
                               np.asarray(ba) - self.ba, np.asarray(bg) - self.bg])


@dataclass(frozen=True)
class FilterNoise:
    """What the filter assumes of an IMU: its noise and the σ of its initial biases."""

    noise: ImuNoise
    """N_a, N_g, K_a, K_g."""
    accel_bias_std: float
    """σ of the accelerometer's bias at the start (m/s²)."""
    gyro_bias_std: float
    """σ of the gyro's bias at the start (rad/s)."""


def noise_from_imu(model: ImuModelParams) -> FilterNoise:
    """The filter's noise for an IMU described by ``model`` (``sensors.imu``'s error
    model; the ``imu_grade`` parameter):

    - N = the triad's white-noise density (quantization, σ = lsb/√12 per sample, is
      below 4 % of the white noise's variance for the presets at 10–50 Hz: left out);
    - K = the triad's bias random walk;
    - σ of the initial bias = the stationary σ of the bias-instability band
      (√J σ_GM: the model starts every Gauss–Markov process stationary), and for the
      accelerometer also the constant error its scale factor and misalignment put on
      gravity at rest, g·|(M − I) e_z| (largest axis), which the filter can only hold
      as bias.

    The band's processes (correlation times T_c … ) are not states: over a mission
    they act as a bias that wanders within its stationary σ, which the initial σ
    covers and K lets move; over long times the filter is conservative (its K²t grows,
    the band does not)."""
    def band(t):
        return t.gm_sigma * math.sqrt(len(t.gm_band)) if t.bias_instability > 0 else 0.0

    a, g = model.accel, model.gyro
    const = G * float(np.max(np.abs((a.matrix - np.eye(3))[:, 2])))
    return FilterNoise(ImuNoise(a.noise_density, g.noise_density, a.random_walk, g.random_walk),
                       math.hypot(band(a), const), band(g))


__all__ = ["ErrorStateKF", "FilterNoise", "ImuNoise", "noise_from_imu", "quat_from_rotvec", "rot_from_rotvec"]
