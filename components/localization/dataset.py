"""Pool localization datasets: the generator and the evaluator (docs/localization.md).

A dataset is a folder::

    setup.json        the calibration the localizer uses (pool_setup.py)
    manifest.jsonl    one JSON object per line, one per image:
                        image      file name (relative to the folder)
                        depth_m    depth of the body origin below the water
                                   surface, from pressure, m (world z = water_z + depth_m)
                        roll_rad   pitch_rad   from the IMU (ZYX Euler angles), rad
                        truth      optional {"x_m", "y_m", "yaw_rad"} (extra keys allowed)
                        location_id  optional, an integer or a string
    *.png             8-bit grey images

``generate_pool_dataset`` renders one from the simulator: locations spread over the
camera's view of the pool, several images per location with fresh image, pressure
and IMU noise, and one set of calibration errors (the true camera renders, the
perturbed one is written to setup.json). ``evaluate_dataset`` runs the localizer over
a dataset and scores it; corrupt or missing images and bad manifest lines are skipped
and reported, never fatal.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..sdk.errors import ParameterError
from .detect import DetectorOptions, TagDetector
from .measure import Measurement, PinholeMeasurer, RefractionMeasurer, wrap
from .pool_setup import SETUP_FILE, PoolSetup, example_setup, load_setup, setup_to_dict, write_setup
from .render import Pose, Renderer, RenderOptions

MANIFEST_FILE = "manifest.jsonl"
GENERATOR_FILE = "generator.json"
METHODS = ("refraction", "pinhole")


# ===================================================================== generator


@dataclass(frozen=True)
class PoolDatasetConfig:
    """Everything the generator draws, with its defaults (docs/localization.md,
    "Dataset generator"). Standard deviations unless said otherwise."""

    seed: int = 1
    locations: int = 170
    images_per_location: int = 4
    image_width: int = 1280
    image_height: int = 720
    # -- where the vehicle is
    pool_x_m: tuple[float, float] = (-1.8, 1.8)
    """Range of location x (uniform), m (a 4 m x 3 m pool, 0.2 m clear of the walls)."""
    pool_y_m: tuple[float, float] = (-1.3, 1.3)
    depth_m: tuple[float, float] = (0.3, 1.3)
    """Range of the body origin's depth (uniform), m."""
    tilt_deg: float = 2.0
    """Roll and pitch at a location."""
    hover_depth_m: float = 0.01
    """Depth change between the images of one location."""
    hover_tilt_deg: float = 0.3
    """Roll/pitch change between the images of one location."""
    # -- calibration errors (one draw per dataset: setup.json = truth + error)
    focal_rel: float = 0.002
    """Relative error of fx and fy (intrinsic calibration)."""
    principal_px: float = 1.0
    """Error of cx and cy, px."""
    k1: float = 0.005
    """Absolute error of k1 (and k2 / 4)."""
    water_z_m: float = 0.002
    """Error of the water plane height, m."""
    n_water: float = 0.0005
    """Error of the refractive index of water."""
    calibrate_extrinsics: bool = True
    """True: R_wc and t_wc are fitted, through the erroneous intrinsics, water plane and
    index, to surveyed reference points (as a pool calibration does, so that extrinsic
    and intrinsic errors partly cancel at the pool); False: drawn independently with
    rotation_deg and camera_position_m."""
    survey_points: int = 25
    """Reference points of the extrinsic fit: a 4 x 4 grid on the floor (1.4 m) and a
    3 x 3 grid at 0.4 m depth, spread over the view."""
    survey_sigma_m: float = 0.002
    """Survey error of each reference point, per axis, m."""
    survey_pixel_sigma_px: float = 0.15
    """Detection error of each reference point in the image, px."""
    rotation_deg: float = 0.05
    """Without calibrate_extrinsics: error of R_wc about each camera axis, deg."""
    camera_position_m: float = 0.002
    """Without calibrate_extrinsics: error of t_wc per axis, m."""
    tag_position_m: float = 0.0005
    """Error of each tag's surveyed centre on the vehicle (x, y), m."""
    # -- sensors (per image)
    depth_noise_m: float = 0.003
    """Pressure depth noise, m."""
    attitude_noise_deg: float = 0.15
    """IMU roll and pitch noise, deg."""
    # -- image
    read_noise_dn: float = 1.5
    shot_noise_dn: float = 0.05
    exposure_jitter: float = 0.05
    blur_sigma_px: tuple[float, float] = (0.3, 0.9)
    """Range of the defocus blur (uniform per image), px."""
    ripple_amplitude_m: float = 0.0002
    """Surface ripple amplitude per component, m (0: a still surface)."""
    supersampling: int = 4

    def check(self) -> None:
        if self.locations < 1 or self.images_per_location < 1:
            raise ParameterError("locations and images_per_location must be >= 1",
                                 fix="give positive counts")
        if self.image_width < 64 or self.image_height < 64:
            raise ParameterError("image size too small", fix="use at least 64 x 64 px")
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            vals = v if isinstance(v, tuple) else (v,)
            if any(not math.isfinite(x) for x in vals):
                raise ParameterError(f"{f.name} must be finite", fix=f"set {f.name} to a number")
            if not isinstance(v, tuple) and f.name not in ("seed",) and v < 0:
                raise ParameterError(f"{f.name} must be >= 0, got {v}", fix=f"set {f.name} >= 0")

    def ideal(self) -> PoolDatasetConfig:
        """The same locations without any error or noise (for checks)."""
        zero = {f.name: 0.0 for f in dataclasses.fields(self) if f.name in (
            "focal_rel", "principal_px", "k1", "rotation_deg", "camera_position_m", "water_z_m",
            "n_water", "tag_position_m", "depth_noise_m", "attitude_noise_deg", "read_noise_dn",
            "shot_noise_dn", "exposure_jitter", "ripple_amplitude_m", "survey_sigma_m",
            "survey_pixel_sigma_px")}
        return dataclasses.replace(self, blur_sigma_px=(0.0, 0.0), calibrate_extrinsics=False,
                                   **zero)


