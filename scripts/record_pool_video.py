#!/usr/bin/env python3
"""Record a video of the simulated overhead camera, for the camera device of the HIL rigs.

    .venv/bin/python scripts/record_pool_video.py [--seconds 60] [--out PATH]
        [--format mjpg|ffv1|pgm|png] [--rig rigs/pool.toml] [--seed N] [--set K=V]...
        [--keep-run DIR] [--no-evaluate]

1. Runs RIG (default ``rigs/pool.toml``) for ``--seconds`` of simulated time, flat
   out, with the camera's pixels recorded (``--set 'run.record_exclude=[]'``).
2. Writes the ``/camera/image`` frames, in order, to a video at the camera's rate
   (30 fps for the pool rig), or to a folder of images, and reads it back to measure
   what the codec changed (mean and largest |pixel difference|, PSNR):

   ========  ==========================  =================================================
   format    output (default)            codec
   ========  ==========================  =================================================
   mjpg      runs/hil/pool_camera.avi    Motion-JPEG (OpenCV's FFmpeg, its fixed quality):
                                         lossy, ~35 kB a frame, 2-3 ms to decode
   ffv1      runs/hil/pool_camera.mkv    FFV1: lossless, ~0.45 MB a frame, ~12 ms to decode
   pgm       runs/hil/pool_camera/       one PGM per frame: lossless, 0.9 MB, 0.4 ms to read
   png       runs/hil/pool_camera/       one PNG per frame: lossless, 0.5 MB, 5 ms to read
   ========  ==========================  =================================================

3. Unless ``--no-evaluate``: runs the localizer twice on the recorded inputs — once on
   the original frames (the camera replayed from the recording), once on the decoded
   video (the camera device, ``pacing = "step"``) — with its pressure, IMU and truth
   inputs replayed from the same recording, so only the pixels differ. Prints, for
   each, the fraction of frames with a valid pose and the horizontal and yaw errors
   against the recorded truth, and the pose difference frame by frame. The run on
   the original frames must reproduce the recorded localizer output exactly (checked
   by digest: it proves the evaluation feeds the localizer what the rig did).

Writes ``OUT.json`` beside the output (for a folder: ``pool_camera.json`` next to it)
with the rig, seed, frames, codec, pixel error and evaluation. The simulated run goes
to a temporary folder, deleted at the end, unless ``--keep-run DIR``.

Frame k of the video is the camera's image at its k-th step (t = k/30 s from the
run's start): the camera device with ``pacing = "step"`` sends frame k at its step k,
so the video's time is the simulation time of the HIL rig (rigs/hil/pool_camera.toml).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FORMATS = {  # format -> (default output, fourcc or image suffix)
    "mjpg": ("runs/hil/pool_camera.avi", "MJPG"),
    "ffv1": ("runs/hil/pool_camera.mkv", "FFV1"),
    "pgm": ("runs/hil/pool_camera", ".pgm"),
    "png": ("runs/hil/pool_camera", ".png"),
}


def _frames(recording: Path, topic: str):
    """(log_time_ns, H x W[ x 3] uint8 array) of every message on topic, in order."""
    from moonpool.orchestrator.recording import decode_recorded, read_recording

    for m in read_recording(recording):
        if m.topic != topic:
            continue
        hdr = decode_recorded(m)
        enc = hdr.encoding or "mono8"
        if enc not in ("mono8", "bgr8", "rgb8"):
            raise SystemExit(f"{topic}: encoding {enc} is not supported (mono8, bgr8, rgb8)")
        if m.attachment is None:
            raise SystemExit(f"{topic} at t={m.log_time_ns / 1e9:g} s has no pixels: was the run "
                             "made with run.record_exclude = []?")
        ch = 1 if enc == "mono8" else 3
        w, h = int(hdr.width), int(hdr.height)
        step = int(hdr.step_bytes) or w * ch
        buf = np.frombuffer(m.attachment, np.uint8)
        rows = np.lib.stride_tricks.as_strided(buf, shape=(h, w * ch), strides=(step, 1))
        img = np.ascontiguousarray(rows).reshape(h, w, ch)
        if enc == "rgb8":
            img = img[..., ::-1]
        yield m.log_time_ns, (img[..., 0] if ch == 1 else img)


class _Sink:
    """A cv2.VideoWriter or a folder of numbered images."""

    def __init__(self, out: Path, fmt: str, fps: float, size: tuple[int, int], color: bool):
        self.out, self.fmt = out, fmt
        code = FORMATS[fmt][1]
        self.writer = None
        if code.startswith("."):
            if out.exists() and any(out.iterdir()):
                shutil.rmtree(out)
            out.mkdir(parents=True, exist_ok=True)
            self.suffix = code
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            self.writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*code), fps, size,
                                          isColor=color)
            if not self.writer.isOpened():
                raise SystemExit(f"OpenCV cannot write {code} to {out} (this OpenCV build lacks "
                                 "the codec or the container); try --format mjpg (.avi)")
        self.k = 0

    def write(self, img: np.ndarray) -> None:
        if self.writer is not None:
            self.writer.write(img)
        elif not cv2.imwrite(str(self.out / f"{self.k:06d}{self.suffix}"), img):
            raise SystemExit(f"cannot write an image into {self.out}")
        self.k += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.release()

    def reader(self):
        """Decoded frames, as the camera device decodes them (mono when the frames are)."""
        if self.writer is not None:
            cap = cv2.VideoCapture(str(self.out))
            try:
                while True:
                    ok, img = cap.read()
                    if not ok:
                        return
                    yield img
            finally:
                cap.release()
        for f in sorted(self.out.glob("*" + self.suffix)):
            yield cv2.imread(str(f), cv2.IMREAD_UNCHANGED)

    def nbytes(self) -> int:
        if self.writer is not None:
            return self.out.stat().st_size
        return sum(f.stat().st_size for f in self.out.iterdir())


def _as(img: np.ndarray, like: np.ndarray) -> np.ndarray:
    if img.ndim == 3 and like.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if img.ndim == 2 and like.ndim == 3:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return img


# ------------------------------------------------------------------- evaluation


def _evaluation_rig(rig, recording: Path, camera: str, localizer: str, video: Path | None,
                    encoding: str):
    """The localizer of ``rig`` alone, its inputs replayed from ``recording``; the camera
    replayed too (``video`` None) or the camera device playing ``video``."""
    from moonpool.orchestrator.rig import ComponentConfig

    feeds = [c for c in rig.connections if c.target == localizer]
    upstream = {c.source for c in feeds}
    if camera not in upstream:
        raise SystemExit(f"no connection from '{camera}' into '{localizer}' in {rig.path}")
    comps = []
    for c in rig.components:
        if c.name == localizer:
            comps.append(c)
        elif c.name == camera and video is not None:
            comps.append(ComponentConfig(
                name=camera, entry="devices.camera", placement="inproc", schedule=c.schedule,
                parameters={"source": str(video), "pacing": "step", "encoding": encoding},
                base_dir=c.base_dir))
        elif c.name in upstream:
            comps.append(dataclasses.replace(c, placement="replay", recording=recording,
                                             source="", group=""))
    names = [c.name for c in comps]
    order = tuple(n for n in (rig.run.order or names) if n in names) \
        if rig.run.algorithm == "gauss-seidel" else ()
    run = dataclasses.replace(rig.run, order=order, record_exclude=(f"{camera}.image",),
                              plots=False, realtime=None, record=True)
    return dataclasses.replace(
        rig, name=f"{rig.name}-localizer-eval", run=run, components=tuple(comps),
        connections=tuple(feeds), plots=(),
        description=f"{localizer} of {rig.path.name} on "
                    + (f"the video {video}" if video else "the recorded frames"),
        source_text=rig.source_text + f"\n# scripts/record_pool_video.py: only '{localizer}', "
                    f"its inputs replayed from {recording}"
                    + (f"; camera: devices.camera playing {video}\n" if video else "\n"))


def _poses(recording: Path, localizer: str) -> dict[int, tuple]:
    """image time -> (valid, x, y, yaw, true x, true y, true yaw) of the localizer's poses."""
    from moonpool.orchestrator.recording import decode_recorded, read_recording

    out = {}
    for m in read_recording(recording):
        if m.topic == f"/{localizer}/pose":
            p = decode_recorded(m)
            out[p.header.sim_time_ns] = (p.validity.valid, p.position_m.x, p.position_m.y,
                                         p.yaw_rad, p.true_position_m.x, p.true_position_m.y,
                                         p.true_yaw_rad)
    return out


