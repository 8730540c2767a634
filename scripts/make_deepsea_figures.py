#!/usr/bin/env python3
"""Writes the figures of docs/deepsea-camera.md: scenes/trench_floor seen by the
vision.camera defaults (640 x 480, 70° hfov, two lamps, auto-exposure) at 2, 5 and 10 m
altitude above the starfish, in clear (Jerlov IB) and turbid (coastal 3) water, beside
the truth images (z-depth, labels, normals); each tile shrunk to 240 x 180 (area).

    python scripts/make_deepsea_figures.py
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from moonpool.components.vision.camera import DEFAULT_LIGHTS, lights_from_table
from moonpool.components.vision.geometry import CameraModel, CameraMount
from moonpool.components.vision.render import DeepSeaRenderer, MarineSnow
from moonpool.components.vision.sensor import SensorOptions, frame_rng
from moonpool.components.vision.water import water_type
from moonpool.components.world.scene import Scene

ROOT = Path(__file__).resolve().parents[1]
LABEL_COLOURS = np.array([[0, 0, 0], [150, 130, 100], [90, 90, 95], [255, 80, 40], [255, 220, 0]],
                         np.uint8)


def tile(img: np.ndarray) -> np.ndarray:
    return cv2.resize(img, (240, 180), interpolation=cv2.INTER_AREA)


def main() -> None:
    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    cam = CameraModel.from_fov(640, 480, 70.0, (-0.05, 0.01, 0.0, 0.0, 0.0))
    mount = CameraMount((0.5, 0.0, 0.2))
    lights = lights_from_table(DEFAULT_LIGHTS)
    out_dir = ROOT / "docs/img"
    key = np.array([7, 7], np.uint64)
    for h in (2.0, 5.0, 10.0):
        tiles = []
        for water in ("jerlov_IB", "coastal_3"):
            r = DeepSeaRenderer(scene, cam, mount, water_type(water), lights,
                                sensor=SensorOptions(auto_exposure=True),
                                snow=MarineSnow(count=150))
            C = np.array([6.3, 3.2, float(scene.seabed_depth(6.3, 3.2)) - h])
            res = r.render(C - np.asarray(mount.xyz_m), (1.0, 0.0, 0.0, 0.0),
                           frame_rng(key, int(h)), frame_rng(key, 100 + int(h)))
            tiles.append(tile(res.image[..., ::-1]))
        f = res.frame
        z = np.where(f.hit, f.z_depth_m, np.nan)
        lo, hi = np.nanmin(z), np.nanmax(z)
        zn = np.nan_to_num((z - lo) / max(hi - lo, 1e-6), nan=1.0)
        depth = cv2.applyColorMap((255 * (1 - zn)).astype(np.uint8), cv2.COLORMAP_VIRIDIS)
        labels = LABEL_COLOURS[np.clip(f.label, 0, 4)][..., ::-1]
        nc = f.normal_cam
        normals = np.where(f.hit[..., None], np.clip(127.5 * (nc + 1), 0, 255), 0).astype(np.uint8)
        tiles += [tile(depth), tile(labels), tile(normals[..., ::-1])]
        row = np.concatenate(tiles, axis=1)
        path = out_dir / f"deepsea_{int(h)}m.png"
        cv2.imwrite(str(path), row, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
