"""An independent renderer of pool localization datasets, written from
docs/localization.md alone (Frames, setup.json, Datasets) — it imports nothing from
``moonpool.components.localization`` and shares no code with ``render.py`` or
``refraction.py``, so that a convention the localizer and its own renderer got wrong
together would show up here as an error.

How it renders (per-pixel ray tracing, everything in float64):

* camera: pixel (u, v) with centres at integers, covering [u - 1/2, u + 1/2]; the scene
  is traced at every pixel corner, and a pixel whose corners see different surface
  elements (an edge) is averaged over S x S samples at u + (i + 1/2)/S - 1/2 (a box
  filter), a uniform one sampled at its centre; each sample's distorted normalized
  point ((u - cx)/fx, (v - cy)/fy) is
  undistorted by Newton's method on the OpenCV k1 k2 p1 p2 k3 model (checked against
  ``cv2.projectPoints`` in the tests); ray d = R_wc (x, y, 1)/|.| from C = t_wc;
* water: the plane z = water_z (z down); refraction by the vector form of Snell's law
  about the upward normal; light is attenuated along the water path (per colour);
* scene: the tags (10 x 10 cells: the 8 x 8 black-bordered code of the family plus a
  one-cell white ring), each on its own plane through ``center_b``, on a grey
  vehicle top plate 2 mm below them, over a tiled pool floor with grout lines, a
  dark lane stripe and a stray tag of another id lying on the floor;
* tag bitmaps: OpenCV's aruco ``DICT_APRILTAG_36h11`` turned by 180 degrees (the doc:
  OpenCV's table is the AprilTag drawing rotated by 180 degrees — checked in the
  tests by pupil-apriltags itself, whose first corner must be the bottom left);
* nuisances: vignetting and an illumination gradient, exposure jitter, Gaussian blur,
  Gaussian read + shot noise, 8-bit quantization; images written as 8-bit grey PNG,
  8-bit RGB PNG, 16-bit grey PNG or colour JPEG.

Use as a library (tests/scenarios/test_independent_render.py; its own checks:
tests/unit/test_independent_render_geometry.py) or as a script::

    .venv/bin/python tests/support/independent_render.py OUT --images 48 --seed 3
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from scipy.optimize import brentq

# --------------------------------------------------------------------- rotations


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], float)


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], float)


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], float)


def r_wb(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Body (FRD) -> world (z down), ZYX Euler angles: R_z(yaw) R_y(pitch) R_x(roll)."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


# --------------------------------------------------------------------- the scene


@dataclass(frozen=True)
class TagMount:
    id: int
    center_b: tuple[float, float, float]
    yaw_b_rad: float = 0.0


@dataclass(frozen=True)
class Scene:
    """What setup.json describes (the true values) plus what only the renderer needs."""

    K: tuple[float, float, float, float]
    dist: tuple[float, float, float, float, float]
    R_wc: np.ndarray
    t_wc: tuple[float, float, float]
    image_size: tuple[int, int]
    water_z: float
    n_air: float
    n_water: float
    tag_size_m: float
    tags: tuple[TagMount, ...]
    tag_family: str = "tag36h11"
    # -- renderer only
    floor_depth_m: float = 2.1
    """Depth of the pool floor below the surface, m."""
    plate_half_m: tuple[float, float] = (0.29, 0.21)
    """Half extent of the vehicle's top plate along body x, y, m."""
    plate_drop_m: float = 0.002
    """The plate lies this far below (body +z) the lowest tag plane."""
    stray_tag: tuple[int, float, float, float] | None = (77, 0.9, -0.6, 0.4)
    """A tag of an id not in the layout lying on the floor: (id, x, y, yaw)."""

    def setup_json(self) -> dict:
        """The setup.json object of this scene (docs: setup.json, version 1)."""
        return {
            "format": "moonpool.pool_setup/1",
            "name": "independent renderer (tests/support/independent_render.py)",
            "camera": {"K": list(self.K), "dist": list(self.dist),
                       "R_wc": [list(map(float, r)) for r in self.R_wc],
                       "t_wc": list(self.t_wc), "image_size": list(self.image_size)},
            "water_z": self.water_z, "n_air": self.n_air, "n_water": self.n_water,
            "tag_family": self.tag_family, "tag_size_m": self.tag_size_m,
            "tags": [{"id": t.id, "center_b": list(t.center_b), "yaw_b_rad": t.yaw_b_rad}
                     for t in self.tags],
        }


