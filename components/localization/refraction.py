"""Camera geometry through a flat air-water interface (docs/localization.md).

Conventions: world z down, the water plane z = water_z (normal vertical), camera
centre C above it (C_z < water_z), R_wc camera -> world, OpenCV pinhole with the
k1 k2 p1 p2 k3 distortion and pixel centres at integers.

- **Back-projection** (closed form): pixel -> undistort (Newton on the distortion
  polynomial, to machine precision) -> ray d = R_wc (x, y, 1) -> water plane at
  S = C + s d -> vector Snell -> the refracted ray meets the plane z = z_target.
- **Forward projection** (no closed form): for an underwater point P, the surface
  point S lies in the vertical plane through C and P at horizontal distance r from
  C's foot, where n_air sin(theta_air) = n_water sin(theta_water)::

      n_a r / sqrt(r^2 + h_a^2) = n_w (D - r) / sqrt((D - r)^2 + h_w^2)

  (D the horizontal distance C..P, h_a = water_z - C_z, h_w = P_z - water_z); squaring
  gives a quartic in r (the test oracle). We solve it by Newton in t = r / h_a from
  the paraxial root t0 = D / (h_a + h_w n_a / n_w): monotone, about 3 iterations
  (``surface_point``). Then S is projected with the pinhole model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pool_setup import PoolSetup


def refract(i: np.ndarray, n: np.ndarray, eta: float | np.ndarray) -> np.ndarray:
    """Vector Snell: unit incident directions i (..., 3), unit normals n (..., 3)
    pointing back towards the incident side (n . i < 0), eta = n1 / n2. Returns the
    unit refracted directions (NaN on total internal reflection)."""
    cos_i = -np.sum(n * i, axis=-1, keepdims=True)
    k = 1.0 - eta * eta * (1.0 - cos_i * cos_i)
    with np.errstate(invalid="ignore"):
        root = np.sqrt(k)
    return eta * i + (eta * cos_i - root) * n


@dataclass(frozen=True)
class Distortion:
    """The OpenCV k1 k2 p1 p2 k3 model on normalized image coordinates."""

    k1: float = 0.0
    k2: float = 0.0
    p1: float = 0.0
    p2: float = 0.0
    k3: float = 0.0

    @property
    def is_zero(self) -> bool:
        return not any((self.k1, self.k2, self.p1, self.p2, self.k3))

    def apply(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Undistorted (x, y) -> distorted (xd, yd)."""
        if self.is_zero:
            return x, y
        r2 = x * x + y * y
        radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3))
        xd = x * radial + 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x)
        yd = y * radial + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y
        return xd, yd

    def jacobian(self, x, y):
        """d(xd, yd)/d(x, y) as the four entries (a, b, c, d) of [[a, b], [c, d]]."""
        r2 = x * x + y * y
        radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3))
        dr = self.k1 + r2 * (2.0 * self.k2 + 3.0 * self.k3 * r2)  # d radial / d r2
        a = radial + 2.0 * x * x * dr + 2.0 * self.p1 * y + 6.0 * self.p2 * x
        b = 2.0 * x * y * dr + 2.0 * self.p1 * x + 2.0 * self.p2 * y
        d = radial + 2.0 * y * y * dr + 6.0 * self.p1 * y + 2.0 * self.p2 * x
        return a, b, b, d

    def remove(self, xd: np.ndarray, yd: np.ndarray, iterations: int = 30,
               tol: float = 1e-15) -> tuple[np.ndarray, np.ndarray]:
        """Distorted -> undistorted by Newton's method (to machine precision)."""
        xd = np.asarray(xd, dtype=float)
        yd = np.asarray(yd, dtype=float)
        if self.is_zero:
            return xd.copy(), yd.copy()
        if xd.size <= _FEW and xd.shape == yd.shape:  # a detection's corners
            few = self._remove_few(xd.ravel().tolist(), yd.ravel().tolist(), iterations, tol)
            if few is not None:
                return (np.array(few[0]).reshape(xd.shape), np.array(few[1]).reshape(xd.shape))
        # A fixed-point start, then Newton.
        x, y = xd.copy(), yd.copy()
        for _ in range(3):
            fx, fy = self.apply(x, y)
            x, y = x - (fx - xd), y - (fy - yd)
        for _ in range(iterations):
            fx, fy = self.apply(x, y)
            ex, ey = fx - xd, fy - yd
            a, b, c, d = self.jacobian(x, y)
            det = a * d - b * c
            dx = (d * ex - b * ey) / det
            dy = (a * ey - c * ex) / det
            x, y = x - dx, y - dy
            if np.all(np.abs(dx) + np.abs(dy) <= tol * (1.0 + np.abs(x) + np.abs(y))):
                break
        return x, y

    def _remove_few(self, xd: list[float], yd: list[float], iterations: int, tol: float):
        """``remove`` of a few points in Python floats: the same operations in the same
        order (and as many iterations: until every point has converged), so the same
        bits (``test_undistorting_a_few_points_is_the_vectorised_newton``), at a
        fraction of NumPy's per-call cost on a handful of values. None when a Jacobian
        is singular (NumPy's path then gives its inf / NaN)."""
        apply, jacobian = self.apply, self.jacobian  # plain arithmetic: floats work
        pts = list(zip(xd, yd))
        xy = list(pts)
        for _ in range(3):
            nxt = []
            for (x, y), (u, v) in zip(xy, pts):
                fx, fy = apply(x, y)
                nxt.append((x - (fx - u), y - (fy - v)))
            xy = nxt
        for _ in range(iterations):
            nxt, done = [], True
            for (x, y), (u, v) in zip(xy, pts):
                fx, fy = apply(x, y)
                ex, ey = fx - u, fy - v
                a, b, c, d = jacobian(x, y)
                det = a * d - b * c
                if det == 0.0 or det != det:
                    return None
                dx = (d * ex - b * ey) / det
                dy = (a * ey - c * ex) / det
                x, y = x - dx, y - dy
                nxt.append((x, y))
                if not abs(dx) + abs(dy) <= tol * (1.0 + abs(x) + abs(y)):
                    done = False
            xy = nxt
            if done:
                break
        return [x for x, _ in xy], [y for _, y in xy]


