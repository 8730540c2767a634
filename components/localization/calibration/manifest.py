"""The water calibration's manifest: one line per image, its depth and what is known."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...sdk.errors import ParameterError
from ...sdk.frames import rot_from_euler
from ..pool_setup import PoolSetup
from .common import listing

MANIFEST_FILE = "manifest.jsonl"


@dataclass
class WaterSample:
    """One manifest line of ``calibrate water``."""

    line: int
    image: str
    depth_m: float | None
    """Depth of the body origin below the water surface, m (relative to water_z)."""
    z_m: float | None
    """World z of the body origin from a survey, m (absolute; frees water_z)."""
    roll_rad: float = 0.0
    pitch_rad: float = 0.0
    x_m: float | None = None
    y_m: float | None = None
    yaw_rad: float | None = None

    @property
    def known_xy(self) -> bool:
        return self.x_m is not None and self.y_m is not None


def read_water_manifest(folder: Path, layout: PoolSetup) -> list[WaterSample]:
    """Parse FOLDER/manifest.jsonl strictly (a calibration's few lines must all be right):
    one ParameterError listing every bad line."""
    path = folder / MANIFEST_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}",
                             fix="the folder must hold manifest.jsonl and the images "
                                 "(docs/localization.md, Calibration)") from None
    centroid = np.mean([t.center_b for t in layout.tags], axis=0)
    out, problems = [], []
    seen: set[str] = set()
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"{MANIFEST_FILE}:{i}"
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        image = rec.get("image")
        if not isinstance(image, str) or not image:
            problems.append(f"{where}: 'image' must be a file name")
            continue

        def num(key: str, default: Any = None, rec: dict = rec) -> Any:
            v = rec.get(key)
            if v is None:
                return default
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"'{key}' must be a finite number, got {v!r}")
            return float(v)

        try:
            depth, tag_depth, z = num("depth_m"), num("tag_depth_m"), num("z_m")
            roll, pitch = num("roll_rad", 0.0), num("pitch_rad", 0.0)
            x, y, yaw = num("x_m"), num("y_m"), num("yaw_rad")
            truth = rec.get("truth")
            if isinstance(truth, dict):  # a dataset's truth is a known position
                if x is None and y is None:
                    x, y = num("x_m", rec=truth), num("y_m", rec=truth)
                if yaw is None:
                    yaw = num("yaw_rad", rec=truth)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        given = [k for k, v in (("depth_m", depth), ("tag_depth_m", tag_depth), ("z_m", z))
                 if v is not None]
        if len(given) != 1:
            problems.append(f"{where}: give exactly one of depth_m (body origin below the "
                            "surface), tag_depth_m (tag plane below the surface) or z_m "
                            f"(surveyed world z of the body origin); got {given or 'none'}")
            continue
        if (x is None) != (y is None):
            problems.append(f"{where}: give both x_m and y_m (known position) or neither")
            continue
        if image in seen:
            problems.append(f"{where}: image {image} listed twice")
            continue
        seen.add(image)
        if tag_depth is not None:
            Rt = rot_from_euler(roll, pitch, 0.0)
            depth = tag_depth - float((Rt @ centroid)[2])
        out.append(WaterSample(i, image, depth, z, roll, pitch, x, y, yaw))
    if problems:
        raise ParameterError(listing(f"{path}: {len(problems)} bad line(s)", problems),
                             fix='one JSON object per line: {"image": "a.png", "depth_m": 0.8} '
                                 "(docs/localization.md, Calibration)")
    if not out:
        raise ParameterError(f"{path}: no image listed",
                             fix="one line per image of tags at a known depth")
    return out
