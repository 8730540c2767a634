"""The independent renderer (tests/support/independent_render.py) checked on its own,
before it is used to check the localizer (tests/scenarios/test_independent_render.py):
its refraction against closed forms, its two code paths (ray tracing and Brent's
forward projection) against each other, its lens model against OpenCV, and its tag
drawing and corner geometry against pupil-apriltags itself. Nothing here comes from
moonpool.components.localization."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pupil_apriltags
import pytest
from independent_render import (
    UP,
    IndependentRenderer,
    Nuisance,
    Pose,
    default_scene,
    distort,
    pixel_rays,
    project,
    refract,
    rot_x,
    rot_y,
    rot_z,
    tag_bitmap,
    trace_into_water,
    undistort,
)

# One detector for the whole process, at quad_decimate 2: the bundled C library must not
# destroy a detector after a full-resolution search (docs/localization.md, Detection, 7).
DETECTOR = pupil_apriltags.Detector(families="tag36h11", quad_decimate=2.0, refine_edges=True)


def nadir_scene(**kw):
    """Straight down (R_wc = I), no distortion, principal point at the image centre."""
    s = default_scene(640, 480)
    return dataclasses.replace(s, R_wc=np.eye(3), dist=(0.0,) * 5, K=(500.0, 500.0, 319.5, 239.5),
                               **kw)


def hit_depth(scene, d, depth):
    """Where the air rays d reach the plane `depth` below the surface."""
    S, t = trace_into_water(scene, d)
    lam = depth / t[..., 2]
    return S + lam[..., None] * t


@pytest.mark.parametrize("n_air,n_water", [(1.0, 1.333), (1.000277, 1.3335)])
def test_paraxial_apparent_depth(n_air, n_water):
    # A point straight below the camera, seen by near-axis rays: a pinhole would put it
    # at depth D * n_air / n_water below the surface (the classic apparent depth).
    sc = nadir_scene(n_air=n_air, n_water=n_water)
    fx, _, cx, cy = sc.K
    C = np.asarray(sc.t_wc)
    h_a = sc.water_z - C[2]
    for D in (0.3, 1.0, 2.5):
        du = 0.01  # px off the axis: theta ~ 2e-5 rad, paraxial error ~ theta^2
        d = pixel_rays(sc, np.array([cx + du]), np.array([cy]))
        P = hit_depth(sc, d, D)[0]
        r = math.hypot(P[0] - C[0], P[1] - C[1])
        tan_air = du / fx
        apparent = r / tan_air - h_a  # the depth below the surface a pinhole would infer
        assert apparent == pytest.approx(D * n_air / n_water, rel=1e-7)


def test_refraction_closed_form_off_axis():
    # Off axis, exactly: an air ray at theta_a reaches depth D at horizontal distance
    # h_a tan(theta_a) + D tan(asin(n_a sin(theta_a) / n_w)) from the camera's foot.
    sc = nadir_scene()
    C = np.asarray(sc.t_wc)
    h_a = sc.water_z - C[2]
    fx, fy, cx, cy = sc.K
    for theta_deg, az_deg in ((5, 0), (20, 40), (35, 200), (50, 290)):
        th, az = math.radians(theta_deg), math.radians(az_deg)
        u = cx + fx * math.tan(th) * math.cos(az)
        v = cy + fy * math.tan(th) * math.sin(az)
        d = pixel_rays(sc, np.array([u]), np.array([v]))
        for D in (0.2, 1.4):
            P = hit_depth(sc, d, D)[0]
            r_expect = h_a * math.tan(th) + D * math.tan(math.asin(sc.n_air * math.sin(th) / sc.n_water))
            assert math.hypot(P[0] - C[0], P[1] - C[1]) == pytest.approx(r_expect, abs=1e-12)
            assert math.atan2(P[1] - C[1], P[0] - C[0]) == pytest.approx(
                math.atan2(math.sin(az), math.cos(az)), abs=1e-12)  # in the plane of incidence


def test_vector_snell_law():
    rng = np.random.default_rng(4)
    d = rng.normal(size=(500, 3))
    d[:, 2] = np.abs(d[:, 2]) + 0.05
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    t = refract(d, UP, 1.0, 1.333)
    assert np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-14)
    sin_i = np.hypot(d[:, 0], d[:, 1])
    sin_t = np.hypot(t[:, 0], t[:, 1])
    assert np.allclose(1.0 * sin_i, 1.333 * sin_t, atol=1e-14)
    assert np.all(t[:, 2] > 0)  # into the water (down)
    # coplanar with the normal: same horizontal direction
    cross = d[:, 0] * t[:, 1] - d[:, 1] * t[:, 0]
    assert np.allclose(cross / np.maximum(sin_i * sin_t, 1e-300), 0, atol=1e-12)


def test_distortion_matches_opencv_and_inverts():
    sc = default_scene()
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-0.8, 0.8, 400), rng.uniform(-0.6, 0.6, 400)
    xd, yd = distort(x, y, sc.dist)
    fx, fy, cx, cy = sc.K
    Kmat = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    px, _ = cv2.projectPoints(np.stack([x, y, np.ones_like(x)], 1), np.zeros(3), np.zeros(3),
                              Kmat, np.asarray(sc.dist))
    assert np.allclose(px[:, 0, 0], fx * xd + cx, atol=1e-9)
    assert np.allclose(px[:, 0, 1], fy * yd + cy, atol=1e-9)
    xu, yu = undistort(xd, yd, sc.dist)
    assert np.max(np.abs(xu - x)) < 1e-12 and np.max(np.abs(yu - y)) < 1e-12


def test_tracing_and_forward_projection_agree():
    # Two independent code paths: pixel -> ray -> water -> plane (tracing) and
    # point -> Brent's method on Snell's law -> pixel (projection). Over the image,
    # tilted and distorted camera, several depths, they must round trip.
    sc = default_scene()
    w, h = sc.image_size
    rng = np.random.default_rng(2)
    u, v = rng.uniform(0, w - 1, 60), rng.uniform(0, h - 1, 60)
    d = pixel_rays(sc, u, v)
    for depth in (1e-6, 0.4, 1.3, 2.9):
        P = hit_depth(sc, d, depth)
        px = project(sc, P)
        assert np.max(np.abs(px - np.stack([u, v], 1))) < 1e-7


def test_rotation_conventions():
    # R_wb = R_z(yaw) R_y(pitch) R_x(roll): body +x forward turns towards world +y for a
    # positive yaw; a positive pitch lifts the nose (body +x gets a negative world z).
    assert np.allclose(rot_z(math.pi / 2) @ [1, 0, 0], [0, 1, 0])
    assert (rot_y(0.1) @ [1, 0, 0])[2] < 0
    assert (rot_x(0.1) @ [0, 1, 0])[2] > 0  # roll to starboard: starboard side goes down


@pytest.mark.parametrize("tag_id", [0, 1, 17, 250, 586])
def test_tag_bitmap_is_upright_for_the_apriltag_detector(tag_id):
    # Drawn with row 0 on top, the detector must find the id with its first corner at
    # the bottom left and then BR, TR, TL (the doc's corner order of the upright tag).
    cell = 12
    bm = np.kron(tag_bitmap(tag_id), np.ones((cell, cell)))
    img = np.full((10 * cell + 60, 10 * cell + 60), 110, np.uint8)
    img[30:30 + 10 * cell, 30:30 + 10 * cell] = (40 + 180 * bm).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 0.8)
    (det,) = DETECTOR.detect(img)
    assert det.tag_id == tag_id and det.hamming == 0
    c = det.corners - 0.5  # pupil-apriltags: pixel i spans [i, i + 1]
    lo, hi = 30 + cell - 0.5, 30 + 9 * cell - 0.5  # the black square's edges, OpenCV pixels
    expect = np.array([[lo, hi], [hi, hi], [hi, lo], [lo, lo]])  # BL, BR, TR, TL
    assert np.max(np.abs(c - expect)) < 0.2


def test_rendered_corners_where_the_geometry_says():
    # Noise-free renders of known poses: pupil-apriltags' corners (less the half pixel of
    # its convention) must sit on the forward projections of the true corners. Per
    # corner, AprilTag's edge refinement scatters ~0.05 px RMS on clean synthetic edges
    # (up to ~0.2 px); the mean over many corners has no reason to be off at all, so
    # |mean| < 0.03 px per axis, while a pixel-convention slip would leave 0.5 px.
    sc = default_scene(800, 600)
    r = IndependentRenderer(sc, nuisance=Nuisance(blur_sigma_px=(0.5, 0.5), read_noise_dn=0,
                                                  shot_noise_dn=0, exposure_jitter=0))
    rng = np.random.default_rng(0)
    poses = (Pose(0.2, 0.3, 0.6, 0.03, -0.02, 0.9), Pose(-1.1, 0.6, 1.2, -0.02, 0.03, -2.4),
             Pose(0.9, -0.7, 0.4, 0.0, 0.04, 2.0), Pose(-0.3, -0.5, 0.9, -0.03, -0.01, -0.7))
    errors = []
    for pose in poses:
        img = r.render(pose, rng)
        grey = cv2.cvtColor(np.clip(np.rint(img[..., ::-1]), 0, 255).astype(np.uint8),
                            cv2.COLOR_BGR2GRAY)
        found = {d.tag_id: d.corners - 0.5 for d in DETECTOR.detect(grey)}
        truth = r.tag_corners_px(pose)
        assert set(truth) <= set(found)
        errors += [found[tid] - px for tid, px in truth.items()]
    e = np.concatenate(errors)  # 48 corners x (u, v)
    assert np.all(np.abs(e.mean(axis=0)) < 0.03), e.mean(axis=0)
    assert np.all(np.sqrt((e ** 2).mean(axis=0)) < 0.1)
    assert np.abs(e).max() < 0.3
