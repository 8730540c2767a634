"""AprilTag bitmaps and tag geometry, from the AprilTag library's own code tables.

The code tables are read, through ctypes, from the AprilTag C library that
pupil-apriltags bundles (``tag36h11_create()`` returns an ``apriltag_family_t``:
the 587 64-bit codes and the ``bit_x``/``bit_y`` positions of each bit). A bitmap is
drawn as ``apriltag_to_image()`` of the current AprilTag sources draws it, so the
rendered tag is the one the detector decodes, in the detector's orientation (every
id is checked by detection in tests/unit/test_tags.py). Do not call the bundled
library's own ``apriltag_to_image()``: that older version draws the white ring one cell
inside, over the black border, and writes past the end of its image buffer. OpenCV's
aruco generator for 36h11 is the same table rotated by 180 degrees: tags made with it
put yaw off by pi.

Tag frame and corners (docs/localization.md, "Frames"):

- ``bitmap[row, col]`` is the upright tag: row 0 on top, column 0 on the left, 1 cell
  per element, ``total_width`` cells (10 for tag36h11: a white ring of one cell
  around the 8-cell black square).
- On the vehicle, a tag lies flat on the top, face up (towards body -z). With
  ``yaw_b_rad = 0`` its top edge points to body +x and its right edge to body +y;
  ``yaw_b_rad`` turns it about body z (FRD: positive from +x towards +y).
- ``tag_size_m`` is the edge of the black square (``width_at_border`` cells).
- Corners are listed in the detector's order: bottom-left, bottom-right, top-right,
  top-left of the upright tag.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# (name, C constructor) of the families the bundled library provides.
FAMILIES = ("tag16h5", "tag25h9", "tag36h11", "tagCircle21h7", "tagCircle49h12",
            "tagCustom48h12", "tagStandard41h12", "tagStandard52h13")


class _ApriltagFamily(ctypes.Structure):
    """``apriltag_family_t`` (apriltag.h), the layout pupil-apriltags uses too."""

    _fields_ = [
        ("ncodes", ctypes.c_uint32),
        ("codes", ctypes.POINTER(ctypes.c_uint64)),
        ("width_at_border", ctypes.c_int),
        ("total_width", ctypes.c_int),
        ("reversed_border", ctypes.c_bool),
        ("nbits", ctypes.c_uint32),
        ("bit_x", ctypes.POINTER(ctypes.c_uint32)),
        ("bit_y", ctypes.POINTER(ctypes.c_uint32)),
        ("h", ctypes.c_int32),
        ("name", ctypes.c_char_p),
    ]


@functools.lru_cache(maxsize=1)
def apriltag_library() -> ctypes.CDLL:
    """The AprilTag C library bundled with pupil-apriltags."""
    import pupil_apriltags

    base = Path(pupil_apriltags.__file__).parent
    for folder in ("lib", "lib64"):
        for hit in sorted((base / folder).glob("libapriltag*.so*")) + sorted(
                (base / folder).glob("libapriltag*.dylib")) + sorted(
                (base / folder).glob("*apriltag*.dll")):
            return ctypes.CDLL(str(hit))
    raise RuntimeError(f"the AprilTag library was not found under {base}")


@dataclass(frozen=True, eq=False)
class TagFamily:
    """One AprilTag family's code table, as the C library defines it."""

    name: str
    codes: np.ndarray
    """(ncodes,) uint64 codes; the tag id is the index."""
    nbits: int
    bit_x: np.ndarray
    """(nbits,) column of each bit, counted from the black border's outer edge."""
    bit_y: np.ndarray
    """(nbits,) row of each bit."""
    width_at_border: int
    """Cells across the black square (the detected quad)."""
    total_width: int
    """Cells across the whole bitmap (with the white ring)."""
    reversed_border: bool
    min_hamming: int

    @property
    def ncodes(self) -> int:
        return int(self.codes.shape[0])

    def bitmap(self, tag_id: int) -> np.ndarray:
        """The upright tag as a (total_width, total_width) uint8 image, 0 black, 255 white,
        drawn as ``apriltag_to_image()`` does."""
        if not 0 <= int(tag_id) < self.ncodes:
            raise ValueError(f"{self.name} has ids 0..{self.ncodes - 1}, not {tag_id}")
        return _bitmap(self, int(tag_id)).copy()

    def reflectance(self, tag_id: int) -> np.ndarray:
        """The bitmap as float32 0/1 (cached; do not modify)."""
        return _reflectance(self, int(tag_id))

    @property
    def cell_fraction(self) -> float:
        """Edge of one cell as a fraction of ``tag_size_m`` (1 / width_at_border)."""
        return 1.0 / self.width_at_border


