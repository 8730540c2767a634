"""The INS component ``navigation.ins``: the error-state Kalman filter of ``eskf.py``
(IMU mechanisation aided by DVL bottom-track velocity, pressure depth and, during the
descent, USBL fixes; seed 003: IMU + DVL + pressure, no external position fixes on the
floor, so the horizontal position drifts) fed by messages, publishing a
NavigationState with its covariance and the truth beside it (docs/navigation.md).

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

from moonpool.v1 import common_pb2, navigation_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import euler_from_rot, quat_from_euler, rot_from_euler, rot_from_quat, tilt_from_specific_force
from ..sensors.environment import WaterColumn
from ..sensors.imu import PRESETS
from .eskf import ErrorStateKF, FilterNoise, ImuNoise, noise_from_imu, quat_from_rotvec

NS = 1_000_000_000


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
        Port("usbl", sensors_pb2.Usbl, "optional: USBL fixes of the vehicle's beacon (used "
             "until the first DVL bottom lock with usbl_mode = 'descent')", queued=True),
        Port("truth", vehicle_pb2.VehicleState, "optional: true state, copied into the truth "
             "fields and used for the drift and NEES metrics"),
    )
    outputs = (Port("navigation", navigation_pb2.NavigationState, "INS estimate at the step time (NED)"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        imu_grade: str = param("", "'mems' or 'tactical': the noise densities, bias walks and "
                               "initial bias σ from the IMU model's preset (sensors.imu; "
                               "noise_from_imu), and the explicit ones must stay at their "
                               "defaults; '' uses the explicit values")
        observability_constrained: bool = param(True, "keep yaw unobservable without a heading "
                                                "or position aid (OC-EKF, module doc)")
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
        usbl_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "USBL beacon lever arm, body frame", unit="m")
        usbl_transceiver_ned_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "USBL transceiver position (as the USBL's)", unit="m")
        usbl_transceiver_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "USBL transceiver orientation (as the USBL's)", unit="rad")
        usbl_mode: str = param("descent", "'descent': USBL fixes only until the first DVL bottom lock "
                               "(then IMU + DVL + pressure alone, seed 003's survey); 'always'")

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
        if params.imu_grade:
            if params.imu_grade not in PRESETS or params.imu_grade == "ideal":
                bad(f"unknown imu_grade {params.imu_grade!r}", "use 'mems', 'tactical' or ''")
            defaults = type(params)()
            changed = [k for k in ("accel_noise_density", "gyro_noise_density", "accel_bias_walk",
                                   "gyro_bias_walk", "initial_accel_bias_std", "initial_gyro_bias_std")
                       if getattr(params, k) != getattr(defaults, k)]
            if changed:
                bad(f"imu_grade {params.imu_grade!r} conflicts with explicit {', '.join(changed)}",
                    "give either imu_grade or the noise parameters")
        if params.usbl_mode not in ("descent", "always"):
            bad(f"usbl_mode must be 'descent' or 'always', got {params.usbl_mode!r}",
                "usbl_mode = 'descent' or 'always'")
        for name in ("accel_bias_walk", "gyro_bias_walk"):
            if getattr(params, name) < 0:
                bad(f"{name} must be >= 0", f"give {name} >= 0")
        for name in ("imu_rpy_rad", "dvl_xyz_m", "dvl_rpy_rad", "pressure_xyz_m", "initial_rpy_rad",
                     "initial_position_ned_m", "initial_attitude_std_rad", "usbl_xyz_m",
                     "usbl_transceiver_ned_m", "usbl_transceiver_rpy_rad"):
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
        self.r_u = np.array(params.usbl_xyz_m, float)
        self.R_wt = rot_from_euler(*params.usbl_transceiver_rpy_rad)
        self.p_t = np.array(params.usbl_transceiver_ned_m, float)
        if params.imu_grade:
            self.filter_noise = noise_from_imu(PRESETS[params.imu_grade]())
        else:
            self.filter_noise = FilterNoise(
                ImuNoise(params.accel_noise_density, params.gyro_noise_density,
                         params.accel_bias_walk, params.gyro_bias_walk),
                params.initial_accel_bias_std, params.initial_gyro_bias_std)
        self.water = WaterColumn(rho_surface=params.rho_surface, pycnocline_depth=params.pycnocline_depth,
                                 pycnocline_width=params.pycnocline_width,
                                 pycnocline_delta_rho=params.pycnocline_delta_rho, p_atm=params.atmospheric_pa)

    def initialize(self, start_time_ns: int):
        p = self.p
        self.kf = ErrorStateKF(self.filter_noise.noise, p.gate_probability,
                               observability_constrained=p.observability_constrained)
        self.kf.p = np.array(p.initial_position_ned_m, float)  # published while aligning
        self.aligned = False
        self.align_f: list[np.ndarray] = []
        self.t_imu: int | None = None
        self.last_imu: tuple[np.ndarray, np.ndarray] | None = None
        self.counts = {k: {"applied": 0, "refused": 0, "rejected": 0, "ignored": 0}
                       for k in ("imu", "dvl", "pressure", "usbl")}
        self.nis_sum = {"dvl": 0.0, "pressure": 0.0, "usbl": 0.0}
        self.bottom_locked = False
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
                                     np.full(3, self.filter_noise.accel_bias_std**2),
                                     np.full(3, self.filter_noise.gyro_bias_std**2)]))
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
            self.bottom_locked = True
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

    def _usbl(self, msg: sensors_pb2.Usbl) -> None:
        c = self.counts["usbl"]
        if not msg.validity.valid:
            c["refused"] += 1
            return
        if not self.aligned:
            return
        if self.p.usbl_mode == "descent" and self.bottom_locked:
            c["ignored"] += 1  # on the floor: no external position fixes (seed 003)
            return
        cov = np.array(msg.position_covariance.values, float)
        if cov.size != 9 or not np.all(np.isfinite(cov)):
            c["refused"] += 1
            return
        p_fix = self.p_t + self.R_wt @ _v3(msg.position_m)
        Rz = self.R_wt @ cov.reshape(3, 3) @ self.R_wt.T
        nis, ok = self.kf.update_position(p_fix, Rz, self.r_u)
        if ok:
            c["applied"] += 1
            self.nis_sum["usbl"] += nis
        else:
            c["rejected"] += 1

    # -- the step --------------------------------------------------------------

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        events = []
        for kind, port in ((0, "imu"), (1, "dvl"), (2, "pressure"), (3, "usbl")):
            for i, msg in enumerate(inputs.get(port) or ()):
                events.append((msg.header.sim_time_ns, kind, i, msg))
        for _t, kind, _i, msg in sorted(events, key=lambda e: e[:3]):
            (self._imu, self._dvl, self._pressure, self._usbl)[kind](msg)
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
        if not hasattr(self, "counts"):  # never initialised: nothing to report
            return {}
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
            "usbl_applied": c["usbl"]["applied"], "usbl_refused": c["usbl"]["refused"],
            "usbl_rejected": c["usbl"]["rejected"], "usbl_ignored": c["usbl"]["ignored"],
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


__all__ = ["ErrorStateKF", "FilterNoise", "ImuNoise", "Ins", "depth_from_pressure", "noise_from_imu",
           "quat_from_rotvec"]
