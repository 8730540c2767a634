"""Hull meshes of the hydrodynamics FMU's mesh backend (``backend = 2``), pre-processed
at build time into the C table ``fmus/hydrodynamics/meshes.h`` (docs/hydrodynamics.md,
"Mesh backend").

Call order: ``build_fmus.build`` → ``meshes_header()`` → for every entry of ``MESHES``
its triangles and lifting flags: the test shapes from their generators here, the
vehicles from their OBJ files in ``fmus/hydrodynamics/meshes/`` read and checked by
``moonpool.components.dynamics.hull.read_hull`` (trimesh; a file that is not closed or
is inside out stops the build with a message naming the file and the fix) → C text. A
mesh is a list of triangles (three vertices, body FRD metres, counter-clockwise seen
from outside so that (b − a) × (c − a) points out of the body) and a flag per triangle
that marks the lifting surfaces (fins, plates), which are separate closed parts. The
FMU scales every mesh by ``mesh_scale``. To add a hull: put its STL or OBJ file(s) in
``fmus/hydrodynamics/meshes/``, add an entry to ``MESHES`` and run
``moonpool fmu build``; a profile that uses it names the file(s) in its ``[mesh]``
table so that ``moonpool check`` checks them too.

Meshes shipped (index = the FMU parameter ``mesh``):

1. ``sphere``: unit sphere, UV-tessellated (48 latitude bands × 96 longitudes); the
   closed-form checks (drag, volume, centroid) use it.
2. ``box``: the unit cube centred on the origin (12 triangles).
3. ``cylinder``: radius 1, length 2 along body z, 96 sides (the Magnus check).
4. ``lander`` (``lander_hull.obj``, ``lander_fins.obj``): seed 000's lander (Fig. 7):
   a vertical cylinder (radius 0.5 m, height 1.2 m, 24 sides, capped) with four thin
   fins (0.4 × 0.6 m, 2 cm thick) on its side, each twisted 20° about its radial axis
   so that the flow of a sinking lander makes it turn (a body that spins as it sinks).
   The fins are lifting surfaces. Dimensions are illustrative (seed 000 gives none).
5. ``bluerov2_heavy`` (``bluerov2_heavy.obj``): the BlueROV2 Heavy as a box-like hull of
   its closed, buoyant parts inside the frame's 457 × 338 × 254 mm envelope (Blue
   Robotics' published length, width without the Heavy's side thrusters, and height):
   the two side panels of the frame (12.7 mm plates, 457 × 254 mm), the electronics
   tube (4-inch series enclosure, outer diameter 114.3 mm, 298 mm long), the battery
   tube below it (3-inch series, 88.9 mm, 250 mm) and the buoyancy foam on top between
   the panels (1 mm clear of them), whose height makes the enclosed volume von Benzon
   et al.'s (2022) displaced volume, 0.0134 m³ (NOTES.md). Tube lengths and the parts' placement are
   estimates.
6. ``remus100`` (``remus100_hull.obj``, ``remus100_fins.obj``): a REMUS-like torpedo:
   the Myring hull of Prestero's (2001) REMUS model (nose a = 0.191 m, mid-body
   b = 0.654 m, tail c = 0.541 m, n = 2, tail angle θ = 0.436 rad, diameter 0.191 m;
   1.386 m to the tail's tip, which Prestero truncates at 1.33 m; Fossen's remus100.py
   quotes 1.6 m and 0.19 m, NOTES.md), 24 sides, origin at the centroid of its volume;
   four fins (lifting) in a cross at the tail, each of Prestero's fin area
   6.65·10⁻³ m² (chord 77.6 mm × span 85.7 mm, 10 mm thick: the split of the area, the
   thickness and the place, mid-chord 0.12 m from the tail's tip, are estimates),
   1 mm clear of the hull.
7. ``plate``: a flat plate 1 × 1 m, 1 mm thick, in the body x-y plane, all of it
   lifting (the lift check: a thin plate at angle of attack α carries
   ½ ρ C_L A ‖u‖² sin 2α normal to the flow).

``python fmus/meshes.py`` rewrites the OBJ files from the generators below (their
sources are the figures above); the build reads the files, not the generators.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

MESH_DIR = Path(__file__).resolve().parent / "hydrodynamics" / "meshes"

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


def plate() -> list[Tri]:
    """A thin flat plate, 1 x 1 m in the body x-y plane and 1 mm thick (normals +-z),
    all of it lifting: the closed-form check of the lift (a flat plate at angle of
    attack a carries 1/2 rho C_L A |u|^2 sin 2a normal to the flow)."""
    return box((1.0, 1.0, 0.001))


def _fin(radial_deg: float, twist_deg: float) -> list[Tri]:
    """A thin plate box 0.4 (radial) × 0.02 (thick) × 0.6 (vertical) m at the lander's
    side, twisted about its radial axis."""
    plate = box((0.4, 0.02, 0.6))
    tw, az = math.radians(twist_deg), math.radians(radial_deg)
    Rt = np.array([[1, 0, 0], [0, math.cos(tw), -math.sin(tw)], [0, math.sin(tw), math.cos(tw)]])
    Rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    off = np.array([0.5 + 0.2, 0.0, 0.0])
    return [tuple(Rz @ (Rt @ v + off) for v in t) for t in plate]


def lander() -> tuple[list[Tri], list[Tri]]:
    """Cylinder hull (not lifting) and four twisted fins (lifting). The fins touch the
    hull without being merged into it: each part is closed on its own, which is all the
    volume, centroid and load sums need."""
    return cylinder(0.5, 1.2, 24), [t for k in range(4) for t in _fin(90.0 * k, 20.0)]


def _along_x(tris: list[Tri], centre) -> list[Tri]:
    """A mesh built along body z turned to lie along body x (z → x, x → −z), moved to
    ``centre``."""
    R = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    c = np.asarray(centre, float)
    return [tuple(R @ v + c for v in t) for t in tris]


def _volume(tris: list[Tri]) -> float:
    return sum(float(np.dot(a, np.cross(b, c))) for a, b, c in tris) / 6.0


BLUEROV2 = dict(length=0.457, width=0.338, height=0.254, panel=0.0127, volume=0.0134,
                tube_d=0.1143, tube_l=0.298, tube_z=-0.02,
                battery_d=0.0889, battery_l=0.25, sides=32)
"""BlueROV2 Heavy hull figures (module docstring), m and m³."""


def bluerov2_heavy() -> list[Tri]:
    """Side panels, electronics tube, battery tube, and the foam block whose height makes
    the enclosed volume BLUEROV2["volume"]."""
    b = BLUEROV2
    L, W, H, t = b["length"], b["width"], b["height"], b["panel"]
    parts: list[Tri] = []
    for side in (-1.0, 1.0):
        parts += box((L, t, H), (0.0, side * (W - t) / 2, 0.0))
    parts += _along_x(cylinder(b["tube_d"] / 2, b["tube_l"], b["sides"]), (0.0, 0.0, b["tube_z"]))
    bz = H / 2 - b["battery_d"] / 2
    parts += _along_x(cylinder(b["battery_d"] / 2, b["battery_l"], b["sides"]), (0.0, 0.0, bz))
    inner = W - 2 * t - 0.002  # 1 mm clear of each panel: the parts are closed separately
    h = (b["volume"] - _volume(parts)) / (L * inner)
    top = -H / 2
    if not (0 < h and top + h < b["tube_z"] - b["tube_d"] / 2):
        raise MeshError(f"BlueROV2 foam height {h:.4g} m does not fit above the tube")
    return parts + box((L, inner, h), (0.0, 0.0, top + h / 2))


REMUS = dict(nose=0.191, mid=0.654, tail=0.541, diameter=0.191, n=2.0, theta=0.436,
             sides=24, stations=(16, 6, 24), fin_chord=0.0776, fin_span=0.0857,
             fin_thick=0.01, fin_from_tip=0.12)
"""REMUS-like hull figures (module docstring), m and rad."""


def myring_radius(s: np.ndarray) -> np.ndarray:
    """Myring hull radius at distance s from the nose tip (REMUS)."""
    p = REMUS
    a, b, c, d, n, th = p["nose"], p["mid"], p["tail"], p["diameter"], p["n"], p["theta"]
    s = np.asarray(s, float)
    r = np.full_like(s, d / 2)
    nose = s < a
    r[nose] = d / 2 * np.maximum(0.0, 1 - ((s[nose] - a) / a) ** 2) ** (1 / n)
    tail = s > a + b
    x = s[tail] - a - b
    r[tail] = (d / 2 - (3 * d / (2 * c * c) - math.tan(th) / c) * x * x
               + (d / c**3 - math.tan(th) / (c * c)) * x**3)
    return np.maximum(r, 0.0)


def remus100() -> tuple[list[Tri], list[Tri]]:
    """Surface of revolution about body x, nose forward, the origin at the centroid of
    its volume (the centre of buoyancy, as remus100.toml's x_b = 0), and four fins."""
    p = REMUS
    a, c = p["nose"], p["tail"]
    L = a + p["mid"] + c
    n_nose, n_mid, n_tail = p["stations"]
    # stations from the nose tip: cosine-spaced on the nose (round tip), even elsewhere
    s = np.concatenate([a * (1 - np.cos(np.linspace(0, math.pi / 2, n_nose + 1))),
                        np.linspace(a, L - c, n_mid + 1)[1:],
                        np.linspace(L - c, L, n_tail + 1)[1:]])
    r = myring_radius(s)
    r[0] = r[-1] = 0.0
    # centroid of the solid of revolution (trapezoidal in s: the mesh's own is within
    # its resolution), so that the hull's CB is at x = 0
    area = math.pi * r * r
    s_c = np.trapezoid(area * s, s) / np.trapezoid(area, s)
    x = s_c - s
    k = p["sides"]

    def ring(i, j):
        ph = 2 * math.pi * (j % k) / k
        return np.array([x[i], r[i] * math.cos(ph), r[i] * math.sin(ph)])
    hull: list[Tri] = []
    for i in range(len(s) - 1):
        for j in range(k):
            a0, a1, b0, b1 = ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1)
            if i == 0:
                hull.append((a0, b0, b1))
            elif i == len(s) - 2:
                hull.append((a0, b0, a1))
            else:
                hull += [(a0, b0, b1), (a0, b1, a1)]
    fins: list[Tri] = []
    ch, sp, th = p["fin_chord"], p["fin_span"], p["fin_thick"]
    s_lo = L - p["fin_from_tip"] - ch / 2
    root = float(np.max(myring_radius(np.linspace(s_lo, s_lo + ch, 50))))
    fin_x = s_c - (s_lo + ch / 2)
    for k4 in range(4):
        az = math.pi / 2 * k4
        plate = box((ch, sp, th), (fin_x, root + 0.001 + sp / 2, 0.0))
        ca, sa = math.cos(az), math.sin(az)
        Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
        fins += [tuple(Rx @ v for v in t) for t in plate]
    return hull, fins


