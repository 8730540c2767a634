"""Intrinsic calibration: K and distortion from in-air photos of a board (OpenCV)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...sdk.errors import ParameterError
from .boards import BoardSpec, Charuco, Chessboard, auto_dictionary
from .common import CalibrationFailed, listing, nan_to_none
from .images import check_images, read_gray


@dataclass(frozen=True)
class IntrinsicsOptions:
    fix_k3: bool = False
    """Hold k3 at 0 (narrow lenses, few images)."""
    min_images: int = 4
    """Fewest images with the board found (15-30 recommended)."""
    outlier_factor: float = 3.0
    outlier_floor_px: float = 0.5
    """An image is rejected when its reprojection RMS exceeds
    max(outlier_factor x median, outlier_floor_px)."""
    min_charuco_corners: int = 8


@dataclass
class ImageReport:
    path: str
    used: bool = False
    reason: str = ""
    points: int = 0
    rms_px: float = math.nan
    tilt_deg: float = math.nan
    """Angle between the board's normal and the optical axis."""


@dataclass
class IntrinsicsResult:
    K: tuple[float, float, float, float]
    dist: tuple[float, float, float, float, float]
    image_size: tuple[int, int]
    rms_px: float
    images: list[ImageReport]
    sigma: dict[str, float]
    """Standard deviations of fx, fy, cx, cy, k1, k2, p1, p2, k3 (from OpenCV)."""
    board: BoardSpec
    notes: list[str] = field(default_factory=list)

    @property
    def used(self) -> list[ImageReport]:
        return [r for r in self.images if r.used]

    @property
    def rejected(self) -> list[ImageReport]:
        return [r for r in self.images if not r.used]

    def to_json(self) -> dict[str, Any]:
        return nan_to_none({
            "K": list(self.K), "dist": list(self.dist), "image_size": list(self.image_size),
            "rms_px": self.rms_px, "sigma": self.sigma, "board": self.board.describe(),
            "images_used": len(self.used), "images_rejected": len(self.rejected),
            "images": [dataclasses.asdict(r) for r in self.images], "notes": self.notes,
        })


def calibrate_intrinsics(images: Sequence[str | Path], board: BoardSpec,
                         options: IntrinsicsOptions = IntrinsicsOptions(),
                         progress: Callable[[int, int], None] | None = None) -> IntrinsicsResult:
    """K and distortion from in-air photos of a board. ParameterError (bad input) for
    unreadable files, images of different sizes, no board found in any image, or too
    few usable images; CalibrationFailed when OpenCV cannot fit."""
    board.check()
    paths = [Path(p) for p in images]
    if not paths:
        raise ParameterError("no images given", fix="give 15-30 photos of the board")
    size = check_images(paths)
    notes: list[str] = []

    if board.kind == "charuco" and board.dictionary is None:
        sample = [read_gray(p) for p in paths[: min(len(paths), 4)]]
        name, why = auto_dictionary(board, sample)
        if name is None:
            raise ParameterError(
                f"no ArUco marker of any predefined dictionary found in "
                f"{', '.join(map(str, paths[:4]))} ({why})",
                fix="check that the images show the ChArUco board, or give --dictionary")
        board = dataclasses.replace(board, dictionary=name)
        notes.append(f"dictionary {name} found from the images ({why}); give --dictionary to "
                     "set it")
    if board.kind == "charuco" and board.marker_m is None:
        notes.append(f"marker edge taken as 0.75 x square = {board.marker_length * 1000:g} mm "
                     "(give --marker-m)")

    detectors: dict[BoardSpec, Any] = {}
    cache: dict[tuple[BoardSpec, Path], Any] = {}

    def detect(spec: BoardSpec, p: Path) -> Any:
        if (spec, p) not in cache:
            if spec not in detectors:
                detectors[spec] = (Chessboard((spec.cols - 1, spec.rows - 1), spec.square_m)
                                   if spec.kind == "checkerboard"
                                   else Charuco(spec, options.min_charuco_corners))
            cache[spec, p] = detectors[spec].detect(read_gray(p))
        return cache[spec, p]

    def count(spec: BoardSpec, subset: Sequence[Path]) -> int:
        return sum(1 for p in subset if not isinstance(detect(spec, p), str))

    # Inner corners given instead of squares (checkerboard), or a ChArUco board of
    # OpenCV < 4.6 (legacy pattern)? Compare both readings on the first images.
    alt, why = None, ""
    if board.kind == "checkerboard":
        alt = dataclasses.replace(board, cols=board.cols + 1, rows=board.rows + 1)
        why = (f"a board of {board.cols} x {board.rows} inner corners was found: --cols/--rows "
               f"count squares (inner corners + 1); used {alt.cols} x {alt.rows} squares")
    elif not board.legacy:
        alt = dataclasses.replace(board, legacy=True)
        why = "the board has the ChArUco pattern of OpenCV < 4.6 (legacy); used it"
    probe = paths[:3]
    n_probe = count(board, probe)
    if alt is not None and n_probe < len(probe) and count(alt, probe) > n_probe:
        notes.append(why)
        board, alt = alt, None
    found = []
    for k, p in enumerate(paths):
        found.append((detect(board, p), str(p)))
        if progress is not None:
            progress(k + 1, len(paths))
    n_found = sum(1 for r, _ in found if not isinstance(r, str))
    if n_found == 0 and alt is not None and count(alt, paths) > 0:
        notes.append(why)
        board = alt
        found = [(detect(board, p), str(p)) for p in paths]
        n_found = sum(1 for r, _ in found if not isinstance(r, str))

    reports = [ImageReport(path=p) for _, p in found]
    if n_found == 0:
        reasons = [f"{p}: {r}" for r, p in found]
        hint = ("--cols/--rows count the squares along each edge of the board"
                if board.kind == "checkerboard" else
                "check --cols/--rows (squares), --dictionary and --marker-m")
        raise ParameterError(listing(f"no {board.describe()} found in any of the {len(paths)} "
                                      "images", reasons),
                             fix=f"{hint}; the board must be flat, sharp and (checkerboard) "
                                 "wholly in view")
    obj_pts, img_pts, views = [], [], []
    for i, (r, _p) in enumerate(found):
        if isinstance(r, str):
            reports[i].reason = r
            continue
        obj_pts.append(r[0])
        img_pts.append(r[1])
        views.append(i)
        reports[i].points = len(r[0])
    if len(views) < options.min_images:
        raise ParameterError(
            listing(f"the board was found in only {len(views)} of {len(paths)} images; at least "
                     f"{options.min_images} are needed (15-30 recommended)",
                     [f"{r.path}: {r.reason}" for r in reports if r.reason]
                     or [f"{len(paths)} image(s) given"]),
            fix="take more photos of the board (tilted 20-45 degrees, covering the whole image)")

    flags = cv2.CALIB_FIX_K3 if options.fix_k3 else 0
    active = list(range(len(views)))
    while True:
        fit = _opencv_calibrate([obj_pts[a] for a in active], [img_pts[a] for a in active], size,
                                flags)
        pve = fit["per_view"]
        med = float(np.median(pve))
        thr = max(options.outlier_factor * med, options.outlier_floor_px)
        bad = [a for a, e in zip(active, pve) if e > thr]
        if not bad or len(active) - len(bad) < options.min_images:
            if bad:
                notes.append(f"{len(bad)} image(s) with a reprojection RMS above {thr:.2f} px "
                             "kept: "
                             f"rejecting them would leave fewer than {options.min_images}")
            break
        for a, e in zip(active, pve):
            if e > thr:
                reports[views[a]].reason = (f"reprojection RMS {e:.2f} px > {thr:.2f} px "
                                            f"(max({options.outlier_factor:g} x median "
                                            f"{med:.3f}, {options.outlier_floor_px:g}); "
                                            "blurred, bent board or a wrong detection)")
        active = [a for a in active if a not in bad]
    for a, e, rv in zip(active, fit["per_view"], fit["rvecs"]):
        rep = reports[views[a]]
        rep.used, rep.rms_px = True, float(e)
        n = cv2.Rodrigues(rv)[0][:, 2]
        rep.tilt_deg = float(np.degrees(math.acos(min(1.0, abs(float(n[2]))))))
    K = fit["K"]
    d = (list(np.asarray(fit["dist"], float).ravel()) + [0.0] * 5)[:5]
    sd = np.asarray(fit["std_intrinsics"], float).ravel()
    names = ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3")
    sigma = {nm: float(sd[i]) for i, nm in enumerate(names) if i < sd.size}
    used_pts = [img_pts[a] for a in active]
    notes += _coverage_notes(used_pts, size, [reports[views[a]].tilt_deg for a in active])
    if len(active) < 10:
        notes.append(f"only {len(active)} images used: 15-30 give a more reliable calibration")
    return IntrinsicsResult(K=(float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2])),
                            dist=tuple(float(v) for v in d), image_size=size,  # type: ignore[arg-type]
                            rms_px=float(fit["rms"]), images=reports, sigma=sigma, board=board,
                            notes=notes)


