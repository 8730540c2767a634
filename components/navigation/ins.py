"""The INS: an error-state Kalman filter (ESKF) over strap-down IMU mechanisation,
aided by DVL bottom-track velocity and pressure depth (seed 003: IMU + DVL + pressure,
no external position fixes, so the horizontal position drifts).

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

Depth from pressure: the inverse of the FMU's water column (``WaterColumn``:
p = p_atm + g ∫₀^d ρ(z) dz), found by Newton's method (dp/dd = ρ(d) g > 0).

Gating and refusals: an update whose NIS exceeds the χ² quantile of
``gate_probability`` (dof = dim z) is rejected and counted; a refused measurement
(Validity false: e.g. the DVL's NO_LOCK when the bottom is out of range) is skipped
and counted; without DVL updates the filter dead-reckons (IMU only, depth from
pressure): the horizontal covariance grows, and the output is refused
(REFUSAL_REASON_UPSTREAM_INVALID, "dead reckoning …") once the horizontal σ exceeds
``max_position_std_m``. Before alignment the output is refused (NOT_READY).

Alignment (initial attitude): roll and pitch from the mean specific force of the first
``alignment_samples`` IMU samples (gravity, ``tilt_from_specific_force``), yaw from
``initial_yaw_rad``; or all three from ``initial_rpy_rad`` when
``attitude_from = "parameter"``. Position starts at ``initial_position_ned_m`` (σ
``initial_position_std_m``), velocity at 0 (σ ``initial_velocity_std_mps``).

Timing: the queued messages of a step are applied in time order (IMU first at equal
stamps); an aiding measurement is applied at the nominal time (its own stamp when the
IMU sample of that instant has been processed: equal rates on one schedule).

Call order: configure → initialize → step(t): align (first IMU samples), then for
each queued IMU sample propagate, for each DVL / pressure sample update (or count a
refusal), output the state at t with its covariance and truth … → terminate (counts,
mean NIS per sensor, drift as % of distance travelled against the truth).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi2

from moonpool.v1 import common_pb2, navigation_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import (euler_from_rot, quat_from_euler, quat_multiply, rot_from_euler,
                          rot_from_quat, skew, tilt_from_specific_force)
from ..sensors.environment import WaterColumn

NS = 1_000_000_000
G = 9.80665
GRAVITY = np.array([0.0, 0.0, G])

# Error-state slices.
P_, V_, TH, BA, BG = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), slice(12, 15)


def quat_from_rotvec(phi: np.ndarray) -> np.ndarray:
    """q{φ} = [cos(|φ|/2), sin(|φ|/2) φ/|φ|] (Solà eq. 101), (w, x, y, z)."""
    a = float(np.linalg.norm(phi))
    if a < 1e-12:
        q = np.array([1.0, 0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2]])
        return q / np.linalg.norm(q)
    s = math.sin(a / 2) / a
    return np.array([math.cos(a / 2), s * phi[0], s * phi[1], s * phi[2]])


def rot_from_rotvec(phi: np.ndarray) -> np.ndarray:
    """R{φ} = exp([φ]×) (Rodrigues)."""
    return rot_from_quat(quat_from_rotvec(phi))


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

    def __init__(self, noise: ImuNoise, gate_probability: float = 0.9999) -> None:
        self.noise = noise
        self.gate = {d: float(chi2.ppf(gate_probability, d)) for d in (1, 3)}
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


def depth_from_pressure(water: WaterColumn, p_pa: float, guess: float = 0.0) -> float:
    """d with water.pressure(d) = p (Newton; dp/dd = ρ(d) g), m."""
    d = max(guess, 0.0)
    for _ in range(30):
        r = float(water.pressure(d)) - p_pa
        step = r / (float(water.density(d)) * water.g)
        d -= step
        if abs(step) < 1e-9:
            break
    return d


def _v3(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z], float)


def _put(v, a) -> None:
    v.x, v.y, v.z = float(a[0]), float(a[1]), float(a[2])


class Ins(Component):
    """Error-state Kalman filter INS: IMU mechanisation aided by DVL bottom-track
    velocity and pressure depth; publishes a NavigationState with its covariance and
    the truth beside it."""

    inputs = (
        Port("imu", sensors_pb2.Imu, "specific force and angular rate (every sample)", queued=True),
        Port("dvl", sensors_pb2.Dvl, "bottom-track velocity, sensor frame", queued=True),
        Port("pressure", sensors_pb2.Pressure, "absolute pressure (depth)", queued=True),
        Port("truth", vehicle_pb2.VehicleState, "optional: true state, copied into the truth "
             "fields and used for the drift and NEES metrics"),
    )
    outputs = (Port("navigation", navigation_pb2.NavigationState, "INS estimate at the step time (NED)"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        accel_noise_density: float = param(4e-3, "N_a: accelerometer white-noise density assumed", unit="m/s^2/sqrt(Hz)")
        gyro_noise_density: float = param(3.4e-4, "N_g: gyro white-noise density assumed", unit="rad/s/sqrt(Hz)")
        accel_bias_walk: float = param(2e-4, "K_a: accelerometer bias random walk assumed", unit="m/s^2/sqrt(s)")
        gyro_bias_walk: float = param(5e-6, "K_g: gyro bias random walk assumed", unit="rad/s/sqrt(s)")
        imu_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "IMU axes relative to the body (ZYX); the IMU sits at the body origin", unit="rad")
        dvl_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "DVL lever arm, body frame (FRD)", unit="m")
        dvl_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "DVL axes relative to the body (ZYX)", unit="rad")
        dvl_min_std_mps: float = param(0.003, "σ_v,min: floor added to the DVL's reported covariance", unit="m/s")
        pressure_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "pressure port lever arm, body frame", unit="m")
        pressure_noise_pa: float = param(50.0, "σ_p: pressure noise assumed", unit="Pa")
        rho_surface: float = param(1025.0, "water column: density at the surface (as the FMU)", unit="kg/m^3")
        pycnocline_depth: float = param(0.0, "water column: depth of the density ramp's centre", unit="m")
        pycnocline_width: float = param(0.0, "water column: thickness of the ramp", unit="m")
        pycnocline_delta_rho: float = param(0.0, "water column: density increase across the ramp", unit="kg/m^3")
        atmospheric_pa: float = param(101_325.0, "pressure at the surface", unit="Pa")
        attitude_from: str = param("gravity", "'gravity': roll and pitch from the first IMU samples, yaw from initial_yaw_rad; 'parameter': initial_rpy_rad")
        alignment_samples: int = param(10, "IMU samples averaged for the gravity alignment")
        initial_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "initial roll, pitch, yaw (attitude_from = 'parameter')", unit="rad")
        initial_yaw_rad: float = param(0.0, "initial yaw (attitude_from = 'gravity')", unit="rad")
        initial_position_ned_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "initial position", unit="m")
        initial_position_std_m: float = param(0.1, "σ of the initial position", unit="m")
        initial_velocity_std_mps: float = param(1.0, "σ of the initial velocity (starts at 0; the first DVL samples correct it)", unit="m/s")
        initial_attitude_std_rad: tuple[float, ...] = param((0.01, 0.01, 0.02), "σ of the initial roll/pitch/yaw error", unit="rad")
        initial_accel_bias_std: float = param(0.02, "σ of the initial accelerometer bias", unit="m/s^2")
        initial_gyro_bias_std: float = param(1e-4, "σ of the initial gyro bias (after the turn-on calibration: 20 °/h)", unit="rad/s")
        gate_probability: float = param(0.9999, "χ² gate: probability of keeping a good measurement")
        max_position_std_m: float = param(50.0, "refuse the output while the horizontal σ exceeds this", unit="m")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Noise densities and initial uncertainties, vectors, alignment and the gate."""
        def bad(msg: str, fix: str):
            raise ParameterError(msg, fix=fix)

        for name in ("accel_noise_density", "gyro_noise_density", "dvl_min_std_mps", "pressure_noise_pa",
                     "rho_surface", "initial_position_std_m", "initial_velocity_std_mps",
                     "initial_accel_bias_std", "initial_gyro_bias_std", "max_position_std_m"):
            if not getattr(params, name) > 0:
                bad(f"{name} must be > 0, got {getattr(params, name)}", f"give a positive {name}")
        for name in ("accel_bias_walk", "gyro_bias_walk"):
            if getattr(params, name) < 0:
                bad(f"{name} must be >= 0", f"give {name} >= 0")
        for name in ("imu_rpy_rad", "dvl_xyz_m", "dvl_rpy_rad", "pressure_xyz_m", "initial_rpy_rad",
                     "initial_position_ned_m", "initial_attitude_std_rad"):
            if len(getattr(params, name)) != 3:
                bad(f"{name} needs 3 values, got {len(getattr(params, name))}", "give 3 numbers")
        if params.attitude_from not in ("gravity", "parameter"):
            bad(f"attitude_from must be 'gravity' or 'parameter', got {params.attitude_from!r}",
                "use attitude_from = 'gravity' or 'parameter'")
        if params.alignment_samples < 1:
            bad("alignment_samples must be >= 1", "e.g. alignment_samples = 10")
        if not 0.5 < params.gate_probability < 1.0:
            bad(f"gate_probability must be in (0.5, 1), got {params.gate_probability}", "e.g. 0.9999")

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.p = params
        self.R_bi = rot_from_euler(*params.imu_rpy_rad)
        self.R_bd = rot_from_euler(*params.dvl_rpy_rad)
        self.r_dvl = np.array(params.dvl_xyz_m, float)
        self.r_p = np.array(params.pressure_xyz_m, float)
        self.water = WaterColumn(rho_surface=params.rho_surface, pycnocline_depth=params.pycnocline_depth,
                                 pycnocline_width=params.pycnocline_width,
                                 pycnocline_delta_rho=params.pycnocline_delta_rho, p_atm=params.atmospheric_pa)

    def initialize(self, start_time_ns: int):
        p = self.p
        self.kf = ErrorStateKF(ImuNoise(p.accel_noise_density, p.gyro_noise_density, p.accel_bias_walk,
                                        p.gyro_bias_walk), p.gate_probability)
        self.kf.p = np.array(p.initial_position_ned_m, float)  # published while aligning
        self.aligned = False
        self.align_f: list[np.ndarray] = []
        self.t_imu: int | None = None
        self.last_imu: tuple[np.ndarray, np.ndarray] | None = None
        self.counts = {k: {"applied": 0, "refused": 0, "rejected": 0} for k in ("imu", "dvl", "pressure")}
        self.nis_sum = {"dvl": 0.0, "pressure": 0.0}
        self.last_depth = 0.0
        self.dead_reckoning_since_ns: int | None = None
        self.t_last_dvl: int | None = None
        # Truth bookkeeping (drift metrics).
        self.truth_start: np.ndarray | None = None
        self.truth_prev: np.ndarray | None = None
        self.distance_m = 0.0
        self.final_error_m: float | None = None
        self.max_horizontal_error_m = 0.0
        self.nees_sum = 0.0
        self.nees_n = 0
        return None

    # -- alignment ---------------------------------------------------------

    def _align(self) -> None:
        p = self.p
        if p.attitude_from == "parameter":
            roll, pitch, yaw = p.initial_rpy_rad
        else:
            f = np.mean(self.align_f, axis=0)
            roll, pitch = tilt_from_specific_force(*f)
            yaw = p.initial_yaw_rad
        sa = np.array(p.initial_attitude_std_rad, float)
        P0 = np.diag(np.concatenate([np.full(3, p.initial_position_std_m**2),
                                     np.full(3, p.initial_velocity_std_mps**2), sa**2,
                                     np.full(3, p.initial_accel_bias_std**2),
                                     np.full(3, p.initial_gyro_bias_std**2)]))
        self.kf.start(p.initial_position_ned_m, np.zeros(3), quat_from_euler(roll, pitch, yaw),
                      np.zeros(3), np.zeros(3), P0)
        self.aligned = True

    # -- measurements --------------------------------------------------------

    def _imu(self, msg: sensors_pb2.Imu) -> None:
        c = self.counts["imu"]
        if not msg.validity.valid:
            c["refused"] += 1
            return
        c["applied"] += 1
        t = msg.header.sim_time_ns
        f = self.R_bi @ _v3(msg.specific_force_mps2)
        w = self.R_bi @ _v3(msg.angular_rate_radps)
        if not self.aligned:
            if self.p.attitude_from == "gravity":
                self.align_f.append(f)
            if self.p.attitude_from == "parameter" or len(self.align_f) >= self.p.alignment_samples:
                self._align()
                self.kf.propagate(f, w, 0.0)
                self.t_imu, self.last_imu = t, (f, w)
            return
        if self.t_imu is not None and t > self.t_imu and self.last_imu is not None:
            self.kf.propagate(*self.last_imu, (t - self.t_imu) / NS)
        self.kf.f, self.kf.omega = f - self.kf.ba, w - self.kf.bg
        self.t_imu, self.last_imu = t, (f, w)

    def _dvl(self, msg: sensors_pb2.Dvl) -> None:
        c = self.counts["dvl"]
        if not msg.validity.valid or msg.track != sensors_pb2.DVL_TRACK_BOTTOM:
            c["refused"] += 1
            return
        if not self.aligned:
            return
        cov = np.array(msg.velocity_covariance.values, float)
        Rz = cov.reshape(3, 3) if cov.size == 9 and np.all(np.isfinite(cov)) else np.zeros((3, 3))
        Rz = Rz + np.eye(3) * self.p.dvl_min_std_mps**2
        nis, ok = self.kf.update_dvl(_v3(msg.velocity_mps), Rz, self.r_dvl, self.R_bd)
        if ok:
            c["applied"] += 1
            self.nis_sum["dvl"] += nis
            self.t_last_dvl = msg.header.sim_time_ns
        else:
            c["rejected"] += 1

    def _pressure(self, msg: sensors_pb2.Pressure) -> None:
        c = self.counts["pressure"]
        if not msg.validity.valid:
            c["refused"] += 1
            return
        if not self.aligned:
            return
        d = depth_from_pressure(self.water, msg.pressure_pa, self.last_depth)
        self.last_depth = d
        sigma_d = self.p.pressure_noise_pa / (float(self.water.density(d)) * self.water.g)
        nis, ok = self.kf.update_depth(d, sigma_d**2, self.r_p)
        if ok:
            c["applied"] += 1
            self.nis_sum["pressure"] += nis
        else:
            c["rejected"] += 1

    # -- the step --------------------------------------------------------------

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        events = []
        for kind, port in ((0, "imu"), (1, "dvl"), (2, "pressure")):
            for i, msg in enumerate(inputs.get(port) or ()):
                events.append((msg.header.sim_time_ns, kind, i, msg))
        for _t, kind, _i, msg in sorted(events, key=lambda e: e[:3]):
            (self._imu, self._dvl, self._pressure)[kind](msg)
        return {"navigation": self._output(t_ns, inputs.get("truth"))}

    def _output(self, t_ns: int, truth: vehicle_pb2.VehicleState | None) -> navigation_pb2.NavigationState:
        kf = self.kf
        msg = navigation_pb2.NavigationState(header=self.header(t_ns, "ned"))
        _put(msg.position_ned_m, kf.p)
        _put(msg.velocity_ned_mps, kf.v)
        msg.orientation.w, msg.orientation.x, msg.orientation.y, msg.orientation.z = map(float, kf.q)
        _, _, yaw = euler_from_rot(kf.R)
        msg.yaw_rad = float(yaw)
        _put(msg.angular_velocity_body_radps, kf.omega)
        msg.covariance.n = 6
        msg.covariance.values.extend(float(v) for v in kf.P[:6, :6].ravel())
        msg.yaw_variance_rad2 = float(kf.P[8, 8])
        sigma_h = math.sqrt(max(kf.P[0, 0], kf.P[1, 1]))
        v = msg.validity
        stale = self.t_last_dvl is None or t_ns - self.t_last_dvl > 2 * NS
        if not self.aligned:
            v.valid, v.reason = False, common_pb2.REFUSAL_REASON_NOT_READY
            v.detail = f"aligning: {len(self.align_f)} of {self.p.alignment_samples} IMU samples"
        elif sigma_h > self.p.max_position_std_m:
            v.valid, v.reason = False, common_pb2.REFUSAL_REASON_UPSTREAM_INVALID
            v.detail = (f"dead reckoning: horizontal sigma {sigma_h:.2f} m > {self.p.max_position_std_m} m")
        else:
            v.valid = True
            if stale:
                v.detail = f"dead reckoning (no DVL bottom lock): horizontal sigma {sigma_h:.2f} m"
        if truth is not None:
            tp = _v3(truth.position_ned_m)
            q = np.array([truth.orientation.w, truth.orientation.x, truth.orientation.y, truth.orientation.z])
            if not np.any(q):
                q = np.array([1.0, 0.0, 0.0, 0.0])
            tv = rot_from_quat(q) @ _v3(truth.linear_velocity_body_mps)
            _put(msg.true_position_ned_m, tp)
            _put(msg.true_velocity_ned_mps, tv)
            msg.true_yaw_rad = truth.yaw_rad
            if self.aligned:
                self._score(tp, tv, q)
        return msg

    def _score(self, tp: np.ndarray, tv: np.ndarray, q: np.ndarray) -> None:
        if self.truth_start is None:
            self.truth_start = tp
        if self.truth_prev is not None:
            self.distance_m += float(np.linalg.norm(tp[:2] - self.truth_prev[:2]))
        self.truth_prev = tp
        eh = float(np.linalg.norm(tp[:2] - self.kf.p[:2]))
        self.final_error_m = eh
        self.max_horizontal_error_m = max(self.max_horizontal_error_m, eh)
        e = self.kf.error(tp, tv, q, self.kf.ba, self.kf.bg)[:9]
        self.nees_sum += float(e @ np.linalg.solve(self.kf.P[:9, :9], e))
        self.nees_n += 1

    def terminate(self):
        c = self.counts
        out: dict[str, Any] = {
            "imu_applied": c["imu"]["applied"], "imu_refused": c["imu"]["refused"],
            "dvl_applied": c["dvl"]["applied"], "dvl_refused": c["dvl"]["refused"],
            "dvl_rejected": c["dvl"]["rejected"],
            "pressure_applied": c["pressure"]["applied"], "pressure_refused": c["pressure"]["refused"],
            "pressure_rejected": c["pressure"]["rejected"],
            "dvl_mean_nis": self.nis_sum["dvl"] / c["dvl"]["applied"] if c["dvl"]["applied"] else None,
            "pressure_mean_nis": (self.nis_sum["pressure"] / c["pressure"]["applied"]
                                  if c["pressure"]["applied"] else None),
            "horizontal_sigma_m": math.sqrt(max(self.kf.P[0, 0], self.kf.P[1, 1])),
        }
        if self.final_error_m is not None:
            out["distance_travelled_m"] = self.distance_m
            out["final_horizontal_error_m"] = self.final_error_m
            out["max_horizontal_error_m"] = self.max_horizontal_error_m
            out["drift_percent_of_distance"] = (100.0 * self.final_error_m / self.distance_m
                                                if self.distance_m > 0 else None)
            out["mean_nees_pos_vel_att"] = self.nees_sum / self.nees_n if self.nees_n else None
        return out


__all__ = ["ErrorStateKF", "ImuNoise", "Ins", "depth_from_pressure", "quat_from_rotvec"]
