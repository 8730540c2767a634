"""The ray engine's packet loop (components/world/native.py, embree_packets.c) against
embreex's own single-ray binding of the same Embree (its build: test_native_build.py)."""

from __future__ import annotations

import numpy as np
import trimesh
from embreex import mesh_construction, rtcore_scene

from moonpool.components.world import native
from moonpool.components.world.rays import RayEngine


def _mesh():
    """A sphere (shared edges everywhere), a box beside it and a tilted plate."""
    parts = [trimesh.creation.icosphere(4, radius=2.0),
             trimesh.creation.box((3.0, 2.0, 1.0)).apply_translation((4.0, 0.0, 0.0)),
             trimesh.creation.box((10.0, 10.0, 0.01)).apply_transform(
                 trimesh.transformations.rotation_matrix(0.3, (1, 0, 0))).apply_translation(
                     (0.0, 0.0, 3.0))]
    m = trimesh.util.concatenate(parts)
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)


def test_packets_find_the_triangles_embreex_single_rays_find_and_refine_their_range():
    vertices, faces = _mesh()
    engine = RayEngine.from_mesh(vertices, faces)
    part = engine.parts[0]
    rng = np.random.default_rng(7)
    n = 20_000
    origins = rng.uniform(-8, 8, (n, 3))
    targets = rng.uniform(-3, 3, (n, 3))
    dirs = targets - origins
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    hits = engine.cast(origins, dirs)

    # embreex's binding: rtcIntersect1, one ray at a time, on its own scene.
    ref = rtcore_scene.EmbreeScene(robust=True)
    mesh_construction.TriangleMesh(scene=ref, vertices=(vertices - part.origin).astype(np.float32),
                                   indices=faces.astype(np.int32))
    prim = ref.run((origins - part.origin).astype(np.float32), dirs.astype(np.float32))
    assert (prim >= 0).sum() > n // 2  # most rays hit something
    assert np.array_equal(hits.triangle, np.where(prim >= 0, prim, -1))

    hit = hits.triangle >= 0
    f = hits.triangle[hit]
    # The float64 range: the ray meets the hit triangle's plane, n.(o + t d - v0) = 0.
    v0 = vertices[faces[f, 0]]
    normal = np.cross(vertices[faces[f, 1]] - v0, vertices[faces[f, 2]] - v0)
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    t_plane = np.einsum("ij,ij->i", normal, v0 - origins[hit]) / np.einsum(
        "ij,ij->i", normal, dirs[hit])
    np.testing.assert_allclose(hits.distance_m[hit], t_plane, rtol=0, atol=1e-9)
    # Normals turned against the ray; misses are inf / nan / -1 / 0.
    assert np.all(np.einsum("ij,ij->i", hits.normal_ned[hit], dirs[hit]) <= 0)
    assert np.all(np.isinf(hits.distance_m[~hit]))
    assert np.all(np.isnan(hits.point_ned[~hit])) and np.all(hits.label[~hit] == 0)


def test_one_origin_broadcast_gives_the_same_hits_as_repeated_origins_and_a_range_limit_cuts():
    vertices, faces = _mesh()
    engine = RayEngine.from_mesh(vertices, faces, labels=3, instances=5)
    rng = np.random.default_rng(3)
    dirs = rng.normal(size=(5_000, 3))
    o = np.array([0.5, -7.0, 0.2])
    one = engine.cast(o, dirs, 9.0)
    many = engine.cast(np.tile(o, (len(dirs), 1)), dirs, np.full(len(dirs), 9.0))
    for field in ("distance_m", "point_ned", "normal_ned", "triangle", "label", "instance"):
        assert np.array_equal(getattr(one, field), getattr(many, field), equal_nan=True), field
    assert np.all(one.distance_m[one.hit] <= 9.0) and (~one.hit).any()
    assert set(np.unique(one.label[one.hit])) == {3}
