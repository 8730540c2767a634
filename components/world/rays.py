"""The one ray engine: first hits of rays against triangle meshes (docs/world.md).

Embree 4 (the library the ``embreex`` wheel ships, driven through its C API in
16-ray packets: ``native.py``, ``embree_packets.c``) finds which triangle a ray hits
first; everything returned is then computed again in float64 from that triangle:

* Embree works in float32. Each mesh is therefore handed to it relative to a local
  origin (the centre of its bounding box), so coordinates stay small (a 200 m scene:
  |x| <= ~100 m, float32 spacing <= 7.6e-6 m) even where the scene lies 6,000 m down.
* The distance is the exact ray-plane intersection with the hit triangle,
  t = n·(v0 - o) / n·d, in float64 (n the triangle's normal, v0 a vertex, o the
  origin, d the unit direction). For a planar surface the range is then exact to
  float64 rounding (~1e-12 m at 100 m), whatever Embree's float32 t was; only the
  choice of triangle comes from float32, which matters on an edge between two
  triangles of different planes (both give nearly the same t there).
* Normals are the float64 face normals of the mesh, turned against the ray.
* Scenes are built in Embree's robust mode (``RTC_SCENE_FLAG_ROBUST``): without it
  about 1e-5 of random rays slipped through shared edges of a sphere mesh
  (17 in 1,000,000), with it none did (docs/world.md#limits).

A :class:`RayEngine` is a list of parts, each one Embree scene: the static scene
(built once) and, per step, the moving bodies placed at their poses
(``Scene.with_bodies``), so a moving body never rebuilds the static BVH. A ray's
hit is the nearest over the parts. Triangle indices run over the parts in order,
as if all meshes were one combined mesh; ``labels``/``instances`` give each
triangle its semantic class id and instance id (0 = none).

Threads: ``cast`` traces on the calling thread (``rtcIntersect16`` packets);
Embree's BVH build may use several (TBB). Only the fields a caller reads are
computed: ``Hits`` fills points, turned normals, labels and instances on first use.
"""

from __future__ import annotations

import numpy as np

from .native import EmbreeScene


class Hits:
    """First hits of N rays (world NED frame, metres).

    The engine fills ``distance_m`` and ``triangle`` at once and the other fields
    on first use (a sensor that needs only ranges pays for nothing else); built
    directly, every field is given."""

    __slots__ = ("distance_m", "triangle", "_point", "_normal", "_label", "_instance",
                 "_lazy")

    def __init__(self, distance_m, point_ned, normal_ned, triangle, label, instance) -> None:
        self.distance_m = distance_m
        """(N,) float64 range along the unit direction; ``np.inf`` where nothing is hit
        within the ray's maximum range."""
        self.triangle = triangle
        """(N,) int64 triangle index in the combined mesh; -1 where no hit."""
        self._point, self._normal = point_ned, normal_ned
        self._label, self._instance = label, instance
        self._lazy = None

    @classmethod
    def _deferred(cls, distance_m, triangle, normal, origins, dirs, engine) -> Hits:
        h = cls(distance_m, None, None, triangle, None, None)
        h._lazy = (normal, origins, dirs, engine)
        return h

    @property
    def point_ned(self) -> np.ndarray:
        """(N, 3) hit points, NED, m; nan where no hit."""
        if self._point is None:
            _, origins, dirs, _ = self._lazy
            with np.errstate(invalid="ignore"):
                point = origins + self.distance_m[:, None] * dirs
            miss = self.triangle < 0
            if miss.any():
                point[miss] = np.nan
            self._point = point
        return self._point

    @property
    def normal_ned(self) -> np.ndarray:
        """(N, 3) unit surface normals, NED, turned against the ray (n·d <= 0); nan
        where no hit."""
        if self._normal is None:
            normal, _, dirs, _ = self._lazy
            flip = np.einsum("ij,ij->i", normal, dirs) > 0
            normal[flip] *= -1.0
            miss = self.triangle < 0
            if miss.any():
                normal[miss] = np.nan
            self._normal = normal
        return self._normal

    @property
    def label(self) -> np.ndarray:
        """(N,) int32 semantic class id (0 = no hit); the scene's ``classes`` maps it."""
        if self._label is None:
            self._label = self._lazy[3]._per_triangle(self._lazy[3].labels, self.triangle)
        return self._label

    @property
    def instance(self) -> np.ndarray:
        """(N,) int32 instance id (0 = no hit); the scene's ``instances`` maps it."""
        if self._instance is None:
            self._instance = self._lazy[3]._per_triangle(self._lazy[3].instances, self.triangle)
        return self._instance

    @property
    def hit(self) -> np.ndarray:
        """(N,) bool: the ray hit something within its maximum range."""
        return np.isfinite(self.distance_m)

    def __len__(self) -> int:
        return int(self.distance_m.shape[0])


