"""Refraction geometry (components/localization/refraction.py) against independent oracles:
the quartic of Snell's law solved by numpy's companion-matrix roots and polished in
50-digit decimal arithmetic, OpenCV's own projection and undistortion, and Snell's law
checked on the returned light paths."""

from __future__ import annotations

import dataclasses
from decimal import Decimal, getcontext

import cv2
import numpy as np
import pytest
from moonpool.components.localization.pool_setup import example_setup
from moonpool.components.localization.refraction import Distortion, RefractiveCamera, refract
from moonpool.components.localization.render import Renderer, RenderOptions
from pool_cameras import tilted_setup


SETUPS = {"rig": example_setup(), "tilted": tilted_setup()}


def quartic_surface_point(C, P, water_z, na, nw):
    """Oracle: the point where the light path P -> C crosses the water plane, from the
    quartic (squared Snell's law) in r, the horizontal distance from C's foot:

        na^2 r^2 ((D - r)^2 + hw^2) = nw^2 (D - r)^2 (r^2 + ha^2)

    The coefficients in 50-digit decimals, roots by np.roots, each real root polished
    by Newton in decimals; the one in [0, D] that satisfies the unsquared law wins."""
    getcontext().prec = 50
    dec = lambda v: Decimal(float(v))
    dx, dy = dec(P[0]) - dec(C[0]), dec(P[1]) - dec(C[1])
    D = (dx * dx + dy * dy).sqrt()
    if D == 0:
        return np.array([C[0], C[1], water_z])
    ha, hw = dec(water_z) - dec(C[2]), dec(P[2]) - dec(water_z)
    a, b = dec(na) ** 2, dec(nw) ** 2
    cd = [a - b, -2 * D * (a - b), a * (D * D + hw * hw) - b * (D * D + ha * ha),
          2 * b * D * ha * ha, -b * D * D * ha * ha]

    def snell(r):  # the unsquared equation
        return (dec(na) * r / (r * r + ha * ha).sqrt()
                - dec(nw) * (D - r) / ((D - r) ** 2 + hw * hw).sqrt())

    best = None
    for root in np.roots([float(c) for c in cd]):
        if abs(root.imag) > 1e-6 * float(D) + 1e-12:
            continue
        r = Decimal(float(root.real))
        for _ in range(60):
            f = (((cd[0] * r + cd[1]) * r + cd[2]) * r + cd[3]) * r + cd[4]
            df = ((4 * cd[0] * r + 3 * cd[1]) * r + 2 * cd[2]) * r + cd[3]
            if df == 0:
                break
            step = f / df
            r -= step
            if abs(step) < Decimal("1e-40"):
                break
        if 0 <= r <= D and (best is None or abs(snell(r)) < abs(snell(best))):
            best = r
    assert best is not None
    assert abs(snell(best)) < Decimal("1e-30")
    x = dec(C[0]) + best * dx / D
    y = dec(C[1]) + best * dy / D
    return np.array([float(x), float(y), water_z])


def random_points(cam: RefractiveCamera, n: int, rng) -> np.ndarray:
    """Underwater points that the camera sees (through random pixels)."""
    w, h = 1280, 720
    px = np.column_stack([rng.uniform(-0.4, w - 0.6, n), rng.uniform(-0.4, h - 0.6, n)])
    z = cam.water_z + rng.uniform(1e-4, 3.0, n)
    return cam.back_project(px, z)


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_forward_projection_agrees_with_the_quartic_oracle(name):
    cam = RefractiveCamera(SETUPS[name])
    rng = np.random.default_rng(7)
    P = random_points(cam, 300, rng)
    # special cases: straight below the camera, just under the surface, deep and far out
    C = cam.C
    P = np.vstack([P, [C[0], C[1], 1.0], [C[0] + 1e-9, C[1], 0.7], [1.0, 0.5, cam.water_z + 1e-7],
                   [C[0] + 2.4, C[1] - 1.7, 2.9]])
    px = cam.project(P)
    S_oracle = np.array([quartic_surface_point(C, p, cam.water_z, cam.n_air, cam.n_water)
                         for p in P])
    px_oracle = cam.project_air(S_oracle)
    err = np.max(np.abs(px - px_oracle))
    S = cam.surface_point(P)
    print(f"{name}: max |forward - quartic| = {err:.2e} px, surface point "
          f"{np.max(np.abs(S - S_oracle)):.2e} m over {len(P)} points")
    assert err < 1e-9


