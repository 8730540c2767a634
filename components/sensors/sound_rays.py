"""Acoustic ray paths and travel times (docs/sensors.md (acoustic-paths)).

Two models of the sound speed c along a path:

**Straight path through a measured profile** (altimeter, LBL). The travel time of a
straight segment from depth z0 to z1 of length r is t = r / c_h, with the harmonic
mean of the profile over depth

    c_h = (z1 - z0) / ∫_z0^z1 dz / c(z)          (c_h = c(z0) when z1 = z0)

(along a straight line ds = dz / sin θ, so the harmonic mean over the path equals the
one over depth). The integral is a 16-point Gauss–Legendre rule over [z0, z1].

**Constant-gradient profile, circular arcs** (multibeam). With c(z) = c_ref + g (z - z_ref)
Snell's invariant cos θ / c = a is constant along a ray (θ the depression angle from the
horizontal, positive down), so dθ/ds = -a g: the ray is a circular arc of curvature
κ = a g = g cos θ0 / c0 in the vertical plane of its launch direction (radius
1/|κ|; rays bend towards slower water). With θ(s) = θ0 - κ s, θm = (θ0 + θ)/2:

    X(s) = 2 cos θm sin(κ s / 2) / κ           horizontal distance
    Z(s) = 2 sin θm sin(κ s / 2) / κ           depth increase
    t(s) = (1/g) [atanh(sin θ0) - atanh(sin θ)]

evaluated in the forms that stay exact as g -> 0 and for vertical rays:
sin(κ s/2)/κ = (s/2) sinc(κ s / 2π), and, with L(x) = log1p(x)/x,

    θ0 >= 0:  t = (Z/c0) L(g Z/c0) + (y/g) L(y),    y = (sin θ0 - sin θ)/(1 + sin θ)
    θ0 <  0:  t = -(Z/c0) L(g Z/c0) + (y'/g) L(y'),  y' = (sin θ0 - sin θ)/(1 - sin θ0)

where y/g and y'/g are written without dividing by g (see ``arc_time``).
"""

from __future__ import annotations

import numpy as np

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)


def harmonic_mean_speed(sound_speed, z0, z1) -> np.ndarray:
    """Harmonic-mean sound speed between depths z0 and z1 (arrays, m), m/s.

    ``sound_speed(z)`` returns c at depths z (vectorised). c_h = c(z0) where z1 = z0."""
    z0 = np.asarray(z0, dtype=float)
    z1 = np.asarray(z1, dtype=float)
    z0, z1 = np.broadcast_arrays(z0, z1)
    half = 0.5 * (z1 - z0)
    mid = 0.5 * (z1 + z0)
    nodes = mid[..., None] + half[..., None] * _GL_X  # (..., 16)
    c = np.asarray(sound_speed(nodes.ravel()), dtype=float).reshape(nodes.shape)
    mean_slowness = 0.5 * np.sum(_GL_W / c, axis=-1)  # (1/(z1-z0)) ∫ dz/c
    at_z0 = np.asarray(sound_speed(z0.ravel()), dtype=float).reshape(z0.shape)
    return np.where(half == 0, at_z0, 1.0 / mean_slowness)