class MeshPart:
    """One triangle mesh in one Embree scene, relative to its local origin.

    ``vertices_ned`` (V, 3) float64, m; ``faces`` (F, 3) int, indices into the
    vertices. Degenerate triangles (zero area) are kept in the indexing but never
    handed to Embree (they cannot be hit)."""

    def __init__(self, vertices_ned: np.ndarray, faces: np.ndarray) -> None:
        vertices = np.ascontiguousarray(vertices_ned, dtype=np.float64).reshape(-1, 3)
        faces = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
        if faces.size and (faces.min() < 0 or faces.max() >= len(vertices)):
            raise ValueError(
                f"a face refers to vertex {int(faces.max())} of a mesh with "
                f"{len(vertices)} vertices (fix: faces index the vertex array, from 0)")
        if not np.all(np.isfinite(vertices)):
            raise ValueError("a mesh vertex is not finite (fix: remove nan/inf vertices)")
        self.n_triangles = int(len(faces))
        if len(vertices):
            lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        else:
            lo = hi = np.zeros(3)
        self.origin = 0.5 * (lo + hi)
        """Local origin (NED, m): Embree sees ``vertices - origin``."""
        self.bounds = (lo, hi)
        local = vertices - self.origin
        v0 = local[faces[:, 0]] if len(faces) else np.zeros((0, 3))
        e1 = local[faces[:, 1]] - v0 if len(faces) else np.zeros((0, 3))
        e2 = local[faces[:, 2]] - v0 if len(faces) else np.zeros((0, 3))
        n = np.cross(e1, e2)
        norm = np.linalg.norm(n, axis=1)
        scale = np.maximum(np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1), 1e-300)
        good = norm > 1e-12 * scale
        self.normals = np.full_like(n, np.nan)
        self.normals[good] = n[good] / norm[good, None]
        """(F, 3) float64 unit face normals (right hand over the vertex order)."""
        self._plane = np.einsum("ij,ij->i", self.normals, v0)
        """(F,) n·v0 in local coordinates: the plane of each face is n·x = n·v0."""
        self._embree_to_face = None if good.all() else np.flatnonzero(good)
        """Embree's primitive index -> face index (None: the identity)."""
        self._scene = None
        if good.any():
            self._scene = EmbreeScene(local.astype(np.float32), faces[good].astype(np.uint32))

    def cast(self, origins: np.ndarray, dirs: np.ndarray, max_range: np.ndarray):
        """(t float64, face int64, normal (N, 3) float64) for each ray; t = inf,
        face = -1 for a miss (its normal row is then nan). ``origins`` (N, 3), or one
        row broadcast to (N, 3) (stride 0); ``dirs`` unit."""
        n = len(origins)
        if self._scene is None or n == 0:
            return np.full(n, np.inf), np.full(n, -1, dtype=np.int64), np.full((n, 3), np.nan)
        if n > 1 and origins.strides[0] == 0:  # one origin for every ray (a broadcast view)
            local = np.broadcast_to(origins[:1] - self.origin, (n, 3))
        else:
            local = origins - self.origin
        limited = bool(np.isfinite(max_range).any())
        face, t, nrm = self._scene.cast(local, dirs, max_range if limited else None,
                                        self.normals, self._plane, self._embree_to_face)
        return t, face, nrm

    def may_hit(self, origins: np.ndarray, dirs: np.ndarray, max_range: np.ndarray):
        """(N,) bool: the ray meets this part's bounding box (slab test, padded)."""
        lo, hi = self.bounds
        pad = 1e-6 * (1.0 + np.abs(hi - lo).max())
        lo, hi = lo - pad, hi + pad
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / dirs
            t1 = (lo - origins) * inv
            t2 = (hi - origins) * inv
        # A zero direction component: inside the slab (nan -> ignored) or never.
        tmin = np.fmax.reduce(np.fmin(t1, t2), axis=1)
        tmax = np.fmin.reduce(np.fmax(t1, t2), axis=1)
        return (tmax >= np.maximum(tmin, 0.0)) & (tmin <= max_range)


