"""Three-axis magnetometer: the Earth's field vector in the sensor frame, in nT, with
hard- and soft-iron distortion, timed and thruster-current disturbances, and noise.

    m = S · (R_bsᵀ R_wbᵀ b_ned) + b_hard + b_dist(t) + σ n,     n ~ N(0, I) keyed per sample
    b_dist(t) = k_I · Σ_j I_j(t) + Σ_windows [t0 <= t < t1] b_w

b_ned is the geomagnetic field (north, east, down) at the sensor's geodetic position
and date from a field model: by default (``igrf14``) the full IGRF-14 main field
(``ppigrf``), evaluated at the NED origin and held constant; or the tilted dipole of
IGRF-14 or IGRF-13 (the degree-1 Gauss coefficients g10, g11, h11 with their secular
variation), evaluated along the trajectory; or a declared constant field
(declination, inclination, intensity). The sensor position is the
vehicle position plus the lever arm, turned into latitude/longitude/height around
the NED origin by the local flat-earth approximation (gnss.ned_to_geodetic).
docs/sensors.md (magnetometer) gives the equations, parameters and limits.
"""

from __future__ import annotations

import functools

import math
from dataclasses import dataclass, field

import numpy as np

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import rot_from_quat
from ..sdk.noise import KeyedNoise
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .gnss import WGS84_E2, _mtv, _mv, earth_radii, ned_to_geodetic

# ------------------------------------------------------------------ field models

IGRF_REFERENCE_RADIUS_M = 6_371_200.0
"""Reference radius a of the IGRF spherical-harmonic expansion, m."""

DIPOLE_COEFFICIENTS = {
    # name: (epoch, (g10, g11, h11) nT, (dg10, dg11, dh11) nT/yr)
    "igrf14_dipole": (2025.0, (-29350.0, -1410.3, 4545.5), (12.6, 10.0, -21.5)),
    "igrf13_dipole": (2020.0, (-29404.8, -1450.9, 4652.5), (5.7, 7.4, -25.9)),
}
"""Degree-1 Gauss coefficients (Schmidt semi-normalised) of the IGRF generations, with
the predictive secular variation of their last five-year epoch."""

SECONDS_PER_YEAR = 365.25 * 86_400.0


def dipole_field_ned(lat_deg, lon_deg, height_m, decimal_year, model: str = "igrf14_dipole"):
    """Field (north, east, down) in nT of the IGRF tilted dipole at geodetic (lat, lon,
    height above the WGS-84 ellipsoid) and date. Arrays broadcast; returns (..., 3).

    Potential V = a (a/r)² [g10 cos θ + (g11 cos λ + h11 sin λ) sin θ] (geocentric
    colatitude θ, longitude λ, radius r); B = −∇V in spherical components, then rotated
    from the geocentric to the geodetic local frame by δ = φ_geodetic − φ_geocentric.
    """
    epoch, g, sv = DIPOLE_COEFFICIENTS[model]
    dt = np.asarray(decimal_year, dtype=float) - epoch
    g10, g11, h11 = (g[i] + sv[i] * dt for i in range(3))
    lat = np.radians(np.asarray(lat_deg, dtype=float))
    lon = np.radians(np.asarray(lon_deg, dtype=float))
    h = np.asarray(height_m, dtype=float)
    _, r_n = earth_radii(lat)
    rho = (r_n + h) * np.cos(lat)  # distance from the polar axis
    zc = (r_n * (1.0 - WGS84_E2) + h) * np.sin(lat)
    r = np.hypot(rho, zc)
    lat_c = np.arctan2(zc, rho)
    ct, st = np.sin(lat_c), np.cos(lat_c)  # cos and sin of the geocentric colatitude
    cl, sl = np.cos(lon), np.sin(lon)
    k = (IGRF_REFERENCE_RADIUS_M / r) ** 3
    a11 = g11 * cl + h11 * sl
    b_r = 2.0 * k * (g10 * ct + a11 * st)
    b_theta = k * (g10 * st - a11 * ct)
    b_phi = k * (g11 * sl - h11 * cl)
    x_c, z_c = -b_theta, -b_r
    d = lat - lat_c
    cd, sd = np.cos(d), np.sin(d)
    return np.stack(np.broadcast_arrays(x_c * cd + z_c * sd, b_phi, z_c * cd - x_c * sd), axis=-1)


