"""Calibration of the overhead pool camera (docs/localization.md, "Calibration").

Two steps, two commands, one ``setup.json``:

1. **Intrinsics** (``calibrate_intrinsics``; ``moonpool calibrate intrinsics``): K and the
   k1 k2 p1 p2 k3 distortion (OpenCV order) by ``cv2.calibrateCameraExtended`` from
   15-30 photos, taken in air, of a printed checkerboard (``findChessboardCornersSB``
   with ``CALIB_CB_ACCURACY``; ``findChessboardCorners`` + ``cornerSubPix`` as a
   fallback) or ChArUco board (``cv2.aruco.CharucoDetector``, OpenCV >= 4.7 API).
   ``--cols`` / ``--rows`` count the board's **squares** for both boards (a checkerboard
   of 9 x 6 squares has 8 x 5 inner corners). Images where the board is not found, or
   whose reprojection RMS is an outlier (> max(3 x median, 0.5 px)), are rejected with
   the reason; the RMS reprojection error, each image's error and the standard
   deviations of the intrinsics are reported.

2. **Extrinsics and water plane** (``calibrate_water``; ``moonpool calibrate water``):
   R_wc, t_wc and the camera height above the water from images of AprilTags (the
   vehicle, or a tag board) at known depths, by nonlinear least squares (Levenberg-
   Marquardt, the per-image poses eliminated by the Schur complement) of the tag
   corners' reprojection error **through the refraction model** (``refraction.py``:
   forward projection through the flat surface, exact to 1e-9 px); the covariance
   from the Jacobian. Unknowns: the
   camera's roll and pitch about the vertical, its height h above the water, and per
   image the body's horizontal position and yaw (unless the manifest gives them).

Observability and the gauge (what the data can and cannot tell):

- Depths from a pressure sensor or a tape are measured **from the water surface**: a
  shift of the water plane and the camera together along z changes no image. Only the
  camera height h = water_z - t_wc.z is observable; ``water_z`` stays at the value in
  the setup (0 by the world frame's definition: origin on the still surface) and
  t_wc.z = water_z - h.
- Horizontal translation of the world and rotation about the vertical are gauge
  freedoms unless the manifest gives known positions (x_m, y_m, or a dataset line's
  truth: one image fixes the camera's x, y) and a known yaw (yaw_rad) or two known
  positions >= 5 cm apart (fix the heading). Without them the camera's x, y and heading (the horizontal direction
  of the image's +x axis) keep the setup's values (x = y = 0, heading 0 without one).
- With world heights from a survey instead (``z_m``: world z of the body origin, not
  relative to the surface) water_z becomes a free parameter, but weakly: paraxially a
  tag's apparent distance is h + (z - water_z) / n_w, which fixes only
  (1 - 1/n_w) water_z - t_wc.z; off-axis views separate them (its sigma is reported).
- Tilt (2 DOF) comes from the perspective of tags whose own tilt is known (level, or
  roll/pitch from the IMU); h from the tags' known size and depths. Both rest on the
  intrinsics, tag_size_m and n_water: the sensitivities of h to a common depth bias,
  to n_water and to the focal length are reported beside the fit's sigma.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..sdk.errors import MoonpoolError, ParameterError
from ..sensors.common import rot_from_euler
from .detect import Detection, DetectorOptions, TagDetector, as_gray8
from .measure import MeasurerOptions, RefractionMeasurer
from .pool_setup import FORMAT_VERSION, PoolSetup, dumps_compact, parse_setup
from .refraction import RefractiveCamera

BOARDS = ("checkerboard", "charuco")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".webp")
MANIFEST_FILE = "manifest.jsonl"
LAYOUT_FILE = "layout.json"
_MAX_LISTED = 10


class CalibrationFailed(MoonpoolError):
    """The inputs were read but the calibration could not be computed (exit 1)."""


# ====================================================================== images


def expand_images(args: Sequence[str | Path]) -> list[Path]:
    """Image paths from the command line: files, folders (their images, sorted) and
    quoted glob patterns. Raises ParameterError for a missing file or an empty folder."""
    out: list[Path] = []
    missing: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise ParameterError(f"{p}: no image files in this folder "
                                     f"({', '.join(IMAGE_SUFFIXES)})",
                                     fix="give the calibration images or their folder")
            out += found
        elif p.is_file():
            out.append(p)
        elif any(ch in str(a) for ch in "*?["):
            found = sorted(Path(q) for q in glob.glob(str(a)) if Path(q).is_file())
            if not found:
                missing.append(f"{a}: no file matches")
            out += found
        else:
            missing.append(f"{p}: no such file")
    if missing:
        raise ParameterError(_listing("image(s) not found", missing),
                             fix="check the paths (or remove them from the command)")
    if not out:
        raise ParameterError("no images given",
                             fix="give the calibration images (files or a folder)")
    return out


def _listing(title: str, items: list[str]) -> str:
    shown = items[:_MAX_LISTED]
    more = f"\n  ... and {len(items) - _MAX_LISTED} more" if len(items) > _MAX_LISTED else ""
    return f"{title}:\n  " + "\n  ".join(shown) + more


def read_gray(path: str | Path) -> np.ndarray:
    """An image file as 8-bit grey (colour converted, 16 bit scaled). ParameterError
    naming the file when it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{p}: no such file", fix="check the path")
    img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ParameterError(f"{p}: not a readable image (corrupt, or a format OpenCV cannot read)",
                             fix="remove it, or re-save it as PNG or JPEG")
    try:
        return as_gray8(img)
    except ValueError as exc:
        raise ParameterError(f"{p}: {exc}", fix="use 8- or 16-bit grey or colour images") from None