def _opencv_calibrate(obj: list[np.ndarray], img: list[np.ndarray], size: tuple[int, int],
                      flags: int) -> dict[str, Any]:
    o = [np.ascontiguousarray(a, dtype=np.float32).reshape(-1, 1, 3) for a in obj]
    i = [np.ascontiguousarray(a, dtype=np.float32).reshape(-1, 1, 2) for a in img]
    crit = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 200, 1e-12)
    try:
        rms, K, dist, rvecs, tvecs, sdi, _sde, pve = cv2.calibrateCameraExtended(
            o, i, size, None, None, flags=flags, criteria=crit)
    except cv2.error as exc:
        raise CalibrationFailed(f"cv2.calibrateCamera failed: {str(exc).strip().splitlines()[-1]}",
                                fix="use more images with the board at different tilts") from None
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(dist)) and K[0, 0] > 0 and K[1, 1] > 0):
        raise CalibrationFailed("cv2.calibrateCamera returned no finite camera matrix",
                                fix="use more images with the board at different tilts")
    return {"rms": rms, "K": K, "dist": dist, "rvecs": rvecs, "tvecs": tvecs,
            "std_intrinsics": sdi, "per_view": np.asarray(pve, float).ravel()}


def _coverage_notes(img_pts: list[np.ndarray], size: tuple[int, int],
                    tilts: list[float]) -> list[str]:
    w, h = size
    pts = np.concatenate(img_pts)
    notes = []
    names = {(0, 0): "top-left", (2, 0): "top-right", (0, 2): "bottom-left", (2, 2): "bottom-right"}
    gx = np.clip((pts[:, 0] / w * 3).astype(int), 0, 2)
    gy = np.clip((pts[:, 1] / h * 3).astype(int), 0, 2)
    cells = set(zip(gx.tolist(), gy.tolist()))
    empty = [nm for c, nm in names.items() if c not in cells]
    if empty:
        notes.append("no board corner in the image's " + ", ".join(empty) + " region(s): the "
                     "distortion is extrapolated there; add views with the board near them")
    if tilts and max(tilts) < 15.0:
        notes.append(f"every view is nearly face-on (largest tilt {max(tilts):.0f} deg): the "
                     "focal length is poorly constrained; tilt the board 20-45 deg")
    return notes
