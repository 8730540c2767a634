"""Underwater image formation: the radiance reaching each pixel from the lit scene
through the water (docs/deepsea-camera.md, "Radiometry").

Call order::

    lights = place_lights(lights, vehicle_position, R_wb)   # per frame
    L = radiance(frame, rays_ned, water, lights, reflectance, options, engine)   # (H, W, 3)

Per pixel, with its unit ray d from the camera centre C, hit range r (or the
``max_range_m`` of a ray that hits nothing), hit point X, normal n and Lambertian
albedo ρ (per channel; the scene's class reflectance), and c, b, β(ψ) of the water
(``water.py``), the radiance is the single-scattering sum of Jaffe (1990) and
McGlamery (1980):

* **direct signal** (light -> surface -> camera, attenuated both ways):
  for each light j at P_j with axis a_j, w = X - P_j, d_l = |w|:
  E_j = I_0j · S_j(cos θ) · max(0, -ŵ·n) · exp(-c d_l) / d_l²,   cos θ = ŵ·a_j,
  plus the down-welling ambient E_amb = E_d(X_z) · max(0, -n_z) (n_z: NED down);
  L_D = (ρ/π) (Σ_j E_j + E_amb) · exp(-c r);
* **backscatter** of each light along the camera ray inside its cone:
  L_B,j = ∫_{s0}^{r} β(ψ) I_0j S_j(cos θ(s)) exp(-c (d_l(s) + s)) / d_l(s)² ds,
  x(s) = C + s d, d_l(s) = |x(s) - P_j|, cos ψ = -ŵ(s)·d (ψ between the light's
  direction of travel and the ray back to the camera); computed with N-point
  Gauss-Legendre in u = 1/s over [1/r, 1/s0] (ds = s² du, which takes out the
  1/d_l² peak of a light near the camera), N = ``backscatter_samples`` (default 8);
* **ambient backscatter** in the form of the revised model (Akkaynak & Treibitz 2018,
  CVPR, eq. 3) with narrow-band channels, where its β^D and β^B are both c:
  L_B,amb = B_∞ (1 - exp(-c r)),  B_∞ = β(ψ_d) E_d(C_z) / c,  cos ψ_d = -d_z (the
  down-welling light taken as travelling straight down).

With c = b = 0 it is the in-air render (inverse-square lights, Lambert surfaces).
Optional shadows: a ray from each light to X; X is unlit by that light when something
is hit before it. Not modelled: forward scattering (blur), multiple scattering,
inelastic scattering, specular surfaces, the lights' spectra (one value per channel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import GeometryFrame
from .lights import SpotLight
from .water import WaterOptics


@dataclass(frozen=True)
class RadiometryOptions:
    """How the radiance is computed."""

    backscatter_samples: int = 8
    """N: Gauss-Legendre samples per ray for the lights' backscatter (0: none)."""
    backscatter_start_m: float = 0.05
    """s0: backscatter is integrated from this distance from the camera centre, m (the
    water in front of the port)."""
    max_range_m: float = 30.0
    """Range of the water a ray that hits nothing looks through, m."""
    surface_irradiance: tuple[float, float, float] = (150.0, 150.0, 150.0)
    """Down-welling irradiance just below the sea surface, per channel, W m^-2."""
    shadows: bool = False
    """Cast a shadow ray from each light to each lit point."""
    backscatter_decimation: int = 4
    """F: the backscatter is computed on every F-th pixel in each direction and
    interpolated bilinearly (1: every pixel). It varies slowly across the image; at a
    range edge the interpolation mixes the two sides over F pixels."""

    def __post_init__(self) -> None:
        if not (isinstance(self.backscatter_samples, int) and 0 <= self.backscatter_samples <= 64):
            raise ValueError("backscatter_samples must be an integer 0..64")
        if not (isinstance(self.backscatter_decimation, int) and 1 <= self.backscatter_decimation <= 16):
            raise ValueError("backscatter_decimation must be an integer 1..16")
        if not self.backscatter_start_m > 0:
            raise ValueError("backscatter_start_m must be > 0")
        if not self.max_range_m > self.backscatter_start_m:
            raise ValueError("max_range_m must exceed backscatter_start_m")
        if len(self.surface_irradiance) != 3 or min(self.surface_irradiance) < 0:
            raise ValueError("surface_irradiance must be 3 numbers >= 0")