def config_from_overrides(base: PoolDatasetConfig, overrides: dict[str, Any]) -> PoolDatasetConfig:
    """``base`` with fields replaced from ``overrides`` (values as JSON or strings)."""
    fields = {f.name: f for f in dataclasses.fields(base)}
    changes: dict[str, Any] = {}
    for key, raw in overrides.items():
        if key not in fields:
            raise ParameterError(f"unknown dataset option {key!r}",
                                 fix="known: " + ", ".join(sorted(fields)))
        cur = getattr(base, key)
        val = raw
        if isinstance(raw, str):
            try:
                val = json.loads(raw)
            except json.JSONDecodeError:
                raise ParameterError(f"{key}={raw!r} is not a JSON value",
                                     fix=f"e.g. {key}={json.dumps(cur)}") from None
        try:
            if isinstance(cur, tuple):
                if not isinstance(val, (list, tuple)) or len(val) != len(cur):
                    raise TypeError
                val = tuple(float(v) for v in val)
            elif isinstance(cur, bool):
                val = bool(val)
            elif isinstance(cur, int):
                if isinstance(val, float) and not val.is_integer():
                    raise TypeError
                val = int(val)
            else:
                val = float(val)
        except (TypeError, ValueError):
            raise ParameterError(f"{key}: expected a value like {json.dumps(cur)}, got {raw!r}",
                                 fix=f"e.g. {key}={json.dumps(cur)}") from None
        changes[key] = val
    cfg = dataclasses.replace(base, **changes)
    cfg.check()
    return cfg


def _rot_axis(axis: np.ndarray, angle: float) -> np.ndarray:
    return cv2.Rodrigues(np.asarray(axis, float) * angle)[0]


