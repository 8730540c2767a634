"""The camera device component on real files written here with OpenCV: an image folder
and a video file, replayed one frame per step and played live on the wall clock;
resizing and encodings; a missing device, a missing or unreadable file, an empty
folder and a damaged image fail at initialize with a message naming them."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest
from moonpool.components.sdk import Attached, wire
from moonpool.components.bridges.camera_device import CameraDevice
from moonpool.components.sdk.errors import ParameterError, StepFailed
from moonpool.components.sdk.host import ComponentHost
from moonpool.v1 import lifecycle_pb2 as lc

W, H = 64, 48
PERIOD_NS = 20_000_000


def _image(k: int) -> np.ndarray:
    """Frame k: a flat grey level 20 + 20 k with a white square whose column depends on k."""
    img = np.full((H, W, 3), 20 + 20 * k, np.uint8)
    img[10:20, 4 * k:4 * k + 10] = 255
    return img


def _host(tmp_path, **params) -> ComponentHost:
    host = ComponentHost(CameraDevice(), base_dir=tmp_path)
    host.configure(lc.Configure(instance_name="camera", seed=0, period_ns=PERIOD_NS, parameters=[
        lc.NamedParameter(name=k, value=wire.to_parameter_value(v)) for k, v in params.items()]))
    return host


def _images(host, steps: int, sleep_s: float = 0.0) -> list:
    out = []
    for k in range(steps):
        t_wall = time.time_ns()
        for o in host.step(k * PERIOD_NS, PERIOD_NS, {}):
            out.append((k, t_wall, o.message, o.attachment))
        time.sleep(sleep_s)
    return out


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "frames"
    d.mkdir()
    for k in range(5):
        cv2.imwrite(str(d / f"frame_{k:03d}.png"), _image(k))
    (d / "notes.txt").write_text("not an image")  # ignored
    return d


@pytest.fixture
def video(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (W, H))
    assert writer.isOpened()
    for k in range(10):
        writer.write(_image(k))
    writer.release()
    return path


def test_image_folder_replayed_one_frame_per_step(tmp_path, folder):
    host = _host(tmp_path, source="frames", pacing="step", encoding="bgr8")  # relative path
    host.initialize(0)
    got = _images(host, 7)
    metrics = host.terminate()
    assert [k for k, *_ in got] == [0, 1, 2, 3, 4]  # then the folder has ended: nothing
    for k, t_wall, hdr, pixels in got:
        assert hdr.header.sim_time_ns == k * PERIOD_NS and hdr.header.source == "camera"
        assert hdr.header.seq == k and hdr.header.frame_id == "camera"  # the instance name
        assert (hdr.width, hdr.height, hdr.encoding, hdr.step_bytes) == (W, H, "bgr8", 3 * W)
        assert hdr.arrival_unix_ns >= t_wall
        img = np.frombuffer(pixels, np.uint8).reshape(H, W, 3)
        assert np.array_equal(img, _image(k))  # PNG is lossless
    assert metrics == {"frames_arrived": 5, "frames_sent": 5, "frames_skipped": 0}


def test_image_folder_mono8_resized_and_looped(tmp_path, folder):
    from moonpool.components.localization.localizer import image_array

    host = _host(tmp_path, source=str(folder), pacing="step", width=32, loop=True)
    host.initialize(0)
    got = _images(host, 7)
    host.terminate()
    assert len(got) == 7
    for i, (_, _, hdr, pixels) in enumerate(got):
        assert (hdr.width, hdr.height, hdr.encoding, hdr.step_bytes) == (32, 24, "mono8", 32)
        img = np.frombuffer(pixels, np.uint8).reshape(24, 32)
        k = i % 5  # looped after 5
        assert img[20, 31] == 20 + 20 * k  # the background level of frame k
        # what the localizer sees, through its own decoder (as from the simulated camera)
        assert np.array_equal(image_array(Attached(hdr, pixels)), img)


def test_video_file_replayed_per_step_and_played_live(tmp_path, video):
    host = _host(tmp_path, source=str(video), pacing="step")
    host.initialize(0)
    stepped = _images(host, 12)
    host.terminate()
    assert len(stepped) == 10
    levels = [float(np.frombuffer(px, np.uint8).reshape(H, W)[40, 50]) for *_, px in stepped]
    assert levels == pytest.approx([20 + 20 * k for k in range(10)], abs=6)  # MJPEG is lossy

    # Live: the file releases 100 frames/s of wall clock while steps come every ~30 ms,
    # so each step sends the newest frame that arrived since the last one.
    host = _host(tmp_path, source=str(video), fps=100.0, encoding="bgr8")
    host.initialize(0)
    live = _images(host, 8, sleep_s=0.03)
    metrics = host.terminate()
    assert 2 <= len(live) <= 8
    indices = [round((float(np.frombuffer(px, np.uint8).reshape(H, W, 3)[40, 50, 0]) - 20) / 20)
               for *_, px in live]
    assert indices == sorted(indices) and len(set(indices)) == len(indices)  # newest, no repeat
    assert indices[-1] == 9  # the file ended; its last frame was sent
    assert metrics["frames_arrived"] == 10 and metrics["frames_skipped"] > 0
    for k, t_wall, hdr, _ in live:
        assert hdr.header.sim_time_ns == k * PERIOD_NS  # stamped with the step's time ...
        assert hdr.arrival_unix_ns <= t_wall + 50_000_000  # ... arrival from the wall clock


def test_missing_device_is_refused_at_configure_naming_it(tmp_path):
    # Only the path's existence (check_parameters, which `moonpool check` runs too).
    with pytest.raises(ParameterError, match="camera device /dev/video97 does not exist"):
        _host(tmp_path, source="/dev/video97")


def test_a_missing_file_is_refused_at_configure_naming_it(tmp_path):
    source = tmp_path / "nowhere.mp4"
    with pytest.raises(ParameterError) as info:
        _host(tmp_path, source=str(source), pacing="step")
    assert str(source) in str(info.value) and info.value.fix


@pytest.mark.parametrize("what", ["not a video", "empty folder", "damaged image"])
def test_unreadable_sources_fail_at_initialize_naming_them(tmp_path, what):
    if what == "not a video":
        source = tmp_path / "broken.avi"
        source.write_bytes(b"RIFF\x00\x00garbage" * 50)
        named = str(source)
    elif what == "empty folder":
        source = tmp_path / "empty"
        source.mkdir()
        named = str(source)
    else:
        source = tmp_path / "shots"
        source.mkdir()
        (source / "a.png").write_bytes(b"\x89PNG but not really")
        named = str(source / "a.png")
    host = _host(tmp_path, source=str(source), pacing="step")
    with pytest.raises(StepFailed) as info:
        host.initialize(0)
    assert named in str(info.value), str(info.value)
    assert info.value.fix
    host.terminate()


def test_size_with_another_aspect_ratio_is_refused(tmp_path, folder):
    host = _host(tmp_path, source=str(folder), pacing="step", width=64, height=64)
    with pytest.raises(ParameterError, match="aspect ratio"):
        host.initialize(0)
    host.terminate()


def test_a_device_that_stops_delivering_fails_the_step_naming_it(tmp_path, video, monkeypatch):
    # No camera on the test machine: a video file stands in for the V4L2 capture, so
    # the device path runs (reader thread at the source's own pace, first frame
    # dropped, staleness watch) and then the "device" runs dry.
    from moonpool.components.bridges import camera_device

    monkeypatch.setattr(camera_device, "_open_device", lambda path: cv2.VideoCapture(str(video)))
    host = _host(tmp_path, source="/dev/null", stale_timeout_s=0.3)
    host.initialize(0)
    got = []
    with pytest.raises(StepFailed, match="camera device /dev/null stopped delivering frames"):
        for k in range(200):
            got += host.step(k * PERIOD_NS, PERIOD_NS, {})
            time.sleep(0.01)
    host.terminate()
    assert got and got[-1].message.encoding == "mono8"