def declared_field_ned(declination_deg: float, inclination_deg: float, intensity_nt: float):
    """A constant field from declination D (east of north), inclination I (down
    positive) and total intensity F: F (cos I cos D, cos I sin D, sin I), nT."""
    d, i = math.radians(declination_deg), math.radians(inclination_deg)
    return intensity_nt * np.array([math.cos(i) * math.cos(d), math.cos(i) * math.sin(d),
                                    math.sin(i)])


# --------------------------------------------------------------------- the model


@dataclass(frozen=True)
class MagnetometerModel:
    """Parameters of the magnetometer model (all vectors in the sensor frame)."""

    field_model: str = "igrf14"
    """'igrf14' (the full IGRF-14 model from the maintained `ppigrf` package, evaluated
    at the NED origin and start date), 'igrf14_dipole', 'igrf13_dipole' (tilted
    dipoles, closed form, varying with position) or 'declared' (the declared_* values)."""
    origin_latitude_deg: float = 45.0
    """Geodetic latitude of the NED origin, deg."""
    origin_longitude_deg: float = 0.0
    """Longitude of the NED origin, deg."""
    date_decimal_year: float = 2025.0
    """Date at simulation time 0, decimal year (advances with simulated time)."""
    declared_declination_deg: float = 0.0
    """Declination of the declared field (east of north), deg."""
    declared_inclination_deg: float = 60.0
    """Inclination of the declared field (positive down), deg."""
    declared_intensity_nt: float = 48_000.0
    """Total intensity of the declared field, nT."""
    hard_iron_nt: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """b_hard, constant offset, nT."""
    soft_iron: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    """S, 3x3 row-major, dimensionless (identity: none)."""
    noise_nt: float = 100.0
    """σ, white noise per axis, nT."""
    current_coefficient_nt_per_a: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """k_I: disturbance per ampere of total thruster current, nT/A."""
    disturbances: tuple[tuple[float, float, float, float, float], ...] = ()
    """Timed disturbances (t_start_s, t_end_s, bx, by, bz nT), added for t0 <= t < t1."""
    mount: Mount = field(default_factory=Mount)
    """Sensor lever arm (body frame) and rotation R_bs."""

    @property
    def S(self) -> np.ndarray:
        return np.asarray(self.soft_iron, dtype=float).reshape(3, 3)

    def earth_field_ned(self, position_ned_m, t_s):
        """b_ned (n, 3) at sensor positions (n, 3) NED and times t (n,) s."""
        pos = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
        if self.field_model == "declared":
            b = declared_field_ned(self.declared_declination_deg, self.declared_inclination_deg,
                                   self.declared_intensity_nt)
            return np.broadcast_to(b, pos.shape).copy()
        if self.field_model == "igrf14":
            b = igrf_field_ned(self.origin_latitude_deg, self.origin_longitude_deg,
                               self.date_decimal_year)
            return np.broadcast_to(b, pos.shape).copy()
        lat, lon, h = ned_to_geodetic(pos, self.origin_latitude_deg, self.origin_longitude_deg)
        year = self.date_decimal_year + np.asarray(t_s, dtype=float) / SECONDS_PER_YEAR
        return dipole_field_ned(lat, lon, h, year, self.field_model)


FIELD_MODELS = ("igrf14", "igrf14_dipole", "igrf13_dipole", "declared")


@functools.lru_cache(maxsize=64)
def igrf_field_ned(lat_deg: float, lon_deg: float, decimal_year: float) -> np.ndarray:
    """The IGRF-14 main field at sea level (lat, lon) and date, NED, nT, from `ppigrf`
    (its coefficient file ships in the wheel; nothing is downloaded).

    Evaluated once per (origin, date): across a vehicle's working area (< 10 km, a few
    km deep) the main field changes by up to about 80 nT (82 nT over 10 km north at
    45° N; docs/figures/sensor_figures.py) and over a mission by a few nT: 0.2 % of the
    field, below the hard- and soft-iron effects modelled here.
    """
    import datetime

    import ppigrf

    year = int(decimal_year)
    start = datetime.datetime(year, 1, 1)
    length = datetime.datetime(year + 1, 1, 1) - start
    date = start + (decimal_year - year) * length
    be, bn, bu = ppigrf.igrf(float(lon_deg), float(lat_deg), 0.0, date)
    return np.array([float(np.ravel(bn)[0]), float(np.ravel(be)[0]), -float(np.ravel(bu)[0])])


