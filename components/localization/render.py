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

The loops over corners and pixels (the ripple, the tracing onto a tag's plane, the
compositing, the exposure) are C, ``pool_trace.c`` (``pool_loops.py``), compiled once
per machine by ``scripts/setup.sh``; this module prepares their inputs. The spatial
part of each ripple component's phase is a constant of the setup too: its sine and
cosine are kept per corner (with the rays), and the phase at time t comes by angle
addition.
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
from .pool_loops import loops as _loops
from .pool_loops import ptr as _ptr
from .pool_loops import row_stride as _rows
from .pool_setup import PoolSetup
from .refraction import RefractiveCamera
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


# The 16 points of a tag's outer ring that tag_box projects, as multiples (a, b) of
# (top, right) (column vectors): 5 per side, the corners once.
_RING = tuple(np.array([[x] for x in col]) for col in zip(
    *[(a, b) for a in np.linspace(-1.0, 1.0, 5) for b in np.linspace(-1.0, 1.0, 5)
      if abs(a) == 1 or abs(b) == 1]))


def _wave_table(waves, t_s: float) -> np.ndarray:
    """Per ripple component (A, kx, ky, cos(w t), sin(w t)): what ``pool_trace.c`` needs
    of it at time t_s."""
    return np.array([(A, kx, ky, math.cos(w * t_s), math.sin(w * t_s))
                     for A, kx, ky, w, _ in waves], dtype=float)


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


