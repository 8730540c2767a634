"""What the acoustic sensors on the scene share (docs/sensors.md (acoustic-common)):
opening the scene, the flat-seabed fallback with the ray engine's interface, the water
column without a scene, beam fans and per-beam keyed draws.

A sensor given a ``scene`` (path of a scene file) casts its beams with the scene's
ray engine (``moonpool.components.world``) and takes the sound speed, temperature,
salinity and current from the scene's water column. Without one it casts against a
flat seabed at ``seabed_depth_m`` (``FlatSeabed``, closed-form ray–plane
intersection) and builds the water column from its own parameter table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..sdk.errors import ParameterError
from ..sdk.noise import KeyedNoise
from .common import Mount


def load_scene(path: str, component: str):
    """The scene of a sensor's ``scene`` parameter (``moonpool.components.world.scene.Scene``).

    Relative paths are taken from the working directory (the rig loader passes paths as
    written). Raises ParameterError naming the component and the file."""
    from ..world.scene import Scene

    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"scene file {path!r} not found", component=component,
                             fix="give the path of an existing scene file (TOML) in `scene`, or "
                                 "leave it empty for the flat seabed")
    return Scene.load(p)


def check_scene_parameters(params: Any, needs_scene: str = "") -> None:
    """Called from a sensor's ``Parameters.__post_init__`` (so ``moonpool check`` reports
    it without starting anything): the ``scene`` file exists and is a good scene file
    (``validate_scene``: every problem listed), ``scene`` and a ``water`` table are not
    both given, and a sensor that ``needs_scene`` (the reason, e.g. "it casts against
    bodies") has one. Raises ParameterError listing every problem with its fix."""
    from ..world.scenefile import validate_scene

    problems: list[str] = []
    scene = getattr(params, "scene", None)
    bodies = getattr(params, "bodies", None)
    if bodies:
        problems += body_problems(bodies, Path(scene).parent if scene else None)
        needs_scene = needs_scene or "it casts against `bodies` (they are placed into a scene)"
    if scene:
        problems += [f"scene {p}" for p in validate_scene(scene)]
        if getattr(params, "water", None):
            problems.append("both `scene` and a `water` table are given (two water columns); "
                            "drop `water`: the scene's water column is used")
    elif needs_scene:
        problems.append(f"no `scene` given but {needs_scene}; give `scene = \"path/to/scene.toml\"` "
                        "(a scene file, relative to the rig file's folder; docs/world.md)")
    if problems:
        lines = "\n".join(f"      * {p}" for p in problems)
        n = len(problems)
        raise ParameterError(f"{n} problem{'s' if n != 1 else ''} with the scene:\n{lines}",
                             fix="correct the scene file or the sensor's `scene` parameter")


BODIES_DOC = ("other vehicles the beams can meet: a table name -> {shape = \"box\", size_m = "
              "[x, y, z]} | {shape = \"sphere\", radius_m} | {shape = \"cylinder\", "
              "radius_m, length_m} (body frame FRD, centred on the body origin) | "
              "{shape = \"mesh\", file, scale} (a glTF/OBJ/STL file relative to the scene "
              "file's folder, its axes the body's FRD, metres times scale), optional "
              "label (class id, default 100) and instance (default 1000 + its index); each "
              "adds an input port body_NAME (VehicleState); needs `scene`")

_BODY_KEYS = {"shape", "size_m", "radius_m", "length_m", "file", "scale", "label", "instance"}


def body_problems(table: Mapping[str, Any], folder: Path | None = None) -> list[str]:
    """Every problem of a ``bodies`` parameter table (``BODIES_DOC``), as text; mesh
    files are looked for in ``folder`` (the scene file's)."""
    out = []
    for name, spec in table.items():
        where = f"bodies.{name}"
        if not name.isidentifier():
            out.append(f"{where}: the name must be letters, digits and _ (it names the input "
                       f"port body_{name})")
        if not isinstance(spec, Mapping):
            out.append(f"{where}: must be a table {{shape = ..., ...}}")
            continue
        unknown = sorted(set(spec) - _BODY_KEYS)
        if unknown:
            out.append(f"{where}: unknown key(s) {unknown}; known: {sorted(_BODY_KEYS)}")
        try:
            _body_mesh(spec, folder)
        except (TypeError, ValueError) as exc:
            out.append(f"{where}: {exc}")
        for key in ("label", "instance"):
            v = spec.get(key, 1)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                out.append(f"{where}.{key}: must be an integer >= 1")
    return out


def _body_mesh(spec: Mapping[str, Any], folder: Path | None = None):
    """The trimesh of a body spec; ValueError saying what is wrong."""
    import trimesh

    def positive(key):
        v = spec.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"{key} must be a number > 0")
        return float(v)

    shape = spec.get("shape")
    if shape == "box":
        size = spec.get("size_m")
        if (not isinstance(size, (list, tuple)) or len(size) != 3
                or not all(isinstance(v, (int, float)) and v > 0 for v in size)):
            raise ValueError("size_m must be [x, y, z], each > 0 (m)")
        return trimesh.creation.box(extents=[float(v) for v in size])
    if shape == "sphere":
        return trimesh.creation.icosphere(subdivisions=3, radius=positive("radius_m"))
    if shape == "cylinder":
        return trimesh.creation.cylinder(radius=positive("radius_m"), height=positive("length_m"),
                                         sections=32)
    if shape == "mesh":
        file = spec.get("file")
        if not isinstance(file, str) or not file:
            raise ValueError("file must name a mesh file (glTF/OBJ/STL), relative to the scene "
                             "file's folder")
        path = Path(file) if Path(file).is_absolute() or folder is None else Path(folder) / file
        if not path.is_file():
            raise ValueError(f"mesh file {str(path)!r} not found (file is relative to the scene "
                             "file's folder)")
        scale = spec.get("scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            raise ValueError("scale must be a number > 0")
        try:
            mesh = trimesh.load(str(path), force="mesh")
        except Exception as exc:  # trimesh raises many kinds for unreadable files
            raise ValueError(f"mesh file {str(path)!r} could not be read ({exc})") from None
        if not len(getattr(mesh, "faces", ())):
            raise ValueError(f"mesh file {str(path)!r} has no triangles")
        return mesh.apply_scale(float(scale))
    raise ValueError(f"shape must be one of box, sphere, cylinder, mesh, got {shape!r}")


class Bodies:
    """The other vehicles of a sensor's ``bodies`` parameter, placed each step.

    Call order: built in ``configure`` (after the scene); ``ports()`` are the extra
    inputs (``body_NAME``, VehicleState); ``engine(inputs)`` is the scene's engine
    with every body whose state has arrived at that state (``Scene.with_bodies``), or
    the static engine when none has."""

    def __init__(self, table: Mapping[str, Any], scene: Any, component: str) -> None:
        from ..world.scene import Body

        folder = Path(scene.path).parent
        problems = body_problems(table, folder)
        if problems:
            raise ParameterError("; ".join(problems), component=component,
                                 fix="correct the `bodies` table (docs/sensors.md)")
        self.scene = scene
        self.bodies = {}
        for i, (name, spec) in enumerate(table.items()):
            self.bodies[f"body_{name}"] = Body.from_trimesh(
                name, _body_mesh(spec, folder), int(spec.get("label", 100)),
                int(spec.get("instance", 1000 + i)))

    def __bool__(self) -> bool:
        return bool(self.bodies)

    def engine(self, inputs: Mapping[str, Any]):
        placed = [b.at_state(inputs[port]) for port, b in self.bodies.items()
                  if inputs.get(port) is not None]
        return self.scene.with_bodies(placed) if placed else self.scene.engine()


def body_ports(table: Mapping[str, Any] | None):
    """The input ports ``body_NAME`` of a ``bodies`` table."""
    from moonpool.v1 import vehicle_pb2

    from ..sdk.component import Port

    return tuple(Port(f"body_{name}", vehicle_pb2.VehicleState,
                      f"state of the body '{name}' the beams can meet") for name in (table or {}))


class SeesBodies:
    """Mixin (before SensorComponent) for a sensor with a ``bodies`` parameter: its inputs
    are the class's plus ``body_NAME`` per body; ``place_bodies(inputs)`` points
    ``self.model.engine`` at the scene with the bodies where their states say."""

    bodies: Bodies | None = None

    @classmethod
    def ports_for(cls, params):
        return tuple(cls.inputs) + body_ports(params.bodies), tuple(cls.outputs)

    def configure_bodies(self, params, scene) -> None:
        self.bodies = Bodies(params.bodies, scene, self.name) if params.bodies else None

    def place_bodies(self, inputs) -> None:
        if self.bodies:
            self.model.engine = self.bodies.engine(inputs)


class FlatSeabed:
    """A horizontal seabed at depth D behind the ray engine's ``cast`` interface.

    t = (D - o_z) / d_z for rays pointing down from above the seabed (d_z > 0, o_z <= D)
    and t <= max_range; the normal is -e_z (up, against the ray); label 1, instance 1."""

    def __init__(self, depth_m: float, label: int = 1, instance: int = 1) -> None:
        self.depth_m = float(depth_m)
        self.label, self.instance = int(label), int(instance)

    def cast(self, origins_ned, directions_ned, max_range_m=np.inf):
        from ..world.rays import Hits

        d = np.atleast_2d(np.asarray(directions_ned, dtype=float))
        o = np.broadcast_to(np.asarray(origins_ned, dtype=float), d.shape)
        d = d / np.linalg.norm(d, axis=1, keepdims=True)
        h = self.depth_m - o[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where((d[:, 2] > 0) & (h >= 0), h / d[:, 2], np.inf)
        t = np.where(t <= np.broadcast_to(np.asarray(max_range_m, dtype=float), t.shape), t, np.inf)
        hit = np.isfinite(t)
        n = t.shape[0]
        point = np.where(hit[:, None], o + np.where(hit, t, 0.0)[:, None] * d, np.nan)
        normal = np.where(hit[:, None], np.array([0.0, 0.0, -1.0]), np.nan)
        return Hits(distance_m=t, point_ned=point, normal_ned=normal,
                    triangle=np.where(hit, 0, -1).astype(np.int64),
                    label=np.where(hit, self.label, 0).astype(np.int32),
                    instance=np.where(hit, self.instance, 0).astype(np.int32))


def cone_directions(half_angle_rad: float, rings: int, azimuths: int) -> np.ndarray:
    """Unit vectors (1 + rings·azimuths, 3) sampling a cone about +z: the axis, then
    ``rings`` rings at half-angles β_j = half_angle · j / rings, each with ``azimuths``
    directions (rings offset by half an azimuth step)."""
    out = [np.array([0.0, 0.0, 1.0])]
    if half_angle_rad > 0:
        for j in range(1, rings + 1):
            b = half_angle_rad * j / rings
            phi = 2 * np.pi * (np.arange(azimuths) + 0.5 * (j % 2 == 0)) / azimuths
            out.extend(np.stack([np.sin(b) * np.cos(phi), np.sin(b) * np.sin(phi),
                                 np.full(azimuths, np.cos(b))], axis=1))
    return np.vstack(out)


def draw(noise: KeyedNoise, first: int, n: int, channel: str, width: int,
         uniform: bool = False) -> np.ndarray:
    """(n, width) keyed draws of samples first..first+n-1, one channel per group of 4
    columns (``channel``, ``channel/1``, ...)."""
    cols = []
    for g in range(0, width, 4):
        w = min(4, width - g)
        ch = channel if g == 0 else f"{channel}/{g // 4}"
        cols.append(noise.uniform_range(first, n, ch, w) if uniform
                    else noise.normal_range(first, n, ch, w))
    return np.concatenate(cols, axis=1) if cols else np.zeros((n, 0))


WATER_DOC = ("water column without a scene: a table with the keys of a scene file's "
             "[water] table (docs/world.md: surface_temperature_c, mixed_layer_depth_m, ..., "
             "current_ned_mps = [n, e, d] or current_profile = [[depth, n, e, d], ...]) plus "
             "latitude_deg, longitude_deg; empty: the defaults")

_WATER_SCALARS = ("surface_temperature_c", "surface_salinity_psu", "mixed_layer_depth_m",
                  "thermocline_bottom_m", "deep_temperature_c", "deep_salinity_psu",
                  "deep_temperature_gradient_c_per_m", "latitude_deg", "longitude_deg")


def water_column(table: Mapping[str, Any] | None, component: str):
    """A ``WaterColumn`` from a parameter table with the scene file's [water] keys
    (and the origin's latitude_deg / longitude_deg)."""
    from ..world.environment import WaterColumn

    table = dict(table or {})
    known = set(_WATER_SCALARS) | {"current_ned_mps", "current_profile"}
    unknown = sorted(set(table) - known)
    fix = "correct the `water` table in the rig (keys as in a scene file's [water] table)"
    if unknown:
        raise ParameterError(f"unknown water column field(s) {unknown}; known: {sorted(known)}",
                             component=component, fix=fix)
    kw: dict[str, Any] = {}
    try:
        for k in _WATER_SCALARS:
            if k in table:
                kw[k] = float(table[k])
        if "current_ned_mps" in table:
            cur = tuple(float(v) for v in table["current_ned_mps"])
            if len(cur) != 3:
                raise ValueError("current_ned_mps takes 3 values [north, east, down]")
            kw["uniform_current_ned_mps"] = cur
        if "current_profile" in table:
            rows = []
            for row in table["current_profile"]:
                flat = [float(v) for v in _flatten(row)]
                if len(flat) != 4:
                    raise ValueError("current_profile rows are [depth_m, north, east, down]")
                rows.append((flat[0], tuple(flat[1:])))
            kw["current_profile"] = tuple(rows)
        return WaterColumn(**kw)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"water table: {exc}", component=component, fix=fix) from None


def _flatten(v: Any) -> list:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flatten(item)]
    return [v]


