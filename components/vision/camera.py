"""The deep-sea camera component ``vision.camera`` (docs/deepsea-camera.md).

Call order (Component's): ``configure`` loads the scene (its own copy), builds the
camera (rays undistorted once), the water, the lights and the sensor; ``initialize``
keys the noise; each ``step`` renders the vehicle's view at the latest ``state``.

Input ``state`` (VehicleState, the true pose). Outputs, every step once a state has
arrived (nothing before):

* ``image``: ImageHeader with the pixels attached (rgb8; rgb16 for 12/16 bits, the
  samples in the low bits; bayer_rggb8/16 with ``bayer``);
* ``camera_info``: CameraInfo (K, distortion, mount, the true camera pose);
* per-pixel truth, each an ImageHeader with its pixels attached: ``range`` and
  ``depth`` (mono16, millimetres along the ray and along the optical axis; 0 = no
  hit), ``normals`` (rgb8, camera-frame unit normal n as 127.5 (n + 1); 0 = no hit),
  ``labels`` (mono16 class ids), ``instances`` (mono16 instance ids). Leave any of
  them out of the recording with ``run.record_exclude`` (e.g. "camera.normals").

Noise of frame k is keyed by (seed, instance, "image") and the snow by (seed,
instance, "snow"), counter (0, k, 0, 0): the same frames in any process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from moonpool.v1 import vehicle_pb2, vision_pb2

from ..sdk.component import Attached, Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import quat_from_rot
from ..sdk.noise import channel_key
from .geometry import CameraModel, CameraMount
from .lights import SpotLight, light_reaches_view
from .radiometry import RadiometryOptions
from .render import DeepSeaRenderer, MarineSnow
from .sensor import SensorOptions, frame_rng
from .water import WATER_TYPES, WaterOptics, water_type

DEFAULT_LIGHTS = {
    "port": {"position_body_m": [0.4, -0.35, 0.1], "direction_body": [0.0, 0.0, 1.0],
             "intensity": [30.0, 30.0, 30.0], "beam_angle_deg": 70.0, "falloff": 1.0},
    "starboard": {"position_body_m": [0.4, 0.35, 0.1], "direction_body": [0.0, 0.0, 1.0],
                  "intensity": [30.0, 30.0, 30.0], "beam_angle_deg": 70.0, "falloff": 1.0},
}
"""Two down-looking LED lamps beside the camera."""


def lights_from_table(table: dict) -> tuple[SpotLight, ...]:
    """The lights of the ``lights`` parameter (name -> table), in name order."""
    if not isinstance(table, dict):
        raise ValueError("lights must be a table of named lights, e.g. "
                         "lights.port = {position_body_m = [...], direction_body = [...]}")
    out = []
    for name in sorted(table):
        spec = table[name]
        if not isinstance(spec, dict):
            raise ValueError(f"lights.{name} must be a table")
        try:
            out.append(SpotLight.from_table(spec, f"lights.{name}"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"lights.{name}: {exc}") from None
    return tuple(out)


def truth_images(frame) -> dict[str, tuple[np.ndarray, str]]:
    """The per-pixel truth of a ``GeometryFrame`` as the camera publishes it: port ->
    (pixels, encoding). ``range`` and ``depth`` in mm (rounded, 1..65535; 0: no hit),
    ``normals`` camera-frame n as round(127.5 (n + 1)) per channel (0: no hit),
    ``labels`` and ``instances`` as 16-bit ids."""
    miss = ~frame.hit

    def mm(x: np.ndarray) -> np.ndarray:
        v = x * 1000.0
        np.round(v, out=v)
        np.clip(v, 1, 65535, out=v)
        v[miss] = 0
        return v.astype("<u2")

    nc = frame.normal_cam
    nc += 1.0
    nc *= 127.5
    np.round(nc, out=nc)
    np.clip(nc, 0, 255, out=nc)
    nc[miss] = 0
    return {"range": (mm(frame.range_m), "mono16"),
            "depth": (mm(frame.z_depth_m), "mono16"),
            "normals": (nc.astype(np.uint8), "rgb8"),
            "labels": (frame.label.astype("<u2"), "mono16"),
            "instances": (frame.instance.astype("<u2"), "mono16")}

class DeepSeaCamera(Component):
    """A camera on the vehicle seeing the world scene through the water, lit by its
    own lamps (and daylight near the surface); publishes the image and per-pixel truth."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state (pose of the view)"),)
    outputs = (
        Port("image", vision_pb2.ImageHeader, "the camera image; pixels attached",
             attachment=True),
        Port("camera_info", vision_pb2.CameraInfo, "K, distortion, mount and true pose"),
        Port("range", vision_pb2.ImageHeader, "truth: range along each ray, mono16 mm (0: none)",
             attachment=True),
        Port("depth", vision_pb2.ImageHeader, "truth: z-depth, mono16 mm (0: none)",
             attachment=True),
        Port("normals", vision_pb2.ImageHeader, "truth: camera-frame normals, rgb8",
             attachment=True),
        Port("labels", vision_pb2.ImageHeader, "truth: semantic class ids, mono16",
             attachment=True),
        Port("instances", vision_pb2.ImageHeader, "truth: instance ids, mono16",
             attachment=True),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML) the camera sees; relative to the rig "
                                   "file's folder (required)")
        image_width: int = param(640, "image width", unit="px")
        image_height: int = param(480, "image height", unit="px")
        hfov_deg: float = param(70.0, "horizontal field of view when fx is 0", unit="deg")
        fx: float = param(0.0, "focal length (0: from hfov_deg)", unit="px")
        fy: float = param(0.0, "focal length (0: fx)", unit="px")
        cx: float = param(-1.0, "principal point (-1: the image centre)", unit="px")
        cy: float = param(-1.0, "principal point (-1: the image centre)", unit="px")
        distortion: tuple[float, ...] = param((0.0, 0.0, 0.0, 0.0, 0.0),
                                              "k1, k2, p1, p2, k3 (OpenCV)")
        mount_xyz_m: tuple[float, ...] = param((0.5, 0.0, 0.2), "camera centre, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, -math.pi / 2, 0.0),
                                                 "camera relative to a forward-looking one (ZYX); "
                                                 "default: looking down, image top forward",
                                                 unit="rad")
        water_type: str = param("jerlov_IB", "named water (" + ", ".join(WATER_TYPES)
                                + ") or 'custom'")
        attenuation_per_m: tuple[float, ...] = param((), "custom water: beam attenuation c (R, G, B)",
                                                     unit="1/m")
        scattering_per_m: tuple[float, ...] = param((), "custom water: scattering b (R, G, B), "
                                                    "b <= c", unit="1/m")
        lights: dict = param(DEFAULT_LIGHTS, "named spot lights: {position_body_m, direction_body, "
                             "intensity [R, G, B] W/sr, beam_angle_deg (full), falloff}")
        surface_irradiance: tuple[float, ...] = param((150.0, 150.0, 150.0),
                                                      "down-welling irradiance below the surface "
                                                      "(R, G, B)", unit="W/m^2")
        max_range_m: float = param(30.0, "farthest surface seen; the water beyond a miss", unit="m")
        backscatter_samples: int = param(8, "Gauss-Legendre samples per ray in each light's cone")
        backscatter_decimation: int = param(4, "backscatter on every n-th pixel, interpolated")
        shadows: bool = param(False, "shadow rays from each light")
        exposure_s: float = param(0.01, "exposure time", unit="s")
        sensitivity: float = param(4.0e5, "electrons per unit radiance per second")
        full_well_e: float = param(10000.0, "full well", unit="e-")
        gain: float = param(1.0, "analogue gain")
        read_noise_e: float = param(3.0, "read noise", unit="e-")
        bit_depth: int = param(8, "8, 12 or 16")
        bayer: bool = param(False, "RGGB Bayer mosaic instead of RGB")
        vignetting_exponent: float = param(4.0, "n of the cos^n vignetting (0: none)")
        marine_snow: int = param(0, "marine snow particles per frame (0: none)")
        auto_exposure: bool = param(True, "per-frame exposure/gain so the 99th percentile of G "
                                    "is at auto_exposure_target of full scale")
        auto_exposure_target: float = param(0.7, "fraction of full scale")
        max_gain: float = param(16.0, "largest gain auto-exposure may use")
        movable_objects: tuple[str, ...] = param(
            (), "objects of the scene that move (a grasped target): each is seen where the "
            "input object_NAME (VehicleState: the object's pose) puts it, at its scene pose "
            "until a message arrives")

        def __post_init__(self) -> None:
            if self.scene is None:
                raise ValueError("the camera has no scene: it renders a world scene file; set "
                                 "scene = \"scenes/trench_floor/scene.toml\" (a path relative to "
                                 "the rig file's folder)")
            from ..world.scenefile import validate_scene

            problems = validate_scene(self.scene)
            if problems:
                raise ValueError("scene: " + "; ".join(problems))
            if self.movable_objects:
                from ..world.scenefile import read_scene_file

                names = {o.name for o in read_scene_file(self.scene).objects}
                unknown = [n for n in self.movable_objects if n not in names]
                if unknown:
                    raise ValueError(f"movable_objects: the scene has no object named "
                                     f"{', '.join(unknown)}; its objects: "
                                     f"{', '.join(sorted(names)) or '(none)'}")
            self.water()
            cam = self.camera(coarse=True)
            mount = self.mount()
            for light, name in zip(lights_from_table(self.lights), sorted(self.lights)):
                if not light_reaches_view(light, mount.R_bc, np.asarray(mount.xyz_m),
                                          cam.rays_cam, self.max_range_m):
                    raise ValueError(
                        f"lights.{name} points away from everything the camera sees (its cone "
                        f"meets no camera ray within max_range_m = {self.max_range_m:g} m); turn "
                        "its direction_body toward the view (e.g. [0, 0, 1] for a down-looking "
                        "camera) or widen beam_angle_deg")
            self.radiometry()
            self.sensor()

        def water(self) -> WaterOptics:
            if self.water_type == "custom":
                c, b = self.attenuation_per_m, self.scattering_per_m
                if len(c) != 3 or len(b) != 3 or any(bi > ci for bi, ci in zip(b, c)):
                    raise ValueError("water_type 'custom' needs attenuation_per_m and "
                                     "scattering_per_m, 3 numbers each (R, G, B) with b <= c")
                return WaterOptics("custom", tuple(ci - bi for ci, bi in zip(c, b)), tuple(b))
            return water_type(self.water_type)

        def camera(self, coarse: bool = False) -> CameraModel:
            w, h = self.image_width, self.image_height
            fx = self.fx or 0.5 * w / math.tan(math.radians(self.hfov_deg) / 2)
            fy = self.fy or fx
            cx = self.cx if self.cx >= 0 else (w - 1) / 2
            cy = self.cy if self.cy >= 0 else (h - 1) / 2
            if coarse:  # the same camera on a 1/8 grid: for the checks only
                s = 8.0
                return CameraModel(max(w // 8, 2), max(h // 8, 2),
                                   (fx / s, 0.0, (cx + 0.5) / s - 0.5, 0.0, fy / s,
                                    (cy + 0.5) / s - 0.5, 0.0, 0.0, 1.0),
                                   tuple(float(d) for d in self.distortion))
            return CameraModel(w, h, (fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0),
                               tuple(float(d) for d in self.distortion))

        def mount(self) -> CameraMount:
            if len(self.mount_xyz_m) != 3 or len(self.mount_rpy_rad) != 3:
                raise ValueError("mount_xyz_m and mount_rpy_rad take 3 numbers each")
            return CameraMount(tuple(self.mount_xyz_m), tuple(self.mount_rpy_rad))

        def radiometry(self) -> RadiometryOptions:
            return RadiometryOptions(self.backscatter_samples, 0.05, self.max_range_m,
                                     tuple(self.surface_irradiance), self.shadows,
                                     self.backscatter_decimation)

        def sensor(self) -> SensorOptions:
            return SensorOptions(self.exposure_s, self.sensitivity, self.full_well_e, self.gain,
                                 self.read_noise_e, True, self.bit_depth, self.bayer,
                                 self.vignetting_exponent, self.auto_exposure,
                                 self.auto_exposure_target, self.max_gain)

    @classmethod
    def ports_for(cls, params):
        extra = tuple(Port(f"object_{name}", vehicle_pb2.VehicleState,
                           f"pose of the scene object '{name}' (object frame -> NED)")
                      for name in params.movable_objects)
        return tuple(cls.inputs) + extra, tuple(cls.outputs)

    def configure(self, params: Parameters) -> None:
        from ..world.scene import Scene

        self.params = params
        try:
            scene = Scene.load(params.scene, movable=tuple(params.movable_objects))
            self.scene = scene
            self.renderer = DeepSeaRenderer(
                scene, params.camera(), params.mount(), params.water(),
                lights_from_table(params.lights), params.radiometry(), params.sensor(),
                MarineSnow(count=params.marine_snow))
        except ParameterError as exc:
            exc.component = self.name
            raise
        except ValueError as exc:
            raise ParameterError(str(exc), component=self.name, fix="correct the value") from None

    def initialize(self, start_time_ns: int):
        self.k = 0
        self.key = channel_key(self.seed, self.name, "image")
        self.snow_key = channel_key(self.seed, self.name, "snow")
        self.frames = 0

    def _image(self, t_ns: int, arr: np.ndarray, encoding: str) -> Attached:
        arr = np.ascontiguousarray(arr)
        h, w = arr.shape[:2]
        msg = vision_pb2.ImageHeader(header=self.header(t_ns, self.name), width=w, height=h,
                                     encoding=encoding, step_bytes=arr.strides[0],
                                     exposure_s=self.params.exposure_s)
        return Attached(msg, arr)

    def step(self, t_ns, dt_ns, inputs):
        state = inputs.get("state")
        if state is None:
            return {}
        k, self.k = self.k, self.k + 1
        p = state.position_ned_m
        q = state.orientation
        quat = (q.w, q.x, q.y, q.z) if (q.w or q.x or q.y or q.z) else (1.0, 0.0, 0.0, 0.0)
        engine = None
        if self.scene.movable:
            bodies = []
            for name, body in self.scene.movable.items():
                pose = inputs.get(f"object_{name}")
                bodies.append(body if pose is None else body.at_state(pose))
            engine = self.scene.with_bodies(bodies)
        out = self.renderer.render((p.x, p.y, p.z), quat, frame_rng(self.key, k),
                                   frame_rng(self.snow_key, k), engine=engine)
        self.frames += 1
        s = self.renderer.sensor
        img = out.image
        if img.dtype == np.uint16:
            img = img.astype("<u2")
        f = out.frame
        truth = truth_images(f)
        cam = self.renderer.camera
        info = vision_pb2.CameraInfo(header=self.header(t_ns, self.name), width=cam.width,
                                     height=cam.height, k=list(cam.K), distortion_model="plumb_bob",
                                     d=list(cam.dist), image_seq=k)
        mnt = self.renderer.mount
        info.mount_position_body_m.x, info.mount_position_body_m.y, info.mount_position_body_m.z = \
            map(float, mnt.xyz_m)
        for dst, R in ((info.mount_orientation, mnt.R_bc), (info.orientation, f.pose.R_wc)):
            dst.w, dst.x, dst.y, dst.z = map(float, quat_from_rot(R))
        info.position_ned_m.x, info.position_ned_m.y, info.position_ned_m.z = map(float, f.pose.C_ned)
        return {
            "image": self._image(t_ns, img, s.encoding),
            "camera_info": info,
            **{port: self._image(t_ns, arr, encoding)
               for port, (arr, encoding) in truth.items()},
        }

    def terminate(self):
        if not hasattr(self, "frames"):  # never initialised
            return {}
        return {"frames": float(self.frames)}
