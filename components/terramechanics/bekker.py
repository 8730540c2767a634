"""Bekker–Wong terramechanics: the pure maths (no messages, no time).

SI units everywhere, Bekker's symbols in the code (docs/terramechanics.md):

==========  ===============================================  ===============
symbol      meaning                                          unit
==========  ===============================================  ===============
b           width of the track plate or wheel                m
l           contact length of a track                        m
r           wheel radius                                     m
z           sinkage (depth of the plate below the surface)   m
p, σ        normal pressure on the plate                     Pa
k_c         cohesive modulus of deformation                  N/m^(n+1)
k_φ         frictional modulus of deformation                N/m^(n+2)
n           sinkage exponent                                 –
c           cohesion                                         Pa
φ           angle of internal friction                       rad
K, K_y      shear deformation modulus (longitudinal, lat.)   m
i           slip ratio (> 0 driving, < 0 braking)            –
j           shear displacement                               m
τ           shear stress                                     Pa
W           normal load                                      N
==========  ===============================================  ===============

Pressure–sinkage (Bekker 1969)::

    p(z) = (k_c / b + k_φ) · z^n

Mohr–Coulomb shear strength and Janosi–Hanamoto shear development::

    τ_max = c + p · tan φ
    τ(j)  = τ_max · (1 − exp(−|j| / K)) · sign(j)

Along a track, a point at distance s behind the front of the contact has
travelled under the track for s / V (V the belt speed), so it is sheared by
``j(s) = i · s``. Integrated over the contact (width b), the gross traction is
``T = b ∫ τ(s) ds``; Bekker's compaction resistance (the work of making a rut of
depth z per metre travelled) is ``R_c = b (k_c/b + k_φ) z^(n+1) / (n+1)``, and the
drawbar pull is ``DP = T − R_c``. For a uniform pressure this has the closed form
``T = (A c + W tan φ) [1 − K/(i l) (1 − exp(−i l / K))]`` (Wong 2008, eq. 2.56).

Wheels use the Wong–Reece stress distribution along the contact arc (θ from 0 at
the bottom to the entry angle θ₁ = acos(1 − z/r)), with the angle of the maximum
normal stress ``θ_m = (a₀ + a₁ i) θ₁`` and ``j(θ) = r [(θ₁ − θ) − (1 − i)(sin θ₁ − sin θ)]``.

Everything here works on numpy arrays so the component evaluates all its tracks
and wheels in one pass. Integrals are Gauss–Legendre quadratures over the part of
the contact that is actually in the soil (its ends are found in closed form, so
the integrand is smooth on the interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..sdk.errors import ParameterError

DEFAULT_NODES = 16
"""Gauss–Legendre nodes per contact (per track, or per half of a wheel's arc)."""


# ------------------------------------------------------------------ the soil


@dataclass(frozen=True)
class Soil:
    """Bekker–Wong parameters of one soil (SI; ``phi`` in radians)."""

    name: str
    c: float
    """Cohesion c, Pa (>= 0)."""
    phi: float
    """Angle of internal friction φ, rad (0 <= φ < π/2)."""
    k_c: float
    """Cohesive modulus k_c, N/m^(n+1) (>= 0)."""
    k_phi: float
    """Frictional modulus k_φ, N/m^(n+2) (>= 0; k_c and k_φ not both 0)."""
    n: float
    """Sinkage exponent n (0 < n <= 2; published values lie in 0.1–1.6)."""
    K: float
    """Longitudinal shear deformation modulus K, m (> 0)."""
    K_y: float = 0.0
    """Lateral shear deformation modulus K_y, m (> 0; 0 here means: the same as K)."""
    source: str = ""
    """Where the values come from (one line, for the docs and ``describe``)."""

    def __post_init__(self) -> None:
        if self.K_y == 0.0:
            object.__setattr__(self, "K_y", self.K)
        self.check()

    def check(self) -> None:
        """Refuse non-physical values, naming the parameter (ParameterError)."""
        rules = (
            ("c", self.c, self.c >= 0, ">= 0 Pa (cohesion)"),
            ("phi", self.phi, 0 <= self.phi < math.pi / 2,
             "in [0, 90) degrees (angle of internal friction)"),
            ("k_c", self.k_c, self.k_c >= 0, ">= 0 N/m^(n+1) (cohesive modulus)"),
            ("k_phi", self.k_phi, self.k_phi >= 0, ">= 0 N/m^(n+2) (frictional modulus)"),
            ("n", self.n, 0 < self.n <= 2, "in (0, 2] (sinkage exponent)"),
            ("K", self.K, self.K > 0, "> 0 m (shear deformation modulus)"),
            ("K_y", self.K_y, self.K_y > 0, "> 0 m (lateral shear deformation modulus)"),
        )
        for name, value, ok, want in rules:
            if not (math.isfinite(value) and ok):
                raise ParameterError(
                    f"soil '{self.name}': {name} = {value!r} is not allowed; it must be {want}",
                    fix=f"give {name} a value {want.split(' (')[0]}",
                )
        if self.k_c == 0 and self.k_phi == 0:
            raise ParameterError(
                f"soil '{self.name}': k_c and k_phi are both 0, so the soil carries no load",
                fix="give k_c or k_phi a positive value",
            )

    def k_eq(self, b: float | np.ndarray) -> float | np.ndarray:
        """Equivalent modulus k_c / b + k_φ, N/m^(n+2), for a plate of width b."""
        return self.k_c / b + self.k_phi


def check_width(name: str, b: float) -> None:
    """Refuse a plate width (or any length) that is not finite and > 0."""
    if not (math.isfinite(b) and b > 0):
        raise ParameterError(f"{name} = {b!r} is not allowed; it must be > 0 m",
                             fix=f"give {name} a positive value in metres")


# ---------------------------------------------------------- closed forms


def pressure(soil: Soil, b, z):
    """Bekker pressure p = (k_c/b + k_φ) z^n, Pa; 0 where z <= 0 (no contact)."""
    z = np.maximum(np.asarray(z, dtype=float), 0.0)
    return soil.k_eq(b) * z ** soil.n


def shear_strength(soil: Soil, p):
    """Mohr–Coulomb shear strength τ_max = c + p tan φ, Pa."""
    return soil.c + np.asarray(p, dtype=float) * math.tan(soil.phi)


def janosi(j, K):
    """Janosi–Hanamoto development 1 − exp(−|j|/K), signed like j (odd, C¹)."""
    j = np.asarray(j, dtype=float)
    return np.sign(j) * -np.expm1(-np.abs(j) / K)


def static_sinkage_track(soil: Soil, W: float, b: float, l: float) -> float:
    """Sinkage of a flat track plate b × l under a uniform load W (N), m:
    z = (W / (b l (k_c/b + k_φ)))^(1/n)."""
    check_width("b", b)
    check_width("l", l)
    if W <= 0:
        return 0.0
    return (W / (b * l * soil.k_eq(b))) ** (1.0 / soil.n)


def compaction_resistance(soil: Soil, b, z):
    """Bekker's compaction (rolling) resistance of a rut of depth z, N:
    R_c = b (k_c/b + k_φ) z^(n+1) / (n+1)."""
    z = np.maximum(np.asarray(z, dtype=float), 0.0)
    return b * soil.k_eq(b) * z ** (soil.n + 1) / (soil.n + 1)


def traction_track_uniform(soil: Soil, W: float, b: float, l: float, i: float) -> float:
    """Gross traction of a track with uniform pressure W / (b l), N (closed form):
    T = (A c + W tan φ) [1 − K/(i l) (1 − exp(−i l / K))], A = b l; odd in i."""
    A = b * l
    if i == 0:
        return 0.0
    x = abs(i) * l / soil.K
    # 1 - (1 - e^-x)/x, written to stay accurate for small x
    factor = 1.0 - (-math.expm1(-x)) / x
    return math.copysign((A * soil.c + W * math.tan(soil.phi)) * factor, i)


def slip_ratio(v_belt, v_ground, v_floor: float = 1e-2):
    """Slip ratio i = (V − v) / max(|V|, |v|, v_floor).

    V = r ω is the belt (or rim) speed, v the ground speed of the track or wheel
    centre, both m/s. Driving (V > v >= 0): i = 1 − v / V in (0, 1]. Braking
    (v > V >= 0): i = V / v − 1 in [−1, 0). The floor keeps it finite when both
    speeds vanish (a stopped vehicle on stopped tracks has i = 0)."""
    v_belt = np.asarray(v_belt, dtype=float)
    v_ground = np.asarray(v_ground, dtype=float)
    ref = np.maximum(np.maximum(np.abs(v_belt), np.abs(v_ground)), v_floor)
    return (v_belt - v_ground) / ref


# --------------------------------------------------------- quadrature


@lru_cache(maxsize=8)
def _gauss(m: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(m)
    return x, w


def gauss_nodes(a, b, m: int = DEFAULT_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [a, b] (arrays broadcast: shape (..., m))."""
    x, w = _gauss(m)
    a = np.asarray(a, dtype=float)[..., None]
    b = np.asarray(b, dtype=float)[..., None]
    half = 0.5 * (b - a)
    return a + half * (x + 1.0), half * w


def contact_interval(z_front, z_rear, l):
    """Where a straight plate of length l touches the soil: (s_a, s_b), m from its front.

    The sinkage varies linearly, z(s) = z_front + (z_rear − z_front) s / l; the part
    with z > 0 is [s_a, s_b] (s_a = s_b when the plate is out of the soil)."""
    z_front = np.asarray(z_front, dtype=float)
    z_rear = np.asarray(z_rear, dtype=float)
    l = np.asarray(l, dtype=float)
    dz = z_rear - z_front
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.where(dz != 0, -z_front * l / np.where(dz != 0, dz, 1.0), 0.0)  # z(s0) = 0
    s0 = np.clip(s0, 0.0, l)
    front_in, rear_in = z_front > 0, z_rear > 0
    s_a = np.where(front_in, 0.0, np.where(rear_in, s0, l))
    s_b = np.where(rear_in, l, np.where(front_in, s0, l))
    return s_a, s_b


# -------------------------------------------------------------- tracks


@dataclass
class TrackForces:
    """Forces on tracks from the soil, in the track frame (x forward, y right, z down).

    Each field is an array with one value per track."""

    normal_n: np.ndarray
    """Normal load carried by the soil, N (acts along −z of the track: upward)."""
    traction_n: np.ndarray
    """Gross traction T = b ∫ τ_x ds, N (forward when > 0)."""
    compaction_resistance_n: np.ndarray
    """Compaction resistance R_c at the sinkage where the soil enters, N (magnitude;
    it opposes the travel)."""
    lateral_n: np.ndarray
    """Lateral shear force b ∫ τ_y ds, N (along +y when > 0)."""
    sinkage_m: np.ndarray
    """Sinkage at the middle of the track, m (negative: clearance)."""
    rut_depth_m: np.ndarray
    """Deepest sinkage along the contact, m (depth of the rut left behind)."""
    s: np.ndarray = field(repr=False)
    """Node positions from the front of the track, m, shape (tracks, nodes)."""
    weight: np.ndarray = field(repr=False)
    """Quadrature weights of the nodes times b, m², shape (tracks, nodes)."""
    sigma: np.ndarray = field(repr=False)
    """Normal stress at the nodes, Pa."""
    tau_x: np.ndarray = field(repr=False)
    """Longitudinal shear stress at the nodes, Pa."""
    tau_y: np.ndarray = field(repr=False)
    """Lateral shear stress at the nodes, Pa."""

    @property
    def drawbar_pull_n(self) -> np.ndarray:
        """DP = T − R_c, N (for forward travel)."""
        return self.traction_n - self.compaction_resistance_n


def track_contact(
    soil: Soil,
    b,
    l,
    z_front,
    z_rear,
    slip,
    *,
    zdot_front=0.0,
    zdot_rear=0.0,
    lateral_front=0.0,
    lateral_rear=0.0,
    damping: float = 0.0,
    belt_backward=False,
    travel_backward=False,
    nodes: int = DEFAULT_NODES,
) -> TrackForces:
    """Soil stresses and forces on straight tracks (arrays broadcast: one per track).

    - ``z_front``, ``z_rear``: sinkage of the two ends of the contact, m.
    - ``slip``: slip ratio i; a point a distance d behind the start of the contact
      (where the belt lands on the soil: the front, or the rear when
      ``belt_backward``, i.e. the belt runs the vehicle backwards) is sheared by
      j = i d.
    - ``zdot_front``, ``zdot_rear``: penetration rate of the ends, m/s (> 0 sinking);
      with ``damping`` (Pa·s/m) they add ``damping · ż`` to the normal stress.
    - ``lateral_front``, ``lateral_rear``: lateral slip of the ends, v_y / V (the
      lateral speed over the belt speed); a soil element entering at the front and
      now at s has moved sideways j_y = (lateral(s_a) + lateral(s)) / 2 · (s − s_a)
      (exact when the lateral speed varies linearly along the track, as in a yaw).

    The normal stress is σ = (k_c/b + k_φ) z^n + damping · ż, never below 0 (the
    soil does not pull). Shear: τ_x = (c + σ tan φ) · janosi(j, K),
    τ_y = −(c + σ tan φ) · janosi(j_y, K_y).

    The compaction resistance is Bekker's R_c for the sinkage z_e where the soil
    enters under the plate: the front end, or the rear when ``travel_backward``.
    Along an inclined plate the soil is compacted further, from z_e to the rut depth;
    that work is done by the normal stress itself, whose component along the travel
    is σ sin(inclination) (it appears in the normal force of a pitched vehicle, in
    body axes), so it is not counted twice.
    """
    b = np.asarray(b, dtype=float)
    l = np.asarray(l, dtype=float)
    z_front = np.asarray(z_front, dtype=float)
    z_rear = np.asarray(z_rear, dtype=float)
    shape = np.broadcast_shapes(b.shape, l.shape, z_front.shape, z_rear.shape, np.shape(slip))
    b, l, z_front, z_rear = (np.broadcast_to(a, shape) for a in (b, l, z_front, z_rear))
    slip = np.broadcast_to(np.asarray(slip, dtype=float), shape)
    s_a, s_b = contact_interval(z_front, z_rear, l)
    s, w = gauss_nodes(s_a, s_b, nodes)
    frac = s / l[..., None]
    z = z_front[..., None] + (z_rear - z_front)[..., None] * frac
    z = np.maximum(z, 0.0)
    zdot = np.asarray(zdot_front, dtype=float)[..., None] * (1 - frac) + \
        np.asarray(zdot_rear, dtype=float)[..., None] * frac
    k_eq = soil.k_eq(b)[..., None]
    sigma = k_eq * z ** soil.n + damping * zdot
    sigma = np.maximum(sigma, 0.0)
    in_soil = (s_b > s_a)[..., None]
    tau_max = np.where(in_soil, soil.c + sigma * math.tan(soil.phi), 0.0)
    back = np.broadcast_to(np.asarray(belt_backward, dtype=bool), shape)[..., None]
    start = np.where(back, s_b[..., None], s_a[..., None])     # where the belt lands
    run = np.abs(s - start)
    tau_x = tau_max * janosi(slip[..., None] * run, soil.K)
    lat_f = np.asarray(lateral_front, dtype=float)[..., None]
    lat_r = np.asarray(lateral_rear, dtype=float)[..., None]
    lat_at = lat_f * (1 - frac) + lat_r * frac
    lat_entry = lat_f + (lat_r - lat_f) * (start / l[..., None])
    j_y = 0.5 * (lat_entry + lat_at) * run
    tau_y = -tau_max * janosi(j_y, soil.K_y)
    bw = b[..., None] * w
    rut = np.maximum(np.maximum(z_front, z_rear), 0.0)
    z_entry = np.where(np.asarray(travel_backward, dtype=bool), z_rear, z_front)
    return TrackForces(
        normal_n=np.sum(sigma * bw, axis=-1),
        traction_n=np.sum(tau_x * bw, axis=-1),
        compaction_resistance_n=compaction_resistance(soil, b, z_entry),
        lateral_n=np.sum(tau_y * bw, axis=-1),
        sinkage_m=0.5 * (z_front + z_rear),
        rut_depth_m=rut,
        s=s,
        weight=bw,
        sigma=sigma,
        tau_x=tau_x,
        tau_y=tau_y,
    )


def drawbar_pull_track(soil: Soil, W: float, b: float, l: float, i, *,
                       nodes: int = DEFAULT_NODES) -> np.ndarray:
    """Drawbar pull DP(i) = T(i) − R_c of a level track under load W, N.

    The track sits at its static sinkage (uniform pressure W / (b l)); T is the
    Gauss–Legendre integral of the Janosi–Hanamoto shear stress along the contact."""
    z = static_sinkage_track(soil, W, b, l)
    f = track_contact(soil, b, l, np.full(np.shape(i), z), np.full(np.shape(i), z), i,
                      nodes=nodes)
    return f.drawbar_pull_n


# -------------------------------------------------------------- wheels


@dataclass
class WheelForces:
    """Forces on rigid wheels from the soil (Wong–Reece), wheel frame (x forward, z down).

    Each field is an array with one value per wheel. ``normal_n`` and
    ``drawbar_pull_n`` are the vertical load and the net longitudinal force; the
    node arrays give the point forces so a caller can take moments."""

    normal_n: np.ndarray
    """Vertical load carried by the soil, N: r b ∫ (σ cos θ + τ sin θ) dθ."""
    traction_n: np.ndarray
    """Longitudinal shear component r b ∫ τ cos θ dθ, N."""
    compaction_resistance_n: np.ndarray
    """Longitudinal normal-stress component r b ∫ σ sin θ dθ, N (opposes travel)."""
    lateral_n: np.ndarray
    """Lateral shear force r b ∫ τ_y dθ, N."""
    torque_nm: np.ndarray
    """Driving torque the soil resists, r² b ∫ τ dθ, N·m."""
    sinkage_m: np.ndarray
    """Sinkage of the lowest point of the rim, m (negative: clearance)."""
    entry_angle_rad: np.ndarray
    """θ₁ = acos(1 − z / r), rad."""
    theta: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    """Quadrature weights times r b, m²."""
    sigma: np.ndarray = field(repr=False)
    tau_x: np.ndarray = field(repr=False)
    tau_y: np.ndarray = field(repr=False)

    @property
    def drawbar_pull_n(self) -> np.ndarray:
        """DP = traction − compaction resistance, N."""
        return self.traction_n - self.compaction_resistance_n


WONG_REECE_A0 = 0.4
"""a₀ of θ_m = (a₀ + a₁ i) θ₁ (Wong & Reece 1967 give values near 0.4 for sands)."""
WONG_REECE_A1 = 0.15
"""a₁ of θ_m = (a₀ + a₁ i) θ₁ (assumption; 0.1–0.3 is the range usually quoted)."""


def wheel_normal_stress(soil: Soil, b, r, theta, theta_1, theta_m):
    """Wong–Reece normal stress σ(θ), Pa (θ from the bottom, positive towards the front)."""
    theta = np.asarray(theta, dtype=float)
    theta_1 = np.asarray(theta_1, dtype=float)
    theta_m = np.asarray(theta_m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        back = theta_1 - (theta / np.where(theta_m > 0, theta_m, 1.0)) * (theta_1 - theta_m)
    equiv = np.where(theta >= theta_m, theta, back)
    depth = np.maximum(r * (np.cos(equiv) - np.cos(theta_1)), 0.0)
    return soil.k_eq(b) * depth ** soil.n


def wheel_shear_displacement(r, theta, theta_1, i):
    """j(θ) = r [(θ₁ − θ) − (1 − i)(sin θ₁ − sin θ)], m."""
    return r * ((theta_1 - theta) - (1 - i) * (np.sin(theta_1) - np.sin(theta)))


def wheel_contact(
    soil: Soil,
    b,
    r,
    z,
    slip,
    *,
    zdot=0.0,
    lateral=0.0,
    damping: float = 0.0,
    a0: float = WONG_REECE_A0,
    a1: float = WONG_REECE_A1,
    nodes: int = DEFAULT_NODES,
) -> WheelForces:
    """Soil stresses and forces on rigid wheels of width b and radius r at sinkage z.

    The contact arc runs from the bottom (θ = 0) to the entry angle θ₁ (no rear
    contact: the soil does not rebound). Integrals are Gauss–Legendre on [0, θ_m] and
    [θ_m, θ₁] (σ has a kink at θ_m). ``lateral`` is v_y / V: j_y = lateral · r (θ₁ − θ)
    (sideways speed times the time in contact). ``damping`` adds damping · ż (ż the
    penetration rate of the lowest point, m/s) to σ on the arc."""
    b = np.asarray(b, dtype=float)
    r = np.asarray(r, dtype=float)
    z = np.asarray(z, dtype=float)
    shape = np.broadcast_shapes(b.shape, r.shape, z.shape, np.shape(slip))
    b, r, z = (np.broadcast_to(a, shape) for a in (b, r, z))
    i = np.broadcast_to(np.asarray(slip, dtype=float), shape)
    zc = np.clip(z, 0.0, 2 * r)
    theta_1 = np.arccos(1.0 - zc / r)
    theta_m = np.clip(a0 + a1 * i, 0.0, 1.0) * theta_1
    t_lo, w_lo = gauss_nodes(np.zeros(shape), theta_m, nodes)
    t_hi, w_hi = gauss_nodes(theta_m, theta_1, nodes)
    theta = np.concatenate([t_lo, t_hi], axis=-1)
    w = np.concatenate([w_lo, w_hi], axis=-1)
    sigma = wheel_normal_stress(soil, b[..., None], r[..., None], theta,
                                theta_1[..., None], theta_m[..., None])
    sigma = np.maximum(sigma + damping * np.asarray(zdot, dtype=float)[..., None], 0.0)
    in_soil = (theta_1 > 0)[..., None]
    tau_max = np.where(in_soil, soil.c + sigma * math.tan(soil.phi), 0.0)
    j = wheel_shear_displacement(r[..., None], theta, theta_1[..., None], i[..., None])
    tau_x = tau_max * janosi(j, soil.K)
    j_y = np.asarray(lateral, dtype=float)[..., None] * r[..., None] * (theta_1[..., None] - theta)
    tau_y = -tau_max * janosi(j_y, soil.K_y)
    rbw = (r * b)[..., None] * w
    cos, sin = np.cos(theta), np.sin(theta)
    return WheelForces(
        normal_n=np.sum((sigma * cos + tau_x * sin) * rbw, axis=-1),
        traction_n=np.sum(tau_x * cos * rbw, axis=-1),
        compaction_resistance_n=np.sum(sigma * sin * rbw, axis=-1),
        lateral_n=np.sum(tau_y * rbw, axis=-1),
        torque_nm=np.sum(tau_x * rbw, axis=-1) * r,
        sinkage_m=z,
        entry_angle_rad=theta_1,
        theta=theta,
        weight=rbw,
        sigma=sigma,
        tau_x=tau_x,
        tau_y=tau_y,
    )


def static_sinkage_wheel_bekker(soil: Soil, W: float, b: float, D: float) -> float:
    """Bekker's closed-form sinkage of a rigid wheel of diameter D under load W, m:
    z₀ = (3 W / ((3 − n) b (k_c/b + k_φ) √D))^(2 / (2n + 1)).

    It replaces the arc by a parabola and ignores shear, so it is an approximation
    of :func:`wheel_contact` at zero slip (good for shallow sinkage)."""
    check_width("b", b)
    check_width("D", D)
    n = soil.n
    return (3 * W / ((3 - n) * b * soil.k_eq(b) * math.sqrt(D))) ** (2 / (2 * n + 1))