class _Phases:
    """The spatial part of each ripple component's phase at the flat-water point (x, y)
    of every pixel corner, phi = kx x + ky y + ph: its sine and cosine. Constants of the
    setup and the waves, filled a row of corners at a time when first needed (as the
    rays are)."""

    def __init__(self, waves: list, rows: int, cols: int) -> None:
        self.waves = list(waves)
        shape = (len(waves), rows, cols)
        self.sin, self.cos = np.empty(shape), np.empty(shape)
        self.rows_done = np.zeros(rows, dtype=bool)

    def fill(self, a: int, b: int, S: np.ndarray) -> None:
        """Rows a .. b - 1, from the corners' flat-water points S (H+1, W+1, 3)."""
        x, y = S[a:b, :, 0], S[a:b, :, 1]
        for m, (_A, kx, ky, _w, ph) in enumerate(self.waves):
            phi = kx * x + ky * y + ph
            self.sin[m, a:b] = np.sin(phi)
            self.cos[m, a:b] = np.cos(phi)
        self.rows_done[a:b] = True


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
        self._eta = self.camera.n_air / self.camera.n_water
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
        self._phases: _Phases | None = None  # the ripple's per-corner phases (one set of waves)
        self._canvas: tuple[np.ndarray, list] | None = None  # (image, boxes drawn in it)
        # (tag id, options) -> the tag's radiance per cell (_level_map); shared with the
        # renderers with_options makes (the key holds the options)
        self._levels: dict[tuple[int, RenderOptions], np.ndarray] = {}

    def with_options(self, **changes) -> Renderer:
        """A renderer of the same camera with some options changed (shares the
        precomputed rays: cheap)."""
        import copy

        opts = dataclasses.replace(self.options, **changes)
        opts.check()
        r = copy.copy(self)
        r.options = opts
        r._ripple_waves = None
        r._phases = None
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
        return self._tag_boxes([tag], extra_px)[0]

    def _tag_boxes(self, tags, extra_px: float) -> list[tuple[int, int, int, int] | None]:
        """``tag_box`` of each tag: the 16 points of each one's outer ring, all projected
        in one call."""
        a, b = _RING
        rings = [P0 + self.half_outer * (a * top + b * right) for _, P0, top, right, _n in tags]
        if not rings:
            return []
        every = self.camera.project(np.concatenate(rings) if len(rings) > 1 else rings[0])
        m = self.options.margin_px + extra_px
        out: list[tuple[int, int, int, int] | None] = []
        for k in range(len(rings)):
            px = every[16 * k:16 * (k + 1)]
            if not np.all(np.isfinite(px)):
                out.append(None)
                continue
            u0 = max(math.floor(px[:, 0].min() - m), 0)
            v0 = max(math.floor(px[:, 1].min() - m), 0)
            u1 = min(math.ceil(px[:, 0].max() + m), self.width - 1)
            v1 = min(math.ceil(px[:, 1].max() + m), self.height - 1)
            out.append(None if u0 > u1 or v0 > v1 else (u0, v0, u1, v1))
        return out

    def tag_boxes(self, pose: Pose, extra_px: float = 0.0) -> list[tuple[int, int, int, int]]:
        """The boxes of the visible tags, overlapping ones merged."""
        boxes = self._tag_boxes(self.tag_world(pose), extra_px)
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
        surface (``surface_rays``), else they are made here. (``mp_trace``)"""
        d, S, t = self.surface_rays(box, t_s, waves) if surface is None else surface
        nr, nc = S.shape[:2]
        col, row = np.empty((nr, nc)), np.empty((nr, nc))
        ok = np.empty((nr, nc), np.uint8)
        geo, air = self._geo(tag)
        _loops().mp_trace(nr, nc, d.ctypes.data, _rows(d), S.ctypes.data, t.ctypes.data,
                          _rows(S), geo.ctypes.data, air, col.ctypes.data, row.ctypes.data,
                          ok.ctypes.data)
        return col, row, ok.view(bool)

    def _geo(self, tag) -> tuple[np.ndarray, int]:
        """What ``pool_trace.c`` needs of a tag's plane: (P0, n, right, top, C, cell, tw,
        water_z, (P0 - C) . n), and whether part of the tag may be out of the water (then
        the straight air rays are traced too)."""
        _, P0, top, right, n = tag
        C = self.camera.C
        geo = np.concatenate([P0, n, right, top, C, [self.cell, self.family.total_width,
                                                     self.camera.water_z, (P0 - C) @ n]])
        return geo, int(P0[2] - self.half_outer < self.camera.water_z)

    def surface_rays(self, box, t_s: float = 0.0, waves=None):
        """(d, S, t) of the pixel corners of ``box`` at the water surface: the cached
        flat-water values (read-only views), or with ``waves`` the rippled ones of time
        t_s (arrays of their own)."""
        d, S, t = self.corner_rays(box)
        if waves:
            S, t = self._ripple(box, d, S, waves, t_s)
        return d, S, t

    def _level_map(self, tag_id: int) -> np.ndarray:
        """The tag's radiance per cell, padded by one cell of -1 (outside the tag)
        (read-only, made once per tag)."""
        levels = self._levels
        L = levels.get((tag_id, self.options))
        if L is None:
            o = self.options
            refl = self.family.reflectance(tag_id)
            tw = self.family.total_width
            L = np.full((tw + 2, tw + 2), -1.0)
            L[1:-1, 1:-1] = o.black_level + (o.white_level - o.black_level) * refl
            L.flags.writeable = False
            levels[(tag_id, self.options)] = L
        return L

    def render_tag(self, img: np.ndarray, box, tag, t_s: float = 0.0, waves=None,
                   surface=None) -> None:
        """Composite one tag into the radiance image ``img`` (float32, H x W) over
        ``box`` (in place).

        The pixel corners are traced exactly; inside a pixel the image -> tag-plane map
        is bilinear in the corner values (the bitmap coordinates move by < 1e-4 cell
        from bilinear over one pixel). A pixel whose footprint lies within one cell's
        level (or wholly outside the tag) takes that value; the others are area-averaged
        over S x S samples. Coverage composites over what is already there.
        (``mp_composite``)"""
        if img.dtype != np.float32 or img.strides[1] != 4:
            raise ValueError("render_tag draws into a float32 image with contiguous rows")
        u0, v0, u1, v1 = box
        col, row, ok = self.trace_corners(box, tag, t_s, waves, surface)
        L = self._level_map(tag[0])
        region = img[v0:v1 + 1, u0:u1 + 1]
        if _loops().mp_composite(v1 - v0 + 1, u1 - u0 + 1, col.ctypes.data, row.ctypes.data,
                                 ok.ctypes.data, L.ctypes.data, self.family.total_width,
                                 self.options.supersampling, region.ctypes.data,
                                 region.strides[0] // 4):
            raise MemoryError("render_tag: no memory for a row of corner cells")

    def _render_tags(self, img: np.ndarray, visible: list, t_s: float, waves,
                     shrink: int = 0) -> np.ndarray:
        """Every (tag, box) of ``visible`` into ``img`` (float32 H x W), in that order:
        ``mp_render``, which streams the corner rows, computing each row's (rippled)
        surface once for all the tags and then tracing and compositing each tag (the
        same values as ``render_tag`` tag after tag).

        ``shrink``: each tag is first tried in its box less ``shrink`` pixels on each side
        that is not at the image's edge (a box that holds the tag's ring with the
        bare margin, when the box has room for blur and ripple): drawn there when the
        outermost corners of that box show that the tag lies well inside it
        (``ring_clear`` in ``pool_trace.c``), which leaves the same image. Returns the
        boxes drawn in."""
        if not visible:
            return np.zeros((0, 4), np.int64)
        for _, box in visible:
            self.corner_rays(box)  # the rows of rays they need, cached
        boxes = np.array([box for _, box in visible], dtype=np.int64)
        small = None
        if shrink > 0:
            edge = np.array([0, 0, self.width - 1, self.height - 1])
            small = boxes + np.where(boxes == edge, 0, np.array([shrink, shrink, -shrink, -shrink]))
            small[:, 2:] = np.maximum(small[:, 2:], small[:, :2])
        geos, airs = zip(*(self._geo(tag) for tag, _ in visible))
        geo, air = np.concatenate(geos), np.array(airs, dtype=np.int32)
        levels = np.concatenate([self._level_map(tag[0]).ravel() for tag, _ in visible])
        d, S, t = self._rays
        nw, sphi, cphi, wave = 0, None, None, None
        if waves:
            ph = self._phase_rows(waves, int(boxes[:, 1].min()), int(boxes[:, 3].max()) + 1)
            nw, sphi, cphi, wave = len(waves), ph.sin, ph.cos, _wave_table(waves, t_s)
        cols, cells = self.width + 1, (self.height + 1) * (self.width + 1)
        if _loops().mp_render(len(visible), boxes.ctypes.data, _ptr(small), geo.ctypes.data,
                              air.ctypes.data, levels.ctypes.data, self.family.total_width,
                              self.options.supersampling, d.ctypes.data, S.ctypes.data,
                              t.ctypes.data, 3 * cols, nw, _ptr(sphi), _ptr(cphi), cols, cells,
                              _ptr(wave), self._eta, img.ctypes.data, img.strides[0] // 4):
            raise MemoryError("the renderer: no memory for a frame's rows of corners")
        return boxes

    def _ripple(self, box, d, S, waves, t_s):
        """The rippled surface point and refracted direction of the corners of ``box``
        (``d``, ``S``: their flat-water rays), at time ``t_s`` (``mp_ripple``: one
        fixed-point step from the flat water along the air ray, then vector Snell about
        the local normal)."""
        ph = self._phase_rows(waves, box[1], box[3] + 1)
        u0, v0, u1, v1 = box
        sphi, cphi = (p[:, v0:v1 + 2, u0:u1 + 2] for p in (ph.sin, ph.cos))
        nr, nc = S.shape[:2]
        S_out, t_out = np.empty((nr, nc, 3)), np.empty((nr, nc, 3))
        _loops().mp_ripple(nr, nc, d.ctypes.data, S.ctypes.data, _rows(S), sphi.ctypes.data,
                           cphi.ctypes.data, sphi.strides[1] // 8, sphi.strides[0] // 8,
                           len(waves), _wave_table(waves, t_s).ctypes.data, self._eta,
                           S_out.ctypes.data, t_out.ctypes.data)
        return S_out, t_out

    def _phase_rows(self, waves, a: int, b: int) -> _Phases:
        """The phases of ``waves``, with the corner rows a .. b (inclusive) filled."""
        ph = self._phases
        if ph is None or ph.waves != waves:
            ph = self._phases = _Phases(waves, self.height + 1, self.width + 1)
        todo = np.flatnonzero(~ph.rows_done[a:b + 1])
        if todo.size:
            lo, hi = a + int(todo[0]), a + int(todo[-1]) + 1
            self.corner_rays((0, lo, self.width - 1, hi - 2))  # the flat rays of whole rows
            ph.fill(lo, hi, self._rays[1])
        return ph

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
        tags = self.tag_world(pose)
        visible = [(tag, box) for tag, box in zip(tags, self._tag_boxes(tags, blur_extra))
                   if box is not None]
        boxes = [box for _, box in visible]
        drawn.extend(boxes)  # (before drawing: a failure midway leaves them to reset)
        # Blur and ripple need room around a tag; the tag itself is drawn in less where
        # its light paths show that it lies well inside (within margin_px).
        self._render_tags(img, visible, t_s, waves, shrink=math.floor(blur_extra))
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
        if radiance.dtype != np.float32 or radiance.strides[1] != 4:
            radiance = np.ascontiguousarray(radiance, dtype=np.float32)  # as _to_dn's astype
        idx = noise.idx
        o = self.options
        loops = _loops()
        for u0, v0, u1, v1 in boxes:  # _to_dn of each box (mp_expose: the same float32 steps)
            rad = radiance[v0:v1 + 1, u0:u1 + 1]
            dst = out[v0:v1 + 1, u0:u1 + 1]
            bits = None if idx is None else idx[v0:v1 + 1, u0:u1 + 1]
            loops.mp_expose(v1 - v0 + 1, u1 - u0 + 1, rad.ctypes.data, rad.strides[0] // 4,
                            _ptr(bits), 0 if bits is None else bits.strides[0] // 2,
                            _NORMAL_LUT.ctypes.data, noise.gain, o.read_noise_dn ** 2,
                            o.shot_noise_dn, dst.ctypes.data, dst.strides[0])
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