def test_newton_converges_in_about_three_iterations():
    cam = RefractiveCamera(SETUPS["tilted"])
    P = random_points(cam, 2000, np.random.default_rng(3))
    ref = cam.surface_point(P)
    S3 = cam.surface_point(P, iterations=3)
    S4 = cam.surface_point(P, iterations=4)
    _, its = cam.surface_point(P, return_iterations=True)
    print(f"3 iterations: max error {np.max(np.abs(S3 - ref)):.2e} m, 4: "
          f"{np.max(np.abs(S4 - ref)):.2e} m; stops after {its}")
    assert np.max(np.abs(S3 - ref)) < 1e-9
    assert np.max(np.abs(S4 - ref)) < 1e-13
    assert its <= 5


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_back_projection_round_trip(name):
    cam = RefractiveCamera(SETUPS[name])
    rng = np.random.default_rng(11)
    P = random_points(cam, 500, rng)
    px = cam.project(P)
    Q = cam.back_project(px, P[:, 2])
    err_m = np.max(np.linalg.norm(Q - P, axis=1))
    px2 = cam.project(Q)
    err_px = np.max(np.abs(px2 - px))
    print(f"{name}: point -> pixel -> point {err_m:.2e} m; pixel -> point -> pixel {err_px:.2e} px")
    assert err_m < 1e-9
    assert err_px < 1e-9


def test_light_paths_obey_snell():
    cam = RefractiveCamera(SETUPS["tilted"])
    P = random_points(cam, 400, np.random.default_rng(5))
    S = cam.surface_point(P)
    a = S - cam.C
    b = P - S
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    sin_a = np.hypot(a[:, 0], a[:, 1])
    sin_b = np.hypot(b[:, 0], b[:, 1])
    assert np.max(np.abs(cam.n_air * sin_a - cam.n_water * sin_b)) < 1e-12
    # incident, refracted and the vertical normal are coplanar
    coplanar = np.cross(a, b)[:, 2]
    assert np.max(np.abs(coplanar)) < 1e-12
    # and the generic vector form agrees with the flat-surface closed form
    t = refract(a, np.array([0.0, 0.0, -1.0]), cam.n_air / cam.n_water)
    assert np.max(np.abs(t - b)) < 1e-12


def test_points_above_the_water_are_seen_straight():
    cam = RefractiveCamera(SETUPS["rig"])
    P = np.array([[0.3, -0.2, -0.5], [1.0, 0.4, -0.01]])
    Xc = (P - cam.C) @ cam.R_wc
    ref, _ = cv2.projectPoints(Xc, np.zeros(3), np.zeros(3), SETUPS["rig"].camera_matrix,
                               SETUPS["rig"].dist_coeffs)
    assert np.max(np.abs(cam.project(P) - ref.reshape(-1, 2))) < 1e-9
    Q = cam.back_project(cam.project(P), P[:, 2])
    assert np.max(np.abs(Q - P)) < 1e-9


def test_distortion_matches_opencv():
    s = SETUPS["tilted"]
    cam = RefractiveCamera(s)
    rng = np.random.default_rng(2)
    xn = rng.uniform(-0.8, 0.8, (500, 2)) * [1.0, 0.5]
    ours = cam.pixels(xn)
    pts = np.column_stack([xn, np.ones(len(xn))])
    ref, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), s.camera_matrix, s.dist_coeffs)
    assert np.max(np.abs(ours - ref.reshape(-1, 2))) < 1e-9
    back = cam.normalized(ours)
    assert np.max(np.abs(back - xn)) < 1e-13
    und = cv2.undistortPoints(ours.reshape(-1, 1, 2), s.camera_matrix, s.dist_coeffs)
    assert np.max(np.abs(und.reshape(-1, 2) - xn)) < 1e-3  # OpenCV's 5 fixed-point steps: coarse
    x0 = xn[:, 0].copy()
    assert np.array_equal(Distortion().apply(x0, xn[:, 1])[0], x0)  # no distortion: identity


def test_paraxial_apparent_depth_is_true_depth_over_n():
    """A pinhole camera at nadir sees an underwater point at depth d as if at d / n."""
    s = dataclasses.replace(example_setup(), R_wc_rows=((1.0, 0, 0), (0, 1.0, 0), (0, 0, 1.0)),
                            t_wc=(0.0, 0.0, -2.0), dist=(0.0,) * 5)
    cam = RefractiveCamera(s)
    d, eps = 1.2, 1e-4
    P = np.array([[eps, 0.0, d]])
    S = cam.surface_point(P)[0]
    # the straight air ray through S, prolonged below the surface, meets x = eps at depth z_app
    slope = S[0] / (S[2] - cam.C[2])
    z_app = eps / slope + cam.C[2]
    assert z_app == pytest.approx(d / 1.333, rel=1e-6)


