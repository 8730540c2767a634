"""The one ray engine: first hits of rays against triangle meshes (docs/world.md).

Embree 4 (through ``embreex``) finds which triangle a ray hits first; everything
returned is then computed again in float64 from that triangle:

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

Threads: ``cast`` traces on the calling thread (embreex's loop over
``rtcIntersect1``); Embree's BVH build may use several (TBB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from embreex import mesh_construction as _mesh
from embreex import rtcore_scene as _rtc

_F32_MAX_RANGE = 1.0e30
"""Embree's tfar for an unlimited ray (finite: float32 arithmetic inside)."""


@dataclass(frozen=True)
class Hits:
    """First hits of N rays (world NED frame, metres)."""

    distance_m: np.ndarray
    """(N,) float64 range along the unit direction; ``np.inf`` where nothing is hit
    within the ray's maximum range."""
    point_ned: np.ndarray
    """(N, 3) hit points, NED, m; nan where no hit."""
    normal_ned: np.ndarray
    """(N, 3) unit surface normals, NED, turned against the ray (n·d <= 0); nan
    where no hit."""
    triangle: np.ndarray
    """(N,) int64 triangle index in the combined mesh; -1 where no hit."""
    label: np.ndarray
    """(N,) int32 semantic class id (0 = no hit); the scene's ``classes`` maps it."""
    instance: np.ndarray
    """(N,) int32 instance id (0 = no hit); the scene's ``instances`` maps it."""

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
            self._scene = _rtc.EmbreeScene(robust=True)
            _mesh.TriangleMesh(
                scene=self._scene,
                vertices=local.astype(np.float32),
                indices=faces[good].astype(np.int32),
            )

    def cast(self, origins: np.ndarray, dirs: np.ndarray, max_range: np.ndarray):
        """(t float64, face int64, normal (N, 3) float64) for each ray; t = inf,
        face = -1 for a miss (its normal row is then meaningless).

        Computed over all rays at once (misses included, then masked): cheaper than
        gathering the hits when most rays hit, as a sensor's mostly do."""
        n = len(origins)
        if self._scene is None or n == 0:
            return np.full(n, np.inf), np.full(n, -1, dtype=np.int64), np.full((n, 3), np.nan)
        local = origins - self.origin
        local32 = local.astype(np.float32)
        dirs32 = dirs.astype(np.float32)
        limited = bool(np.isfinite(max_range).any())
        if limited:
            # Embree's own cut-off, a little beyond the float64 one applied below.
            tfar = np.minimum(max_range, _F32_MAX_RANGE)
            tfar = (tfar * (1.0 + 1e-5) + 1e-3).astype(np.float32)
            prim = self._scene.run(local32, dirs32, dists=tfar)
        else:
            tfar = None
            prim = self._scene.run(local32, dirs32)
        hit = prim >= 0
        f = np.where(hit, prim, 0).astype(np.int64)
        if self._embree_to_face is not None:
            f = self._embree_to_face[f]
        nrm = self.normals[f]
        denom = np.einsum("ij,ij->i", nrm, dirs)
        num = self._plane[f] - np.einsum("ij,ij->i", nrm, local)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = num / denom
        # A grazing ray (n·d ~ 0) cannot be refined: keep Embree's float32 range.
        grazing = hit & ~(np.abs(denom) > 1e-9)
        if grazing.any():
            g = np.flatnonzero(grazing)
            t32 = self._scene.run(local32[g], dirs32[g],
                                  dists=None if tfar is None else tfar[g], output=1)["tfar"]
            t[g] = t32.astype(np.float64)
        np.maximum(t, 0.0, out=t)
        if limited:
            hit &= t <= max_range
        t[~hit] = np.inf
        return t, np.where(hit, f, -1), nrm

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
        try:
            dirs = np.ascontiguousarray(np.broadcast_to(dirs, (n, 3)))
            origins = np.ascontiguousarray(np.broadcast_to(origins, (n, 3)))
        except ValueError:
            raise ValueError(f"{len(origins)} origins for {len(dirs)} directions "
                             "(fix: one origin, or one per ray)") from None
        norm = np.sqrt(np.einsum("ij,ij->i", dirs, dirs))
        if np.any(~(norm > 0)) or not np.all(np.isfinite(norm)):
            raise ValueError("a ray direction is zero or not finite (fix: give unit directions)")
        dirs = dirs / norm[:, None]
        if not np.all(np.isfinite(origins)):
            raise ValueError("a ray origin is not finite")
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

        hit = best_tri >= 0
        miss = ~hit
        tri = np.where(hit, best_tri, 0)
        with np.errstate(invalid="ignore"):
            point = origins + best_t[:, None] * dirs
        flip = np.einsum("ij,ij->i", normal, dirs) > 0
        normal[flip] *= -1.0
        label = self.labels[tri] if self.n_triangles else np.zeros(n, np.int32)
        instance = self.instances[tri] if self.n_triangles else np.zeros(n, np.int32)
        if miss.any():
            point[miss] = np.nan
            normal[miss] = np.nan
            label = np.where(hit, label, 0).astype(np.int32)
            instance = np.where(hit, instance, 0).astype(np.int32)
        return Hits(best_t, point, normal, best_tri, label, instance)