FILES = {  # the OBJ files the build reads, and the generator of each (python fmus/meshes.py)
    "lander_hull.obj": lambda: lander()[0],
    "lander_fins.obj": lambda: lander()[1],
    "bluerov2_heavy.obj": bluerov2_heavy,
    "remus100_hull.obj": lambda: remus100()[0],
    "remus100_fins.obj": lambda: remus100()[1],
}

MESHES = {  # index (FMU parameter mesh) -> (name, generator | [(file, lifting)])
    1: ("sphere", lambda: (sphere(), None)),
    2: ("box", lambda: (box(), None)),
    3: ("cylinder", lambda: (cylinder(), None)),
    4: ("lander", [("lander_hull.obj", False), ("lander_fins.obj", True)]),
    5: ("bluerov2_heavy", [("bluerov2_heavy.obj", False)]),
    6: ("remus100", [("remus100_hull.obj", False), ("remus100_fins.obj", True)]),
    7: ("plate", lambda: (plate(), [1] * 12)),
}


def triangles(index: int) -> tuple[np.ndarray, list[int]]:
    """Mesh ``index``'s triangles (n, 3, 3) and lifting flags: generated, or read from
    its files (``read_hull``: ParameterError naming a file that is not a usable hull)."""
    from moonpool.components.dynamics.hull import read_hull

    _name, src = MESHES[index]
    if callable(src):
        tris, lifting = src()
        return np.array([np.array(t) for t in tris]), list(lifting or [0] * len(tris))
    parts = [(read_hull(MESH_DIR / f), lift) for f, lift in src]
    return (np.concatenate([t for t, _ in parts]),
            [int(lift) for t, lift in parts for _ in range(len(t))])


def mesh_files() -> list[Path]:
    """Every file the build reads."""
    return [MESH_DIR / f for _n, src in MESHES.values() if not callable(src) for f, _ in src]


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
    for idx, (name, _src) in sorted(MESHES.items()):
        tris, lifting = triangles(idx)
        check_closed(name, list(tris))
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


def write_files() -> None:
    """Rewrite the OBJ files of FILES from their generators."""
    from moonpool.components.dynamics.hull import write_obj

    MESH_DIR.mkdir(parents=True, exist_ok=True)
    for name, gen in FILES.items():
        write_obj(MESH_DIR / name, np.array([np.array(t) for t in gen()]),
                  f"{name}: written by fmus/meshes.py (python fmus/meshes.py); its sources are "
                  f"in that file's docstring.\nBody FRD metres, counter-clockwise seen from "
                  f"outside.")
        print(MESH_DIR / name)


if __name__ == "__main__":
    write_files()
    sys.exit(0)