def _wrap(a: np.ndarray) -> np.ndarray:
    from moonpool.components.sdk.frames import wrap_angle

    return wrap_angle(a)


def _score(poses: dict[int, tuple]) -> dict:
    rows = np.array([v for _, v in sorted(poses.items())], float).reshape(-1, 7)
    valid = rows[:, 0] > 0
    e = np.hypot(rows[valid, 1] - rows[valid, 4], rows[valid, 2] - rows[valid, 5])
    ey = np.abs(_wrap(rows[valid, 3] - rows[valid, 6]))
    f = (lambda x: float(x)) if e.size else (lambda x: math.nan)
    return {
        "images": len(rows), "valid": int(valid.sum()),
        "valid_fraction": float(valid.mean()) if len(rows) else math.nan,
        "horizontal_rmse_m": f(np.sqrt(np.mean(e ** 2)) if e.size else 0),
        "horizontal_p95_m": f(np.percentile(e, 95) if e.size else 0),
        "horizontal_max_m": f(e.max() if e.size else 0),
        "yaw_rmse_rad": f(np.sqrt(np.mean(ey ** 2)) if ey.size else 0),
    }


def _difference(a: dict[int, tuple], b: dict[int, tuple]) -> dict:
    both = [t for t in a if t in b and a[t][0] and b[t][0]]
    d = np.array([math.hypot(a[t][1] - b[t][1], a[t][2] - b[t][2]) for t in both])
    dy = np.abs(_wrap(np.array([a[t][3] - b[t][3] for t in both])))
    lost = sum(1 for t in a if a[t][0] and not (t in b and b[t][0]))
    gained = sum(1 for t in b if b[t][0] and not (t in a and a[t][0]))
    return {
        "frames_valid_in_both": len(both), "valid_only_on_original": lost,
        "valid_only_on_decoded": gained,
        "horizontal_rms_m": float(np.sqrt(np.mean(d ** 2))) if d.size else math.nan,
        "horizontal_max_m": float(d.max()) if d.size else math.nan,
        "yaw_rms_rad": float(np.sqrt(np.mean(dy ** 2))) if dy.size else math.nan,
    }