def _check_images(paths: Sequence[Path]) -> tuple[int, int]:
    """Every image readable and of one size; returns (width, height). One ParameterError
    listing every unreadable file, or naming the first image of another size."""
    problems: list[str] = []
    size: tuple[int, int] | None = None
    first: Path | None = None
    for p in paths:
        try:
            g = read_gray(p)
        except ParameterError as exc:
            problems.append(exc.message)
            continue
        wh = (g.shape[1], g.shape[0])
        if size is None:
            size, first = wh, p
        elif wh != size:
            raise ParameterError(
                f"{p}: the image is {wh[0]}x{wh[1]} px but {first} is {size[0]}x{size[1]} px",
                fix="calibrate with images of one camera at one resolution (remove the others)")
    if problems:
        raise ParameterError(_listing(f"{len(problems)} image(s) cannot be read", problems),
                             fix="remove them from the list, or re-save them as PNG or JPEG")
    assert size is not None
    return size


# ====================================================================== boards


_DICT_NAMES = {n[5:].upper(): n for n in dir(cv2.aruco) if n.startswith("DICT_")}
# Largest member of each marker family (the 4x4..7x7 sizes are prefixes of the _1000 table).
_AUTO_FAMILIES = ("DICT_4X4_1000", "DICT_5X5_1000", "DICT_6X6_1000", "DICT_7X7_1000",
                  "DICT_ARUCO_ORIGINAL", "DICT_APRILTAG_16h5", "DICT_APRILTAG_25h9",
                  "DICT_APRILTAG_36h10", "DICT_APRILTAG_36h11", "DICT_ARUCO_MIP_36h12")


def dictionary_name(name: str) -> str:
    """The cv2.aruco constant for a dictionary name ('DICT_5X5_100', '5x5_100', ...)."""
    key = name.strip().upper()
    key = key.removeprefix("DICT_")
    if key not in _DICT_NAMES:
        raise ParameterError(f"unknown ArUco dictionary {name!r}",
                             fix="use one of " + ", ".join(sorted(set(_DICT_NAMES.values()))))
    return _DICT_NAMES[key]


def _smallest_variant(family_name: str, n_markers: int) -> str:
    """DICT_5X5_1000 -> DICT_5X5_50 when the board has <= 50 markers (same codes)."""
    if family_name.endswith("_1000"):
        stem = family_name[: -len("1000")]
        for size in (50, 100, 250, 1000):
            if size >= n_markers:
                return f"{stem}{size}"
    return family_name


