"""Frames and rotations (components/sdk/frames.py) against an independent reference,
SciPy's ``Rotation``: R from q and q from R, ZYX Euler angles both ways, the Hamilton
product as composition, skew/cross, angle wrapping; and the scalar paths against the
vectorised ones, bit for bit where the libm is shared (and to one ulp anywhere).

SciPy's conventions: ``from_euler("ZYX", [yaw, pitch, roll])`` (upper case: intrinsic,
so R = Rz(yaw) Ry(pitch) Rx(roll)); quaternions scalar-last (x, y, z, w).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from moonpool.components.sdk import frames as F

N = 500


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def random_quats(rng, n=N):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def scipy_quat(q_wxyz):
    return np.roll(np.asarray(q_wxyz), -1, axis=-1)  # (w, x, y, z) -> (x, y, z, w)


def wxyz(q_xyzw):
    return np.roll(np.asarray(q_xyzw), 1, axis=-1)


def sign_normalised(q):
    return np.where(q[..., :1] < 0, -q, q)


def random_euler(rng, n=N, max_pitch=math.radians(85)):
    """(roll, pitch, yaw) away from gimbal lock."""
    return (rng.uniform(-math.pi, math.pi, n), rng.uniform(-max_pitch, max_pitch, n),
            rng.uniform(-math.pi, math.pi, n))


def ulps(a, b):
    """Distance in units in the last place (of the larger magnitude), elementwise."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b) / np.spacing(np.maximum(np.abs(a), np.abs(b)))


# ------------------------------------------------------------ vs SciPy


def test_rot_from_quat_is_scipys_matrix(rng):
    q = random_quats(rng)
    R = F.rot_from_quat(q)
    np.testing.assert_allclose(R, Rotation.from_quat(scipy_quat(q)).as_matrix(), atol=1e-15)
    # not normalised on input: same rotation
    np.testing.assert_allclose(F.rot_from_quat(3.7 * q), R, atol=1e-15)
    # orthonormal, det +1
    np.testing.assert_allclose(R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-15)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-14)


def test_rot_from_quat_rotates_body_vectors_into_the_world():
    # yaw +90°: the bow (body x) points east (world y); body y (starboard) points south
    q = F.quat_from_euler(0.0, 0.0, math.pi / 2)
    R = F.rot_from_quat(q)
    np.testing.assert_allclose(R @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(R @ [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], atol=1e-15)
    # pitch +30°: the bow is lifted, i.e. points up = −z in NED
    R = F.rot_from_euler(0.0, math.radians(30), 0.0)
    assert (R @ [1.0, 0.0, 0.0])[2] == pytest.approx(-0.5)
    # roll +30°: starboard goes down (+z)
    R = F.rot_from_euler(math.radians(30), 0.0, 0.0)
    assert (R @ [0.0, 1.0, 0.0])[2] == pytest.approx(0.5)


def test_zero_quaternion_is_the_identity():
    assert np.array_equal(F.rot_from_quat((0.0, 0.0, 0.0, 0.0)), np.eye(3))
    R = F.rot_from_quat(np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]))
    assert np.array_equal(R[0], np.eye(3))
    np.testing.assert_allclose(R[1], np.diag([-1.0, -1.0, 1.0]), atol=0)


def test_quat_from_rot_is_scipys_sign_normalised(rng):
    q = random_quats(rng)
    # include the hard cases: 180° turns about each axis and near them, and the identity
    special = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0],
                        [1e-9, 1, 0, 0], [0, 0.6, 0.8, 0], [0, 0, 0.6, 0.8]], dtype=float)
    special /= np.linalg.norm(special, axis=1, keepdims=True)
    q = np.vstack([q, special])
    R = Rotation.from_quat(scipy_quat(q)).as_matrix()
    got = F.quat_from_rot(R)
    want = sign_normalised(wxyz(Rotation.from_matrix(R).as_quat()))
    np.testing.assert_allclose(got, want, atol=2e-15)
    assert np.all(got[:, 0] >= 0)
    np.testing.assert_allclose(F.rot_from_quat(got), R, atol=1e-15)  # round trip
    np.testing.assert_allclose(F.quat_from_rot(R[3]), got[3], atol=0)  # one matrix


def test_rot_from_euler_is_scipys_zyx(rng):
    roll, pitch, yaw = random_euler(rng)
    want = Rotation.from_euler("ZYX", np.column_stack([yaw, pitch, roll])).as_matrix()
    np.testing.assert_allclose(F.rot_from_euler(roll, pitch, yaw), want, atol=1e-15)
    # broadcasting: one roll for all
    np.testing.assert_allclose(F.rot_from_euler(0.3, pitch, yaw),
                               Rotation.from_euler("ZYX", np.column_stack(
                                   [yaw, pitch, np.full(N, 0.3)])).as_matrix(), atol=1e-15)


