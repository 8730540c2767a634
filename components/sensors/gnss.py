"""GNSS receiver: a position fix of the antenna, only at or near the surface.

The antenna sits at the lever arm r (body frame) of the vehicle: p_a = p + R_wb r
(NED, m). When its depth p_a,z exceeds ``max_antenna_depth_m`` the receiver sees no
satellite and the fix is refused (REFUSAL_REASON_UNDER_WATER); otherwise

    p_meas = p_a + (σ_h n_N, σ_h n_E, σ_v n_D),        n ~ N(0, 1) keyed per sample

and latitude, longitude and height follow from the NED origin (``origin_latitude_deg``,
``origin_longitude_deg``, ``origin_height_m``) by the local flat-earth approximation
on the WGS-84 ellipsoid (:func:`ned_to_geodetic`, shared with the magnetometer).
docs/sensors.md (gnss) gives the equations and parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import rot_from_quat
from ..sdk.noise import KeyedNoise
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state

# ---------------------------------------------------------------- geodesy (WGS-84)

WGS84_A = 6_378_137.0
"""Semi-major axis of the WGS-84 ellipsoid, m."""
WGS84_F = 1.0 / 298.257223563
"""Flattening of WGS-84."""
WGS84_E2 = WGS84_F * (2.0 - WGS84_F)
"""First eccentricity squared."""


def earth_radii(lat_rad):
    """(R_M, R_N): meridian and prime-vertical radii of curvature at geodetic latitude, m."""
    s2 = np.sin(lat_rad) ** 2
    w = np.sqrt(1.0 - WGS84_E2 * s2)
    return WGS84_A * (1.0 - WGS84_E2) / w**3, WGS84_A / w


def ned_to_geodetic(ned_m, lat0_deg: float, lon0_deg: float, h0_m: float = 0.0):
    """Local flat-earth approximation around the NED origin (lat0, lon0, h0)::

        lat = lat0 + N / (R_M(lat0) + h0),   lon = lon0 + E / ((R_N(lat0) + h0) cos lat0),
        h = h0 - D

    ``ned_m``: (..., 3). Returns (lat_deg, lon_deg, h_m) arrays. Good to about 1e-3 m
    per km from the origin (second-order terms dropped); not valid near the poles.
    """
    ned = np.asarray(ned_m, dtype=float)
    lat0 = math.radians(lat0_deg)
    r_m, r_n = earth_radii(lat0)
    lat = lat0_deg + np.degrees(ned[..., 0] / (r_m + h0_m))
    lon = lon0_deg + np.degrees(ned[..., 1] / ((r_n + h0_m) * math.cos(lat0)))
    return lat, lon, h0_m - ned[..., 2]


def _mv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v for stacks (..., 3, 3) x (..., 3), written out so every row is computed with
    the same operations whatever the batch size (batch == one by one, bit for bit)."""
    return np.stack([R[..., i, 0] * v[..., 0] + R[..., i, 1] * v[..., 1] + R[..., i, 2] * v[..., 2]
                     for i in range(3)], axis=-1)