@dataclass
class MagnetometerSamples:
    """n samples of the magnetometer model (arrays on axis 0), nT."""

    field_nt: np.ndarray  # (n, 3) measured, sensor frame
    true_field_nt: np.ndarray  # (n, 3) R_bsᵀ R_wbᵀ b_ned: undistorted, noise-free, sensor frame
    earth_field_ned_nt: np.ndarray  # (n, 3) b_ned
    disturbance_nt: np.ndarray  # (n, 3) b_dist


def magnetometer_measure(model: MagnetometerModel, noise: KeyedNoise, first: int, t_s,
                         position_ned_m, quaternion, thruster_current_a=None) -> MagnetometerSamples:
    """Samples ``first .. first+n-1`` from n truths: sample times t (n,) s, body origin
    position (n, 3) NED, attitude quaternion (n, 4) (w, x, y, z) body -> NED, and the
    total thruster current ΣI (n,) A (None: 0)."""
    p = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
    n = p.shape[0]
    t = np.broadcast_to(np.asarray(t_s, dtype=float), (n,))
    R_wb = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
    sensor_pos = p + _mv(R_wb, np.broadcast_to(model.mount.r, (n, 3)))
    b_ned = model.earth_field_ned(sensor_pos, t)
    b_body = _mtv(R_wb, b_ned)
    b_true = _mtv(np.broadcast_to(model.mount.R_bs, (n, 3, 3)), b_body)
    dist = np.zeros((n, 3))
    if thruster_current_a is not None and any(model.current_coefficient_nt_per_a):
        current = np.broadcast_to(np.asarray(thruster_current_a, dtype=float), (n,))
        dist = dist + current[:, None] * np.asarray(model.current_coefficient_nt_per_a)
    for t0, t1, bx, by, bz in model.disturbances:
        on = (t >= t0) & (t < t1)
        dist = dist + on[:, None] * np.array([bx, by, bz])
    S = np.broadcast_to(model.S, (n, 3, 3))
    meas = (_mv(S, b_true) + np.asarray(model.hard_iron_nt, dtype=float) + dist
            + model.noise_nt * noise.normal_range(first, n, "field", 3))
    return MagnetometerSamples(meas, b_true, b_ned, dist)


# -------------------------------------------------------------------- component


def _vec(name: str, value, size: int, component: str) -> tuple[float, ...]:
    if len(value) != size:
        raise ParameterError(f"'{name}' needs {size} values, got {len(value)}",
                             component=component, fix=f"give {size} numbers for {name}")
    return tuple(float(v) for v in value)


