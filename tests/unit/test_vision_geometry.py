"""Camera geometry against OpenCV: box corners and edges in the label image land where
cv2.projectPoints puts them (within 0.1 px); z-depth and labels equal the ray hits."""

import cv2
import numpy as np
import pytest
import trimesh

from moonpool.components.vision.geometry import (CameraModel, CameraMount, CameraPose,
                                                 cast_frame)
from moonpool.components.world.rays import RayEngine

K = (400.0, 0.0, 161.3, 0.0, 405.0, 118.7, 0.0, 0.0, 1.0)
DIST = (-0.21, 0.07, 0.0012, -0.0008, -0.01)


def _scene():
    box = trimesh.creation.box(extents=(1.0, 0.8, 0.6))
    v = np.asarray(box.vertices) + [0.3, -0.2, 5.0]  # camera-frame placement below
    return box, v


@pytest.fixture(scope="module")
def setup():
    cam = CameraModel(320, 240, K, DIST)
    # camera at the origin, looking along NED +z (down): mount pitch -90 deg, level vehicle
    pose = CameraPose.from_vehicle(CameraMount(), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    box, v_cam = _scene()
    v_ned = v_cam @ pose.R_wc.T + pose.C_ned
    floor = trimesh.creation.box(extents=(40.0, 40.0, 0.1))
    fv = np.asarray(floor.vertices) + [0.0, 0.0, 9.0]
    verts = np.concatenate([v_ned, fv])
    faces = np.concatenate([box.faces, floor.faces + len(v_ned)])
    labels = np.r_[np.full(len(box.faces), 7), np.full(len(floor.faces), 1)]
    engine = RayEngine.from_mesh(verts, faces, labels, labels * 10)
    frame = cast_frame(engine, cam, pose, 100.0)
    return cam, pose, engine, frame, v_cam


def test_mount_looks_down_with_image_top_forward():
    R = CameraMount().R_bc
    assert np.allclose(R @ [0, 0, 1], [0, 0, 1])   # optical axis = body down
    assert np.allclose(R @ [1, 0, 0], [0, 1, 0])   # image right = starboard
    assert np.allclose(R @ [0, -1, 0], [1, 0, 0])  # image up = forward


def test_rays_reproject_to_their_pixels():
    cam = CameraModel(320, 240, K, DIST)
    d = cam.rays_cam.reshape(-1, 3)
    px, _ = cv2.projectPoints(d, np.zeros(3), np.zeros(3), cam.matrix, np.asarray(DIST))
    u, v = np.meshgrid(np.arange(320.0), np.arange(240.0))
    err = np.hypot(px[:, 0, 0] - u.ravel(), px[:, 0, 1] - v.ravel())
    assert err.max() < 1e-6


def test_box_corners_land_within_0p1_px_of_project_points(setup):
    cam, pose, engine, frame, v_cam = setup
    near = v_cam[v_cam[:, 2] < v_cam[:, 2].mean()]  # the 4 corners of the face toward the camera
    px, _ = cv2.projectPoints(near, np.zeros(3), np.zeros(3), cam.matrix, np.asarray(DIST))
    px = px.reshape(-1, 2)
    # The ray through each projected corner passes the corner within 0.1 px.
    d = cam.rays_at(px)
    for X, di in zip(near, d):
        miss = np.linalg.norm(X - (X @ di) * di)
        assert miss / X[2] * K[0] < 0.1 * 1e-3  # far below 0.1 px
    # Label image: every pixel centre more than 0.1 px inside the projected face is the box,
    # every one more than 0.1 px outside its silhouette is not.
    order = np.argsort(np.arctan2(near[:, 1] - near[:, 1].mean(), near[:, 0] - near[:, 0].mean()))
    corners = near[order]
    edge = []
    for a, b in zip(corners, np.roll(corners, -1, axis=0)):
        s = np.linspace(0, 1, 400, endpoint=False)[:, None]
        edge.append(a + s * (b - a))
    edge = np.concatenate(edge)
    poly, _ = cv2.projectPoints(edge, np.zeros(3), np.zeros(3), cam.matrix, np.asarray(DIST))
    poly = poly.reshape(-1, 1, 2).astype(np.float32)
    u, v = np.meshgrid(np.arange(cam.width), np.arange(cam.height))
    dist = np.array([cv2.pointPolygonTest(poly, (float(a), float(b)), True)
                     for a, b in zip(u.ravel(), v.ravel())]).reshape(u.shape)
    is_box = frame.label == 7
    inside = dist > 0.1
    outside = dist < -0.1
    assert inside.sum() > 1000
    assert is_box[inside].all()
    # outside the near face the box's side faces may show (perspective): not the near face
    near_z = near[:, 2].mean()
    assert not np.any(is_box[outside] & (np.abs(frame.z_depth_m[outside] - near_z) < 1e-9))


def test_z_depth_and_labels_equal_the_ray_hits(setup):
    cam, pose, engine, frame, _ = setup
    d = cam.rays_cam.reshape(-1, 3) @ pose.R_wc.T
    hits = engine.cast(pose.C_ned, d, 100.0)
    assert np.array_equal(frame.label.ravel(), hits.label)
    assert np.array_equal(frame.instance.ravel(), hits.instance)
    p_cam = (hits.point_ned - pose.C_ned) @ pose.R_wc
    ok = hits.hit
    assert np.allclose(frame.z_depth_m.ravel()[ok], p_cam[ok, 2], atol=1e-9)
    assert np.allclose(frame.range_m.ravel()[ok], hits.distance_m[ok], atol=0)
    # the near face of the box is at z = 5 - 0.3 = 4.7 m: its z-depth exactly that
    assert np.allclose(frame.z_depth_m[frame.label == 7].min(), 4.7, atol=1e-9)