@dataclass(frozen=True)
class PlacedLight:
    """A light at its world pose for one frame."""

    light: SpotLight
    position_ned: np.ndarray
    axis_ned: np.ndarray


def place_lights(lights, vehicle_position_ned, R_wb) -> list[PlacedLight]:
    p = np.asarray(vehicle_position_ned, float)
    return [PlacedLight(li, p + R_wb @ np.asarray(li.position_body_m, float), R_wb @ li.axis_body)
            for li in lights]


def _gauss_legendre(n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def cone_segment(rays: np.ndarray, C: np.ndarray, r: np.ndarray, s0: float,
                 pl: PlacedLight) -> tuple[np.ndarray, np.ndarray]:
    """(s_a, s_b): the part of each ray's [s0, r] inside the light's cone (its hull
    when the cone is wider than a half space); s_a >= s_b where the ray misses it.

    On the cone's surface (s d·a - L·a)² = cos²θ_o |s d - L|² (L = P - C): a quadratic
    A s² + B s + C0 = 0 whose roots split [s0, r] into at most three pieces, each
    wholly inside or outside (tested at its midpoint)."""
    k = pl.light.cos_half_angle
    if k <= -1.0 + 1e-12:
        return np.full(len(rays), s0), r.copy()
    Lrel = pl.position_ned - C
    dL = rays @ Lrel
    da = rays @ pl.axis_ned
    La = float(Lrel @ pl.axis_ned)
    L2 = float(Lrel @ Lrel)
    k2 = k * k
    A = da * da - k2
    B = -2.0 * da * La + 2.0 * k2 * dL
    C0 = La * La - k2 * L2
    disc = B * B - 4 * A * C0
    with np.errstate(divide="ignore", invalid="ignore"):
        sq = np.sqrt(np.maximum(disc, 0.0))
        q = -0.5 * (B + np.copysign(sq, B))
        r1 = np.where(np.abs(A) > 1e-14, q / A, np.where(np.abs(B) > 1e-14, -C0 / B, np.nan))
        r2 = np.where(np.abs(q) > 1e-14, C0 / q, np.nan)
    r1 = np.where(disc >= 0, r1, np.nan)
    r2 = np.where(disc >= 0, r2, np.nan)
    lo = np.full(len(rays), s0)
    # s0 <= c1 <= c2 <= r: the roots clipped to [s0, r] (a root that does not exist is
    # s0); a surface nearer than s0 leaves no water to scatter in (r -> s0).
    r = np.maximum(r, s0)
    c1 = np.clip(np.fmin(r1, r2), s0, r)
    c2 = np.clip(np.fmax(r1, r2), s0, r)
    cuts = np.stack([lo, np.where(np.isnan(c1), s0, c1), np.where(np.isnan(c2), s0, c2), r],
                    axis=1)
    a = np.full(len(rays), np.inf)
    b = np.full(len(rays), -np.inf)
    for j in range(3):
        m = 0.5 * (cuts[:, j] + cuts[:, j + 1])
        dl = np.sqrt(np.maximum(m * m - 2 * m * dL + L2, 1e-24))
        inside = ((m * da - La) / dl > k) & (cuts[:, j + 1] > cuts[:, j])
        a = np.where(inside, np.minimum(a, cuts[:, j]), a)
        b = np.where(inside, np.maximum(b, cuts[:, j + 1]), b)
    return a, b


def backscatter(rays: np.ndarray, C: np.ndarray, r: np.ndarray, water: WaterOptics,
                lights: list[PlacedLight], opts: RadiometryOptions) -> np.ndarray:
    """(P, 3) radiance scattered back into P rays (unit ``rays`` from C, lengths ``r``):
    per light, N Gauss-Legendre samples in u = 1/s over the part of [s0, r] inside
    its cone (``cone_segment``)."""
    P = len(rays)
    out = np.zeros((P, 3), np.float64)
    n = opts.backscatter_samples
    if n == 0 or not np.any(water.b > 0) or not lights:
        return out
    s0 = opts.backscatter_start_m
    r = np.minimum(np.where(np.isfinite(r), r, opts.max_range_m), opts.max_range_m)
    x, w = _gauss_legendre(n)
    c = water.c
    for pl in lights:
        sa, sb = cone_segment(rays, C, r, s0, pl)
        rows = np.flatnonzero(sb > sa)
        if rows.size == 0:
            continue
        d = rays[rows]
        ua, ub = 1.0 / sb[rows], 1.0 / sa[rows]
        half = 0.5 * (ub - ua)
        Lrel = pl.position_ned - C
        dL = d @ Lrel
        da = d @ pl.axis_ned
        La = float(Lrel @ pl.axis_ned)
        L2 = float(Lrel @ Lrel)
        acc = np.zeros((len(rows), 3), np.float32)
        d = d.astype(np.float32)
        dL, da = dL.astype(np.float32), da.astype(np.float32)
        ua, half = ua.astype(np.float32), half.astype(np.float32)
        La, L2 = np.float32(La), np.float32(L2)
        g = np.float32(water.g)
        hg_norm = np.float32((1 - water.g ** 2) / (4 * np.pi))
        bp = np.asarray(water.particle_scattering_per_m, np.float32)
        bw = np.asarray(water.molecular_scattering_per_m, np.float32)
        c = c.astype(np.float32)
        for xk, wk in zip(x.astype(np.float32), w.astype(np.float32)):
            s = 1.0 / (ua + (xk + 1.0) * half)
            dl2 = np.maximum(s * s - 2 * s * dL + L2, np.float32(1e-12))
            dl = np.sqrt(dl2)
            prof = pl.light.profile((s * da - La) / dl)
            weight = wk * half * s * s * prof / dl2  # ds = s^2 du
            mu = -(s - dL) / dl
            p_hg = hg_norm * (1.0 + g * g - 2.0 * g * mu) ** -1.5
            p_w = 0.06225 * (1.0 + 0.835 * mu * mu)
            x_att = dl + s
            for ch in range(3):
                acc[:, ch] += (bp[ch] * p_hg + bw[ch] * p_w) * np.exp(-c[ch] * x_att) * weight
        out[rows] += acc * np.asarray(pl.light.intensity, float)
    return out


def radiance(frame: GeometryFrame, rays_ned: np.ndarray, water: WaterOptics,
             lights: list[PlacedLight], reflectance: np.ndarray,
             opts: RadiometryOptions = RadiometryOptions(), engine=None) -> np.ndarray:
    """(H, W, 3) float32 radiance at the camera (module docstring).

    ``rays_ned`` (H*W, 3) the unit pixel rays; ``reflectance`` (H, W, 3) the albedo of
    each pixel's surface (0 where nothing is hit); ``engine`` for shadows."""
    H, W = frame.range_m.shape
    r = frame.range_m.reshape(-1)
    hit = np.isfinite(r)
    C = frame.pose.C_ned
    c = water.c
    L = np.zeros((H * W, 3), np.float32)
    sel = slice(None) if hit.all() else hit  # every pixel hits: views, no gathers
    Ed_cam = water.downwelling(C[2], opts.surface_irradiance) if any(opts.surface_irradiance) \
        else np.zeros(3)
    ambient = bool(np.any(Ed_cam > 1e-30 * max(opts.surface_irradiance)))
    """Down-welling light at the camera; below 1e-30 of the surface value it is left out."""
    if hit.any():
        X = frame.point_ned.reshape(-1, 3)[sel]
        Xf = (X - C).astype(np.float32)  # camera-relative: float32 keeps mm at 6 km depth
        nrm = frame.normal_ned.reshape(-1, 3)[sel].astype(np.float32)
        E = np.zeros((3, len(X)), np.float32)  # channel-major: one contiguous row a channel
        for pl in lights:
            w = Xf - (pl.position_ned - C).astype(np.float32)
            dl2 = np.einsum("ij,ij->i", w, w)
            dl = np.sqrt(dl2)
            inv = 1.0 / np.maximum(dl, np.float32(1e-12))
            cos_i = np.einsum("ij,ij->i", w, nrm)
            np.negative(cos_i, out=cos_i)
            cos_i *= inv
            np.clip(cos_i, 0.0, None, out=cos_i)
            cos_t = (w @ pl.axis_ned.astype(np.float32)) * inv
            g = pl.light.profile(cos_t) * cos_i * inv * inv
            if opts.shadows and engine is not None:
                lit = np.flatnonzero(g > 0)
                if lit.size:
                    wh = w[lit].astype(np.float64) / dl[lit, None]
                    dd = dl[lit].astype(np.float64)
                    sh = engine.cast(pl.position_ned, wh, dd)
                    blocked = sh.distance_m < dd - 1e-4 * (1.0 + dd)
                    g[lit[blocked]] = 0.0
            I0 = np.asarray(pl.light.intensity, np.float32)
            for ch in range(3):
                if I0[ch]:
                    e = np.multiply(-np.float32(c[ch]), dl)
                    np.exp(e, out=e)
                    e *= g
                    e *= I0[ch]
                    E[ch] += e
        if ambient:
            Ed = water.downwelling(X[:, 2], opts.surface_irradiance)
            E += (Ed * np.clip(-nrm[:, 2], 0.0, None)[:, None]).astype(np.float32).T
        rho = reflectance.reshape(-1, 3)[sel].astype(np.float32)
        rh = r[sel].astype(np.float32)
        Lcm = E  # (3, N): rho / pi * E * exp(-c r), channel by channel
        for ch in range(3):
            a = np.multiply(-np.float32(c[ch]), rh)
            np.exp(a, out=a)
            row = rho[:, ch] * np.float32(1 / np.pi)
            row *= Lcm[ch]
            row *= a
            Lcm[ch] = row
        L[sel] = Lcm.T
    f = opts.backscatter_decimation
    if f > 1 and H >= 2 * f and W >= 2 * f:
        # on every f-th pixel (centres of f x f blocks), bilinearly interpolated back
        rows = np.arange(f // 2, H, f)
        cols = np.arange(f // 2, W, f)
        sub = (rows[:, None] * W + cols[None, :]).reshape(-1)
        B = backscatter(rays_ned[sub], C, r[sub], water, lights, opts)
        B = B.reshape(len(rows), len(cols), 3).astype(np.float32)
        L += _upsample(B, rows, cols, H, W).reshape(-1, 3)
    else:
        L += backscatter(rays_ned, C, r, water, lights, opts)
    if ambient and np.any(water.b > 0):
        Ed = Ed_cam
        if True:
            rr = np.where(hit, r, opts.max_range_m)
            beta = water.beta(-rays_ned[:, 2])
            with np.errstate(divide="ignore", invalid="ignore"):
                path = np.where(c > 0, -np.expm1(-np.outer(rr, c)) / c, rr[:, None])
            L += beta * Ed * path
    return L.reshape(H, W, 3)


_MAPS: dict = {}


def _upsample(B: np.ndarray, rows: np.ndarray, cols: np.ndarray, H: int, W: int) -> np.ndarray:
    """Bilinear interpolation of B (samples at pixel ``rows`` x ``cols``) to (H, W, 3),
    held constant beyond the outermost samples (``cv2.remap``, maps cached)."""
    import cv2

    key = (H, W, int(rows[0]), int(rows[-1]), len(rows), int(cols[0]), int(cols[-1]), len(cols))
    maps = _MAPS.get(key)
    if maps is None:
        mx = np.interp(np.arange(W), cols, np.arange(len(cols))).astype(np.float32)
        my = np.interp(np.arange(H), rows, np.arange(len(rows))).astype(np.float32)
        maps = (np.ascontiguousarray(np.broadcast_to(mx[None, :], (H, W))),
                np.ascontiguousarray(np.broadcast_to(my[:, None], (H, W))))
        _MAPS[key] = maps
    return cv2.remap(np.ascontiguousarray(B, np.float32), maps[0], maps[1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)


def reflectance_image(label: np.ndarray, classes: dict) -> np.ndarray:
    """(H, W, 3) albedo of each pixel from its class id (0 or an unknown class: 0.3 grey
    for a hit, 0 for none). ``classes``: id -> object with ``reflectance`` (the scene's)."""
    top = int(max([0, *classes, int(label.max(initial=0))]))
    lut = np.full((top + 1, 3), 0.3)
    lut[0] = 0.0
    for cid, cls in classes.items():
        lut[cid] = cls.reflectance
    return lut[label]