class MagnetometerSensor(SensorComponent):
    """Three-axis magnetometer: geomagnetic field vector (nT, sensor frame) with hard
    and soft iron, thruster-current and timed disturbances, and noise."""

    inputs = (
        Port("state", vehicle_pb2.VehicleState, "true vehicle state"),
        Port("thrusters", vehicle_pb2.ThrusterFeedback,
             "optional: thruster currents (the disturbance k_I · Σ current_a)"),
    )
    outputs = (Port("magnetometer", sensors_pb2.Magnetometer, "field vector, nT, sensor frame"),)
    output_port = "magnetometer"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        field_model: str = param("igrf14", "'igrf14' (ppigrf, full model), 'igrf14_dipole', "
                                 "'igrf13_dipole' or 'declared'")
        origin_latitude_deg: float = param(45.0, "geodetic latitude of the NED origin", unit="deg")
        origin_longitude_deg: float = param(0.0, "longitude of the NED origin", unit="deg")
        date_decimal_year: float = param(2025.0, "date at simulation time 0", unit="yr")
        declared_declination_deg: float = param(0.0, "declared field: declination (east of north)", unit="deg")
        declared_inclination_deg: float = param(60.0, "declared field: inclination (down positive)", unit="deg")
        declared_intensity_nt: float = param(48_000.0, "declared field: total intensity", unit="nT")
        hard_iron_nt: tuple[float, ...] = param((0.0, 0.0, 0.0), "hard-iron offset b_hard, sensor frame", unit="nT")
        soft_iron: tuple[float, ...] = param((1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                                             "soft-iron matrix S, 3x3 row-major", unit="1")
        noise_nt: float = param(100.0, "white noise per axis (1σ)", unit="nT")
        current_coefficient_nt_per_a: tuple[float, ...] = param(
            (0.0, 0.0, 0.0), "k_I: disturbance per ampere of total thruster current", unit="nT/A")
        disturbances: tuple[float, ...] = param(
            (), "timed disturbances, groups of 5: t_start, t_end (s), bx, by, bz (nT)")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)", unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "sensor rotation (roll, pitch, yaw)", unit="rad")
        latency_s: float = param(0.0, "delay between the sample time and its publication", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """The field model, noise and latency, the origin, the soft-iron matrix and the
        disturbances."""
        name = ""  # the host and ``moonpool check`` name the component
        if params.field_model not in FIELD_MODELS:
            raise ParameterError(f"unknown field_model '{params.field_model}'", component=name,
                                 fix=f"use one of {', '.join(FIELD_MODELS)}")
        for f in ("noise_nt", "latency_s"):
            if getattr(params, f) < 0:
                raise ParameterError(f"'{f}' must be >= 0", component=name, fix=f"set {f} >= 0")
        if not -90.0 < params.origin_latitude_deg < 90.0:
            raise ParameterError("'origin_latitude_deg' must be in (-90, 90)", component=name,
                                 fix="give a latitude strictly between the poles")
        soft = _vec("soft_iron", params.soft_iron, 9, name)
        if abs(np.linalg.det(np.reshape(soft, (3, 3)))) < 1e-9:
            raise ParameterError("'soft_iron' is singular", component=name,
                                 fix="give an invertible 3x3 matrix (identity: no soft iron)")
        if len(params.disturbances) % 5:
            raise ParameterError("'disturbances' must come in groups of 5", component=name,
                                 fix="give [t_start_s, t_end_s, bx_nt, by_nt, bz_nt, ...]")
        for f in ("hard_iron_nt", "current_coefficient_nt_per_a", "mount_xyz_m", "mount_rpy_rad"):
            _vec(f, getattr(params, f), 3, name)

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        name = self.name
        soft = _vec("soft_iron", params.soft_iron, 9, name)
        d = [float(v) for v in params.disturbances]
        self.model = MagnetometerModel(
            field_model=params.field_model, origin_latitude_deg=params.origin_latitude_deg,
            origin_longitude_deg=params.origin_longitude_deg,
            date_decimal_year=params.date_decimal_year,
            declared_declination_deg=params.declared_declination_deg,
            declared_inclination_deg=params.declared_inclination_deg,
            declared_intensity_nt=params.declared_intensity_nt,
            hard_iron_nt=_vec("hard_iron_nt", params.hard_iron_nt, 3, name), soft_iron=soft,
            noise_nt=params.noise_nt,
            current_coefficient_nt_per_a=_vec("current_coefficient_nt_per_a",
                                              params.current_coefficient_nt_per_a, 3, name),
            disturbances=tuple(tuple(d[i:i + 5]) for i in range(0, len(d), 5)),
            mount=Mount(_vec("mount_xyz_m", params.mount_xyz_m, 3, name),
                        _vec("mount_rpy_rad", params.mount_rpy_rad, 3, name)))
        self.latency_ns = round(params.latency_s * 1e9)
        # Evaluate the field model now (importing ppigrf takes a moment), not in a step.
        self.model.earth_field_ned(np.zeros((1, 3)), np.zeros(1))

    def _measure(self, k: int, t_ns: int, state, thrusters) -> sensors_pb2.Magnetometer:
        msg = sensors_pb2.Magnetometer(header=self.header(t_ns, self.name))
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        current = None
        if thrusters is not None:
            current = sum(th.current_a for th in thrusters.thrusters)
        s = magnetometer_measure(self.model, self.noise, k, t_ns * 1e-9, truth.position_ned_m,
                                 truth.quaternion, current)
        msg.true_field_nt.x, msg.true_field_nt.y, msg.true_field_nt.z = s.true_field_nt[0]
        msg.field_nt.x, msg.field_nt.y, msg.field_nt.z = s.field_nt[0]
        set_valid(msg.validity)
        return msg

    def measure(self, k: int, t_ns: int, inputs):
        return self._measure(k, t_ns, inputs.get("state"), inputs.get("thrusters"))