@dataclass(frozen=True)
class BoardSpec:
    """A printed calibration board. ``cols`` x ``rows`` count **squares** (a checkerboard
    of 9 x 6 squares has 8 x 5 inner corners; a ChArUco board of 9 x 6 squares has
    27 markers)."""

    kind: str
    cols: int
    rows: int
    square_m: float
    marker_m: float | None = None
    """ChArUco marker edge, m (default 0.75 x square_m)."""
    dictionary: str | None = None
    """ChArUco dictionary name (None: found from the images)."""
    legacy: bool = False
    """ChArUco pattern of OpenCV < 4.6 (different for an even number of rows)."""

    def check(self) -> None:
        if self.kind not in BOARDS:
            raise ParameterError(f"unknown board {self.kind!r}", fix="use checkerboard or charuco")
        low = 3 if self.kind == "checkerboard" else 2
        if not (isinstance(self.cols, int) and isinstance(self.rows, int)
                and self.cols >= low and self.rows >= low and self.cols * self.rows >= 6):
            raise ParameterError(f"board of {self.cols} x {self.rows} squares is too small",
                                 fix="count the squares of the printed board along each edge "
                                     "(--cols, --rows; at least 3 x 3)")
        if not (self.square_m > 0 and math.isfinite(self.square_m)):
            raise ParameterError(f"--square-m must be > 0, got {self.square_m}",
                                 fix="the edge of one square of the printed board, m")
        if self.marker_m is not None and not (0 < self.marker_m < self.square_m):
            raise ParameterError(f"--marker-m {self.marker_m} must be > 0 and smaller than "
                                 f"--square-m {self.square_m}",
                                 fix="the edge of one ArUco marker (its black border included), m")
        if self.dictionary is not None:
            dictionary_name(self.dictionary)

    @property
    def marker_length(self) -> float:
        return self.marker_m if self.marker_m is not None else 0.75 * self.square_m

    @property
    def n_markers(self) -> int:
        return (self.cols * self.rows) // 2

    def describe(self) -> str:
        if self.kind == "checkerboard":
            return (f"checkerboard {self.cols} x {self.rows} squares ({self.cols - 1} x "
                    f"{self.rows - 1} inner corners), {self.square_m * 1000:g} mm")
        leg = ", legacy pattern" if self.legacy else ""
        return (f"ChArUco {self.cols} x {self.rows} squares, {self.square_m * 1000:g} mm, markers "
                f"{self.marker_length * 1000:g} mm, {self.dictionary or '?'}{leg}")


class _Chessboard:
    """Checkerboard detection: SB (accurate) first, the classic detector + cornerSubPix
    as a fallback. ``inner`` = inner corners (nx, ny)."""

    def __init__(self, inner: tuple[int, int], square: float) -> None:
        self.inner = inner
        nx, ny = inner
        self.obj = np.array([[i * square, j * square, 0.0] for j in range(ny) for i in range(nx)])

    def detect(self, gray: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        ok, c = cv2.findChessboardCornersSB(gray, self.inner,
                                            flags=cv2.CALIB_CB_EXHAUSTIVE | cv2.CALIB_CB_ACCURACY)
        if ok:
            return self.obj, c.reshape(-1, 2).astype(float)
        flags = (cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
                 | cv2.CALIB_CB_FAST_CHECK)
        ok, c = cv2.findChessboardCorners(gray, self.inner, flags=flags)
        if ok:
            c = c.reshape(-1, 2)
            g = c.reshape(self.inner[1], self.inner[0], 2)
            spacing = min(np.linalg.norm(np.diff(g, axis=0), axis=-1).min(),
                          np.linalg.norm(np.diff(g, axis=1), axis=-1).min())
            win = int(np.clip(spacing * 0.3, 2, 11))
            c = cv2.cornerSubPix(gray, c.reshape(-1, 1, 2).astype(np.float32), (win, win), (-1, -1),
                                 (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 100, 1e-4))
            return self.obj, c.reshape(-1, 2).astype(float)
        return f"no checkerboard of {self.inner[0]} x {self.inner[1]} inner corners found"


class _Charuco:
    def __init__(self, spec: BoardSpec, min_corners: int) -> None:
        self.spec = spec
        d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary_name(spec.dictionary)))
        self.board = cv2.aruco.CharucoBoard((spec.cols, spec.rows), spec.square_m,
                                            spec.marker_length, d)
        if spec.legacy:
            self.board.setLegacyPattern(True)
        self.detector = cv2.aruco.CharucoDetector(self.board)
        self.min_corners = min_corners

    def raw(self, gray: np.ndarray) -> tuple[int, int]:
        """(ChArUco corners, markers) found."""
        _cc, ci, _mc, mi = self.detector.detectBoard(gray)
        return (0 if ci is None else len(ci)), (0 if mi is None else len(mi))

    def detect(self, gray: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        cc, ci, _mc, mi = self.detector.detectBoard(gray)
        nm = 0 if mi is None else len(mi)
        n = 0 if ci is None else len(ci)
        if n == 0:
            return (f"no ChArUco corner found ({nm} marker(s) of {self.spec.dictionary})"
                    if nm else f"no marker of {self.spec.dictionary} found")
        if n < self.min_corners:
            return f"only {n} ChArUco corners (need >= {self.min_corners})"
        if self.board.checkCharucoCornersCollinear(ci):
            return f"the {n} ChArUco corners found are collinear"
        obj, img = self.board.matchImagePoints(cc, ci)
        return obj.reshape(-1, 3).astype(float), img.reshape(-1, 2).astype(float)


def _auto_dictionary(spec: BoardSpec, grays: list[np.ndarray]) -> tuple[str | None, str]:
    """The dictionary whose markers (ids within the board's) appear most in the first
    image that shows any."""
    for g in grays:
        best, best_n = None, 0
        for fam in _AUTO_FAMILIES:
            d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, fam))
            _c, ids, _r = cv2.aruco.ArucoDetector(d).detectMarkers(g)
            n = 0 if ids is None else int(np.sum(ids.ravel() < spec.n_markers))
            if n > best_n:
                best, best_n = fam, n
        if best is not None:
            return _smallest_variant(best, spec.n_markers), f"{best_n} markers in one image"
    return None, "no marker of " + ", ".join(_AUTO_FAMILIES)