@functools.cache
def tag_family(name: str = "tag36h11") -> TagFamily:
    """The code table of family ``name`` read from the bundled C library."""
    if name not in FAMILIES:
        raise ValueError(f"unknown tag family {name!r}; known: {', '.join(FAMILIES)}")
    lib = apriltag_library()
    create = getattr(lib, f"{name}_create")
    create.restype = ctypes.POINTER(_ApriltagFamily)
    ptr = create()
    fam = ptr.contents
    n, nbits = int(fam.ncodes), int(fam.nbits)
    family = TagFamily(
        name=name,
        codes=np.ctypeslib.as_array(fam.codes, shape=(n,)).astype(np.uint64).copy(),
        nbits=nbits,
        bit_x=np.ctypeslib.as_array(fam.bit_x, shape=(nbits,)).astype(np.int64).copy(),
        bit_y=np.ctypeslib.as_array(fam.bit_y, shape=(nbits,)).astype(np.int64).copy(),
        width_at_border=int(fam.width_at_border),
        total_width=int(fam.total_width),
        reversed_border=bool(fam.reversed_border),
        min_hamming=int(fam.h),
    )
    # The C family is deliberately never destroyed (one small struct per family, read
    # once): with the bundled library, tagXXX_destroy() here led to a crash when a
    # pupil-apriltags Detector later destroyed its own family.
    return family


@functools.lru_cache(maxsize=4096)
def _bitmap(family: TagFamily, tag_id: int) -> np.ndarray:
    # A line-for-line port of apriltag_to_image() (apriltag.c, AprilTag 3.2 and later).
    tw = family.total_width
    im = np.zeros((tw, tw), dtype=np.uint8)
    white_border_width = family.width_at_border + (0 if family.reversed_border else 2)
    white_border_start = (tw - white_border_width) // 2
    for i in range(white_border_width - 1):
        im[white_border_start, white_border_start + i] = 255
        im[white_border_start + i, tw - 1 - white_border_start] = 255
        im[tw - 1 - white_border_start, white_border_start + i + 1] = 255
        im[white_border_start + 1 + i, white_border_start] = 255
    border_start = (tw - family.width_at_border) // 2
    code = int(family.codes[tag_id])
    for i in range(family.nbits):
        if code & (1 << (family.nbits - i - 1)):
            im[family.bit_y[i] + border_start, family.bit_x[i] + border_start] = 255
    im.setflags(write=False)
    return im


@functools.lru_cache(maxsize=4096)
def _reflectance(family: TagFamily, tag_id: int) -> np.ndarray:
    r = (_bitmap(family, tag_id) > 127).astype(np.float32)
    r.setflags(write=False)
    return r


# ------------------------------------------------------------------- geometry

# Corners of the black square in the tag frame (a: towards the top edge, b: towards
# the right edge), in units of half the tag size, in the detector's order:
# bottom-left, bottom-right, top-right, top-left.
CORNERS_AB = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [1.0, -1.0]])


def tag_axes_body(yaw_b_rad: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors of a tag's frame in the body frame: (top, right, face normal).

    ``top`` points from the tag centre to its top edge, ``right`` to its right edge,
    ``normal`` out of the tag face (up: body -z)."""
    c, s = np.cos(yaw_b_rad), np.sin(yaw_b_rad)
    top = np.array([c, s, 0.0])
    right = np.array([-s, c, 0.0])
    return top, right, np.array([0.0, 0.0, -1.0])


def tag_corners_body(center_b, yaw_b_rad: float, tag_size_m: float) -> np.ndarray:
    """(4, 3) corners of the black square in the body frame, in the detector's order."""
    top, right, _ = tag_axes_body(yaw_b_rad)
    h = 0.5 * tag_size_m
    c = np.asarray(center_b, dtype=float)
    return c + h * (CORNERS_AB[:, :1] * top + CORNERS_AB[:, 1:] * right)
