"""USBL: slant range, azimuth and elevation of the vehicle's transponder from a
transceiver at a declared NED position and orientation, and the resulting fix.

Geometry (transceiver frame T: x forward, y starboard, z down, R_wt = T -> NED)::

    p_b = p + R_wb r                  (transponder = vehicle position + lever arm)
    d   = R_wtᵀ (p_b − p_t),  r = |d|,  azimuth α = atan2(d_y, d_x),
    elevation ε = atan2(−d_z, √(d_x² + d_y²))   (negative below the transceiver;
                                                  depression = −ε)

Measurement: the two-way travel time is turned into a range with the sound speed the
device assumes, so r_m = r · c_assumed / c_water + σ_r(r) n_r with σ_r = c0 + c1 r
(clipped at 0);
α_m = α + σ_θ n_α, ε_m = ε + σ_θ n_ε (bearing error constant in angle). The fix is
r_m (cos ε_m cos α_m, cos ε_m sin α_m, −sin ε_m) in T, p_t + R_wt (that) in NED, with
covariance J diag(σ_r², σ_θ², σ_θ²) Jᵀ at the measured values. Refused beyond the
maximum range (OUT_OF_RANGE), with the transponder above the surface (ABOVE_SURFACE)
and on random dropouts (DROPOUT). docs/sensors.md (usbl) has the details.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import rot_from_euler, rot_from_quat
from ..sdk.noise import KeyedNoise
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .gnss import _mtv, _mv


@dataclass(frozen=True)
class UsblModel:
    """Parameters of the USBL model."""

    transceiver_ned_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position p_t of the transceiver in NED, m."""
    transceiver_rpy_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Orientation of the transceiver frame (roll, pitch, yaw; ZYX, T -> NED), rad."""
    sound_speed_mps: float = 1500.0
    """c_water: the true (mean) sound speed along the path, m/s."""
    assumed_sound_speed_mps: float = 1500.0
    """c_assumed: the sound speed the device uses; range scale error c_assumed/c_water − 1."""
    range_sigma_m: float = 0.1
    """c0: range noise at zero range (1σ), m."""
    range_sigma_per_m: float = 0.002
    """c1: range noise growth with range (1σ), m per m."""
    bearing_sigma_rad: float = 0.0087
    """σ_θ: azimuth and elevation noise (1σ), rad (0.0087 rad ≈ 0.5°)."""
    max_range_m: float = 1000.0
    """Slant ranges beyond this are refused (OUT_OF_RANGE), m."""
    dropout_probability: float = 0.0
    """Probability that a reply is lost (DROPOUT), 0..1."""
    mount: Mount = field(default_factory=Mount)
    """Transponder lever arm on the vehicle (body frame)."""

    @property
    def R_wt(self) -> np.ndarray:
        return rot_from_euler(*self.transceiver_rpy_rad)


@dataclass
class UsblSamples:
    """n samples of the USBL model (arrays on axis 0); measured values NaN where refused."""

    valid: np.ndarray  # (n,) bool
    reason: np.ndarray  # (n,) int
    range_m: np.ndarray  # (n,)
    azimuth_rad: np.ndarray  # (n,), in (−π, π]
    elevation_rad: np.ndarray  # (n,)
    position_m: np.ndarray  # (n, 3) fix in the transceiver frame
    position_ned_m: np.ndarray  # (n, 3) fix in NED
    covariance: np.ndarray  # (n, 3, 3) fix covariance, transceiver frame
    true_range_m: np.ndarray
    true_azimuth_rad: np.ndarray
    true_elevation_rad: np.ndarray
    true_position_m: np.ndarray  # (n, 3) transponder in the transceiver frame
    true_position_ned_m: np.ndarray  # (n, 3) transponder in NED


def _unit(az, el):
    ce = np.cos(el)
    return np.stack([ce * np.cos(az), ce * np.sin(az), -np.sin(el)], axis=-1)


def usbl_measure(model: UsblModel, noise: KeyedNoise, first: int, position_ned_m,
                 quaternion) -> UsblSamples:
    """Samples ``first .. first+n-1`` from n truths: body origin position (n, 3) NED and
    attitude quaternion (n, 4) (w, x, y, z), body -> NED."""
    p = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
    n = p.shape[0]
    R_wb = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
    beacon = p + _mv(R_wb, np.broadcast_to(model.mount.r, (n, 3)))
    R_wt = np.broadcast_to(model.R_wt, (n, 3, 3))
    d = _mtv(R_wt, beacon - np.asarray(model.transceiver_ned_m, dtype=float))
    r = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2 + d[:, 2] ** 2)
    az = np.arctan2(d[:, 1], d[:, 0])
    el = np.arctan2(-d[:, 2], np.hypot(d[:, 0], d[:, 1]))

    sigma_r = model.range_sigma_m + model.range_sigma_per_m * r
    r_m = np.maximum(r * (model.assumed_sound_speed_mps / model.sound_speed_mps)
                     + sigma_r * noise.normal_range(first, n, "range")[:, 0], 0.0)
    za = noise.normal_range(first, n, "angles", 2)
    az_m = np.angle(np.exp(1j * (az + model.bearing_sigma_rad * za[:, 0])))
    el_m = el + model.bearing_sigma_rad * za[:, 1]
    u = _unit(az_m, el_m)
    pos = r_m[:, None] * u
    pos_ned = np.asarray(model.transceiver_ned_m, dtype=float) + _mv(R_wt, pos)

    # Covariance of the fix at the measured values: J diag(σ_r², σ_θ², σ_θ²) Jᵀ.
    ce, se, ca, sa = np.cos(el_m), np.sin(el_m), np.cos(az_m), np.sin(az_m)
    d_az = r_m[:, None] * np.stack([-ce * sa, ce * ca, np.zeros(n)], axis=-1)
    d_el = r_m[:, None] * np.stack([-se * ca, -se * sa, -ce], axis=-1)
    sr_m = model.range_sigma_m + model.range_sigma_per_m * np.abs(r_m)
    s2 = model.bearing_sigma_rad**2
    cov = (sr_m[:, None, None] ** 2 * u[:, :, None] * u[:, None, :]
           + s2 * d_az[:, :, None] * d_az[:, None, :] + s2 * d_el[:, :, None] * d_el[:, None, :])

    reason = np.zeros(n, dtype=int)
    if model.dropout_probability > 0:
        lost = noise.uniform_range(first, n, "dropout")[:, 0] <= model.dropout_probability
        reason[lost] = common_pb2.REFUSAL_REASON_DROPOUT
    reason[beacon[:, 2] < 0.0] = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
    reason[r > model.max_range_m] = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
    valid = reason == 0
    for a in (r_m, az_m, el_m, pos, pos_ned, cov):
        a[~valid] = np.nan
    return UsblSamples(valid, reason, r_m, az_m, el_m, pos, pos_ned, cov, r, az, el, d, beacon)


# -------------------------------------------------------------------- component


def _vec3(name: str, value, component: str) -> tuple[float, float, float]:
    if len(value) != 3:
        raise ParameterError(f"'{name}' needs 3 values, got {len(value)}", component=component,
                             fix=f"give {name} as [x, y, z]")
    return tuple(float(v) for v in value)


class UsblSensor(SensorComponent):
    """USBL transceiver at a declared NED pose: slant range, azimuth, elevation and
    fix of the vehicle's transponder; refused beyond its maximum range."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("usbl", sensors_pb2.Usbl, "range, bearing, elevation and fix (transceiver frame)"),)
    output_port = "usbl"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        transceiver_ned_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "transceiver position, NED", unit="m")
        transceiver_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "transceiver orientation (T -> NED)", unit="rad")
        sound_speed_mps: float = param(1500.0, "true sound speed of the water", unit="m/s")
        assumed_sound_speed_mps: float = param(1500.0, "sound speed the device assumes", unit="m/s")
        range_sigma_m: float = param(0.1, "c0: range noise at zero range (1σ)", unit="m")
        range_sigma_per_m: float = param(0.002, "c1: range noise growth with range", unit="m/m")
        bearing_sigma_rad: float = param(0.0087, "σ_θ: azimuth and elevation noise (1σ)", unit="rad")
        max_range_m: float = param(1000.0, "maximum slant range", unit="m")
        dropout_probability: float = param(0.0, "probability of losing a reply", unit="1")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "transponder lever arm, body frame", unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "transponder rotation (unused by the model)", unit="rad")
        latency_s: float = param(0.0, "delay between the sample time and its publication", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Ranges and probabilities, the origin and the vectors (3 values each)."""
        name = ""  # the host and ``moonpool check`` name the component
        for f in ("sound_speed_mps", "assumed_sound_speed_mps", "max_range_m"):
            if not getattr(params, f) > 0:
                raise ParameterError(f"'{f}' must be > 0", component=name, fix=f"set {f} > 0")
        for f in ("range_sigma_m", "range_sigma_per_m", "bearing_sigma_rad", "latency_s"):
            if getattr(params, f) < 0:
                raise ParameterError(f"'{f}' must be >= 0", component=name, fix=f"set {f} >= 0")
        if not 0.0 <= params.dropout_probability <= 1.0:
            raise ParameterError("'dropout_probability' must be in [0, 1]", component=name,
                                 fix="set dropout_probability between 0 and 1")
        for f in ("transceiver_ned_m", "transceiver_rpy_rad", "mount_xyz_m", "mount_rpy_rad"):
            _vec3(f, getattr(params, f), name)

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        name = self.name
        self.model = UsblModel(
            transceiver_ned_m=_vec3("transceiver_ned_m", params.transceiver_ned_m, name),
            transceiver_rpy_rad=_vec3("transceiver_rpy_rad", params.transceiver_rpy_rad, name),
            sound_speed_mps=params.sound_speed_mps,
            assumed_sound_speed_mps=params.assumed_sound_speed_mps,
            range_sigma_m=params.range_sigma_m, range_sigma_per_m=params.range_sigma_per_m,
            bearing_sigma_rad=params.bearing_sigma_rad, max_range_m=params.max_range_m,
            dropout_probability=params.dropout_probability,
            mount=Mount(_vec3("mount_xyz_m", params.mount_xyz_m, name),
                        _vec3("mount_rpy_rad", params.mount_rpy_rad, name)))
        self.latency_ns = round(params.latency_s * 1e9)

    def _measure(self, k: int, t_ns: int, state) -> sensors_pb2.Usbl:
        m = self.model
        msg = sensors_pb2.Usbl(header=self.header(t_ns, self.name))
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        s = usbl_measure(m, self.noise, k, truth.position_ned_m, truth.quaternion)
        msg.true_range_m = float(s.true_range_m[0])
        msg.true_bearing_rad = float(s.true_azimuth_rad[0])
        msg.true_elevation_rad = float(s.true_elevation_rad[0])
        reason = int(s.reason[0])
        if reason == common_pb2.REFUSAL_REASON_OUT_OF_RANGE:
            refuse(msg.validity, reason, f"slant range {s.true_range_m[0]:.1f} m > max range "
                                         f"{m.max_range_m:g} m")
            return msg
        if reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE:
            refuse(msg.validity, reason, f"transponder {-s.true_position_ned_m[0, 2]:.2f} m above "
                                         "the surface: no acoustic path")
            return msg
        if reason:
            refuse(msg.validity, reason, "reply lost (random dropout)")
            return msg
        set_valid(msg.validity)
        msg.range_m = float(s.range_m[0])
        msg.bearing_rad = float(s.azimuth_rad[0])
        msg.elevation_rad = float(s.elevation_rad[0])
        msg.position_m.x, msg.position_m.y, msg.position_m.z = s.position_m[0]
        msg.position_covariance.n = 3
        msg.position_covariance.values.extend(s.covariance[0].ravel().tolist())
        return msg

    def measure(self, k: int, t_ns: int, inputs):
        return self._measure(k, t_ns, inputs.get("state"))
