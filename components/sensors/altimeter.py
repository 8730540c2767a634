"""Single-beam altimeter / echosounder on the scene (docs/sensors.md (altimeter)).

The transducer sits at the lever arm r (p_s = p + R_wb r) and looks along its sensor
z axis. Its beam is a cone of full width β; the return is the **nearest** surface in
the cone, found by casting 1 + rings·azimuths rays (the axis and rings at half-angles
β/2 · j/rings, ``cone_directions``) and taking the shortest hit distance r_true.

The instrument turns the two-way travel time into a range with its nominal sound
speed c0; the sound really travels at the harmonic mean c_h of the water column
between the transducer and the return (``harmonic_mean_speed``), so::

    r = r_true · c0 / c_h + (σ0 + σ1 r_true) n_k,     n_k keyed (seed, name, "range", k)
    two-way travel time τ = 2 r / c0

Refused: no return within the cast distance or a noise-free range beyond max_range_m
or below min_range_m (OUT_OF_RANGE), the transducer above the surface
(ABOVE_SURFACE), random loss (DROPOUT).
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
from .acoustic import WATER_DOC, cone_directions, configure_common, surroundings
from ..sdk.frames import rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .sound_rays import harmonic_mean_speed

VALID = 0
OUT_OF_RANGE = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
DROPOUT = common_pb2.REFUSAL_REASON_DROPOUT

CAST_MARGIN = 1.25
"""Rays are cast to CAST_MARGIN · max_range_m, so a return just beyond the maximum
range (before the sound-speed scaling) is still seen and refused as such."""


@dataclass(frozen=True)
class AltimeterParams:
    """Beam, range window, sound speed and errors of an altimeter."""

    beam_width_deg: float = 10.0
    """Full cone angle β of the beam, deg (0: a single ray along the axis)."""
    cone_rings: int = 2
    """Rings of rays across the cone (besides the axis)."""
    cone_azimuths: int = 8
    """Rays per ring."""
    min_range_m: float = 0.3
    """Shortest measurable range (blanking), m."""
    max_range_m: float = 100.0
    """Longest measurable range, m."""
    nominal_sound_speed_mps: float = 1500.0
    """Sound speed c0 the instrument assumes, m/s."""
    range_noise_m: float = 0.01
    """Range noise σ0, m."""
    range_noise_per_m: float = 0.001
    """Range noise growth σ1 with range, m/m."""
    dropout_probability: float = 0.0
    """Probability of losing a ping."""

    def check(self) -> None:
        if not 0 <= self.beam_width_deg < 180:
            raise ValueError("beam_width_deg must be in [0, 180)")
        if self.cone_rings < 1 or self.cone_azimuths < 1:
            raise ValueError("cone_rings and cone_azimuths must be >= 1")
        if not 0 <= self.min_range_m < self.max_range_m < np.inf:
            raise ValueError("need 0 <= min_range_m < max_range_m < inf")
        if not self.nominal_sound_speed_mps > 0:
            raise ValueError("nominal_sound_speed_mps must be > 0")
        if not (self.range_noise_m >= 0 and self.range_noise_per_m >= 0):
            raise ValueError("range_noise_m and range_noise_per_m must be >= 0")
        if not 0 <= self.dropout_probability <= 1:
            raise ValueError("dropout_probability must be in [0, 1]")

    @property
    def rays(self) -> np.ndarray:
        """Ray directions across the cone, sensor frame, (m, 3)."""
        return cone_directions(math.radians(self.beam_width_deg) / 2, self.cone_rings,
                               self.cone_azimuths)


@dataclass
class AltimeterBatch:
    """n pings (arrays on axis 0); measured values NaN where refused."""

    index: np.ndarray
    reason: np.ndarray  # (n,) 0 or a REFUSAL_REASON_*
    range_m: np.ndarray
    true_range_m: np.ndarray  # inf: no return within the cast distance
    true_point_ned_m: np.ndarray  # (n, 3)
    true_label: np.ndarray
    true_instance: np.ndarray
    harmonic_sound_speed_mps: np.ndarray  # nan without a return
    sensor_depth_m: np.ndarray
    params: AltimeterParams

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID

    def fill(self, i: int, msg: acoustics_pb2.Altimeter) -> acoustics_pb2.Altimeter:
        p = self.params
        msg.nominal_sound_speed_mps = p.nominal_sound_speed_mps
        msg.true_range_m = float(self.true_range_m[i])
        if np.isfinite(self.true_range_m[i]):
            msg.true_point_ned_m.x, msg.true_point_ned_m.y, msg.true_point_ned_m.z = map(
                float, self.true_point_ned_m[i])
            msg.true_harmonic_sound_speed_mps = float(self.harmonic_sound_speed_mps[i])
        msg.true_label = int(self.true_label[i])
        msg.true_instance = int(self.true_instance[i])
        r = int(self.reason[i])
        if r == VALID:
            set_valid(msg.validity)
            msg.range_m = float(self.range_m[i])
            msg.two_way_travel_time_s = 2.0 * msg.range_m / p.nominal_sound_speed_mps
        elif r == ABOVE_SURFACE:
            refuse(msg.validity, r, f"transducer {-self.sensor_depth_m[i]:.3f} m above the surface")
        elif r == DROPOUT:
            refuse(msg.validity, r, "ping lost (random dropout)")
        elif not np.isfinite(self.true_range_m[i]):
            refuse(msg.validity, r, f"no return within {CAST_MARGIN * p.max_range_m:g} m in the "
                                    f"{p.beam_width_deg:g} deg cone (max range {p.max_range_m:g} m)")
        else:
            rr = self.true_range_m[i] * p.nominal_sound_speed_mps / self.harmonic_sound_speed_mps[i]
            refuse(msg.validity, r, f"range {rr:.2f} m outside [{p.min_range_m:g}, "
                                    f"{p.max_range_m:g}] m")
        return msg


class AltimeterModel:
    """Pure vectorised altimeter of one instance (seed, name) against a ray engine
    (``cast(origins, directions, max_range_m) -> Hits``) and a water column
    (``sound_speed_mps(depth)``)."""

    def __init__(self, params: AltimeterParams, engine: Any, water: Any, mount: Mount = Mount(),
                 seed: int = 0, name: str = "altimeter") -> None:
        params.check()
        self.params, self.engine, self.water, self.mount = params, engine, water, mount
        self.noise = KeyedNoise(seed, name)
        self.rays = params.rays

    def measure(self, position_ned_m, quaternion, first: int = 0) -> AltimeterBatch:
        """Pings first..first+n-1 from n positions (n, 3) and quaternions (n, 4)."""
        p = self.params
        pos = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
        n, m = pos.shape[0], self.rays.shape[0]
        R_wb = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
        R_ws = R_wb @ self.mount.R_bs
        p_s = pos + R_wb @ self.mount.r
        dirs = np.einsum("nij,kj->nki", R_ws, self.rays).reshape(-1, 3)
        origins = np.repeat(p_s, m, axis=0)
        hits = self.engine.cast(origins, dirs, CAST_MARGIN * p.max_range_m)
        dist = hits.distance_m.reshape(n, m)
        j = np.argmin(dist, axis=1)  # the first of equal minima: the axis first
        rows = np.arange(n) * m + j
        t_true = dist[np.arange(n), j]
        seen = np.isfinite(t_true)
        point = hits.point_ned[rows]
        label = np.where(seen, hits.label[rows], 0)
        instance = np.where(seen, hits.instance[rows], 0)
        depth = p_s[:, 2]
        c_h = np.full(n, np.nan)
        if seen.any():
            c_h[seen] = harmonic_mean_speed(self.water.sound_speed_mps, depth[seen],
                                            point[seen, 2])
        r_clean = np.where(seen, t_true * p.nominal_sound_speed_mps / np.where(seen, c_h, 1.0),
                           np.inf)
        z = self.noise.normal_range(first, n, "range")[:, 0]
        lost = self.noise.uniform_range(first, n, "dropout")[:, 0] < p.dropout_probability
        sigma = p.range_noise_m + p.range_noise_per_m * np.where(seen, t_true, 0.0)
        r = r_clean + sigma * z
        reason = np.full(n, VALID)
        reason[lost] = DROPOUT
        reason[~seen | (r_clean > p.max_range_m) | (r_clean < p.min_range_m)] = OUT_OF_RANGE
        reason[depth < 0] = ABOVE_SURFACE
        return AltimeterBatch(np.arange(first, first + n), reason,
                              np.where(reason == VALID, r, np.nan), t_true, point, label,
                              instance, c_h, depth, p)


class AltimeterSensor(SensorComponent):
    """Single-beam altimeter: nearest return in the beam cone against the scene (or a
    flat seabed), sound-speed bias from the water column, keyed range noise; refused
    out of range, above the surface and on dropouts."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("altimeter", acoustics_pb2.Altimeter, "slant range along the beam axis"),)
    output_port = "altimeter"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML); empty: a flat seabed at seabed_depth_m")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed without a scene (NED z)",
                                      unit="m")
        water: dict = param({}, WATER_DOC)
        beam_width_deg: float = param(10.0, "full cone angle of the beam", unit="deg")
        cone_rings: int = param(2, "rings of rays across the cone (besides the axis)")
        cone_azimuths: int = param(8, "rays per ring")
        min_range_m: float = param(0.3, "shortest measurable range (blanking)", unit="m")
        max_range_m: float = param(100.0, "longest measurable range", unit="m")
        nominal_sound_speed_mps: float = param(1500.0, "sound speed the instrument assumes",
                                               unit="m/s")
        range_noise_m: float = param(0.01, "range noise at zero range (1 sigma)", unit="m")
        range_noise_per_m: float = param(0.001, "range noise growth with range", unit="m/m")
        dropout_probability: float = param(0.0, "probability of losing a ping")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX); the beam "
                                                 "looks along the sensor z axis", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        self.sensor_params = AltimeterParams(
            params.beam_width_deg, params.cone_rings, params.cone_azimuths, params.min_range_m,
            params.max_range_m, params.nominal_sound_speed_mps, params.range_noise_m,
            params.range_noise_per_m, params.dropout_probability)
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, params.seabed_depth_m, params.water, self.name)
        self.model = AltimeterModel(self.sensor_params, env.engine, env.water, self.mount,
                                    self.seed, self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.Altimeter(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        return self.model.measure(truth.position_ned_m, truth.quaternion, k).fill(0, msg)

