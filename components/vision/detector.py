"""The starfish detector ``vision.detector`` (docs/deepsea-camera.md, "Detector"): finds a
red-orange target on the grey-brown floor in a down-looking image with OpenCV (colour
ratio + blobs; no learned weights) and publishes its bearing and, with the altitude, its
position.

Call order::

    det = detect(rgb, options)                     # pure function: Blob or (None, reason)
    DetectorComponent: configure -> step(image, camera_info, altitude, state)

**Colour model.** Water multiplies each channel by its own transmission, so the ratio
R/G of two surfaces seen through the same water keeps their albedo ratio: the
starfish's R/G albedo ratio (0.85/0.35 = 2.4) is 2.3x the sediment's (0.45/0.42) and
the rocks'. A pixel is a candidate when its R/G exceeds ``ratio_factor`` x the
mean R/G of the lit pixels in the box of ``background_fraction`` of the width around it (the floor there) and its G is above ``min_signal`` of full scale and
``min_relative_signal`` of the image's 99th percentile of G (well lit, above the noise), after a Gaussian smoothing of ``blur_sigma_px`` (noise). Candidates are cleaned by a morphological opening (3 x 3) and
closing (5 x 5); the connected component with the largest area between ``min_area_px``
and ``max_area_fraction`` of the image is the target, when its physical size
sqrt(area) · altitude / f lies in ``size_m`` (only with an altitude).

**Bearing and position.** The centroid (u, v) is undistorted to the camera ray d_c
(K, distortion from CameraInfo); d_ned = R_wb R_bc d_c with the vehicle pose of
``state`` (or, without one, the camera pose in CameraInfo). ``state`` is the truth
(VehicleState) or, with ``state_type = "moonpool.v1.NavigationState"``, the vehicle's
own navigation (an INS): the position is then in the navigation's frame, where the
vehicle's controller can use it (a refused NavigationState is not used: the camera
pose in CameraInfo is not either, the position is left out). With the altitude h (an
``Altimeter`` range, taken as measured from the camera's depth, straight down) the
floor is the plane z = z_C + h and the position is C + (h / d_ned,z) d_ned.

Refused (validity NOT_DETECTED, with the reason) when no image has arrived, nothing
is lit, no blob passes, or the blob's size does not fit a starfish.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2, vision_pb2

from ..control.state import StateInput, kinematics, state_message_class, state_type_param
from ..sdk.component import Attached, Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import rot_from_quat
from .geometry import CameraModel


@dataclass(frozen=True)
class DetectorOptions:
    """The colour/blob detector."""

    ratio_factor: float = 1.6
    """A candidate's R/G is above this times the image's median R/G."""
    min_signal: float = 0.02
    """A candidate's G is above this fraction of full scale."""
    min_area_px: int = 12
    """Smallest blob, px."""
    max_area_fraction: float = 0.25
    """Largest blob, fraction of the image."""
    size_m: tuple[float, float] = (0.06, 0.6)
    """Accepted physical size sqrt(area) · h / f, m (with an altitude)."""
    min_relative_signal: float = 0.15
    """A candidate's G is also above this fraction of the image's 99th percentile of G
    (the dim, noisy edges of the light cone are not searched)."""
    background_fraction: float = 0.3
    """Size of the box over which the floor's R/G is averaged, fraction of the width."""
    blur_sigma_px: float = 1.0
    """Gaussian smoothing before the colour test (against sensor noise), px."""


@dataclass(frozen=True)
class Blob:
    center_px: tuple[float, float]
    area_px: float
    score: float
    """Mean R/G of the blob over the floor's median R/G."""


