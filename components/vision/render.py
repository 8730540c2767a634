"""One deep-sea camera frame end to end: geometry, radiometry, marine snow, sensor
(docs/deepsea-camera.md).

Call order::

    r = DeepSeaRenderer(scene, camera, mount, water, lights, radiometry, sensor, snow)
    out = r.render(position_ned, quaternion_wxyz, rng_image, rng_snow)
    out.image, out.frame (GeometryFrame: the per-pixel truth), out.radiance

**Marine snow** (optional, ``MarineSnow.count`` > 0): particles uniformly distributed
in the volume of the view frustum between ``near_m`` and ``far_m`` (depth z = (z_n³ +
U (z_f³ - z_n³))^(1/3), pixel position uniform), radii uniform in ``radius_m``; each
is lit by the lights like a Lambertian sphere facing the light (albedo
``albedo``, irradiance I S(θ) e^{-c d_l}/d_l²), attenuated by e^{-c z} to the
camera, and drawn as a Gaussian spot of its projected radius (at least 0.7 px) whose
integral is the particle's projected area (a particle smaller than a pixel covers part
of it), over the scene (only where the particle is nearer than the surface). Draws are
keyed per frame ("snow" channel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .geometry import CameraModel, CameraMount, CameraPose, GeometryFrame, cast_frame
from .lights import SpotLight
from .radiometry import RadiometryOptions, place_lights, radiance, reflectance_image
from .sensor import SensorOptions, expose
from .water import WaterOptics


@dataclass(frozen=True)
class MarineSnow:
    """Marine snow particles."""

    count: int = 0
    """Particles in the view per frame (0: none)."""
    near_m: float = 0.3
    """Nearest particle depth, m."""
    far_m: float = 4.0
    """Farthest particle depth, m."""
    radius_m: tuple[float, float] = (0.0005, 0.002)
    """Radius range, m."""
    albedo: float = 0.6
    """Particle albedo."""

    def __post_init__(self) -> None:
        if self.count < 0 or not 0 < self.near_m < self.far_m:
            raise ValueError("marine snow: count >= 0 and 0 < near_m < far_m")
        if not 0 < self.radius_m[0] <= self.radius_m[1]:
            raise ValueError("marine snow: radius_m = [min, max] with 0 < min <= max")


@dataclass
class Rendered:
    image: np.ndarray
    """DN image (sensor.py): (H, W, 3) RGB or (H, W) Bayer."""
    frame: GeometryFrame
    radiance: np.ndarray
    """(H, W, 3) radiance at the camera, before the sensor."""


@dataclass
class DeepSeaRenderer:
    """Renders one camera on one scene (build once; ``render`` per frame)."""

    scene: object
    """A world ``Scene`` (its engine, classes)."""
    camera: CameraModel
    mount: CameraMount = field(default_factory=CameraMount)
    water: WaterOptics | None = None
    lights: tuple[SpotLight, ...] = ()
    radiometry: RadiometryOptions = field(default_factory=RadiometryOptions)
    sensor: SensorOptions = field(default_factory=SensorOptions)
    snow: MarineSnow = field(default_factory=MarineSnow)

    def __post_init__(self) -> None:
        from .water import water_type

        if self.water is None:
            self.water = water_type("jerlov_IB")
        self.engine = self.scene.engine()
        top = max([0, *self.scene.classes])
        self._lut = np.full((top + 1, 3), 0.3, np.float32)
        self._lut[0] = 0.0
        for cid, cls in self.scene.classes.items():
            self._lut[cid] = cls.reflectance

    def reflectance(self, label: np.ndarray) -> np.ndarray:
        if label.size and label.max() >= len(self._lut):
            return reflectance_image(label, self.scene.classes)
        return self._lut[label]

    def geometry(self, position_ned, quaternion_wxyz, engine=None) -> GeometryFrame:
        pose = CameraPose.from_vehicle(self.mount, position_ned, quaternion_wxyz)
        return cast_frame(engine or self.engine, self.camera, pose, self.radiometry.max_range_m)

    def render(self, position_ned, quaternion_wxyz, rng_image=None, rng_snow=None,
               engine=None) -> Rendered:
        from ..sdk.frames import rot_from_quat

        frame = self.geometry(position_ned, quaternion_wxyz, engine)
        rays = frame.rays_ned
        R_wb = rot_from_quat(np.asarray(quaternion_wxyz, float))
        lights = place_lights(self.lights, position_ned, R_wb)
        L = radiance(frame, rays, self.water, lights, self.reflectance(frame.label),
                     self.radiometry, engine or self.engine)
        if self.snow.count and rng_snow is not None:
            self._add_snow(L, frame, lights, rng_snow)
        img = expose(L, self.camera.rays_cam, self.sensor, rng_image)
        return Rendered(img, frame, L)

    def _add_snow(self, L, frame: GeometryFrame, lights, rng) -> None:
        sn, cam = self.snow, self.camera
        n = sn.count
        u = rng.uniform(0, cam.width, n)
        v = rng.uniform(0, cam.height, n)
        z = (sn.near_m ** 3 + rng.uniform(0, 1, n) * (sn.far_m ** 3 - sn.near_m ** 3)) ** (1 / 3)
        rad = rng.uniform(sn.radius_m[0], sn.radius_m[1], n)
        d = cam.rays_at(np.stack([u, v], axis=1))
        pts_cam = d * (z / d[:, 2])[:, None]
        X = pts_cam @ frame.pose.R_wc.T + frame.pose.C_ned
        c = self.water.c
        E = np.zeros((n, 3))
        for pl in lights:
            w = X - pl.position_ned
            dl = np.linalg.norm(w, axis=1)
            prof = pl.light.profile((w / dl[:, None]) @ pl.axis_ned)
            E += (prof / dl ** 2)[:, None] * np.exp(-np.outer(dl, c)) * np.asarray(pl.light.intensity)
        rng_z = np.linalg.norm(pts_cam, axis=1)
        Lp = sn.albedo / np.pi * E * np.exp(-np.outer(rng_z, c))
        fx = cam.K[0]
        sig = np.maximum(fx * rad / z, 0.7)
        H, W = frame.range_m.shape
        for i in range(n):
            if not np.any(Lp[i] > 0):
                continue
            rr = int(np.ceil(3 * sig[i]))
            u0, u1 = max(int(u[i]) - rr, 0), min(int(u[i]) + rr + 1, W)
            v0, v1 = max(int(v[i]) - rr, 0), min(int(v[i]) + rr + 1, H)
            if u0 >= u1 or v0 >= v1:
                continue
            uu, vv = np.meshgrid(np.arange(u0, u1), np.arange(v0, v1))
            # coverage: the particle's disc area spread as a Gaussian, at most opaque
            cover = np.pi * (fx * rad[i] / z[i]) ** 2 / (2 * np.pi * sig[i] ** 2)
            g = np.minimum(cover * np.exp(-((uu - u[i]) ** 2 + (vv - v[i]) ** 2)
                                          / (2 * sig[i] ** 2)), 1.0)
            g = g * (frame.range_m[v0:v1, u0:u1] > rng_z[i])
            L[v0:v1, u0:u1] = L[v0:v1, u0:u1] * (1 - g[..., None]) + g[..., None] * Lp[i]