def perturb_setup(true: PoolSetup, cfg: PoolDatasetConfig,
                  rng: np.random.Generator) -> tuple[PoolSetup, dict[str, Any]]:
    """The calibration a user would have: ``true`` plus one draw of the errors, and a
    report of what they are (rotation error, deg; position error, m; fit residual)."""
    fx, fy, cx, cy = true.K
    K = (fx * (1 + cfg.focal_rel * rng.standard_normal()),
         fy * (1 + cfg.focal_rel * rng.standard_normal()),
         cx + cfg.principal_px * rng.standard_normal(),
         cy + cfg.principal_px * rng.standard_normal())
    d = list(true.dist)
    d[0] += cfg.k1 * rng.standard_normal()
    d[1] += 0.25 * cfg.k1 * rng.standard_normal()
    wz = true.water_z + cfg.water_z_m * rng.standard_normal()
    nw = true.n_water + cfg.n_water * rng.standard_normal()
    tags = tuple(dataclasses.replace(
        m, center_b=(m.center_b[0] + cfg.tag_position_m * rng.standard_normal(),
                     m.center_b[1] + cfg.tag_position_m * rng.standard_normal(), m.center_b[2]))
        for m in true.tags)
    est = dataclasses.replace(true, K=K, dist=tuple(d), water_z=wz, n_water=nw, tags=tags)
    report: dict[str, Any] = {}
    if cfg.calibrate_extrinsics:
        est, report = _fit_extrinsics(true, est, cfg, rng)
    else:
        rv = np.radians(cfg.rotation_deg) * rng.standard_normal(3)
        R = true.R_wc @ cv2.Rodrigues(rv)[0]  # error about the camera's own axes
        t = np.asarray(true.t_wc) + cfg.camera_position_m * rng.standard_normal(3)
        est = dataclasses.replace(est, R_wc_rows=tuple(map(tuple, R)), t_wc=tuple(t))
    rv = cv2.Rodrigues(true.R_wc.T @ est.R_wc)[0].ravel()
    report["rotation_error_deg"] = [float(v) for v in np.degrees(rv)]
    report["position_error_m"] = [float(v) for v in np.asarray(est.t_wc) - true.t_wc]
    return est, report


def _fit_extrinsics(true: PoolSetup, est: PoolSetup, cfg: PoolDatasetConfig,
                    rng: np.random.Generator) -> tuple[PoolSetup, dict[str, Any]]:
    """Fit R_wc, t_wc of ``est`` (its intrinsics, water and index fixed) to reference
    points: true positions seen by the true camera (+ detection noise), surveyed
    positions (+ survey noise)."""
    from scipy.optimize import least_squares

    from .refraction import RefractiveCamera

    cam_true = RefractiveCamera(true)
    w, h = true.image_size or (cfg.image_width, cfg.image_height)
    pts = []
    for depth, n in ((1.4, 4), (0.4, 3)):
        for u in np.linspace(0.1, 0.9, n):
            for v in np.linspace(0.1, 0.9, n):
                pts.append(cam_true.back_project(np.array([u * (w - 1), v * (h - 1)]),
                                                 true.water_z + depth))
    P = np.array(pts)[: max(cfg.survey_points, 4)]
    px = cam_true.project(P) + cfg.survey_pixel_sigma_px * rng.standard_normal(P[:, :2].shape)
    P_survey = P + cfg.survey_sigma_m * rng.standard_normal(P.shape)
    R0, t0 = true.R_wc, np.asarray(true.t_wc)

    def with_pose(x):
        R = R0 @ cv2.Rodrigues(np.asarray(x[:3]))[0]
        return dataclasses.replace(est, R_wc_rows=tuple(map(tuple, R)), t_wc=tuple(t0 + x[3:]))

    def residual(x):
        return (RefractiveCamera(with_pose(x)).project(P_survey) - px).ravel()

    sol = least_squares(residual, np.zeros(6), x_scale=[1e-3, 1e-3, 1e-3, 1e-2, 1e-2, 1e-2])
    out = with_pose(sol.x)
    rms = float(np.sqrt(np.mean(sol.fun ** 2)))
    return out, {"extrinsic_fit_points": len(P), "extrinsic_fit_rms_px": rms}


def _visible(renderer: Renderer, pose: Pose, border: float = 8.0) -> bool:
    """Every tag fully inside the image (with a border)."""
    h = renderer.half_outer
    for _, P0, top, right, _n in renderer.tag_world(pose):
        ring = np.array([P0 + h * (a * top + b * right) for a in (-1, 1) for b in (-1, 1)])
        px = renderer.camera.project(ring)
        if not np.all(np.isfinite(px)):
            return False
        if (px.min() < border or np.any(px[:, 0] > renderer.width - 1 - border)
                or np.any(px[:, 1] > renderer.height - 1 - border)):
            return False
    return True