def test_renderer_interpolates_the_undistortion_to_below_a_thousandth_pixel():
    """The renderer traces exact pixel corners and interpolates inside a pixel: the
    interpolated normalized coordinates stay within 5e-4 px of the exact ones even with
    this strong distortion (k1 = -0.21)."""
    s = SETUPS["tilted"]
    r = Renderer(s, RenderOptions())
    cam = r.camera
    rng = np.random.default_rng(9)
    u = rng.uniform(-0.5, 1279.5, 3000)
    v = rng.uniform(-0.5, 719.5, 3000)
    exact = cam.normalized(np.column_stack([u, v]))
    j = np.floor(u + 0.5).astype(int)
    i = np.floor(v + 0.5).astype(int)
    fu, fv = u + 0.5 - j, v + 0.5 - i
    G = r.corner_xn
    interp = (G[i, j] * ((1 - fv) * (1 - fu))[:, None] + G[i, j + 1] * ((1 - fv) * fu)[:, None]
              + G[i + 1, j] * (fv * (1 - fu))[:, None] + G[i + 1, j + 1] * (fv * fu)[:, None])
    err_px = np.max(np.abs(interp - exact)) * max(cam.fx, cam.fy)
    print(f"bilinear undistortion error {err_px:.2e} px")
    assert err_px < 5e-4


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_renderer_tag_map_is_bilinear_within_a_pixel_to_1e5_cell(name):
    """The renderer traces pixel corners exactly and interpolates the tag-bitmap
    coordinates inside a pixel: compare with exact tracing of random sub-pixel points."""
    from moonpool.components.localization.render import Pose

    r = Renderer(SETUPS[name], RenderOptions())
    tag = r.tag_world(Pose(0.5, -0.4, 0.9, 0.05, -0.04, 0.8))[0]
    box = r.tag_box(tag)
    col, row, ok = r.trace_corners(box, tag)
    assert ok.all()
    u0, v0, u1, v1 = box
    rng = np.random.default_rng(0)
    n = 2000
    i, j = rng.integers(0, v1 - v0 + 1, n), rng.integers(0, u1 - u0 + 1, n)
    fu, fv = rng.uniform(0, 1, n), rng.uniform(0, 1, n)

    def bilinear(a):
        return (a[i, j] * (1 - fu) * (1 - fv) + a[i, j + 1] * fu * (1 - fv)
                + a[i + 1, j] * (1 - fu) * fv + a[i + 1, j + 1] * fu * fv)

    cam = r.camera
    d = cam.rays(cam.normalized(np.column_stack([u0 + j - 0.5 + fu, v0 + i - 0.5 + fv])))
    S, t = cam.surface_hits(d)
    _, P0, top, right, normal = tag
    X = S + (((P0 - S) @ normal) / (t @ normal))[:, None] * t
    tw = r.family.total_width
    col_exact = ((X - P0) @ right) / r.cell + tw / 2
    row_exact = tw / 2 - ((X - P0) @ top) / r.cell
    err = max(np.abs(bilinear(col) - col_exact).max(), np.abs(bilinear(row) - row_exact).max())
    print(f"{name}: bilinear tag map error {err:.1e} cell")
    assert err < 1e-5


@pytest.mark.parametrize("dist", [
    Distortion(-0.05, 0.012, 0.0004, -0.0003, 0.0),   # the rig's camera
    Distortion(-0.32, 0.11, 0.002, -0.0015, -0.02),   # a strongly distorted wide lens
    Distortion(0.0, 0.0, 0.003, 0.002, 0.0),          # tangential only
])
def test_undistorting_a_few_points_is_the_vectorised_newton(dist, monkeypatch):
    """Distortion.remove of a few points (a detection's corners: Python floats) gives
    the vectorised Newton's values bit for bit: as many iterations (until every point
    has converged), the same operations; shapes kept; a point whose Jacobian is
    singular or NaN leaves it to the vectorised path."""
    import moonpool.components.localization.refraction as refraction

    rng = np.random.default_rng(4)
    cases = [rng.uniform(-0.8, 0.8, size=(n, 2)) for n in (1, 4, 8, 12, 32) for _ in range(40)]
    cases += [rng.uniform(-0.8, 0.8, size=(2, 4, 2)), np.zeros((3, 2)),
              np.array([[0.1, np.nan], [0.2, 0.3]]), np.array([[0.1, -0.0], [-0.0, 0.0]])]
    few = [dist.remove(c[..., 0], c[..., 1]) for c in cases]
    monkeypatch.setattr(refraction, "_FEW", 0)  # every call through NumPy
    for c, (x, y) in zip(cases, few):
        vx, vy = dist.remove(c[..., 0], c[..., 1])
        assert x.shape == vx.shape == c.shape[:-1]
        assert x.view(np.int64).tolist() == vx.view(np.int64).tolist(), c
        assert y.view(np.int64).tolist() == vy.view(np.int64).tolist(), c


def test_back_projection_of_targets_all_under_the_water_takes_the_same_values():
    """back_project_rays with every target under the water (a tag's corners: the
    under-water path alone) gives the values the general path gives those points when
    one target above the water sends the call through both paths."""
    cam = RefractiveCamera(example_setup())
    rng = np.random.default_rng(6)
    px = rng.uniform([0, 0], [1280, 720], size=(40, 2))
    d = cam.rays(cam.normalized(px))
    z = cam.water_z + rng.uniform(0.0, 2.0, 40)
    z[::9] = cam.water_z  # at the surface itself: still under
    under = cam.back_project_rays(d, z)
    both = cam.back_project_rays(np.vstack([d, d[:1]]), np.append(z, cam.water_z - 0.5))
    assert np.all(np.isfinite(under))
    assert under.view(np.int64).tolist() == both[:-1].view(np.int64).tolist()
    assert both[-1, 2] == pytest.approx(cam.water_z - 0.5)  # the air point, seen straight