class RayEngine:
    """First hits against the scene's meshes (module docstring).

    ``parts`` are :class:`MeshPart`s whose triangles are numbered one after the
    other; ``labels`` and ``instances`` hold one int per triangle over all parts."""

    def __init__(self, parts: list[MeshPart], labels: np.ndarray, instances: np.ndarray) -> None:
        self.parts = tuple(parts)
        self.labels = np.ascontiguousarray(labels, dtype=np.int32).reshape(-1)
        self.instances = np.ascontiguousarray(instances, dtype=np.int32).reshape(-1)
        total = sum(p.n_triangles for p in self.parts)
        if len(self.labels) != total or len(self.instances) != total:
            raise ValueError(
                f"{len(self.labels)} labels and {len(self.instances)} instances for {total} "
                "triangles (fix: one label and one instance id per triangle)")
        self._offsets = np.cumsum([0] + [p.n_triangles for p in self.parts])

    @classmethod
    def from_mesh(cls, vertices_ned, faces, labels=None, instances=None) -> RayEngine:
        """An engine over one mesh; labels/instances per triangle (default 0)."""
        part = MeshPart(vertices_ned, faces)
        n = part.n_triangles
        labels = np.zeros(n, np.int32) if labels is None else np.broadcast_to(labels, (n,))
        instances = np.zeros(n, np.int32) if instances is None else np.broadcast_to(instances, (n,))
        return cls([part], labels, instances)

    def plus(self, parts: list[MeshPart], labels: np.ndarray, instances: np.ndarray) -> RayEngine:
        """This engine's parts (shared, not rebuilt) followed by more parts."""
        return RayEngine(list(self.parts) + list(parts),
                         np.concatenate([self.labels, np.asarray(labels, np.int32)]),
                         np.concatenate([self.instances, np.asarray(instances, np.int32)]))

    @property
    def n_triangles(self) -> int:
        return int(self._offsets[-1])

    def cast(self, origins_ned, directions_ned, max_range_m=np.inf) -> Hits:
        """First hits of rays from ``origins_ned`` ((N, 3) or (3,), m) along
        ``directions_ned`` ((N, 3) or (3,), any length > 0: normalised here) up to
        ``max_range_m`` (scalar or (N,), m). Returns :class:`Hits`."""
        dirs = np.atleast_2d(np.asarray(directions_ned, dtype=np.float64))
        origins = np.atleast_2d(np.asarray(origins_ned, dtype=np.float64))
        if dirs.ndim != 2 or dirs.shape[1] != 3 or origins.ndim != 2 or origins.shape[1] != 3:
            raise ValueError(f"origins and directions must be (N, 3) or (3,), got "
                             f"{origins.shape} and {dirs.shape}")
        n = max(len(dirs), len(origins))
        if len(dirs) not in (1, n) or len(origins) not in (1, n):
            raise ValueError(f"{len(origins)} origins for {len(dirs)} directions "
                             "(fix: one origin, or one per ray)")
        if len(dirs) != n:
            dirs = np.broadcast_to(dirs, (n, 3))
        norm = np.sqrt(np.einsum("ij,ij->i", dirs, dirs))
        if not (n == 0 or (norm.min() > 0 and np.isfinite(norm.max()))):
            raise ValueError("a ray direction is zero or not finite (fix: give unit directions)")
        dirs = dirs / norm[:, None]
        if not np.all(np.isfinite(origins)):
            raise ValueError("a ray origin is not finite")
        # One origin for all rays stays one row (a broadcast view below); per-ray
        # origins are copied (the hits' points are computed from them on demand).
        origins = np.array(origins, dtype=np.float64, order="C")
        if len(origins) != n:
            origins = np.broadcast_to(origins, (n, 3))
        max_range = np.broadcast_to(np.asarray(max_range_m, dtype=np.float64), (n,))
        if np.any(np.isnan(max_range)) or np.any(max_range < 0):
            raise ValueError("max_range_m must be >= 0 (np.inf: unlimited)")

        if self.parts:
            best_t, best_tri, normal = self.parts[0].cast(origins, dirs, max_range)
        else:
            best_t, best_tri, normal = (np.full(n, np.inf), np.full(n, -1, dtype=np.int64),
                                        np.full((n, 3), np.nan))
        for k, part in enumerate(self.parts[1:], start=1):
            reach = np.minimum(max_range, best_t)
            rows = np.flatnonzero(part.may_hit(origins, dirs, reach))
            if rows.size == 0:
                continue
            t, face, nrm = part.cast(origins[rows], dirs[rows], reach[rows])
            closer = t < best_t[rows]
            idx = rows[closer]
            best_t[idx] = t[closer]
            best_tri[idx] = face[closer] + self._offsets[k]
            normal[idx] = nrm[closer]

        return Hits._deferred(best_t, best_tri, normal, origins, dirs, self)

    def _per_triangle(self, values: np.ndarray, tri: np.ndarray) -> np.ndarray:
        """(N,) int32 ``values[tri]``, 0 where ``tri`` is -1 (no hit)."""
        if not self.n_triangles:
            return np.zeros(len(tri), np.int32)
        hit = tri >= 0
        if hit.all():
            return values[tri]
        return np.where(hit, values[np.where(hit, tri, 0)], 0).astype(np.int32)

