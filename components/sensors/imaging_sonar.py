"""Forward-looking imaging sonar (docs/sensors.md (imaging-sonar)).

A range × bearing intensity image. Sensor frame: x the boresight, y starboard, z down.
N beams at bearings ψ_j equally spaced over the horizontal field of view (spacing Δψ);
each beam is sampled by M azimuth sub-rays ψ_j + δ_m (δ_m = ((m + ½)/M - ½) Δψ) times E
elevation rays ε_e equally spaced over the vertical aperture (ε > 0 looks down; tilt the
sonar with ``mount_rpy_rad``). Ray (m, e) leaves along (cos ε cos ψ, cos ε sin ψ, sin ε).

**Echo of one ray** that meets the scene at range r with incidence cos γ = -n·d on a
surface of backscatter strength BS (dB, the scene's class table; Lambert's law
σ = 10^(BS/10) cos²γ)::

    I = SL · P_a(δ)² P_e(ε)² · 10^(BS/10) cos γ · Ω / r² · 10^(-2 α r / 10)
    P_a(δ) = 2^(-(2δ/Δψ)²),   P_e(ε) = 2^(-(2ε/β_e)²)     (one-way beam patterns:
                                                           -3 dB at the beam width)
    Ω = (Δψ/M) · Δε · cos ε                                (the ray's solid angle)

(the ensonified area Ω r² / cos γ, spreading 1/r⁴). **Time-varied gain** multiplies by
r^(TVG/10) · 10^(2 α_TVG r / 10): with TVG = 20 dB/decade (the default) and α_TVG = α a
seabed of uniform BS seen at the same incidence gives the same intensity at every range. The echoes of the
rays of beam j that fall in range bin b (bins of Δr over [range_min, range_max]) add up;
with ``footprint_spreading`` (default) each ray's echo is spread uniformly over the
slant ranges of its footprint, r ± r Δε tan γ / 2, so that far bins between two rays
are not left dark.

**Speckle and noise.** The coherent sum of many scatterers has a Rayleigh amplitude,
i.e. an exponential intensity: each cell is multiplied by S = -ln u (u keyed uniform,
mean 1, variance 1) and an exponential noise floor N0 (-ln u') is added. The draws of
ping k are the keyed Philox blocks k·Q .. k·Q + Q - 1 of channels ``speckle`` and
``noise`` (Q = ⌈cells / 4⌉, four cells per block), so every cell of every ping has its
own key-determined draw.

Truth per cell: the noise-free intensity and the class id of its strongest contribution.
Refused above the surface (ABOVE_SURFACE).

**Image.** Beside the ``sonar`` message the component publishes the ping as an image
(``image``: an ``ImageHeader``, ``mono8``, the pixels attached as a raw frame, like the
camera's; Foxglove shows it with ``run.foxglove_images``): one column per beam (port
on the left), one row per range bin with the far range at the top, the level
255 · (10 log10(I / I_max) + D) / D clipped to [0, 255], with I_max the ping's
strongest cell and D = ``image_dynamic_range_db`` (``sonar_image_pixels``). A refused
ping is an all-zero image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2, vision_pb2

from ..sdk.component import Attached, Port, param
from ..sdk.errors import ParameterError
from ..sdk.noise import KeyedNoise
from .acoustic import BODIES_DOC, SeesBodies, WATER_DOC, configure_common, surroundings
from ..sdk.frames import rot_from_quat
from .common import (Mount, SensorComponent, extend_packed, refuse, set_valid,
                     truth_from_state)

VALID = 0
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE


@dataclass(frozen=True)
class ImagingSonarParams:
    """Field of view, sampling, acoustics and noise of a forward-looking sonar."""

    beam_count: int = 96
    """Number of beams N."""
    fov_azimuth_deg: float = 90.0
    """Horizontal field of view (first to last beam centre), deg."""
    aperture_elevation_deg: float = 20.0
    """Vertical aperture β_e (-3 dB one-way, also the span of the elevation rays), deg."""
    azimuth_rays: int = 3
    """Sub-rays M per beam in azimuth."""
    elevation_rays: int = 24
    """Rays E across the vertical aperture."""
    range_min_m: float = 0.5
    """Near edge of bin 0, m."""
    range_max_m: float = 40.0
    """Far edge of the last bin, m."""
    range_bins: int = 256
    """Number of range bins."""
    source_level: float = 1.0
    """SL, linear (the intensity unit)."""
    absorption_db_per_m: float = 0.0
    """α of the water, dB/m (e.g. 0.1 at ~900 kHz)."""
    tvg_db_per_decade: float = 20.0
    """Time-varied gain spreading term, dB per decade of range."""
    tvg_absorption_db_per_m: float = 0.0
    """α_TVG the gain compensates, dB/m (= absorption_db_per_m: fully compensated)."""
    noise_floor: float = 0.0
    """Mean N0 of the additive exponential noise, linear."""
    speckle: bool = True
    """Multiply each cell by exponential (Rayleigh-amplitude) speckle."""
    default_backscatter_db: float = -30.0
    """BS of a surface whose class has none (the flat seabed), dB."""
    footprint_spreading: bool = True
    """Spread each ray's echo over its footprint in range (``echo_image``)."""

    def check(self) -> None:
        if self.beam_count < 1 or self.azimuth_rays < 1 or self.elevation_rays < 1:
            raise ValueError("beam_count, azimuth_rays and elevation_rays must be >= 1")
        if self.range_bins < 1 or not 0 <= self.range_min_m < self.range_max_m < np.inf:
            raise ValueError("need range_bins >= 1 and 0 <= range_min_m < range_max_m < inf")
        if not (0 <= self.fov_azimuth_deg < 360 and 0 < self.aperture_elevation_deg < 180):
            raise ValueError("fov_azimuth_deg in [0, 360), aperture_elevation_deg in (0, 180)")
        if not (self.source_level > 0 and self.absorption_db_per_m >= 0 and self.noise_floor >= 0
                and self.tvg_absorption_db_per_m >= 0):
            raise ValueError("need source_level > 0; absorption_db_per_m, "
                             "tvg_absorption_db_per_m and noise_floor >= 0")

    @property
    def bearings_rad(self) -> np.ndarray:
        half = math.radians(self.fov_azimuth_deg) / 2
        return np.zeros(1) if self.beam_count == 1 else np.linspace(-half, half, self.beam_count)

    @property
    def beam_spacing_rad(self) -> float:
        """Δψ (the field of view itself for one beam)."""
        fov = math.radians(self.fov_azimuth_deg)
        return fov / (self.beam_count - 1) if self.beam_count > 1 else max(fov, 1e-3)

    @property
    def range_resolution_m(self) -> float:
        return (self.range_max_m - self.range_min_m) / self.range_bins


