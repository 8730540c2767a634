#!/usr/bin/env python3
"""Speed of the deep-sea camera: one frame with its truth images, on one core
(docs/benchmarks.md, "Deep-sea camera").

    python benchmarks/deepsea_camera.py [--frames 5]

What vision.camera does per step, timed by part: the ray cast (RayEngine, every pixel,
with the hits' points, normals and labels), the radiometry (two lamps, 8 backscatter
samples on every 4th pixel, Jerlov IB), the sensor (auto-exposure, noise, 8 bits) and
the truth images' encoding (``camera.truth_images``: range, z-depth in mm, normals,
labels, instances). Camera 2 m above scenes/trench_floor (325,000 triangles). Target:
640 x 480 with truth <= 100 ms per frame on one core (>= 10 Hz); 1280 x 720 measured.

One core: the thread counts of OpenMP/OpenBLAS/TBB are set to 1 before NumPy loads and
the process is pinned to one CPU where the OS allows; the parts are the thread's CPU
time (what the frame costs one core: on a shared machine the wall clock also counts
the time spent waiting for it), median over the frames; "wall" is the frame's
wall-clock time.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TBB_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_clock = time.thread_time
"""The parts are timed in the thread's CPU time (module docstring)."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=5)
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
        except OSError:
            pass
    from moonpool.components.vision.camera import DEFAULT_LIGHTS, lights_from_table, truth_images
    from moonpool.components.vision.geometry import CameraModel, CameraMount
    from moonpool.components.vision.radiometry import RadiometryOptions, place_lights, radiance
    from moonpool.components.vision.render import DeepSeaRenderer
    from moonpool.components.vision.sensor import SensorOptions, expose, frame_rng
    from moonpool.components.vision.water import water_type
    from moonpool.components.world.scene import Scene

    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    results = {}
    for w, h in ((640, 480), (1280, 720)):
        cam = CameraModel.from_fov(w, h, 70.0)
        r = DeepSeaRenderer(scene, cam, CameraMount((0.5, 0.0, 0.2)), water_type("jerlov_IB"),
                            lights_from_table(DEFAULT_LIGHTS), RadiometryOptions(),
                            SensorOptions(auto_exposure=True))
        p = (5.5, 3.0, float(scene.seabed_depth(6.0, 3.0)) - 2.2)
        q = (1.0, 0.0, 0.0, 0.0)
        key = np.array([1, 2], np.uint64)
        parts = {"cast": [], "radiometry": [], "sensor": [], "truth": [], "total": [], "cpu": []}
        for k in range(args.frames + 1):
            w0 = time.perf_counter()
            t0 = _clock()
            frame = r.geometry(p, q)
            frame.point_ned, frame.normal_ned, frame.label, frame.instance  # noqa: B018
            t1 = _clock()
            L = radiance(frame, frame.rays_ned, r.water, place_lights(r.lights, p, np.eye(3)),
                         r.reflectance(frame.label), r.radiometry, r.engine)
            t2 = _clock()
            expose(L, cam.rays_cam, r.sensor, frame_rng(key, k))
            t3 = _clock()
            truth_images(frame)
            t4 = _clock()
            w4 = time.perf_counter()
            if k == 0:
                continue  # warm-up
            for name, v in (("cast", t1 - t0), ("radiometry", t2 - t1), ("sensor", t3 - t2),
                            ("truth", t4 - t3), ("total", w4 - w0), ("cpu", t4 - t0)):
                parts[name].append(1e3 * v)
        results[(w, h)] = {k: float(np.median(v)) for k, v in parts.items()}
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| resolution | cast ms | radiometry ms | sensor ms | truth ms | CPU ms | wall ms | "
          "rate Hz (CPU) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (w, h), m in results.items():
        print(f"| {w} x {h} | {m['cast']:.0f} | {m['radiometry']:.0f} | {m['sensor']:.0f} | "
              f"{m['truth']:.0f} | {m['cpu']:.0f} | {m['total']:.0f} | {1e3 / m['cpu']:.1f} |")
    t = results[(640, 480)]["cpu"]
    print(f"640 x 480 with truth <= 100 ms of one core: {'met' if t <= 100 else 'not met'} "
          f"({t:.0f} ms CPU, {t / 100:.2f} x the budget)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