def test_quat_from_euler_is_scipys_zyx(rng):
    roll, pitch, yaw = random_euler(rng)
    q = F.quat_from_euler(roll, pitch, yaw)
    assert q.shape == (N, 4)
    want = wxyz(Rotation.from_euler("ZYX", np.column_stack([yaw, pitch, roll])).as_quat())
    np.testing.assert_allclose(sign_normalised(q), sign_normalised(want), atol=1e-15)
    np.testing.assert_allclose(F.rot_from_quat(q), F.rot_from_euler(roll, pitch, yaw), atol=1e-15)


def test_euler_round_trips_away_from_gimbal_lock(rng):
    roll, pitch, yaw = random_euler(rng)
    r, p, y = F.euler_from_rot(F.rot_from_euler(roll, pitch, yaw))
    np.testing.assert_allclose(r, roll, atol=1e-13)
    np.testing.assert_allclose(p, pitch, atol=1e-13)
    np.testing.assert_allclose(y, yaw, atol=1e-13)
    # and SciPy agrees on the angles of random rotations
    q = random_quats(rng)
    r, p, y = F.euler_from_rot(F.rot_from_quat(q))
    ypr = Rotation.from_quat(scipy_quat(q)).as_euler("ZYX")
    np.testing.assert_allclose(np.column_stack([y, p, r]), ypr, atol=1e-12)


def test_gimbal_lock_keeps_the_rotation_but_not_the_split():
    """At θ = +90° only ψ − φ is defined: the angles returned rebuild the same R."""
    R = F.rot_from_euler(0.4, math.pi / 2, 1.1)
    r, p, y = F.euler_from_rot(R)
    assert p == pytest.approx(math.pi / 2)
    np.testing.assert_allclose(F.rot_from_euler(r, p, y), R, atol=1e-7)


def test_hamilton_product_is_composition(rng):
    p, q = random_quats(rng), random_quats(rng)
    pq = F.quat_multiply(p, q)
    np.testing.assert_allclose(F.rot_from_quat(pq), F.rot_from_quat(p) @ F.rot_from_quat(q),
                               atol=1e-14)
    want = (Rotation.from_quat(scipy_quat(p)) * Rotation.from_quat(scipy_quat(q))).as_quat()
    np.testing.assert_allclose(sign_normalised(pq), sign_normalised(wxyz(want)), atol=1e-15)
    # ij = k, the Hamilton rule
    i, j = np.array([0.0, 1, 0, 0]), np.array([0.0, 0, 1, 0])
    np.testing.assert_array_equal(F.quat_multiply(i, j), [0.0, 0, 0, 1])


def test_conjugate_inverts_and_rotate_is_r_times_v(rng):
    q = random_quats(rng)
    v = rng.normal(size=(N, 3))
    np.testing.assert_allclose(F.quat_multiply(q, F.quat_conjugate(q)),
                               np.tile([1.0, 0, 0, 0], (N, 1)), atol=1e-15)
    np.testing.assert_allclose(F.rot_from_quat(F.quat_conjugate(q)),
                               np.swapaxes(F.rot_from_quat(q), -1, -2), atol=1e-15)
    w = F.rotate(q, v)
    np.testing.assert_allclose(w, Rotation.from_quat(scipy_quat(q)).apply(v), atol=1e-14)
    # q ⊗ (0, v) ⊗ q*
    qv = F.quat_multiply(F.quat_multiply(q, np.column_stack([np.zeros(N), v])),
                         F.quat_conjugate(q))
    np.testing.assert_allclose(qv[:, 1:], w, atol=1e-14)
    np.testing.assert_allclose(F.rotate(F.quat_conjugate(q), w), v, atol=1e-14)
    np.testing.assert_allclose(F.rotate(q[0], v[0]), w[0], atol=0)  # one pair


def test_skew_times_b_is_a_cross_b(rng):
    a, b = rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    S = F.skew(a)
    assert S.shape == (N, 3, 3)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", S, b), np.cross(a, b), atol=1e-14)
    assert np.array_equal(F.cross(a, b), np.cross(a, b))
    np.testing.assert_array_equal(S, -np.swapaxes(S, -1, -2))
    assert np.array_equal(F.skew(a[0]), S[0])
    assert np.array_equal(F.skew([1.0, 2.0, 3.0]), [[0, -3, 2], [3, 0, -1], [-2, 1, 0]])


def test_wrap_angle_is_in_the_half_open_interval(rng):
    a = np.concatenate([rng.uniform(-50, 50, 2000), [math.pi, -math.pi, 3 * math.pi,
                                                     -3 * math.pi, 0.0, 2 * math.pi, 1e-300]])
    w = F.wrap_angle(a)
    assert np.all(w > -math.pi) and np.all(w <= math.pi)
    k = np.round((a - w) / (2 * math.pi))
    np.testing.assert_allclose(a - w, k * 2 * math.pi, atol=1e-12)
    assert F.wrap_angle(math.pi) == math.pi and F.wrap_angle(-math.pi) == math.pi
    assert F.wrap_angle(math.radians(340)) == pytest.approx(math.radians(-20))
    assert F.wrap_angle(0.25) == 0.25  # exact, not (a + π) mod 2π − π
    # the vectorised path is the scalar one, bit for bit
    assert [F.wrap_angle(float(x)) for x in a] == w.tolist()


# ------------------------------------- scalar paths = vectorised paths