def generate_pool_dataset(out: str | Path, cfg: PoolDatasetConfig = PoolDatasetConfig(),
                          true_setup: PoolSetup | None = None, progress=None) -> dict[str, Any]:
    """Render a dataset into folder ``out`` (created; must be empty or absent)."""
    cfg.check()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ParameterError(f"{out} exists and is not empty",
                             fix="give a new folder (the generator never overwrites)")
    out.mkdir(parents=True, exist_ok=True)
    true = true_setup or example_setup((cfg.image_width, cfg.image_height))
    if true.image_size is None:
        true = dataclasses.replace(true, image_size=(cfg.image_width, cfg.image_height))
    rng_cal = np.random.default_rng([cfg.seed, 1])
    written, calibration = perturb_setup(true, cfg, rng_cal)
    write_setup(written, out / SETUP_FILE)
    opts = RenderOptions(supersampling=cfg.supersampling, read_noise_dn=cfg.read_noise_dn,
                         shot_noise_dn=cfg.shot_noise_dn, exposure_jitter=cfg.exposure_jitter,
                         ripple_amplitude_m=cfg.ripple_amplitude_m)
    renderers: dict[float, Renderer] = {}
    base = Renderer(true, opts)
    rng_loc = np.random.default_rng([cfg.seed, 2])
    tilt = math.radians(cfg.tilt_deg)
    locations = []
    tries = 0
    while len(locations) < cfg.locations:
        tries += 1
        if tries > 200 * cfg.locations + 1000:
            raise ParameterError(
                f"only {len(locations)} of {cfg.locations} locations found with every tag in "
                "view", fix="match pool_x_m, pool_y_m and depth_m to the camera's view")
        pose = Pose(rng_loc.uniform(*cfg.pool_x_m), rng_loc.uniform(*cfg.pool_y_m),
                    rng_loc.uniform(*cfg.depth_m), tilt * rng_loc.standard_normal(),
                    tilt * rng_loc.standard_normal(), rng_loc.uniform(-math.pi, math.pi))
        if _visible(base, pose, 8.0 + 10.0):
            locations.append(pose)
    t0 = time.perf_counter()
    n = 0
    with open(out / MANIFEST_FILE, "w", encoding="utf-8") as mf:
        for li, loc in enumerate(locations):
            for k in range(cfg.images_per_location):
                rng = np.random.default_rng([cfg.seed, 3, li, k])
                hover = math.radians(cfg.hover_tilt_deg)
                pose = dataclasses.replace(
                    loc, z=loc.z + cfg.hover_depth_m * rng.standard_normal(),
                    roll=loc.roll + hover * rng.standard_normal(),
                    pitch=loc.pitch + hover * rng.standard_normal())
                blur = float(rng.uniform(*cfg.blur_sigma_px))
                r = renderers.get(round(blur, 2))
                if r is None:
                    r = renderers[round(blur, 2)] = base.with_options(blur_sigma_px=round(blur, 2))
                img = r.render(pose, rng, t_s=float(rng.uniform(0, 100)), ripple_seed=cfg.seed)
                name = f"{n:06d}.png"
                cv2.imwrite(str(out / name), img)
                att = math.radians(cfg.attitude_noise_deg)
                rec = {
                    "image": name,
                    "depth_m": pose.z - true.water_z
                    + cfg.depth_noise_m * float(rng.standard_normal()),
                    "roll_rad": pose.roll + att * float(rng.standard_normal()),
                    "pitch_rad": pose.pitch + att * float(rng.standard_normal()),
                    "truth": {"x_m": pose.x, "y_m": pose.y, "yaw_rad": pose.yaw,
                              "z_m": pose.z, "roll_rad": pose.roll, "pitch_rad": pose.pitch},
                    "location_id": li,
                }
                mf.write(json.dumps(rec) + "\n")
                n += 1
                if progress is not None:
                    progress(n, cfg.locations * cfg.images_per_location)
    info = {"generator": "moonpool dataset pool", "config": dataclasses.asdict(cfg),
            "true_setup": setup_to_dict(true), "calibration_errors": calibration, "images": n,
            "seconds": round(time.perf_counter() - t0, 2)}
    (out / GENERATOR_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


# ===================================================================== evaluator


@dataclass
class ManifestEntry:
    line: int
    image: str
    depth_m: float
    roll_rad: float
    pitch_rad: float
    truth: dict[str, float] | None
    location_id: Any = None


def read_manifest(folder: Path) -> tuple[list[ManifestEntry], list[str]]:
    """Entries and problems (one string per skipped line)."""
    path = folder / MANIFEST_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}",
                             fix="a dataset folder holds setup.json and manifest.jsonl") from None
    entries, problems = [], []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
            image = rec["image"]
            if not isinstance(image, str) or not image:
                raise ValueError("'image' must be a file name")
            vals = []
            for key in ("depth_m", "roll_rad", "pitch_rad"):
                v = rec[key]
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise ValueError(f"'{key}' must be a finite number, got {v!r}")
                vals.append(float(v))
            truth = rec.get("truth")
            if truth is not None and (not isinstance(truth, dict) or not all(
                    isinstance(truth.get(k), (int, float)) for k in ("x_m", "y_m", "yaw_rad"))):
                raise ValueError("'truth' must hold numbers x_m, y_m, yaw_rad")
            entries.append(ManifestEntry(i, image, *vals, truth, rec.get("location_id")))
        except KeyError as exc:
            problems.append(f"{MANIFEST_FILE}:{i}: missing key {exc.args[0]!r} (line skipped)")
        except (ValueError, json.JSONDecodeError) as exc:
            problems.append(f"{MANIFEST_FILE}:{i}: {exc} (line skipped)")
    return entries, problems


