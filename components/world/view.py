"""A scene file as viewers draw it: the reader of ``moonpool.scene/1`` registered under
the ``moonpool.scenes`` entry-point group (``sdk/scene.py``; docs/live.md).

The scene is loaded as every sensor loads it (:meth:`Scene.load`) and cut into one
:class:`~moonpool.components.sdk.scene.ScenePart` per surface class (the colour is
the class's optical reflectance), all in NED:

- the seabed on a grid of at most ``MAX_GRID`` x ``MAX_GRID`` vertices (every k-th
  row and column of the scene's height grid): the viewer needs its shape, not the
  sensors' resolution (trench_floor's 401 x 401 grid becomes 201 x 201);
- every object and boulder with its own triangles, placed as the sensors see them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..sdk.scene import ScenePart
from .scene import Scene
from .terrain import HeightGrid

MAX_GRID = 256
"""Most seabed vertices per side in a viewer's mesh."""


def _coarse(grid: HeightGrid) -> HeightGrid:
    """Every k-th row and column of the grid, at most MAX_GRID of each (a last row or
    column beyond the regular spacing is left out: at most k - 1 cells)."""
    k = max(1, -(-max(grid.z.shape) // MAX_GRID))
    if k == 1:
        return grid
    return HeightGrid(grid.z[::k, ::k], grid.north0_m, grid.east0_m, grid.resolution_m * k)


def _mesh_of(scene: Scene, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices and faces of the triangles ``keep`` (a mask), reindexed."""
    faces = scene.faces[keep]
    used, inverse = np.unique(faces.ravel(), return_inverse=True)
    return scene.vertices[used], inverse.reshape(-1, 3)


def scene_parts(path: str | Path) -> list[ScenePart]:
    """The parts of the scene file at ``path`` (module docstring); ParameterError as
    :meth:`Scene.load` raises it."""
    scene = Scene.load(path)
    seabed = -1
    if scene.grid is not None:
        seabed = scene.instance_id("seabed")
    parts: list[ScenePart] = []
    for cid, cls in sorted(scene.classes.items()):
        color = (*(float(c) for c in cls.reflectance), 1.0)
        keep = (scene.labels == cid) & (scene.triangle_instances != seabed)
        if keep.any():
            parts.append(ScenePart(cls.name, *_mesh_of(scene, keep), color))
        if scene.grid is not None and cid == scene.class_id(scene.spec.seabed.class_name):
            v, f = _coarse(scene.grid).vertices_faces()
            parts.append(ScenePart("seabed", v, f, color))
    return parts
