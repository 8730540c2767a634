"""Extrinsics and water plane: R_wc, t_wc and the camera height above the water from
images of AprilTags at known depths, through the refraction model; the covariance
and the sensitivities to the inputs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...sdk.errors import ParameterError
from ..detect import Detection, DetectorOptions, TagDetector
from ..pool_setup import PoolSetup
from .common import CalibrationFailed, listing, nan_to_none
from .images import read_gray
from .manifest import MANIFEST_FILE, WaterSample, read_water_manifest
from .setup_file import load_water_setup
from .water_model import CAM, WaterModel, camera_angles
from .water_start import align_known, freedoms, initial_camera, initial_poses


@dataclass(frozen=True)
class WaterOptions:
    quad_decimate: float = 2.0
    """Tag detection (full resolution is tried when nothing is found)."""
    depth_sigma_m: float = 0.002
    """Uncertainty of each image's depth (or surveyed z), m, independent per image:
    propagated into the sigma of the result."""
    outlier_factor: float = 5.0
    outlier_floor_px: float = 1.0
    """An image is rejected when its RMS residual exceeds max(factor x median, floor)."""
    max_rounds: int = 3


@dataclass
class WaterImageReport:
    image: str
    line: int
    used: bool = False
    reason: str = ""
    tags: tuple[int, ...] = ()
    rms_px: float = math.nan
    x_m: float = math.nan
    y_m: float = math.nan
    yaw_rad: float = math.nan


@dataclass
class WaterResult:
    R_wc: np.ndarray
    t_wc: np.ndarray
    water_z: float
    height_m: float
    sigma: dict[str, float]
    """1-sigma: height_m (total), height_fit_m, height_depth_m, roll_deg, pitch_deg,
    heading_deg, x_m, y_m, water_z_m (NaN: gauge, not estimated)."""
    free: dict[str, bool]
    rms_px: float
    corners: int
    images: list[WaterImageReport]
    sensitivity: dict[str, float]
    """dh/d(common depth bias) (m/m), dh/dn_water (m), dh/d(focal scale) (m per 1)."""
    gauge: list[str]
    notes: list[str] = field(default_factory=list)
    iterations: int = 0

    @property
    def used(self) -> list[WaterImageReport]:
        return [r for r in self.images if r.used]

    @property
    def rejected(self) -> list[WaterImageReport]:
        return [r for r in self.images if not r.used]

    @property
    def tilt_deg(self) -> float:
        return float(np.degrees(math.acos(min(1.0, float(self.R_wc[2, 2])))))

    def to_json(self) -> dict[str, Any]:
        return nan_to_none({"R_wc": self.R_wc.tolist(), "t_wc": self.t_wc.tolist(),
                             "water_z": self.water_z,
                "height_m": self.height_m, "tilt_deg": self.tilt_deg, "sigma": self.sigma,
                "free": self.free, "rms_px": self.rms_px, "corners": self.corners,
                "sensitivity": self.sensitivity, "gauge": self.gauge, "notes": self.notes,
                "images_used": len(self.used), "images_rejected": len(self.rejected),
                "images": [dataclasses.asdict(r) for r in self.images]})



def calibrate_water(setup_path: str | Path, folder: str | Path,
                    options: WaterOptions = WaterOptions(),
                    progress: Callable[[int, int], None] | None = None) -> WaterResult:
    """Fit R_wc, t_wc (and water_z when the manifest has surveyed z) through refraction
    from images of tags at known depths. ParameterError for bad input, CalibrationFailed
    when no fit is possible."""
    setup_path, folder = Path(setup_path), Path(folder)
    if not (options.depth_sigma_m >= 0 and math.isfinite(options.depth_sigma_m)):
        raise ParameterError(f"depth sigma must be >= 0, got {options.depth_sigma_m}",
                             fix="give --depth-sigma-m in metres, e.g. 0.002")
    if not options.quad_decimate >= 1:
        raise ParameterError(f"quad_decimate must be >= 1, got {options.quad_decimate}",
                             fix="use 1 (full resolution), 2 or 3")
    if not folder.is_dir():
        raise ParameterError(f"{folder}: not a folder",
                             fix="give the folder holding manifest.jsonl and the images")
    _data, setup, has_ext, layout_src = load_water_setup(setup_path, folder)
    samples = read_water_manifest(folder, setup)
    notes: list[str] = []
    if layout_src != str(setup_path):
        notes.append(f"tag layout from {layout_src} (the setup's own tags are kept)")

    # -- read every image first (one error listing every unreadable file)
    problems = []
    for s in samples:
        p = folder / s.image
        if not p.is_file():
            problems.append(f"{MANIFEST_FILE}:{s.line}: {p}: no such file")
    if problems:
        raise ParameterError(listing(f"{len(problems)} image(s) of the manifest are missing",
                                      problems), fix="correct the manifest or add the files")
    det = TagDetector(DetectorOptions(family=setup.tag_family, quad_decimate=options.quad_decimate))
    fine = TagDetector(DetectorOptions(family=setup.tag_family, quad_decimate=1.0))
    ids = set(setup.tag_ids)
    reports: list[WaterImageReport] = []
    dets: list[list[Detection]] = []
    size = None
    bad_read: list[str] = []
    for k, s in enumerate(samples):
        rep = WaterImageReport(s.image, s.line)
        reports.append(rep)
        dets.append([])
        try:
            g = read_gray(folder / s.image)
        except ParameterError as exc:
            bad_read.append(exc.message)
            continue
        wh = (g.shape[1], g.shape[0])
        ref = setup.image_size or size
        if ref is not None and wh != tuple(ref):
            what = (f"{setup_path.name}'s image_size" if setup.image_size
                    else f"{samples[0].image}")
            raise ParameterError(f"{folder / s.image}: the image is {wh[0]}x{wh[1]} px but "
                                 f"{what} is {ref[0]}x{ref[1]} px",
                                 fix="use images at the resolution of the intrinsic calibration")
        size = wh
        res = det.detect(g)
        if not res.detections:
            res = fine.detect(g)
        found = [d for d in res.detections if d.id in ids]
        if not found:
            seen = sorted({d.id for d in res.detections})
            rep.reason = ("no tag of the layout found" + (f" (seen ids {seen})" if seen else "")
                          if res.detections or res.rejected else "no tag found")
            if res.rejected:
                rep.reason += "; dropped: " + "; ".join(r for _, r in res.rejected)
        dets[-1] = found
        rep.tags = tuple(d.id for d in found)
        if progress is not None:
            progress(k + 1, len(samples))
    if bad_read:
        raise ParameterError(listing(f"{len(bad_read)} image(s) cannot be read", bad_read),
                             fix="re-export them as PNG or JPEG, or remove their lines")
    active = [i for i in range(len(samples)) if dets[i]]
    if not active:
        raise ParameterError(listing(f"no tag of the layout found in any of the {len(samples)} "
                                      "images", [f"{r.image}: {r.reason}" for r in reports]),
                             fix=f"check tag_family/tags in {layout_src} and that the tags are in "
                                 "view and sharp")

    fit = _fit_water(setup, has_ext, samples, dets, active, reports, options, notes)
    return fit



def _fit_water(setup: PoolSetup, has_ext: bool, samples: list[WaterSample],
               dets: list[list[Detection]], active: list[int], reports: list[WaterImageReport],
               options: WaterOptions, notes: list[str]) -> WaterResult:
    wz0 = setup.water_z
    r0, p0, h0 = camera_angles(setup.R_wc)
    gauge_heading = h0 if has_ext else 0.0
    sub = [samples[i] for i in active]
    # -- initial camera
    if has_ext:
        cam0 = np.array([r0, p0, h0, setup.t_wc[0], setup.t_wc[1], wz0 - setup.t_wc[2], wz0])
    else:
        cam0 = initial_camera(setup, sub, [dets[i] for i in active], gauge_heading, wz0)
        notes.append("no R_wc/t_wc in the setup: started from a pinhole PnP estimate "
                     f"(height {cam0[5]:.2f} m, tilt "
                     f"{math.degrees(math.hypot(cam0[0], cam0[1])):.1f} deg)")
    # -- initial poses of the vehicle (refraction-aware closed form), then the known ones
    model_all = None
    for rnd in range(options.max_rounds + 1):
        idx = list(active)
        obs = [(np.concatenate([setup.corners_body(d.id) for d in dets[i]]),
                np.concatenate([d.corners for d in dets[i]])) for i in idx]
        model = WaterModel(setup, [samples[i] for i in idx], obs)
        model.cam = cam0.copy()
        xy_free, heading_free, wz_free = freedoms([samples[i] for i in idx])
        model.cam_free[:] = [True, True, heading_free, xy_free, xy_free, True, wz_free]
        model.img = initial_poses(model, [dets[i] for i in idx], cam0)
        if rnd == 0:
            model.cam, model.img = align_known(model, heading_free, xy_free)
        for k, s in enumerate(model.samples):
            if s.known_xy:
                model.img[k, :2] = (s.x_m, s.y_m)
                model.img_free[k, :2] = False
            if s.yaw_rad is not None:
                model.img[k, 2] = s.yaw_rad
                model.img_free[k, 2] = False
        dof = 2 * len(model.px) - model.n_free
        if dof <= 0:
            raise CalibrationFailed(f"{len(model.px)} tag corners cannot determine "
                                    f"{model.n_free} unknowns",
                                    fix="add images (several depths, spread over the view)")
        model.cam[5] = max(model.cam[5], 0.05)
        cam, img, fun, iters, ok = model.solve(model.cam, model.img)
        if not np.all(np.abs(fun) < 1e3):
            raise CalibrationFailed("the fit did not converge (corners project outside the image)",
                                    fix="give R_wc/t_wc near the truth in the setup, or check "
                                        "the depths and tag layout")
        if not ok:
            notes.append(f"the fit stopped after {iters} iterations before converging")
        e = fun.reshape(-1, 2)
        per = np.array([math.sqrt(np.mean(np.sum(e[model.idx == k] ** 2, axis=1)))
                        for k in range(model.n)])
        med = float(np.median(per))
        thr = max(options.outlier_factor * med, options.outlier_floor_px)
        bad = [idx[k] for k in range(model.n) if per[k] > thr]
        model_all = (model, fun, cam, img, per, idx, iters)
        if not bad or rnd == options.max_rounds or len(idx) - len(bad) < 1:
            break
        for k in range(model.n):
            if per[k] > thr:
                reports[idx[k]].reason = (f"residual RMS {per[k]:.2f} px > {thr:.2f} px (wrong "
                                          "depth, position or tilt in the manifest, or a "
                                          "misdetected tag?)")
        active = [i for i in active if i not in bad]
        cam0 = cam
    assert model_all is not None
    model, fun, cam, img, per, idx, iters = model_all
    gauge = []
    if not wz_free:
        gauge.append(f"water_z = {cam[6]:g} m held (depths are measured from the surface: only "
                     "the camera height above it is observable; t_wc.z = water_z - height)")
    if not xy_free:
        gauge.append(f"camera x, y = {cam[3]:g}, {cam[4]:g} m held (no known x_m/y_m: the world's "
                     "horizontal origin is arbitrary)")
    if not heading_free:
        gauge.append(f"camera heading (image +x) = {math.degrees(cam[2]):.3f} deg held (no known "
                     "yaw_rad and no two known positions >= 5 cm apart)")
    for k, i in enumerate(idx):
        r = reports[i]
        r.used, r.reason, r.rms_px = True, "", float(per[k])
        r.x_m, r.y_m, r.yaw_rad = (float(v) for v in img[k])

    # -- covariance (Schur complement over the per-image poses) and sensitivities:
    # S = A - sum_i B_i D_i^-1 B_i^T is J^T J reduced to the camera parameters; an input
    # column e (d residuals / d input) moves the solution by -S^-1 (J_c^T e - sum_i
    # B_i D_i^-1 d_i^T e).
    Jc, d = model.blocks(cam, img)
    A, B, D = model.normal_blocks(Jc, d)
    Di = np.linalg.inv(D + np.eye(3) * (~model.img_free)[:, :, None])
    BDi = np.einsum("iak,ikl->ial", B, Di)
    S = A - np.einsum("ial,ibl->ab", BDi, B)
    dz, E = model.input_columns(cam, img)
    hc, hi = model.segment(Jc, d, dz)  # per image: its depth's column
    Rz = (hc - np.einsum("ial,il->ia", BDi, hi)).T
    RE = np.empty((S.shape[0], E.shape[1]))
    for k in range(E.shape[1]):
        hc, hi = model.segment(Jc, d, E[:, k])
        RE[:, k] = hc.sum(axis=0) - np.einsum("ial,il->a", BDi, hi)
    cond = np.linalg.cond(S)
    if not np.isfinite(cond) or cond > 1e14:
        raise CalibrationFailed("the data do not determine the camera (singular normal "
                                f"equations, condition {cond:.2g})",
                                fix="use images at several depths with the tags spread over "
                                    "the view")
    Sinv = np.linalg.inv(S)
    ssr = float(fun @ fun)
    dof = 2 * len(model.px) - model.n_free
    s2 = ssr / dof
    cov_fit = s2 * Sinv
    Gz = -Sinv @ Rz  # d cam / d z_i
    cov_depth = options.depth_sigma_m ** 2 * (Gz @ Gz.T)
    GE = -Sinv @ RE  # d cam / d(n_water, focal scale)
    cov = cov_fit + cov_depth
    free_names = [n for n, f in zip(CAM, model.cam_free) if f]
    pos = {n: k for k, n in enumerate(free_names)}

    def sd(name: str, c: np.ndarray = cov) -> float:
        return float(math.sqrt(max(c[pos[name], pos[name]], 0.0))) if name in pos else math.nan

    sigma = {"height_m": sd("height"), "height_fit_m": sd("height", cov_fit),
             "height_depth_m": sd("height", cov_depth),
             "roll_deg": math.degrees(sd("roll")), "pitch_deg": math.degrees(sd("pitch")),
             "heading_deg": math.degrees(sd("heading")), "x_m": sd("x"), "y_m": sd("y"),
             "water_z_m": sd("water_z"), "pixel_px": math.sqrt(s2)}
    hk = pos["height"]
    sens = {"height_per_depth_bias": float(np.sum(Gz[hk])),
            "height_per_n_water": float(GE[hk, 0]),
            "height_per_focal_scale": float(GE[hk, 1])}
    if wz_free:
        wk = pos["water_z"]
        sigma["corr_height_water_z"] = float(cov[hk, wk] / math.sqrt(cov[hk, hk] * cov[wk, wk]))
    out_setup = model.setup(cam)
    depths = np.array([s.depth_m if s.z_m is None else s.z_m - cam[6] for s in model.samples])
    if depths.max() - depths.min() < 0.2:
        notes.append(f"all images within {100 * (depths.max() - depths.min()):.0f} cm of depth: "
                     "the height rests on the tag size and focal length alone; use 2+ depths "
                     "at least 0.3 m apart")
    if model.n < 5:
        notes.append(f"only {model.n} image(s) used: 10-30 at several depths and places are better")
    return WaterResult(R_wc=out_setup.R_wc, t_wc=out_setup.camera_center,
                       water_z=float(cam[6]), height_m=float(cam[5]), sigma=sigma,
                       free={n: bool(f) for n, f in zip(CAM, model.cam_free)},
                       rms_px=float(np.sqrt(np.mean(np.sum(fun.reshape(-1, 2) ** 2, axis=1)))),
                       corners=len(model.px), images=reports, sensitivity=sens, gauge=gauge,
                       notes=notes, iterations=int(iters))
