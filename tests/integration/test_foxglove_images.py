"""run.foxglove_images: every recorded camera frame also as a ``foxglove.RawImage`` on
``{topic}/foxglove`` (what Foxglove's Image panel shows), read back with Foxglove's own
protobuf decoder; a view beside the stream: the digest, read_recording, the replay
adapter and the plots do not see it."""

from __future__ import annotations

import json
import logging
import textwrap

import cv2
import numpy as np
import pytest
from google.protobuf import descriptor_pb2
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

from conftest import moonpool
from moonpool.orchestrator import foxglove, plots
from moonpool.orchestrator.recording import (
    FOXGLOVE_IMAGE_SUFFIX,
    VIEW_OF,
    Recorder,
    digest_of_recording,
    read_recording,
    recording_info,
)
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.v1 import common_pb2, vision_pb2

pytestmark = pytest.mark.slow

W, H = 40, 30

# The simulated overhead camera (mono8, 30 Hz) and the camera device on an image folder
# (bgr8, 20 Hz, one frame per step), stepped Jacobi: a frame taken at t is visible
# (logged) at t + dt, so the image's timestamp and its log time differ.
RIG = """
[run]
until = "0.3s"
seed = 5
plots = false

[components.camera]
entry = "localization.camera"
rate_hz = 30
[components.camera.parameters]
image_width = 64
image_height = 48
supersampling = 1

[components.device]
entry = "devices.camera"
rate_hz = 20
[components.device.parameters]
source = "frames"
pacing = "step"
encoding = "bgr8"
loop = true
frame_id = "device_optical"
"""


def _frame(k: int) -> np.ndarray:
    img = np.zeros((H, W, 3), np.uint8)
    img[..., 0] = 30 + 40 * k  # blue level, so bgr8 / rgb8 mix-ups show
    img[5:15, 3 * k:3 * k + 8, 2] = 255
    return img


@pytest.fixture
def rig(tmp_path):
    (tmp_path / "frames").mkdir()
    for k in range(4):
        cv2.imwrite(str(tmp_path / "frames" / f"f{k}.png"), _frame(k))
    path = tmp_path / "live.toml"
    path.write_text(textwrap.dedent(RIG).lstrip())
    return path


def _run(rig_path, out, *overrides):
    result = run_rig(load_and_check(rig_path, list(overrides)), out)
    assert result.ok, result.summary["error"]
    return result.summary, out / "recording.mcap"