def _stats(errors: list[float]) -> dict[str, Any]:
    e = np.asarray(errors, dtype=float)
    if e.size == 0:
        return {"horizontal_rmse_m": None, "p95_m": None, "n": 0}
    return {"horizontal_rmse_m": float(np.sqrt(np.mean(e * e))),
            "p95_m": float(np.percentile(e, 95)), "n": int(e.size)}


def evaluate_dataset(folder: str | Path, methods: tuple[str, ...] = METHODS,
                     csv_path: str | Path | None = None,
                     detector: DetectorOptions | None = None, progress=None) -> dict[str, Any]:
    """Localize every image of a dataset with each method and score against the truth.

    Returns {"methods": {name: {"horizontal_rmse_m", "p95_m", "n", ...}}, "images",
    "skipped": [...], "csv": path}. Raises ParameterError for a missing/invalid
    setup.json or manifest (bad input)."""
    folder = Path(folder)
    for m in methods:
        if m not in METHODS:
            raise ParameterError(f"unknown method {m!r}", fix="use refraction, pinhole or both")
    setup = load_setup(folder / SETUP_FILE)
    entries, skipped = read_manifest(folder)
    if csv_path is not None:  # fail before the work, not after it
        try:
            with open(csv_path, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise ParameterError(f"cannot write {csv_path}: {exc.strerror or exc}",
                                 fix="give --csv a writable path") from None
    opts = dataclasses.replace(detector or DetectorOptions(), family=setup.tag_family)
    det = TagDetector(opts)
    fine = TagDetector(dataclasses.replace(opts, quad_decimate=1.0))
    measurers = {"refraction": RefractionMeasurer(setup), "pinhole": PinholeMeasurer(setup)}
    errors: dict[str, list[float]] = {m: [] for m in methods}
    yaw_err: dict[str, list[float]] = {m: [] for m in methods}
    depth_err: dict[str, list[float]] = {m: [] for m in methods}
    refused: dict[str, Counter] = {m: Counter() for m in methods}
    rows = []
    for k, e in enumerate(entries):
        if progress is not None:
            progress(k + 1, len(entries))
        path = folder / e.image
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED) if path.is_file() else None
        if img is None:
            skipped.append(f"{e.image}: " + ("missing" if not path.is_file()
                                             else "not a readable image (corrupt?)") + " (skipped)")
            continue
        try:
            res = det.detect(img)
            if not res.detections:  # small or blurred tags: try the full-resolution search
                res = fine.detect(img)
        except ValueError as exc:
            skipped.append(f"{e.image}: {exc} (skipped)")
            continue
        row: dict[str, Any] = {"image": e.image, "location_id": e.location_id,
                               "tags_seen": " ".join(str(d.id) for d in res.detections)}
        for m in methods:
            meas: Measurement = measurers[m].measure(res.detections, e.depth_m, e.roll_rad,
                                                     e.pitch_rad)
            row[f"{m}_valid"] = int(meas.valid)
            row[f"{m}_x_m"] = meas.x
            row[f"{m}_y_m"] = meas.y
            row[f"{m}_z_m"] = meas.z
            row[f"{m}_yaw_rad"] = meas.yaw
            row[f"{m}_err_m"] = math.nan
            row[f"{m}_yaw_err_rad"] = math.nan
            row[f"{m}_detail"] = meas.detail or "; ".join(meas.ignored)
            if not meas.valid:
                refused[m][meas.detail.split(" (")[0]] += 1
                continue
            if e.truth is not None:
                err = math.hypot(meas.x - e.truth["x_m"], meas.y - e.truth["y_m"])
                errors[m].append(err)
                ye = float(wrap(meas.yaw - e.truth["yaw_rad"]))
                yaw_err[m].append(ye)
                zt = e.truth.get("z_m", setup.water_z + e.depth_m)
                depth_err[m].append(meas.z - zt)
                row[f"{m}_err_m"] = err
                row[f"{m}_yaw_err_rad"] = ye
        rows.append(row)
    out: dict[str, Any] = {"dataset": str(folder), "images": len(entries), "measured": len(rows),
                           "skipped": skipped, "methods": {}}
    for m in methods:
        st = _stats(errors[m])
        ye = np.asarray(yaw_err[m])
        de = np.asarray(depth_err[m])
        st["yaw_rmse_rad"] = float(np.sqrt(np.mean(ye * ye))) if ye.size else None
        st["depth_bias_m"] = float(np.mean(de)) if de.size else None
        st["refused"] = dict(refused[m])
        out["methods"][m] = st
    if csv_path is not None:
        csv_path = Path(csv_path)
        cols = ["image", "location_id", "tags_seen"] + [
            f"{m}_{c}" for m in methods for c in ("valid", "x_m", "y_m", "z_m", "yaw_rad", "err_m",
                                                   "yaw_err_rad", "detail")]
        try:
            with open(csv_path, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=cols)
                w.writeheader()
                for r in rows:
                    w.writerow({c: _fmt(r.get(c)) for c in cols})
        except OSError as exc:
            raise ParameterError(f"cannot write {csv_path}: {exc.strerror or exc}",
                                 fix="give --csv a writable path") from None
        out["csv"] = str(csv_path)
    return out


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6f}"
    return "" if v is None else v


