"""The pool setup file, ``setup.json``: camera, water surface and tag layout.

A public format (docs/localization.md, "setup.json"); this module reads, checks and
writes it. Frames: world x, y horizontal, z **down**, origin on the still water
surface; body FRD; camera the OpenCV optical frame (x right, y down, z forward).

Keys (top level; the camera keys may also sit in a ``"camera"`` object)::

    K           [fx, fy, cx, cy] px (a 3x3 matrix without skew is accepted too)
    dist        OpenCV order [k1, k2, p1, p2, k3] (4 values: k3 = 0; [] : none)
    R_wc        3x3, rotates camera-frame vectors into the world: v_w = R_wc v_c
    t_wc        camera centre in the world, m (above the water: z < water_z)
    image_size  [width, height] px (optional; the renderer needs it)
    water_z     height of the flat water plane, m (default 0; normal vertical)
    n_air       refractive index of air (default 1.0)
    n_water     refractive index of water (default 1.333)
    tag_family  "tag36h11" (default)
    tag_size_m  edge of the tag's black square, m
    tags        [{"id": 0, "center_b": [x, y, z], "yaw_b_rad": 0.0}, ...]  body frame

Every error names the key and says how to fix it (``ParameterError``: a setup file
is the localizer's parameter set).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..sdk.errors import ParameterError
from ..sdk.frames import rot_x, rot_y, rot_z
from .tags import FAMILIES, tag_corners_body, tag_family

log = logging.getLogger(__name__)

SETUP_FILE = "setup.json"
FORMAT_VERSION = 1

_KNOWN = {"K", "dist", "R_wc", "t_wc", "image_size", "water_z", "n_air", "n_water",
          "tag_family", "tag_size_m", "tags", "camera", "format", "version", "comment",
          "notes", "name", "description"}


@dataclass(frozen=True)
class TagMount:
    """One tag on the vehicle: id, centre of the black square (body FRD, m), yaw about
    body z (0: top edge towards +x, right edge towards +y)."""

    id: int
    center_b: tuple[float, float, float]
    yaw_b_rad: float = 0.0


@dataclass(frozen=True)
class PoolSetup:
    """A validated ``setup.json`` (immutable; arrays via the properties)."""

    K: tuple[float, float, float, float]
    """fx, fy, cx, cy in pixels (OpenCV convention: pixel centres at integers)."""
    dist: tuple[float, float, float, float, float]
    """k1, k2, p1, p2, k3 (OpenCV order)."""
    R_wc_rows: tuple[tuple[float, float, float], ...]
    """Camera -> world rotation, row by row."""
    t_wc: tuple[float, float, float]
    """Camera centre in the world, m."""
    tag_size_m: float
    tags: tuple[TagMount, ...]
    water_z: float = 0.0
    n_air: float = 1.0
    n_water: float = 1.333
    tag_family: str = "tag36h11"
    image_size: tuple[int, int] | None = None
    """(width, height) px, or None when not given."""
    source: str = field(default="", compare=False)
    """Where it was read from (for messages)."""

    # -- arrays ---------------------------------------------------------------

    @property
    def camera_matrix(self) -> np.ndarray:
        fx, fy, cx, cy = self.K
        return np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])

    @property
    def dist_coeffs(self) -> np.ndarray:
        return np.array(self.dist, dtype=float)

    @property
    def R_wc(self) -> np.ndarray:
        return np.array(self.R_wc_rows, dtype=float)

    @property
    def camera_center(self) -> np.ndarray:
        return np.array(self.t_wc, dtype=float)

    def tag(self, tag_id: int) -> TagMount | None:
        for t in self.tags:
            if t.id == tag_id:
                return t
        return None

    @property
    def tag_ids(self) -> tuple[int, ...]:
        return tuple(t.id for t in self.tags)

    def corners_body(self, tag_id: int) -> np.ndarray:
        """(4, 3) body-frame corners of tag ``tag_id`` in the detector's order."""
        t = self.tag(tag_id)
        if t is None:
            raise KeyError(tag_id)
        return tag_corners_body(t.center_b, t.yaw_b_rad, self.tag_size_m)

    def with_(self, **changes: Any) -> PoolSetup:
        """A copy with some fields changed (re-validated)."""
        return parse_setup(setup_to_dict(replace(self, **changes)), self.source)

    def to_dict(self) -> dict[str, Any]:
        return setup_to_dict(self)


# ------------------------------------------------------------------ reading


