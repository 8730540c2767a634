"""Ray-traced overhead-camera images of the vehicle's tags through the water surface.

Per tag, over the pixel box that contains it (from the forward projection of its
outer corners), every **pixel corner** (j - 1/2, i - 1/2) (OpenCV convention: pixel
centres at integers) is traced exactly:

    undistorted normalized (x, y) (Newton, precomputed once per camera)
    -> air ray d = R_wc (x, y, 1) -> water plane S = C + s d -> vector Snell t
       (d, S, t: constants of the setup, cached per row of corners on first use)
    -> tag plane X = S + l t -> bitmap coordinates (col, row) in cells.

Inside a pixel the image -> tag-plane map is taken as bilinear in its four corners
(the refracted map is smooth: the error is < 1e-5 cell; the interpolation of the
undistortion alone stays below 5e-4 px even for k1 = -0.2). A pixel whose footprint
lies within cells of one level (or wholly off the tag) takes that level; a pixel on an
edge is **area-averaged** over S x S samples (a box filter). The coverage of the tag
in each pixel composites it over the plain pool floor, so tags may share a box.

Then, in this order: optional Gaussian blur (defocus) and motion blur (a line kernel
of the image displacement during the exposure), per-frame exposure-gain jitter, shot +
read noise (Gaussian approximation, variance = read_noise_dn^2 + shot_noise_dn * DN;
normals from 16 random bits through a 65536-entry inverse-CDF table), rounding to 8
bits.

Ripple (optional): the surface is z = water_z + sum_i A_i sin(k_i . (x, y) - w_i t
+ phi_i) with capillary-gravity dispersion w^2 = g k + (sigma / rho) k^3; each traced
ray meets it by one fixed-point step from the flat plane and refracts about the local
normal (small-slope approximation; slopes are ~1e-2).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.special import ndtri

from ..sdk.frames import rot_from_euler
from .pool_setup import PoolSetup
from .refraction import RefractiveCamera, refract
from .tags import tag_axes_body, tag_family

G = 9.80665


@dataclass(frozen=True)
class RenderOptions:
    """What the renderer draws besides the geometry (all documented in
    docs/localization.md, "Renderer")."""

    supersampling: int = 4
    """S: S x S samples per pixel (area average)."""
    floor_level: float = 0.45
    """Radiance of the plain pool floor (0..1 of full scale)."""
    black_level: float = 0.07
    """Radiance of a tag's black cells."""
    white_level: float = 0.85
    """Radiance of a tag's white cells."""
    exposure: float = 1.0
    """Gain: DN = 255 * exposure * radiance."""
    exposure_jitter: float = 0.0
    """Relative standard deviation of the gain from frame to frame."""
    read_noise_dn: float = 0.0
    """Read noise standard deviation, DN."""
    shot_noise_dn: float = 0.0
    """Shot-noise variance per DN of signal (DN^2 per DN, i.e. 1/electrons-per-DN)."""
    blur_sigma_px: float = 0.0
    """Gaussian blur (defocus) standard deviation, px."""
    motion_blur_px: tuple[float, float] = (0.0, 0.0)
    """Motion blur: the image displacement (du, dv) during the exposure, px."""
    ripple_amplitude_m: float = 0.0
    """Amplitude of each ripple component, m (0: a flat surface)."""
    ripple_wavelength_m: float = 0.25
    """Mean ripple wavelength, m."""
    ripple_components: int = 3
    margin_px: int = 3
    """Extra pixels traced around each tag's bounding box."""

    def check(self) -> None:
        if not (isinstance(self.supersampling, int) and 1 <= self.supersampling <= 16):
            raise ValueError(f"supersampling must be an integer 1..16, got {self.supersampling}")
        for name in ("floor_level", "black_level", "white_level"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {v}")
        for name in ("exposure", "exposure_jitter", "read_noise_dn", "shot_noise_dn",
                     "blur_sigma_px", "ripple_amplitude_m"):
            v = getattr(self, name)
            if not (v >= 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be finite and >= 0, got {v}")
        if not self.ripple_wavelength_m > 0:
            raise ValueError("ripple_wavelength_m must be > 0")
        if len(self.motion_blur_px) != 2:
            raise ValueError("motion_blur_px takes 2 numbers (du, dv)")


@dataclass(frozen=True)
class FrameNoise:
    """The vehicle-independent part of one frame's exposure (``Renderer.frame_noise``)."""

    gain: float
    """DN per unit radiance, with this frame's jitter."""
    idx: np.ndarray | None
    """The frame's 16 noise bits per pixel (uint16, H x W; None: no noise)."""
    floor: np.ndarray
    """The exposed plain floor (uint8, H x W); the image is drawn into it."""


@dataclass(frozen=True)
class Pose:
    """Vehicle pose: body origin in the world (z down, m) and ZYX Euler angles (rad)."""

    x: float
    y: float
    z: float
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0

    @property
    def position(self) -> np.ndarray:
        return np.array([self.x, self.y, self.z])

    @property
    def R_wb(self) -> np.ndarray:
        return rot_from_euler(self.roll, self.pitch, self.yaw)


_NORMAL_LUT = ndtri((np.arange(65536, dtype=np.float64) + 0.5) / 65536.0).astype(np.float32)


# Bit generators whose 32-bit draws are the halves (low first) of their 64-bit ones.
_HALVES = (np.random.Philox, np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64)


def random_uint16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """``np.frombuffer(rng.bytes(2 n), np.uint16)`` in ``shape`` (n its size), and the
    generator left in the same state, in half the time: ``Generator.bytes`` draws
    32-bit words one by one through ``integers``, whose 32-bit words are the low then
    high halves of the bit generator's 64-bit outputs — the little-endian bytes of
    ``random_raw``, which draws them in one loop. Taken when the byte count is a
    multiple of 8, no half word is buffered, the bit generator is one of ``_HALVES``
    and the machine is little-endian; otherwise ``bytes`` itself."""
    n = int(np.prod(shape))
    bitgen = rng.bit_generator
    if (n % 4 == 0 and sys.byteorder == "little" and isinstance(bitgen, _HALVES)
            and not bitgen.state["has_uint32"]):
        return bitgen.random_raw(n // 4).view(np.uint16).reshape(shape)
    return np.frombuffer(rng.bytes(2 * n), dtype=np.uint16).reshape(shape)


def standard_normals(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Fast float32 standard normals: 16 random bits through the inverse normal CDF
    (quantile table of 65536 entries; tails cut at 4.3 sigma)."""
    return _NORMAL_LUT[random_uint16(rng, shape)]


class Renderer:
    """Renders one camera of a pool setup. Build once (precomputes the camera's rays);
    ``render(pose, ...)`` per frame."""

    def __init__(self, setup: PoolSetup, options: RenderOptions = RenderOptions(),
                 image_size: tuple[int, int] | None = None) -> None:
        options.check()
        size = image_size or setup.image_size
        if size is None:
            raise ValueError("the image size is needed: give image_size in the setup or here")
        self.width, self.height = int(size[0]), int(size[1])
        self.setup = setup
        self.options = options
        self.camera = RefractiveCamera(setup)
        self.family = tag_family(setup.tag_family)
        self.cell = setup.tag_size_m / self.family.width_at_border
        self.half_outer = 0.5 * self.family.total_width * self.cell
        # Exact undistortion at the pixel corners (j - 0.5, i - 0.5): (H+1, W+1, 2).
        u = np.arange(self.width + 1, dtype=float) - 0.5
        v = np.arange(self.height + 1, dtype=float) - 0.5
        uu, vv = np.meshgrid(u, v)
        self.corner_xn = self.camera.normalized(np.stack([uu, vv], axis=-1))
        # The light path of every pixel corner up to the flat water (its air ray d, where
        # it meets the water S, its refracted direction t) is a constant of the setup:
        # computed once per row of corners, when a tag first needs that row (the arrays
        # are allocated untouched, so rows never needed cost no memory).
        shape = (self.height + 1, self.width + 1, 3)
        self._rays = (np.empty(shape), np.empty(shape), np.empty(shape))
        self._rows_done = np.zeros(self.height + 1, dtype=bool)
        self._tags = [(t.id, np.asarray(t.center_b, float), *tag_axes_body(t.yaw_b_rad))
                      for t in setup.tags]
        self._ripple_waves = None
        self._canvas: tuple[np.ndarray, list] | None = None  # (image, boxes drawn in it)

    def with_options(self, **changes) -> Renderer:
        """A renderer of the same camera with some options changed (shares the
        precomputed rays: cheap)."""
        import copy

        opts = dataclasses.replace(self.options, **changes)
        opts.check()
        r = copy.copy(self)
        r.options = opts
        r._ripple_waves = None
        r._canvas = None
        return r

    # -- ripple ------------------------------------------------------------------

    def ripple_waves(self, seed: int) -> list[tuple[float, float, float, float, float]]:
        """(A, kx, ky, omega, phase) per component, drawn once from ``seed``."""
        o = self.options
        rng = np.random.default_rng([int(seed), 0x52495050])
        waves = []
        for _ in range(o.ripple_components):
            lam = o.ripple_wavelength_m * rng.uniform(0.7, 1.3)
            k = 2 * math.pi / lam
            th = rng.uniform(0, 2 * math.pi)
            omega = math.sqrt(G * k + 0.0728 / 998.0 * k**3)
            waves.append((o.ripple_amplitude_m, k * math.cos(th), k * math.sin(th), omega,
                          rng.uniform(0, 2 * math.pi)))
        return waves

    # -- geometry ----------------------------------------------------------------

    def tag_world(self, pose: Pose):
        """Per tag: (id, centre, top, right, normal) in the world."""
        R = pose.R_wb
        p = pose.position
        return [(tid, p + R @ c, R @ top, R @ right, R @ n) for tid, c, top, right, n in self._tags]

    def tag_box(self, tag, extra_px: float = 0.0) -> tuple[int, int, int, int] | None:
        """Pixel box (u0, v0, u1, v1), inclusive, that contains a tag (with its white
        ring) and ``margin_px + extra_px`` around it; None when it is out of view."""
        h = self.half_outer
        _, P0, top, right, _n = tag
        s = np.linspace(-1.0, 1.0, 5)
        ring = np.array([P0 + h * (a * top + b * right) for a in s for b in s
                         if abs(a) == 1 or abs(b) == 1])
        px = self.camera.project(ring)
        if not np.all(np.isfinite(px)):
            return None
        m = self.options.margin_px + extra_px
        u0 = max(math.floor(px[:, 0].min() - m), 0)
        v0 = max(math.floor(px[:, 1].min() - m), 0)
        u1 = min(math.ceil(px[:, 0].max() + m), self.width - 1)
        v1 = min(math.ceil(px[:, 1].max() + m), self.height - 1)
        if u0 > u1 or v0 > v1:
            return None
        return (u0, v0, u1, v1)

    def tag_boxes(self, pose: Pose, extra_px: float = 0.0) -> list[tuple[int, int, int, int]]:
        """The boxes of the visible tags, overlapping ones merged."""
        boxes = [self.tag_box(t, extra_px) for t in self.tag_world(pose)]
        return _merge_boxes([b for b in boxes if b is not None])

    def corner_rays(self, box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(d, S, t) of the pixel corners of ``box`` (u0, v0, u1, v1), each
        (h + 1, w + 1, 3): the air ray of corner (j - 0.5, i - 0.5), where it meets the
        flat water, and its refracted direction (read-only views of the per-setup cache;
        elementwise, so the same values as tracing the box alone)."""
        u0, v0, u1, v1 = box
        todo = np.flatnonzero(~self._rows_done[v0:v1 + 2])
        if todo.size:
            a, b = v0 + int(todo[0]), v0 + int(todo[-1]) + 1
            d = self.camera.rays(self.corner_xn[a:b])
            S, t = self.camera.surface_hits(d)
            for cache, new in zip(self._rays, (d, S, t)):
                cache[a:b] = new
            self._rows_done[a:b] = True
        return tuple(c[v0:v1 + 2, u0:u1 + 2] for c in self._rays)  # type: ignore[return-value]

    def trace_corners(self, box, tag, t_s: float = 0.0, waves=None, surface=None):
        """Exact tracing of the pixel corners of ``box`` onto one tag's plane.

        Returns (col, row, ok): the tag-bitmap coordinates (cells; col right, row down
        from the top-left of the bitmap) where the light path of each pixel corner
        (j - 0.5, i - 0.5) meets the tag plane, shape (h + 1, w + 1), and where that
        path exists. ``surface``: (d, S, t) of these corners already at the (rippled)
        surface (``surface_rays``), else they are made here."""
        _, P0, top, right, n = tag
        d, S, t = self.surface_rays(box, t_s, waves) if surface is None else surface
        wz = self.camera.water_z
        with np.errstate(divide="ignore", invalid="ignore"):
            den = t @ n
            lam = ((P0 - S) @ n) / den
            X = S + lam[..., None] * t
            ok = (den < 0) & (lam > 0)
            if P0[2] - self.half_outer < wz:  # part of the tag may be out of the water
                C = self.camera.C
                den_a = np.ascontiguousarray(d) @ n
                lam_a = ((P0 - C) @ n) / den_a
                Xa = C + lam_a[..., None] * d
                air = (den_a < 0) & (lam_a > 0) & (Xa[..., 2] < wz)
                X = np.where(air[..., None], Xa, X)
                ok = air | (ok & (X[..., 2] >= wz))
        rel = X - P0
        tw = self.family.total_width
        col = (rel @ right) / self.cell + 0.5 * tw
        row = 0.5 * tw - (rel @ top) / self.cell
        return col, row, ok

    def surface_rays(self, box, t_s: float = 0.0, waves=None):
        """(d, S, t) of the pixel corners of ``box`` at the water surface: the cached
        flat-water values, or with ``waves`` the rippled ones of time t_s. S and t are
        C-contiguous (the products with a tag's normal are then the same BLAS calls, so
        the same bits, as when the box was traced from scratch)."""
        d, S, t = self.corner_rays(box)
        if waves:
            S, t = self._ripple(S, d, waves, t_s)
        return d, np.ascontiguousarray(S), np.ascontiguousarray(t)

    def _level_map(self, tag_id: int) -> np.ndarray:
        """The tag's radiance per cell, padded by one cell of -1 (outside the tag)."""
        o = self.options
        refl = self.family.reflectance(tag_id)
        tw = self.family.total_width
        L = np.full((tw + 2, tw + 2), -1.0)
        L[1:-1, 1:-1] = o.black_level + (o.white_level - o.black_level) * refl
        return L

    def render_tag(self, img: np.ndarray, box, tag, t_s: float = 0.0, waves=None,
                   surface=None) -> None:
        """Composite one tag into the radiance image ``img`` over ``box`` (in place).

        The pixel corners are traced exactly; inside a pixel the image -> tag-plane map
        is bilinear in the corner values (the bitmap coordinates move by < 1e-4 cell
        from bilinear over one pixel). A pixel whose footprint lies within one cell's
        level (or wholly outside the tag) takes that value; the others are area-averaged
        over S x S samples. Coverage composites over what is already there."""
        u0, v0, u1, v1 = box
        col, row, ok = self.trace_corners(box, tag, t_s, waves, surface)
        L = self._level_map(tag[0])
        tw = self.family.total_width
        okp = ok[:-1, :-1] & ok[:-1, 1:] & ok[1:, :-1] & ok[1:, 1:]
        # Cell indices (padded: 0 and tw + 1 are outside) of every corner, once per
        # corner; a pixel with a corner that has no light path counts as outside.
        def extremes(g):
            i = np.clip(np.floor(np.where(ok, g, -10.0)), -1, tw).astype(np.int64) + 1
            a, b, c, d = i[:-1, :-1], i[:-1, 1:], i[1:, :-1], i[1:, 1:]
            lo = np.minimum(np.minimum(a, b), np.minimum(c, d))
            hi = np.maximum(np.maximum(a, b), np.maximum(c, d))
            return np.where(okp, lo, 0), np.where(okp, hi, 0)

        cmin, cmax = extremes(col)
        rmin, rmax = extremes(row)
        small = (cmax - cmin <= 1) & (rmax - rmin <= 1)
        l00, l01 = L[rmin, cmin], L[rmin, cmax]
        l10, l11 = L[rmax, cmin], L[rmax, cmax]
        uniform = small & (l00 == l01) & (l00 == l10) & (l00 == l11)
        region = img[v0:v1 + 1, u0:u1 + 1]
        inside = uniform & (l00 >= 0)
        region[inside] = l00[inside]
        edge = ~uniform
        if not edge.any():
            return
        S = self.options.supersampling
        a = (np.arange(S) + 0.5) / S
        wv = a[:, None].reshape(1, S, 1)
        wu = a[None, :].reshape(1, 1, S)
        w00 = ((1 - wv) * (1 - wu)).reshape(1, S * S)
        w01 = ((1 - wv) * wu).reshape(1, S * S)
        w10 = (wv * (1 - wu)).reshape(1, S * S)
        w11 = (wv * wu).reshape(1, S * S)
        oke = okp[edge]
        ce = np.where(oke, np.stack([col[:-1, :-1][edge], col[:-1, 1:][edge], col[1:, :-1][edge],
                                     col[1:, 1:][edge]]), -10.0)  # (4, m)
        re = np.where(oke, np.stack([row[:-1, :-1][edge], row[:-1, 1:][edge], row[1:, :-1][edge],
                                     row[1:, 1:][edge]]), -10.0)
        cs = ce[0][:, None] * w00 + ce[1][:, None] * w01 + ce[2][:, None] * w10 + ce[3][:, None] * w11
        rs = re[0][:, None] * w00 + re[1][:, None] * w01 + re[2][:, None] * w10 + re[3][:, None] * w11
        lv = L[np.clip(np.floor(rs), -1, tw).astype(np.int64) + 1,
               np.clip(np.floor(cs), -1, tw).astype(np.int64) + 1]  # (m, S*S)
        hit = lv >= 0
        cover = hit.mean(axis=1)
        value = np.where(hit, lv, 0.0).mean(axis=1)
        region[edge] = (region[edge] * (1.0 - cover) + value).astype(region.dtype)

    def radiance_box(self, pose: Pose, box, t_s: float = 0.0, waves=None) -> np.ndarray:
        """Noise-free radiance (h, w) of the pixels in box (floor and every tag)."""
        u0, v0, u1, v1 = box
        img = np.full((self.height, self.width), self.options.floor_level, dtype=np.float64)
        for tag in self.tag_world(pose):
            self.render_tag(img, box, tag, t_s, waves)
        return img[v0:v1 + 1, u0:u1 + 1]

    def _surfaces(self, boxes, t_s: float, waves) -> list:
        """Per box, its ``surface_rays``. With ripple, the rippled surface is made once
        over the rectangle around all the boxes when that is no larger than the boxes
        together (tags side by side share most of it), and each box takes its part
        (elementwise: the same values)."""
        if not waves or len(boxes) < 2:
            return [None] * len(boxes)
        hull = (min(b[0] for b in boxes), min(b[1] for b in boxes),
                max(b[2] for b in boxes), max(b[3] for b in boxes))

        def area(b):
            return (b[2] - b[0] + 2) * (b[3] - b[1] + 2)

        if area(hull) > sum(area(b) for b in boxes):
            return [None] * len(boxes)
        d, S, t = self.surface_rays(hull, t_s, waves)
        out = []
        for u0, v0, u1, v1 in boxes:
            cut = (slice(v0 - hull[1], v1 - hull[1] + 2), slice(u0 - hull[0], u1 - hull[0] + 2))
            out.append((d[cut], np.ascontiguousarray(S[cut]), np.ascontiguousarray(t[cut])))
        return out

    def _ripple(self, S, d, waves, t_s):
        """The rippled surface point and refracted direction of each corner (one
        fixed-point step from the flat water along the air ray, then vector Snell about
        the local normal). Written per component on contiguous planes: the same
        operations, in the same order, as the (..., 3) form (``np.linalg.norm`` and
        ``refract``'s sum over three terms add left to right), so the same bits, without
        reductions over a length-3 axis."""
        x, y = np.ascontiguousarray(S[..., 0]), np.ascontiguousarray(S[..., 1])
        h = np.zeros_like(x)
        for A, kx, ky, w, ph in waves:
            h += A * np.sin(kx * x + ky * y - w * t_s + ph)
        dx, dy, dz = (np.ascontiguousarray(d[..., i]) for i in range(3))
        s = h / dz
        S0, S = S, np.empty(S.shape)
        S[..., 0] = x = x + s * dx
        S[..., 1] = y = y + s * dy
        S[..., 2] = S0[..., 2] + s * dz
        hx = np.zeros_like(x)
        hy = np.zeros_like(x)
        for A, kx, ky, w, ph in waves:
            c = A * np.cos(kx * x + ky * y - w * t_s + ph)
            hx += kx * c
            hy += ky * c
        # n = (hx, hy, -1) / |(hx, hy, -1)|, |.| = sqrt((hx^2 + hy^2) + 1)
        norm = np.sqrt(hx * hx + hy * hy + 1.0)
        nx, ny, nz = hx / norm, hy / norm, -1.0 / norm
        # refract(d, n, eta): cos_i = -(n . d), k = 1 - eta^2 (1 - cos_i^2),
        # t = eta d + (eta cos_i - sqrt(k)) n
        eta = self.camera.n_air / self.camera.n_water
        cos_i = -(nx * dx + ny * dy + nz * dz)
        k = 1.0 - eta * eta * (1.0 - cos_i * cos_i)
        with np.errstate(invalid="ignore"):
            root = np.sqrt(k)
        g = eta * cos_i - root
        t = np.empty(S.shape)
        t[..., 0] = eta * dx + g * nx
        t[..., 1] = eta * dy + g * ny
        t[..., 2] = eta * dz + g * nz
        return S, t

    # -- images --------------------------------------------------------------------

    def _floor_canvas(self) -> tuple[np.ndarray, list]:
        """The renderer's own radiance image, the plain floor again: only the boxes the
        last frame drew into are reset (not a new (H, W) image per frame)."""
        level = self.options.floor_level
        if self._canvas is None:
            self._canvas = (np.full((self.height, self.width), level, dtype=np.float32), [])
        img, drawn = self._canvas
        for u0, v0, u1, v1 in drawn:
            img[v0:v1 + 1, u0:u1 + 1] = level
        drawn.clear()
        return img, drawn

    def radiance(self, pose: Pose | None, t_s: float = 0.0, ripple_seed: int = 0,
                 motion_blur_px: tuple[float, float] | None = None,
                 return_boxes: bool = False, reuse: bool = False):
        """Noise-free radiance image (H, W) float32, blur applied (and, with
        ``return_boxes``, the boxes outside which it is the plain floor).

        ``reuse``: drawn into the renderer's own image, valid until the next call with
        ``reuse`` (the same values; for a caller that only exposes it, as ``render``)."""
        o = self.options
        if reuse:
            img, drawn = self._floor_canvas()
        else:
            img = np.full((self.height, self.width), o.floor_level, dtype=np.float32)
            drawn = []
        if pose is None:
            return (img, []) if return_boxes else img
        mb = o.motion_blur_px if motion_blur_px is None else motion_blur_px
        blur_extra = 3.0 * o.blur_sigma_px + math.hypot(*mb) + 1.0
        waves = None
        if o.ripple_amplitude_m > 0:
            if self._ripple_waves is None or self._ripple_waves[0] != ripple_seed:
                self._ripple_waves = (ripple_seed, self.ripple_waves(ripple_seed))
            waves = self._ripple_waves[1]
            slope = sum(a * math.hypot(kx, ky) for a, kx, ky, _, _ in waves)
            depth = max(pose.z - self.camera.water_z + 0.5, 0.0)
            blur_extra += slope * depth * self.camera.fx / max(self.camera.h_air, 0.1) + 2.0
        visible = [(tag, box) for tag in self.tag_world(pose)
                   if (box := self.tag_box(tag, blur_extra)) is not None]
        boxes = [box for _, box in visible]
        drawn.extend(boxes)  # (before drawing: a failure midway leaves them to reset)
        surfaces = self._surfaces(boxes, t_s, waves)
        for (tag, box), surface in zip(visible, surfaces):
            self.render_tag(img, box, tag, t_s, waves, surface)
        boxes = _merge_boxes(boxes)
        drawn.extend(boxes)  # (a merged box may reach beyond those it merged: blurred)
        for box in boxes:
            u0, v0, u1, v1 = box
            region = img[v0:v1 + 1, u0:u1 + 1]
            if o.blur_sigma_px > 0:
                cv2.GaussianBlur(region, (0, 0), o.blur_sigma_px, dst=region,
                                 borderType=cv2.BORDER_REPLICATE)
            if mb[0] or mb[1]:
                k = motion_kernel(*mb)
                region[...] = cv2.filter2D(region, -1, k, borderType=cv2.BORDER_REPLICATE)
        return (img, boxes) if return_boxes else img

    def _to_dn(self, rad: np.ndarray, z: np.ndarray | None, gain: float) -> np.ndarray:
        """Radiance -> DN (uint8) with gain, and with noise from the standard normals z."""
        o = self.options
        dn = rad.astype(np.float32) * np.float32(gain)
        if z is not None:
            var = np.float32(o.read_noise_dn ** 2)
            if o.shot_noise_dn > 0:
                var = np.float32(o.shot_noise_dn) * np.maximum(dn, 0) + var
            dn += np.sqrt(var) * z
        dn += np.float32(0.5)
        np.clip(dn, 0.0, 255.0, out=dn)
        return dn.astype(np.uint8)

    def frame_noise(self, rng: np.random.Generator | None) -> FrameNoise:
        """Everything of a frame's exposure that does not depend on the vehicle: the
        draws ``expose`` makes from ``rng`` (the gain's jitter, then 16 noise bits per
        pixel) and the exposed plain floor, into which the tags' boxes are then
        exposed."""
        o = self.options
        gain = 255.0 * o.exposure
        if rng is not None and o.exposure_jitter > 0:
            gain *= max(0.0, 1.0 + o.exposure_jitter * float(rng.standard_normal()))
        if not (rng is not None and (o.read_noise_dn > 0 or o.shot_noise_dn > 0)):
            floor = self._to_dn(np.array([o.floor_level]), None, gain)[0]
            return FrameNoise(gain, None, np.full((self.height, self.width), floor, np.uint8))
        idx = random_uint16(rng, (self.height, self.width))
        floor_table = self._to_dn(np.full(65536, o.floor_level, np.float32), _NORMAL_LUT, gain)
        return FrameNoise(gain, idx, np.take(floor_table, idx))

    def expose(self, radiance: np.ndarray, rng: np.random.Generator | None,
               boxes: list[tuple[int, int, int, int]] | None = None,
               noise: FrameNoise | None = None) -> np.ndarray:
        """Radiance -> 8-bit image with exposure jitter, shot and read noise.

        With ``boxes`` (the regions where the radiance is not the plain floor) the floor
        elsewhere goes through a 65536-entry table (the same noise model, computed once
        per frame for the floor's level, ``frame_noise``): about 3x faster. ``noise``:
        this frame's ``frame_noise(rng)`` made beforehand (e.g. by another thread while
        the radiance was traced); it is consumed (the image is drawn into its floor)."""
        if boxes is None:
            o = self.options
            gain = 255.0 * o.exposure
            if rng is not None and o.exposure_jitter > 0:
                gain *= max(0.0, 1.0 + o.exposure_jitter * float(rng.standard_normal()))
            noisy = rng is not None and (o.read_noise_dn > 0 or o.shot_noise_dn > 0)
            z = standard_normals(rng, radiance.shape) if noisy else None
            return self._to_dn(radiance, z, gain)
        if noise is None:
            noise = self.frame_noise(rng)
        out = noise.floor
        for u0, v0, u1, v1 in boxes:
            box = (slice(v0, v1 + 1), slice(u0, u1 + 1))
            z = None if noise.idx is None else _NORMAL_LUT[noise.idx[box]]
            out[box] = self._to_dn(radiance[box], z, noise.gain)
        return out

    def render(self, pose: Pose | None, rng: np.random.Generator | None = None, t_s: float = 0.0,
               ripple_seed: int = 0,
               motion_blur_px: tuple[float, float] | None = None,
               noise: FrameNoise | None = None) -> np.ndarray:
        """One 8-bit grey frame (H, W) of the vehicle at ``pose`` (None: no vehicle);
        ``noise``: as in ``expose``."""
        rad, boxes = self.radiance(pose, t_s, ripple_seed, motion_blur_px, return_boxes=True,
                                   reuse=True)
        return self.expose(rad, rng, boxes, noise)


def motion_kernel(du: float, dv: float) -> np.ndarray:
    """A normalized line kernel for a displacement (du, dv) px during the exposure,
    drawn with 8x supersampling along the line."""
    L = math.hypot(du, dv)
    r = math.ceil(L / 2) + 1
    size = 2 * r + 1
    k = np.zeros((size, size), np.float32)
    n = max(math.ceil(L * 8), 1)
    for s in np.linspace(-0.5, 0.5, n):
        x, y = r + s * du, r + s * dv
        x0, y0 = math.floor(x), math.floor(y)
        fx, fy = x - x0, y - y0
        k[y0, x0] += (1 - fx) * (1 - fy)
        k[y0, x0 + 1] += fx * (1 - fy)
        k[y0 + 1, x0] += (1 - fx) * fy
        k[y0 + 1, x0 + 1] += fx * fy
    return k / k.sum()


def _merge_boxes(boxes: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Merge overlapping boxes until none overlap (a sample is traced once)."""
    boxes = list(boxes)
    merged = True
    while merged:
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] <= b[2] + 1 and b[0] <= a[2] + 1 and a[1] <= b[3] + 1 and b[1] <= a[3] + 1:
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return boxes