# ================================================================ intrinsics


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
        return _nan_to_none({
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
    size = _check_images(paths)
    notes: list[str] = []

    if board.kind == "charuco" and board.dictionary is None:
        sample = [read_gray(p) for p in paths[: min(len(paths), 4)]]
        name, why = _auto_dictionary(board, sample)
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
                detectors[spec] = (_Chessboard((spec.cols - 1, spec.rows - 1), spec.square_m)
                                   if spec.kind == "checkerboard"
                                   else _Charuco(spec, options.min_charuco_corners))
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
        raise ParameterError(_listing(f"no {board.describe()} found in any of the {len(paths)} "
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
            _listing(f"the board was found in only {len(views)} of {len(paths)} images; at least "
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


def format_intrinsics_report(res: IntrinsicsResult) -> str:
    fx, fy, cx, cy = res.K
    sd = res.sigma
    n_pts = sum(r.points for r in res.used)
    lines = [f"intrinsic calibration: {res.board.describe()}",
             f"images: {len(res.images)} given, {len(res.used)} used, {len(res.rejected)} rejected",
             (f"RMS reprojection error {res.rms_px:.3f} px ({n_pts} corners, image "
              f"{res.image_size[0]} x {res.image_size[1]} px)")]
    for a, va, b, vb in (("fx", fx, "fy", fy), ("cx", cx, "cy", cy)):
        lines.append(f"  {a} {va:10.3f} ± {sd.get(a, math.nan):.3f}   "
                     f"{b} {vb:10.3f} ± {sd.get(b, math.nan):.3f}")
    lines.append("  dist [k1 k2 p1 p2 k3] = [" + ", ".join(f"{v:.5f}" for v in res.dist) + "]")
    lines.append("per image (RMS px, points, board tilt):")
    for r in res.images:
        if r.used:
            lines.append(f"  {r.path}: {r.rms_px:.3f} px, {r.points} points, {r.tilt_deg:.0f} deg")
    for r in res.rejected:
        lines.append(f"  {r.path}: rejected: {r.reason}")
    lines += [f"note: {n}" for n in res.notes]
    return "\n".join(lines)


# ============================================================ setup.json I/O


def read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}",
                             fix="give the path of a setup.json") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}",
                             fix="correct the JSON syntax (or delete the file to start afresh)"
                             ) from None
    if not isinstance(data, dict):
        raise ParameterError(f"{path}: expected a JSON object", fix="see docs/localization.md")
    return data


def _set_key(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` where it lives (top level, or the "camera" group), else at the top."""
    cam = data.get("camera")
    if key not in data and isinstance(cam, dict) and key in cam:
        cam[key] = value
    else:
        data[key] = value


def _has(data: dict[str, Any], key: str) -> bool:
    cam = data.get("camera")
    return key in data or (isinstance(cam, dict) and key in cam)


def _flatten(data: dict[str, Any]) -> dict[str, Any]:
    cam = data.get("camera")
    flat = {k: v for k, v in data.items() if k != "camera"}
    if isinstance(cam, dict):
        for k, v in cam.items():
            flat.setdefault(k, v)
    return flat


_ORDER = ("format", "name", "K", "dist", "R_wc", "t_wc", "image_size", "camera", "water_z",
          "n_air", "n_water", "tag_family", "tag_size_m", "tags")


def _write_json(data: dict[str, Any], path: Path) -> None:
    """Write with the keys in the documented order (unknown keys after them)."""
    if "format" not in data:
        data = {"format": f"moonpool.pool_setup/{FORMAT_VERSION}", **data}
    data = {**{k: data[k] for k in _ORDER if k in data},
            **{k: v for k, v in data.items() if k not in _ORDER}}
    try:
        path.write_text(dumps_compact(data) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"cannot write {path}: {exc.strerror or exc}",
                             fix="give --out a writable path") from None


_REQUIRED = ("K", "R_wc", "t_wc", "tag_size_m", "tags")


def _completeness(data: dict[str, Any], source: str) -> list[str]:
    missing = [k for k in _REQUIRED if not _has(data, k)]
    if missing:
        what = []
        if "R_wc" in missing or "t_wc" in missing:
            what.append("R_wc/t_wc: run `moonpool calibrate water`")
        if "tag_size_m" in missing or "tags" in missing:
            what.append("tag_size_m and tags: add the vehicle's tag layout (docs/localization.md)")
        return [f"{source} is not complete yet (missing {', '.join(missing)}): " + "; ".join(what)]
    try:
        parse_setup(data, source)
    except ParameterError as exc:
        return [f"{source} does not validate: {exc}"]
    return []


def check_output(out: str | Path) -> None:
    """Fail early (before the work) when ``out`` exists but is not a JSON object, or
    its folder does not exist."""
    path = Path(out)
    if path.is_dir():
        path = path / "setup.json"
    if path.exists():
        read_json_object(path)
    elif not path.parent.is_dir():
        raise ParameterError(f"cannot write {path}: the folder {path.parent} does not exist",
                             fix="create it, or give --out another path")


def write_intrinsics(res: IntrinsicsResult, out: str | Path) -> list[str]:
    """Create ``out`` or update its K, dist and image_size (other keys kept). Returns notes."""
    path = Path(out)
    if path.is_dir():
        path = path / "setup.json"
    notes = []
    if path.exists():
        data = read_json_object(path)
        if _has(data, "R_wc") or _has(data, "t_wc"):
            notes.append(f"{path} holds R_wc/t_wc fitted with the previous intrinsics: run "
                         "`moonpool calibrate water` again")
        old = _flatten(data).get("image_size")
        if old is not None and list(old) != list(res.image_size):
            notes.append(f"image_size changed from {old} to {list(res.image_size)}")
    else:
        data = {}
    _set_key(data, "K", list(res.K))
    _set_key(data, "dist", list(res.dist))
    _set_key(data, "image_size", list(res.image_size))
    _write_json(data, path)
    return [f"wrote {path}"] + notes + _completeness(data, str(path))


# ============================================================ water plane


@dataclass
class WaterSample:
    """One manifest line of ``calibrate water``."""

    line: int
    image: str
    depth_m: float | None
    """Depth of the body origin below the water surface, m (relative to water_z)."""
    z_m: float | None
    """World z of the body origin from a survey, m (absolute; frees water_z)."""
    roll_rad: float = 0.0
    pitch_rad: float = 0.0
    x_m: float | None = None
    y_m: float | None = None
    yaw_rad: float | None = None

    @property
    def known_xy(self) -> bool:
        return self.x_m is not None and self.y_m is not None


def read_water_manifest(folder: Path, layout: PoolSetup) -> list[WaterSample]:
    """Parse FOLDER/manifest.jsonl strictly (a calibration's few lines must all be right):
    one ParameterError listing every bad line."""
    path = folder / MANIFEST_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}",
                             fix="the folder must hold manifest.jsonl and the images "
                                 "(docs/localization.md, Calibration)") from None
    centroid = np.mean([t.center_b for t in layout.tags], axis=0)
    out, problems = [], []
    seen: set[str] = set()
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"{MANIFEST_FILE}:{i}"
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        image = rec.get("image")
        if not isinstance(image, str) or not image:
            problems.append(f"{where}: 'image' must be a file name")
            continue

        def num(key: str, default: Any = None, rec: dict = rec) -> Any:
            v = rec.get(key)
            if v is None:
                return default
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"'{key}' must be a finite number, got {v!r}")
            return float(v)

        try:
            depth, tag_depth, z = num("depth_m"), num("tag_depth_m"), num("z_m")
            roll, pitch = num("roll_rad", 0.0), num("pitch_rad", 0.0)
            x, y, yaw = num("x_m"), num("y_m"), num("yaw_rad")
            truth = rec.get("truth")
            if isinstance(truth, dict):  # a dataset's truth is a known position
                if x is None and y is None:
                    x, y = num("x_m", rec=truth), num("y_m", rec=truth)
                if yaw is None:
                    yaw = num("yaw_rad", rec=truth)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        given = [k for k, v in (("depth_m", depth), ("tag_depth_m", tag_depth), ("z_m", z))
                 if v is not None]
        if len(given) != 1:
            problems.append(f"{where}: give exactly one of depth_m (body origin below the "
                            "surface), tag_depth_m (tag plane below the surface) or z_m "
                            f"(surveyed world z of the body origin); got {given or 'none'}")
            continue
        if (x is None) != (y is None):
            problems.append(f"{where}: give both x_m and y_m (known position) or neither")
            continue
        if image in seen:
            problems.append(f"{where}: image {image} listed twice")
            continue
        seen.add(image)
        if tag_depth is not None:
            Rt = rot_from_euler(roll, pitch, 0.0)
            depth = tag_depth - float((Rt @ centroid)[2])
        out.append(WaterSample(i, image, depth, z, roll, pitch, x, y, yaw))
    if problems:
        raise ParameterError(_listing(f"{path}: {len(problems)} bad line(s)", problems),
                             fix='one JSON object per line: {"image": "a.png", "depth_m": 0.8} '
                                 "(docs/localization.md, Calibration)")
    if not out:
        raise ParameterError(f"{path}: no image listed",
                             fix="one line per image of tags at a known depth")
    return out


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
        return _nan_to_none({"R_wc": self.R_wc.tolist(), "t_wc": self.t_wc.tolist(),
                             "water_z": self.water_z,
                "height_m": self.height_m, "tilt_deg": self.tilt_deg, "sigma": self.sigma,
                "free": self.free, "rms_px": self.rms_px, "corners": self.corners,
                "sensitivity": self.sensitivity, "gauge": self.gauge, "notes": self.notes,
                "images_used": len(self.used), "images_rejected": len(self.rejected),
                "images": [dataclasses.asdict(r) for r in self.images]})


# Camera parameters of the fit: R_wc = R_z(heading) R_y(pitch) R_x(roll) (so with all
# three 0 the camera looks straight down with image +x along world +x, +y along
# world +y); t_wc = (x, y, water_z - height).
_CAM = ("roll", "pitch", "heading", "x", "y", "height", "water_z")
_STEP = 1e-6


def camera_angles(R: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, heading) with R = R_z(heading) R_y(pitch) R_x(roll)."""
    pitch = math.asin(max(-1.0, min(1.0, -float(R[2, 0]))))
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


class _WaterModel:
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
        hk = _CAM.index("height")
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


def _load_water_setup(setup_path: Path,
                      folder: Path) -> tuple[dict[str, Any], PoolSetup, bool, str]:
    """(raw setup JSON, the PoolSetup to fit with, whether it holds extrinsics, where the
    tag layout comes from)."""
    data = read_json_object(setup_path)
    flat = _flatten(data)
    if "K" not in flat:
        raise ParameterError(f"{setup_path}: K: missing (no camera intrinsics)",
                             fix="run `moonpool calibrate intrinsics ... --out "
                                 f"{setup_path}` first")
    layout_src = str(setup_path)
    layout_path = folder / LAYOUT_FILE
    if layout_path.is_file():
        lay = read_json_object(layout_path)
        for k in ("tag_size_m", "tags"):
            if k not in lay:
                raise ParameterError(f"{layout_path}: {k}: missing",
                                     fix="a layout.json holds tag_family, tag_size_m and tags "
                                         "(as setup.json; body frame = the board's frame)")
        flat["tag_size_m"], flat["tags"] = lay["tag_size_m"], lay["tags"]
        flat["tag_family"] = lay.get("tag_family", flat.get("tag_family", "tag36h11"))
        layout_src = str(layout_path)
    elif "tags" not in flat or "tag_size_m" not in flat:
        raise ParameterError(f"{setup_path}: no tag layout (tag_size_m and tags)",
                             fix=f"add the vehicle's tag_size_m and tags to {setup_path}, or "
                                 f"put the calibration board's layout in {layout_path}")
    has_ext = "R_wc" in flat and "t_wc" in flat
    if not has_ext:
        wz = flat.get("water_z", 0.0)
        flat["R_wc"] = np.eye(3).tolist()
        flat["t_wc"] = [0.0, 0.0, (wz if isinstance(wz, (int, float)) else 0.0) - 2.0]
    setup = parse_setup(flat, str(setup_path) if layout_src == str(setup_path)
                        else f"{setup_path} + {layout_path}")
    return data, setup, has_ext, layout_src


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
    _data, setup, has_ext, layout_src = _load_water_setup(setup_path, folder)
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
        raise ParameterError(_listing(f"{len(problems)} image(s) of the manifest are missing",
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
        raise ParameterError(_listing(f"{len(bad_read)} image(s) cannot be read", bad_read),
                             fix="re-export them as PNG or JPEG, or remove their lines")
    active = [i for i in range(len(samples)) if dets[i]]
    if not active:
        raise ParameterError(_listing(f"no tag of the layout found in any of the {len(samples)} "
                                      "images", [f"{r.image}: {r.reason}" for r in reports]),
                             fix=f"check tag_family/tags in {layout_src} and that the tags are in "
                                 "view and sharp")

    fit = _fit_water(setup, has_ext, samples, dets, active, reports, options, notes)
    return fit


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    return obj


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
        cam0 = _initial_camera(setup, sub, [dets[i] for i in active], gauge_heading, wz0)
        notes.append("no R_wc/t_wc in the setup: started from a pinhole PnP estimate "
                     f"(height {cam0[5]:.2f} m, tilt "
                     f"{math.degrees(math.hypot(cam0[0], cam0[1])):.1f} deg)")
    # -- initial poses of the vehicle (refraction-aware closed form), then the known ones
    model_all = None
    for rnd in range(options.max_rounds + 1):
        idx = list(active)
        obs = [(np.concatenate([setup.corners_body(d.id) for d in dets[i]]),
                np.concatenate([d.corners for d in dets[i]])) for i in idx]
        model = _WaterModel(setup, [samples[i] for i in idx], obs)
        model.cam = cam0.copy()
        xy_free, heading_free, wz_free = _freedoms([samples[i] for i in idx])
        model.cam_free[:] = [True, True, heading_free, xy_free, xy_free, True, wz_free]
        model.img = _initial_poses(model, [dets[i] for i in idx], cam0)
        if rnd == 0:
            model.cam, model.img = _align_known(model, heading_free, xy_free)
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
    free_names = [n for n, f in zip(_CAM, model.cam_free) if f]
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
                       free={n: bool(f) for n, f in zip(_CAM, model.cam_free)},
                       rms_px=float(np.sqrt(np.mean(np.sum(fun.reshape(-1, 2) ** 2, axis=1)))),
                       corners=len(model.px), images=reports, sensitivity=sens, gauge=gauge,
                       notes=notes, iterations=int(iters))


def _freedoms(samples: list[WaterSample]) -> tuple[bool, bool, bool]:
    """Which gauge freedoms the data remove: (camera x, y; heading; water_z)."""
    known_xy = [s for s in samples if s.known_xy]
    spread = 0.0
    if len(known_xy) >= 2:
        P = np.array([[s.x_m, s.y_m] for s in known_xy])
        spread = float(np.max(np.linalg.norm(P - P[0], axis=1)))
    heading = any(s.yaw_rad is not None for s in samples) or spread >= 0.05
    return bool(known_xy), heading, any(s.z_m is not None for s in samples)


def _initial_camera(setup: PoolSetup, samples: list[WaterSample], dets: list[list[Detection]],
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


def _initial_poses(model: _WaterModel, dets: list[list[Detection]], cam: np.ndarray) -> np.ndarray:
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


def _align_known(model: _WaterModel, heading_free: bool,
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


def format_water_report(res: WaterResult) -> str:
    sd = res.sigma
    roll, pitch, heading = (math.degrees(v) for v in camera_angles(res.R_wc))
    lines = [(f"water-plane calibration: {len(res.images)} images, {len(res.used)} used, "
             f"{len(res.rejected)} rejected")]
    lines.append(f"RMS reprojection error {res.rms_px:.3f} px ({res.corners} tag corners)")
    lines.append(f"camera height above the water  {res.height_m:.4f} m ± "
                 f"{sd['height_m'] * 1000:.1f} mm (fit {sd['height_fit_m'] * 1000:.1f} mm, "
                 f"depths {sd['height_depth_m'] * 1000:.1f} mm)")
    if res.free["water_z"]:
        lines.append(f"water_z {res.water_z:.4f} m ± {sd['water_z_m'] * 1000:.1f} mm (fitted; "
                     f"correlation with the height {sd.get('corr_height_water_z', math.nan):+.2f})")
    else:
        lines.append(f"water_z {res.water_z:.4f} m (held: gauge)")
    lines.append(f"camera tilt from vertical {res.tilt_deg:.3f} deg (roll {roll:+.3f} ± "
                 f"{sd['roll_deg']:.3f}, pitch {pitch:+.3f} ± {sd['pitch_deg']:.3f} deg)")
    lines.append(f"heading (image +x) {heading:+.3f} deg" + (
        f" ± {sd['heading_deg']:.3f}" if res.free["heading"] else " (held: gauge)"))
    lines.append("t_wc [" + ", ".join(f"{v:.4f}" for v in res.t_wc) + "] m" + (
        f" (x ± {sd['x_m'] * 1000:.1f} mm, y ± {sd['y_m'] * 1000:.1f} mm)" if res.free["x"]
        else " (x, y held: gauge)"))
    sens = res.sensitivity
    lines.append(f"sensitivity of the height: {sens['height_per_depth_bias']:+.2f} mm per mm of "
                 f"common depth bias, {sens['height_per_n_water']:+.2f} mm per +0.001 n_water, "
                 f"{sens['height_per_focal_scale']:+.2f} mm per +0.1 % focal length")
    lines += [f"gauge: {g}" for g in res.gauge]
    lines.append("per image (RMS px, tags, fitted x, y, yaw):")
    for r in res.images:
        if r.used:
            lines.append(f"  {r.image}: {r.rms_px:.3f} px, tags {list(r.tags)}, x {r.x_m:+.4f} "
                         f"y {r.y_m:+.4f} m, yaw {math.degrees(r.yaw_rad):+.2f} deg")
    for r in res.rejected:
        lines.append(f"  {r.image}: rejected: {r.reason}")
    lines += [f"note: {n}" for n in res.notes]
    return "\n".join(lines)


def write_water(res: WaterResult, setup_path: str | Path,
                out: str | Path | None = None) -> list[str]:
    """Write the setup (``out``, default ``setup_path`` itself) with R_wc, t_wc and
    water_z replaced; every other key kept. Returns notes."""
    src = Path(setup_path)
    path = Path(out) if out is not None else src
    if path.is_dir():
        path = path / "setup.json"
    data = read_json_object(src)
    _set_key(data, "R_wc", [[float(v) for v in row] for row in res.R_wc])
    _set_key(data, "t_wc", [float(v) for v in res.t_wc])
    _set_key(data, "water_z", float(res.water_z))
    _write_json(data, path)
    return [f"wrote {path}"] + _completeness(data, str(path))