def summary_json(result: dict[str, Any]) -> dict[str, Any]:
    """The ``--json OUT`` object: {method: {"horizontal_rmse_m", "p95_m", "n"}} (plus
    extra diagnostic keys)."""
    return {m: dict(st) for m, st in result["methods"].items()}


def format_report(result: dict[str, Any]) -> str:
    lines = [(f"dataset {result['dataset']}: {result['images']} images in the manifest, "
              f"{result['measured']} read")]
    lines.append(f"{'method':12s} {'RMSE (m)':>10s} {'P95 (m)':>10s} {'n':>6s} "
                 f"{'yaw RMSE':>10s} {'depth bias':>11s}  refused")
    for m, st in result["methods"].items():
        def f(v, fmt="{:.4f}"):
            return "-" if v is None else fmt.format(v)
        refused = ", ".join(f"{k}: {v}" for k, v in st["refused"].items()) or "none"
        lines.append(f"{m:12s} {f(st['horizontal_rmse_m']):>10s} {f(st['p95_m']):>10s} "
                     f"{st['n']:6d} {f(st['yaw_rmse_rad'], '{:.4f} rad'):>10s} "
                     f"{f(st['depth_bias_m'], '{:+.4f} m'):>11s}  {refused}")
    if result["skipped"]:
        lines.append(f"skipped ({len(result['skipped'])}):")
        lines += [f"  {s}" for s in result["skipped"][:20]]
        if len(result["skipped"]) > 20:
            lines.append(f"  ... and {len(result['skipped']) - 20} more")
    if result.get("csv"):
        lines.append(f"per-image results in {result['csv']}")
    return "\n".join(lines)