def _libm_shared() -> bool:
    x = np.linspace(-7, 7, 1001)
    return (np.array_equal(np.cos(x), [math.cos(v) for v in x])
            and np.array_equal(np.arctan2(x, x[::-1]),
                               [math.atan2(a, b) for a, b in zip(x, x[::-1])])
            and np.array_equal(np.arcsin(x / 7), [math.asin(v / 7) for v in x]))


def test_scalar_paths_match_the_vectorised_paths(rng):
    """Controllers and per-message code take the scalar paths, sensors the vectorised
    ones: same operations, same order, so the same bits (where NumPy and math share a
    libm; one ulp at most elsewhere)."""
    exact = _libm_shared()
    roll, pitch, yaw = random_euler(rng, 300, max_pitch=math.pi)
    q = random_quats(rng, 300) * rng.uniform(0.5, 2.0, (300, 1))
    R_vec = F.rot_from_euler(roll, pitch, yaw)
    Q_vec = F.quat_from_euler(roll, pitch, yaw)
    Rq_vec = F.rot_from_quat(q)
    E_vec = np.column_stack(F.euler_from_rot(Rq_vec))
    for k in range(300):
        R = F.rot_from_euler(float(roll[k]), float(pitch[k]), float(yaw[k]))
        Qe = F.quat_from_euler(float(roll[k]), float(pitch[k]), float(yaw[k]))
        Rq = F.rot_from_quat(tuple(q[k]))  # a 4-sequence: the scalar path
        Rq1 = F.rot_from_quat(q[k:k + 1])  # a batch of one (1, 4): the scalar path too
        E = np.array(F.euler_from_rot(Rq_vec[k]))
        assert np.array_equal(Rq, Rq_vec[k])  # + − × ÷ √ only: always exact
        assert Rq1.shape == (1, 3, 3) and np.array_equal(Rq1[0], Rq_vec[k])
        if exact:
            assert np.array_equal(R, R_vec[k]) and np.array_equal(Qe, Q_vec[k])
            assert np.array_equal(E, E_vec[k])
        else:
            assert ulps(R, R_vec[k]).max() <= 1 and ulps(Qe, Q_vec[k]).max() <= 1
            assert ulps(E, E_vec[k]).max() <= 1


def test_scalar_euler_path_returns_floats():
    r, p, y = F.euler_from_rot(np.eye(3))
    assert (type(r), type(p), type(y)) == (float, float, float)
    assert (r, p, y) == (0.0, -0.0, 0.0)


def test_elementary_rotations_compose_to_zyx(rng):
    for roll, pitch, yaw in zip(*random_euler(rng, 20)):
        np.testing.assert_allclose(F.rot_z(yaw) @ F.rot_y(pitch) @ F.rot_x(roll),
                                   F.rot_from_euler(roll, pitch, yaw), atol=1e-15)


def test_tilt_from_the_specific_force_at_rest(rng):
    g = 9.80665
    for roll, pitch, yaw in zip(*random_euler(rng, 50)):
        f = F.rot_from_euler(roll, pitch, yaw).T @ [0.0, 0.0, -g]  # f = a − g, a = 0
        r, p = F.tilt_from_specific_force(*f)
        assert r == pytest.approx(roll, abs=1e-12) and p == pytest.approx(pitch, abs=1e-12)
    assert F.tilt_from_specific_force(0.0, 0.0, -g) == (0.0, 0.0)


def _former_controller_euler_matrix(phi, theta, psi):
    """R(Θ) as the controllers computed it before frames.py (same products, other
    association in R₀₂ and R₁₁: cψ cφ sθ and sφ sθ sψ)."""
    cf, sf, ct, st = math.cos(phi), math.sin(phi), math.cos(theta), math.sin(theta)
    cp, sp = math.cos(psi), math.sin(psi)
    return np.array([
        [cp * ct, -sp * cf + cp * st * sf, sp * sf + cp * cf * st],
        [sp * ct, cp * cf + sf * st * sp, -cp * sf + st * sp * cf],
        [-st, ct * sf, ct * cf],
    ])


def test_the_controllers_former_euler_matrix_where_it_is_reached(rng):
    """kinematics() builds R from Euler angles only for a NavigationState without
    quaternion, as Rz(ψ) (and the localization code as Ry(θ) Rx(φ)): there the two
    associations give the same bits. For three general angles they may differ by an
    ulp of 1 in R₀₂ and R₁₁ (Kinematics.from_euler_state, used by tests only)."""
    other = np.ones((3, 3), bool)
    other[0, 2] = other[1, 1] = False
    for a, b, c in rng.uniform(-math.pi, math.pi, (2000, 3)):
        old = _former_controller_euler_matrix
        assert np.array_equal(F.rot_from_euler(0.0, 0.0, c), old(0.0, 0.0, c))
        assert np.array_equal(F.rot_from_euler(a, b, 0.0), old(a, b, 0.0))
        R, R_old = F.rot_from_euler(a, b, c), old(a, b, c)
        assert np.array_equal(R[other], R_old[other])
        assert np.abs(R - R_old).max() <= np.spacing(1.0)