@dataclass
class SonarImage:
    """One ping: (range_bins, beam_count) arrays."""

    index: int
    reason: int
    intensity: np.ndarray
    true_intensity: np.ndarray
    true_label: np.ndarray
    sensor_depth_m: float
    params: ImagingSonarParams

    def fill(self, msg: acoustics_pb2.ImagingSonar) -> acoustics_pb2.ImagingSonar:
        p = self.params
        msg.range_start_m = p.range_min_m + 0.5 * p.range_resolution_m
        msg.range_resolution_m = p.range_resolution_m
        msg.n_ranges = p.range_bins
        extend_packed(msg, "bearings_rad", p.bearings_rad)
        extend_packed(msg, "true_label", self.true_label)
        extend_packed(msg, "true_intensity", self.true_intensity)
        if self.reason != VALID:
            refuse(msg.validity, self.reason, f"transducer {-self.sensor_depth_m:.3f} m above "
                                              "the surface")
            return msg
        set_valid(msg.validity)
        extend_packed(msg, "intensity", self.intensity)
        return msg


class ImagingSonarModel:
    """Pure forward-looking sonar of one instance (seed, name) against a ray engine;
    ``backscatter_db``: class id -> BS, dB."""

    def __init__(self, params: ImagingSonarParams, engine: Any,
                 backscatter_db: dict[int, float] | None = None, mount: Mount = Mount(),
                 seed: int = 0, name: str = "sonar") -> None:
        params.check()
        self.params, self.engine, self.mount = params, engine, mount
        self.backscatter_db = dict(backscatter_db or {})
        self.noise = KeyedNoise(seed, name)
        p = params
        dpsi = p.beam_spacing_rad
        M, E = p.azimuth_rays, p.elevation_rays
        delta = ((np.arange(M) + 0.5) / M - 0.5) * dpsi
        beta = math.radians(p.aperture_elevation_deg)
        eps = np.zeros(1) if E == 1 else np.linspace(-beta / 2, beta / 2, E)
        d_eps = beta / (E - 1) if E > 1 else beta
        psi = p.bearings_rad[:, None, None] + delta[None, :, None]  # (N, M, 1)
        ee = np.broadcast_to(eps[None, None, :], psi.shape[:2] + (E,))
        psi = np.broadcast_to(psi, ee.shape)
        self.beam_of_ray = np.broadcast_to(np.arange(p.beam_count)[:, None, None], ee.shape).ravel()
        self.rays = np.stack([np.cos(ee) * np.cos(psi), np.cos(ee) * np.sin(psi), np.sin(ee)],
                             axis=-1).reshape(-1, 3)
        pattern = (2.0 ** (-(2 * delta / dpsi) ** 2))[None, :, None] ** 2 * (
            2.0 ** (-(2 * eps / beta) ** 2))[None, None, :] ** 2
        omega = (dpsi / M) * d_eps * np.cos(ee)
        self.ray_gain = (p.source_level * np.broadcast_to(pattern, ee.shape) * omega).ravel()
        self.spread_rad = d_eps if p.footprint_spreading else 0.0

    def measure(self, position_ned_m, quaternion, k: int = 0) -> SonarImage:
        """Ping k from one position (3,) and quaternion (4,)."""
        p = self.params
        R_wb = rot_from_quat(np.asarray(quaternion, dtype=float))
        R_ws = R_wb @ self.mount.R_bs
        p_s = np.asarray(position_ned_m, dtype=float) + R_wb @ self.mount.r
        dirs = self.rays @ R_ws.T
        clean, label = echo_image(self.engine, p_s, dirs, self.ray_gain, self.beam_of_ray,
                                  p.beam_count, p, self.backscatter_db, self.spread_rad)
        img = speckle_and_noise(self.noise, k, clean, p.speckle, p.noise_floor)
        reason = ABOVE_SURFACE if p_s[2] < 0 else VALID
        return SonarImage(k, reason, img, clean, label, float(p_s[2]), p)


