#!/usr/bin/env python3
"""Starfish detector on rendered deep-sea images: detection rate and position error by
altitude (docs/deepsea-camera.md, "Detector").

    python benchmarks/deepsea_detector.py [--n 20] [--water jerlov_IB] [--width 640]

For each altitude h in 1..5 m, n frames of scenes/trench_floor with the camera (the
vision.camera defaults: 70° hfov, two 70° lamps) placed so the starfish lies within
the light cone (horizontal offset uniform in a disc of radius 0.35 h, random yaw);
altitude from a ray cast straight down from the camera (a perfect altimeter). The
position error is the horizontal distance of the estimate to the starfish's centroid;
a blob more than 0.2 m from it is counted as a wrong blob, not a detection.
Target: >= 95 % detected at h <= 3 m in clear water.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from moonpool.components.sdk.frames import quat_from_euler, rot_from_quat  # noqa: E402
from moonpool.components.vision.camera import DEFAULT_LIGHTS, lights_from_table  # noqa: E402
from moonpool.components.vision.detector import DetectorOptions, detect  # noqa: E402
from moonpool.components.vision.geometry import CameraModel, CameraMount  # noqa: E402
from moonpool.components.vision.render import DeepSeaRenderer  # noqa: E402
from moonpool.components.vision.sensor import SensorOptions, frame_rng  # noqa: E402
from moonpool.components.vision.water import water_type  # noqa: E402
from moonpool.components.world.scene import Scene  # noqa: E402


def starfish_centroid(scene: Scene) -> np.ndarray:
    inst = scene.instance_id("starfish")
    f = scene.faces[scene.triangle_instances == inst]
    return scene.vertices[np.unique(f)].mean(axis=0)


def run(n: int, water: str, width: int, altitudes, seed: int = 1):
    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    cam = CameraModel.from_fov(width, width * 3 // 4, 70.0)
    mount = CameraMount((0.5, 0.0, 0.2))
    r = DeepSeaRenderer(scene, cam, mount, water_type(water), lights_from_table(DEFAULT_LIGHTS),
                        sensor=SensorOptions(auto_exposure=True))
    target = starfish_centroid(scene)
    rng = np.random.default_rng(seed)
    key = np.array([seed, 17], np.uint64)
    rows = []
    k = 0
    for h in altitudes:
        found, false, errs = 0, 0, []
        for i in range(n):
            rad = 0.35 * h * np.sqrt(rng.uniform())
            ang = rng.uniform(0, 2 * np.pi)
            yaw = rng.uniform(-np.pi, np.pi)
            q = quat_from_euler(0.0, 0.0, yaw)
            R_wb = rot_from_quat(q)
            cam_xy = target[:2] + rad * np.array([np.cos(ang), np.sin(ang)])
            floor = float(scene.seabed_depth(*cam_xy))
            C = np.array([cam_xy[0], cam_xy[1], floor - h])
            p = C - R_wb @ np.asarray(mount.xyz_m)
            out = r.render(p, q, frame_rng(key, k))
            k += 1
            down = scene.engine().cast(C, np.array([0.0, 0.0, 1.0]), 100.0)
            alt = float(down.distance_m[0])
            blob, why = detect(out.image, 255.0, DetectorOptions(), alt, cam.K[0])
            if blob is None:
                continue
            d = out.frame.pose.R_wc @ cam.rays_at(np.array([blob.center_px]))[0]
            X = C + alt / d[2] * d
            err = float(np.hypot(*(X[:2] - target[:2])))
            if err > 0.2:  # farther than the starfish's size: something else
                false += 1
                continue
            found += 1
            errs.append(err)
        e = np.array(errs) if errs else np.array([np.nan])
        rows.append((h, found, false, n, float(np.mean(e)), float(np.percentile(e, 95)) if errs else np.nan))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--water", default="jerlov_IB")
    ap.add_argument("--width", type=int, default=640)
    args = ap.parse_args(argv)
    rows = run(args.n, args.water, args.width, (1.0, 2.0, 3.0, 4.0, 5.0))
    print(f"water {args.water}, {args.width} px wide, {args.n} frames per altitude")
    print("| altitude m | detected | rate | wrong blob | mean error m | p95 error m |")
    print("| --- | --- | --- | --- | --- | --- |")
    for h, f, fa, n, me, p95 in rows:
        print(f"| {h:g} | {f}/{n} | {100 * f / n:.0f} % | {fa} | {me:.3f} | {p95:.3f} |")
    low = [f / n for h, f, fa, n, _, _ in rows if h <= 3]
    ok = min(low) >= 0.95
    print(f">= 95 % detected at <= 3 m: {'met' if ok else 'not met'} (lowest {100 * min(low):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
