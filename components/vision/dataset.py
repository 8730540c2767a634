"""``moonpool dataset deepsea``: a labelled deep-sea image dataset rendered from a scene
and a trajectory (docs/deepsea-camera.md, "Datasets").

Call order::

    cfg = DeepseaDatasetConfig(...)                 # checks
    poses = read_trajectory(csv) or line_trajectory(scene, ...)
    info = generate_deepsea_dataset(out, cfg, poses)

Layout of OUT/::

    camera_info.json      K, distortion, size, mount, water, lights, sensor, seed
    classes.json          class id -> name, reflectance; instance id -> [class id, object]
    poses.jsonl           one line per frame: index, t_s, vehicle position/quaternion
                          (NED, body -> NED), camera centre and camera -> NED quaternion
    images/NNNNNN.png     the camera image (RGB; 16-bit PNG for 12/16 bits)
    truth/NNNNNN.npz      range_m, z_depth_m (float32, inf: no hit), normals_cam
                          (float32 H x W x 3, nan: no hit), labels, instances (uint16)

Frame k's noise is keyed by (seed, "dataset", "image") at k, as the component's.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import cv2
import numpy as np

from ..sdk.errors import ParameterError
from ..sdk.frames import quat_from_euler, quat_from_rot
from ..sdk.noise import channel_key
from .camera import DEFAULT_LIGHTS, DeepSeaCamera, lights_from_table
from .render import DeepSeaRenderer, MarineSnow
from .sensor import frame_rng

TRAJECTORY_COLUMNS = ("t_s", "north_m", "east_m", "down_m", "roll_deg", "pitch_deg", "yaw_deg")


@dataclass(frozen=True)
class Pose:
    t_s: float
    position_ned_m: tuple[float, float, float]
    quaternion_wxyz: tuple[float, float, float, float]


def read_trajectory(path: Path) -> list[Pose]:
    """Poses from a CSV with the header TRAJECTORY_COLUMNS (vehicle body origin, NED m;
    ZYX angles, deg)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise ParameterError(f"cannot read the trajectory {path}: {exc}",
                             fix="give a CSV file with the columns " + ", ".join(TRAJECTORY_COLUMNS))
    if not rows or any(c not in rows[0] for c in TRAJECTORY_COLUMNS):
        raise ParameterError(f"{path}: the header must name the columns "
                             + ", ".join(TRAJECTORY_COLUMNS), fix="add the header line")
    out = []
    for i, row in enumerate(rows, start=2):
        try:
            v = [float(row[c]) for c in TRAJECTORY_COLUMNS]
        except ValueError:
            raise ParameterError(f"{path}:{i}: a value is not a number", fix="correct line "
                                 f"{i}") from None
        q = quat_from_euler(*np.radians(v[4:7]))
        out.append(Pose(v[0], tuple(v[1:4]), tuple(float(x) for x in q)))
    return out


def line_trajectory(scene, start_ne, end_ne, altitude_m: float, frames: int,
                    mount_xyz=(0.0, 0.0, 0.0), speed_mps: float = 0.5) -> list[Pose]:
    """A straight run from ``start_ne`` to ``end_ne`` (heading along it), the camera
    ``altitude_m`` above the seabed under it."""
    a, b = np.asarray(start_ne, float), np.asarray(end_ne, float)
    yaw = float(np.arctan2(*(b - a)[::-1]))
    q = quat_from_euler(0.0, 0.0, yaw)
    L = float(np.linalg.norm(b - a))
    out = []
    for k in range(frames):
        s = k / max(frames - 1, 1)
        ne = a + s * (b - a)
        floor = float(scene.seabed_depth(*ne))
        if not np.isfinite(floor):
            raise ParameterError(f"the line leaves the seabed at {ne.round(2).tolist()}",
                                 fix="keep --line inside the scene")
        out.append(Pose(s * L / speed_mps, (float(ne[0]), float(ne[1]),
                                            floor - altitude_m - float(mount_xyz[2])),
                        tuple(float(x) for x in q)))
    return out