def _mtv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rᵀ v for stacks, like :func:`_mv`."""
    return np.stack([R[..., 0, i] * v[..., 0] + R[..., 1, i] * v[..., 1] + R[..., 2, i] * v[..., 2]
                     for i in range(3)], axis=-1)


# --------------------------------------------------------------------- the model


@dataclass(frozen=True)
class GnssModel:
    """Parameters of the GNSS model."""

    sigma_horizontal_m: float = 1.5
    """σ_h: standard deviation of the north and east errors, m."""
    sigma_vertical_m: float = 3.0
    """σ_v: standard deviation of the vertical (down) error, m."""
    max_antenna_depth_m: float = 0.1
    """The fix is refused when the antenna is deeper than this, m (positive down)."""
    origin_latitude_deg: float = 45.0
    """Geodetic latitude of the NED origin, deg."""
    origin_longitude_deg: float = 0.0
    """Longitude of the NED origin, deg."""
    origin_height_m: float = 0.0
    """Height of the NED origin above the ellipsoid, m."""
    satellites: int = 10
    """Satellites reported with a valid fix (a constant)."""
    dropout_probability: float = 0.0
    """Probability that a sample is lost (REFUSAL_REASON_DROPOUT), 0..1."""
    mount: Mount = field(default_factory=Mount)
    """Antenna lever arm (body frame) and rotation."""


@dataclass
class GnssSamples:
    """n samples of the GNSS model (arrays on axis 0)."""

    valid: np.ndarray  # (n,) bool
    reason: np.ndarray  # (n,) int, common_pb2.REFUSAL_REASON_*
    position_ned_m: np.ndarray  # (n, 3), NaN where refused
    latitude_deg: np.ndarray  # (n,), NaN where refused
    longitude_deg: np.ndarray
    height_m: np.ndarray
    covariance: np.ndarray  # (3, 3) diag(σ_h², σ_h², σ_v²), the same for every sample
    true_position_ned_m: np.ndarray  # (n, 3), antenna position


def gnss_measure(model: GnssModel, noise: KeyedNoise, first: int, position_ned_m,
                 quaternion) -> GnssSamples:
    """Samples ``first .. first+n-1`` from n truths: body origin position (n, 3) NED and
    attitude quaternion (n, 4) (w, x, y, z), body -> NED."""
    p = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
    q = np.atleast_2d(np.asarray(quaternion, dtype=float))
    n = p.shape[0]
    R_wb = rot_from_quat(q)
    antenna = p + _mv(R_wb, np.broadcast_to(model.mount.r, (n, 3)))
    z = noise.normal_range(first, n, "position", 3)
    meas = antenna + z * np.array([model.sigma_horizontal_m, model.sigma_horizontal_m,
                                   model.sigma_vertical_m])
    reason = np.zeros(n, dtype=int)
    if model.dropout_probability > 0:
        lost = noise.uniform_range(first, n, "dropout")[:, 0] <= model.dropout_probability
        reason[lost] = common_pb2.REFUSAL_REASON_DROPOUT
    reason[antenna[:, 2] > model.max_antenna_depth_m] = common_pb2.REFUSAL_REASON_UNDER_WATER
    valid = reason == 0
    meas[~valid] = np.nan
    lat, lon, h = ned_to_geodetic(meas, model.origin_latitude_deg, model.origin_longitude_deg,
                                  model.origin_height_m)
    cov = np.diag([model.sigma_horizontal_m**2, model.sigma_horizontal_m**2,
                   model.sigma_vertical_m**2])
    return GnssSamples(valid, reason, meas, lat, lon, h, cov, antenna)


# -------------------------------------------------------------------- component


def _vec3(name: str, value, component: str) -> tuple[float, float, float]:
    if len(value) != 3:
        raise ParameterError(f"'{name}' needs 3 values, got {len(value)}", component=component,
                             fix=f"give {name} as [x, y, z]")
    return tuple(float(v) for v in value)


class GnssSensor(SensorComponent):
    """GNSS fix of the antenna (lat/lon/height and local NED) at the surface; refused
    when the antenna is under water."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("gnss", sensors_pb2.Gnss, "position fix of the antenna"),)
    output_port = "gnss"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        sigma_horizontal_m: float = param(1.5, "σ_h, north and east error (1σ)", unit="m")
        sigma_vertical_m: float = param(3.0, "σ_v, vertical error (1σ)", unit="m")
        max_antenna_depth_m: float = param(0.1, "refused when the antenna is deeper", unit="m")
        origin_latitude_deg: float = param(45.0, "geodetic latitude of the NED origin", unit="deg")
        origin_longitude_deg: float = param(0.0, "longitude of the NED origin", unit="deg")
        origin_height_m: float = param(0.0, "height of the NED origin above the ellipsoid", unit="m")
        satellites: int = param(10, "satellites reported with a valid fix")
        dropout_probability: float = param(0.0, "probability of losing a sample", unit="1")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "antenna lever arm, body frame (FRD)", unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "antenna rotation (roll, pitch, yaw)", unit="rad")
        latency_s: float = param(0.0, "delay between the sample time and its publication", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Ranges and probabilities, the origin and the vectors (3 values each)."""
        name = ""  # the host and ``moonpool check`` name the component
        for f in ("sigma_horizontal_m", "sigma_vertical_m", "latency_s"):
            if getattr(params, f) < 0:
                raise ParameterError(f"'{f}' must be >= 0", component=name, fix=f"set {f} >= 0")
        if not 0.0 <= params.dropout_probability <= 1.0:
            raise ParameterError("'dropout_probability' must be in [0, 1]", component=name,
                                 fix="set dropout_probability between 0 and 1")
        if not -90.0 < params.origin_latitude_deg < 90.0:
            raise ParameterError("'origin_latitude_deg' must be in (-90, 90)", component=name,
                                 fix="give a latitude strictly between the poles")
        _vec3("mount_xyz_m", params.mount_xyz_m, name)
        _vec3("mount_rpy_rad", params.mount_rpy_rad, name)

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        name = self.name
        self.model = GnssModel(
            sigma_horizontal_m=params.sigma_horizontal_m, sigma_vertical_m=params.sigma_vertical_m,
            max_antenna_depth_m=params.max_antenna_depth_m,
            origin_latitude_deg=params.origin_latitude_deg,
            origin_longitude_deg=params.origin_longitude_deg,
            origin_height_m=params.origin_height_m, satellites=params.satellites,
            dropout_probability=params.dropout_probability,
            mount=Mount(_vec3("mount_xyz_m", params.mount_xyz_m, name),
                        _vec3("mount_rpy_rad", params.mount_rpy_rad, name)))
        self.latency_ns = round(params.latency_s * 1e9)

    def _measure(self, k: int, t_ns: int, state) -> sensors_pb2.Gnss:
        m = self.model
        msg = sensors_pb2.Gnss(header=self.header(t_ns, self.name))
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        s = gnss_measure(m, self.noise, k, truth.position_ned_m, truth.quaternion)
        tp = s.true_position_ned_m[0]
        msg.true_position_ned_m.x, msg.true_position_ned_m.y, msg.true_position_ned_m.z = tp
        if not s.valid[0]:
            if s.reason[0] == common_pb2.REFUSAL_REASON_UNDER_WATER:
                detail = (f"antenna {tp[2]:.3f} m deep > max antenna depth "
                          f"{m.max_antenna_depth_m:g} m: no satellite in view")
            else:
                detail = "sample lost (random dropout)"
            refuse(msg.validity, int(s.reason[0]), detail)
            return msg
        set_valid(msg.validity)
        pos = s.position_ned_m[0]
        msg.position_ned_m.x, msg.position_ned_m.y, msg.position_ned_m.z = pos
        msg.latitude_deg = float(s.latitude_deg[0])
        msg.longitude_deg = float(s.longitude_deg[0])
        msg.altitude_m = float(s.height_m[0])
        msg.position_covariance.n = 3
        msg.position_covariance.values.extend(s.covariance.ravel().tolist())
        msg.satellites = m.satellites
        return msg

    def measure(self, k: int, t_ns: int, inputs):
        return self._measure(k, t_ns, inputs.get("state"))