_FEW = 32  # points undistorted in Python floats (Distortion._remove_few)


class RefractiveCamera:
    """Projection and back-projection of a pool setup's camera through the water plane."""

    def __init__(self, setup: PoolSetup) -> None:
        self.setup = setup
        self.fx, self.fy, self.cx, self.cy = setup.K
        self.distortion = Distortion(*setup.dist)
        self.R_wc = setup.R_wc
        self.C = setup.camera_center
        self.water_z = float(setup.water_z)
        self.n_air = float(setup.n_air)
        self.n_water = float(setup.n_water)
        self.h_air = self.water_z - self.C[2]  # > 0

    # -- pixels <-> normalized -------------------------------------------------

    def normalized(self, px: np.ndarray) -> np.ndarray:
        """Pixels (..., 2) -> undistorted normalized coordinates (..., 2)."""
        px = np.asarray(px, dtype=float)
        xd = (px[..., 0] - self.cx) / self.fx
        yd = (px[..., 1] - self.cy) / self.fy
        x, y = self.distortion.remove(xd, yd)
        return np.stack([x, y], axis=-1)

    def pixels(self, xn: np.ndarray) -> np.ndarray:
        """Undistorted normalized coordinates (..., 2) -> pixels (..., 2)."""
        xn = np.asarray(xn, dtype=float)
        xd, yd = self.distortion.apply(xn[..., 0], xn[..., 1])
        return np.stack([self.fx * xd + self.cx, self.fy * yd + self.cy], axis=-1)

    def rays(self, xn: np.ndarray) -> np.ndarray:
        """Normalized coordinates (..., 2) -> unit ray directions in the world (..., 3)."""
        xn = np.asarray(xn, dtype=float)
        d = (xn[..., 0, None] * self.R_wc[:, 0] + xn[..., 1, None] * self.R_wc[:, 1]
             + self.R_wc[:, 2])
        return d / np.linalg.norm(d, axis=-1, keepdims=True)

    # -- back-projection -------------------------------------------------------

    def surface_hits(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Air rays d (..., 3) from C -> (points on the water plane, refracted unit
        directions in the water). NaN where a ray does not go down to the water."""
        d = np.asarray(d, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(d[..., 2] > 0, self.h_air / d[..., 2], np.nan)
        S = self.C + s[..., None] * d
        S[..., 2] = self.water_z
        eta = self.n_air / self.n_water
        # Flat surface, normal (0, 0, -1) (up, towards the air): closed form of refract().
        t = np.empty_like(d)
        t[..., 0] = eta * d[..., 0]
        t[..., 1] = eta * d[..., 1]
        t[..., 2] = np.sqrt(1.0 - eta * eta * (1.0 - d[..., 2] ** 2))
        t[np.isnan(s)] = np.nan
        return S, t

    def back_project(self, px: np.ndarray, z: np.ndarray | float) -> np.ndarray:
        """Pixels (..., 2) and target plane heights z (broadcast) -> world points (..., 3)
        where the (refracted) ray meets z. Points above the water use the straight air ray.
        NaN where the ray cannot reach z."""
        d = self.rays(self.normalized(px))
        return self.back_project_rays(d, z)

    def back_project_rays(self, d: np.ndarray, z: np.ndarray | float, hits=None) -> np.ndarray:
        """``back_project`` of air rays d (..., 3); ``hits``: their ``surface_hits(d)``
        when already known (several target heights for the same rays)."""
        z = np.broadcast_to(np.asarray(z, dtype=float), d.shape[:-1])
        S, t = self.surface_hits(d) if hits is None else hits
        below = z >= self.water_z
        if below.all():  # every target under the water (a tag's corners): no air ray
            with np.errstate(divide="ignore", invalid="ignore"):
                P = S + ((z - self.water_z) / t[..., 2])[..., None] * t
            P[~(d[..., 2] > 0)] = np.nan
            return P
        with np.errstate(divide="ignore", invalid="ignore"):
            under = S + ((z - self.water_z) / t[..., 2])[..., None] * t
            s_air = (z - self.C[2]) / d[..., 2]
            over = self.C + s_air[..., None] * d
        below = below[..., None]
        P = np.where(below, under, over)
        bad = ~(d[..., 2] > 0) | (~below[..., 0] & ~(s_air > 0))
        P[bad] = np.nan
        return P

    # -- forward projection ----------------------------------------------------

    def surface_point(self, P: np.ndarray, iterations: int = 30,
                      return_iterations: bool = False):
        """Where the light path from underwater points P (..., 3) to C crosses the water
        plane (..., 3); NaN for points at or above the water (they are seen directly).

        Newton on t = tan(theta_air) = r / h_a::

            g(t) = h_a t + h_w eta t / sqrt(1 + (1 - eta^2) t^2) - D = 0,  eta = n_a / n_w

        g is increasing and concave, and the paraxial start t0 = D / (h_a + eta h_w) has
        g(t0) <= 0, so Newton climbs monotonically to the root without overshoot
        (quadratically: about 3 iterations to 1e-12 m)."""
        P = np.asarray(P, dtype=float)
        dxy = P[..., :2] - self.C[:2]
        D = np.hypot(dxy[..., 0], dxy[..., 1])
        ha = self.h_air
        hw = P[..., 2] - self.water_z
        under = hw > 0
        hw = np.where(under, hw, 0.0)
        eta = self.n_air / self.n_water
        c = 1.0 - eta * eta
        t = D / (ha + eta * hw)
        its = 0
        for its in range(1, iterations + 1):
            w = 1.0 / np.sqrt(1.0 + c * t * t)
            g = ha * t + hw * eta * t * w - D
            dg = ha + hw * eta * w * w * w
            step = g / dg
            t = t - step
            if np.all(np.abs(step) <= 1e-14 * (1.0 + t)):
                break
        r = ha * t
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(D[..., None] > 0, dxy / np.where(D > 0, D, 1.0)[..., None], 0.0)
        S = np.empty(P.shape)
        S[..., :2] = self.C[:2] + r[..., None] * u
        S[..., 2] = self.water_z
        S[~under] = np.nan
        return (S, its) if return_iterations else S

    def project(self, P: np.ndarray) -> np.ndarray:
        """World points (..., 3) -> pixels (..., 2) through the water plane (points above
        the water: straight). NaN behind the camera."""
        P = np.asarray(P, dtype=float)
        S = self.surface_point(P)
        Q = np.where(np.isnan(S), P, S)  # the point the camera sees along a straight ray
        return self.project_air(Q)

    def project_air(self, Q: np.ndarray) -> np.ndarray:
        """Pinhole projection of points Q (..., 3) seen along straight rays (no water)."""
        Xc = (np.asarray(Q, dtype=float) - self.C) @ self.R_wc  # R_wc^T (Q - C), row-wise
        with np.errstate(divide="ignore", invalid="ignore"):
            zc = np.where(Xc[..., 2] > 0, Xc[..., 2], np.nan)
            xn = np.stack([Xc[..., 0] / zc, Xc[..., 1] / zc], axis=-1)
        return self.pixels(xn)
