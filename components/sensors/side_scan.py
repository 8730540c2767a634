"""Side-scan sonar (docs/sensors.md (side-scan)).

Two fan beams, port and starboard, perpendicular to the sensor's x axis (along
track): narrow along track (width Δ_a), wide in the vertical plane (aperture β about
the depression θ_c below the horizontal). Each side is sampled by M along-track rays δ_m
(δ_m = ((m + ½)/M - ½) Δ_a) times E depression rays θ_e over [θ_c - β/2, θ_c + β/2];
ray (m, e) of side σ (+1 starboard, -1 port) leaves along
(sin δ, σ cos δ cos θ, cos δ sin θ) in the sensor frame (x forward, y starboard, z down).

The echo of a ray, the time-varied gain, the speckle and the noise floor are those of
the forward-looking sonar (``imaging_sonar``: ``echo_image``, ``speckle_and_noise``),
with the beam patterns P_a(δ) = 2^(-(2δ/Δ_a)²), P_e(θ) = 2^(-(2(θ - θ_c)/β)²) and the
solid angle Ω = (Δ_a/M) Δθ cos δ, and with ``footprint_spreading`` each ray's echo spread
over r ± r Δθ tan γ / 2. One ping is one line per side: intensity against
slant range; the ground between the nadir and the first return is dark (the water
column), and an object casts an acoustic **shadow** behind it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.noise import KeyedNoise
from .acoustic import WATER_DOC, configure_common, surroundings
from ..sdk.frames import rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .imaging_sonar import echo_image, speckle_and_noise

VALID = 0
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE


@dataclass(frozen=True)
class SideScanParams:
    """Beams, range bins, acoustics and noise of a side-scan sonar."""

    along_track_beam_width_deg: float = 1.0
    """Δ_a, deg (-3 dB one-way)."""
    aperture_deg: float = 50.0
    """β: vertical aperture of each side, deg."""
    depression_deg: float = 20.0
    """θ_c: depression of the beam centre below the horizontal, deg."""
    along_track_rays: int = 3
    """M."""
    depression_rays: int = 96
    """E."""
    range_min_m: float = 0.5
    """Near edge of bin 0 (slant range), m."""
    range_max_m: float = 50.0
    """Far edge of the last bin, m."""
    range_bins: int = 500
    """Bins per side."""
    source_level: float = 1.0
    """SL, linear (the intensity unit)."""
    absorption_db_per_m: float = 0.0
    """α of the water, dB/m."""
    tvg_db_per_decade: float = 20.0
    """Time-varied gain spreading term, dB per decade."""
    tvg_absorption_db_per_m: float = 0.0
    """α_TVG, dB/m."""
    noise_floor: float = 0.0
    """Mean N0 of the additive exponential noise, linear."""
    speckle: bool = True
    """Multiplicative Rayleigh speckle."""
    default_backscatter_db: float = -30.0
    """BS of surfaces whose class has none (the flat seabed), dB."""
    footprint_spreading: bool = True
    """Spread each ray's echo over its footprint in range (``echo_image``)."""

    def check(self) -> None:
        if self.along_track_rays < 1 or self.depression_rays < 1 or self.range_bins < 1:
            raise ValueError("along_track_rays, depression_rays and range_bins must be >= 1")
        if not 0 <= self.range_min_m < self.range_max_m < np.inf:
            raise ValueError("need 0 <= range_min_m < range_max_m < inf")
        if not (0 < self.along_track_beam_width_deg < 90 and 0 < self.aperture_deg < 180):
            raise ValueError("along_track_beam_width_deg in (0, 90), aperture_deg in (0, 180)")
        if not -90 <= self.depression_deg - self.aperture_deg / 2 <= \
                self.depression_deg + self.aperture_deg / 2 <= 90:
            raise ValueError("the aperture must stay within +-90 deg of the horizontal")
        if not (self.source_level > 0 and self.absorption_db_per_m >= 0 and self.noise_floor >= 0
                and self.tvg_absorption_db_per_m >= 0):
            raise ValueError("need source_level > 0; absorption_db_per_m, "
                             "tvg_absorption_db_per_m and noise_floor >= 0")

    @property
    def range_resolution_m(self) -> float:
        return (self.range_max_m - self.range_min_m) / self.range_bins


@dataclass
class SideScanPing:
    """One ping: (range_bins, 2) arrays, column 0 port, 1 starboard."""

    index: int
    reason: int
    intensity: np.ndarray
    true_intensity: np.ndarray
    true_label: np.ndarray
    sensor_depth_m: float
    params: SideScanParams

    def fill(self, msg: acoustics_pb2.SideScan) -> acoustics_pb2.SideScan:
        p = self.params
        msg.range_start_m = p.range_min_m + 0.5 * p.range_resolution_m
        msg.range_resolution_m = p.range_resolution_m
        msg.true_port_label.extend(int(v) for v in self.true_label[:, 0])
        msg.true_starboard_label.extend(int(v) for v in self.true_label[:, 1])
        msg.true_port_intensity.extend(float(v) for v in self.true_intensity[:, 0])
        msg.true_starboard_intensity.extend(float(v) for v in self.true_intensity[:, 1])
        if self.reason != VALID:
            refuse(msg.validity, self.reason, f"transducer {-self.sensor_depth_m:.3f} m above "
                                              "the surface")
            return msg
        set_valid(msg.validity)
        msg.port_intensity.extend(float(v) for v in self.intensity[:, 0])
        msg.starboard_intensity.extend(float(v) for v in self.intensity[:, 1])
        return msg


