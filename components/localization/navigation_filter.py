"""The pool navigation filter: a position–velocity EKF and a separate yaw filter
(seed 001, "Low-cost Global Positioning").

Position–velocity filter (NED, constant-velocity model, white-noise acceleration)::

    x = [n e d  v_n v_e v_d]ᵀ                      state (m, m/s)
    F = [[I₃, Δt I₃], [0, I₃]]                      state transition over Δt
    Q = q_a [[Δt³/3 I₃, Δt²/2 I₃], [Δt²/2 I₃, Δt I₃]]   process noise; q_a the spectral
                                                    density of the acceleration (m²/s³)
    pose:     z = [n e]ᵀ,  H = [I₂ 0],  R from the measurement's covariance
    pressure: z = d = (p − p_atm)/(ρ g) − r_z,  H = [0 0 1 0 0 0],  R = σ_d²

Yaw filter (constant rate)::

    x = [ψ ψ̇]ᵀ,  F = [[1, Δt], [0, 1]],  Q = q_ψ [[Δt³/3, Δt²/2], [Δt²/2, Δt]]
    pose yaw: z = ψ (wrapped residual),  gyro: z = r ≈ ψ̇ (level vehicle)

Both models are linear: the extended Kalman filter reduces to the Kalman filter with
the constant Jacobians H above. ``LinearKalman`` performs the arithmetic of filterpy's
``ExtendedKalmanFilter`` (its ``predict`` and its ``update`` with a ``residual`` hook —
the yaw innovation is wrapped to (−π, π] — and the Joseph-form covariance update)
operation for operation, so the estimates are the same bit for bit
(``tests/unit/test_navigation_filter.py`` checks it against filterpy), without its
per-call bookkeeping (copies of the prior and posterior, a deep copy of z), which cost
more than the arithmetic at these sizes.

Outliers: an innovation y with covariance S = H P Hᵀ + R is rejected when its
squared Mahalanobis distance yᵀ S⁻¹ y exceeds the χ² quantile of ``gate_probability``
(dof = dim z). After ``reset_after_rejections`` consecutive rejections of poses (or
of yaws) the filter re-initialises its position (or heading) from the next one: it was
lost, not the measurements wrong.

Latency: every measurement is applied at the time stamped in its header (capture
time), not at arrival. The filter keeps a snapshot per step for ``history_s``;
a measurement that arrives late rolls the filter back to the last snapshot before
its time and re-applies everything after it in time order — the estimate equals
what an on-time delivery would have given, bit for bit.

Attitude: roll and pitch come from a complementary filter on the IMU (gyro rates
integrated, pulled towards the accelerometer's tilt with time constant τ), the body
rates from the latest gyro sample; the output's quaternion combines them with the
yaw filter's ψ. Without an IMU the output is level.

Refusals: refused measurements are counted and skipped; the filter coasts
(predicts). The output is refused (NOT_READY) until a pose and a depth have been
applied, and refused (UPSTREAM_INVALID) while the horizontal position standard
deviation exceeds ``max_position_std_m``.

Call order: configure → initialize → step(t): take the queued measurements, apply
them by timestamp, predict to t, output the state at t … → terminate (counts).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from scipy.stats import chi2

from moonpool.v1 import common_pb2, navigation_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import quat_from_euler, tilt_from_specific_force, wrap_angle

NS = 1_000_000_000
G = 9.80665
P_ATM = 101_325.0

# Order of measurements stamped at the same instant (deterministic replay).
_POSE, _DEPTH, _GYRO = 0, 1, 2


def _key(m: Measurement) -> tuple[int, int, int]:
    return m.key


def _angle_residual(z: np.ndarray, hx: np.ndarray) -> np.ndarray:
    """z − h(x) for column vectors whose first component is an angle."""
    y = np.asarray(z, float) - np.asarray(hx, float)
    y[0, 0] = wrap_angle(float(y[0, 0]))
    return y


@dataclass(frozen=True)
class Measurement:
    """One measurement to apply at ``t_ns`` (capture time)."""

    t_ns: int
    kind: int
    seq: int
    z: np.ndarray
    R: np.ndarray

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.t_ns, self.kind, self.seq)


class LinearKalman:
    """State x (n, 1) and covariance P (n, n) of a linear Kalman filter, with the
    arithmetic of filterpy's ``ExtendedKalmanFilter`` (``predict`` with no control
    input, ``update`` in Joseph form): the same NumPy and SciPy calls on the same
    operands in the same order, hence the same bits. The initial values are filterpy's
    too (x = 0, P = I)."""

    __slots__ = ("x", "P", "_I")

    def __init__(self, dim_x: int) -> None:
        self.x = np.zeros((dim_x, 1))
        self.P = np.eye(dim_x)
        self._I = np.eye(dim_x)

    def predict(self, F: np.ndarray, Q: np.ndarray) -> None:
        """x ← F x, P ← F P Fᵀ + Q. (filterpy adds B u with B = 0, u = 0: the integer
        0, which turns a −0.0 into +0.0; so does ``+ 0`` here.)"""
        self.x = np.dot(F, self.x) + 0
        self.P = np.dot(F, self.P).dot(F.T) + Q

    def update(self, y: np.ndarray, H: np.ndarray, R: np.ndarray) -> None:
        """Update with the innovation y = z − H x (already formed: with a wrapped angle
        where needed), measurement matrix H and noise R::

            K = P Hᵀ (H P Hᵀ + R)⁻¹,  x ← x + K y,
            P ← (I − K H) P (I − K H)ᵀ + K R Kᵀ        (Joseph form)
        """
        PHT = np.dot(self.P, H.T)
        S = np.dot(H, PHT) + R
        # scipy.linalg.inv of a 1 x 1 matrix is the reciprocal (its diagonal case), at a
        # fraction of the call's cost.
        K = PHT.dot(1.0 / S if S.shape == (1, 1) else scipy.linalg.inv(S))
        self.x = self.x + np.dot(K, y)
        I_KH = self._I - np.dot(K, H)
        self.P = np.dot(I_KH, self.P).dot(I_KH.T) + np.dot(K, R).dot(K.T)


def _transition(dt: float, q_a: float, q_psi: float) -> tuple[np.ndarray, ...]:
    """(F, Q) of the position–velocity filter and (F, Q) of the yaw filter over dt s."""
    I3 = np.eye(3)
    F = np.block([[I3, dt * I3], [np.zeros((3, 3)), I3]])
    Q = q_a * np.block([[dt**3 / 3 * I3, dt**2 / 2 * I3], [dt**2 / 2 * I3, dt * I3]])
    Fy = np.array([[1.0, dt], [0.0, 1.0]])
    Qy = q_psi * np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
    for a in (F, Q, Fy, Qy):
        a.flags.writeable = False
    return F, Q, Fy, Qy


# The constant measurement matrices (read-only: shared by every filter).
_H_POSE = np.zeros((2, 6))
_H_POSE[0, 0] = _H_POSE[1, 1] = 1.0
_H_DEPTH = np.zeros((1, 6))
_H_DEPTH[0, 2] = 1.0
_H_GYRO = np.array([[0.0, 1.0]])
_H_YAW = np.array([[1.0, 0.0]])
for _a in (_H_POSE, _H_DEPTH, _H_GYRO, _H_YAW):
    _a.flags.writeable = False


class PoseVelocityYawFilter:
    """The two filters and their bookkeeping (no messages: testable on its own)."""

    def __init__(self, q_accel: float, q_yaw: float, gate_probability: float,
                 reset_after_rejections: int, initial_velocity_std_mps: float) -> None:
        self.q_a, self.q_psi = q_accel, q_yaw
        self.gate = {d: float(chi2.ppf(gate_probability, d)) for d in (1, 2)}
        self.reset_after = reset_after_rejections
        self.v0_std = initial_velocity_std_mps
        self.pv = LinearKalman(6)
        self.yaw = LinearKalman(2)
        self._transitions: dict[int, tuple[np.ndarray, ...]] = {}
        self.t_ns: int | None = None
        self.has_pose = self.has_depth = self.has_yaw = False
        self.rejected = {"pose": 0, "depth": 0, "yaw": 0, "gyro": 0}
        self.applied = {"pose": 0, "depth": 0, "yaw": 0, "gyro": 0}
        self.consecutive_pose_rejections = 0
        self.consecutive_yaw_rejections = 0
        self.resets = 0
        self.yaw_resets = 0

    # -- state for snapshots -------------------------------------------------

    def save(self) -> tuple:
        return (self.t_ns, self.pv.x.copy(), self.pv.P.copy(), self.yaw.x.copy(), self.yaw.P.copy(),
                self.has_pose, self.has_depth, self.has_yaw, dict(self.rejected), dict(self.applied),
                self.consecutive_pose_rejections, self.resets, self.consecutive_yaw_rejections,
                self.yaw_resets)

    def restore(self, s: tuple) -> None:
        (self.t_ns, x, P, xy, Py, self.has_pose, self.has_depth, self.has_yaw, rej, app,
         self.consecutive_pose_rejections, self.resets, self.consecutive_yaw_rejections,
         self.yaw_resets) = s
        self.pv.x, self.pv.P, self.yaw.x, self.yaw.P = x.copy(), P.copy(), xy.copy(), Py.copy()
        self.rejected, self.applied = dict(rej), dict(app)

    # -- models ----------------------------------------------------------------

    def predict_to(self, t_ns: int) -> None:
        """Propagate both filters to ``t_ns`` (no-op before the first measurement)."""
        if self.t_ns is None:
            self.t_ns = t_ns
            return
        step_ns = t_ns - self.t_ns
        if step_ns <= 0:
            return
        # The few step lengths of a run (the filter's period, the gaps to measurement
        # times) recur: their matrices are made once.
        m = self._transitions.get(step_ns)
        if m is None:
            if len(self._transitions) >= 256:
                self._transitions.clear()
            m = self._transitions[step_ns] = _transition(step_ns / NS, self.q_a, self.q_psi)
        F, Q, Fy, Qy = m
        self.pv.predict(F, Q)
        self.yaw.predict(Fy, Qy)
        self.t_ns = t_ns

    def _gated_update(self, kf: LinearKalman, z: np.ndarray, H: np.ndarray, R: np.ndarray,
                      name: str, angle: bool = False) -> bool:
        """Update ``kf`` with z = H x + v, v ~ N(0, R), unless the Mahalanobis gate rejects it.

        ``angle``: the first component of z is an angle (residual wrapped to (−π, π]).
        """
        z = np.asarray(z, float).reshape(-1, 1)
        residual = _angle_residual if angle else np.subtract
        y = residual(z, H @ kf.x)
        S = H @ kf.P @ H.T + R
        if S.shape == (1, 1):  # y S⁻¹ y, as the 1 x 1 solve computes it (y / S)
            d2 = float(y[0, 0] * (y[0, 0] / S[0, 0]))
        else:
            d2 = (y.T @ np.linalg.solve(S, y)).item()
        if d2 > self.gate[len(z)]:
            self.rejected[name] += 1
            return False
        kf.update(y, H, R)  # y: the same z − H x the update would form
        self.applied[name] += 1
        return True

    def apply(self, m: Measurement) -> None:
        """Predict to the measurement's time and update with it (gated)."""
        self.predict_to(m.t_ns)
        if m.kind == _POSE:
            xy, R = m.z[:2], m.R[:2, :2]
            if not self.has_pose or self.consecutive_pose_rejections >= self.reset_after:
                if self.has_pose:
                    self.resets += 1
                self._init_horizontal(xy, R)
                self.consecutive_pose_rejections = 0
            else:
                ok = self._gated_update(self.pv, xy, _H_POSE, R, "pose")
                self.consecutive_pose_rejections = 0 if ok else self.consecutive_pose_rejections + 1
            if len(m.z) > 2:  # with yaw
                self._apply_yaw(float(m.z[2]), float(m.R[2, 2]))
        elif m.kind == _DEPTH:
            if not self.has_depth:
                self.pv.x[2, 0] = m.z[0]
                self.pv.P[2, :] = self.pv.P[:, 2] = 0.0
                self.pv.P[2, 2] = m.R[0, 0]
                self.pv.P[5, 5] = self.v0_std**2
                self.has_depth = True
                self.applied["depth"] += 1
            else:
                self._gated_update(self.pv, m.z, _H_DEPTH, m.R, "depth")
        elif m.kind == _GYRO and self.has_yaw:
            self._gated_update(self.yaw, m.z, _H_GYRO, m.R, "gyro")

    def _init_horizontal(self, xy: np.ndarray, R: np.ndarray) -> None:
        z_keep, pz, pvz = self.pv.x[2, 0], self.pv.P[2, 2], self.pv.P[5, 5]
        self.pv.x = np.zeros((6, 1))
        self.pv.x[0:2, 0] = xy
        self.pv.x[2, 0] = z_keep
        P = np.diag([0.0, 0.0, pz if self.has_depth else 1e4, self.v0_std**2, self.v0_std**2,
                     pvz if self.has_depth else self.v0_std**2])
        P[0:2, 0:2] = R
        self.pv.P = P
        self.has_pose = True
        self.applied["pose"] += 1

    def _apply_yaw(self, psi: float, var: float) -> None:
        if self.has_yaw and self.consecutive_yaw_rejections >= self.reset_after:
            # Every recent yaw disagreed: the filter lost the heading (not the camera).
            self.yaw_resets += 1
            self.yaw.x = np.array([[wrap_angle(psi)], [float(self.yaw.x[1, 0])]])
            self.yaw.P = np.diag([var, float(self.yaw.P[1, 1])])
            self.consecutive_yaw_rejections = 0
            self.applied["yaw"] += 1
            return
        if not self.has_yaw:
            self.yaw.x = np.array([[wrap_angle(psi)], [0.0]])
            self.yaw.P = np.diag([var, 0.5**2])
            self.has_yaw = True
            self.applied["yaw"] += 1
            return
        ok = self._gated_update(self.yaw, np.array([psi]), _H_YAW, np.array([[var]]),
                                "yaw", angle=True)
        self.consecutive_yaw_rejections = 0 if ok else self.consecutive_yaw_rejections + 1
        self.yaw.x[0, 0] = wrap_angle(float(self.yaw.x[0, 0]))