def _decoded(recording):
    """The summary, and (channel, mcap message, decoded or None) in file order; protobuf
    channels decoded by Foxglove's decoder (mcap_protobuf), from the file's schemas."""
    factory = DecoderFactory()
    with open(recording, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        out = []
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            decoder = factory.decoder_for(channel.message_encoding, schema)
            out.append((channel, message, decoder(message.data) if decoder else None))
    return summary, out


def _check_views(recording) -> dict[str, list[bytes]]:
    """Every attached ImageHeader frame has its RawImage view right after its #data
    message, equal to it field by field; returns the view payloads by topic."""
    summary, records = _decoded(recording)
    views = {c.topic: c for c in summary.channels.values() if VIEW_OF in c.metadata}
    for c in views.values():
        schema = summary.schemas[c.schema_id]
        assert (schema.name, schema.encoding, c.message_encoding) == (
            "foxglove.RawImage", "protobuf", "protobuf")
        assert c.topic == c.metadata[VIEW_OF] + FOXGLOVE_IMAGE_SUFFIX
        files = [f.name for f in descriptor_pb2.FileDescriptorSet.FromString(schema.data).file]
        assert files == ["google/protobuf/timestamp.proto", "foxglove/RawImage.proto"]
    payloads: dict[str, list[bytes]] = {}
    for i, (channel, message, decoded) in enumerate(records):
        if channel.topic + FOXGLOVE_IMAGE_SUFFIX not in views or "#" in channel.topic:
            continue
        (data_ch, data, _), (view_ch, view, raw) = records[i + 1], records[i + 2]
        assert data_ch.topic == channel.topic + "#data"
        assert view_ch.topic == channel.topic + FOXGLOVE_IMAGE_SUFFIX
        hdr: vision_pb2.ImageHeader = decoded
        assert type(raw).DESCRIPTOR.full_name == "foxglove.RawImage"
        assert (raw.width, raw.height, raw.encoding, raw.step) == (
            hdr.width, hdr.height, hdr.encoding, hdr.step_bytes)
        assert raw.frame_id == hdr.header.frame_id
        assert raw.data == data.data  # the pixels, byte for byte
        assert raw.timestamp.seconds * 10**9 + raw.timestamp.nanos == hdr.header.sim_time_ns
        assert (view.log_time, view.publish_time) == (message.log_time, message.publish_time)
        assert view.log_time == data.log_time and hdr.header.sim_time_ns < view.log_time
        assert view.sequence == message.sequence
        payloads.setdefault(channel.topic, []).append(bytes(view.data))
    assert set(payloads) == {c.metadata[VIEW_OF] for c in views.values()}
    return payloads


def test_frames_are_written_as_foxglove_raw_images(rig, tmp_path):
    out = tmp_path / "live"
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet",
                    "--set", "run.foxglove_images=true")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    recording = out / "recording.mcap"
    payloads = _check_views(recording)
    assert sorted(payloads) == ["/camera/image", "/device/image"]
    assert len(payloads["/camera/image"]) == 9 and len(payloads["/device/image"]) == 6
    # What the panel gets: the mono8 render and the folder's frames, in their colours.
    raw = foxglove.raw_image_class().FromString(payloads["/device/image"][1])
    assert (raw.encoding, raw.step, raw.frame_id) == ("bgr8", 3 * W, "device_optical")
    assert np.array_equal(np.frombuffer(raw.data, np.uint8).reshape(H, W, 3), _frame(1))
    raw = foxglove.raw_image_class().FromString(payloads["/camera/image"][0])
    assert (raw.width, raw.height, raw.encoding, raw.frame_id) == (64, 48, "mono8", "camera")
    assert raw.timestamp.seconds == raw.timestamp.nanos == 0  # taken at t = 0
    # The views are no messages of the stream.
    assert digest_of_recording(recording) == summary["digest"]
    assert summary["messages"] == len(list(read_recording(recording))) == 15
    assert not [m for m in read_recording(recording) if m.topic.endswith("/foxglove")]
    assert sorted(recording_info(recording).topics) == ["/camera/image", "/device/image"]


def test_views_change_no_digest_and_no_reader(rig, tmp_path):
    """The device is replayed from a recording that has views (so the stream is the
    same run after run); off, on, and on with the device excluded from the recording:
    one digest, the same messages read back, no view of an excluded output."""
    live, rec0 = _run(rig, tmp_path / "live", "run.foxglove_images=true")
    replay = tmp_path / "replay.toml"
    replay.write_text(rig.read_text().replace(
        'entry = "devices.camera"\nrate_hz = 20\n',
        f'entry = "devices.camera"\nrun = "replay"\nrecording = "{rec0}"\n'))
    off, rec_off = _run(replay, tmp_path / "off")
    on, rec_on = _run(replay, tmp_path / "on", "run.foxglove_images=true")
    excl, rec_excl = _run(replay, tmp_path / "excl", "run.foxglove_images=true",
                          'run.record_exclude=["device.image"]')
    assert on["components"]["device"]["placement"] == "replay"
    assert on["metrics"]["device"]["replayed_messages"] == 6
    # The replay published the recorded frames byte for byte: the whole stream is the
    # live one, with views or without.
    assert off["digest"] == on["digest"] == excl["digest"] == live["digest"]
    assert digest_of_recording(rec_on) == on["digest"] == digest_of_recording(rec_off)
    assert list(read_recording(rec_on)) == list(read_recording(rec_off))
    assert recording_info(rec_on).topics == recording_info(rec_off).topics
    assert recording_info(rec_on).schemas.keys() == recording_info(rec_off).schemas.keys()
    assert plots._load(rec_on).keys() == {"/camera/image", "/device/image"}
    # Views: none when off; the replayed frames' views are the live ones, byte for byte.
    assert _check_views(rec_off) == {}
    views_on, views_live = _check_views(rec_on), _check_views(rec0)
    assert views_on == views_live
    # An output left out of the recording has no view either.
    assert sorted(_check_views(rec_excl)) == ["/camera/image"]
    with open(rec_excl, "rb") as f:
        topics = {c.topic for c in make_reader(f).get_summary().channels.values()}
    assert not [t for t in topics if t.startswith("/device/")]


