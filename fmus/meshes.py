"""Hull meshes of the hydrodynamics FMU's mesh backend (``backend = 2``), pre-processed
at build time into the C table ``fmus/hydrodynamics/meshes.h`` (docs/hydrodynamics.md,
"Mesh backend").

Call order: ``build_fmus.build`` → ``meshes_header()`` → for every entry of ``MESHES``
its generator (triangles, lifting flags) → ``check_closed`` → C text. A mesh is a list
of triangles (three vertices, body FRD metres, counter-clockwise seen from outside so
that (b − a) × (c − a) points out of the body) and a flag per triangle that marks the
lifting surfaces (fins, plates). The FMU scales every mesh by ``mesh_scale``.

Meshes shipped (index = the FMU parameter ``mesh``):

1. ``sphere``: unit sphere, UV-tessellated (48 latitude bands × 96 longitudes); the
   closed-form checks (drag, volume, centroid) use it.
2. ``box``: the unit cube centred on the origin (12 triangles).
3. ``cylinder``: radius 1, length 2 along body z, 96 sides (the Magnus check).
4. ``lander``: seed 000's lander (Fig. 7): a vertical cylinder (radius 0.5 m, height
   1.2 m, 24 sides, capped) with four thin fins (0.4 × 0.6 m, 2 cm thick) on its
   side, each twisted 20° about its radial axis so that the flow of a sinking lander
   makes it turn (a body that spins as it sinks). The fins are lifting surfaces.
   Dimensions are illustrative (seed 000 gives none).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

Tri = tuple[np.ndarray, np.ndarray, np.ndarray]


class MeshError(ValueError):
    """A mesh that cannot be used: not closed, or inside out."""


def _quad(a, b, c, d) -> list[Tri]:
    """Two triangles of the quad a b c d (counter-clockwise from outside)."""
    return [(a, b, c), (a, c, d)]


def sphere(n_lat: int = 48, n_lon: int = 96) -> list[Tri]:
    """Unit sphere: latitude bands of quads, triangles at the poles."""
    def p(i, j):
        th, ph = math.pi * i / n_lat, 2 * math.pi * (j % n_lon) / n_lon
        return np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
    tris: list[Tri] = []
    for i in range(n_lat):
        for j in range(n_lon):
            a, b, c, d = p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1)
            if i == 0:
                tris.append((a, b, c))
            elif i == n_lat - 1:
                tris.append((a, b, d))
            else:
                tris += _quad(a, b, c, d)
    return tris


def box(size=(1.0, 1.0, 1.0), centre=(0.0, 0.0, 0.0)) -> list[Tri]:
    """Axis-aligned box (12 triangles)."""
    h, c = np.asarray(size, float) / 2, np.asarray(centre, float)
    v = [c + h * np.array([sx, sy, sz]) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    # vertex index = 4 (x>0) + 2 (y>0) + (z>0); faces counter-clockwise from outside
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return [t for f in faces for t in _quad(*(v[i] for i in f))]


def cylinder(radius: float = 1.0, length: float = 2.0, sides: int = 96,
             centre=(0.0, 0.0, 0.0)) -> list[Tri]:
    """Capped cylinder along body z."""
    c = np.asarray(centre, float)
    top, bot = c + [0, 0, -length / 2], c + [0, 0, length / 2]

    def ring(z, j):
        ph = 2 * math.pi * (j % sides) / sides
        return c + np.array([radius * math.cos(ph), radius * math.sin(ph), z])
    tris: list[Tri] = []
    for j in range(sides):
        a, b = ring(-length / 2, j), ring(-length / 2, j + 1)
        d, e = ring(length / 2, j), ring(length / 2, j + 1)
        tris += _quad(a, b, e, d)
        tris.append((top, b, a))
        tris.append((bot, d, e))
    return tris


def _fin(radial_deg: float, twist_deg: float) -> list[Tri]:
    """A thin plate box 0.4 (radial) × 0.02 (thick) × 0.6 (vertical) m at the lander's
    side, twisted about its radial axis."""
    plate = box((0.4, 0.02, 0.6))
    tw, az = math.radians(twist_deg), math.radians(radial_deg)
    Rt = np.array([[1, 0, 0], [0, math.cos(tw), -math.sin(tw)], [0, math.sin(tw), math.cos(tw)]])
    Rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    off = np.array([0.5 + 0.2, 0.0, 0.0])
    return [tuple(Rz @ (Rt @ v + off) for v in t) for t in plate]


def lander() -> tuple[list[Tri], list[int]]:
    """Cylinder hull (not lifting) + four twisted fins (lifting). The fins touch the hull
    without being merged into it: each part is closed on its own, which is all the
    volume, centroid and load sums need."""
    hull = cylinder(0.5, 1.2, 24)
    fins = [t for k in range(4) for t in _fin(90.0 * k, 20.0)]
    return hull + fins, [0] * len(hull) + [1] * len(fins)


MESHES = {  # index (FMU parameter mesh) -> (name, generator)
    1: ("sphere", lambda: (sphere(), None)),
    2: ("box", lambda: (box(), None)),
    3: ("cylinder", lambda: (cylinder(), None)),
    4: ("lander", lander),
}


def check_closed(name: str, tris: list[Tri]) -> None:
    """Raise MeshError unless every edge is shared by exactly two triangles traversing it
    in opposite directions (closed, consistently oriented) and the signed volume is
    positive (normals point outwards)."""
    def key(p):
        return tuple(np.round(p, 9))
    directed = Counter()
    for a, b, c in tris:
        for u, v in ((a, b), (b, c), (c, a)):
            directed[(key(u), key(v))] += 1
    for (u, v), n in directed.items():
        if n != 1 or directed.get((v, u), 0) != 1:
            raise MeshError(
                f"mesh {name!r}: the edge {u} -> {v} is used {n} time(s) in this direction and "
                f"{directed.get((v, u), 0)} in the other; a hull mesh must be closed with every "
                f"edge shared by two triangles of opposite orientation (fix the mesh: close its "
                f"holes, orient every triangle counter-clockwise seen from outside)")
    vol = sum(float(np.dot(a, np.cross(b, c))) for a, b, c in tris) / 6.0
    if not vol > 0:
        raise MeshError(f"mesh {name!r} is inside out (signed volume {vol:.6g} m^3 <= 0): its "
                        f"normals point inwards; reverse the vertex order of every triangle")


def meshes_header() -> str:
    """The C table: per mesh its triangles (9 doubles) and lifting flags."""
    lines = ["/* GENERATED by fmus/build_fmus.py from fmus/meshes.py. Do not edit. */",
             "#ifndef MOONPOOL_HYDRO_MESHES_H", "#define MOONPOOL_HYDRO_MESHES_H", "",
             "typedef struct { double v[9]; int lifting; } HydroTriangle;",
             "typedef struct { const char *name; int n; const HydroTriangle *t; } HydroMesh;", ""]
    entries = []
    for idx, (name, gen) in sorted(MESHES.items()):
        tris, lifting = gen()
        check_closed(name, tris)
        lifting = lifting or [0] * len(tris)
        lines.append(f"static const HydroTriangle hydro_mesh_{name}[{len(tris)}] = {{")
        for t, lf in zip(tris, lifting):
            vals = ", ".join(f"{x:.17g}" for v in t for x in v)
            lines.append(f"    {{{{{vals}}}, {lf}}},")
        lines.append("};")
        entries.append(f'    {{"{name}", {len(tris)}, hydro_mesh_{name}}}, /* mesh = {idx} */')
    lines += ["", f"#define HYDRO_N_MESHES {len(MESHES)}",
              "static const HydroMesh hydro_meshes[HYDRO_N_MESHES + 1] = {",
              '    {"none", 0, 0}, /* mesh = 0 */', *entries, "};", "", "#endif", ""]
    return "\n".join(lines)
