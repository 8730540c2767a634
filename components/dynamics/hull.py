"""Hull meshes for the hydrodynamics FMU's mesh backend (``backend = 2``): read an STL or
OBJ file with trimesh and check that it can be a hull (docs/hydrodynamics.md, "Mesh
backend"). Used at FMU build time (fmus/meshes.py → meshes.h) and by ``moonpool check``
(a profile's ``[mesh]`` table, through the FMU component).

Call order: ``read_hull(path)`` → triangles (n, 3, 3), body FRD metres, in the file's
order, each counter-clockwise seen from outside; it raises ``ParameterError`` naming the
file and the fix when the file cannot be read, has no triangle, is not closed (an edge
not shared by exactly two triangles), is not consistently oriented, or is inside out
(negative enclosed volume: the normals point inwards). ``hull_problem(path)`` returns
that message ('' for a good hull) instead of raising.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..sdk.errors import ParameterError

FIX_OPEN = ("close the mesh: every edge must be shared by exactly two triangles (fill its "
            "holes, e.g. trimesh.repair.fill_holes or Blender's Mesh > Clean Up > Fill Holes; "
            "give thin parts such as fins a thickness)")
FIX_INSIDE_OUT = ("flip the mesh's normals so that they point out of the body (trimesh: "
                  "mesh.invert(); Blender: Mesh > Normals > Recalculate Outside)")


def read_hull(path: Path | str) -> np.ndarray:
    """The file's triangles, (n, 3, 3) float64 in the file's order (not merged or
    reordered, so a mesh written by moonpool reads back bit for bit); ParameterError
    naming the file and the fix when it is not a usable hull."""
    import trimesh

    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"hull mesh {path}: no such file",
                             fix="give the path of an STL or OBJ file")
    try:
        raw = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh raises many kinds for a bad file
        raise ParameterError(f"hull mesh {path}: trimesh cannot read it ({exc})",
                             fix="give an STL or OBJ file of triangles") from exc
    if not isinstance(raw, trimesh.Trimesh) or len(raw.faces) == 0:
        raise ParameterError(f"hull mesh {path}: no triangle in the file",
                             fix="give an STL or OBJ file of triangles")
    tris = np.asarray(raw.vertices, dtype=float)[np.asarray(raw.faces)]
    # Closedness and orientation on the welded mesh (an STL repeats its vertices).
    welded = trimesh.Trimesh(raw.vertices, raw.faces, process=True, validate=False)
    edges = np.sort(welded.edges, axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    bad = int(np.sum(counts != 2))
    if bad:
        raise ParameterError(
            f"hull mesh {path} is not closed: {bad} edge(s) are not shared by exactly two "
            f"triangles (the mesh backend sums loads and buoyancy over a closed surface)",
            fix=FIX_OPEN)
    if not welded.is_winding_consistent:
        raise ParameterError(
            f"hull mesh {path}: its triangles are not consistently oriented (some "
            f"neighbours traverse their shared edge in the same direction)",
            fix="orient every triangle counter-clockwise seen from outside (trimesh: "
                "trimesh.repair.fix_winding; Blender: Recalculate Outside)")
    volume = float(np.sum(np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])))) / 6
    if not volume > 0:
        raise ParameterError(
            f"hull mesh {path} is inside out: its enclosed volume is {volume:.6g} m^3 "
            f"(the normals point into the body)", fix=FIX_INSIDE_OUT)
    return tris


def hull_problem(path: Path | str) -> str:
    """'' if ``read_hull`` accepts the file, else its message and fix."""
    try:
        read_hull(path)
    except ParameterError as exc:
        return f"{exc.message}; fix: {exc.fix}" if exc.fix else exc.message
    return ""


def write_obj(path: Path | str, tris: np.ndarray, header: str) -> None:
    """Triangles as a Wavefront OBJ (shared vertices by exact value, 17 significant
    digits so that ``read_hull`` returns the same numbers), with ``header`` as comments."""
    tris = np.asarray(tris, dtype=float)
    index: dict[tuple[float, ...], int] = {}
    faces = []
    for t in tris:
        face = []
        for v in t:
            key = tuple(float(x) for x in v)
            face.append(index.setdefault(key, len(index) + 1))
        faces.append(face)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in index]
    lines += [f"f {a} {b} {c}" for a, b, c in faces]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
