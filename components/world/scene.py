"""The static scene every geometric sensor casts rays into (docs/world.md).

A scene travels as a file path (a scene TOML file, read by ``scenefile.py``), never
as a message: each sensor loads its own copy with :meth:`Scene.load`. Moving bodies
(another vehicle, from its VehicleState) are placed into that copy each step with
:meth:`Scene.with_bodies`, which adds them to the static engine without rebuilding it.

Frames: world NED (north, east, down; m) about the map origin (latitude,
longitude); an object's pose is its position (NED, m) and roll/pitch/yaw (ZYX,
R = Rz(ψ) Ry(θ) Rx(φ), v_world = R · scale · v_object + p).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import trimesh

from ..sdk.errors import ParameterError
from ..sdk.frames import quat_from_rot, rot_from_euler, rot_from_quat
from . import terrain
from .environment import WaterColumn
from .rays import MeshPart, RayEngine
from .scenefile import ObjectSpec, SceneSpec, read_scene_file


@dataclass(frozen=True)
class SurfaceClass:
    """One row of the label table."""

    id: int
    name: str
    backscatter_db: float
    """Acoustic backscatter strength at normal incidence, dB."""
    reflectance: tuple[float, float, float]
    """Optical diffuse albedo (R, G, B), 0..1."""


@dataclass(frozen=True)
class Body:
    """A moving body: a mesh in its own frame (FRD for a vehicle, m) at a pose."""

    name: str
    vertices: np.ndarray
    """(V, 3) vertices in the body frame, m."""
    faces: np.ndarray
    """(F, 3) vertex indices."""
    class_id: int
    instance_id: int
    position_ned_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quaternion_wxyz: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    """Attitude, body -> NED (w, x, y, z)."""

    @classmethod
    def from_trimesh(cls, name: str, mesh: trimesh.Trimesh, class_id: int,
                     instance_id: int) -> Body:
        return cls(name, np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64),
                   class_id, instance_id)

    def at(self, position_ned_m, quaternion_wxyz) -> Body:
        """The same body at another pose."""
        return Body(self.name, self.vertices, self.faces, self.class_id, self.instance_id,
                    tuple(float(x) for x in position_ned_m),
                    tuple(float(x) for x in quaternion_wxyz))

    def at_state(self, state) -> Body:
        """The body at the pose of a ``moonpool.v1.VehicleState``."""
        p, q = state.position_ned_m, state.orientation
        quat = (q.w, q.x, q.y, q.z) if (q.w or q.x or q.y or q.z) else (1.0, 0.0, 0.0, 0.0)
        return self.at((p.x, p.y, p.z), quat)

    def world_vertices(self) -> np.ndarray:
        """(V, 3) vertices in NED, m."""
        R = rot_from_quat(np.asarray(self.quaternion_wxyz, float))
        return self.vertices @ R.T + np.asarray(self.position_ned_m, float)


def _primitive(obj: ObjectSpec) -> trimesh.Trimesh:
    if obj.shape == "box":
        return trimesh.creation.box(extents=obj.size_m)
    if obj.shape == "sphere":
        return trimesh.creation.icosphere(subdivisions=4, radius=obj.radius_m)
    return trimesh.creation.cylinder(radius=obj.radius_m, height=obj.length_m, sections=48)


def _load_mesh(obj: ObjectSpec, index: int, file: str) -> trimesh.Trimesh:
    try:
        mesh = trimesh.load(str(obj.mesh), force="mesh")
    except Exception as exc:  # trimesh raises many kinds for a bad file
        raise ParameterError(
            f"{file}: objects[{index}].mesh: '{obj.mesh.name}' cannot be read as a mesh: {exc}",
            fix="give a triangle mesh in STL, OBJ, PLY, OFF or glTF") from exc
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ParameterError(f"{file}: objects[{index}].mesh: '{obj.mesh.name}' holds no triangles",
                             fix="give a triangle mesh with at least one face")
    return mesh


class Scene:
    """A loaded scene: label table, instances, water column and static geometry."""

    def __init__(self, spec: SceneSpec, movable: tuple[str, ...] = ()) -> None:
        self.spec = spec
        unknown = sorted(set(movable) - {o.name for o in spec.objects})
        if unknown:
            raise ParameterError(
                f"{spec.path}: no object named {', '.join(unknown)} to make movable",
                fix=f"name objects of the scene's [[objects]]: "
                    f"{', '.join(o.name for o in spec.objects) or '(none)'}")
        self.movable: dict[str, Body] = {}
        """Objects left out of the static geometry (``movable``): name -> a :class:`Body`
        (mesh in the object's own frame, scaled) at its pose in the scene file; a sensor
        places it each step where a message says (``Body.at_state``)."""
        self.name = spec.name
        self.path: Path = spec.path
        self.environment: WaterColumn = spec.water
        self.classes: dict[int, SurfaceClass] = {
            c.id: SurfaceClass(c.id, c.name, c.backscatter_db, c.reflectance) for c in spec.classes}
        self._class_id = {c.name: c.id for c in spec.classes}
        self.instances: dict[int, tuple[int, str]] = {}
        """instance id -> (class id, object name)."""

        taken = {o.instance for o in spec.objects if o.instance} | (
            {spec.seabed.instance} if spec.seabed.instance else set())
        next_free = iter(i for i in range(1, 2**31) if i not in taken)

        verts: list[np.ndarray] = []
        faces: list[np.ndarray] = []
        labels: list[np.ndarray] = []
        insts: list[np.ndarray] = []
        self._n_vertices = 0

        def add(name: str, class_name: str, instance: int, v: np.ndarray, f: np.ndarray) -> None:
            cid = self._class_id[class_name]
            inst = instance or next(next_free)
            self.instances[inst] = (cid, name)
            verts.append(np.asarray(v, float))
            faces.append(np.asarray(f, np.int64) + self._n_vertices)
            labels.append(np.full(len(f), cid, np.int32))
            insts.append(np.full(len(f), inst, np.int32))
            self._n_vertices += len(v)

        sb = spec.seabed
        self.grid: terrain.HeightGrid | None = None
        if sb.kind == "procedural":
            self.grid = terrain.procedural_grid(sb)
        elif sb.kind == "heightmap":
            self.grid = terrain.heightmap_grid(sb)
        if self.grid is not None:
            add("seabed", sb.class_name, sb.instance, *self.grid.vertices_faces())

        for i, obj in enumerate(spec.objects):
            mesh = _load_mesh(obj, i, str(spec.path)) if obj.mesh is not None else _primitive(obj)
            R = rot_from_euler(*np.radians(obj.rpy_deg))
            p = np.asarray(obj.position_ned_m, float).copy()
            if obj.on_seabed:
                depth = float(self.seabed_depth(p[0], p[1]))
                if not np.isfinite(depth):
                    raise ParameterError(
                        f"{spec.path}: objects[{i}].on_seabed: ({p[0]}, {p[1]}) is outside the "
                        "seabed", fix="place the object over the seabed or set on_seabed = false")
                p[2] += depth
            local = obj.scale * np.asarray(mesh.vertices, float)
            if obj.name in movable:
                cid = self._class_id[obj.class_name]
                inst = obj.instance or next(next_free)
                self.instances[inst] = (cid, obj.name)
                self.movable[obj.name] = Body(obj.name, local, np.asarray(mesh.faces, np.int64),
                                              cid, inst).at(p, quat_from_rot(R))
                continue
            add(obj.name, obj.class_name, obj.instance, local @ R.T + p, np.asarray(mesh.faces))

        if sb.boulders is not None and self.grid is not None:
            for k, (v, f) in enumerate(terrain.boulder_meshes(sb.boulders, self.grid)):
                add(f"rock_{k:03d}", sb.boulders.class_name, 0, v, f)

        self.vertices = np.concatenate(verts) if verts else np.zeros((0, 3))
        """(V, 3) NED vertices of the combined static mesh, m."""
        self.faces = np.concatenate(faces) if faces else np.zeros((0, 3), np.int64)
        self.labels = np.concatenate(labels) if labels else np.zeros(0, np.int32)
        """(F,) class id per triangle."""
        self.triangle_instances = np.concatenate(insts) if insts else np.zeros(0, np.int32)
        """(F,) instance id per triangle."""

    @classmethod
    def load(cls, path, base_dir=None, movable: tuple[str, ...] = ()) -> Scene:
        """The scene in a scene file (``path`` relative to ``base_dir`` when given);
        :class:`ParameterError` names the file, every bad key and the fix. The objects
        named in ``movable`` are not part of the static geometry but bodies
        (``self.movable``) to place where messages say."""
        return cls(read_scene_file(path, base_dir), tuple(movable))

    def class_id(self, name: str) -> int:
        """The label id of a class name."""
        try:
            return self._class_id[name]
        except KeyError:
            raise ParameterError(f"scene '{self.name}' has no class '{name}'",
                                 fix=f"one of {', '.join(sorted(self._class_id))}") from None

    def instance_id(self, name: str) -> int:
        """The instance id of an object (``seabed``, an object's name, ``rock_007``)."""
        for inst, (_, n) in self.instances.items():
            if n == name:
                return inst
        raise ParameterError(f"scene '{self.name}' has no object '{name}'",
                             fix="an object name from the scene file's [[objects]]")

    @cached_property
    def _engine(self) -> RayEngine:
        return RayEngine([MeshPart(self.vertices, self.faces)], self.labels,
                         self.triangle_instances)

    def engine(self) -> RayEngine:
        """The ray engine over the static geometry (built once, then cached)."""
        return self._engine

    def with_bodies(self, bodies) -> RayEngine:
        """The static engine plus ``bodies`` (:class:`Body`) at their poses; the static
        BVH is shared, each body gets its own small one."""
        parts, labels, insts = [], [], []
        for body in bodies:
            part = MeshPart(body.world_vertices(), body.faces)
            parts.append(part)
            labels.append(np.full(part.n_triangles, body.class_id, np.int32))
            insts.append(np.full(part.n_triangles, body.instance_id, np.int32))
        if not parts:
            return self.engine()
        return self.engine().plus(parts, np.concatenate(labels), np.concatenate(insts))

    def seabed_depth(self, north_m, east_m) -> np.ndarray:
        """Depth of the seabed (NED z, m, positive down) under each point, on the
        seabed's triangles (rocks and objects excluded); nan off the seabed."""
        if self.grid is None:
            shape = np.broadcast(np.asarray(north_m), np.asarray(east_m)).shape
            return np.full(shape, np.nan)
        return self.grid.depth(north_m, east_m)

    def mesh(self) -> trimesh.Trimesh:
        """The combined static mesh (for export and viewing)."""
        return trimesh.Trimesh(self.vertices, self.faces, process=False)