def _fail(source: str, key: str, message: str, fix: str) -> ParameterError:
    where = f"{source}: " if source else ""
    return ParameterError(f"{where}{key}: {message}", fix=fix)


def _number(value: Any, source: str, key: str, fix: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(source, key, f"expected a finite number, got {value!r}", fix)
    return float(value)


def _vector(value: Any, n: int, source: str, key: str, fix: str) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise _fail(source, key, f"expected {n} numbers, got {value!r}", fix)
    return tuple(_number(v, source, f"{key}[{i}]", fix) for i, v in enumerate(value))


def _intrinsics(value: Any, source: str) -> tuple[float, float, float, float]:
    fix = "give K as [fx, fy, cx, cy] in pixels (fx, fy > 0)"
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(
            isinstance(r, (list, tuple)) for r in value):
        m = [_vector(r, 3, source, f"K[{i}]", fix) for i, r in enumerate(value)]
        if abs(m[0][1]) > 1e-12 or m[1][0] or m[2][0] or m[2][1] or m[2][2] != 1.0:
            raise _fail(source, "K", "a 3x3 K must be [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] "
                        "(no skew)", fix)
        k = (m[0][0], m[1][1], m[0][2], m[1][2])
    else:
        k = _vector(value, 4, source, "K", fix)
    if not (k[0] > 0 and k[1] > 0):
        raise _fail(source, "K", f"focal lengths must be > 0, got fx={k[0]}, fy={k[1]}", fix)
    return k  # type: ignore[return-value]


def _distortion(value: Any, source: str) -> tuple[float, float, float, float, float]:
    fix = "give dist as [k1, k2, p1, p2, k3] (OpenCV order), or [] for none"
    if value is None:
        return (0.0,) * 5  # type: ignore[return-value]
    if not isinstance(value, (list, tuple)):
        raise _fail(source, "dist", f"expected a list of numbers, got {value!r}", fix)
    d = [_number(v, source, f"dist[{i}]", fix) for i, v in enumerate(value)]
    if len(d) in (0, 4, 5):
        d = (d + [0.0] * 5)[:5]
    elif len(d) in (8, 12, 14) and not any(d[5:]):
        d = d[:5]
    else:
        raise _fail(source, "dist", f"{len(d)} coefficients; this model takes k1 k2 p1 p2 k3 "
                    "(the rational, thin-prism and tilt terms are not supported)", fix)
    return tuple(d)  # type: ignore[return-value]


def _rotation(value: Any, source: str) -> tuple[tuple[float, float, float], ...]:
    fix = ("give R_wc as a 3x3 rotation matrix (rows) that turns camera-frame vectors into "
           "world vectors; its third column is the optical axis in the world (z down)")
    if isinstance(value, (list, tuple)) and len(value) == 9 and not any(
            isinstance(v, (list, tuple)) for v in value):
        value = [value[0:3], value[3:6], value[6:9]]
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise _fail(source, "R_wc", f"expected 3 rows of 3 numbers, got {value!r}", fix)
    R = np.array([_vector(r, 3, source, f"R_wc[{i}]", fix) for i, r in enumerate(value)])
    err = float(np.max(np.abs(R.T @ R - np.eye(3))))
    if err > 1e-4 or np.linalg.det(R) < 0:
        raise _fail(source, "R_wc", f"not a rotation (max |RᵀR − I| = {err:.2g}, "
                    f"det = {np.linalg.det(R):.4f})", fix)
    if err > 1e-12:  # rounded in the file: take the nearest rotation
        u, _, vt = np.linalg.svd(R)
        R = u @ vt
    if R[2, 2] <= 0:
        raise _fail(source, "R_wc", "the camera's optical axis does not point down "
                    f"(its world z component is {R[2, 2]:.3f} <= 0)", fix)
    return tuple(tuple(float(x) for x in row) for row in R)


def _tags(value: Any, source: str, family_name: str) -> tuple[TagMount, ...]:
    fix = ('give tags as a list of {"id": int, "center_b": [x, y, z], "yaw_b_rad": float} '
           "(body frame FRD, m and rad)")
    if not isinstance(value, (list, tuple)) or not value:
        raise _fail(source, "tags", f"expected a non-empty list of tags, got {value!r}", fix)
    ncodes = tag_family(family_name).ncodes
    out: list[TagMount] = []
    for i, t in enumerate(value):
        key = f"tags[{i}]"
        if not isinstance(t, Mapping):
            raise _fail(source, key, f"expected an object, got {t!r}", fix)
        unknown = set(t) - {"id", "center_b", "yaw_b_rad", "comment"}
        if unknown:
            raise _fail(source, key, f"unknown key(s) {sorted(unknown)}", fix)
        tid = t.get("id")
        if isinstance(tid, bool) or not isinstance(tid, int) or not 0 <= tid < ncodes:
            raise _fail(source, f"{key}.id", f"expected an integer 0..{ncodes - 1} "
                        f"({family_name}), got {tid!r}", fix)
        if "center_b" not in t:
            raise _fail(source, f"{key}.center_b", "missing", fix)
        c = _vector(t["center_b"], 3, source, f"{key}.center_b", fix)
        yaw = _number(t.get("yaw_b_rad", 0.0), source, f"{key}.yaw_b_rad", fix)
        if any(m.id == tid for m in out):
            raise _fail(source, f"{key}.id", f"tag id {tid} appears twice",
                        "give each tag on the vehicle its own id")
        out.append(TagMount(int(tid), c, yaw))  # type: ignore[arg-type]
    return tuple(out)


def parse_setup(data: Mapping[str, Any], source: str = "") -> PoolSetup:
    """Validate a decoded setup.json object; raise ParameterError naming the key."""
    if not isinstance(data, Mapping):
        raise _fail(source, "(top level)", "expected a JSON object",
                    "see docs/localization.md for the setup.json format")
    unknown = set(data) - _KNOWN
    if unknown:
        log.warning("%s: ignoring unknown key(s) %s", source or "setup", sorted(unknown))
    cam = data.get("camera", {})
    if not isinstance(cam, Mapping):
        raise _fail(source, "camera", "expected an object", "put K, dist, R_wc, t_wc in it")

    def get(key: str, default: Any = ...) -> Any:
        if key in data:
            if key in cam and cam[key] != data[key]:
                raise _fail(source, key, "given twice, at the top level and in \"camera\", "
                            "with different values", f"keep one {key} (delete the other)")
            return data[key]
        if key in cam:
            return cam[key]
        if default is ...:
            raise _fail(source, key, "missing", f"add {key} (see docs/localization.md)")
        return default

    K = _intrinsics(get("K"), source)
    dist = _distortion(get("dist", None), source)
    R = _rotation(get("R_wc"), source)
    t = _vector(get("t_wc"), 3, source, "t_wc",
                "give t_wc as the camera centre [x, y, z] in the world, m (z < water_z)")
    water_z = _number(get("water_z", 0.0), source, "water_z", "the water plane's z, m")
    if not t[2] < water_z:
        raise _fail(source, "t_wc", f"the camera centre z = {t[2]} m is not above the water "
                    f"plane z = {water_z} m (z points down)",
                    "give t_wc as the camera centre with z < water_z (above the water)")
    n_air = _number(get("n_air", 1.0), source, "n_air", "a refractive index, e.g. 1.0")
    n_water = _number(get("n_water", 1.333), source, "n_water", "a refractive index, e.g. 1.333")
    if not (0.9 < n_air < 3 and 0.9 < n_water < 3):
        raise _fail(source, "n_air/n_water", f"implausible refractive indices {n_air}, {n_water}",
                    "use about 1.0 for air and 1.333 for water")
    fam = get("tag_family", "tag36h11")
    if not isinstance(fam, str) or fam not in FAMILIES:
        raise _fail(source, "tag_family", f"unknown family {fam!r} (give exactly one)",
                    f"use one of {', '.join(FAMILIES)}")
    size = _number(get("tag_size_m"), source, "tag_size_m",
                   "the edge of the tag's black square, m")
    if not size > 0:
        raise _fail(source, "tag_size_m", f"must be > 0, got {size}",
                    "the edge of the tag's black square, m")
    image_size = get("image_size", None)
    if image_size is not None:
        w_h = _vector(image_size, 2, source, "image_size", "give [width, height] in pixels")
        if not all(v > 0 and float(v).is_integer() for v in w_h):
            raise _fail(source, "image_size", f"expected 2 positive integers, got {image_size}",
                        "give [width, height] in pixels")
        image_size = (int(w_h[0]), int(w_h[1]))
    tags = _tags(get("tags"), source, fam)
    return PoolSetup(K=K, dist=dist, R_wc_rows=R, t_wc=t, tag_size_m=size, tags=tags,  # type: ignore[arg-type]
                     water_z=water_z, n_air=n_air, n_water=n_water, tag_family=fam,
                     image_size=image_size, source=source)


def load_setup(path: str | Path) -> PoolSetup:
    """Read a setup.json (or a dataset folder holding one)."""
    p = Path(path)
    if p.is_dir():
        p = p / SETUP_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"cannot read the setup file {p}: {exc.strerror or exc}",
                             fix="give the path of a setup.json or of a dataset folder") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"{p}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}",
                             fix="correct the JSON syntax") from None
    return parse_setup(data, str(p))