def default_scene(width: int = 1280, height: int = 960) -> Scene:
    """A rig unlike the project's example: another image size and focal length, the
    camera turned 28 degrees about the vertical and tilted ~3 degrees, a world origin
    on the pool edge 0.35 m above the water (water_z = 0.35), n_air of real air,
    stronger distortion, and three 12 cm tags (one turned, one raised)."""
    f = 0.70 * width  # ~71 degrees horizontal field of view
    R_wc = rot_z(math.radians(28.0)) @ rot_y(math.radians(-2.2)) @ rot_x(math.radians(1.9))
    return Scene(
        K=(f * 1.002, f * 0.998, width / 2 - 0.5 + 7.3, height / 2 - 0.5 - 4.1),
        dist=(-0.11, 0.035, 0.0006, -0.0004, -0.004),
        R_wc=R_wc,
        t_wc=(0.08, -0.05, 0.35 - 2.3),
        image_size=(width, height),
        water_z=0.35, n_air=1.000277, n_water=1.3335,
        tag_size_m=0.12,
        tags=(TagMount(3, (0.15, 0.055, -0.12), 0.0),
              TagMount(17, (-0.15, 0.055, -0.12), math.pi / 2),
              TagMount(250, (0.0, -0.085, -0.135), -0.6)),
    )


@dataclass(frozen=True)
class Pose:
    """The vehicle: body origin at world (x, y, water_z + depth), ZYX attitude."""

    x: float
    y: float
    depth: float
    roll: float
    pitch: float
    yaw: float


# --------------------------------------------------------------------- tag bitmaps


def tag_bitmap(tag_id: int, family: str = "tag36h11") -> np.ndarray:
    """10 x 10 cells (1 = white, 0 = black) of the upright tag: a one-cell white
    ring, the black border and the 6 x 6 code; row 0 on top."""
    if family != "tag36h11":
        raise ValueError(f"only tag36h11 is drawn here, not {family!r}")
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11)
    inner = cv2.aruco.generateImageMarker(d, int(tag_id), 8, borderBits=1)
    upright = np.rot90(inner, 2)  # OpenCV's drawing is the AprilTag one turned by 180 deg
    out = np.ones((10, 10))
    out[1:9, 1:9] = upright / 255.0
    return out


# --------------------------------------------------------------------- camera model


def distort(x: np.ndarray, y: np.ndarray, dist) -> tuple[np.ndarray, np.ndarray]:
    k1, k2, p1, p2, k3 = dist
    r2 = x * x + y * y
    radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return xd, yd


def undistort(xd: np.ndarray, yd: np.ndarray, dist,
              iterations: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Invert ``distort`` by Newton's method (analytic 2 x 2 Jacobian; quadratic
    convergence: 3-4 steps for the distortion of real lenses)."""
    k1, k2, p1, p2, k3 = dist
    x, y = xd.copy(), yd.copy()
    for _ in range(iterations):
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        dradial = k1 + r2 * (2 * k2 + 3 * k3 * r2)  # d radial / d r2
        fx = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x) - xd
        fy = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y - yd
        a = radial + 2 * x * x * dradial + 2 * p1 * y + 6 * p2 * x  # dfx/dx
        b = 2 * x * y * dradial + 2 * p1 * x + 2 * p2 * y            # dfx/dy = dfy/dx
        c = radial + 2 * y * y * dradial + 6 * p1 * y + 2 * p2 * x  # dfy/dy
        det = a * c - b * b
        sx, sy = (c * fx - b * fy) / det, (a * fy - b * fx) / det
        x -= sx
        y -= sy
        if max(np.max(np.abs(sx), initial=0.0), np.max(np.abs(sy), initial=0.0)) < 1e-14:
            break
    ex, ey = distort(x, y, dist)
    err = np.max(np.abs(np.concatenate([(ex - xd).ravel(), (ey - yd).ravel()])), initial=0.0)
    if not err < 1e-12:
        raise ArithmeticError(f"undistortion did not converge ({err:.1e})")
    return x, y


def pixel_rays(scene: Scene, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Unit air rays (..., 3) in the world through pixel positions (OpenCV pixels)."""
    fx, fy, cx, cy = scene.K
    x, y = undistort((u - cx) / fx, (v - cy) / fy, scene.dist)
    d = np.stack([x, y, np.ones_like(x)], axis=-1)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    return d @ np.asarray(scene.R_wc).T