def echo_image(engine: Any, p_s: np.ndarray, dirs: np.ndarray, ray_gain: np.ndarray,
               beam_of_ray: np.ndarray, n_beams: int, p: Any,
               backscatter_db: dict[int, float],
               spread_rad: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(noise-free intensity, truth label), each (range_bins, n_beams): the rays' echoes
    (module docstring) after the time-varied gain, summed per (range bin, beam). ``p``
    has range_min_m, range_max_m, range_bins, range_resolution_m, tvg_db_per_decade,
    absorption_db_per_m, tvg_absorption_db_per_m and default_backscatter_db.

    ``spread_rad`` > 0: each ray stands for an angular interval Δθ across range; its echo
    is spread uniformly over the slant ranges r ± w/2 of its footprint, w = r Δθ tan γ
    (γ the incidence from the normal, tan γ capped at tan 89°), instead of falling in one
    bin — without it, far bins between two rays stay dark."""
    hits = engine.cast(p_s, dirs, p.range_max_m)
    r = hits.distance_m
    shape = (p.range_bins, n_beams)
    clean = np.zeros(shape)
    label = np.zeros(shape, dtype=np.int32)
    use = np.isfinite(r) & (r >= p.range_min_m)
    if not use.any():
        return clean, label
    rr = r[use]
    cos_g = np.clip(-np.einsum("ij,ij->i", hits.normal_ned[use], dirs[use]), 0.0, 1.0)
    lab = hits.label[use]
    beam = beam_of_ray[use]
    classes, inverse = np.unique(lab, return_inverse=True)
    bs = np.array([backscatter_db.get(int(c), p.default_backscatter_db) for c in classes])[inverse]
    # TVG r^(TVG/10) 10^(2 α_TVG r/10) over the 1/r² 10^(-2 α r/10) of the echo
    gain_db = ((p.tvg_db_per_decade - 20.0) * np.log10(rr)
               - 2.0 * (p.absorption_db_per_m - p.tvg_absorption_db_per_m) * rr)
    I = ray_gain[use] * 10.0 ** (bs / 10.0) * cos_g * 10.0 ** (gain_db / 10.0)
    dr = p.range_resolution_m
    tan_g = np.minimum(np.sqrt(np.maximum(1.0 - cos_g ** 2, 0.0)) / np.maximum(cos_g, 1e-300),
                       math.tan(math.radians(89.0)))
    w = rr * spread_rad * tan_g
    lo, hi = rr - w / 2, rr + w / 2
    b_lo = np.floor((lo - p.range_min_m) / dr).astype(int)
    b_hi = np.floor((hi - p.range_min_m) / dr).astype(int)
    # One (ray, bin) pair per bin a ray's footprint overlaps, bins outside the image
    # left out: O(sum of the spans), not O(rays x the widest span).
    first = np.maximum(b_lo, 0)
    span = np.maximum(np.minimum(b_hi, p.range_bins - 1) - first + 1, 0)
    ray = np.repeat(np.arange(rr.size), span)
    b = first[ray] + (np.arange(ray.size) - np.repeat(np.cumsum(span) - span, span))
    edge0 = p.range_min_m + b * dr
    wr = w[ray]
    overlap = np.minimum(hi[ray], edge0 + dr) - np.maximum(lo[ray], edge0)
    frac = np.where(wr > 0, np.clip(overlap, 0.0, None) / np.where(wr > 0, wr, 1.0), 1.0)
    keep = frac > 0
    ray, b = ray[keep], b[keep]
    cell, part, lab = b * n_beams + beam[ray], I[ray] * frac[keep], lab[ray]
    clean = np.bincount(cell, weights=part, minlength=clean.size).reshape(shape)
    if cell.size:
        # The label of a cell: its strongest part (of equal ones, the last ray's: the
        # parts are in ray order). Unbuffered maxima per cell, no sort.
        top = np.full(clean.size, -np.inf)
        np.maximum.at(top, cell, part)
        at_top = np.flatnonzero(part == top[cell])
        last = np.full(clean.size, -1, dtype=np.intp)
        np.maximum.at(last, cell[at_top], at_top)
        won = np.flatnonzero(last >= 0)
        label.ravel()[won] = lab[last[won]]
    return clean, label


def sonar_image_pixels(intensity: np.ndarray, dynamic_range_db: float) -> np.ndarray:
    """(range_bins, beams) intensities -> uint8 image, far range in row 0: the level
    255 · (10 log10(I / I_max) + D) / D clipped to [0, 255] (all 0 when I_max <= 0)."""
    img = np.zeros(intensity.shape, dtype=np.uint8)
    top = float(np.max(intensity)) if intensity.size else 0.0
    if top > 0:
        with np.errstate(divide="ignore"):
            db = 10.0 * np.log10(np.maximum(intensity, 0.0) / top)
        img = np.clip(np.rint(255.0 * (db + dynamic_range_db) / dynamic_range_db), 0,
                      255).astype(np.uint8)
    return np.ascontiguousarray(img[::-1])


def speckle_and_noise(noise: KeyedNoise, k: int, clean: np.ndarray, speckle: bool,
                      noise_floor: float) -> np.ndarray:
    """clean × S + N0 E with S, E exponential(1): keyed blocks k·Q .. k·Q + Q - 1 of the
    channels ``speckle`` and ``noise`` (Q = ceil(cells / 4))."""
    n_cells = clean.size
    q = -(-n_cells // 4)
    img = clean
    if speckle:
        u = noise.uniform_range(k * q, q, "speckle", 4).ravel()[:n_cells]
        img = img * -np.log(u).reshape(clean.shape)
    if noise_floor > 0:
        u = noise.uniform_range(k * q, q, "noise", 4).ravel()[:n_cells]
        img = img + noise_floor * -np.log(u).reshape(clean.shape)
    return img


class ImagingSonarSensor(SeesBodies, SensorComponent):
    """Forward-looking imaging sonar: a range × bearing intensity image of the scene
    (or a flat seabed) with beam patterns, time-varied gain, Rayleigh speckle and a noise
    floor; truth per cell (noise-free intensity, class id)."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("sonar", acoustics_pb2.ImagingSonar, "range x bearing intensity image"),
               Port("image", vision_pb2.ImageHeader, "the ping as a mono8 image (beams across, "
                    "far range at the top), pixels attached", attachment=True))
    output_port = "sonar"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML); empty: a flat seabed at seabed_depth_m")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed without a scene (NED z)",
                                      unit="m")
        water: dict = param({}, WATER_DOC + " (unused: no refraction)")
        bodies: dict = param({}, BODIES_DOC)
        beam_count: int = param(96, "number of beams")
        fov_azimuth_deg: float = param(90.0, "horizontal field of view", unit="deg")
        aperture_elevation_deg: float = param(20.0, "vertical aperture (-3 dB one-way)",
                                              unit="deg")
        azimuth_rays: int = param(3, "rays per beam in azimuth")
        elevation_rays: int = param(24, "rays across the vertical aperture")
        range_min_m: float = param(0.5, "near edge of the first range bin", unit="m")
        range_max_m: float = param(40.0, "far edge of the last range bin", unit="m")
        range_bins: int = param(256, "number of range bins")
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
                                                 "sensor axes relative to the body (ZYX); x is "
                                                 "the boresight", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")
        image_dynamic_range_db: float = param(60.0, "levels shown in the image: 0 at the "
                                                    "ping's strongest cell minus this", unit="dB")

        def __post_init__(self) -> None:
            from .acoustic import check_scene_parameters

            if not self.image_dynamic_range_db > 0:
                raise ParameterError("image_dynamic_range_db must be > 0",
                                     fix="give the image's dynamic range in dB, e.g. 60")
            check_scene_parameters(self)

    def configure(self, params: Parameters) -> None:
        self.dynamic_range_db = params.image_dynamic_range_db
        names = [f for f in ImagingSonarParams.__dataclass_fields__]
        self.sensor_params = ImagingSonarParams(**{f: getattr(params, f) for f in names})
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, params.seabed_depth_m, params.water, self.name)
        bs = ({c: s.backscatter_db for c, s in env.scene.classes.items()}
              if env.scene is not None else {})
        self.model = ImagingSonarModel(self.sensor_params, env.engine, bs, self.mount,
                                       self.seed, self.name)
        self.configure_bodies(params, env.scene)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.ImagingSonar(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        self.place_bodies(inputs)
        truth = truth_from_state(state)
        ping = self.model.measure(truth.position_ned_m, truth.quaternion, k)
        self._last_intensity = ping.intensity
        return ping.fill(msg)

    def step(self, t_ns, dt_ns, inputs):
        """As SensorComponent's, plus the ``image`` of the same ping (same stamp)."""
        k, self.k = self.k, self.k + 1
        msg = self.measure(k, t_ns, inputs)
        p = self.sensor_params
        if msg.validity.valid:  # the image of the published (float32) intensities
            inten = self._last_intensity.astype(np.float32).astype(np.float64)
            pixels = sonar_image_pixels(inten, self.dynamic_range_db)
        else:
            pixels = np.zeros((p.range_bins, p.beam_count), dtype=np.uint8)
        header = vision_pb2.ImageHeader(header=msg.header, width=p.beam_count,
                                        height=p.range_bins, encoding="mono8",
                                        step_bytes=p.beam_count)
        self.latency.push(t_ns, (msg, Attached(header, pixels.tobytes())))
        ready = self.latency.pop_ready(t_ns)
        if not ready:
            return None
        sonar, image = ready[-1]
        return {"sonar": sonar, "image": image}
