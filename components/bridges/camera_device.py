"""CameraDevice: images from a V4L2 camera, a video file or a folder of images,
through OpenCV, sent as ``ImageHeader`` + raw pixels (the same output a simulated
camera gives, so the localizer consumes it unchanged).

Timing (a device component runs free on the wall clock; DESIGN.md, "Time"):

- ``pacing = "wall"`` (default): a reader thread takes frames as they come — from
  the device at its own rate, or from a file released at ``fps`` frames per second of
  wall clock (a video's own rate when ``fps`` is 0) — and keeps only the newest. At
  each step the **newest frame that arrived since the previous step** is sent,
  stamped with the step's simulation time ``t`` (``header.sim_time_ns``), the
  wall-clock arrival in ``arrival_unix_ns``. No frame arrived since the previous
  step: nothing is sent. Frames that arrived but were superseded before a step are
  counted (metric ``frames_skipped``), never queued.
- ``pacing = "step"`` (files and folders only): each step reads the next frame, so
  a file replays identically whatever the machine's speed (offline tests).

Frames are resized to ``width`` x ``height`` when the source delivers another size
(aspect ratio must agree within 1 %) and converted to ``encoding`` (mono8 or bgr8).
A missing device, file or folder, or one OpenCV cannot read, fails at
``initialize`` with a message naming it.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from moonpool.v1 import vision_pb2

from ..sdk.component import Attached, Component, Port, param
from ..sdk.errors import ParameterError, StepFailed
from ..localization.detect import uint16_to_8bit

log = logging.getLogger("moonpool.bridges.camera")

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".pnm",
                  ".webp")
ENCODINGS = {"mono8": 1, "bgr8": 3}
PACINGS = ("wall", "step")
V4L2_EXPOSURE_UNIT_S = 1e-4
"""CAP_PROP_EXPOSURE on the V4L2 backend is exposure_time_absolute, in 100 µs."""


@dataclass
class _Frame:
    pixels: np.ndarray
    index: int
    arrival_unix_ns: int
    arrival_mono_s: float


class _Source:
    """One opened source; ``read()`` -> (ok, frame as decoded by OpenCV)."""

    kind = ""

    def read(self) -> tuple[bool, np.ndarray | None]:
        raise NotImplementedError

    def rewind(self) -> bool:
        return False

    def release(self) -> None:
        pass


class _Capture(_Source):
    def __init__(self, cap: cv2.VideoCapture, kind: str) -> None:
        self.cap = cap
        self.kind = kind

    def read(self) -> tuple[bool, np.ndarray | None]:
        try:
            ok, frame = self.cap.read()
        except cv2.error:
            return False, None
        return bool(ok) and frame is not None, frame

    def rewind(self) -> bool:
        return bool(self.cap.set(cv2.CAP_PROP_POS_FRAMES, 0))

    def release(self) -> None:
        self.cap.release()


class _Folder(_Source):
    kind = "folder"

    def __init__(self, files: list[Path], mono: bool) -> None:
        self.files = files
        self.k = 0
        self.flag = cv2.IMREAD_GRAYSCALE if mono else cv2.IMREAD_COLOR
        self.unreadable: Path | None = None

    def read(self) -> tuple[bool, np.ndarray | None]:
        if self.k >= len(self.files):
            return False, None
        path = self.files[self.k]
        self.k += 1
        img = cv2.imread(str(path), self.flag)
        if img is None:
            self.unreadable = path
            return False, None
        return True, img

    def rewind(self) -> bool:
        self.k = 0
        return True


def _open_device(path: str) -> cv2.VideoCapture | None:
    """Open a V4L2 device. OpenCV's V4L2 backend opens by index (some builds refuse a
    path: "can't be used to capture by name"), so /dev/videoN — or a symlink to it, such
    as /dev/v4l/by-id/... — is opened as index N; other paths by name."""
    real = os.path.realpath(path)
    m = re.fullmatch(r"/dev/video(\d+)", real)
    attempts: list[tuple[Any, int]] = [(int(m.group(1)), cv2.CAP_V4L2)] if m else []
    attempts += [(path, cv2.CAP_V4L2), (path, cv2.CAP_ANY)]
    for target, api in attempts:
        try:
            cap = cv2.VideoCapture(target, api)
        except cv2.error:
            continue
        if cap.isOpened():
            return cap
        cap.release()
    return None


class CameraDevice(Component):
    """Images from a V4L2 camera (/dev/videoN), a video file or a folder of images,
    stamped into simulation time on arrival: the newest frame that arrived since the
    previous step is sent at each step."""

    outputs = (Port("image", vision_pb2.ImageHeader,
                    "the newest frame since the previous step (pixels attached, row-major)",
                    attachment=True),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        source: Path = param(doc="/dev/videoN (V4L2), a video file, or a folder of images "
                                 "(sorted by name); relative to the rig file's folder",
                             device=True)
        width: int = param(0, "width of the images sent (0: the source's; one of width and "
                              "height 0: keep the aspect ratio)", unit="px")
        height: int = param(0, "height of the images sent (0: the source's)", unit="px")
        fps: float = param(0.0, "device: frame rate asked for (0: its default); file or folder "
                                "with pacing 'wall': frames released per second of wall clock "
                                "(0: a video's own rate)", unit="Hz")
        exposure_s: float = param(0.0, "device: manual exposure time (0: automatic exposure); "
                                       "file or folder: the exposure written in the headers",
                                  unit="s")
        encoding: str = param("mono8", "pixel encoding sent: mono8 or bgr8")
        pacing: str = param("wall", "'wall': frames arrive on the wall clock (a device, or a "
                                    "file played live); 'step': files only, one frame per step")
        loop: bool = param(False, "file or folder: start again at the end (else: no more images)")
        fourcc: str = param("", "device: pixel format asked for, e.g. MJPG or YUYV (empty: default)")
        first_frame_timeout_s: float = param(5.0, "initialize fails when the source gives no "
                                                  "frame within this time", unit="s")
        stale_timeout_s: float = param(2.0, "device: a step fails when no frame has arrived "
                                            "for this long", unit="s")
        frame_id: str = param("", "frame_id of the image headers (empty: the instance name, "
                                  "as the simulated overhead camera)")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Encodings, pacing, sizes, times, and that the source exists (also by ``moonpool check``)."""
        if params.encoding not in ENCODINGS:
            raise ParameterError(f"encoding '{params.encoding}' is not supported",
                                 fix=f"use one of {', '.join(ENCODINGS)}")
        if params.pacing not in PACINGS:
            raise ParameterError(f"pacing '{params.pacing}' is not one of {', '.join(PACINGS)}",
                                 fix="use 'wall' (live) or 'step' (replay)")
        if params.width < 0 or params.height < 0:
            raise ParameterError("width and height must be >= 0",
                                 fix="give the image size in pixels, or 0 for the source's")
        for key in ("fps", "exposure_s"):
            v = getattr(params, key)
            if not (math.isfinite(v) and v >= 0):
                raise ParameterError(f"{key} must be >= 0, got {v}",
                                     fix=f"give {key} >= 0 (0: automatic / the source's)")
        for key in ("first_frame_timeout_s", "stale_timeout_s"):
            v = getattr(params, key)
            if not (math.isfinite(v) and v > 0):
                raise ParameterError(f"{key} must be > 0, got {v}",
                                     fix=f"give {key} in seconds")
        if params.fourcc and len(params.fourcc) != 4:
            raise ParameterError(f"fourcc must have 4 characters, got '{params.fourcc}'",
                                 fix="e.g. MJPG or YUYV, or leave it empty")
        src = params.source
        text = os.path.normpath(str(src))
        if not src.exists():  # a device: only that its path exists (nothing is opened)
            if text.startswith("/dev/"):
                raise ParameterError(f"source: camera device {text} does not exist",
                                     fix="plug the camera in and check its path (ls /dev/video*; "
                                         "v4l2-ctl --list-devices)")
            raise ParameterError(f"source: camera source {text} does not exist (no such file or "
                                 "folder)",
                                 fix="give /dev/videoN, a video file or a folder of images "
                                     "(relative paths start at the rig file's folder); the "
                                     "HIL rigs' video is made by scripts/record_pool_video.py "
                                     "(docs/devices.md)")

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        name = self.name
        self.params = params
        self.source: _Source | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._latest: _Frame | None = None
        self._error: str | None = None
        self._ended = False
        self._ended_logged = False
        self.arrived = 0
        self.sent = 0
        self.sent_index = -1
        self.size: tuple[int, int] | None = None  # (width, height) sent
        self.exposure_reported = 0.0

    # -- opening -------------------------------------------------------------------

    def _fail(self, message: str, fix: str) -> StepFailed:
        return StepFailed(message, component=self.name, fix=fix)

    def _open(self) -> _Source:
        p = self.params
        src = p.source
        text = str(src)
        is_device = text.startswith("/dev/")
        if not src.exists():
            if is_device:
                raise self._fail(f"camera device {text} does not exist",
                                 fix="plug the camera in and check its path (ls /dev/video*; "
                                     "v4l2-ctl --list-devices)")
            raise self._fail(f"camera source {text} does not exist (no such file or folder)",
                             fix="give /dev/videoN, a video file or a folder of images; "
                                 "relative paths start at the rig file's folder")
        if src.is_dir():
            files = sorted(f for f in src.iterdir()
                           if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
            if not files:
                raise self._fail(f"camera source folder {text} contains no images",
                                 fix=f"put images ({' '.join(IMAGE_SUFFIXES)}) in it")
            if p.pacing == "wall" and p.fps <= 0:
                raise ParameterError(
                    f"the image folder {text} is played on the wall clock (pacing 'wall') but "
                    "fps is 0", component=self.name,
                    fix="give fps (images per second), or pacing = 'step' (one per step)")
            return _Folder(files, p.encoding == "mono8")
        if is_device or src.is_char_device():
            if p.pacing == "step":
                raise ParameterError(f"pacing 'step' needs a file or folder; {text} is a device",
                                     component=self.name, fix="use pacing = 'wall'")
            cap = _open_device(text)
            if cap is None:
                raise self._fail(f"cannot open camera device {text} (OpenCV V4L2 backend)",
                                 fix="check that it is a video capture device (v4l2-ctl "
                                     "--list-devices), that you may read it (group 'video'), "
                                     "and that no other program uses it")
            self._setup_device(cap)
            return _Capture(cap, "device")
        try:
            cap = cv2.VideoCapture(text)
        except cv2.error as exc:
            raise self._fail(f"cannot read video file {text}: {exc}",
                             fix="give a video OpenCV can decode (e.g. MP4/H.264, AVI/MJPG)") from exc
        if not cap.isOpened():
            cap.release()
            raise self._fail(f"cannot read video file {text}: OpenCV cannot open it (not a "
                             "video, or an unsupported container or codec)",
                             fix="give a video OpenCV can decode (e.g. MP4/H.264, AVI/MJPG), "
                                 "a folder of images, or /dev/videoN")
        return _Capture(cap, "file")

    def _setup_device(self, cap: cv2.VideoCapture) -> None:
        p = self.params
        if p.fourcc:
            cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*p.fourcc))
        if p.width:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, p.width)
        if p.height:
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, p.height)
        if p.fps:
            cap.set(cv2.CAP_PROP_FPS, p.fps)
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not a queue of old ones
        if p.exposure_s > 0:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2_EXPOSURE_MANUAL
            if not cap.set(cv2.CAP_PROP_EXPOSURE, p.exposure_s / V4L2_EXPOSURE_UNIT_S):
                log.warning("%s: the device refused exposure %g s", p.source, p.exposure_s)
            self.exposure_reported = cap.get(cv2.CAP_PROP_EXPOSURE) * V4L2_EXPOSURE_UNIT_S
        else:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 3)  # V4L2_EXPOSURE_APERTURE_PRIORITY (auto)

    def _target_size(self, frame: np.ndarray) -> tuple[int, int]:
        p = self.params
        h0, w0 = frame.shape[:2]
        w, h = p.width, p.height
        if not w and not h:
            return w0, h0
        if not h:
            h = max(1, round(w * h0 / w0))
        elif not w:
            w = max(1, round(h * w0 / h0))
        if abs((w / h) / (w0 / h0) - 1) > 0.01:
            raise ParameterError(
                f"{p.source} delivers {w0}x{h0} px; {w}x{h} has another aspect ratio and "
                "would distort the image", component=self.name,
                fix=f"ask for a size with the aspect ratio {w0}:{h0} (or set only width or "
                    "height), or pick a device mode of that aspect (v4l2-ctl --list-formats-ext)")
        return w, h

    # -- lifecycle -------------------------------------------------------------------

    def initialize(self, start_time_ns: int) -> None:
        p = self.params
        source = self._open()
        self.source = source
        try:
            first = self._first_frame(source)
            self.size = self._target_size(first)
            if source.kind != "device":
                self.exposure_reported = p.exposure_s
            self._started_mono = time.monotonic()
            if p.pacing == "wall":
                # A device's first frame is dropped: its arrival time would be stale.
                keep = None if source.kind == "device" else first
                self._thread = threading.Thread(target=self._run, args=(keep,),
                                                name=f"camera {p.source}", daemon=True)
                self._thread.start()
            else:
                self._pending_first: np.ndarray | None = first
        except BaseException:
            self._close()
            raise
        log.info("%s: %s source, %dx%d %s, pacing %s", p.source, source.kind, *self.size,
                 p.encoding, p.pacing)

    def _first_frame(self, source: _Source) -> np.ndarray:
        p = self.params
        deadline = time.monotonic() + p.first_frame_timeout_s
        while True:
            ok, frame = source.read()
            if ok and frame is not None:
                return frame
            if isinstance(source, _Folder) and source.unreadable is not None:
                raise self._fail(f"cannot read image {source.unreadable} of camera source "
                                 f"{p.source}", fix="replace or remove the damaged file")
            if source.kind != "device":
                raise self._fail(f"cannot read video file {p.source}: it has no decodable frame",
                                 fix="check the file (ffprobe); give a video OpenCV can decode")
            if time.monotonic() > deadline:
                raise self._fail(f"camera device {p.source} gave no frame within "
                                 f"{p.first_frame_timeout_s:g} s",
                                 fix="check the camera (v4l2-ctl --all), its format (fourcc) "
                                     "and resolution, or raise first_frame_timeout_s")
            time.sleep(0.01)

    def _run(self, first: np.ndarray | None) -> None:
        """Reader thread (pacing 'wall'): keep the newest frame and its arrival time."""
        p = self.params
        source = self.source
        assert source is not None
        if source.kind == "file":
            rate = p.fps or float(source.cap.get(cv2.CAP_PROP_FPS) or 0) or 30.0
        else:
            rate = p.fps
        period = 1.0 / rate if source.kind != "device" else 0.0
        t0 = time.monotonic()
        index = 0
        frame: np.ndarray | None = first
        failures_since = None
        while not self._stop.is_set():
            if frame is None:
                ok, frame = source.read()
                if not ok:
                    frame = None
                    if source.kind == "device":
                        failures_since = failures_since or time.monotonic()
                        if time.monotonic() - failures_since > p.stale_timeout_s:
                            self._set_error(f"camera device {p.source} stopped delivering frames "
                                            f"(no frame for {p.stale_timeout_s:g} s)")
                            return
                        time.sleep(0.005)
                        continue
                    if isinstance(source, _Folder) and source.unreadable is not None:
                        self._set_error(f"cannot read image {source.unreadable} of camera "
                                        f"source {p.source}")
                        return
                    if p.loop and source.rewind():
                        continue
                    with self._lock:
                        self._ended = True
                    return
                failures_since = None
            if period:
                release = t0 + index * period
                wait = release - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    return
            arrived = _Frame(frame, index, time.time_ns(), time.monotonic())
            with self._lock:
                self._latest = arrived
                self.arrived += 1
            index += 1
            frame = None

    def _set_error(self, message: str) -> None:
        with self._lock:
            self._error = message

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any] | None:
        p = self.params
        if p.pacing == "step":
            frame = self._next_stepped()
        else:
            with self._lock:
                frame, error, ended = self._latest, self._error, self._ended
            if error is not None:
                self._close()
                raise self._fail(error, fix="check the camera and its cable; see the log")
            if frame is None or frame.index == self.sent_index:
                if self.source is not None and self.source.kind == "device":
                    last = frame.arrival_mono_s if frame is not None else self._started_mono
                    if time.monotonic() - last > p.stale_timeout_s:
                        self._close()
                        raise self._fail(f"camera device {p.source} stopped delivering frames "
                                         f"(no frame for {time.monotonic() - last:.1f} s)",
                                         fix="check the camera and its cable")
                if ended and not self._ended_logged:
                    self._ended_logged = True
                    log.info("%s: end of the source; no more images", p.source)
                return None
        if frame is None:
            return None
        self.sent_index = frame.index
        self.sent += 1
        return {"image": self._message(t_ns, frame)}

    def _next_stepped(self) -> _Frame | None:
        first, self._pending_first = getattr(self, "_pending_first", None), None
        if first is not None:
            pixels = first
        else:
            source = self.source
            if source is None or self._ended:
                return None
            ok, pixels = source.read()
            if not ok and isinstance(source, _Folder) and source.unreadable is not None:
                raise self._fail(f"cannot read image {source.unreadable} of camera source "
                                 f"{self.params.source}", fix="replace or remove the damaged file")
            if not ok and self.params.loop and source.rewind():
                ok, pixels = source.read()
            if not ok or pixels is None:
                self._ended = True
                log.info("%s: end of the source; no more images", self.params.source)
                return None
        self.arrived += 1
        return _Frame(pixels, self.arrived - 1, time.time_ns(), time.monotonic())

    def _message(self, t_ns: int, frame: _Frame) -> Attached:
        p = self.params
        assert self.size is not None
        img = frame.pixels
        channels = ENCODINGS[p.encoding]
        if img.ndim == 3 and img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
        if img.dtype != np.uint8:  # 16-bit images from a folder: their significant bits
            img = uint16_to_8bit(img) if img.dtype == np.uint16 else cv2.convertScaleAbs(img)
        if channels == 1 and img.ndim == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        elif channels == 3 and img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        w, h = self.size
        if (img.shape[1], img.shape[0]) != (w, h):
            shrink = w < img.shape[1]
            img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink
                             else cv2.INTER_LINEAR)
        img = np.ascontiguousarray(img)
        header = vision_pb2.ImageHeader(
            header=self.header(t_ns, p.frame_id or self.name), width=w, height=h,
            encoding=p.encoding,
            step_bytes=w * channels, exposure_s=self.exposure_reported,
            arrival_unix_ns=frame.arrival_unix_ns,
        )
        return Attached(header, img)

    def _close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        if self.source is not None:
            self.source.release()
            self.source = None

    def terminate(self) -> dict[str, Any]:
        self._close()
        arrived = getattr(self, "arrived", 0)
        sent = getattr(self, "sent", 0)
        return {"frames_arrived": arrived, "frames_sent": sent,
                "frames_skipped": max(0, arrived - sent)}