def setup_to_dict(s: PoolSetup) -> dict[str, Any]:
    """The canonical JSON object of a setup (floats at full precision)."""
    d: dict[str, Any] = {
        "format": f"moonpool.pool_setup/{FORMAT_VERSION}",
        "K": list(s.K),
        "dist": list(s.dist),
        "R_wc": [list(r) for r in s.R_wc_rows],
        "t_wc": list(s.t_wc),
    }
    if s.image_size is not None:
        d["image_size"] = list(s.image_size)
    d.update({
        "water_z": s.water_z, "n_air": s.n_air, "n_water": s.n_water,
        "tag_family": s.tag_family, "tag_size_m": s.tag_size_m,
        "tags": [{"id": t.id, "center_b": list(t.center_b), "yaw_b_rad": t.yaw_b_rad}
                 for t in s.tags],
    })
    return d


def write_setup(s: PoolSetup, path: str | Path) -> Path:
    """Write ``s`` as JSON to ``path`` (a file, or a folder: path/setup.json)."""
    p = Path(path)
    if p.is_dir():
        p = p / SETUP_FILE
    p.write_text(dumps_compact(setup_to_dict(s)) + "\n", encoding="utf-8")
    return p


def dumps_compact(obj: Any, indent: int = 0) -> str:
    """JSON with 2-space indentation, but lists of numbers (and lists of such lists,
    as a matrix's rows) kept on one line each."""
    pad = "  " * (indent + 1)
    if isinstance(obj, Mapping):
        if not obj:
            return "{}"
        items = [f"{pad}{json.dumps(str(k))}: {dumps_compact(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(obj, (list, tuple)):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj):
            return json.dumps(list(obj))
        if all(isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v)
               for v in obj) or all(isinstance(v, Mapping) and len(json.dumps(v)) < 100 for v in obj):
            return "[\n" + ",\n".join(pad + json.dumps(v) for v in obj) + "\n" + "  " * indent + "]"
        return ("[\n" + ",\n".join(pad + dumps_compact(v, indent + 1) for v in obj) + "\n"
                + "  " * indent + "]")
    return json.dumps(obj)


