"""The localizer component: tags in the overhead image -> horizontal pose
(docs/localization.md, "Localizer").

Inputs: ``image`` (ImageHeader + raw pixels), ``pressure`` (absolute pressure -> depth
of the body origin), ``imu`` (specific force -> roll and pitch, the static-tilt
estimate), and optionally ``truth`` (VehicleState, queued; for scoring only: copied
into the measurement's true_* fields at the image's time).

Outputs, once per new image: ``pose`` (PoseMeasurement of x, y, yaw in the pool
frame, z down from the water surface; covariance over ("x", "y", "yaw"); refused with a
reason when no valid tag is seen or the depth/tilt is missing) and ``detections``
(TagDetections, corners in OpenCV pixel convention). Metrics at the end of a run:
images, valid, refused and (with ``truth``) the horizontal RMSE.

Depth: d_s = (p - p_atm) / (rho g) at the pressure port; the body origin is at
d = d_s - (R_y(theta) R_x(phi) r_p)_z. Tilt: with f the specific force in the body
frame (f = R_bs f_s), phi = atan2(-f_y, -f_z), theta = atan2(f_x, sqrt(f_y^2 + f_z^2)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from moonpool.v1 import common_pb2, navigation_pb2, sensors_pb2, vehicle_pb2, vision_pb2

from ..sdk.component import Attached, Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import quat_from_euler, rot_from_euler, tilt_from_specific_force
from ..sensors.common import P_ATM, G, refuse, set_valid
from .camera import pose_from_state, setup_from_param
from .detect import DetectorOptions, TagDetector, roi_around
from .measure import (
    UPSTREAM_INVALID,
    Measurement,
    MeasurerOptions,
    PinholeMeasurer,
    RefractionMeasurer,
)

FAULT = common_pb2.REFUSAL_REASON_FAULT
NOT_READY = common_pb2.REFUSAL_REASON_NOT_READY


def image_array(value) -> np.ndarray:
    """The pixels of an ``Attached(ImageHeader, bytes)`` as a (H, W[, C]) array."""
    if not isinstance(value, Attached):
        raise ValueError("the image carries no pixel frame")
    hdr = value.message
    w, h = int(hdr.width), int(hdr.height)
    enc = hdr.encoding or "mono8"
    channels, dtype = {"mono8": (1, np.uint8), "mono16": (1, np.uint16), "bgr8": (3, np.uint8),
                       "rgb8": (3, np.uint8)}.get(enc, (0, None))
    if not channels:
        raise ValueError(f"unsupported image encoding {enc!r}")
    row = w * channels * np.dtype(dtype).itemsize
    step = int(hdr.step_bytes) or row
    buf = np.frombuffer(memoryview(value.data).cast("B"), dtype=np.uint8)
    if w <= 0 or h <= 0 or step < row or buf.size < step * (h - 1) + row:
        raise ValueError(f"pixel frame of {buf.size} bytes does not hold a {w}x{h} {enc} image "
                         f"with {step} bytes per row")
    rows = np.lib.stride_tricks.as_strided(buf, shape=(h, row), strides=(step, 1))
    img = np.ascontiguousarray(rows).view(dtype).reshape(h, w, channels)
    if enc == "rgb8":
        img = img[..., ::-1]
    return img[..., 0] if channels == 1 else img


class Localizer(Component):
    """Refraction-aware AprilTag localization (pinhole PnP selectable as the baseline)."""

    FULL_SEARCH_EVERY = 10
    """While tracking fewer tags than the layout has, search the whole frame this often."""

    inputs = (
        Port("image", vision_pb2.ImageHeader, "overhead camera frame (pixels attached)",
             attachment=True),
        Port("pressure", sensors_pb2.Pressure, "absolute pressure -> depth of the body origin"),
        Port("imu", sensors_pb2.Imu, "specific force -> roll and pitch"),
        Port("truth", vehicle_pb2.VehicleState, "true state, for scoring only (optional)",
             queued=True),
    )
    outputs = (
        Port("pose", navigation_pb2.PoseMeasurement, "x, y, yaw in the pool frame (z down)"),
        Port("detections", vision_pb2.TagDetections, "tags found in the image"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        setup_file: Path | None = param(None, "setup.json: the calibration the localizer uses (absent: "
                                        "the built-in simulated pool rig); relative to the rig file's folder")
        method: str = param("refraction", "refraction (refraction-aware) or pinhole (PnP "
                            "baseline, ignores the water)")
        quad_decimate: float = param(2.0, "apriltag quad_decimate on a full frame")
        acquire_decimate: float = param(3.0, "quad_decimate of the coarse whole-frame search "
                                        "that finds the tags before a full-resolution search "
                                        "around them; <= quad_decimate: no coarse search")
        track: bool = param(True, "search near the last detections first (fast)")
        max_hamming: int = param(1, "largest accepted number of corrected bits")
        min_decision_margin: float = param(10.0, "smallest accepted decision margin")
        rho_kgpm3: float = param(997.0, "water density for pressure -> depth", unit="kg/m^3")
        g: float = param(G, "gravity", unit="m/s^2")
        atmospheric_pa: float = param(P_ATM, "pressure at the surface", unit="Pa")
        pressure_mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                        "pressure port, body frame", unit="m")
        imu_mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                     "IMU axes relative to the body (ZYX)",
                                                     unit="rad")
        depth_sigma_m: float = param(0.003, "depth noise, for the covariance", unit="m")
        attitude_sigma_rad: float = param(0.003, "roll/pitch noise, for the covariance",
                                          unit="rad")
        max_rms_m: float = param(0.02, "largest RMS corner residual of a consistent fit",
                                 unit="m")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Method, mounts, decimation, water, and the setup file (also by ``moonpool check``)."""
        if params.method not in ("refraction", "pinhole"):
            raise ParameterError(f"method must be 'refraction' or 'pinhole', got {params.method!r}",
                                 fix="set method to refraction or pinhole")
        if len(params.pressure_mount_xyz_m) != 3 or len(params.imu_mount_rpy_rad) != 3:
            raise ParameterError("pressure_mount_xyz_m and imu_mount_rpy_rad take 3 values each",
                                 fix="give [x, y, z] and [roll, pitch, yaw]")
        if not params.acquire_decimate >= 1:
            raise ParameterError(f"acquire_decimate must be >= 1, got {params.acquire_decimate}",
                                 fix="e.g. 3 (coarse search first), or 1 to search whole frames "
                                 "at quad_decimate only")
        if not (params.rho_kgpm3 > 0 and params.g > 0):
            raise ParameterError("rho_kgpm3 and g must be > 0",
                                 fix="e.g. rho_kgpm3 = 997 (fresh water), g = 9.80665")
        setup_from_param(params.setup_file, "")  # exists and parses

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        self.params = params
        self.setup = setup_from_param(params.setup_file, self.name)
        try:
            self.detector = TagDetector(DetectorOptions(
                family=self.setup.tag_family, quad_decimate=params.quad_decimate,
                max_hamming=params.max_hamming, min_decision_margin=params.min_decision_margin))
        except ValueError as exc:
            raise ParameterError(str(exc), component=self.name, fix="correct the value") from None
        if params.method == "refraction":
            self.measurer = RefractionMeasurer(self.setup, MeasurerOptions(
                depth_sigma_m=params.depth_sigma_m, attitude_sigma_rad=params.attitude_sigma_rad,
                max_rms_m=params.max_rms_m))
        else:
            self.measurer = PinholeMeasurer(self.setup)
        self.R_bs_imu = rot_from_euler(*params.imu_mount_rpy_rad)
        self.r_pressure = np.asarray(params.pressure_mount_xyz_m, float)

    def initialize(self, start_time_ns: int):
        # Warm up: the detector's first search allocates its buffers (tens of ms on
        # a 1280x720 frame); do it now, not in the first step (real-time runs).
        w, h = self.setup.image_size or (1280, 720)
        self.detector.detect(np.zeros((h, w), np.uint8))
        self._last_image: tuple[int, int] | None = None
        self._last_dets = []
        self._frames = 0
        self._stats = {"images": 0, "valid": 0, "refused": 0}
        self._sq_err: list[float] = []
        self._truth: list[vehicle_pb2.VehicleState] = []
        self._truth_t: list[int] = []  # their stamps, ns

    # -- inputs -------------------------------------------------------------------

    def tilt(self, imu) -> tuple[float, float] | None:
        if imu is None or not imu.validity.valid:
            return None
        f = imu.specific_force_mps2
        fb = self.R_bs_imu @ np.array([f.x, f.y, f.z])
        if not np.all(np.isfinite(fb)) or np.linalg.norm(fb) < 1e-6:
            return None
        return tilt_from_specific_force(fb[0], fb[1], fb[2])

    def depth(self, pressure, roll: float, pitch: float) -> float | None:
        if pressure is None or not pressure.validity.valid:
            return None
        p = self.params
        d_s = (pressure.pressure_pa - p.atmospheric_pa) / (p.rho_kgpm3 * p.g)
        lever = rot_from_euler(roll, pitch, 0.0) @ self.r_pressure
        return float(d_s - lever[2])

    def _truth_at(self, t_ns: int):
        """The truth state stamped nearest t_ns (the first of equals), or None."""
        if not self._truth:
            return None
        return self._truth[int(np.argmin(np.abs(np.array(self._truth_t) - t_ns)))]

    # -- step ---------------------------------------------------------------------

    def step(self, t_ns, dt_ns, inputs):
        for s in inputs.get("truth", []):
            self._truth.append(s)
            self._truth_t.append(s.header.sim_time_ns)
        if len(self._truth) > 64:
            del self._truth[:-64], self._truth_t[:-64]
        value = inputs.get("image")
        if value is None:
            return None
        hdr = value.message if isinstance(value, Attached) else value
        key = (hdr.header.sim_time_ns, hdr.header.seq)
        if key == self._last_image:
            return None  # no new image since the last step
        self._last_image = key
        t_img = hdr.header.sim_time_ns
        pose = navigation_pb2.PoseMeasurement(header=self.header(t_img, "pool"))
        dets_msg = vision_pb2.TagDetections(header=self.header(t_img, self.name),
                                            image_seq=hdr.header.seq)
        truth = self._truth_at(t_img)
        if truth is not None:
            tp = pose_from_state(truth)
            tpm = pose.true_position_m
            tpm.x, tpm.y, tpm.z = tp.x, tp.y, tp.z
            pose.true_yaw_rad = tp.yaw
            dets_msg.truth.CopyFrom(pose)
        try:
            img = image_array(value)
        except ValueError as exc:
            refuse(pose.validity, FAULT, f"unreadable image: {exc}")
            refuse(dets_msg.validity, FAULT, f"unreadable image: {exc}")
            self._stats["images"] += 1
            self._stats["refused"] += 1
            return {"pose": pose, "detections": dets_msg}
        res = None
        self._frames += 1
        full_due = (len(self._last_dets) < len(self.setup.tags)
                    and self._frames % self.FULL_SEARCH_EVERY == 0)
        if self.params.track and self._last_dets and not full_due:
            res = self.detector.detect(img, roi_around(self._last_dets, img.shape[:2]))
            if len(res.detections) < len(self._last_dets):
                res = None  # lost one: search the whole frame
        if res is None:
            res = self._acquire(img)
        known = [d for d in res.detections if self.setup.tag(d.id) is not None]
        self._last_dets = known
        self._fill_detections(dets_msg, res)
        tilt = self.tilt(inputs.get("imu"))
        depth = self.depth(inputs.get("pressure"), *tilt) if tilt else None
        if self.params.method == "refraction" and (tilt is None or depth is None):
            m = Measurement.refuse("refraction", UPSTREAM_INVALID,
                                   "no valid " + ("IMU tilt" if tilt is None else "pressure depth"))
        else:
            roll, pitch = tilt if tilt else (math.nan, math.nan)
            m = self.measurer.measure(res.detections, depth if depth is not None else math.nan,
                                      roll, pitch)
        self._fill_pose(pose, m, tilt)
        self._stats["images"] += 1
        self._stats["valid" if m.valid else "refused"] += 1
        if m.valid and truth is not None:
            self._sq_err.append((m.x - pose.true_position_m.x) ** 2
                                + (m.y - pose.true_position_m.y) ** 2)
        return {"pose": pose, "detections": dets_msg}

    def _acquire(self, img: np.ndarray):
        """Find the tags in a whole frame: a coarse search (``acquire_decimate``) locates
        them and a full-resolution search around them gives their corners, as tracking
        does (together about half the time of a whole-frame search at ``quad_decimate``
        2); the whole frame at ``quad_decimate`` when the coarse search finds no known
        tag, or loses one in the fine search."""
        if self.params.acquire_decimate > self.params.quad_decimate:
            coarse = self.detector.detect(img, decimate=self.params.acquire_decimate)
            known = [d for d in coarse.detections if self.setup.tag(d.id) is not None]
            if known:
                res = self.detector.detect(img, roi_around(known, img.shape[:2]))
                if len(res.detections) >= len(known):
                    return res
        return self.detector.detect(img)

    def terminate(self):
        """Metrics: images, valid, refused and, with truth, the horizontal RMSE (m)."""
        out = {k: float(v) for k, v in getattr(self, "_stats", {}).items()}
        if getattr(self, "_sq_err", None):
            out["horizontal_rmse_m"] = float(math.sqrt(np.mean(self._sq_err)))
        return out

    def _fill_detections(self, msg: vision_pb2.TagDetections, res) -> None:
        for d in res.detections:
            td = msg.detections.add(family=d.family, id=d.id, hamming=d.hamming,
                                    decision_margin=d.decision_margin)
            for x, y in d.corners:
                td.corners_px.add(x=float(x), y=float(y))
            td.center_px.x, td.center_px.y = float(d.center[0]), float(d.center[1])
        if res.detections:
            set_valid(msg.validity)
        else:
            detail = "no tag in view"
            if res.rejected:
                detail += " (" + "; ".join(r for _, r in res.rejected) + ")"
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_DETECTED, detail)

    def _fill_pose(self, pose: navigation_pb2.PoseMeasurement, m: Measurement, tilt) -> None:
        if not m.valid:
            refuse(pose.validity, m.reason, m.detail)
            return
        set_valid(pose.validity)
        if m.ignored:
            pose.validity.detail = "; ".join(m.ignored)
        pose.position_m.x, pose.position_m.y, pose.position_m.z = m.x, m.y, m.z
        pose.yaw_rad = m.yaw
        roll, pitch = tilt if tilt else (0.0, 0.0)
        w, x, y, z = quat_from_euler(roll, pitch, m.yaw)
        pose.orientation.w, pose.orientation.x, pose.orientation.y, pose.orientation.z = w, x, y, z
        pose.components.extend(["x", "y", "yaw"])
        pose.covariance.n = 3
        pose.covariance.values.extend(float(v) for v in np.asarray(m.covariance).ravel())
        pose.features = m.n_corners
