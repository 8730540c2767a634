"""Render + detect + measure at 1280x720 on one core.

    .venv/bin/python benchmarks/localization.py [--frames 300] [--cpu 0]

The vehicle drives a slow circle (0.3 m/s, turning) through the pool at 0.4-1.2 m
depth under the simulated overhead camera (the built-in setup: 1280x720, 4 px
supersampling, shot + read noise, 0.5 px blur). Each frame is rendered, the tags are
detected and the refraction-aware measurement is made, all in this process pinned to
one CPU (OpenCV single-threaded). Three detection modes:

- **track**: what the Localizer component does: search around the last detections
  (regions of interest, full resolution), the whole frame only when a tag is lost;
- **full q=2**: the whole frame every time, quad_decimate 2 (the dataset evaluator);
- **full q=3**: the whole frame every time, quad_decimate 3.

Prints per-stage mean / p95 ms, the sustained rate (frames / total wall time), the
rate in CPU time of this process (robust to other load on the machine) and the
horizontal error of the measurements (true depth and tilt; no calibration error). Acceptance: >= 30 Hz. Results go into
docs/localization.md by hand, with the machine and the date.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time

import cv2
import numpy as np
from moonpool.components.localization.detect import DetectorOptions, TagDetector, roi_around
from moonpool.components.localization.measure import RefractionMeasurer
from moonpool.components.localization.pool_setup import example_setup
from moonpool.components.localization.render import Pose, Renderer, RenderOptions


def trajectory(k: int, rate_hz: float = 30.0) -> Pose:
    t = k / rate_hz
    w = 0.3 / 1.2  # 0.3 m/s on a 1.2 m radius circle
    return Pose(1.2 * math.cos(w * t), 0.9 * math.sin(w * t), 0.8 + 0.4 * math.sin(0.3 * t),
                0.03 * math.sin(1.1 * t), 0.03 * math.cos(0.9 * t), w * t + math.pi / 2)


def run(mode: str, frames: int) -> dict:
    setup = example_setup()
    renderer = Renderer(setup, RenderOptions(read_noise_dn=1.5, shot_noise_dn=0.05,
                                             blur_sigma_px=0.5))
    q = {"track": 2.0, "full q=2": 2.0, "full q=3": 3.0}[mode]
    det = TagDetector(DetectorOptions(quad_decimate=q))
    meas = RefractionMeasurer(setup)
    rng = np.random.default_rng(0)
    t_render, t_detect, t_measure, errors = [], [], [], []
    last = []
    renderer.render(trajectory(0), rng)  # warm up
    start = time.perf_counter()
    cpu0 = time.process_time()
    for k in range(frames):
        pose = trajectory(k)
        t0 = time.perf_counter()
        img = renderer.render(pose, rng)
        t1 = time.perf_counter()
        res = None
        if mode == "track" and last:
            res = det.detect(img, roi_around(last, img.shape))
            if len(res.detections) < len(last):
                res = None
        if res is None:
            res = det.detect(img)
        last = res.detections
        t2 = time.perf_counter()
        m = meas.measure(res.detections, pose.z, pose.roll, pose.pitch)
        t3 = time.perf_counter()
        t_render.append(t1 - t0)
        t_detect.append(t2 - t1)
        t_measure.append(t3 - t2)
        if m.valid:
            errors.append(math.hypot(m.x - pose.x, m.y - pose.y))
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    e = np.array(errors)
    return {"mode": mode, "rate_hz": frames / wall, "cpu_rate_hz": frames / cpu,
            "render": np.array(t_render) * 1e3, "detect": np.array(t_detect) * 1e3,
            "measure": np.array(t_measure) * 1e3, "valid": len(errors), "frames": frames,
            "rmse_mm": float(np.sqrt(np.mean(e * e)) * 1e3) if e.size else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: do not pin)")
    args = ap.parse_args()
    if args.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    cv2.setNumThreads(1)
    print(f"# localization benchmark: {platform.machine()}, {os.cpu_count()} CPUs, pinned to "
          f"{'cpu ' + str(args.cpu) if args.cpu >= 0 else 'none'}; Python "
          f"{platform.python_version()}, numpy {np.__version__}, OpenCV {cv2.__version__}; "
          f"{args.frames} frames at 1280x720")
    print(f"{'mode':10s} {'render ms':>16s} {'detect ms':>16s} {'measure ms':>16s} "
          f"{'rate Hz':>8s} {'CPU Hz':>7s} {'valid':>9s} {'RMSE mm':>8s}")
    for mode in ("track", "full q=2", "full q=3"):
        r = run(mode, args.frames)

        def f(a):
            return f"{a.mean():6.2f} / {np.percentile(a, 95):6.2f}"

        print(f"{mode:10s} {f(r['render']):>16s} {f(r['detect']):>16s} {f(r['measure']):>16s} "
              f"{r['rate_hz']:8.1f} {r['cpu_rate_hz']:7.1f} {r['valid']:4d}/{r['frames']:<4d} "
              f"{r['rmse_mm']:8.2f}")
    print("(mean / p95 wall ms per frame; rate = frames / wall time of the whole loop; CPU Hz = "
          "frames / CPU time of this process, which other load on the core does not inflate)")


if __name__ == "__main__":
    main()