# ------------------------------------------------------------------ helpers


def nadir_rotation(heading_rad: float = 0.0, tilt_x_rad: float = 0.0,
                   tilt_y_rad: float = 0.0) -> np.ndarray:
    """R_wc of a camera looking straight down with image 'up' towards world
    (cos heading, sin heading), then tilted about its own x and y axes.

    With heading 0 the camera's x axis (image right) is world +y, its y axis (image
    down) world -x and its z axis (optical axis) world +z (down)."""
    base = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return rot_z(heading_rad) @ base @ rot_x(tilt_x_rad) @ rot_y(tilt_y_rad)


def example_setup(image_size: tuple[int, int] = (1280, 720)) -> PoolSetup:
    """The setup of the simulated pool rig (a 4 m x 3 m pool, camera 2.5 m above the
    water, two 15 cm tags on the vehicle's top)."""
    w, h = image_size
    f = 800.0 * w / 1280.0
    R = nadir_rotation(-math.pi / 2, math.radians(2.0), math.radians(-1.5))
    return PoolSetup(
        K=(f, f, (w - 1) / 2.0 + 3.2, (h - 1) / 2.0 - 2.1),
        dist=(-0.05, 0.012, 0.0004, -0.0003, 0.0),
        R_wc_rows=tuple(tuple(float(x) for x in r) for r in R),  # type: ignore[arg-type]
        t_wc=(0.05, -0.03, -2.5),
        tag_size_m=0.15,
        tags=(TagMount(0, (0.11, 0.0, -0.14), 0.0), TagMount(1, (-0.11, 0.0, -0.14), 0.0)),
        water_z=0.0, n_air=1.0, n_water=1.333, tag_family="tag36h11",
        image_size=(w, h),
    )