@dataclass
class Surroundings:
    """What a sensor's beams meet and the water they travel through."""

    engine: Any
    """Ray engine (``RayEngine`` of the scene, or ``FlatSeabed``)."""
    water: Any
    """``WaterColumn``."""
    scene: Any = None
    """The ``Scene`` when one is given."""


def surroundings(scene_path: Path | str | None, seabed_depth_m: float,
                 water_table: Mapping[str, Any] | None, component: str) -> Surroundings:
    """The scene's engine and water column, or the flat seabed and the water table.

    A scene and a non-empty water table together are refused (two water columns)."""
    if scene_path:
        if water_table:
            raise ParameterError("both `scene` and a `water` table are given", component=component,
                                 fix="drop `water`: the scene's water column is used")
        scene = load_scene(str(scene_path), component)
        return Surroundings(scene.engine(), scene.environment, scene)
    if not np.isfinite(seabed_depth_m):
        raise ParameterError("seabed_depth_m must be finite", component=component,
                             fix="give the flat seabed's depth in m")
    return Surroundings(FlatSeabed(seabed_depth_m), water_column(water_table, component))


def configure_common(component: Any, sensor_params: Any, params: Any) -> Mount:
    """Check the model parameters, the mount and the latency of an acoustic sensor;
    set ``latency_ns``; return the mount. Raises ParameterError naming the component."""
    try:
        sensor_params.check()
        if len(params.mount_xyz_m) != 3 or len(params.mount_rpy_rad) != 3:
            raise ValueError("mount_xyz_m and mount_rpy_rad take 3 values each")
        if not params.latency_s >= 0:
            raise ValueError("latency_s must be >= 0")
    except ValueError as exc:
        raise ParameterError(str(exc), component=component.name,
                             fix="correct the value in the rig") from None
    component.latency_ns = int(round(params.latency_s * 1e9))
    return Mount(tuple(float(v) for v in params.mount_xyz_m),
                 tuple(float(v) for v in params.mount_rpy_rad))
