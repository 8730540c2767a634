"""The water calibration's model: the camera parameters, the residuals through the
refraction model, their structured Jacobian and the Levenberg-Marquardt solve."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...sdk.frames import euler_from_rot, rot_from_euler
from ..pool_setup import PoolSetup
from ..refraction import RefractiveCamera
from .manifest import WaterSample


# Camera parameters of the fit: R_wc = R_z(heading) R_y(pitch) R_x(roll) (so with all
# three 0 the camera looks straight down with image +x along world +x, +y along
# world +y); t_wc = (x, y, water_z - height).
CAM = ("roll", "pitch", "heading", "x", "y", "height", "water_z")
_STEP = 1e-6


def camera_angles(R: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, heading) with R = R_z(heading) R_y(pitch) R_x(roll) (the camera's
    ZYX angles, :func:`moonpool.components.sdk.frames.euler_from_rot`)."""
    return euler_from_rot(R)


class WaterModel:
    """Residuals (projected - detected corners, px) and their structured Jacobian."""

    def __init__(self, base: PoolSetup, samples: list[WaterSample],
                 obs: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.base = base
        self.samples = samples
        n = len(samples)
        self.n = n
        ct, px, idx = [], [], []
        for i, (s, (cb, p)) in enumerate(zip(samples, obs)):
            Rt = rot_from_euler(s.roll_rad, s.pitch_rad, 0.0)
            ct.append(cb @ Rt.T)
            px.append(p)
            idx.append(np.full(len(cb), i))
        self.ct = np.concatenate(ct)
        self.px = np.concatenate(px)
        self.idx = np.concatenate(idx)
        self.rel = np.array([s.z_m is None for s in samples])
        self.zval = np.array([s.depth_m if s.z_m is None else s.z_m for s in samples], float)
        self.row_img = np.repeat(self.idx, 2)  # image of each residual row
        self.cam = np.zeros(7)
        self.img = np.zeros((n, 3))
        self.cam_free = np.ones(7, bool)
        self.img_free = np.ones((n, 3), bool)

    # -- parameters ------------------------------------------------------------------

    @property
    def n_free(self) -> int:
        return int(self.cam_free.sum() + self.img_free.sum())

    def setup(self, cam: np.ndarray) -> PoolSetup:
        R = rot_from_euler(cam[0], cam[1], cam[2])
        return dataclasses.replace(self.base, R_wc_rows=tuple(tuple(map(float, r)) for r in R),
                                   t_wc=(float(cam[3]), float(cam[4]), float(cam[6] - cam[5])),
                                   water_z=float(cam[6]))

    def world(self, cam: np.ndarray, img: np.ndarray, dz: np.ndarray | None = None) -> np.ndarray:
        i = self.idx
        c, s = np.cos(img[i, 2]), np.sin(img[i, 2])
        zb = np.where(self.rel, cam[6] + self.zval, self.zval)
        if dz is not None:
            zb = zb + dz
        x = img[i, 0] + c * self.ct[:, 0] - s * self.ct[:, 1]
        y = img[i, 1] + s * self.ct[:, 0] + c * self.ct[:, 1]
        return np.stack([x, y, zb[i] + self.ct[:, 2]], axis=-1)

    def raw(self, cam: np.ndarray, img: np.ndarray, dz=None, setup=None) -> np.ndarray:
        cam_obj = RefractiveCamera(setup or self.setup(cam))
        r = (cam_obj.project(self.world(cam, img, dz)) - self.px).ravel()
        return np.where(np.isfinite(r), r, 1e4)

    # -- Jacobian (central differences, structured) -----------------------------------

    def blocks(self, cam: np.ndarray, img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """J_cam (2M x free camera params) and d (2M x 3): each row's derivative by its
        own image's x, y, yaw (0 where that parameter is known)."""
        cols = np.flatnonzero(self.cam_free)
        Jc = np.empty((2 * len(self.px), len(cols)))
        for k, j in enumerate(cols):
            cp, cm = cam.copy(), cam.copy()
            cp[j] += _STEP
            cm[j] -= _STEP
            Jc[:, k] = (self.raw(cp, img) - self.raw(cm, img)) / (2 * _STEP)
        d = np.zeros((2 * len(self.px), 3))
        setup = self.setup(cam)
        for q in range(3):
            if not self.img_free[:, q].any():
                continue
            ip, im = img.copy(), img.copy()
            ip[:, q] += _STEP * self.img_free[:, q]
            im[:, q] -= _STEP * self.img_free[:, q]
            d[:, q] = (self.raw(cam, ip, setup=setup) - self.raw(cam, im, setup=setup)) / (2 * _STEP)
        return Jc, d

    def normal_blocks(self, Jc: np.ndarray, d: np.ndarray):
        """Blocks of JᵀJ: A (camera), B (per image: camera x pose), D (per image: pose)."""
        ri = self.row_img
        B = np.zeros((self.n, Jc.shape[1], 3))
        np.add.at(B, ri, Jc[:, :, None] * d[:, None, :])
        D = np.zeros((self.n, 3, 3))
        np.add.at(D, ri, d[:, :, None] * d[:, None, :])
        return Jc.T @ Jc, B, D

    def segment(self, Jc: np.ndarray, d: np.ndarray, e: np.ndarray):
        """(Jcᵀ e per image (n x nc), dᵀ e per image (n x 3)) for a row vector e."""
        hc = np.zeros((self.n, Jc.shape[1]))
        np.add.at(hc, self.row_img, Jc * e[:, None])
        hi = np.zeros((self.n, 3))
        np.add.at(hi, self.row_img, d * e[:, None])
        return hc, hi

    def solve(self, cam: np.ndarray, img: np.ndarray, max_iter: int = 100):
        """Levenberg-Marquardt on the camera and the per-image poses, the pose blocks
        eliminated (Schur complement): small dense systems only, any number of images.
        The height is kept >= 2 cm. Returns (cam, img, residuals, iterations, converged)."""
        fixed = ~self.img_free
        cf = self.cam_free
        hk = CAM.index("height")
        r = self.raw(cam, img)
        cost = float(r @ r)
        lam = 1e-3
        it, converged = 0, False
        for it in range(1, max_iter + 1):
            Jc, d = self.blocks(cam, img)
            A, B, D = self.normal_blocks(Jc, d)
            gc = Jc.T @ r
            _hc, gi = self.segment(Jc, d, r)
            improved = False
            while lam < 1e12:
                Al = A + lam * np.diag(np.diag(A)) + 1e-12 * np.eye(len(A))
                Dl = D + lam * D * np.eye(3) + np.eye(3) * (fixed[:, :, None] + 1e-12)
                Di = np.linalg.inv(Dl)
                BDi = np.einsum("iak,ikl->ial", B, Di)
                S = Al - np.einsum("ial,ibl->ab", BDi, B)
                rhs = -(gc - np.einsum("ial,il->a", BDi, gi))
                dc = np.linalg.solve(S, rhs)
                di = -np.einsum("ikl,il->ik", Di, gi + np.einsum("iak,a->ik", B, dc))
                di[fixed] = 0.0
                cam_n, img_n = cam.copy(), img.copy()
                cam_n[cf] += dc
                cam_n[hk] = max(cam_n[hk], 0.02)
                img_n += di
                r_n = self.raw(cam_n, img_n)
                cost_n = float(r_n @ r_n)
                if cost_n <= cost:
                    small = (np.max(np.abs(dc), initial=0.0) < 1e-11
                             and np.max(np.abs(di), initial=0.0) < 1e-11)
                    flat = cost - cost_n <= 1e-15 * max(cost, 1e-30)
                    cam, img, r, cost = cam_n, img_n, r_n, cost_n
                    lam = max(lam / 4.0, 1e-12)
                    improved = True
                    converged = small or flat
                    break
                lam *= 4.0
            if not improved:
                converged = True  # no step lowers the cost: a minimum (to rounding)
                break
            if converged:
                break
        return cam, img, r, it, converged

    # -- inputs' sensitivities -----------------------------------------------------------

    def input_columns(self, cam: np.ndarray, img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d r / d z (per image, as one 2M vector: image i's rows belong to its z) and
        d r / d(n_water, focal scale) (2M x 2)."""
        h = 1e-6
        dz = (self.raw(cam, img, np.full(self.n, h))
              - self.raw(cam, img, np.full(self.n, -h))) / (2 * h)
        E = np.empty((len(dz), 2))
        base = self.setup(cam)
        for k, change in enumerate(("n_water", "focal")):
            outs = []
            for sgn in (1, -1):
                if change == "n_water":
                    s = dataclasses.replace(base, n_water=base.n_water + sgn * h)
                else:
                    fx, fy, cx, cy = base.K
                    scale = 1 + sgn * h
                    s = dataclasses.replace(base, K=(fx * scale, fy * scale, cx, cy))
                outs.append(self.raw(cam, img, setup=s))
            E[:, k] = (outs[0] - outs[1]) / (2 * h)
        return dz, E
