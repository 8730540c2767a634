#!/usr/bin/env python3
"""Speed of the deep-sea camera: one frame with its truth images, on one core
(docs/benchmarks.md, "Deep-sea camera").

    OMP_NUM_THREADS=1 python benchmarks/deepsea_camera.py [--frames 5]

What vision.camera does per step, timed by part: the ray cast (RayEngine, every pixel),
the radiometry (two lamps, 8 backscatter samples on every 4th pixel, Jerlov IB), the
sensor (auto-exposure, noise, 8 bits) and the truth images' encoding (range, z-depth in
mm, normals, labels, instances). Camera 2 m above scenes/trench_floor (325,000
triangles). Target: 640 x 480 with truth <= 100 ms per frame (>= 10 Hz); 1280 x 720
measured. The parts and "CPU ms" are the process's CPU time (all its threads; on a
loaded machine the wall clock also counts the time waiting for a core); "wall" is the
frame's wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_clock = time.process_time
"""The parts are timed in the process's CPU time: on a loaded machine the wall clock also
counts the time spent waiting for a core."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=5)
    args = ap.parse_args(argv)
    from moonpool.components.vision.camera import DEFAULT_LIGHTS, lights_from_table
    from moonpool.components.vision.geometry import CameraModel, CameraMount, world_rays
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
            t1 = _clock()
            rays = world_rays(cam, frame.pose)
            L = radiance(frame, rays, r.water, place_lights(r.lights, p, np.eye(3)),
                         r.reflectance(frame.label), r.radiometry, r.engine)
            t2 = _clock()
            expose(L, cam.rays_cam, r.sensor, frame_rng(key, k))
            t3 = _clock()
            hit = frame.hit
            for x in (frame.range_m, frame.z_depth_m):
                np.where(hit, np.clip(np.round(x * 1000.0), 1, 65535), 0).astype("<u2")
            np.where(hit[..., None], np.clip(np.round(127.5 * (frame.normal_cam + 1)), 0, 255),
                     0).astype(np.uint8)
            frame.label.astype("<u2")
            frame.instance.astype("<u2")
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
