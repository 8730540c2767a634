"""Ray casting speed on one core against a 1M-triangle seabed (docs/world.md#ray-engine).

``python benchmarks/raycast.py [--repeat 3] [--compare] [--triangles 1000000]``

The seabed: a 708 × 708 vertex grid at 0.28 m (199 m × 199 m, 999,698 triangles)
6,000 m deep with 0.6 m of relief (``terrain.py``). Rays, for batches of 10k, 100k
and 1M:

- ``image``: a camera's pixel rays in raster order (a square image, 70° across, one
  origin 10 m above the floor): what ``vision.camera`` casts;
- ``fan``: a swath fan in beam order from one origin 30 m above the floor, ±60° across
  and ±5° along track, rows of beams one after the other: what the multibeam, the
  imaging sonar and the side-scan cast;
- ``fan-shuffled``: the same fan's rays in random order (coherent in space, not in
  order);
- ``random``: origins spread over the area, random downward directions (incoherent:
  no sensor casts these; the worst case).

Rows:

- ``RayEngine.cast`` — what sensors call: Embree's first hit (16-ray packets), then the
  float64 range, point, normal, label and instance (``components/world/rays.py``,
  every field computed);
- ``embreex rtcIntersect1`` — embreex's own single-ray loop (``EmbreeScene.run``,
  float32 triangle index only): the floor of the engine before the packet loop;
- with ``--compare`` and Open3D installed (``pip install open3d-cpu``, not a
  dependency; it needs the system's libusb-1.0): Open3D's
  ``RaycastingScene.cast_rays(..., nthreads=1)`` (float32 t_hit, ids, normals), for the
  comparison that chose the engine.

One core: OMP/TBB thread counts are set to 1 before anything is imported (the casts
trace on the calling thread anyway; TBB would only parallelise the BVH build), and
the process is pinned to one CPU where the OS allows. Times are the thread's CPU time,
best of ``--repeat`` runs. Printed: rays/s per batch, and whether the target (>= 5 M
rays/s on one core for ``RayEngine.cast``, 1M-ray batches of the rays sensors cast:
``image`` and ``fan``) is met; the incoherent ``random`` rays are printed beside it
with embreex's floor. Speed is measured here, never asserted in the tests.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "TBB_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib.metadata as md  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

TARGET = 5.0e6


def seabed(triangles: int):
    from moonpool.components.world.terrain import HeightGrid

    side = int(round(np.sqrt(triangles / 2.0))) + 1
    r = 0.28
    x = r * np.arange(side) - 0.5 * r * (side - 1)
    N, E = np.meshgrid(x, x, indexing="ij")
    z = 6000.0 + 0.6 * np.sin(N / 7.0) * np.cos(E / 5.0) + 0.2 * np.sin(0.9 * N + 0.4 * E)
    return HeightGrid(z, float(x[0]), float(x[0]), r).vertices_faces()


def rays(kind: str, n: int, rng):
    if kind == "image":
        side = int(round(np.sqrt(n)))
        f = 0.5 * side / np.tan(np.radians(35.0))
        u = (np.arange(side) + 0.5 - 0.5 * side) / f
        x, y = np.meshgrid(u, u)  # rows of pixels, raster order
        dirs = np.column_stack([-y.ravel(), x.ravel(), np.ones(side * side)])
        origins = np.tile([0.0, 0.0, 5990.0], (side * side, 1))
    elif kind in ("fan", "fan-shuffled"):
        along = max(1, int(round(np.sqrt(n) / 4)))
        across = n // along
        a = np.linspace(-np.radians(60), np.radians(60), across)
        b = np.linspace(-np.radians(5), np.radians(5), along)
        B, A = np.meshgrid(b, a, indexing="ij")  # one row of beams after the other
        dirs = np.column_stack([np.sin(B.ravel()), np.sin(A.ravel()),
                                np.cos(A.ravel()) * np.cos(B.ravel())])
        if kind == "fan-shuffled":
            dirs = dirs[rng.permutation(len(dirs))]
        origins = np.tile([0.0, 0.0, 5970.0], (len(dirs), 1))
    else:
        origins = np.column_stack([rng.uniform(-80, 80, (n, 2)), rng.uniform(5950, 5990, n)])
        dirs = np.column_stack([rng.uniform(-1, 1, (n, 2)), np.ones(n)])
    return origins, dirs / np.linalg.norm(dirs, axis=1)[:, None]


def best_rate(fn, n: int, repeat: int) -> float:
    fn()  # warm
    best = np.inf
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return n / best


def installed_mb(dist: str) -> float:
    try:
        files = md.distribution(dist).files or []
    except md.PackageNotFoundError:
        return float("nan")
    total = 0
    for f in files:
        try:
            total += f.locate().stat().st_size
        except OSError:
            pass
    return total / 1e6


def import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(out.stdout.strip()) if out.returncode == 0 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--triangles", type=int, default=1_000_000)
    ap.add_argument("--compare", action="store_true", help="also time Open3D if installed")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        except OSError:
            pass

    from moonpool.components.world.rays import RayEngine

    vertices, faces = seabed(args.triangles)
    t0 = time.perf_counter()
    engine = RayEngine.from_mesh(vertices, faces, labels=1, instances=1)
    build = time.perf_counter() - t0
    part = engine.parts[0]
    print(f"seabed: {len(faces):,} triangles; RayEngine build {build:.2f} s")
    from embreex import mesh_construction, rtcore_scene

    floor = rtcore_scene.EmbreeScene(robust=True)
    mesh_construction.TriangleMesh(scene=floor, vertices=(vertices - part.origin).astype(np.float32),
                                   indices=faces.astype(np.int32))

    def cast_all(o, d):
        h = engine.cast(o, d)
        return h.point_ned, h.normal_ned, h.label, h.instance

    engines = {"RayEngine.cast": cast_all,
               "embreex rtcIntersect1": lambda o, d: floor.run(
                   (o - part.origin).astype(np.float32), d.astype(np.float32))}
    if args.compare:
        try:
            import open3d as o3d

            scene = o3d.t.geometry.RaycastingScene()
            scene.add_triangles(o3d.core.Tensor((vertices - part.origin).astype(np.float32)),
                                o3d.core.Tensor(faces.astype(np.uint32)))

            def cast_o3d(o, d):
                r = np.concatenate([o - part.origin, d], axis=1).astype(np.float32)
                return scene.cast_rays(o3d.core.Tensor(r), nthreads=1)

            engines["open3d cast_rays"] = cast_o3d
        except Exception as exc:  # not installed, or its system libraries missing
            print(f"open3d: not compared ({type(exc).__name__}: {exc})")

    rng = np.random.default_rng(0)
    rate = {}
    print(f"{'engine':<22} {'rays':<13} {'batch':>9} {'M rays/s':>9}")
    for kind in ("image", "fan", "fan-shuffled", "random"):
        for n in (10_000, 100_000, 1_000_000):
            o, d = rays(kind, n, rng)
            for name, fn in engines.items():
                rate[name, kind, n] = best_rate(lambda fn=fn: fn(o, d), len(o), args.repeat)
                print(f"{name:<22} {kind:<13} {len(o):>9,} {rate[name, kind, n] / 1e6:>9.2f}")
    print()
    for dist, module in (("embreex", "embreex.rtcore_scene"), ("trimesh", "trimesh"),
                         ("open3d-cpu", "open3d"), ("open3d", "open3d")):
        size = installed_mb(dist)
        if size == size:
            print(f"{dist}: {size:.0f} MB installed, import {import_seconds(module):.2f} s")
    n = 1_000_000
    met = min(rate["RayEngine.cast", k, n] for k in ("image", "fan"))
    verdict = "MET" if met >= TARGET else "NOT MET"
    print(f"\ntarget >= {TARGET / 1e6:.0f} M rays/s on one core (RayEngine.cast, 1M rays, the "
          f"rays sensors cast: image and fan, the slower): {met / 1e6:.2f} M rays/s -> {verdict}")
    print(f"incoherent random rays (no sensor casts these): RayEngine.cast "
          f"{rate['RayEngine.cast', 'random', n] / 1e6:.2f} M rays/s, embreex rtcIntersect1 "
          f"alone {rate['embreex rtcIntersect1', 'random', n] / 1e6:.2f} M rays/s (Embree's "
          "traversal of 1M triangles on this CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
