"""AprilTag detection with pupil-apriltags, its known pitfalls handled.

Pitfalls (docs/localization.md, "Detection"):

1. ``Detector(families=...)`` honours only one family even when several are given:
   we take exactly one and refuse a list.
2. ``decode_sharpening`` is truncated to an integer by the wrapper (0.25 becomes 0):
   we set the C struct's double field directly after construction.
3. Corners use the convention that pixel i spans [i, i + 1]; OpenCV (and this code
   base) puts pixel centres at integers: we subtract 0.5 px from corners and centre.
4. The corner order starts at the bottom-left of the upright tag and goes
   bottom-right, top-right, top-left (counter-clockwise on the tag; clockwise as
   seen in an image with y down when the tag faces the camera). Kept as is; the
   body-frame corners of ``tags.tag_corners_body`` use the same order.
5. The family name comes back as ``bytes``; ids with up to 2 corrected bits are
   accepted by the C library: we keep ``hamming <= max_hamming`` (default 1) and
   ``decision_margin >= min_decision_margin``.
6. Only 8-bit single-channel images are accepted: colour is converted to grey,
   16-bit is scaled.
7. Destroying a ``Detector`` (its ``__del__``) after a full-resolution detection
   (``quad_decimate = 1``) corrupts the heap with the bundled C library: the process
   crashes later, somewhere else — at the latest when the interpreter exits and
   collects it (a segmentation fault after a finished run). One C detector per family
   is created for the life of the process, shared (under a lock) and never destroyed:
   its ``__del__`` is disabled, the operating system frees it at exit. Every
   ``TagDetector`` sets its own options on it before each call.
8. Full-resolution detection (``quad_decimate = 1``) of a 1280x720 frame costs
   ~0.15 s; decimated quad search with ``refine_edges`` keeps the full-resolution
   corner accuracy at a fraction of the cost, and a region of interest (the tags'
   last position) costs ~2 ms.

An id seen twice in one image is ambiguous and dropped (both), with a reason; so is
a tag with a corner within ``border_px`` of the image edge (a tag cut by the border
is "found" with a corner on the border).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import cv2
import numpy as np

from .tags import FAMILIES


@dataclass(frozen=True)
class DetectorOptions:
    family: str = "tag36h11"
    quad_decimate: float = 2.0
    """Decimation of the quad search on a full frame (corners are refined at full
    resolution when refine_edges is on)."""
    roi_decimate: float = 1.0
    """Decimation inside a region of interest."""
    quad_sigma: float = 0.0
    refine_edges: bool = True
    decode_sharpening: float = 0.25
    max_hamming: int = 1
    min_decision_margin: float = 10.0
    nthreads: int = 1
    border_px: float = 2.0
    """Detections with a corner closer than this to the image edge are dropped (a tag cut
    by the border is found with a wrong corner)."""

    def check(self) -> None:
        if not isinstance(self.family, str) or len(self.family.split()) != 1:
            raise ValueError(f"give exactly one tag family, got {self.family!r} (pupil-apriltags "
                             "silently uses only one of several)")
        if self.family not in FAMILIES:
            raise ValueError(f"unknown tag family {self.family!r}; known: {', '.join(FAMILIES)}")
        if not (self.quad_decimate >= 1 and self.roi_decimate >= 1):
            raise ValueError("quad_decimate and roi_decimate must be >= 1")
        if not (self.quad_sigma >= 0 and self.decode_sharpening >= 0):
            raise ValueError("quad_sigma and decode_sharpening must be >= 0")
        if not 0 <= self.max_hamming <= 2:
            raise ValueError("max_hamming must be 0, 1 or 2")
        if not self.nthreads >= 1:
            raise ValueError("nthreads must be >= 1")


@dataclass(frozen=True)
class Detection:
    """One detected tag, in OpenCV pixel coordinates (pixel centres at integers)."""

    id: int
    corners: np.ndarray
    """(4, 2) corners: bottom-left, bottom-right, top-right, top-left of the upright tag."""
    center: np.ndarray
    hamming: int = 0
    decision_margin: float = 0.0
    family: str = "tag36h11"


@dataclass
class DetectionResult:
    detections: list[Detection] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    """(id, reason) of detections that were dropped."""


def uint16_to_8bit(img: np.ndarray) -> np.ndarray:
    """16-bit pixels to 8 bits by their significant bits: ``v >> (b − 8)``, where b
    (≥ 8) is the bit length of the image's largest value. Data of 16 bits keeps its
    high byte; 10-, 12- or 14-bit data stored right-aligned (0–4095 for 12 bits, as
    many machine-vision cameras write it) fills the 8-bit range too, instead of
    reading 16× too dark."""
    shift = max(0, int(img.max(initial=0)).bit_length() - 8)
    return (img >> shift).astype(np.uint8)


def as_gray8(image: np.ndarray) -> np.ndarray:
    """A C-contiguous 2-D uint8 view/copy of ``image`` (grey, BGR or BGRA; 8 or 16 bit;
    16 bit by its significant bits, :func:`uint16_to_8bit`)."""
    img = np.asarray(image)
    if img.ndim == 3:
        if img.shape[2] == 1:
            img = img[..., 0]
        elif img.shape[2] == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        elif img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2GRAY)
        else:
            raise ValueError(f"cannot read an image with {img.shape[2]} channels")
    if img.ndim != 2:
        raise ValueError(f"expected a 2-D image, got shape {img.shape}")
    if img.dtype == np.uint16:
        img = uint16_to_8bit(img)
    elif img.dtype != np.uint8:
        if np.issubdtype(img.dtype, np.floating):
            img = np.clip(img * (255.0 if img.max() <= 1.0 else 1.0), 0, 255).astype(np.uint8)
        else:
            raise ValueError(f"unsupported image type {img.dtype}")
    return np.ascontiguousarray(img)


_SHARED: dict[str, tuple[object, threading.Lock]] = {}
_SHARED_LOCK = threading.Lock()


def _shared_detector(family: str):
    """The process-wide pupil-apriltags Detector of ``family`` (never destroyed: pitfall 7)."""
    with _SHARED_LOCK:
        entry = _SHARED.get(family)
        if entry is None:
            import pupil_apriltags

            class _Undestroyed(pupil_apriltags.Detector):
                def __del__(self) -> None:  # pitfall 7: never call apriltag_detector_destroy
                    pass

            entry = (_Undestroyed(families=family), threading.Lock())
            _SHARED[family] = entry
        return entry


class TagDetector:
    """pupil-apriltags with the pitfalls above handled."""

    def __init__(self, options: DetectorOptions = DetectorOptions()) -> None:
        options.check()
        self.options = options
        self._det, self._lock = _shared_detector(options.family)

    def _configure(self, decimate: float) -> None:
        c = self._det.tag_detector_ptr.contents
        o = self.options
        c.nthreads = int(o.nthreads)
        c.quad_decimate = float(decimate)
        c.quad_sigma = float(o.quad_sigma)
        c.refine_edges = int(bool(o.refine_edges))
        # Pitfall 2: the wrapper stores int(decode_sharpening); set the double directly.
        c.decode_sharpening = float(o.decode_sharpening)

    @property
    def decode_sharpening(self) -> float:
        """What the C detector uses (set on every call)."""
        with self._lock:
            self._configure(self.options.quad_decimate)
            return float(self._det.tag_detector_ptr.contents.decode_sharpening)

    def _raw(self, img: np.ndarray, decimate: float, offset=(0, 0)) -> list[Detection]:
        with self._lock:
            self._configure(decimate)
            raw = self._det.detect(img)
        out = []
        for d in raw:
            fam = d.tag_family.decode() if isinstance(d.tag_family, bytes) else str(d.tag_family)
            off = np.array([offset[0] - 0.5, offset[1] - 0.5])  # pitfall 3
            out.append(Detection(int(d.tag_id), np.asarray(d.corners, float) + off,
                                 np.asarray(d.center, float) + off, int(d.hamming),
                                 float(d.decision_margin), fam))
        return out

    def detect(self, image: np.ndarray,
               rois: list[tuple[int, int, int, int]] | None = None,
               decimate: float | None = None) -> DetectionResult:
        """Detect tags in ``image``; with ``rois`` ((u0, v0, u1, v1) inclusive pixel boxes),
        only inside them (at ``roi_decimate``). ``decimate``: the quad decimation of a
        whole-frame search (default ``quad_decimate``)."""
        img = as_gray8(image)
        h, w = img.shape
        found: list[Detection] = []
        if rois is None:
            found = self._raw(img, decimate or self.options.quad_decimate)
        else:
            for u0, v0, u1, v1 in rois:
                u0, v0 = max(int(u0), 0), max(int(v0), 0)
                u1, v1 = min(int(u1), w - 1), min(int(v1), h - 1)
                if u1 - u0 < 8 or v1 - v0 < 8:
                    continue
                crop = np.ascontiguousarray(img[v0:v1 + 1, u0:u1 + 1])
                found += self._raw(crop, self.options.roi_decimate, (u0, v0))
        return self._filter(found, (h, w))

    def _filter(self, found: list[Detection], shape: tuple[int, int]) -> DetectionResult:
        o = self.options
        res = DetectionResult()
        h, w = shape
        m = self.options.border_px
        # The same tag found twice (overlapping ROIs): keep one if they agree.
        by_id: dict[int, list[Detection]] = {}
        for d in found:
            by_id.setdefault(d.id, []).append(d)
        for tid, ds in sorted(by_id.items()):
            if len(ds) > 1:
                spread = max(float(np.max(np.abs(a.corners - ds[0].corners))) for a in ds)
                if spread > 1.0:
                    why = f"id {tid} seen {len(ds)} times in one image (ambiguous)"
                    res.rejected.append((tid, why))
                    continue
                ds = [max(ds, key=lambda d: d.decision_margin)]
            d = ds[0]
            if d.hamming > o.max_hamming:
                res.rejected.append((tid, (f"id {tid} decoded with {d.hamming} corrected bits "
                                           f"> max_hamming {o.max_hamming}")))
            elif d.decision_margin < o.min_decision_margin:
                res.rejected.append((tid, (f"id {tid} decision margin {d.decision_margin:.1f} < "
                                           f"{o.min_decision_margin:g}")))
            elif not _convex(d.corners):
                res.rejected.append((tid, f"id {tid}: degenerate quad"))
            elif (d.corners.min() < m - 0.5 or np.any(d.corners[:, 0] > w - 0.5 - m)
                  or np.any(d.corners[:, 1] > h - 0.5 - m)):
                res.rejected.append((tid, f"id {tid} touches the image border (cut off)"))
            else:
                res.detections.append(d)
        return res


def _convex(c: np.ndarray) -> bool:
    """A non-degenerate convex quad (any orientation). (In Python floats: the same
    IEEE operations as on NumPy scalars, a tenth of the time.)"""
    p = c.tolist()
    cross = []
    for i in range(4):
        a, b, e = p[i], p[(i + 1) % 4], p[(i + 2) % 4]
        cross.append((b[0] - a[0]) * (e[1] - b[1]) - (b[1] - a[1]) * (e[0] - b[0]))
    area = 0.5 * abs(sum(p[i][0] * p[(i + 1) % 4][1] - p[(i + 1) % 4][0] * p[i][1]
                         for i in range(4)))
    return ((all(x > 0 for x in cross) or all(x < 0 for x in cross)) and area > 16.0
            and math.isfinite(area))


def roi_around(detections: list[Detection], shape: tuple[int, int], grow: float = 0.6,
               min_px: int = 12) -> list[tuple[int, int, int, int]]:
    """Boxes around the given detections, grown by ``grow`` of their size (and at
    least ``min_px``), for tracking in the next frame."""
    h, w = shape
    boxes = []
    for d in detections:
        lo, hi = d.corners.min(axis=0), d.corners.max(axis=0)
        m = max(grow * float(np.max(hi - lo)), float(min_px))
        boxes.append((max(int(lo[0] - m), 0), max(int(lo[1] - m), 0),
                      min(math.ceil(hi[0] + m), w - 1), min(math.ceil(hi[1] + m), h - 1)))
    from .render import _merge_boxes

    return _merge_boxes(boxes)
