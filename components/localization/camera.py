"""The overhead camera component: renders the vehicle's tags through the water surface
(docs/localization.md, "Overhead camera").

Input ``state`` (the true VehicleState); output ``image``: an ``ImageHeader`` with the
pixels attached as a raw frame (mono8, row-major, ``step_bytes = width``), stamped with
the step time. Before a state arrives it shows the empty pool. Noise of frame k is
drawn from a Philox generator keyed by (seed, instance name, "image") at counter
(0, k, 0, 0): the same frames in any process. That noise (the gain's jitter and the
exposed plain floor, ``Renderer.frame_noise``) does not depend on the vehicle, so a
worker thread makes frame k + 1's from the start of frame k's step, while the tags are
traced (NumPy and the renderer's C loops release the GIL), and frame k's own first if it
was not made ahead: the same bits, on the machine's other core.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from moonpool.v1 import vehicle_pb2, vision_pb2

from ..sdk.component import Attached, Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import euler_from_rot, rot_from_quat
from ..sdk.noise import channel_key
from .pool_setup import PoolSetup, example_setup, load_setup
from .render import Pose, Renderer, RenderOptions
from .view import camera_part, tag_parts


def pose_from_state(state: vehicle_pb2.VehicleState) -> Pose:
    """The vehicle pose (position and ZYX angles) of a VehicleState."""
    q = state.orientation  # unset (all zero): level, heading north
    roll, pitch, yaw = euler_from_rot(rot_from_quat((q.w, q.x, q.y, q.z)))
    p = state.position_ned_m
    return Pose(p.x, p.y, p.z, roll, pitch, yaw)


def setup_from_param(path: Path | str | None, component: str, image_size=None) -> PoolSetup:
    """The setup named by a component parameter (None or "" : the built-in simulated pool)."""
    if not path:
        return example_setup(image_size or (1280, 720))
    try:
        return load_setup(Path(path).expanduser())
    except ParameterError as exc:
        exc.component = component
        raise


class OverheadCamera(Component):
    """A fixed camera in air above the pool: exact refraction at the flat water surface,
    intrinsics and distortion, supersampled tags, blur, ripple and sensor noise."""

    inputs = (Port("state", vehicle_pb2.VehicleState,
                   "true vehicle state (where to draw the tags)"),)
    outputs = (Port("image", vision_pb2.ImageHeader,
                    "mono8 frame; pixels attached as a raw frame", attachment=True),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        setup_file: Path | None = param(None, "setup.json of the TRUE camera and tag layout (absent: the "
                                        "built-in simulated pool rig); relative to the rig file's folder")
        image_width: int = param(0, "image width (0: from the setup, else 1280)", unit="px")
        image_height: int = param(0, "image height (0: from the setup, else 720)", unit="px")
        supersampling: int = param(4, "S: S x S samples per edge pixel (area average)")
        floor_level: float = param(0.45, "radiance of the plain pool floor (0..1)")
        black_level: float = param(0.07, "radiance of the black tag cells (0..1)")
        white_level: float = param(0.85, "radiance of the white tag cells (0..1)")
        exposure: float = param(1.0, "gain: DN = 255 * exposure * radiance")
        exposure_jitter: float = param(0.0, "relative std of the gain, frame to frame")
        read_noise_dn: float = param(1.5, "read noise std", unit="DN")
        shot_noise_dn: float = param(0.05, "shot-noise variance per DN of signal", unit="DN")
        blur_sigma_px: float = param(0.5, "Gaussian (defocus) blur std", unit="px")
        exposure_s: float = param(0.0, "exposure time: motion blur from the vehicle's velocity "
                                  "(0: none)", unit="s")
        ripple_amplitude_m: float = param(0.0, "surface ripple amplitude per component (0: still)",
                                          unit="m")
        ripple_wavelength_m: float = param(0.25, "mean ripple wavelength", unit="m")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Image size, exposure time, and the setup file (exists and parses; also by
        ``moonpool check``)."""
        if params.image_width or params.image_height:
            if params.image_width < 16 or params.image_height < 16:
                raise ParameterError("image_width and image_height must both be given (>= 16)",
                                     fix="give both, or neither")
        if params.exposure_s < 0:
            raise ParameterError("exposure_s must be >= 0",
                                 fix="give the exposure time in seconds, or 0")
        if params.setup_file:
            setup_from_param(params.setup_file, "")

    @classmethod
    def static_scene(cls, params: Parameters):
        """The tags on the vehicle whose state arrives on ``state``, and the camera
        above the pool (``view.py``), from the setup the camera renders."""
        size = (params.image_width, params.image_height) if params.image_width else None
        setup = setup_from_param(params.setup_file, "", size)
        return [*tag_parts(setup, "state"), camera_part(setup)]

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        self.params = params
        size = None
        if params.image_width or params.image_height:
            size = (params.image_width, params.image_height)
        setup = setup_from_param(params.setup_file, self.name, size)
        size = size or setup.image_size or (1280, 720)
        opts = RenderOptions(
            supersampling=params.supersampling, floor_level=params.floor_level,
            black_level=params.black_level, white_level=params.white_level,
            exposure=params.exposure, exposure_jitter=params.exposure_jitter,
            read_noise_dn=params.read_noise_dn, shot_noise_dn=params.shot_noise_dn,
            blur_sigma_px=params.blur_sigma_px, ripple_amplitude_m=params.ripple_amplitude_m,
            ripple_wavelength_m=params.ripple_wavelength_m)
        try:
            self.renderer = Renderer(setup, opts, size)
        except ValueError as exc:
            raise ParameterError(str(exc), component=self.name, fix="correct the value") from None
        self.setup = setup

    def initialize(self, start_time_ns: int):
        self.k = 0
        self.key = channel_key(self.seed, self.name, "image")
        self._worker = ThreadPoolExecutor(1, thread_name_prefix=f"{self.name}-noise")
        self._ahead: tuple[int, Future] | None = None  # (frame index, its frame_noise)
        # Warm up: the first render allocates its buffers; do it now, not in the first
        # step (real-time runs). A throwaway generator: frames are keyed by their index,
        # so this changes none of them.
        self.renderer.render(Pose(0.0, 0.0, 0.5), np.random.default_rng(0))

    def _motion_px(self, state, pose: Pose) -> tuple[float, float]:
        T = self.params.exposure_s
        if T <= 0:
            return (0.0, 0.0)
        v = state.linear_velocity_body_mps
        vw = pose.R_wb @ np.array([v.x, v.y, v.z])
        centre = pose.position + pose.R_wb @ np.mean([t.center_b for t in self.setup.tags], axis=0)
        a = self.renderer.camera.project(centre - 0.5 * T * vw)
        b = self.renderer.camera.project(centre + 0.5 * T * vw)
        d = b - a
        return (float(d[0]), float(d[1])) if np.all(np.isfinite(d)) else (0.0, 0.0)

    def _rng(self, k: int) -> np.random.Generator:
        return np.random.Generator(np.random.Philox(key=self.key,
                                                    counter=np.array([0, k, 0, 0], np.uint64)))

    def _frame_noise(self, k: int):
        return self.renderer.frame_noise(self._rng(k))

    def render_frame(self, k: int, t_ns: int, state) -> np.ndarray:
        worker = getattr(self, "_worker", None)
        if worker is None:  # not initialized (render_frame called directly): all inline
            rng = self._rng(k)
            noise = None
        else:
            rng = None
            ahead, self._ahead = self._ahead, None
            pending = ahead[1] if ahead is not None and ahead[0] == k else \
                worker.submit(self._frame_noise, k)
            # The next frame's now: the worker makes it while this frame's tags are traced
            # (the C loops release the GIL), not over the next components' steps.
            self._ahead = (k + 1, worker.submit(self._frame_noise, k + 1))
        r = self.renderer
        if state is None:
            rad, boxes = r.radiance(None, return_boxes=True, reuse=True)
        else:
            pose = pose_from_state(state)
            rad, boxes = r.radiance(pose, t_ns * 1e-9, self.seed,
                                    self._motion_px(state, pose), return_boxes=True, reuse=True)
        if worker is not None:
            noise = pending.result()
        return r.expose(rad, rng, boxes, noise)

    def step(self, t_ns, dt_ns, inputs):
        k, self.k = self.k, self.k + 1
        img = self.render_frame(k, t_ns, inputs.get("state"))
        h, w = img.shape
        msg = vision_pb2.ImageHeader(header=self.header(t_ns, self.name), width=w, height=h,
                                     encoding="mono8", step_bytes=w,
                                     exposure_s=self.params.exposure_s)
        return {"image": Attached(msg, np.ascontiguousarray(img))}

    def terminate(self):
        worker = getattr(self, "_worker", None)
        if worker is not None:
            worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None
            self._ahead = None
        return None