def evaluate(rig, recording: Path, video: Path, encoding: str, camera: str, localizer: str,
             work: Path) -> dict:
    from moonpool.orchestrator.recording import (
        component_topics,
        digest_of_recording,
        recording_info,
    )
    from moonpool.orchestrator.rigfile import check_rig
    from moonpool.orchestrator.run import run_rig

    results = {}
    for label, source in (("original", None), ("decoded", video)):
        erig = _evaluation_rig(rig, recording, camera, localizer, source, encoding)
        problems = check_rig(erig)
        if problems:
            raise SystemExit("evaluation rig: " + "; ".join(str(p) for p in problems))
        t0 = time.monotonic()
        res = run_rig(erig, work / f"eval-{label}")
        if not res.ok:
            raise SystemExit(f"evaluation on the {label} frames failed: {res.summary['error']}")
        rec = work / f"eval-{label}" / "recording.mcap"
        results[label] = {"recording": rec, "poses": _poses(rec, localizer),
                          "wall_s": time.monotonic() - t0}
    topics = component_topics(recording_info(recording).topics, localizer)
    same = digest_of_recording(recording, topics) == \
        digest_of_recording(results["original"]["recording"], topics)
    return {
        "reproduces_the_recorded_localizer": same,
        "original": _score(results["original"]["poses"]),
        "decoded": _score(results["decoded"]["poses"]),
        "decoded_vs_original": _difference(results["original"]["poses"],
                                           results["decoded"]["poses"]),
    }