def detect(rgb: np.ndarray, full_scale: float, opts: DetectorOptions = DetectorOptions(),
           altitude_m: float = 0.0, focal_px: float = 0.0) -> tuple[Blob | None, str]:
    """The target in an (H, W, 3) RGB image, or (None, why not)."""
    img = cv2.GaussianBlur(rgb.astype(np.float32), (0, 0), opts.blur_sigma_px) \
        if opts.blur_sigma_px > 0 else rgb.astype(np.float32)
    G = img[..., 1]
    R = img[..., 0]
    p99 = float(np.percentile(G[::4, ::4], 99))
    lit = G > max(opts.min_signal * full_scale, opts.min_relative_signal * p99)
    if lit.sum() < opts.min_area_px:
        return None, "nothing is lit (the image is dark)"
    ratio = np.where(lit, R / np.maximum(G, 1.0), 0.0).astype(np.float32)
    floor = float(np.median(ratio[lit]))
    # the floor's R/G around each pixel (box mean over the lit pixels): the haze and the
    # light's colour vary across the image
    b = opts.background_fraction * rgb.shape[1]
    k = (int(b) | 1, int(b) | 1)
    litf = lit.astype(np.float32)
    local = cv2.blur(ratio, k) / np.maximum(cv2.blur(litf, k), 1e-3)
    cand = (lit & (ratio > opts.ratio_factor * np.maximum(local, 1e-3))).astype(np.uint8)
    cand = cv2.morphologyEx(cand, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    cand = cv2.morphologyEx(cand, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, lab, stats, cents = cv2.connectedComponentsWithStats(cand, connectivity=8)
    best, why = None, "no pixel has the target's colour"
    max_area = opts.max_area_fraction * rgb.shape[0] * rgb.shape[1]
    for i in range(1, n):
        area = float(stats[i, cv2.CC_STAT_AREA])
        if area < opts.min_area_px:
            why = f"the largest candidate blob has {area:.0f} px < min_area_px {opts.min_area_px}"
            continue
        if area > max_area:
            why = f"a candidate blob covers {area:.0f} px, more than max_area_fraction"
            continue
        if altitude_m > 0 and focal_px > 0:
            size = np.sqrt(area) * altitude_m / focal_px
            if not opts.size_m[0] <= size <= opts.size_m[1]:
                why = f"a candidate blob is {size:.2f} m across, outside size_m {opts.size_m}"
                continue
        if best is None or area > best.area_px:
            score = float(ratio[lab == i].mean() / max(floor, 1e-3))
            best = Blob((float(cents[i, 0]), float(cents[i, 1])), area, score)
    return (best, "") if best is not None else (None, why)


def image_rgb(value) -> tuple[np.ndarray, float]:
    """(H, W, 3) RGB and its full scale from an attached rgb8/rgb16 image."""
    if not isinstance(value, Attached):
        raise ValueError("the image carries no pixel frame")
    hdr = value.message
    w, h = hdr.width, hdr.height
    if hdr.encoding == "rgb8":
        return np.frombuffer(value.data, np.uint8).reshape(h, w, 3), 255.0
    if hdr.encoding == "rgb16":
        arr = np.frombuffer(value.data, "<u2").reshape(h, w, 3)
        return arr, 4095.0 if int(arr.max(initial=0)) <= 4095 else 65535.0  # 12 or 16 bits
    raise ValueError(f"the detector reads rgb8 or rgb16 images, not {hdr.encoding!r} (fix: set "
                     "the camera's bayer = false)")


class StarfishDetector(StateInput, Component):
    """Finds the starfish in the down-looking image; bearing and position estimate."""

    inputs = (
        Port("image", vision_pb2.ImageHeader, "camera image (rgb8/rgb16, pixels attached)",
             attachment=True),
        Port("camera_info", vision_pb2.CameraInfo, "K, distortion and mount of that camera"),
        Port("altitude", acoustics_pb2.Altimeter, "altitude above the floor (optional)"),
        Port("state", vehicle_pb2.VehicleState, "vehicle pose for the NED bearing and position "
             "(optional: else the camera pose in camera_info); VehicleState or NavigationState "
             "(parameter state_type)"),
    )
    outputs = (Port("detection", vision_pb2.TargetDetection, "the target found, or refused"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        target: str = param("starfish", "name of what is looked for (reported)")
        ratio_factor: float = param(1.6, "R/G above this times the floor's median")
        min_signal: float = param(0.02, "G above this fraction of full scale")
        min_area_px: int = param(12, "smallest blob", unit="px")
        max_area_fraction: float = param(0.25, "largest blob, fraction of the image")
        size_m: tuple[float, ...] = param((0.06, 0.6), "accepted size [min, max] with an altitude",
                                          unit="m")
        state_type: str = state_type_param()

        def __post_init__(self) -> None:
            if not self.ratio_factor > 1 or not 0 <= self.min_signal < 1 or self.min_area_px < 1:
                raise ValueError("need ratio_factor > 1, 0 <= min_signal < 1, min_area_px >= 1")
            if len(self.size_m) != 2 or not 0 <= self.size_m[0] < self.size_m[1]:
                raise ValueError("size_m = [min, max] with 0 <= min < max")

    def configure(self, params: Parameters) -> None:
        state_message_class(params.state_type, self.name)
        self.params = params
        self.opts = DetectorOptions(params.ratio_factor, params.min_signal, params.min_area_px,
                                    params.max_area_fraction, tuple(params.size_m))
        self._cam_key = None
        self._cam = None
        self._last = None
        self.stats = {"images": 0, "detected": 0}

    def _camera(self, info) -> CameraModel:
        key = (info.width, info.height, tuple(info.k), tuple(info.d))
        if key != self._cam_key:
            self._cam = CameraModel(int(info.width), int(info.height), tuple(info.k), tuple(info.d))
            self._cam_key = key
        return self._cam

    def step(self, t_ns, dt_ns, inputs):
        msg = vision_pb2.TargetDetection(header=self.header(t_ns, self.name),
                                         target=self.params.target)
        image, info = inputs.get("image"), inputs.get("camera_info")
        if image is None or info is None:
            return self._refuse(msg, common_pb2.REFUSAL_REASON_NOT_READY,
                                "no image and camera info received yet")
        hdr = image.message if isinstance(image, Attached) else image
        key = (hdr.header.sim_time_ns, hdr.header.seq)
        if key == self._last:
            return {}  # one detection per new image
        self._last = key
        self.stats["images"] += 1
        msg.image_seq = info.image_seq
        try:
            rgb, full = image_rgb(image)
        except ValueError as exc:
            raise ParameterError(str(exc), component=self.name, fix="send rgb8 or rgb16") from None
        alt = inputs.get("altitude")
        h = alt.range_m if (alt is not None and alt.validity.valid and alt.range_m > 0) else 0.0
        cam = self._camera(info)
        blob, why = detect(rgb, full, self.opts, h, cam.K[0])
        if blob is None:
            return self._refuse(msg, common_pb2.REFUSAL_REASON_NOT_DETECTED, why)
        self.stats["detected"] += 1
        msg.validity.valid = True
        msg.center_px.x, msg.center_px.y = blob.center_px
        msg.area_px = blob.area_px
        msg.score = blob.score
        d_c = cam.rays_at(np.array([blob.center_px]))[0]
        m = info.mount_orientation
        R_bc = rot_from_quat((m.w, m.x, m.y, m.z))
        state = inputs.get("state")
        has_pose = True
        if state is not None:
            kin = kinematics(state)  # None for a refused NavigationState
            has_pose = kin is not None
            R_wb = kin.rotation if has_pose else np.eye(3)
            r = info.mount_position_body_m
            C = (kin.position_ned if has_pose else np.zeros(3)) + R_wb @ np.array([r.x, r.y, r.z])
            R_wc = R_wb @ R_bc
        else:
            o = info.orientation
            R_wc = rot_from_quat((o.w, o.x, o.y, o.z))
            C = np.array([info.position_ned_m.x, info.position_ned_m.y, info.position_ned_m.z])
        d_w = R_wc @ d_c
        msg.bearing_camera.x, msg.bearing_camera.y, msg.bearing_camera.z = map(float, d_c)
        if has_pose:
            msg.bearing_ned.x, msg.bearing_ned.y, msg.bearing_ned.z = map(float, d_w)
        if h > 0 and d_w[2] > 1e-6 and has_pose:
            X = C + (h / d_w[2]) * d_w
            msg.altitude_m = h
            msg.has_position = True
            msg.position_ned_m.x, msg.position_ned_m.y, msg.position_ned_m.z = map(float, X)
        return {"detection": msg}

    def _refuse(self, msg, reason, detail):
        msg.validity.valid = False
        msg.validity.reason = reason
        msg.validity.detail = detail
        return {"detection": msg}

    def terminate(self):
        return {k: float(v) for k, v in self.stats.items()}