def generate_deepsea_dataset(out: Path, params: DeepSeaCamera.Parameters, poses: list[Pose],
                             seed: int = 1, progress=None) -> dict:
    """Render every pose into OUT (module docstring); returns {"images", "seconds"}."""
    from ..world.scene import Scene

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ParameterError(f"{out} exists and is not empty", fix="give a new folder")
    scene = Scene.load(params.scene)
    lights = lights_from_table(params.lights)
    r = DeepSeaRenderer(scene, params.camera(), params.mount(), params.water(), lights,
                        params.radiometry(), params.sensor(), MarineSnow(count=params.marine_snow))
    (out / "images").mkdir(parents=True)
    (out / "truth").mkdir()
    cam = r.camera
    info = {"width": cam.width, "height": cam.height, "K": list(cam.K), "distortion": list(cam.dist),
            "distortion_model": "plumb_bob", "camera_frame": "x right, y down, z optical axis",
            "mount_xyz_m": list(r.mount.xyz_m), "mount_rpy_rad": list(r.mount.rpy_rad),
            "mount_quaternion_camera_to_body": [float(x) for x in quat_from_rot(r.mount.R_bc)],
            "water": asdict(r.water), "lights": [asdict(li) for li in lights],
            "sensor": asdict(r.sensor), "radiometry": asdict(r.radiometry),
            "scene": str(params.scene), "seed": seed}
    (out / "camera_info.json").write_text(json.dumps(info, indent=2) + "\n")
    classes = {"classes": {str(c.id): {"name": c.name, "reflectance": list(c.reflectance)}
                           for c in scene.classes.values()},
               "instances": {str(i): [cid, name] for i, (cid, name) in sorted(scene.instances.items())}}
    (out / "classes.json").write_text(json.dumps(classes, indent=2) + "\n")
    key = channel_key(seed, "dataset", "image")
    snow_key = channel_key(seed, "dataset", "snow")
    t0 = time.perf_counter()
    with open(out / "poses.jsonl", "w") as pf:
        for k, pose in enumerate(poses):
            res = r.render(pose.position_ned_m, pose.quaternion_wxyz, frame_rng(key, k),
                           frame_rng(snow_key, k))
            img = res.image
            if img.ndim == 3:
                img = img[..., ::-1]  # OpenCV writes BGR
            cv2.imwrite(str(out / "images" / f"{k:06d}.png"), np.ascontiguousarray(img))
            f = res.frame
            np.savez_compressed(out / "truth" / f"{k:06d}.npz",
                                range_m=f.range_m.astype(np.float32),
                                z_depth_m=f.z_depth_m.astype(np.float32),
                                normals_cam=f.normal_cam.astype(np.float32),
                                labels=f.label.astype(np.uint16),
                                instances=f.instance.astype(np.uint16))
            pf.write(json.dumps({
                "index": k, "t_s": pose.t_s, "image": f"images/{k:06d}.png",
                "truth": f"truth/{k:06d}.npz",
                "vehicle_position_ned_m": list(pose.position_ned_m),
                "vehicle_quaternion_wxyz": list(pose.quaternion_wxyz),
                "camera_position_ned_m": [float(x) for x in f.pose.C_ned],
                "camera_quaternion_wxyz": [float(x) for x in quat_from_rot(f.pose.R_wc)],
            }) + "\n")
            if progress:
                progress(k + 1, len(poses))
    return {"images": len(poses), "seconds": time.perf_counter() - t0}


def default_parameters(**values) -> DeepSeaCamera.Parameters:
    """The camera's Parameters with some values given (ValueError -> ParameterError)."""
    try:
        return DeepSeaCamera.Parameters(**values)
    except (TypeError, ValueError) as exc:
        raise ParameterError(str(exc), fix="correct the option") from None


__all__ = ["DEFAULT_LIGHTS", "Pose", "read_trajectory", "line_trajectory",
           "generate_deepsea_dataset", "default_parameters"]
