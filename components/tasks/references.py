"""Guidance: the references of seed 001's task contracts, as pure functions of time.

T1 (station keeping) holds a sequence of fixed 4-DOF poses; T2 (trajectory
tracking) follows a time-indexed 3-D reference: a straight line, a broken line, an
ellipse or a lemniscate. Every reference returns the position p(τ), velocity ṗ(τ) and
acceleration p̈(τ) in NED (m, m/s, m/s²) *analytically* — controllers use ṗ and p̈ as
feed-forward, so they must be the true derivatives, not differences.

Conventions: NED world (x north, y east, z down, metres), τ = time since the
reference started (s). Before τ = 0 a reference holds p(0); after its end it holds
its last point with zero velocity. Yaw is not part of a T2 reference (seed 001: the
task tracks translation; yaw, roll and pitch are stabilised axes), so T2 holds a
constant yaw ψ_ref.

Smooth starts: open paths (lines) move each segment with the quintic time scaling
s(u) = 10u³ − 15u⁴ + 6u⁵ (zero velocity and acceleration at both ends); closed
curves (ellipse, lemniscate) advance their phase θ(τ) with a linear velocity ramp
over ``ramp_s`` so the reference velocity starts at zero and never jumps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

Vec = np.ndarray


@dataclass(frozen=True)
class RefPoint:
    """One sample of a reference: position, velocity, acceleration (NED, SI)."""

    p: Vec
    v: Vec
    a: Vec


class Reference(Protocol):
    """A time-indexed 3-D reference; ``duration_s`` is where it ends."""

    duration_s: float

    def at(self, tau: float) -> RefPoint: ...


# ------------------------------------------------------------------ time scalings


def quintic(u: float) -> tuple[float, float, float]:
    """s(u) = 10u³ − 15u⁴ + 6u⁵ on u ∈ [0, 1] and its first two derivatives (clamped)."""
    if u <= 0.0:
        return 0.0, 0.0, 0.0
    if u >= 1.0:
        return 1.0, 0.0, 0.0
    s = u**3 * (10 - 15 * u + 6 * u * u)
    ds = 30 * u * u * (1 - u) ** 2
    dds = 60 * u * (1 - u) * (1 - 2 * u)
    return s, ds, dds


def ramped_phase(tau: float, omega: float, ramp_s: float) -> tuple[float, float, float]:
    """Phase θ(τ), θ̇, θ̈ of a rate that ramps linearly from 0 to ω over ``ramp_s``.

    θ = ω τ² / (2 T_r) for τ < T_r, then ω (τ − T_r / 2).
    """
    if tau <= 0.0:
        return 0.0, 0.0, 0.0
    if ramp_s > 0.0 and tau < ramp_s:
        return omega * tau * tau / (2 * ramp_s), omega * tau / ramp_s, omega / ramp_s
    return omega * (tau - ramp_s / 2), omega, 0.0


# ------------------------------------------------------------------ open paths


@dataclass(frozen=True)
class Polyline:
    """Waypoints visited in turn, each segment at a quintic time scaling.

    ``speed_mps`` is the *mean* speed along a segment (the peak is 1.875× it); the
    vehicle comes to rest at every corner, as a broken-line trial in a pool does.
    A straight line is the two-point case.
    """

    waypoints: tuple[tuple[float, float, float], ...]
    speed_mps: float

    def __post_init__(self) -> None:
        if len(self.waypoints) < 2:
            raise ValueError("a polyline needs at least two waypoints")
        if not self.speed_mps > 0:
            raise ValueError("speed_mps must be > 0")
        pts = np.asarray(self.waypoints, dtype=float)
        lengths = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        if np.any(lengths <= 0):
            raise ValueError("two consecutive waypoints coincide")
        object.__setattr__(self, "_pts", pts)
        durations = lengths / self.speed_mps
        object.__setattr__(self, "_durations", durations)
        object.__setattr__(self, "_starts", np.concatenate([[0.0], np.cumsum(durations)]))

    @property
    def duration_s(self) -> float:
        return float(self._starts[-1])

    def at(self, tau: float) -> RefPoint:
        pts, starts, durs = self._pts, self._starts, self._durations
        if tau <= 0.0:
            return RefPoint(pts[0].copy(), np.zeros(3), np.zeros(3))
        if tau >= starts[-1]:
            return RefPoint(pts[-1].copy(), np.zeros(3), np.zeros(3))
        k = int(np.searchsorted(starts, tau, side="right") - 1)
        T = durs[k]
        s, ds, dds = quintic((tau - starts[k]) / T)
        d = pts[k + 1] - pts[k]
        return RefPoint(pts[k] + s * d, (ds / T) * d, (dds / (T * T)) * d)


# ------------------------------------------------------------------ closed curves


@dataclass(frozen=True)
class ClosedCurve:
    """A closed curve p(θ) = c + f(θ), run ``laps`` times at θ̇ = 2π/period after a
    smooth ramp (``ramped_phase``); subclasses give the shape f(θ), f'(θ), f''(θ).

    The common fields: the start point c (NED, m), the shape's sizes a (north), b
    (east), the heave amplitude h (m), the period (s), the laps and the ramp (s).
    """

    center: tuple[float, float, float]
    a_m: float
    b_m: float
    heave_m: float
    period_s: float
    laps: float = 1.0
    ramp_s: float = 5.0

    @property
    def duration_s(self) -> float:
        return self.laps * self.period_s + self.ramp_s / 2

    def _shape(self, th: float) -> tuple[Vec, Vec, Vec]:
        raise NotImplementedError

    def at(self, tau: float) -> RefPoint:
        """Chain rule: ṗ = f'(θ) θ̇, p̈ = f''(θ) θ̇² + f'(θ) θ̈."""
        omega = 2 * math.pi / self.period_s
        tau = min(tau, self.duration_s)
        th, dth, ddth = ramped_phase(tau, omega, self.ramp_s)
        if tau >= self.duration_s:
            dth = ddth = 0.0
        f, df, ddf = self._shape(th)
        c = np.asarray(self.center, dtype=float)
        return RefPoint(c + f, df * dth, ddf * dth * dth + df * ddth)


@dataclass(frozen=True)
class Ellipse(ClosedCurve):
    """p(θ) = c + (a cos θ − a, b sin θ, h sin θ)  — starts at c, θ from 0 to 2π·laps.

    Semi-axes a (north), b (east), m; a heave oscillation of amplitude h (m) makes it
    a 3-D reference. The curve starts at its own point c (θ = 0 maps to c).
    """

    def _shape(self, th: float) -> tuple[Vec, Vec, Vec]:
        a, b, h = self.a_m, self.b_m, self.heave_m
        c, s = math.cos(th), math.sin(th)
        f = np.array([a * c - a, b * s, h * s])
        df = np.array([-a * s, b * c, h * c])
        ddf = np.array([-a * c, -b * s, -h * s])
        return f, df, ddf


@dataclass(frozen=True)
class Lemniscate(ClosedCurve):
    """Lemniscate of Gerono: p(θ) = c + (a sin θ, (b/2) sin 2θ, h sin θ).

    A figure of eight a (north) by b (east) metres wide, crossing itself at c (where it
    starts); heave h (m) makes it 3-D.
    """

    def _shape(self, th: float) -> tuple[Vec, Vec, Vec]:
        a, b, h = self.a_m, self.b_m, self.heave_m
        s1, c1 = math.sin(th), math.cos(th)
        s2, c2 = math.sin(2 * th), math.cos(2 * th)
        f = np.array([a * s1, 0.5 * b * s2, h * s1])
        df = np.array([a * c1, b * c2, h * c1])
        ddf = np.array([-a * s1, -2 * b * s2, -h * s1])
        return f, df, ddf


# ------------------------------------------------------------------ the task sets

T2_TRAJECTORIES = ("straight", "broken", "ellipse", "lemniscate")
"""The four T2 references of seed 001."""


def t2_reference(kind: str, center: tuple[float, float, float], size_m: float,
                 speed_mps: float, heave_m: float) -> Reference:
    """The T2 reference ``kind`` around ``center`` (NED, m) in a pool.

    ``size_m`` is the half-extent of the path along north (the east extent is 0.6 of
    it), ``speed_mps`` the mean speed along it, ``heave_m`` the depth excursion.
    """
    cx, cy, cz = center
    L, W, H = size_m, 0.6 * size_m, heave_m
    if kind == "straight":
        return Polyline(((cx - L, cy - W, cz - H), (cx + L, cy + W, cz + H)), speed_mps)
    if kind == "broken":
        return Polyline(((cx - L, cy - W, cz - H), (cx - L / 3, cy + W, cz),
                         (cx + L / 3, cy - W, cz + H), (cx + L, cy + W, cz)), speed_mps)
    if kind == "ellipse":
        # Perimeter (Ramanujan) / speed gives the period for the requested mean speed.
        a, b = L, W
        h = (a - b) ** 2 / (a + b) ** 2
        perimeter = math.pi * (a + b) * (1 + 3 * h / (10 + math.sqrt(4 - 3 * h)))
        # Start at (cx + L, cy, cz): the curve's θ = 0 point is its centre + (a, 0).
        return Ellipse((cx + L, cy, cz), a, b, H, perimeter / speed_mps)
    if kind == "lemniscate":
        length = _curve_length(lambda th: np.array([L * math.cos(th), W * math.cos(2 * th)]))
        return Lemniscate((cx, cy, cz), L, W, H, length / speed_mps)
    raise ValueError(f"unknown trajectory {kind!r}; choose one of {', '.join(T2_TRAJECTORIES)}")


def _curve_length(dshape, n: int = 4096) -> float:
    """∫₀^{2π} |f'(θ)| dθ by the midpoint rule (plane part only)."""
    th = (np.arange(n) + 0.5) * (2 * math.pi / n)
    return float(sum(np.linalg.norm(dshape(t)) for t in th) * (2 * math.pi / n))


__all__ = [
    "Ellipse", "Lemniscate", "Polyline", "RefPoint", "Reference", "T2_TRAJECTORIES",
    "quintic", "ramped_phase", "t2_reference",
]