def test_a_bad_value_is_a_problem_with_the_file_and_key(rig):
    text = rig.read_text()
    rig.write_text(text.replace("plots = false\n", 'plots = false\nfoxglove_images = "yes"\n'))
    proc = moonpool("check", str(rig))
    assert proc.returncode == 2
    assert (f"{rig}:5: run.foxglove_images: expected true or false, got a string 'yes'"
            in proc.stderr), proc.stderr
    rig.write_text(rig.read_text().replace('foxglove_images = "yes"\n', ""))
    proc = moonpool("check", str(rig), "--set", "run.foxglove_images=1")
    assert proc.returncode == 2
    assert ("run.foxglove_images: expected true or false, got an integer 1 (value from --set "
            "run.foxglove_images=1)") in proc.stderr, proc.stderr


def _header(encoding: str, width: int, height: int, step: int, t_ns: int | None = None):
    header = None if t_ns is None else common_pb2.Header(sim_time_ns=t_ns, frame_id="cam")
    return vision_pb2.ImageHeader(header=header, width=width, height=height,
                                  encoding=encoding, step_bytes=step).SerializeToString()


def test_encodings_step_and_timestamps_of_the_views(tmp_path, caplog):
    """mono16 and rgb8 pass through, a step of 0 is the unpadded row, a header-less
    image is stamped with its log time, an encoding Foxglove does not share is left
    out (logged once), and only ImageHeader outputs get views."""
    path = tmp_path / "r.mcap"
    mono16 = np.arange(6, dtype="<u2").tobytes()
    with Recorder(path, foxglove_images=True) as rec:
        img = rec.add_topic("/cam/image", "moonpool.v1.ImageHeader")
        other = rec.add_topic("/cam/raw", "moonpool.v1.Signals")
        rec.write(img, 1_500_000_000, _header("mono16", 3, 2, 0, t_ns=1_250_000_001),
                  attachment=mono16)
        rec.write(img, 2_000_000_000, _header("rgb8", 1, 1, 4), attachment=b"\1\2\3\0")
        with caplog.at_level(logging.WARNING, "moonpool.recording"):
            rec.write(img, 2_100_000_000, _header("yuyv", 2, 1, 4), attachment=b"abcd")
            rec.write(img, 2_200_000_000, _header("yuyv", 2, 1, 4), attachment=b"abcd")
        rec.write(img, 2_300_000_000, _header("", 2, 1, 0), attachment=b"\7\7")
        rec.write(other, 2_300_000_000, b"", attachment=b"xyz")
        assert rec.messages == 6
    assert len([r for r in caplog.records if "no Foxglove view" in r.message]) == 1
    _, records = _decoded(path)
    views = [(m.log_time, raw) for c, m, raw in records if VIEW_OF in c.metadata]
    assert [t for t, _ in views] == [1_500_000_000, 2_000_000_000, 2_300_000_000]
    (a, b, c) = (raw for _, raw in views)
    assert (a.encoding, a.width, a.height, a.step, a.data, a.frame_id) == (
        "mono16", 3, 2, 6, mono16, "cam")
    assert (a.timestamp.seconds, a.timestamp.nanos) == (1, 250_000_001)
    assert (b.encoding, b.step, b.data, b.frame_id) == ("rgb8", 4, b"\1\2\3\0", "")
    assert (b.timestamp.seconds, b.timestamp.nanos) == (2, 0)  # no header: the log time
    assert (c.encoding, c.step) == ("mono8", 2)  # "" is mono8, as the localizer reads it
    assert len(list(read_recording(path))) == 6
    assert [m.attachment for m in read_recording(path)][2:4] == [b"abcd", b"abcd"]
