"""Frames and rotations: the one place moonpool turns attitudes into numbers.

Frames
======

**World: NED.** x north, y east, z down (m); the origin is the rig's (a pool corner,
a survey datum). Gravity is +z: g_world = (0, 0, +g).

**Body: FRD.** x forward (bow), y right (starboard), z down (keel), origin at the
vehicle's reference point (the hydrodynamic model's CO). Body velocities
ν = (u, v, w, p, q, r) are in these axes (Fossen 2011, §2.1).

**Attitude R = R_wb.** A 3×3 rotation matrix *rotates body vectors into the world*::

    v_world = R v_body,        v_body = Rᵀ v_world,        p_world = p_origin + R r_body

so the columns of R are the body axes written in world coordinates (column 0 is
where the bow points). A sensor's mount R_bs (sensor → body) follows the same rule
one level down: v_body = R_bs v_sensor, R_ws = R_wb R_bs.

**Quaternions q = (w, x, y, z)**, scalar first, Hamilton convention
(i² = j² = k² = ijk = −1), unit norm, same meaning as R::

    (0, v_world) = q ⊗ (0, v_body) ⊗ q*,      R(q) = rot_from_quat(q)

q and −q are the same attitude; :func:`quat_from_rot` returns the one with w ≥ 0.
Composition is the Hamilton product in the same order as matrices:
R(p ⊗ q) = R(p) R(q). A zero quaternion (an unset protobuf field) is read as the
identity here.

**Euler angles Θ = (φ, θ, ψ)** = (roll, pitch, yaw), zyx convention (Fossen eq. 2.18)::

    R(Θ) = Rz(ψ) Ry(θ) Rx(φ)

first yaw ψ about the world's z (down), then pitch θ about the new y, then roll φ about
the newest x. Signs (right-hand rule about axes pointing down / starboard / forward):
ψ > 0 turns the bow from north towards east, θ > 0 lifts the bow, φ > 0 lowers the
starboard side. Ranges: φ, ψ ∈ (−π, π], θ ∈ [−π/2, π/2].

**Gimbal lock.** At θ = ±π/2 the first and last rotations are about the same axis:
R depends only on ψ − φ (θ = +π/2) or ψ + φ (θ = −π/2), so :func:`euler_from_rot` can
return any split of it (in practice whatever the round-off in R[2, 1], R[2, 2]
leaves). Near it the Euler kinematics Θ̇ = T(Θ) ν₂ blow up (1/cos θ). A hovering ROV
never gets there; anything that may (a crawler on a wall, an arm) should carry a
quaternion or R and convert to Euler angles only for display.

Arithmetic is part of the contract
==================================

Recorded message streams are hashed (a rig and a seed give one digest), so the
*order of the floating-point operations* below is part of what these functions
promise: rewriting ``a * b * c`` as ``a * (b * c)`` changes last bits, hence digests.
The expressions are those the sensors, the localization and the controllers computed
before this module existed (the controllers' R(Θ) associated the triple products of
R₀₂ and R₁₁ the other way; for the attitudes they build from Euler angles, Rz(ψ),
and the localization's Ry(θ) Rx(φ), both give the same bits); do not "simplify" them.

Every function is vectorised over leading axes with NumPy. Those that controllers
and per-message code call with single values have a **scalar path** (plain Python
floats and :mod:`math`: 3–60× faster than NumPy on one value, ``benchmarks/frames.py``)
that performs the same operations in the same order, so both paths give the same
bits: +, −, ×, ÷ and √ are correctly rounded in IEEE 754 whichever library does them,
and NumPy's ``cos``/``sin``/``arctan2``/``arcsin`` call the same libm as :mod:`math` on
builds without SVML (AVX-512 builds may differ by an ulp; ``tests/unit/test_frames.py``
holds the two paths to one ulp everywhere and to equality where the libm is shared).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "cross", "euler_from_rot", "quat_conjugate", "quat_from_euler", "quat_from_rot",
    "quat_multiply", "rot_from_euler", "rot_from_quat", "rot_rows", "rot_x", "rot_y", "rot_z",
    "quat_from_rotvec", "rot_from_rotvec", "rotate", "skew", "tilt_from_specific_force",
    "wrap_angle",
]

_TWO_PI = 2.0 * math.pi  # exactly twice the double π


def _is_scalar(x: Any) -> bool:
    # float covers numpy.float64 (a subclass of float); ints are exact in both paths.
    return isinstance(x, (float, int))


# ------------------------------------------------------------------ vectors


def cross(a: Any, b: Any) -> np.ndarray:
    """a × b over the last axis, broadcasting (3-vectors or stacks of them).

    The same products and differences, in the same order, as ``np.cross`` (so the
    same bits), without its axis handling: ~1–2 µs instead of ~30 for one pair."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def skew(a: Any) -> np.ndarray:
    """S(a), the skew-symmetric matrix with S(a) b = a × b (Fossen eq. 2.10)::

        S(a) = [[ 0,  −a₃,  a₂],
                [ a₃,  0,  −a₁],
                [−a₂,  a₁,  0 ]]

    a (..., 3) → (..., 3, 3). Exact (only signs change), so S(a) b equals
    :func:`cross` (a, b) to round-off of the matrix product."""
    a = np.asarray(a, dtype=float)
    if a.shape == (3,):
        return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    S = np.zeros(a.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -a[..., 2], a[..., 1]
    S[..., 1, 0], S[..., 1, 2] = a[..., 2], -a[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -a[..., 1], a[..., 0]
    return S


def wrap_angle(a: Any) -> Any:
    """a wrapped into (−π, π] [rad], exactly: the representable a − 2πk in that interval.

    Scalars: ``math.remainder(a, 2π)`` (IEEE remainder, exact) with −π mapped to π.
    Arrays: ``np.fmod`` (exact) shifted by ±2π where it falls outside (exact by
    Sterbenz's lemma), which is the same number as the scalar path, bit for bit."""
    if _is_scalar(a):
        w = math.remainder(a, _TWO_PI)  # [−π, π]
        return math.pi if w == -math.pi else w
    a = np.asarray(a, dtype=float)
    r = np.fmod(a, _TWO_PI)  # (−2π, 2π), sign of a
    r = np.where(r > math.pi, r - _TWO_PI, r)
    return np.where(r <= -math.pi, r + _TWO_PI, r)


# --------------------------------------------------------------- quaternions


def _unit_wxyz(w: float, x: float, y: float, z: float) -> tuple[float, float, float, float]:
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if n == 0.0:
        return 1.0, 0.0, 0.0, 0.0
    return w / n, x / n, y / n, z / n


def _unit_quat(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = np.sqrt(w * w + x * x + y * y + z * z)  # ((w² + x²) + y²) + z², as np.linalg.norm
    zero = n == 0.0
    if zero.any():
        n = np.where(zero, 1.0, n)
        w = np.where(zero, 1.0, w)
    return w / n, x / n, y / n, z / n


def _rot_from_unit(w, x, y, z, R):
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def rot_from_quat(q: Any) -> np.ndarray:
    """R (3×3, or (..., 3, 3)) of quaternions (..., 4) = (w, x, y, z): v_world = R v_body
    (Fossen eq. 2.72). q is normalised first (a zero quaternion is the identity)::

        R = [[1 − 2(y² + z²),  2(xy − wz),      2(xz + wy)    ],
             [2(xy + wz),      1 − 2(x² + z²),  2(yz − wx)    ],
             [2(xz − wy),      2(yz + wx),      1 − 2(x² + y²)]]

    A single quaternion (a 4-sequence, or a batch of one, (1, 4): a sensor's step) takes
    the scalar path (same bits; a fifth of the time)."""
    if isinstance(q, np.ndarray) and q.shape == (1, 4):
        return rot_from_quat(q[0])[None]
    if isinstance(q, (tuple, list)) or (isinstance(q, np.ndarray) and q.shape == (4,)):
        return np.array(rot_rows(float(q[0]), float(q[1]), float(q[2]), float(q[3])))
    q = np.asarray(q, dtype=float)
    return _rot_from_unit(*_unit_quat(q), np.empty(q.shape[:-1] + (3, 3)))


def rot_rows(w: float, x: float, y: float, z: float) -> list[list[float]]:
    """:func:`rot_from_quat` of one quaternion as three rows of Python floats (the same
    bits): for a component's per-step arithmetic in floats, where NumPy's per-call cost
    on 3-vectors would dominate."""
    w, x, y, z = _unit_wxyz(w, x, y, z)
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


def quat_from_rot(R: Any) -> np.ndarray:
    """q = (w, x, y, z) with w ≥ 0 of rotation matrices (..., 3, 3) (inverse of
    :func:`rot_from_quat`).

    Shepperd's method (1978): of 4w², 4x², 4y², 4z² (from the trace and the diagonal)
    the largest is taken as the pivot, so the division is by a number ≥ 1 and the
    result is accurate for every rotation (no loss near 180°)."""
    R = np.asarray(R, dtype=float)
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    d21, s21 = R[..., 2, 1] - R[..., 1, 2], R[..., 2, 1] + R[..., 1, 2]
    d02, s02 = R[..., 0, 2] - R[..., 2, 0], R[..., 0, 2] + R[..., 2, 0]
    d10, s10 = R[..., 1, 0] - R[..., 0, 1], R[..., 1, 0] + R[..., 0, 1]
    cand = np.stack([1 + r00 + r11 + r22, 1 + r00 - r11 - r22,
                     1 - r00 + r11 - r22, 1 - r00 - r11 + r22], axis=-1)  # 4w², 4x², 4y², 4z²
    k = np.argmax(cand, axis=-1)
    s = 2.0 * np.sqrt(np.maximum(np.take_along_axis(cand, k[..., None], axis=-1)[..., 0], 0.0))
    by_w = np.stack([0.25 * s, d21 / s, d02 / s, d10 / s], axis=-1)
    by_x = np.stack([d21 / s, 0.25 * s, s10 / s, s02 / s], axis=-1)
    by_y = np.stack([d02 / s, s10 / s, 0.25 * s, s21 / s], axis=-1)
    by_z = np.stack([d10 / s, s02 / s, s21 / s, 0.25 * s], axis=-1)
    q = np.choose(k[..., None], [by_w, by_x, by_y, by_z])
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def quat_multiply(p: Any, q: Any) -> np.ndarray:
    """The Hamilton product p ⊗ q (..., 4), broadcasting: R(p ⊗ q) = R(p) R(q)::

        p ⊗ q = (p_w q_w − p_v · q_v,  p_w q_v + q_w p_v + p_v × q_v)
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pw, px, py, pz = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    qw, qx, qy, qz = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    ], axis=-1)


def quat_conjugate(q: Any) -> np.ndarray:
    """q* = (w, −x, −y, −z) (..., 4): the inverse of a unit quaternion, R(q*) = R(q)ᵀ."""
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotate(q: Any, v: Any) -> np.ndarray:
    """R(q) v over the last axes, broadcasting q (..., 4) against v (..., 3): a body
    vector in world axes (``rotate(quat_conjugate(q), v)`` for the other way).
    q is normalised first, as in :func:`rot_from_quat`."""
    return np.einsum("...ij,...j->...i", rot_from_quat(np.asarray(q, dtype=float)),
                     np.asarray(v, dtype=float))


# -------------------------------------------------------------- Euler angles


def rot_from_euler(roll: Any, pitch: Any, yaw: Any) -> np.ndarray:
    """R(Θ) = Rz(ψ) Ry(θ) Rx(φ) (Fossen eq. 2.18) of roll φ, pitch θ, yaw ψ [rad],
    broadcasting; (..., 3, 3)::

        R = [[cψ cθ,  cψ sθ sφ − sψ cφ,  cψ sθ cφ + sψ sφ],
             [sψ cθ,  sψ sθ sφ + cψ cφ,  sψ sθ cφ − cψ sφ],
             [−sθ,    cθ sφ,             cθ cφ           ]]

    the triple products evaluated left to right, as written. Three numbers take the
    scalar path (same bits)."""
    if _is_scalar(roll) and _is_scalar(pitch) and _is_scalar(yaw):
        cr, sr = math.cos(roll), math.sin(roll)
        cp, sp = math.cos(pitch), math.sin(pitch)
        cy, sy = math.cos(yaw), math.sin(yaw)
        return np.array([
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ])
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    R = np.empty(np.broadcast(cr, cp, cy).shape + (3, 3))
    R[..., 0, 0] = cy * cp
    R[..., 0, 1] = cy * sp * sr - sy * cr
    R[..., 0, 2] = cy * sp * cr + sy * sr
    R[..., 1, 0] = sy * cp
    R[..., 1, 1] = sy * sp * sr + cy * cr
    R[..., 1, 2] = sy * sp * cr - cy * sr
    R[..., 2, 0] = -sp
    R[..., 2, 1] = cp * sr
    R[..., 2, 2] = cp * cr
    return R


def quat_from_euler(roll: Any, pitch: Any, yaw: Any) -> np.ndarray:
    """q = (w, x, y, z) of Rz(ψ) Ry(θ) Rx(φ), broadcasting; (..., 4)::

        w = cφ cθ cψ + sφ sθ sψ      x = sφ cθ cψ − cφ sθ sψ
        y = cφ sθ cψ + sφ cθ sψ      z = cφ cθ sψ − sφ sθ cψ

    with c·, s· of the half angles, products left to right. w ≥ 0 for |φ|, |θ|, |ψ| ≤ π/2
    but not in general (it is not sign-normalised). Three numbers take the scalar path
    (same bits)."""
    if _is_scalar(roll) and _is_scalar(pitch) and _is_scalar(yaw):
        cr, sr = math.cos(roll / 2), math.sin(roll / 2)
        cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
        cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
        return np.array([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                         cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])
    roll, pitch, yaw = (np.asarray(a, dtype=float) for a in (roll, pitch, yaw))
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.stack(np.broadcast_arrays(
        cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy), axis=-1)


def euler_from_rot(R: Any) -> tuple[Any, Any, Any]:
    """(roll φ, pitch θ, yaw ψ) [rad] of R = Rz(ψ) Ry(θ) Rx(φ) (..., 3, 3)::

        φ = atan2(R₃₂, R₃₃),   θ = −asin(R₃₁) (R₃₁ clipped to [−1, 1]),   ψ = atan2(R₂₁, R₁₁)

    φ, ψ ∈ [−π, π], θ ∈ [−π/2, π/2]; at gimbal lock (θ = ±π/2) the split between φ and
    ψ is arbitrary (module docstring). A single 3×3 takes the scalar path and returns
    Python floats (same bits)."""
    R = np.asarray(R, dtype=float)
    if R.shape == (3, 3):
        r = R.tolist()
        return (math.atan2(r[2][1], r[2][2]), -math.asin(max(-1.0, min(1.0, r[2][0]))),
                math.atan2(r[1][0], r[0][0]))
    roll = np.arctan2(R[..., 2, 1], R[..., 2, 2])
    pitch = -np.arcsin(np.clip(R[..., 2, 0], -1.0, 1.0))
    yaw = np.arctan2(R[..., 1, 0], R[..., 0, 0])
    return roll, pitch, yaw


def tilt_from_specific_force(fx: float, fy: float, fz: float) -> tuple[float, float]:
    """(roll φ, pitch θ) [rad] of a vehicle at rest from the specific force f [m/s²] it
    measures in body axes (an accelerometer's f = a − g; at rest f = Rᵀ (0, 0, −g))::

        φ = atan2(−f_y, −f_z),      θ = atan2(f_x, √(f_y² + f_z²))

    Level and at rest f = (0, 0, −g) gives (0, 0); yaw is unobservable from gravity."""
    return math.atan2(-fy, -fz), math.atan2(fx, math.hypot(fy, fz))


# ------------------------------------------------------ elementary rotations


def rot_x(a: float) -> np.ndarray:
    """Rx(a): rotation by a [rad] about x (right-handed; v' = Rx v)."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> np.ndarray:
    """Ry(a): rotation by a [rad] about y."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> np.ndarray:
    """Rz(a): rotation by a [rad] about z."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def quat_from_rotvec(phi: Any) -> np.ndarray:
    """q{φ} = [cos(|φ|/2), sin(|φ|/2) φ/|φ|] (Solà 2017, eq. 101), (w, x, y, z): the
    rotation by |φ| rad about φ/|φ|; to first order near φ = 0 (normalised)."""
    a = float(np.linalg.norm(phi))
    if a < 1e-12:
        q = np.array([1.0, 0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2]])
        return q / np.linalg.norm(q)
    s = math.sin(a / 2) / a
    return np.array([math.cos(a / 2), s * phi[0], s * phi[1], s * phi[2]])


def rot_from_rotvec(phi: Any) -> np.ndarray:
    """R{φ} = exp([φ]×) (Rodrigues), 3×3."""
    return rot_from_quat(quat_from_rotvec(phi))
