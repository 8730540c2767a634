"""The scene file reader: the ONE module that reads scene files (TOML, parsed by the
SDK's ``tomlfile``, moonpool's one importer of ``tomllib``). The format is in
docs/world.md.

:func:`read_scene_file` turns a file into a typed, frozen :class:`SceneSpec`, or
raises :class:`~moonpool.components.sdk.errors.ParameterError` listing EVERY problem
found at once, each a :class:`~moonpool.components.sdk.errors.Problem` naming the
file and the dotted key (``objects[2].rpy_deg``) with the fix: a missing or
unreadable file, a height map without its resolution, an unknown key (with the
closest known one), a value of the wrong type or range, a mesh trimesh cannot read.
:func:`validate_scene`
returns the same problems as text, for a component's parameter check and
``moonpool check``. Paths inside the file are relative to the file's folder.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sdk import tomlfile
from ..sdk.errors import ParameterError, Problem
from .environment import WaterColumn

FORMAT = "moonpool.scene/1"
MESH_SUFFIXES = (".stl", ".obj", ".ply", ".glb", ".gltf", ".off")
HEIGHTMAP_SUFFIXES = (".npy", ".png")


# ------------------------------------------------------------------ the spec


@dataclass(frozen=True)
class ClassSpec:
    """A surface class (``[classes.NAME]``)."""

    name: str
    id: int
    backscatter_db: float
    reflectance: tuple[float, float, float]


@dataclass(frozen=True)
class Ripples:
    """Sand ripples: z += (h/2) sin(2π s/λ), s the distance along ``direction_deg``."""

    wavelength_m: float
    height_m: float
    direction_deg: float


@dataclass(frozen=True)
class Relief:
    """Smooth random relief: a sum of ``waves`` seeded sinusoids of wavelengths in
    [wavelength_min_m, wavelength_max_m], scaled so its standard deviation is
    ``amplitude_m``."""

    amplitude_m: float
    wavelength_min_m: float
    wavelength_max_m: float
    waves: int
    seed: int


@dataclass(frozen=True)
class Boulders:
    """Rocks scattered by a seeded generator (same seed ⇒ same rocks)."""

    count: int
    seed: int
    radius_min_m: float
    radius_max_m: float
    flattening: float
    """Vertical semi-axis / horizontal radius."""
    burial: float
    """0: resting on the seabed, 0.5: buried to the centre."""
    class_name: str


@dataclass(frozen=True)
class SeabedSpec:
    """``[seabed]``: kind "procedural", "heightmap" or "none"."""

    kind: str
    class_name: str = ""
    instance: int = 0
    resolution_m: float = 1.0
    # procedural
    size_m: tuple[float, float] = (0.0, 0.0)
    center_ne_m: tuple[float, float] = (0.0, 0.0)
    mean_depth_m: float = 0.0
    slope: tuple[float, float] = (0.0, 0.0)
    ripples: Ripples | None = None
    relief: Relief | None = None
    boulders: Boulders | None = None
    # heightmap
    file: Path | None = None
    origin_ned_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    depth_scale_m: float = 1.0
    depth_offset_m: float = 0.0


@dataclass(frozen=True)
class ObjectSpec:
    """One ``[[objects]]`` entry: a mesh file or a primitive, placed at a pose."""

    name: str
    class_name: str
    instance: int
    position_ned_m: tuple[float, float, float]
    rpy_deg: tuple[float, float, float]
    scale: float = 1.0
    on_seabed: bool = False
    mesh: Path | None = None
    shape: str = ""
    size_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    radius_m: float = 0.0
    length_m: float = 0.0


@dataclass(frozen=True)
class SceneSpec:
    """A scene file, checked."""

    path: Path
    name: str
    description: str
    classes: tuple[ClassSpec, ...]
    seabed: SeabedSpec
    objects: tuple[ObjectSpec, ...]
    water: WaterColumn


# ------------------------------------------------------------------ checking


def _did_you_mean(word: str, options) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class _Checker:
    """Collects the problems of one scene file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def add(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, key, message))

    def keys(self, table: dict, where: str, known: set[str]) -> None:
        for key in table:
            if key not in known:
                self.add(f"{where}.{key}" if where else key,
                         f"unknown key{_did_you_mean(key, known)}; "
                         f"known: {', '.join(sorted(known))}")

    def table(self, parent: dict, key: str, where: str, required: bool = False) -> dict | None:
        value = parent.get(key)
        full = f"{where}.{key}" if where else key
        if value is None:
            if required:
                self.add(full, "missing table (fix: add it, see docs/world.md)")
            return None
        if not isinstance(value, dict):
            self.add(full, f"must be a table, got {type(value).__name__}")
            return None
        return value

    def number(self, t: dict, key: str, where: str, default: Any = None, *, low=None,
               high=None, positive=False, integer=False) -> Any:
        full = f"{where}.{key}" if where else key
        if key not in t:
            if default is None:
                self.add(full, "missing (fix: give a number, see docs/world.md)")
            return default
        v = t[key]
        ok = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok:
            kind = "an integer" if integer else "a number"
            self.add(full, f"must be {kind}, got {v!r}")
            return default
        if not math.isfinite(v):
            self.add(full, f"must be finite, got {v!r}")
            return default
        if positive and not v > 0:
            self.add(full, f"must be > 0, got {v!r}")
            return default
        if low is not None and v < low or high is not None and v > high:
            self.add(full, f"must be in [{low}, {high}], got {v!r}")
            return default
        return int(v) if integer else float(v)

    def vector(self, t: dict, key: str, where: str, n: int, default: Any = None, *,
               low=None, high=None) -> Any:
        full = f"{where}.{key}" if where else key
        if key not in t:
            if default is None:
                self.add(full, f"missing (fix: give [{', '.join(['x'] * n)}], see docs/world.md)")
            return default
        v = t[key]
        if (not isinstance(v, list) or len(v) != n
                or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v)):
            self.add(full, f"must be a list of {n} numbers, got {v!r}")
            return default
        if not all(math.isfinite(x) for x in v):
            self.add(full, f"must be finite, got {v!r}")
            return default
        if (low is not None and min(v) < low) or (high is not None and max(v) > high):
            self.add(full, f"each must be in [{low}, {high}], got {v!r}")
            return default
        return tuple(float(x) for x in v)

    def string(self, t: dict, key: str, where: str, default: str | None = None,
               choices: tuple[str, ...] = ()) -> str:
        full = f"{where}.{key}" if where else key
        if key not in t:
            if default is None:
                self.add(full, "missing (fix: give a string, see docs/world.md)")
                return ""
            return default
        v = t[key]
        if not isinstance(v, str):
            self.add(full, f"must be a string, got {v!r}")
            return default or ""
        if choices and v not in choices:
            self.add(full, f"must be one of {', '.join(choices)}, got {v!r}"
                     f"{_did_you_mean(v, choices)}")
            return default or ""
        return v

    def boolean(self, t: dict, key: str, where: str, default: bool) -> bool:
        v = t.get(key, default)
        if not isinstance(v, bool):
            self.add(f"{where}.{key}", f"must be true or false, got {v!r}")
            return default
        return v

    def path(self, t: dict, key: str, where: str, base: Path,
             suffixes: tuple[str, ...]) -> Path | None:
        full = f"{where}.{key}"
        v = t.get(key)
        if not isinstance(v, str) or not v:
            self.add(full, "missing or not a string (fix: a path relative to the scene file)")
            return None
        p = Path(v) if Path(v).is_absolute() else base / v
        if p.suffix.lower() not in suffixes:
            self.add(full, f"'{v}' is not one of {', '.join(suffixes)}")
            return None
        if not p.is_file():
            self.add(full, f"file '{v}' not found (looked for {p}; paths are relative to "
                     "the scene file's folder)")
            return None
        try:
            with open(p, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            self.add(full, f"file '{v}' cannot be read: {exc.strerror}")
            return None
        return p


_TOP = {"format", "name", "description", "origin", "water", "classes", "seabed", "objects"}
_ORIGIN = {"latitude_deg", "longitude_deg"}
_WATER = {"surface_temperature_c", "surface_salinity_psu", "mixed_layer_depth_m",
          "thermocline_bottom_m", "deep_temperature_c", "deep_salinity_psu",
          "deep_temperature_gradient_c_per_m", "current_ned_mps", "current_profile"}
_CLASS = {"id", "backscatter_db", "reflectance"}
_SEABED_COMMON = {"kind", "class", "instance", "resolution_m"}
_PROCEDURAL = {"size_m", "center_ne_m", "mean_depth_m", "slope", "ripples", "relief", "boulders"}
_HEIGHTMAP = {"file", "origin_ned_m", "depth_scale_m", "depth_offset_m"}
_RIPPLES = {"wavelength_m", "height_m", "direction_deg"}
_RELIEF = {"amplitude_m", "wavelength_min_m", "wavelength_max_m", "waves", "seed"}
_BOULDERS = {"count", "seed", "radius_m", "flattening", "burial", "class"}
_OBJECT = {"name", "class", "instance", "position_ned_m", "rpy_deg", "scale", "on_seabed",
           "mesh", "shape", "size_m", "radius_m", "length_m"}
SHAPES = ("box", "sphere", "cylinder")


def _check(data: dict, file: str, base: Path) -> tuple[SceneSpec | None, list[Problem]]:
    c = _Checker(file)
    c.keys(data, "", _TOP)
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        c.add("format", f"must be '{FORMAT}', got {fmt!r}")
    name = c.string(data, "name", "", default=Path(file).parent.name or Path(file).stem)
    description = c.string(data, "description", "", default="")

    # -- origin and water column
    origin = c.table(data, "origin", "", required=True) or {}
    c.keys(origin, "origin", _ORIGIN)
    lat = c.number(origin, "latitude_deg", "origin", low=-90.0, high=90.0)
    lon = c.number(origin, "longitude_deg", "origin", low=-180.0, high=360.0)
    wt = c.table(data, "water", "") or {}
    c.keys(wt, "water", _WATER)
    d = WaterColumn()
    w_args = {k: c.number(wt, k, "water", getattr(d, k), low=low, high=high) for k, low, high in (
        ("surface_temperature_c", -2.5, 40.0), ("surface_salinity_psu", 0.0, 42.0),
        ("mixed_layer_depth_m", 0.0, 12_000.0), ("thermocline_bottom_m", 0.0, 12_000.0),
        ("deep_temperature_c", -2.5, 40.0), ("deep_salinity_psu", 0.0, 42.0),
        ("deep_temperature_gradient_c_per_m", -1.0, 1.0))}
    if w_args["thermocline_bottom_m"] < w_args["mixed_layer_depth_m"]:
        c.add("water.thermocline_bottom_m", "must be >= water.mixed_layer_depth_m "
              f"({w_args['mixed_layer_depth_m']})")
        w_args["thermocline_bottom_m"] = w_args["mixed_layer_depth_m"]
    uniform = c.vector(wt, "current_ned_mps", "water", 3, (0.0, 0.0, 0.0))
    profile: list = []
    if "current_profile" in wt:
        raw = wt["current_profile"]
        if not isinstance(raw, list) or not raw:
            c.add("water.current_profile", "must be a list of [depth_m, north, east, down] rows")
        else:
            for i, row in enumerate(raw):
                if (not isinstance(row, list) or len(row) != 4 or any(
                        isinstance(x, bool) or not isinstance(x, (int, float)) for x in row)):
                    c.add(f"water.current_profile[{i}]",
                          f"must be [depth_m, north, east, down] (m, m/s), got {row!r}")
                    continue
                profile.append((float(row[0]), (float(row[1]), float(row[2]), float(row[3]))))
            depths = [p[0] for p in profile]
            if any(b <= a for a, b in zip(depths, depths[1:])):
                c.add("water.current_profile", "depths must increase from row to row")
                profile = []
        if "current_ned_mps" in wt:
            c.add("water.current_ned_mps", "give current_ned_mps (uniform) or current_profile, "
                  "not both")
    water = WaterColumn(latitude_deg=lat or 0.0, longitude_deg=lon or 0.0,
                        uniform_current_ned_mps=uniform, current_profile=tuple(profile), **w_args)

    # -- classes
    classes: list[ClassSpec] = []
    ct = c.table(data, "classes", "", required=True) or {}
    ids: dict[int, str] = {}
    for cname, row in ct.items():
        where = f"classes.{cname}"
        if not isinstance(row, dict):
            c.add(where, "must be a table with id, backscatter_db, reflectance")
            continue
        c.keys(row, where, _CLASS)
        cid = c.number(row, "id", where, integer=True, low=1, high=2**31 - 1)
        bs = c.number(row, "backscatter_db", where, low=-100.0, high=20.0)
        refl = c.vector(row, "reflectance", where, 3, low=0.0, high=1.0)
        if cid is not None and cid in ids:
            c.add(f"{where}.id", f"id {cid} is already class '{ids[cid]}' (fix: one id per class)")
        elif cid is not None:
            ids[cid] = cname
        if cid is not None and bs is not None and refl is not None:
            classes.append(ClassSpec(cname, cid, bs, refl))
    names = set(ct)

    def class_ref(t: dict, where: str, default: str | None = None) -> str:
        v = c.string(t, "class", where, default=default)
        if v and v not in names:
            c.add(f"{where}.class", f"unknown class '{v}'{_did_you_mean(v, names)}; "
                  f"the [classes] table has: {', '.join(sorted(names)) or 'none'}")
        return v

    instances: dict[int, str] = {}

    def instance_ref(t: dict, where: str) -> int:
        if "instance" not in t:
            return 0
        v = c.number(t, "instance", where, 0, integer=True, low=1, high=2**31 - 1)
        if v and v in instances:
            c.add(f"{where}.instance", f"instance {v} is already '{instances[v]}' "
                  "(fix: one id per object, or leave it out to number objects in order)")
        elif v:
            instances[v] = where
        return v

    # -- seabed
    sb = c.table(data, "seabed", "") or {"kind": "none"}
    kind = c.string(sb, "kind", "seabed", choices=("procedural", "heightmap", "none"))
    known = _SEABED_COMMON | (_PROCEDURAL if kind == "procedural" else set()) | (
        _HEIGHTMAP if kind == "heightmap" else set())
    c.keys(sb, "seabed", known)
    seabed = SeabedSpec(kind="none")
    if kind in ("procedural", "heightmap"):
        common = dict(kind=kind, class_name=class_ref(sb, "seabed"),
                      instance=instance_ref(sb, "seabed"))
        res = c.number(sb, "resolution_m", "seabed", positive=True)
        if res is None and "resolution_m" not in sb and kind == "heightmap":
            c.problems[-1] = Problem(file, "seabed.resolution_m",
                                     "a height map needs its grid spacing (fix: resolution_m = "
                                     "the distance between neighbouring samples, m)")
        if kind == "procedural":
            size = c.vector(sb, "size_m", "seabed", 2, low=0.0)
            centre = c.vector(sb, "center_ne_m", "seabed", 2, (0.0, 0.0))
            mean = c.number(sb, "mean_depth_m", "seabed", low=-100.0, high=12_000.0)
            slope = c.vector(sb, "slope", "seabed", 2, (0.0, 0.0), low=-10.0, high=10.0)
            if size and res and (size[0] / res + 1) * (size[1] / res + 1) > 4.1e6:
                c.add("seabed.resolution_m", f"{size[0]} m × {size[1]} m at {res} m is over "
                      "4 million vertices (fix: a coarser resolution_m)")
            ripples = relief = boulders = None
            if (rt := c.table(sb, "ripples", "seabed")) is not None:
                c.keys(rt, "seabed.ripples", _RIPPLES)
                rip = (c.number(rt, "wavelength_m", "seabed.ripples", positive=True),
                       c.number(rt, "height_m", "seabed.ripples", low=0.0),
                       c.number(rt, "direction_deg", "seabed.ripples", 0.0))
                if None not in rip:
                    ripples = Ripples(*rip)
            if (rt := c.table(sb, "relief", "seabed")) is not None:
                c.keys(rt, "seabed.relief", _RELIEF)
                rel = (c.number(rt, "amplitude_m", "seabed.relief", low=0.0),
                       c.number(rt, "wavelength_min_m", "seabed.relief", positive=True),
                       c.number(rt, "wavelength_max_m", "seabed.relief", positive=True),
                       c.number(rt, "waves", "seabed.relief", 16, integer=True, low=1, high=1000),
                       c.number(rt, "seed", "seabed.relief", 0, integer=True, low=0))
                if None not in rel:
                    if rel[2] < rel[1]:
                        c.add("seabed.relief.wavelength_max_m", "must be >= wavelength_min_m")
                    else:
                        relief = Relief(*rel)
            if (bt := c.table(sb, "boulders", "seabed")) is not None:
                w = "seabed.boulders"
                c.keys(bt, w, _BOULDERS)
                radius = c.vector(bt, "radius_m", w, 2, low=0.0)
                b = (c.number(bt, "count", w, integer=True, low=0, high=100_000),
                     c.number(bt, "seed", w, 0, integer=True, low=0),
                     c.number(bt, "flattening", w, 0.6, positive=True, high=10.0),
                     c.number(bt, "burial", w, 0.2, low=0.0, high=1.0),
                     class_ref(bt, w))
                if radius and not 0 < radius[0] <= radius[1]:
                    c.add(f"{w}.radius_m",
                          f"must be [min, max] with 0 < min <= max, got {list(radius)}")
                    radius = None
                if None not in b and radius:
                    boulders = Boulders(b[0], b[1], radius[0], radius[1], b[2], b[3], b[4])
            if None not in (size, centre, mean, slope, res):
                seabed = SeabedSpec(resolution_m=res, size_m=size, center_ne_m=centre,
                                    mean_depth_m=mean, slope=slope, ripples=ripples,
                                    relief=relief, boulders=boulders, **common)
        else:
            hm = c.path(sb, "file", "seabed", base, HEIGHTMAP_SUFFIXES)
            origin_ned = c.vector(sb, "origin_ned_m", "seabed", 3)
            scale = c.number(sb, "depth_scale_m", "seabed", 1.0)
            offset = c.number(sb, "depth_offset_m", "seabed", 0.0)
            if hm is not None:
                problem = heightmap_problem(hm)
                if problem:
                    c.add("seabed.file", problem)
                    hm = None
            if None not in (hm, origin_ned, res):
                seabed = SeabedSpec(resolution_m=res, file=hm, origin_ned_m=origin_ned,
                                    depth_scale_m=scale, depth_offset_m=offset, **common)

    # -- objects
    objects: list[ObjectSpec] = []
    raw_objects = data.get("objects", [])
    if not isinstance(raw_objects, list):
        c.add("objects", "must be an array of tables ([[objects]])")
        raw_objects = []
    seen_names: set[str] = set()
    for i, ot in enumerate(raw_objects):
        where = f"objects[{i}]"
        if not isinstance(ot, dict):
            c.add(where, "must be a table ([[objects]])")
            continue
        c.keys(ot, where, _OBJECT)
        oname = c.string(ot, "name", where)
        if oname in seen_names:
            c.add(f"{where}.name", f"'{oname}' is already an object's name (fix: unique names)")
        seen_names.add(oname)
        cls_name = class_ref(ot, where)
        inst = instance_ref(ot, where)
        pos = c.vector(ot, "position_ned_m", where, 3)
        rpy = c.vector(ot, "rpy_deg", where, 3, (0.0, 0.0, 0.0))
        scale = c.number(ot, "scale", where, 1.0, positive=True)
        on_seabed = c.boolean(ot, "on_seabed", where, False)
        if on_seabed and kind not in ("procedural", "heightmap"):
            c.add(f"{where}.on_seabed", "the scene has no seabed to rest on")
        mesh = None
        shape, size, radius, length = "", (0.0, 0.0, 0.0), 0.0, 0.0
        if ("mesh" in ot) == ("shape" in ot):
            c.add(where, "give either mesh = \"FILE\" or shape = \"box\"|\"sphere\"|\"cylinder\"")
        elif "mesh" in ot:
            mesh = c.path(ot, "mesh", where, base, MESH_SUFFIXES)
            if mesh is not None and (problem := mesh_problem(mesh)):
                c.add(f"{where}.mesh", problem)
                mesh = None
            for k in ("size_m", "radius_m", "length_m"):
                if k in ot:
                    c.add(f"{where}.{k}", "only for a shape, not a mesh file")
        else:
            shape = c.string(ot, "shape", where, choices=SHAPES)
            if shape == "box":
                size = c.vector(ot, "size_m", where, 3, low=0.0) or size
            elif shape in ("sphere", "cylinder"):
                radius = c.number(ot, "radius_m", where, positive=True) or 0.0
            if shape == "cylinder":
                length = c.number(ot, "length_m", where, positive=True) or 0.0
            for k, used in (("size_m", shape == "box"), ("radius_m", shape != "box"),
                            ("length_m", shape == "cylinder")):
                if k in ot and not used:
                    c.add(f"{where}.{k}", f"not a parameter of a {shape}")
        if pos is not None and oname:
            objects.append(ObjectSpec(oname, cls_name, inst, pos, rpy, scale, on_seabed,
                                      mesh, shape, size, radius, length))

    if c.problems:
        return None, c.problems
    return SceneSpec(Path(file), name, description, tuple(classes), seabed, tuple(objects),
                     water), []


def mesh_problem(path: Path) -> str:
    """'' if trimesh reads ``path`` as a mesh with at least one triangle, else what is wrong."""
    import trimesh

    try:
        mesh = trimesh.load(str(path), force="mesh")
    except Exception as exc:  # trimesh raises many kinds for a bad file
        return f"'{path.name}' cannot be read as a mesh: {exc}"
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        return f"'{path.name}' holds no triangles (fix: a triangle mesh, STL/OBJ/PLY/OFF/glTF)"
    return ""


def heightmap_problem(path: Path) -> str:
    """'' if ``path`` is a usable height map (a 2-D finite .npy array, or a 16-bit or
    8-bit single-channel PNG, at least 2 × 2 samples), else what is wrong."""
    try:
        grid = load_heightmap(path)
    except (OSError, ValueError) as exc:
        return f"cannot be read as a height map: {exc}"
    if grid.ndim != 2 or min(grid.shape) < 2:
        return f"must be a 2-D grid of at least 2 × 2 samples, got shape {grid.shape}"
    if not grid.size or not bool((grid == grid).all()) or not bool(abs(grid).max() < 1e12):
        return "has nan or infinite samples (fix: fill the holes; no-data is not supported)"
    return ""


def load_heightmap(path: Path):
    """The raw samples of a height map, a 2-D float64 array (rows: north, columns: east)."""
    import numpy as np

    if path.suffix.lower() == ".npy":
        return np.asarray(np.load(path, allow_pickle=False), dtype=np.float64)
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ValueError("not a PNG image OpenCV can read")
    if img.ndim != 2:
        raise ValueError(f"a PNG height map must have one channel, got {img.shape[2]}")
    return img.astype(np.float64)


def _parse(path: Path, file: str) -> tuple[dict | None, list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [Problem(file, "", "scene file not found (fix: give the path of a scene "
                              "TOML file, relative to the component's base dir)")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(file, "", f"scene file cannot be read: {exc}")]
    try:
        return tomlfile.loads(text), []
    except tomlfile.TOMLDecodeError as exc:
        return None, [Problem(file, "", f"not valid TOML: {exc}")]


def resolve(path, base_dir=None) -> Path:
    """``path`` relative to ``base_dir`` (when given and the path is relative)."""
    p = Path(path)
    return p if p.is_absolute() or base_dir is None else Path(base_dir) / p


def scene_problems(path, base_dir=None) -> tuple[SceneSpec | None, list[Problem]]:
    """(spec, []) for a good scene file, (None, every problem) otherwise."""
    p = resolve(path, base_dir)
    data, problems = _parse(p, str(path))
    if data is None:
        return None, problems
    return _check(data, str(path), p.parent)


def read_scene_file(path, base_dir=None) -> SceneSpec:
    """The checked spec of a scene file; :class:`ParameterError` lists every problem."""
    spec, problems = scene_problems(path, base_dir)
    if spec is None:
        n = len(problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ParameterError(f"{n} problem{'s' if n != 1 else ''} in the scene file:\n{lines}",
                             fix="correct the scene file (format: docs/world.md)")
    return spec


def validate_scene(path, base_dir=None) -> list[str]:
    """Every problem of a scene file as text (``FILE: KEY: what and the fix``); [] if good."""
    return [str(p) for p in scene_problems(path, base_dir)[1]]
