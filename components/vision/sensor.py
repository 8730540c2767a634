"""The image sensor: radiance -> digital numbers (docs/deepsea-camera.md, "Sensor").

Call order::

    s = SensorOptions(...)                   # checks
    dn = expose(L, rays_cam, s, rng, snow)   # (H, W, 3) or (H, W) Bayer; uint8 / uint16

In this order, per pixel and channel:

1. **vignetting** (natural, cos^n law): L · cos^n α, cos α = d_c,z of the pixel's ray
   (n = ``vignetting_exponent``, 4 for the cos⁴ law of a thin lens; 0: none);
2. **exposure**: electrons e = L · cos^n α · t_exp · k (k = ``sensitivity``, electrons
   per unit radiance per second: lens aperture, pixel area and quantum efficiency in
   one number), clipped at the full well;
3. **shot and read noise**: e + sqrt(e) z_1 + σ_r z_2 ≈ Poisson shot noise plus
   Gaussian read noise (σ_r = ``read_noise_e``), z standard normals keyed by (seed,
   instance, "image", frame index): the same frame in any process;
   With ``auto_exposure`` the exposure time is first scaled by x <= 1 (bright scenes)
   or the gain raised to g <= ``max_gain`` (dark ones) so that the 99th percentile of
   the green electrons maps to ``auto_exposure_target`` of full scale;
4. **gain and quantisation**: DN = round(e · g · (2^bits - 1) / full_well), g the
   analogue gain, clipped to [0, 2^bits - 1]; bits 8 (uint8), 12 or 16 (uint16);
5. **Bayer** (optional): one channel per pixel in an RGGB pattern.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..localization.render import standard_normals


@dataclass(frozen=True)
class SensorOptions:
    """Sensor and exposure."""

    exposure_s: float = 0.01
    """Exposure time t_exp, s."""
    sensitivity: float = 4.0e5
    """k: electrons per unit radiance (W m^-2 sr^-1) per second of exposure."""
    full_well_e: float = 10000.0
    """Full-well capacity, electrons."""
    gain: float = 1.0
    """Analogue gain g (1: the full well fills the range)."""
    read_noise_e: float = 3.0
    """Read noise σ_r, electrons."""
    shot_noise: bool = True
    """Photon shot noise (Gaussian approximation of Poisson)."""
    bit_depth: int = 8
    """8, 12 or 16 bits per sample."""
    bayer: bool = False
    """Output an RGGB Bayer mosaic (one channel per pixel) instead of RGB."""
    vignetting_exponent: float = 4.0
    """n of the cos^n natural vignetting (0: none)."""
    auto_exposure: bool = False
    """Set the exposure and gain per frame so the 99th percentile of the green signal
    lands at ``auto_exposure_target`` of full scale (an ideal auto-exposure: it reads
    the frame it exposes)."""
    auto_exposure_target: float = 0.7
    """Fraction of full scale for the 99th percentile of G."""
    max_gain: float = 16.0
    """Largest analogue gain auto-exposure may use."""

    def __post_init__(self) -> None:
        if self.bit_depth not in (8, 12, 16):
            raise ValueError(f"bit_depth must be 8, 12 or 16, got {self.bit_depth}")
        for key in ("exposure_s", "sensitivity", "full_well_e", "gain"):
            v = getattr(self, key)
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{key} must be > 0, got {v}")
        if not 0 < self.auto_exposure_target <= 1 or not self.max_gain >= 1:
            raise ValueError("auto_exposure_target must be in (0, 1] and max_gain >= 1")
        if not (self.read_noise_e >= 0 and self.vignetting_exponent >= 0):
            raise ValueError("read_noise_e and vignetting_exponent must be >= 0")

    @property
    def max_dn(self) -> int:
        return (1 << self.bit_depth) - 1

    @property
    def dtype(self):
        return np.uint8 if self.bit_depth == 8 else np.uint16

    @property
    def encoding(self) -> str:
        """The ImageHeader encoding of the output."""
        if self.bayer:
            return "bayer_rggb8" if self.bit_depth == 8 else "bayer_rggb16"
        return "rgb8" if self.bit_depth == 8 else "rgb16"


def bayer_rggb(img: np.ndarray) -> np.ndarray:
    """(H, W, 3) -> (H, W): R at even rows/even columns, B at odd/odd, G elsewhere."""
    out = img[..., 1].copy()
    out[0::2, 0::2] = img[0::2, 0::2, 0]
    out[1::2, 1::2] = img[1::2, 1::2, 2]
    return out


def expose(L: np.ndarray, rays_cam: np.ndarray, s: SensorOptions,
           rng: np.random.Generator | None) -> np.ndarray:
    """Radiance (H, W, 3) -> DN image (module docstring); ``rng`` None: no noise."""
    L = np.asarray(L, np.float32)
    scale = np.float32(s.exposure_s * s.sensitivity)
    if s.vignetting_exponent:
        v = (rays_cam[..., 2] ** s.vignetting_exponent).astype(np.float32)
        e = L * (v[..., None] * scale)
    else:
        e = L * scale
    gain = s.gain
    if s.auto_exposure:
        g = e[::4, ::4, 1].reshape(-1)
        p99 = float(np.partition(g, int(0.99 * (g.size - 1)))[int(0.99 * (g.size - 1))]) if g.size else 0.0
        if p99 > 0:
            f = s.auto_exposure_target * s.full_well_e / p99
            if f < 1.0:
                e *= np.float32(f)
                gain = 1.0
            else:
                gain = min(f, s.max_gain)
        else:
            gain = s.max_gain
    if s.bayer:
        e = bayer_rggb(e)
    np.minimum(e, np.float32(s.full_well_e), out=e)
    if rng is not None and (s.shot_noise or s.read_noise_e > 0):
        var = np.full(e.shape, np.float32(s.read_noise_e ** 2))
        if s.shot_noise:
            var += e
        e += np.sqrt(var) * standard_normals(rng, e.shape)
    dn = e * np.float32(gain * s.max_dn / s.full_well_e) + np.float32(0.5)
    np.clip(dn, 0, s.max_dn, out=dn)
    return dn.astype(s.dtype)


def frame_rng(key: np.ndarray, k: int) -> np.random.Generator:
    """The generator of frame k of a keyed channel (as the pool camera's)."""
    return np.random.Generator(np.random.Philox(key=key, counter=np.array([0, k, 0, 0], np.uint64)))
