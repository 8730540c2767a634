"""Where the water fit starts: which gauge freedoms the data remove, the initial camera
(pinhole PnP) and poses (refraction-aware closed form), aligned to what is known."""

from __future__ import annotations

import math

import cv2
import numpy as np

from ...sdk.frames import rot_from_euler
from ..detect import Detection
from ..measure import MeasurerOptions, RefractionMeasurer
from ..pool_setup import PoolSetup
from .manifest import WaterSample
from .water_model import WaterModel


def freedoms(samples: list[WaterSample]) -> tuple[bool, bool, bool]:
    """Which gauge freedoms the data remove: (camera x, y; heading; water_z)."""
    known_xy = [s for s in samples if s.known_xy]
    spread = 0.0
    if len(known_xy) >= 2:
        P = np.array([[s.x_m, s.y_m] for s in known_xy])
        spread = float(np.max(np.linalg.norm(P - P[0], axis=1)))
    heading = any(s.yaw_rad is not None for s in samples) or spread >= 0.05
    return bool(known_xy), heading, any(s.z_m is not None for s in samples)


def initial_camera(setup: PoolSetup, samples: list[WaterSample], dets: list[list[Detection]],
                    heading: float, wz: float) -> np.ndarray:
    """Tilt and height from pinhole PnP (ignoring the water; the apparent distance of a
    point d below the surface is about h + d / n_w), heading from the gauge."""
    K, dist = setup.camera_matrix, setup.dist_coeffs
    downs, poses = [], []
    for s, ds in zip(samples, dets):
        obj = np.concatenate([setup.corners_body(d.id) for d in ds])
        img = np.concatenate([d.corners for d in ds])
        try:
            ok, rvec, tvec = cv2.solvePnP(obj, img, K, dist, flags=cv2.SOLVEPNP_SQPNP)
        except cv2.error:
            ok = False
        if not ok:
            continue
        R_cb = cv2.Rodrigues(rvec)[0]
        Rt = rot_from_euler(s.roll_rad, s.pitch_rad, 0.0)
        downs.append(R_cb @ Rt.T @ np.array([0.0, 0.0, 1.0]))
        poses.append((s, tvec.ravel()))
    roll = pitch = 0.0
    if downs:
        g = np.median(np.array(downs), axis=0)
        g /= np.linalg.norm(g)
        pitch, roll = math.asin(max(-1.0, min(1.0, -g[0]))), math.atan2(g[1], g[2])
        if math.degrees(math.acos(min(1.0, g[2]))) > 45.0:
            roll = pitch = 0.0
    R = rot_from_euler(roll, pitch, heading)
    hs = []
    for s, t in poses:
        depth = s.depth_m if s.z_m is None else s.z_m - wz
        hs.append(float((R @ t)[2]) - depth / setup.n_water)
    h = float(np.clip(np.median(hs), 0.2, 100.0)) if hs else 2.0
    return np.array([roll, pitch, heading, 0.0, 0.0, h, wz])


def initial_poses(model: WaterModel, dets: list[list[Detection]], cam: np.ndarray) -> np.ndarray:
    """(x, y, yaw) per image by the refraction-aware closed form through ``cam``."""
    meas = RefractionMeasurer(model.setup(cam), MeasurerOptions(max_rms_m=1e9))
    out = np.zeros((model.n, 3))
    for k, (s, ds) in enumerate(zip(model.samples, dets)):
        depth = s.depth_m if s.z_m is None else s.z_m - cam[6]
        m = meas.measure(ds, depth, s.roll_rad, s.pitch_rad)
        if m.valid:
            out[k] = (m.x, m.y, m.yaw)
        else:
            out[k] = (cam[3], cam[4], 0.0)
    return out


def align_known(model: WaterModel, heading_free: bool,
                 xy_free: bool) -> tuple[np.ndarray, np.ndarray]:
    """Move the provisional world (camera and poses) onto the known positions/yaws: a
    rotation about the vertical (when the heading is free) and a translation (when
    x, y are)."""
    cam, img = model.cam.copy(), model.img.copy()
    if not (heading_free or xy_free):
        return cam, img
    S = model.samples
    alpha = 0.0
    if heading_free:
        ky = [k for k, s in enumerate(S) if s.yaw_rad is not None]
        kx = [k for k, s in enumerate(S) if s.known_xy]
        if ky:
            d = np.array([S[k].yaw_rad - img[k, 2] for k in ky])
            alpha = math.atan2(np.mean(np.sin(d)), np.mean(np.cos(d)))
        elif len(kx) >= 2:
            A = img[kx, :2] - img[kx, :2].mean(axis=0)
            B = np.array([[S[k].x_m, S[k].y_m] for k in kx])
            B = B - B.mean(axis=0)
            alpha = math.atan2(float(np.sum(A[:, 0] * B[:, 1] - A[:, 1] * B[:, 0])),
                               float(np.sum(A * B)))
    c, s_ = math.cos(alpha), math.sin(alpha)
    R2 = np.array([[c, -s_], [s_, c]])
    C = cam[3:5].copy()
    xy = (img[:, :2] - C) @ R2.T + C  # rotate about the camera's foot
    tau = np.zeros(2)
    if xy_free:
        kx = [k for k, s in enumerate(S) if s.known_xy]
        tau = np.mean([np.array([S[k].x_m, S[k].y_m]) - xy[k] for k in kx], axis=0)
    img[:, :2] = xy + tau
    img[:, 2] = img[:, 2] + alpha
    cam[3:5] = C + tau
    cam[2] = cam[2] + alpha
    return cam, img
