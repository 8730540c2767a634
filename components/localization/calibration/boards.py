"""Printed calibration boards: checkerboard and ChArUco, their detection in an image."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from ...sdk.errors import ParameterError

BOARDS = ("checkerboard", "charuco")


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


class Chessboard:
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


class Charuco:
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


def auto_dictionary(spec: BoardSpec, grays: list[np.ndarray]) -> tuple[str | None, str]:
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