def refract(d: np.ndarray, normal: np.ndarray, n1: float, n2: float) -> np.ndarray:
    """Snell's law in vector form: unit ray ``d`` crossing from index n1 into n2 at a
    surface whose unit ``normal`` points back towards the incoming side."""
    eta = n1 / n2
    cos_i = -(d @ normal)
    sin_t2 = eta * eta * (1.0 - cos_i * cos_i)
    cos_t = np.sqrt(np.maximum(1.0 - sin_t2, 0.0))  # no total reflection from air
    return eta * d + (eta * cos_i - cos_t)[..., None] * normal


UP = np.array([0.0, 0.0, -1.0])


def trace_into_water(scene: Scene, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Surface points S and refracted unit directions t of air rays ``d`` (d_z > 0)."""
    C = np.asarray(scene.t_wc, float)
    s = (scene.water_z - C[2]) / d[..., 2]
    S = C + s[..., None] * d
    return S, refract(d, UP, scene.n_air, scene.n_water)


def hit_plane(S: np.ndarray, t: np.ndarray, P0: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Water path length from S along t to the plane through P0 with normal m (inf if
    the plane is behind)."""
    den = t @ m
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = ((P0 - S) @ m) / den
    return np.where(lam > 0, lam, np.inf)


def project(scene: Scene, P: np.ndarray) -> np.ndarray:
    """Pixel of an underwater world point (forward projection, solved independently of
    the tracing: the crossing point on the surface by Brent's method on
    n_air sin(theta_air) = n_water sin(theta_water))."""
    P = np.atleast_2d(np.asarray(P, float))
    C = np.asarray(scene.t_wc, float)
    h_a = scene.water_z - C[2]
    out = []
    for p in P:
        h_w = p[2] - scene.water_z
        dxy = p[:2] - C[:2]
        D = float(np.hypot(*dxy))
        if h_w <= 0:
            S = p
        elif D < 1e-12:
            S = np.array([C[0], C[1], scene.water_z])
        else:
            def f(r, D=D, h_w=h_w):
                return (scene.n_air * r / math.hypot(r, h_a)
                        - scene.n_water * (D - r) / math.hypot(D - r, h_w))
            r = brentq(f, 0.0, D, xtol=1e-15, rtol=1e-15, maxiter=200)
            S = np.array([C[0] + dxy[0] / D * r, C[1] + dxy[1] / D * r, scene.water_z])
        pc = np.asarray(scene.R_wc).T @ (S - C)
        xd, yd = distort(np.array(pc[0] / pc[2]), np.array(pc[1] / pc[2]), scene.dist)
        fx, fy, cx, cy = scene.K
        out.append((fx * float(xd) + cx, fy * float(yd) + cy))
    return np.array(out)


# --------------------------------------------------------------------- shading


@dataclass(frozen=True)
class Look:
    """Materials and image nuisances (RGB reflectances, 0..1)."""

    tag_white: tuple = (0.80, 0.80, 0.78)
    tag_black: tuple = (0.05, 0.05, 0.06)
    plate: tuple = (0.45, 0.42, 0.30)
    tile: tuple = (0.55, 0.78, 0.85)
    grout: tuple = (0.25, 0.33, 0.36)
    lane: tuple = (0.08, 0.12, 0.30)
    tile_m: float = 0.2
    grout_m: float = 0.008
    attenuation_per_m: tuple = (0.35, 0.07, 0.05)
    """Water absorption per colour (red goes first), 1/m, along the water path."""
    veil: tuple = (0.05, 0.16, 0.20)
    """Backscatter radiance the lost light is replaced by."""
    illumination: float = 0.95
    vignetting: float = 0.3
    """Relative loss at the image corners (cos^4-like falloff)."""
    gradient: float = 0.12
    """Linear illumination gradient across the image (sun from one side)."""


@dataclass(frozen=True)
class Nuisance:
    supersampling: int = 6
    floor_supersampling: int = 3
    blur_sigma_px: tuple[float, float] = (0.4, 0.9)
    read_noise_dn: float = 1.8
    shot_noise_dn: float = 0.06
    """Shot noise variance per DN of signal."""
    exposure_jitter: float = 0.06


def _hash01(i: np.ndarray, j: np.ndarray, salt: int) -> np.ndarray:
    """Deterministic pseudo-random value in [0, 1) per integer cell."""
    h = (i.astype(np.int64) * 73856093) ^ (j.astype(np.int64) * 19349663) ^ (salt * 83492791)
    h = (h ^ (h >> 13)) * 1274126177
    return ((h ^ (h >> 16)) & 0xFFFF) / 65536.0


class IndependentRenderer:
    """Ray traces images of a Scene. Adaptive supersampling: the scene is first traced
    at the pixel corners; a pixel whose four corners see the same surface element
    (the same tag cell, the plate, the same floor tile) is uniform and takes one
    sample at its centre (the floor behind the vehicle: the stored empty-pool image);
    every other pixel — an edge — is averaged over S x S samples (a box filter)."""

    def __init__(self, scene: Scene, look: Look = Look(), nuisance: Nuisance = Nuisance()):
        self.scene, self.look, self.nuisance = scene, look, nuisance
        self.width, self.height = scene.image_size
        self.cell = scene.tag_size_m / 8.0
        self.bitmaps = {t.id: tag_bitmap(t.id, scene.tag_family) for t in scene.tags}
        if scene.stray_tag is not None:
            self.bitmaps[scene.stray_tag[0]] = tag_bitmap(scene.stray_tag[0])
        self._floor = None
        uu, vv = np.meshgrid(np.arange(self.width, dtype=float),
                             np.arange(self.height, dtype=float))
        rr = np.hypot((uu - self.width / 2) / (self.width / 2),
                      (vv - self.height / 2) / (self.height / 2)) / math.sqrt(2)
        self.illum = (look.illumination * (1 - look.vignetting * rr ** 2)
                      * (1 + look.gradient * (uu / self.width - 0.5)))

    # -- the scene's radiance along traced rays
    def _water(self, rgb: np.ndarray, lam: np.ndarray) -> np.ndarray:
        k = np.asarray(self.look.attenuation_per_m)
        tr = np.exp(-np.minimum(lam, 50.0)[..., None] * k)
        return rgb * tr + np.asarray(self.look.veil) * (1 - tr)

    def _tag_cells(self, tag_id: int, a: np.ndarray, b: np.ndarray):
        """Bitmap value at tag-plane coordinates (a along the tag's top, b along its
        right, from the centre of the black square), whether inside the 10 x 10 cells,
        and the cell index (row * 10 + col)."""
        col = np.floor(b / self.cell + 5.0)
        row = np.floor(5.0 - a / self.cell)
        inside = (col >= 0) & (col < 10) & (row >= 0) & (row < 10)
        r, c = np.clip(row, 0, 9).astype(np.int64), np.clip(col, 0, 9).astype(np.int64)
        return self.bitmaps[tag_id][r, c], inside, r * 10 + c

    def _floor_rgb(self, X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Floor reflectance and a surface-element label (< 0) at floor points."""
        L = self.look
        i, j = np.floor(X / L.tile_m), np.floor(Y / L.tile_m)
        fx, fy = X / L.tile_m - i, Y / L.tile_m - j
        g = L.grout_m / L.tile_m / 2
        grout = (fx < g) | (fx > 1 - g) | (fy < g) | (fy > 1 - g)
        lane = np.abs(Y - 0.45) < 0.12  # a dark lane stripe along world x
        shade = 0.9 + 0.2 * _hash01(i, j, 1)
        rgb = np.asarray(L.tile) * shade[..., None]
        rgb = np.where(grout[..., None], np.asarray(L.grout), rgb)
        rgb = np.where(lane[..., None], np.asarray(L.lane), rgb)
        ii, jj = i.astype(np.int64) + 100000, j.astype(np.int64) + 100000
        label = np.where(lane, 1, np.where(grout, 2, 3 + (ii * 200001 + jj) * 4))
        st = self.scene.stray_tag
        if st is not None:
            tid, x0, y0, yaw = st
            a = math.cos(yaw) * (X - x0) + math.sin(yaw) * (Y - y0)
            b = -math.sin(yaw) * (X - x0) + math.cos(yaw) * (Y - y0)
            val, inside, cell = self._tag_cells(tid, a, b)
            col = (np.asarray(L.tag_black) + (np.asarray(L.tag_white) - np.asarray(L.tag_black))
                   * val[..., None])
            rgb = np.where(inside[..., None], col, rgb)
            label = np.where(inside, -5 - cell * 4, label)
        return rgb, -np.abs(label) - 1

    def radiance(self, d: np.ndarray, pose: Pose | None) -> tuple[np.ndarray, np.ndarray]:
        """RGB radiance along world air rays d (..., 3) — the nearest surface hit by
        the refracted ray, seen through its water path — and the label of the surface
        element hit (< 0: floor, 0: plate, > 0: a tag cell)."""
        S, t = trace_into_water(self.scene, d)
        lam_floor = (self.scene.water_z + self.scene.floor_depth_m - S[..., 2]) / t[..., 2]
        P = S + lam_floor[..., None] * t
        refl, label = self._floor_rgb(P[..., 0], P[..., 1])
        best = lam_floor
        if pose is not None:
            R = r_wb(pose.roll, pose.pitch, pose.yaw)
            o = np.array([pose.x, pose.y, self.scene.water_z + pose.depth])
            m = R @ np.array([0.0, 0.0, -1.0])  # the vehicle's top normal (up when level)
            # the top plate
            zp = max(tm.center_b[2] for tm in self.scene.tags) + self.scene.plate_drop_m
            P0 = o + R @ np.array([0.0, 0.0, zp])
            lam = hit_plane(S, t, P0, m)
            q = (S + np.where(np.isfinite(lam), lam, 0)[..., None] * t - P0) @ R  # body offsets
            hx, hy = self.scene.plate_half_m
            on = (lam < best) & (np.abs(q[..., 0]) <= hx) & (np.abs(q[..., 1]) <= hy)
            tex = 0.94 + 0.06 * _hash01(np.floor(q[..., 0] / 0.004),
                                        np.floor(q[..., 1] / 0.004), 2)
            refl = np.where(on[..., None], np.asarray(self.look.plate) * tex[..., None], refl)
            best = np.where(on, lam, best)
            label = np.where(on, 0, label)
            # the tags, each on its own plane
            black = np.asarray(self.look.tag_black)
            white = np.asarray(self.look.tag_white)
            for k, tm in enumerate(self.scene.tags):
                P0 = o + R @ np.asarray(tm.center_b, float)
                lam = hit_plane(S, t, P0, m)
                q = (S + np.where(np.isfinite(lam), lam, 0)[..., None] * t - P0) @ R
                cy, sy = math.cos(tm.yaw_b_rad), math.sin(tm.yaw_b_rad)
                a = cy * q[..., 0] + sy * q[..., 1]    # along the tag's top edge direction
                b = -sy * q[..., 0] + cy * q[..., 1]   # along its right edge direction
                val, inside, cell = self._tag_cells(tm.id, a, b)
                on = inside & (lam <= best)
                refl = np.where(on[..., None], black + (white - black) * val[..., None], refl)
                best = np.where(on, lam, best)
                label = np.where(on, 1 + 100 * k + cell, label)
        return self._water(refl, best), label

    # -- images
    def _pixel_samples(self, u: np.ndarray, v: np.ndarray, S: int) -> np.ndarray:
        """Air rays of S x S samples in each of the pixels (u, v): shape (n, S*S, 3)."""
        off = (np.arange(S) + 0.5) / S - 0.5
        ou, ov = np.meshgrid(off, off)
        return pixel_rays(self.scene, u[:, None] + ou.ravel()[None, :],
                          v[:, None] + ov.ravel()[None, :])

    def _render_region(self, u0: int, v0: int, w: int, h: int, pose: Pose | None,
                       S: int, base: np.ndarray | None) -> np.ndarray:
        """RGB radiance of the pixel box [u0, u0 + w) x [v0, v0 + h)."""
        out = np.empty((h, w, 3))
        strip = max(1, 60_000 // (w + 1))
        for r0 in range(0, h, strip):
            hh = min(strip, h - r0)
            cu = np.arange(u0, u0 + w + 1, dtype=float) - 0.5   # pixel corners
            cv = np.arange(v0 + r0, v0 + r0 + hh + 1, dtype=float) - 0.5
            CU, CV = np.meshgrid(cu, cv)
            _, lab = self.radiance(pixel_rays(self.scene, CU, CV), pose)
            a = lab[:-1, :-1]
            uniform = (a == lab[1:, :-1]) & (a == lab[:-1, 1:]) & (a == lab[1:, 1:])
            block = out[r0:r0 + hh]
            if base is not None:
                from_base = uniform & (a < 0)
                block[from_base] = base[v0 + r0:v0 + r0 + hh, u0:u0 + w][from_base]
                centre = uniform & ~from_base
            else:
                centre = uniform
            vi, ui = np.nonzero(centre)
            if len(vi):
                rgb, _ = self.radiance(pixel_rays(self.scene, (u0 + ui).astype(float),
                                                  (v0 + r0 + vi).astype(float)), pose)
                block[vi, ui] = rgb
            vi, ui = np.nonzero(~uniform)
            chunk = max(1, 400_000 // (S * S))
            for c0 in range(0, len(vi), chunk):
                sv, su = vi[c0:c0 + chunk], ui[c0:c0 + chunk]
                rgb, _ = self.radiance(self._pixel_samples((u0 + su).astype(float),
                                                           (v0 + r0 + sv).astype(float), S),
                                       pose)
                block[sv, su] = rgb.mean(axis=1)
        return out

    def floor_image(self) -> np.ndarray:
        """The empty pool (RGB radiance, h x w x 3); computed once."""
        if self._floor is None:
            self._floor = self._render_region(0, 0, self.width, self.height, None,
                                              self.nuisance.floor_supersampling, None)
        return self._floor

    def vehicle_box(self, pose: Pose, margin: int = 4) -> tuple[int, int, int, int] | None:
        """Pixel box (u0, v0, w, h) that contains the plate and the tags."""
        R = r_wb(pose.roll, pose.pitch, pose.yaw)
        o = np.array([pose.x, pose.y, self.scene.water_z + pose.depth])
        hx, hy = self.scene.plate_half_m
        zs = [tm.center_b[2] for tm in self.scene.tags]
        pts = [o + R @ np.array([sx * hx, sy * hy, z]) for sx in (-1, 1) for sy in (-1, 1)
               for z in (min(zs), max(zs) + self.scene.plate_drop_m)]
        for tm in self.scene.tags:  # tags may stick out of the plate
            c = np.asarray(tm.center_b, float)
            H = 5 * self.cell * math.sqrt(2)
            pts += [o + R @ (c + np.array([sx * H, sy * H, 0])) for sx in (-1, 1) for sy in (-1, 1)]
        px = project(self.scene, np.array(pts))
        u0 = max(math.floor(px[:, 0].min()) - margin, 0)
        v0 = max(math.floor(px[:, 1].min()) - margin, 0)
        u1 = min(math.ceil(px[:, 0].max()) + margin, self.width - 1)
        v1 = min(math.ceil(px[:, 1].max()) + margin, self.height - 1)
        if u1 < u0 or v1 < v0:
            return None
        return u0, v0, u1 - u0 + 1, v1 - v0 + 1

    def tag_corners_px(self, pose: Pose) -> dict[int, np.ndarray]:
        """Pixels of each tag's black-square corners (BL, BR, TR, TL), for checks."""
        R = r_wb(pose.roll, pose.pitch, pose.yaw)
        o = np.array([pose.x, pose.y, self.scene.water_z + pose.depth])
        h = self.scene.tag_size_m / 2
        out = {}
        for tm in self.scene.tags:
            c = np.asarray(tm.center_b, float)
            Rt = rot_z(tm.yaw_b_rad)
            corners = [c + Rt @ np.array([ax * h, by * h, 0.0])
                       for ax, by in ((-1, -1), (-1, 1), (1, 1), (1, -1))]
            out[tm.id] = project(self.scene, np.array([o + R @ p for p in corners]))
        return out

    def render(self, pose: Pose | None, rng: np.random.Generator) -> np.ndarray:
        """One RGB image on the 8-bit scale (float DN, before noise and quantization):
        scene radiance x illumination x exposure, blurred."""
        img = self.floor_image().copy()
        if pose is not None:
            box = self.vehicle_box(pose)
            if box is not None:
                u0, v0, w, h = box
                img[v0:v0 + h, u0:u0 + w] = self._render_region(
                    u0, v0, w, h, pose, self.nuisance.supersampling, self.floor_image())
        nz = self.nuisance
        exposure = 1.0 + nz.exposure_jitter * rng.standard_normal()
        dn = 255.0 * exposure * img * self.illum[..., None]
        sigma = rng.uniform(*nz.blur_sigma_px)
        if sigma > 0:
            dn = cv2.GaussianBlur(dn, (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
        return dn

    def add_noise(self, dn: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Gaussian sensor noise: variance read^2 + shot x signal (DN)."""
        nz = self.nuisance
        var = nz.read_noise_dn ** 2 + nz.shot_noise_dn * np.maximum(dn, 0)
        return dn + np.sqrt(var) * rng.standard_normal(dn.shape)


# --------------------------------------------------------------------- datasets

FORMATS = ("png_gray8", "png_rgb8", "png_gray16", "jpg_rgb")


def write_image(path_stem: Path, dn_rgb: np.ndarray, fmt: str) -> str:
    """Write an RGB float image (0..255 scale, noisy) in one of FORMATS; the file name."""
    bgr = np.clip(np.rint(dn_rgb[..., ::-1]), 0, 255).astype(np.uint8)
    if fmt == "png_gray8":
        name = path_stem.name + ".png"
        cv2.imwrite(str(path_stem.with_name(name)), cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
    elif fmt == "png_rgb8":
        name = path_stem.name + ".png"
        cv2.imwrite(str(path_stem.with_name(name)), bgr)
    elif fmt == "png_gray16":
        # a 16-bit sensor: the same signal at 257 x the 8-bit scale, not quantized to 8 bits
        g = cv2.cvtColor(np.clip(dn_rgb[..., ::-1], 0, 255).astype(np.float32),
                         cv2.COLOR_BGR2GRAY)
        name = path_stem.name + ".png"
        cv2.imwrite(str(path_stem.with_name(name)), np.clip(np.rint(g * 257), 0, 65535)
                    .astype(np.uint16))
    elif fmt == "jpg_rgb":
        name = path_stem.name + ".jpg"
        cv2.imwrite(str(path_stem.with_name(name)), bgr, [cv2.IMWRITE_JPEG_QUALITY, 92])
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return name


@dataclass(frozen=True)
class DatasetSpec:
    images: int = 48
    seed: int = 3
    x_m: tuple[float, float] = (-1.7, 1.7)
    y_m: tuple[float, float] = (-1.2, 1.2)
    depths_m: tuple[float, ...] = (0.35, 0.65, 0.95, 1.25)
    depth_jitter_m: float = 0.05
    tilt_deg: float = 2.0
    depth_noise_m: float = 0.0
    """Pressure noise written to the manifest (0: the true depth)."""
    attitude_noise_deg: float = 0.0
    """IMU roll/pitch noise written to the manifest (0: the true tilt)."""
    formats: tuple[str, ...] = FORMATS
    edge_margin_px: float = 12.0
    nuisance: Nuisance = field(default_factory=Nuisance)


def draw_poses(renderer: IndependentRenderer, spec: DatasetSpec,
               rng: np.random.Generator) -> list[Pose]:
    """Poses over the pool, cycling through the depths, every tag fully in view."""
    poses: list[Pose] = []
    tilt = math.radians(spec.tilt_deg)
    W, H = renderer.width, renderer.height
    tries = 0
    while len(poses) < spec.images:
        tries += 1
        if tries > 500 * spec.images:
            raise RuntimeError("cannot place the vehicle with every tag in view")
        depth = spec.depths_m[len(poses) % len(spec.depths_m)]
        p = Pose(rng.uniform(*spec.x_m), rng.uniform(*spec.y_m),
                 depth + rng.uniform(-spec.depth_jitter_m, spec.depth_jitter_m),
                 tilt * rng.standard_normal(), tilt * rng.standard_normal(),
                 rng.uniform(-math.pi, math.pi))
        box = renderer.vehicle_box(p, margin=0)
        m = spec.edge_margin_px
        if box is None:
            continue
        u0, v0, w, h = box
        if u0 < m or v0 < m or u0 + w > W - 1 - m or v0 + h > H - 1 - m:
            continue
        poses.append(p)
    return poses


def write_dataset(out: str | Path, scene: Scene | None = None,
                  spec: DatasetSpec = DatasetSpec()) -> dict:
    """Render a dataset in the documented layout (setup.json, manifest.jsonl, images)
    into the new folder ``out``; returns a summary (poses, formats)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=False)
    scene = scene or default_scene()
    renderer = IndependentRenderer(scene, nuisance=spec.nuisance)
    rng = np.random.default_rng([spec.seed, 11])
    poses = draw_poses(renderer, spec, rng)
    (out / "setup.json").write_text(json.dumps(scene.setup_json(), indent=2) + "\n")
    lines, counts = [], {f: 0 for f in spec.formats}
    for k, p in enumerate(poses):
        img_rng = np.random.default_rng([spec.seed, 12, k])
        dn = renderer.add_noise(renderer.render(p, img_rng), img_rng)
        fmt = spec.formats[k % len(spec.formats)]
        counts[fmt] += 1
        name = write_image(out / f"{k:06d}", dn, fmt)
        sens = np.random.default_rng([spec.seed, 13, k])
        rec = {
            "image": name,
            "depth_m": round(p.depth + spec.depth_noise_m * sens.standard_normal(), 9),
            "roll_rad": p.roll + math.radians(spec.attitude_noise_deg) * sens.standard_normal(),
            "pitch_rad": p.pitch + math.radians(spec.attitude_noise_deg) * sens.standard_normal(),
            "truth": {"x_m": p.x, "y_m": p.y, "yaw_rad": wrap(p.yaw),
                      "z_m": scene.water_z + p.depth, "roll_rad": p.roll, "pitch_rad": p.pitch,
                      "depth_m": p.depth},
            "location_id": f"ir-{k}",
        }
        lines.append(json.dumps(rec))
    (out / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return {"images": len(poses), "formats": counts, "poses": poses}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--images", type=int, default=48)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=960)
    ap.add_argument("--depth-noise-m", type=float, default=0.0)
    ap.add_argument("--attitude-noise-deg", type=float, default=0.0)
    ap.add_argument("--formats", default=",".join(FORMATS))
    a = ap.parse_args(argv)
    spec = DatasetSpec(images=a.images, seed=a.seed, depth_noise_m=a.depth_noise_m,
                       attitude_noise_deg=a.attitude_noise_deg,
                       formats=tuple(a.formats.split(",")))
    res = write_dataset(a.out, default_scene(a.width, a.height), spec)
    print(f"wrote {res['images']} images ({res['formats']}) to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
