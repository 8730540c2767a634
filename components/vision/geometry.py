"""Camera geometry: OpenCV intrinsics and distortion, the mount, and the per-pixel
rays cast through the world's ray engine (docs/deepsea-camera.md, "Geometry").

Call order::

    cam = CameraModel(width, height, K, dist)        # checks; undistorts every pixel once
    mount = CameraMount(xyz_m, rpy_rad)              # camera frame on the body
    frame = cast_frame(engine, cam, mount, p_ned, q_body_to_ned, max_range_m)
    frame.range_m, frame.z_depth_m, frame.normal_cam, frame.label, frame.instance

**Frames.** The camera frame is OpenCV's: x right, y down (in the image), z along the
optical axis. Pixel centres are at integer (u, v). A pixel's ray is the normalised
image point (x, y) = undistort(u, v) (``cv2.undistortPoints``, iterated to 1e-12,
then polished by Newton on the distortion model), direction d_c = (x, y, 1)/|.|: a
constant of the camera, computed once. With zero mount angles the camera looks
forward (camera z = body x, camera x = body y, camera y = body z); the mount's
roll/pitch/yaw (ZYX, rad) rotate that: R_bc = R(φ, θ, ψ) · C0. A down-looking camera
with the image top forward is pitch = -90° (the default of the component).

World rays: d_w = R_wb R_bc d_c from C = p + R_wb r (r the lever arm). From the hit
range t along the unit ray: z-depth Z = t · d_c,z (distance along the optical axis).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from ..sdk.frames import rot_from_euler, rot_from_quat

C0 = np.array([[0.0, 0.0, 1.0],
               [1.0, 0.0, 0.0],
               [0.0, 1.0, 0.0]])
"""Camera -> body rotation of a forward-looking camera (columns: camera x, y, z in the body)."""


@dataclass(frozen=True)
class CameraModel:
    """OpenCV pinhole camera with radial-tangential distortion (k1, k2, p1, p2, k3)."""

    width: int
    """Image width, px."""
    height: int
    """Image height, px."""
    K: tuple[float, ...]
    """Camera matrix, row-major 3 x 3: (fx, 0, cx, 0, fy, cy, 0, 0, 1), px."""
    dist: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    """Distortion (k1, k2, p1, p2, k3), OpenCV's order."""
    rays_cam: np.ndarray = field(init=False, repr=False, compare=False)
    """(H, W, 3) unit ray directions of the pixel centres, camera frame."""

    def __post_init__(self) -> None:
        if not (isinstance(self.width, int) and isinstance(self.height, int)
                and self.width >= 2 and self.height >= 2):
            raise ValueError(f"image size {self.width} x {self.height}: give integers >= 2")
        K = np.asarray(self.K, float).reshape(-1)
        if K.size != 9 or not np.all(np.isfinite(K)) or K[0] <= 0 or K[4] <= 0:
            raise ValueError("K must be 9 finite numbers (row-major 3x3) with fx, fy > 0")
        if len(self.dist) != 5 or not np.all(np.isfinite(self.dist)):
            raise ValueError("dist must be 5 finite numbers (k1, k2, p1, p2, k3)")
        object.__setattr__(self, "rays_cam", self._rays())

    @classmethod
    def from_fov(cls, width: int, height: int, hfov_deg: float, dist=(0.0,) * 5) -> CameraModel:
        """A camera of horizontal field of view ``hfov_deg`` (square pixels, centred)."""
        fx = 0.5 * width / np.tan(np.radians(hfov_deg) / 2)
        return cls(width, height, (fx, 0.0, (width - 1) / 2, 0.0, fx, (height - 1) / 2,
                                   0.0, 0.0, 1.0), tuple(float(d) for d in dist))

    @property
    def matrix(self) -> np.ndarray:
        return np.asarray(self.K, float).reshape(3, 3)

    def distort(self, xy: np.ndarray) -> np.ndarray:
        """Normalised (x, y) -> distorted normalised (x_d, y_d), OpenCV's model."""
        k1, k2, p1, p2, k3 = self.dist
        x, y = xy[..., 0], xy[..., 1]
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        return np.stack([xd, yd], axis=-1)

    def project(self, points_cam: np.ndarray) -> np.ndarray:
        """(N, 3) camera-frame points -> (N, 2) pixels (as ``cv2.projectPoints``)."""
        p = np.asarray(points_cam, float)
        xy = p[..., :2] / p[..., 2:3]
        d = self.distort(xy)
        K = self.matrix
        return np.stack([K[0, 0] * d[..., 0] + K[0, 1] * d[..., 1] + K[0, 2],
                         K[1, 1] * d[..., 1] + K[1, 2]], axis=-1)

    def rays_at(self, uv: np.ndarray) -> np.ndarray:
        """(N, 2) pixel coordinates -> (N, 3) unit camera-frame ray directions."""
        uv = np.asarray(uv, float).reshape(-1, 1, 2)
        xy = cv2.undistortPoints(uv, self.matrix, np.asarray(self.dist, float), None, None, None,
                                 (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12))
        xy = self._polish(xy.reshape(-1, 2), uv.reshape(-1, 2))
        d = np.concatenate([xy, np.ones((len(xy), 1))], axis=1)
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def _rays(self) -> np.ndarray:
        u, v = np.meshgrid(np.arange(self.width, dtype=float), np.arange(self.height, dtype=float))
        uv = np.stack([u, v], axis=-1).reshape(-1, 2)
        return self.rays_at(uv).reshape(self.height, self.width, 3)

    def _polish(self, xy: np.ndarray, uv: np.ndarray, iterations: int = 3) -> np.ndarray:
        """Newton steps on distort(x, y) = K^-1 (u, v) (numerical Jacobian): the
        undistortion exact to ~1e-12 of a normalised unit wherever it converges."""
        K = self.matrix
        target = np.stack([(uv[:, 0] - K[0, 2] - K[0, 1] * (uv[:, 1] - K[1, 2]) / K[1, 1]) / K[0, 0],
                           (uv[:, 1] - K[1, 2]) / K[1, 1]], axis=1)
        h = 1e-7
        for _ in range(iterations):
            f = self.distort(xy) - target
            jx = (self.distort(xy + [h, 0.0]) - self.distort(xy - [h, 0.0])) / (2 * h)
            jy = (self.distort(xy + [0.0, h]) - self.distort(xy - [0.0, h])) / (2 * h)
            det = jx[:, 0] * jy[:, 1] - jy[:, 0] * jx[:, 1]
            ok = np.abs(det) > 1e-12
            dx = np.where(ok, (jy[:, 1] * f[:, 0] - jy[:, 0] * f[:, 1]) / np.where(ok, det, 1), 0)
            dy = np.where(ok, (-jx[:, 1] * f[:, 0] + jx[:, 0] * f[:, 1]) / np.where(ok, det, 1), 0)
            xy = xy - np.stack([dx, dy], axis=1)
        return xy