def _L(x: np.ndarray) -> np.ndarray:
    """log1p(x)/x, 1 at x = 0 (relative accuracy kept for small x)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 1e-8
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(small, 1.0 - 0.5 * x, np.log1p(x) / np.where(small, 1.0, x))


def _half_sin_over_kappa(kappa: np.ndarray, s: np.ndarray) -> np.ndarray:
    """sin(κ s / 2) / κ, = s/2 at κ = 0."""
    return 0.5 * s * np.sinc(kappa * s / (2 * np.pi))


def launch_geometry(direction_ned) -> tuple[np.ndarray, np.ndarray]:
    """(horizontal unit vector (N, 3), depression angle θ0 (N,), rad) of unit directions."""
    d = np.atleast_2d(np.asarray(direction_ned, dtype=float))
    d = d / np.linalg.norm(d, axis=1, keepdims=True)
    hn = np.hypot(d[:, 0], d[:, 1])
    h = np.zeros_like(d)
    flat = hn > 1e-15
    h[flat, 0] = d[flat, 0] / hn[flat]
    h[flat, 1] = d[flat, 1] / hn[flat]
    h[~flat, 0] = 1.0  # vertical ray: any horizontal axis (X stays 0)
    theta0 = np.arctan2(d[:, 2], hn)
    return h, theta0


def arc_curvature(theta0, c0, gradient) -> np.ndarray:
    """κ = g cos θ0 / c0, 1/m (positive: the ray turns upwards)."""
    return gradient * np.cos(theta0) / c0


def arc_offsets(theta0, kappa, s) -> tuple[np.ndarray, np.ndarray]:
    """(X, Z): horizontal distance and depth increase after arc length s, m."""
    theta0, kappa, s = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (theta0, kappa, s)))
    theta_m = theta0 - 0.5 * kappa * s
    q = 2.0 * _half_sin_over_kappa(kappa, s)
    return np.cos(theta_m) * q, np.sin(theta_m) * q


def arc_time(theta0, c0, gradient, s) -> np.ndarray:
    """One-way travel time along the arc after arc length s, s (the module's formulas)."""
    theta0, c0, g, s = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (theta0, c0, gradient, s)))
    kappa = g * np.cos(theta0) / c0
    theta = theta0 - kappa * s
    theta_m = 0.5 * (theta0 + theta)
    X, Z = arc_offsets(theta0, kappa, s)
    depth_term = (Z / c0) * _L(g * Z / c0)  # ln(c/c0)/g
    # (sin θ0 - sin θ)/g = 2 cos θm sin(κs/2)/g = cos θm cos θ0 s sinc(κs/2π) / c0
    dsin_over_g = np.cos(theta_m) * np.cos(theta0) * s * np.sinc(kappa * s / (2 * np.pi)) / c0
    down = theta0 >= 0
    denom = np.where(down, 1.0 + np.sin(theta), 1.0 - np.sin(theta0))
    y_over_g = dsin_over_g / denom
    y = g * y_over_g
    return np.where(down, depth_term, -depth_term) + y_over_g * _L(y)


def arc_points(origin_ned, horizontal, theta0, kappa, s) -> np.ndarray:
    """Points o + X h + Z e_down after arc lengths s: origin (N, 3), horizontal (N, 3),
    theta0 (N,), kappa (N,), s (N, M) -> (N, M, 3)."""
    X, Z = arc_offsets(theta0[:, None], kappa[:, None], s)
    p = origin_ned[:, None, :] + X[..., None] * horizontal[:, None, :]
    p[..., 2] += Z
    return p


def arc_length_to_depth(theta0, kappa, dz) -> np.ndarray:
    """Arc length at which a downgoing ray (θ0 > 0) has first descended dz (> 0), m;
    nan if it turns before reaching that depth.

    cos θ = cos θ0 + κ dz (from Z above) and s = Δ/κ with Δ = θ0 - θ; written as
    s = dz [sin θ0 + cos θ0 (cos θ + cos θ0)/(sin θ0 + sin θ)] · Δ/sin Δ, which has
    no cancellation as κ -> 0 (then s = dz / sin θ0)."""
    theta0, kappa, dz = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (theta0, kappa, dz)))
    cos_t = np.cos(theta0) + kappa * dz
    turned = np.abs(cos_t) > 1.0
    sin_t = np.sqrt(np.clip(1.0 - cos_t ** 2, 0.0, None))
    c0, s0 = np.cos(theta0), np.sin(theta0)
    bracket = s0 + c0 * (cos_t + c0) / (s0 + sin_t)
    sin_d = np.clip(kappa * dz * bracket, -1.0, 1.0)
    d = np.arcsin(sin_d)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.abs(sin_d) < 1e-12, 1.0, d / np.where(sin_d == 0, 1.0, sin_d))
    return np.where(turned, np.nan, dz * bracket * ratio)