class SideScanModel:
    """Pure side-scan sonar of one instance (seed, name) against a ray engine."""

    def __init__(self, params: SideScanParams, engine: Any,
                 backscatter_db: dict[int, float] | None = None, mount: Mount = Mount(),
                 seed: int = 0, name: str = "sss") -> None:
        params.check()
        self.params, self.engine, self.mount = params, engine, mount
        self.backscatter_db = dict(backscatter_db or {})
        self.noise = KeyedNoise(seed, name)
        p = params
        da = math.radians(p.along_track_beam_width_deg)
        beta, tc = math.radians(p.aperture_deg), math.radians(p.depression_deg)
        M, E = p.along_track_rays, p.depression_rays
        delta = ((np.arange(M) + 0.5) / M - 0.5) * da
        theta = np.full(1, tc) if E == 1 else np.linspace(tc - beta / 2, tc + beta / 2, E)
        d_theta = beta / (E - 1) if E > 1 else beta
        side = np.array([-1.0, 1.0])[:, None, None]  # port, starboard
        dd = np.broadcast_to(delta[None, :, None], (2, M, E))
        tt = np.broadcast_to(theta[None, None, :], (2, M, E))
        ss = np.broadcast_to(side, (2, M, E))
        self.rays = np.stack([np.sin(dd), ss * np.cos(dd) * np.cos(tt), np.cos(dd) * np.sin(tt)],
                             axis=-1).reshape(-1, 3)
        self.side_of_ray = np.broadcast_to(np.arange(2)[:, None, None], (2, M, E)).ravel()
        pattern = (2.0 ** (-(2 * dd / da) ** 2)) ** 2 * (2.0 ** (-(2 * (tt - tc) / beta) ** 2)) ** 2
        self.ray_gain = (p.source_level * pattern * (da / M) * d_theta * np.cos(dd)).ravel()
        self.spread_rad = d_theta if p.footprint_spreading else 0.0

    def measure(self, position_ned_m, quaternion, k: int = 0) -> SideScanPing:
        """Ping k from one position (3,) and quaternion (4,)."""
        p = self.params
        R_wb = rot_from_quat(np.asarray(quaternion, dtype=float))
        R_ws = R_wb @ self.mount.R_bs
        p_s = np.asarray(position_ned_m, dtype=float) + R_wb @ self.mount.r
        clean, label = echo_image(self.engine, p_s, self.rays @ R_ws.T, self.ray_gain,
                                  self.side_of_ray, 2, p, self.backscatter_db, self.spread_rad)
        img = speckle_and_noise(self.noise, k, clean, p.speckle, p.noise_floor)
        reason = ABOVE_SURFACE if p_s[2] < 0 else VALID
        return SideScanPing(k, reason, img, clean, label, float(p_s[2]), p)


class SideScanSensor(SensorComponent):
    """Side-scan sonar: port and starboard ping lines (intensity against slant range)
    from the scene (or a flat seabed) with beam patterns, time-varied gain, Rayleigh
    speckle and a noise floor; truth per bin (noise-free intensity, class id)."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("side_scan", acoustics_pb2.SideScan, "port and starboard ping lines"),)
    output_port = "side_scan"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML); empty: a flat seabed at seabed_depth_m")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed without a scene (NED z)",
                                      unit="m")
        water: dict = param({}, WATER_DOC + " (unused: no refraction)")
        along_track_beam_width_deg: float = param(1.0, "along-track beam width (-3 dB one-way)",
                                                  unit="deg")
        aperture_deg: float = param(50.0, "vertical aperture of each side", unit="deg")
        depression_deg: float = param(20.0, "depression of the beam centre below the horizontal",
                                      unit="deg")
        along_track_rays: int = param(3, "rays along track per side")
        depression_rays: int = param(96, "rays across the vertical aperture per side")
        range_min_m: float = param(0.5, "near edge of the first range bin", unit="m")
        range_max_m: float = param(50.0, "far edge of the last range bin", unit="m")
        range_bins: int = param(500, "number of range bins")
        source_level: float = param(1.0, "source level (the intensity unit), linear")
        absorption_db_per_m: float = param(0.0, "absorption of the water", unit="dB/m")
        tvg_db_per_decade: float = param(20.0, "time-varied gain spreading term",
                                         unit="dB/decade")
        tvg_absorption_db_per_m: float = param(0.0, "absorption the time-varied gain "
                                                    "compensates", unit="dB/m")
        noise_floor: float = param(0.0, "mean of the additive exponential noise, linear")
        speckle: bool = param(True, "multiplicative Rayleigh speckle")
        footprint_spreading: bool = param(True, "spread each ray's echo over its footprint "
                                                "in range")
        default_backscatter_db: float = param(-30.0, "backscatter of surfaces without a class "
                                                     "value (the flat seabed)", unit="dB")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX); x along "
                                                 "track", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        names = [f for f in SideScanParams.__dataclass_fields__]
        self.sensor_params = SideScanParams(**{f: getattr(params, f) for f in names})
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, params.seabed_depth_m, params.water, self.name)
        bs = ({c: s.backscatter_db for c, s in env.scene.classes.items()}
              if env.scene is not None else {})
        self.model = SideScanModel(self.sensor_params, env.engine, bs, self.mount, self.seed,
                                   self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.SideScan(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        return self.model.measure(truth.position_ned_m, truth.quaternion, k).fill(msg)