@dataclass(frozen=True)
class CameraMount:
    """Where the camera sits on the vehicle (body frame FRD)."""

    xyz_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Lever arm of the camera centre in the body frame, m."""
    rpy_rad: tuple[float, float, float] = (0.0, -np.pi / 2, 0.0)
    """Roll, pitch, yaw (ZYX, rad) of the camera relative to a forward-looking one
    (default: pitch -90°, looking down, image top forward)."""

    @property
    def R_bc(self) -> np.ndarray:
        """Camera -> body rotation."""
        return rot_from_euler(*self.rpy_rad) @ C0


@dataclass(frozen=True)
class CameraPose:
    """The camera in the world at one instant."""

    C_ned: np.ndarray
    """Camera centre, NED, m."""
    R_wc: np.ndarray
    """Camera -> NED rotation."""

    @classmethod
    def from_vehicle(cls, mount: CameraMount, position_ned, quaternion_wxyz) -> CameraPose:
        R_wb = rot_from_quat(np.asarray(quaternion_wxyz, float))
        C = np.asarray(position_ned, float) + R_wb @ np.asarray(mount.xyz_m, float)
        return cls(C, R_wb @ mount.R_bc)


@dataclass(frozen=True)
class GeometryFrame:
    """What each pixel's ray hits (H x W arrays)."""

    range_m: np.ndarray
    """(H, W) float64 distance from the camera centre along the ray, m; inf: no hit."""
    z_depth_m: np.ndarray
    """(H, W) float64 depth along the optical axis (t · d_c,z), m; inf: no hit."""
    normal_ned: np.ndarray
    """(H, W, 3) unit surface normals, NED, turned toward the camera; nan: no hit."""
    point_ned: np.ndarray
    """(H, W, 3) hit points, NED, m; nan: no hit."""
    label: np.ndarray
    """(H, W) int32 class id (0: no hit)."""
    instance: np.ndarray
    """(H, W) int32 instance id (0: no hit)."""
    triangle: np.ndarray
    """(H, W) int64 triangle of the combined mesh (-1: no hit)."""
    pose: CameraPose
    """The camera pose of the frame."""
    rays_ned: np.ndarray | None = None
    """(H*W, 3) the unit pixel rays in NED the frame was cast with (``world_rays``)."""

    @property
    def hit(self) -> np.ndarray:
        return np.isfinite(self.range_m)

    @property
    def normal_cam(self) -> np.ndarray:
        """(H, W, 3) normals in the camera frame."""
        return self.normal_ned @ self.pose.R_wc


def world_rays(cam: CameraModel, pose: CameraPose) -> np.ndarray:
    """(H*W, 3) unit ray directions in NED."""
    return cam.rays_cam.reshape(-1, 3) @ pose.R_wc.T


def cast_frame(engine, cam: CameraModel, pose: CameraPose, max_range_m: float) -> GeometryFrame:
    """Cast every pixel's ray from the camera centre through ``engine`` (a world
    ``RayEngine``) up to ``max_range_m``."""
    d = world_rays(cam, pose)
    hits = engine.cast(pose.C_ned, d, max_range_m)
    shape = (cam.height, cam.width)
    t = hits.distance_m.reshape(shape)
    z = t * cam.rays_cam[..., 2]
    return GeometryFrame(t, z, hits.normal_ned.reshape(shape + (3,)),
                         hits.point_ned.reshape(shape + (3,)), hits.label.reshape(shape),
                         hits.instance.reshape(shape), hits.triangle.reshape(shape), pose, d)