class NavigationFilter(Component):
    """Fuses tag poses, pressure depth and (optionally) the gyro into a NavigationState."""

    inputs = (
        Port("pose", navigation_pb2.PoseMeasurement, "x, y (and yaw) from the localizer", queued=True),
        Port("pressure", sensors_pb2.Pressure, "absolute pressure (depth)", queued=True),
        Port("imu", sensors_pb2.Imu, "optional: gyro (yaw rate, body rates) and accelerometer (roll, pitch)",
             queued=True),
        Port("truth", vehicle_pb2.VehicleState, "optional: true state, copied into the truth fields"),
    )
    outputs = (Port("navigation", navigation_pb2.NavigationState, "estimate at the step time (NED)"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        accel_noise_m2ps3: float = param(0.05, "q_a: spectral density of the unmodelled acceleration", unit="m^2/s^3")
        yaw_accel_noise_rad2ps3: float = param(
            5.0, "q_ψ: spectral density of the unmodelled yaw acceleration (a vehicle that can spin up "
            "to 1 rad/s in 0.1 s needs several rad²/s³; the gyro then carries the rate)", unit="rad^2/s^3")
        depth_noise_m: float = param(0.01, "σ_d: standard deviation of the depth from pressure", unit="m")
        gyro_noise_radps: float = param(0.01, "σ_r: standard deviation of the z gyro as a yaw-rate measurement", unit="rad/s")
        min_pose_std_m: float = param(0.002, "floor on a pose measurement's standard deviation", unit="m")
        min_yaw_std_rad: float = param(0.005, "floor on a yaw measurement's standard deviation", unit="rad")
        atmospheric_pa: float = param(P_ATM, "pressure at the water surface", unit="Pa")
        water_density_kgpm3: float = param(1000.0, "ρ used to turn pressure into depth", unit="kg/m^3")
        pressure_offset_z_m: float = param(0.0, "r_z: depth of the pressure port below the body origin (level vehicle)", unit="m")
        gate_probability: float = param(0.999, "χ² gate: probability of keeping a good measurement")
        reset_after_rejections: int = param(10, "re-initialise from poses after this many consecutive rejections")
        initial_velocity_std_mps: float = param(0.5, "σ of the velocity at initialisation", unit="m/s")
        attitude_time_constant_s: float = param(
            1.0, "τ of the roll/pitch complementary filter (gyro below 1/τ, accelerometer tilt above)", unit="s")
        history_s: float = param(2.0, "how late a measurement may arrive and still be applied at its time", unit="s")
        max_position_std_m: float = param(0.5, "refuse the output while the horizontal σ exceeds this", unit="m")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Noise figures and limits, the gate, the reset and the history."""
        positive = ("accel_noise_m2ps3", "yaw_accel_noise_rad2ps3", "depth_noise_m", "gyro_noise_radps",
                    "min_pose_std_m", "min_yaw_std_rad", "water_density_kgpm3", "initial_velocity_std_mps",
                    "max_position_std_m", "attitude_time_constant_s")
        for name in positive:
            if not getattr(params, name) > 0:
                raise ParameterError(f"{name} must be > 0, got {getattr(params, name)}",
                                     fix=f"give a positive {name}")
        if not 0.5 < params.gate_probability < 1.0:
            raise ParameterError(f"gate_probability must be in (0.5, 1), got {params.gate_probability}",
                                 fix="e.g. 0.999")
        if params.reset_after_rejections < 1 or params.history_s < 0:
            raise ParameterError("reset_after_rejections must be >= 1 and history_s >= 0",
                                 fix="e.g. reset_after_rejections = 10, history_s = 2")

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.p = params

    def initialize(self, start_time_ns: int):
        p = self.p
        self.f = PoseVelocityYawFilter(p.accel_noise_m2ps3, p.yaw_accel_noise_rad2ps3, p.gate_probability,
                                       p.reset_after_rejections, p.initial_velocity_std_mps)
        self.f.predict_to(start_time_ns)
        # (time, snapshot of the filter with every measurement stamped <= time applied)
        # The first entry is keyed just before the start so measurements taken at the
        # start instant are applied, not dropped as too old.
        self.history_t: list[int] = [start_time_ns - 1]  # snapshot times, increasing
        self.history: list[tuple] = [self.f.save()]  # the snapshots
        # Applied measurements newer than the oldest snapshot, sorted by their key
        # (time, kind, seq), with their times alongside for bisection.
        self.pending: list[Measurement] = []
        self.pending_t: list[int] = []
        self.refused = {"pose": 0, "pressure": 0, "imu": 0}
        self.too_late = 0
        self.seq = 0
        self.truth_pos = self.truth_yaw = None
        # Roll/pitch complementary filter and the latest body rates (from the IMU).
        self.phi = self.theta = 0.0
        self.attitude_t_ns: int | None = None
        self.rates = (0.0, 0.0, 0.0)
        return None

    # -- measurements from messages ------------------------------------------

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _pose(self, msg: navigation_pb2.PoseMeasurement) -> Measurement | None:
        names = list(msg.components) or ["x", "y", "z", "roll", "pitch", "yaw"]
        if "x" not in names or "y" not in names:
            return None
        n = len(names)
        cov = np.array(msg.covariance.values, dtype=float)
        C = cov.reshape(n, n) if cov.size == n * n else np.eye(n) * self.p.min_pose_std_m**2
        idx = [names.index("x"), names.index("y")]
        z = [msg.position_m.x, msg.position_m.y]
        if "yaw" in names:
            idx.append(names.index("yaw"))
            z.append(msg.yaw_rad)
        R = C[np.ix_(idx, idx)].copy()
        floor = [self.p.min_pose_std_m**2] * 2 + [self.p.min_yaw_std_rad**2] * (len(idx) - 2)
        R += np.diag(np.maximum(np.array(floor) - np.diag(R), 0.0))
        return Measurement(msg.header.sim_time_ns, _POSE, self._next_seq(), np.array(z, float), R)

    def _depth(self, msg: sensors_pb2.Pressure) -> Measurement:
        d = (msg.pressure_pa - self.p.atmospheric_pa) / (self.p.water_density_kgpm3 * G) - self.p.pressure_offset_z_m
        return Measurement(msg.header.sim_time_ns, _DEPTH, self._next_seq(), np.array([d]),
                           np.array([[self.p.depth_noise_m**2]]))

    def _gyro(self, msg: sensors_pb2.Imu) -> Measurement:
        return Measurement(msg.header.sim_time_ns, _GYRO, self._next_seq(),
                           np.array([msg.angular_rate_radps.z]), np.array([[self.p.gyro_noise_radps**2]]))

    def _collect(self, inputs: Any) -> list[Measurement]:
        new: list[Measurement] = []
        for msg in inputs.get("pose") or ():
            if not msg.validity.valid:
                self.refused["pose"] += 1
                continue
            self.truth_pos = (msg.true_position_m.x, msg.true_position_m.y)
            self.truth_yaw = msg.true_yaw_rad
            m = self._pose(msg)
            if m is not None:
                new.append(m)
        for msg in inputs.get("pressure") or ():
            if not msg.validity.valid:
                self.refused["pressure"] += 1
                continue
            new.append(self._depth(msg))
        for msg in sorted(inputs.get("imu") or (), key=lambda m: m.header.sim_time_ns):
            if not msg.validity.valid:
                self.refused["imu"] += 1
                continue
            new.append(self._gyro(msg))
            self._attitude(msg)
        return new

    def _attitude(self, msg: sensors_pb2.Imu) -> None:
        """Roll φ and pitch θ by a complementary filter (IMU frame = body frame, FRD).

        Gyro: Euler-angle rates φ̇ = p + (q sin φ + r cos φ) tan θ, θ̇ = q cos φ − r sin φ.
        Accelerometer (at rest the specific force is −g in the body): φ_a = atan2(−f_y, −f_z),
        θ_a = atan2(f_x, √(f_y² + f_z²)). Blend: x ← x_g + k (x_a − x_g), k = Δt / (τ + Δt).
        """
        f, w = msg.specific_force_mps2, msg.angular_rate_radps
        phi_a, theta_a = tilt_from_specific_force(f.x, f.y, f.z)
        t = msg.header.sim_time_ns
        if self.attitude_t_ns is None:
            self.phi, self.theta = phi_a, theta_a
        elif t > self.attitude_t_ns:
            dt = (t - self.attitude_t_ns) / NS
            p, q, r = self.rates
            sp, cp = math.sin(self.phi), math.cos(self.phi)
            phi_g = self.phi + (p + (q * sp + r * cp) * math.tan(self.theta)) * dt
            theta_g = self.theta + (q * cp - r * sp) * dt
            k = dt / (self.p.attitude_time_constant_s + dt)
            self.phi = phi_g + k * wrap_angle(phi_a - phi_g)
            self.theta = theta_g + k * (theta_a - theta_g)
        self.attitude_t_ns = max(t, self.attitude_t_ns or t)
        self.rates = (w.x, w.y, w.z)

    # -- the step --------------------------------------------------------------

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        base_t = self.history_t[0]
        new = []
        for m in self._collect(inputs):
            # Older than the oldest snapshot: cannot be applied at its time any more.
            # Stamped in the future: a broken clock upstream. Both are counted, not used.
            if m.t_ns <= base_t or m.t_ns > t_ns:
                self.too_late += 1
            else:
                new.append(m)
        if new:
            self._apply_in_time_order(new, t_ns)
        else:
            self.f.predict_to(t_ns)
            self.history_t.append(t_ns)
            self.history.append(self.f.save())
        # Keep the newest snapshot older than the horizon as the base of any rollback.
        horizon = t_ns - round(self.p.history_s * NS)
        drop = bisect.bisect_left(self.history_t, horizon, 1) - 1
        if drop > 0:
            del self.history_t[:drop], self.history[:drop]
        drop = bisect.bisect_right(self.pending_t, self.history_t[0])
        if drop:
            del self.pending_t[:drop], self.pending[:drop]
        return {"navigation": self._output(t_ns, inputs.get("truth"))}

    def _apply_in_time_order(self, new: list[Measurement], t_ns: int) -> None:
        """Roll back to the newest snapshot that the earliest new measurement (in key
        order: time, kind, arrival) comes after and re-apply every measurement after
        it, in that order, up to ``t_ns``.

        That snapshot is the newest one at or before the measurement's time, unless it
        is at that very time and holds a measurement ordered after the new one (then the
        one before it). Replaying from an older snapshot would repeat, operation for
        operation, what made this one (the same measurements in the same order, the same
        predictions to the same times), so the state is the same bit for bit; a
        measurement that comes in on time (the sensors' own, each step) replays nothing
        (``test_rollback_to_the_newest_snapshot_gives_the_same_bits``)."""
        first = min(new, key=_key)
        times = self.history_t
        i = bisect.bisect_right(times, first.t_ns)  # >= 1: checked in step()
        for m in new:  # into the pending list, in key order
            j = bisect.bisect_right(self.pending, m.key, key=_key)
            self.pending.insert(j, m)
            self.pending_t.insert(j, m.t_ns)
        if times[i - 1] == first.t_ns:
            at = bisect.bisect_left(self.pending, first.key, key=_key)
            behind = bisect.bisect_right(self.pending_t, first.t_ns, at)
            fresh = {id(m) for m in new}
            if any(id(m) not in fresh for m in self.pending[at:behind]):
                i -= 1  # an older measurement of that instant is ordered after the new one
        base_t = times[i - 1]
        self.f.restore(self.history[i - 1])
        if base_t == first.t_ns:
            # The new ones of that instant come after all it holds; its snapshot is made
            # again with them (a later rollback to it must find them applied).
            i -= 1
            todo = self.pending[bisect.bisect_left(self.pending, first.key, key=_key):]
        else:
            todo = self.pending[bisect.bisect_right(self.pending_t, base_t):]
        self._replay(i, todo, t_ns)

    def _replay(self, i: int, todo: list[Measurement], t_ns: int) -> None:
        """From the restored snapshot ``i - 1``: apply ``todo`` (key order) and make the
        snapshots ``i ..`` again at their times, then one at ``t_ns``."""
        times = self.history_t
        later = times[i:]
        del times[i:], self.history[i:]
        k = 0
        for s in later + [t_ns]:
            while k < len(todo) and todo[k].t_ns <= s:
                self.f.apply(todo[k])
                k += 1
            self.f.predict_to(s)
            times.append(s)
            self.history.append(self.f.save())

    def _output(self, t_ns: int, truth: vehicle_pb2.VehicleState | None) -> navigation_pb2.NavigationState:
        f = self.f
        msg = navigation_pb2.NavigationState(header=self.header(t_ns, "ned"))
        x, P = f.pv.x.ravel(), f.pv.P
        msg.position_ned_m.x, msg.position_ned_m.y, msg.position_ned_m.z = map(float, x[:3])
        msg.velocity_ned_mps.x, msg.velocity_ned_mps.y, msg.velocity_ned_mps.z = map(float, x[3:])
        msg.covariance.n = 6
        msg.covariance.values.extend(P.ravel().tolist())
        psi, rate = (float(f.yaw.x[0, 0]), float(f.yaw.x[1, 0])) if f.has_yaw else (0.0, 0.0)
        msg.yaw_rad = psi
        msg.yaw_variance_rad2 = float(f.yaw.P[0, 0]) if f.has_yaw else math.inf
        if self.attitude_t_ns is not None:  # attitude and body rates from the IMU
            q = quat_from_euler(self.phi, self.theta, psi).tolist()
            msg.orientation.w, msg.orientation.x, msg.orientation.y, msg.orientation.z = q
            w = msg.angular_velocity_body_radps
            w.x, w.y, w.z = self.rates
        else:  # level, turning at the yaw filter's rate
            msg.angular_velocity_body_radps.z = rate
            msg.orientation.w, msg.orientation.z = math.cos(psi / 2), math.sin(psi / 2)
        sigma_h = math.sqrt(max(P[0, 0], P[1, 1]))
        v = msg.validity
        if not (f.has_pose and f.has_depth):
            missing = " and ".join(w for w, ok in (("a pose", f.has_pose), ("a depth", f.has_depth)) if not ok)
            v.valid, v.reason, v.detail = False, common_pb2.REFUSAL_REASON_NOT_READY, f"waiting for {missing}"
        elif sigma_h > self.p.max_position_std_m:
            v.valid, v.reason = False, common_pb2.REFUSAL_REASON_UPSTREAM_INVALID
            v.detail = f"coasting: horizontal sigma {sigma_h:.3f} m > {self.p.max_position_std_m} m"
        else:
            v.valid = True
        if truth is not None:
            t = truth.position_ned_m
            msg.true_position_ned_m.x, msg.true_position_ned_m.y, msg.true_position_ned_m.z = t.x, t.y, t.z
            msg.true_yaw_rad = truth.yaw_rad
        elif self.truth_pos is not None:
            msg.true_position_ned_m.x, msg.true_position_ned_m.y = self.truth_pos
            msg.true_yaw_rad = self.truth_yaw
        return msg

    def terminate(self):
        f = getattr(self, "f", None)
        if f is None:  # never initialised
            return {}
        return {"applied": dict(f.applied), "rejected": dict(f.rejected), "refused": dict(self.refused),
                "too_late": self.too_late, "resets": f.resets, "yaw_resets": f.yaw_resets}


__all__ = ["Measurement", "NavigationFilter", "PoseVelocityYawFilter"]