# ------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="simulated seconds (default 60)")
    ap.add_argument("--format", choices=sorted(FORMATS), default="mjpg",
                    help="mjpg (.avi, default), ffv1 (.mkv, lossless), pgm or png (a folder)")
    ap.add_argument("--out", type=Path, help="video file or image folder (default by format: "
                                             "runs/hil/pool_camera.avi, .mkv or pool_camera/)")
    ap.add_argument("--rig", type=Path, default=ROOT / "rigs" / "pool.toml")
    ap.add_argument("--seed", type=int, help="run.seed (default: the rig's)")
    ap.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                    help="override a rig key (repeatable)")
    ap.add_argument("--camera", default="camera", help="the camera component (default camera)")
    ap.add_argument("--localizer", default="localizer", help="the localizer (default localizer)")
    ap.add_argument("--keep-run", type=Path, metavar="DIR",
                    help="keep the simulated run (with the frames) in DIR")
    ap.add_argument("--no-evaluate", action="store_true", help="skip the localizer comparison")
    args = ap.parse_args(argv)

    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    out = (args.out or ROOT / FORMATS[args.format][0]).resolve()
    rig = load_and_check(args.rig, ["run.record_exclude=[]", "run.plots=false", *args.overrides],
                         until_s=args.seconds, seed=args.seed)
    cam = rig.component(args.camera)
    fps = float(cam.schedule.rate_hz)
    work = Path(tempfile.mkdtemp(prefix="moonpool-video-"))
    run_dir = args.keep_run or work / "run"
    try:
        t0 = time.monotonic()
        print(f"simulating {args.rig} for {args.seconds:g} s (seed {rig.run.seed}), camera "
              f"pixels recorded -> {run_dir}", file=sys.stderr)
        result = run_rig(rig, run_dir)
        if not result.ok:
            print(f"the simulation failed: {result.summary['error']}", file=sys.stderr)
            return 1
        recording = run_dir / "recording.mcap"
        print(f"  {time.monotonic() - t0:.0f} s; writing {out} ({args.format})", file=sys.stderr)

        sink = None
        times, first = [], None
        for t_ns, img in _frames(recording, f"/{args.camera}/image"):
            if sink is None:
                first = img
                sink = _Sink(out, args.format, fps, (img.shape[1], img.shape[0]), img.ndim == 3)
            sink.write(img)
            times.append(t_ns)
        if sink is None:
            print(f"no /{args.camera}/image frames in {recording}", file=sys.stderr)
            return 1
        sink.close()
        steps = np.diff(np.array(times, dtype=np.int64))
        expected = [cam.schedule.instant(k) for k in range(len(times))]
        regular = times == expected or times == expected[1:] + [cam.schedule.instant(len(times))]
        if not regular:
            print(f"warning: the frames are not one per camera step (spacing {steps.min()}-"
                  f"{steps.max()} ns): the video's time will not be the simulation time",
                  file=sys.stderr)

        print(f"  {time.monotonic() - t0:.0f} s; reading it back", file=sys.stderr)
        # What the codec changed, frame by frame.
        sq, absum, worst, n, count = 0.0, 0.0, 0, 0, 0
        for (_, orig), dec in zip(_frames(recording, f"/{args.camera}/image"), sink.reader(),
                                  strict=False):
            d = _as(dec, orig).astype(np.int16) - orig.astype(np.int16)
            sq += float(np.sum(d.astype(np.int64) ** 2))
            absum += float(np.abs(d).sum())
            worst = max(worst, int(np.abs(d).max()))
            n += d.size
            count += 1
        mse = sq / n
        pixels = {"frames_decoded": count, "mean_abs_dn": absum / n, "max_abs_dn": worst,
                  "psnr_db": math.inf if mse == 0 else 10 * math.log10(255 ** 2 / mse)}
        info = {
            "rig": str(args.rig), "seed": rig.run.seed, "seconds": args.seconds,
            "overrides": args.overrides, "camera": args.camera, "frames": len(times),
            "fps": fps, "first_frame_s": times[0] / 1e9, "one_frame_per_step": regular,
            "width": int(first.shape[1]), "height": int(first.shape[0]),
            "encoding": "mono8" if first.ndim == 2 else "bgr8", "format": args.format,
            "codec": FORMATS[args.format][1], "opencv": cv2.__version__,
            "bytes": sink.nbytes(), "pixels": pixels,
        }
        print(f"  {len(times)} frames {info['width']}x{info['height']} {info['encoding']} at "
              f"{fps:g} fps, {info['bytes'] / 1e6:.1f} MB ({info['bytes'] / len(times) / 1e3:.0f} "
              f"kB a frame); decoded {count}: |pixel error| mean {pixels['mean_abs_dn']:.2f} DN, "
              f"max {worst} DN, PSNR {pixels['psnr_db']:.1f} dB")
        if count != len(times):
            print(f"warning: {len(times)} frames written, {count} decoded", file=sys.stderr)

        if not args.no_evaluate:
            t1 = time.monotonic()
            print(f"  {t1 - t0:.0f} s; running the localizer on the original and the decoded "
                  "frames", file=sys.stderr)
            ev = evaluate(rig, recording, out, info["encoding"], args.camera, args.localizer,
                          work)
            info["localizer"] = ev
            print(f"localizer on the recorded inputs ({time.monotonic() - t1:.0f} s), the "
                  f"original run reproduced exactly: {ev['reproduces_the_recorded_localizer']}")
            for label in ("original", "decoded"):
                s = ev[label]
                print(f"  {label:8s} frames: valid {s['valid']}/{s['images']} "
                      f"({s['valid_fraction'] * 100:.1f} %), horizontal error RMS "
                      f"{s['horizontal_rmse_m'] * 1e3:.2f} mm, p95 "
                      f"{s['horizontal_p95_m'] * 1e3:.2f} mm, max "
                      f"{s['horizontal_max_m'] * 1e3:.2f} mm, yaw RMS "
                      f"{math.degrees(s['yaw_rmse_rad']):.3f}°")
            d = ev["decoded_vs_original"]
            print(f"  decoded - original, frame by frame: {d['frames_valid_in_both']} valid in "
                  f"both (only original {d['valid_only_on_original']}, only decoded "
                  f"{d['valid_only_on_decoded']}), horizontal RMS {d['horizontal_rms_m'] * 1e3:.3f}"
                  f" mm, max {d['horizontal_max_m'] * 1e3:.3f} mm, yaw RMS "
                  f"{math.degrees(d['yaw_rms_rad']):.4f}°")
        meta = out.with_name(out.name + ".json") if out.suffix else out.with_suffix(".json")
        from moonpool.orchestrator.summary import write_summary

        write_summary(meta, info)
        print(f"wrote {out} and {meta}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
