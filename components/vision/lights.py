"""Co-moving artificial lights: spot cones on the vehicle (docs/deepsea-camera.md,
"Lights").

A spot light at body position r_L with axis a_L (body frame, unit) emits the radiant
intensity (per channel, R G B; W sr^-1 or any consistent unit)

    I(θ) = I_0 · ((cos θ - cos θ_o) / (1 - cos θ_o))^p   for θ < θ_o,  0 beyond,

θ the angle from the axis, θ_o = beam_angle/2 the cone's half angle and p the falloff
exponent (p = 0: a hard-edged cone; a larger p narrows the hot spot). With
beam_angle = 360° (θ_o = 180°, cos θ_o = -1) and p = 0 it is an isotropic point source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SpotLight:
    """One light on the vehicle."""

    position_body_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position in the body frame (FRD), m."""
    direction_body: tuple[float, float, float] = (0.0, 0.0, 1.0)
    """Axis in the body frame (need not be unit; default straight down)."""
    intensity: tuple[float, float, float] = (1.0, 1.0, 1.0)
    """I_0 per channel (R, G, B) on the axis, W/sr (any unit consistent with the exposure)."""
    beam_angle_deg: float = 90.0
    """Full cone angle 2 θ_o, deg (360: every direction)."""
    falloff: float = 1.0
    """Exponent p of the angular profile (0: hard edge)."""

    def __post_init__(self) -> None:
        d = np.asarray(self.direction_body, float)
        if d.shape != (3,) or not np.all(np.isfinite(d)) or not np.linalg.norm(d) > 1e-9:
            raise ValueError("a light's direction_body is zero or not 3 finite numbers: the "
                             "light points nowhere (give its axis in the body frame, e.g. "
                             "[0, 0, 1] for straight down)")
        if len(self.position_body_m) != 3 or not all(map(math.isfinite, self.position_body_m)):
            raise ValueError("a light's position_body_m must be 3 finite numbers (body frame, m)")
        if len(self.intensity) != 3 or not all(math.isfinite(x) and x >= 0 for x in self.intensity):
            raise ValueError("a light's intensity must be 3 finite numbers >= 0 (R, G, B)")
        if not 0 < self.beam_angle_deg <= 360:
            raise ValueError("a light's beam_angle_deg must be in (0, 360]")
        if not (self.falloff >= 0 and math.isfinite(self.falloff)):
            raise ValueError("a light's falloff must be >= 0")

    @property
    def axis_body(self) -> np.ndarray:
        d = np.asarray(self.direction_body, float)
        return d / np.linalg.norm(d)

    @property
    def cos_half_angle(self) -> float:
        return math.cos(math.radians(min(self.beam_angle_deg, 360.0) / 2))

    def profile(self, cos_theta: np.ndarray) -> np.ndarray:
        """I(θ)/I_0 for cos θ (any shape)."""
        co = self.cos_half_angle
        x = np.clip((cos_theta - co) / (1.0 - co), 0.0, None)
        if self.falloff == 0:
            return (cos_theta > co).astype(np.asarray(cos_theta).dtype)
        return x ** self.falloff

    @classmethod
    def from_table(cls, table: dict, where: str) -> SpotLight:
        """A light from a rig table (keys as the fields)."""
        known = {"position_body_m", "direction_body", "intensity", "beam_angle_deg", "falloff"}
        bad = sorted(set(table) - known)
        if bad:
            raise ValueError(f"{where}: unknown key(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
        kw = {k: (tuple(float(x) for x in v) if isinstance(v, (list, tuple)) else float(v))
              for k, v in table.items()}
        return cls(**kw)


def light_reaches_view(light: SpotLight, R_bc: np.ndarray, camera_xyz_body: np.ndarray,
                       rays_cam: np.ndarray, reach_m: float) -> bool:
    """Whether the light's cone meets any camera ray within ``reach_m`` (sampled at
    ranges 0.5..reach on a coarse grid of pixels): False for a light pointing away
    from everything the camera sees."""
    d = rays_cam[::max(1, rays_cam.shape[0] // 24), ::max(1, rays_cam.shape[1] // 32)].reshape(-1, 3)
    d_body = d @ R_bc.T
    s = np.geomspace(0.3, max(reach_m, 0.31), 24)
    pts = camera_xyz_body + s[:, None, None] * d_body[None]
    w = pts - np.asarray(light.position_body_m, float)
    cos = (w @ light.axis_body) / np.maximum(np.linalg.norm(w, axis=-1), 1e-12)
    return bool(np.any(light.profile(cos) > 0))
