"""Pose measurements from detected tag corners (docs/localization.md, "Measurement").

**Refraction-aware** (``RefractionMeasurer``). Pressure gives the depth d of the body
origin below the water surface (world z = water_z + d), the IMU roll phi and pitch
theta. A body-frame corner c lies at world height

    z = water_z + d + (R_z(psi) R_y(theta) R_x(phi) c)_z = water_z + d + (R_y(theta) R_x(phi) c)_z

which does not depend on the yaw psi (R_z leaves z alone), so each detected corner is
back-projected exactly (undistort -> ray -> water plane -> Snell) to its own depth
plane, giving world points X_i (horizontal). With q_i = (R_y R_x c_i)_xy the model is
the 2-D rigid map X_i = p + R(psi) q_i; its least-squares solution is closed form
(2-D Procrustes: psi = atan2(sum q'_i x X'_i, sum q'_i . X'_i) on centred points,
p = mean X - R(psi) mean q). Covariance of (x, y, psi)::

    Sigma = max(s^2, s_floor^2) (J^T J)^-1 + G diag(s_d^2, s_phi^2, s_theta^2) G^T
            + diag(s_cal^2, s_cal^2, 0)

with s^2 = |r|^2 / (2N - 3) from the residuals r, J the Jacobian of the model,
G = d(x, y, psi)/d(d, phi, theta) (central differences of the whole solution), so the
pressure and IMU noise the measurement rests on appear in its covariance, and s_cal
the calibration's horizontal uncertainty (systematic).

**Pinhole PnP baseline** (``PinholeMeasurer``): ``cv2.solvePnP`` with
``SOLVEPNP_IPPE_SQUARE`` per tag, ignoring the water; the body pose follows from the
tag's mount; positions of several tags are averaged. Light bends towards the normal
entering the water, so the tag looks bigger and nearer: depth comes out about
d_air + d_water / 1.333 and the horizontal position is pulled towards the camera's
nadir (the error grows with the off-axis distance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
from moonpool.v1 import common_pb2

from ..sdk.frames import rot_from_euler
from .detect import Detection
from .pool_setup import PoolSetup
from .refraction import RefractiveCamera
from .tags import tag_axes_body

NOT_DETECTED = common_pb2.REFUSAL_REASON_NOT_DETECTED
NO_LOCK = common_pb2.REFUSAL_REASON_NO_LOCK
UPSTREAM_INVALID = common_pb2.REFUSAL_REASON_UPSTREAM_INVALID


@dataclass
class Measurement:
    """A horizontal pose measurement, or a refusal with its reason."""

    method: str
    valid: bool = False
    reason: int = 0
    detail: str = ""
    x: float = math.nan
    y: float = math.nan
    z: float = math.nan
    """World z of the body origin: water_z + the pressure depth (refraction) or PnP's
    estimate."""
    yaw: float = math.nan
    covariance: np.ndarray = field(default_factory=lambda: np.full((3, 3), np.nan))
    """Covariance of (x, y, yaw): m^2, m rad, rad^2."""
    n_corners: int = 0
    tags: tuple[int, ...] = ()
    rms_residual_m: float = math.nan
    ignored: list[str] = field(default_factory=list)
    """What was seen but not used, and why (unknown ids, dropped tags)."""

    @classmethod
    def refuse(cls, method: str, reason: int, detail: str, ignored=()) -> Measurement:
        return cls(method=method, valid=False, reason=reason, detail=detail, ignored=list(ignored))


def _known(setup: PoolSetup, detections: list[Detection]) -> tuple[list[Detection], list[str]]:
    ids = set(setup.tag_ids)
    used, ignored = [], []
    for d in detections:
        if d.id in ids:
            used.append(d)
        else:
            ignored.append(f"tag {d.id} is not in the layout")
    return used, ignored


def _no_tag_refusal(method: str, ignored: list[str]) -> Measurement:
    if ignored:
        return Measurement.refuse(method, NOT_DETECTED,
                                  "no tag of the layout in view (" + "; ".join(ignored) + ")",
                                  ignored)
    return Measurement.refuse(method, NOT_DETECTED, "no tag in view")


def wrap(a):
    """a wrapped into [−π, π) as (a + π) mod 2π − π, elementwise.

    Not ``sdk.frames.wrap_angle`` (exact, (−π, π]): adding π rounds away the low bits
    of a small a, and those rounded bits are in the published covariances (the yaw
    column of the tilt/depth Jacobian, the yaw spread), so the recorded digests of the
    localized rigs depend on this form."""
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


@dataclass(frozen=True)
class MeasurerOptions:
    sigma_floor_m: float = 0.0005
    """Lower bound of the per-coordinate corner scatter used for the covariance, m."""
    depth_sigma_m: float = 0.003
    """Standard deviation of the pressure depth, m (covariance only)."""
    attitude_sigma_rad: float = 0.003
    """Standard deviation of the IMU roll and pitch, rad (covariance only)."""
    calibration_sigma_m: float = 0.002
    """Horizontal uncertainty of the camera calibration at the tags, m: added to the x and
    y variances (it is systematic, not white: a filter should not average it away)."""
    max_rms_m: float = 0.02
    """A fit with a larger RMS corner residual is inconsistent: the worst tag is dropped,
    and if that does not help the measurement is refused."""


def _rotation_and_offset(a: float, b: float, qm: np.ndarray, Xm: np.ndarray):
    """The 2-D rigid fit's closing step: yaw = atan2(b, a) from the centred sums
    a = Σ q·X and b = Σ q × X, its rotation R2 and the offset p = X̄ − R2 q̄."""
    yaw = math.atan2(b, a)
    c, s = math.cos(yaw), math.sin(yaw)
    R2 = np.array([[c, -s], [s, c]])
    return yaw, R2, Xm - R2 @ qm


class RefractionMeasurer:
    """Refraction-aware horizontal position and yaw from tag corners, depth and tilt."""

    method = "refraction"

    def __init__(self, setup: PoolSetup, options: MeasurerOptions = MeasurerOptions()) -> None:
        self.setup = setup
        self.options = options
        self.camera = RefractiveCamera(setup)

    def _solve(self, rays: np.ndarray, cb: np.ndarray, depth: float, roll: float, pitch: float,
               hits=None):
        """Closed-form fit from the corners' air rays (N, 3) (``hits``: their points and
        refracted directions at the water, when known); returns (x, y, yaw, residuals
        (N, 2), q (N, 2), used (N,)) or None."""
        Rt = rot_from_euler(roll, pitch, 0.0)  # R_y(pitch) R_x(roll)
        ct = cb @ Rt.T
        z = self.camera.water_z + depth + ct[:, 2]
        X = self.camera.back_project_rays(rays, z, hits)[:, :2]
        ok = np.all(np.isfinite(X), axis=1)
        if ok.sum() < 2:
            return None
        X, q = X[ok], ct[ok, :2]
        qm, Xm = q.mean(axis=0), X.mean(axis=0)
        qc, Xc = q - qm, X - Xm
        a = float(np.sum(qc * Xc))
        b = float(np.sum(qc[:, 0] * Xc[:, 1] - qc[:, 1] * Xc[:, 0]))
        yaw, R2, p = _rotation_and_offset(a, b, qm, Xm)
        r = p + q @ R2.T - X
        return p[0], p[1], yaw, r, q, ok

    def _solve_many(self, rays: np.ndarray, cb: np.ndarray, cases: list[tuple[float, float, float]],
                    hits) -> list:
        """``_solve`` for each (depth, roll, pitch) of ``cases`` (the fit and its
        finite differences), at once: the back-projections, means and sums of all the
        cases in one NumPy call each, on the same values in the same order (the
        per-case rotations and products stay per case), so the same bits as solving
        them one by one (``test_solving_the_cases_together_gives_the_same_bits``).
        Only the first case's residuals, q and mask are returned (the others: None);
        a corner that cannot be back-projected in some case sends them all one by one."""
        cam = self.camera
        ct = np.stack([cb @ rot_from_euler(roll, pitch, 0.0).T for _, roll, pitch in cases])
        z = np.array([cam.water_z + depth for depth, _, _ in cases])[:, None] + ct[:, :, 2]
        shape = (len(cases),) + rays.shape
        S, t = hits
        P = cam.back_project_rays(np.broadcast_to(rays, shape), z,
                                  (np.broadcast_to(S, shape), np.broadcast_to(t, shape)))
        X = P[:, :, :2]
        ok = np.all(np.isfinite(X), axis=2)
        if not ok.all() or ok.shape[1] < 2:
            return [self._solve(rays, cb, *c, hits) for c in cases]
        X, q = np.ascontiguousarray(X), np.ascontiguousarray(ct[:, :, :2])
        qm, Xm = q.mean(axis=1), X.mean(axis=1)
        qc, Xc = q - qm[:, None, :], X - Xm[:, None, :]
        a = np.sum(qc * Xc, axis=(1, 2)).tolist()
        b = np.sum(qc[:, :, 0] * Xc[:, :, 1] - qc[:, :, 1] * Xc[:, :, 0], axis=1).tolist()
        out = []
        for k in range(len(cases)):
            yaw, R2, p = _rotation_and_offset(a[k], b[k], qm[k], Xm[k])
            if k:
                out.append((p[0], p[1], yaw, None, None, None))
            else:
                out.append((p[0], p[1], yaw, p + q[0] @ R2.T - X[0], q[0], ok[0]))
        return out

    def measure(self, detections: list[Detection], depth_m: float, roll_rad: float,
                pitch_rad: float) -> Measurement:
        m = self.method
        if not all(math.isfinite(v) for v in (depth_m, roll_rad, pitch_rad)):
            return Measurement.refuse(m, UPSTREAM_INVALID,
                                      "no valid depth (pressure) or roll/pitch (IMU)")
        used, ignored = _known(self.setup, detections)
        if not used:
            return _no_tag_refusal(m, ignored)
        groups = {d.id: d for d in used}
        while True:
            res = self._fit(list(groups.values()), depth_m, roll_rad, pitch_rad)
            if res is None:
                return Measurement.refuse(m, NO_LOCK, "no tag corner could be back-projected",
                                          ignored)
            if res.rms_residual_m <= self.options.max_rms_m:
                res.ignored = ignored
                return res
            if len(groups) == 1:
                return Measurement.refuse(
                    m, NO_LOCK, f"tag geometry inconsistent: RMS corner residual "
                    f"{res.rms_residual_m * 100:.1f} cm > {self.options.max_rms_m * 100:.1f} cm "
                    "(wrong tag_size_m, layout or camera calibration?)", ignored)
            # Drop the tag that disagrees most (leave-one-out).
            best = None
            for tid in groups:
                sub = [d for k, d in groups.items() if k != tid]
                r2 = self._fit(sub, depth_m, roll_rad, pitch_rad)
                if r2 is not None and (best is None or r2.rms_residual_m < best[1]):
                    best = (tid, r2.rms_residual_m)
            if best is None:
                return Measurement.refuse(m, NO_LOCK, "tag geometry inconsistent", ignored)
            ignored.append(f"tag {best[0]} disagrees with the others (dropped)")
            del groups[best[0]]

    def _fit(self, dets: list[Detection], depth, roll, pitch) -> Measurement | None:
        px = np.concatenate([d.corners for d in dets])
        cb = np.concatenate([self.setup.corners_body(d.id) for d in dets])
        rays = self.camera.rays(self.camera.normalized(px))  # undistorted once
        hits = self.camera.surface_hits(rays)  # and refracted once, for the seven solutions
        o = self.options
        # The fit, then the fits with the depth and the tilt moved by ± a step each
        # (central differences propagate their uncertainty), solved together.
        steps = (1e-4, 1e-5, 1e-5)
        sig = (o.depth_sigma_m, o.attitude_sigma_rad, o.attitude_sigma_rad)
        cases = [(depth, roll, pitch)]
        for k, h in enumerate(steps):
            if sig[k] > 0:
                for sign in (1, -1):
                    args = [depth, roll, pitch]
                    args[k] += sign * h
                    cases.append(tuple(args))
        sols = self._solve_many(rays, cb, cases, hits)
        sol = sols[0]
        if sol is None:
            return None
        x, y, yaw, r, q, ok = sol
        n = int(ok.sum())
        dof = 2 * n - 3
        s2 = float(np.sum(r * r) / dof) if dof > 0 else 0.0
        s2 = max(s2, o.sigma_floor_m ** 2)
        c, s = math.cos(yaw), math.sin(yaw)
        Rq = q @ np.array([[c, -s], [s, c]]).T
        J = np.zeros((2 * n, 3))
        J[0::2, 0] = 1.0
        J[1::2, 1] = 1.0
        J[0::2, 2] = -Rq[:, 1]
        J[1::2, 2] = Rq[:, 0]
        cov = s2 * np.linalg.inv(J.T @ J)
        # Propagate the depth and tilt uncertainty (central differences).
        G = np.zeros((3, 3))
        pairs = iter(sols[1:])
        for k, h in enumerate(steps):
            if sig[k] <= 0:
                continue
            sp, sm = next(pairs), next(pairs)
            if sp is None or sm is None:
                continue
            G[:, k] = [(sp[0] - sm[0]) / (2 * h), (sp[1] - sm[1]) / (2 * h),
                       float(wrap(sp[2] - sm[2])) / (2 * h)]
        cov = cov + G @ np.diag(np.square(sig)) @ G.T
        cov[0, 0] += o.calibration_sigma_m ** 2
        cov[1, 1] += o.calibration_sigma_m ** 2
        return Measurement(method=self.method, valid=True, x=float(x), y=float(y),
                           z=float(self.camera.water_z + depth), yaw=float(yaw),
                           covariance=0.5 * (cov + cov.T),
                           n_corners=n, tags=tuple(d.id for d in dets),
                           rms_residual_m=float(math.sqrt(np.mean(np.sum(r * r, axis=1)))))


class PinholeMeasurer:
    """The baseline: per-tag ``SOLVEPNP_IPPE_SQUARE`` through a pinhole camera, no water."""

    method = "pinhole"

    def __init__(self, setup: PoolSetup) -> None:
        self.setup = setup
        self.K = setup.camera_matrix
        self.dist = setup.dist_coeffs
        self.R_wc = setup.R_wc
        self.C = setup.camera_center
        h = 0.5 * setup.tag_size_m
        # OpenCV's order for IPPE_SQUARE (x right, y up on the tag): top-left, top-right,
        # bottom-right, bottom-left = detector corners 3, 2, 1, 0.
        self.object_points = np.array([[-h, h, 0.0], [h, h, 0.0], [h, -h, 0.0], [-h, -h, 0.0]])
        self.order = [3, 2, 1, 0]

    def body_pose(self, d: Detection) -> tuple[np.ndarray, np.ndarray] | None:
        """(body origin in the world, R_wb) from one tag, or None."""
        img = np.ascontiguousarray(d.corners[self.order], dtype=np.float64)
        ok, rvec, tvec = cv2.solvePnP(self.object_points, img, self.K, self.dist,
                                      flags=cv2.SOLVEPNP_IPPE_SQUARE)
        if not ok:
            return None
        R_ct, _ = cv2.Rodrigues(rvec)
        mount = self.setup.tag(d.id)
        top, right, normal = tag_axes_body(mount.yaw_b_rad)
        R_bt = np.column_stack([right, top, normal])  # tag (x right, y up, z out) -> body
        R_cb = R_ct @ R_bt.T
        o_c = tvec.ravel() - R_cb @ np.asarray(mount.center_b)
        return self.C + self.R_wc @ o_c, self.R_wc @ R_cb

    def measure(self, detections: list[Detection], *_ignored_inputs) -> Measurement:
        m = self.method
        used, ignored = _known(self.setup, detections)
        if not used:
            return _no_tag_refusal(m, ignored)
        ps, yaws, tags = [], [], []
        for d in used:
            pose = self.body_pose(d)
            if pose is None:
                ignored.append(f"tag {d.id}: solvePnP failed")
                continue
            p, R = pose
            ps.append(p)
            yaws.append(math.atan2(R[1, 0], R[0, 0]))
            tags.append(d.id)
        if not ps:
            return Measurement.refuse(m, NO_LOCK, "solvePnP failed for every tag", ignored)
        P = np.array(ps)
        p = P.mean(axis=0)
        yaw = math.atan2(np.mean(np.sin(yaws)), np.mean(np.cos(yaws)))
        cov = np.diag([1e-4, 1e-4, 1e-3])  # nominal: (1 cm)^2, (1 cm)^2, (0.03 rad)^2
        if len(ps) > 1:
            spread = np.cov(np.column_stack([P[:, :2], wrap(np.array(yaws) - yaw)]).T)
            cov = cov + spread / len(ps)
        return Measurement(method=m, valid=True, x=float(p[0]), y=float(p[1]), z=float(p[2]),
                           yaw=float(yaw), covariance=cov, n_corners=4 * len(ps),
                           tags=tuple(tags), ignored=ignored)
