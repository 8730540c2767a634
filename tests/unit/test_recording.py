"""The MCAP recording and the stream digest (orchestrator/recording.py)."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.reader import make_reader

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import MoonpoolError, PortError
from moonpool.orchestrator.recording import (
    Digest,
    RecordedMessage,
    Recorder,
    decode_recorded,
    digest_of_recording,
    read_recording,
)
from moonpool.v1 import common_pb2, sensors_pb2, signals_pb2, vehicle_pb2

Expected = tuple[str, int, bytes, bytes | None]  # topic, log time, payload, attachment


def _vehicle(t_ns: int, z: float) -> bytes:
    msg = vehicle_pb2.VehicleState(
        header=common_pb2.Header(sim_time_ns=t_ns, source="vehicle", frame_id="ned"),
        position_ned_m=common_pb2.Vector3(x=0.1, z=z),
        orientation=common_pb2.Quaternion(w=1.0),
    )
    return wire.serialize(msg)


def _pressure(t_ns: int, pa: float, valid: bool = True) -> bytes:
    msg = sensors_pb2.Pressure(
        header=common_pb2.Header(sim_time_ns=t_ns, source="pressure"),
        validity=common_pb2.Validity(valid=valid),
        pressure_pa=pa,
    )
    return wire.serialize(msg)


def _signals(t_ns: int, depth: float) -> bytes:
    msg = signals_pb2.Signals(header=common_pb2.Header(sim_time_ns=t_ns, source="fmu"))
    msg.signals.add(name="depth", value=depth)
    msg.signals.add(name="heave", value=-depth)
    return wire.serialize(msg)


def _write_sample(path: Path, digest: Digest | None = None) -> list[Expected]:
    """A recording with three types, log times going back and forth, and attachments."""
    expected: list[Expected] = []
    with Recorder(path, metadata={"rig": "rigs/quickstart.toml", "seed": "7"}) as rec:
        ch_v = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        ch_p = rec.add_topic("/pressure/out", "moonpool.v1.Pressure")
        ch_s = rec.add_topic("/fmu/signals", "moonpool.v1.Signals")
        assert rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState") == ch_v
        rec.add_metadata("component.vehicle", {"kind": "quickstart.vehicle", "where": "inprocess"})
        rec.add_attachment("rig.toml", b"[run]\nuntil = 1.0\n", "application/toml")
        times = [30, 10, 20, 10, 0, 50, 40, 40, 5]  # ms, not monotonic
        for i, ms in enumerate(times):
            t = ms * 1_000_000
            attachment = bytes([i]) * (i + 1) if i % 2 == 0 else None
            items = [
                ("/vehicle/state", ch_v, t, _vehicle(t, 0.5 * i), None),
                ("/pressure/out", ch_p, t + 1, _pressure(t + 1, 101325.0 + i), attachment),
                ("/fmu/signals", ch_s, max(t - 1, 0), _signals(max(t - 1, 0), float(i)), None),
            ]
            for topic, ch, log_time, payload, att in items:
                rec.write(ch, log_time, payload, attachment=att)
                expected.append((topic, log_time, payload, att))
                if digest is not None:
                    digest.update(topic, log_time, payload, att)
        assert rec.messages == len(expected)
    return expected


def test_messages_come_back_in_write_order(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    expected = _write_sample(path)
    got = [(m.topic, m.log_time_ns, m.payload, m.attachment) for m in read_recording(path)]
    assert got == expected
    times = [t for _, t, _, _ in got]
    assert times != sorted(times)  # the order really is write order, not log time


def test_write_order_across_many_chunks(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    expected = []
    with Recorder(path, chunk_size=512) as rec:
        ch = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        for i in range(300):
            t = ((i * 7919) % 300) * 1_000_000
            payload = _vehicle(t, float(i))
            rec.write(ch, t, payload, attachment=b"x" * (i % 3) if i % 5 == 0 else None)
            expected.append((t, payload, b"x" * (i % 3) if i % 5 == 0 else None))
    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and len(summary.chunk_indexes) > 10
    got = [(m.log_time_ns, m.payload, m.attachment) for m in read_recording(path)]
    assert got == expected


def test_schemas_channels_metadata_and_attachments(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    _write_sample(path)
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        schemas = {s.name: s for s in summary.schemas.values()}
        assert set(schemas) == {
            "moonpool.v1.VehicleState", "moonpool.v1.Pressure", "moonpool.v1.Signals"
        }
        for name, schema in schemas.items():
            assert schema.encoding == "protobuf"
            fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
            files = [fd.name for fd in fds.file]
            assert files[0] == "moonpool/v1/common.proto"  # dependencies first
            declared = {
                f"{fd.package}.{m.name}" for fd in fds.file for m in fd.message_type
            }
            assert name in declared
        channels = {c.topic: c for c in summary.channels.values()}
        assert channels["/vehicle/state"].message_encoding == "protobuf"
        assert summary.schemas[channels["/vehicle/state"].schema_id].name == (
            "moonpool.v1.VehicleState"
        )
        data = channels["/pressure/out#data"]
        assert data.schema_id == 0
        assert data.message_encoding == "application/octet-stream"
        assert "/fmu/signals#data" not in channels  # only where attachments were sent

        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        assert metadata["moonpool.run"] == {"rig": "rigs/quickstart.toml", "seed": "7"}
        assert metadata["component.vehicle"]["where"] == "inprocess"
        (attachment,) = list(reader.iter_attachments())
        assert attachment.name == "rig.toml"
        assert attachment.media_type == "application/toml"
        assert attachment.data == b"[run]\nuntil = 1.0\n"
        assert attachment.create_time == 0 and attachment.log_time == 0  # no wall clock


def test_decode_recorded(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    _write_sample(path)
    msgs = list(read_recording(path))
    assert [m.type_name for m in msgs[:3]] == [
        "moonpool.v1.VehicleState", "moonpool.v1.Pressure", "moonpool.v1.Signals"
    ]
    state = decode_recorded(msgs[3])
    assert isinstance(state, vehicle_pb2.VehicleState)
    assert state.position_ned_m.z == 0.5
    signals = decode_recorded(msgs[5])
    assert [(s.name, s.value) for s in signals.signals] == [("depth", 1.0), ("heave", -1.0)]
    with pytest.raises(PortError):
        decode_recorded(RecordedMessage("/a/b", "moonpool.v1.Pressure", 0, 0, b"\xff\xff"))


def _third_party_type() -> tuple[type, bytes]:
    """A message type moonpool does not know, in its own descriptor pool."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="acme/probe.proto", package="acme", syntax="proto3",
        dependency=["moonpool/v1/common.proto"],
    )
    msg = fdp.message_type.add(name="Probe")
    msg.field.add(name="header", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                  type_name=".moonpool.v1.Header",
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    msg.field.add(name="salinity_psu", number=2,
                  type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    fds = wire.file_descriptor_set([common_pb2.Header.DESCRIPTOR])
    fds.file.append(fdp)
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.AddSerializedFile(f.SerializeToString())
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.Probe"))
    return cls, wire.serialize(fds)


def test_unknown_type_uses_the_components_schemas(tmp_path: Path) -> None:
    probe_cls, extra = _third_party_type()
    path = tmp_path / "rec.mcap"
    with Recorder(path) as rec:
        with pytest.raises(PortError):
            rec.add_topic("/probe/out", "acme.Probe")  # unknown, no schemas given
        with pytest.raises(PortError):
            rec.add_topic("/probe/out", "acme.Other", extra_schemas=extra)  # not declared
        ch = rec.add_topic("/probe/out", "acme.Probe", extra_schemas=extra)
        with pytest.raises(PortError):
            rec.add_topic("/probe/out", "moonpool.v1.Pressure")  # same topic, other type
        rec.write(ch, 5, wire.serialize(probe_cls(salinity_psu=35.5)))
    (msg,) = list(read_recording(path))
    assert msg.type_name == "acme.Probe"
    decoded = decode_recorded(msg)
    assert decoded.DESCRIPTOR.full_name == "acme.Probe"
    assert decoded.salinity_psu == 35.5


def test_digest_of_recording_equals_live_digest(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    live = Digest()
    expected = _write_sample(path, live)
    assert live.count == len(expected)
    assert digest_of_recording(path) == live.hexdigest()

    # A second identical run gives the identical digest; one flipped byte changes it.
    again = Digest()
    _write_sample(tmp_path / "again.mcap", again)
    assert again.hexdigest() == live.hexdigest()
    changed = Digest()
    for k, (topic, t, payload, att) in enumerate(expected):
        if k == 4:
            payload = payload[:-1] + bytes([payload[-1] ^ 0x01])
        changed.update(topic, t, payload, att)
    assert changed.hexdigest() != live.hexdigest()


def test_digest_encoding_by_hand() -> None:
    topic, t, payload, att = "/vehicle/state", 1_500_000_000, b"\x08\x01", b"\x00\x01\x02"
    d = Digest()
    d.update(topic, t, payload, memoryview(att))
    by_hand = (
        struct.pack("<I", 14) + b"/vehicle/state"
        + struct.pack("<q", 1_500_000_000)
        + struct.pack("<I", 2) + b"\x08\x01"
        + struct.pack("<I", 3) + b"\x00\x01\x02"
    )
    assert d.hexdigest() == hashlib.sha256(by_hand).hexdigest()

    # No attachment hashes as a zero length; records are simply concatenated.
    d.update("/a/b", -5, b"")
    by_hand += struct.pack("<I", 4) + b"/a/b" + struct.pack("<qI", -5, 0) + struct.pack("<I", 0)
    assert d.hexdigest() == hashlib.sha256(by_hand).hexdigest()
    assert Digest().hexdigest() == hashlib.sha256(b"").hexdigest()


def _many(path: Path, n: int = 400, close: bool = True) -> tuple[Recorder, list[Expected]]:
    rec = Recorder(path, chunk_size=1024)
    ch = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
    expected: list[Expected] = []
    for i in range(n):
        t = (n - i) * 1_000_000
        att = bytes([i % 256]) * 50 if i % 4 == 0 else None
        rec.write(ch, t, _vehicle(t, float(i)), attachment=att)
        expected.append(("/vehicle/state", t, _vehicle(t, float(i)), att))
    if close:
        rec.close()
    return rec, expected


@pytest.mark.parametrize("fraction", [0.2, 0.45, 0.7])
def test_truncated_file_is_partly_readable(tmp_path: Path, fraction: float) -> None:
    path = tmp_path / "rec.mcap"
    _, expected = _many(path)
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * fraction)])
    got = [(m.topic, m.log_time_ns, m.payload, m.attachment) for m in read_recording(cut)]
    assert 0 < len(got) < len(expected)
    # A prefix, except possibly that the last message lost its attachment to the cut.
    assert got[:-1] == expected[: len(got) - 1]
    assert got[-1][:3] == expected[len(got) - 1][:3]


def test_file_without_its_summary_is_fully_readable(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    _, expected = _many(path)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[:-40])  # footer and magic gone, data intact
    assert [(m.topic, m.log_time_ns, m.payload, m.attachment) for m in read_recording(cut)] == (
        expected
    )
    assert digest_of_recording(cut) == digest_of_recording(path)


def test_file_of_a_killed_run_is_readable(tmp_path: Path) -> None:
    """Chunks handed to the writer thread reach the file without waiting for close():
    an unclosed recording can be read (flush() waits until they are written)."""
    path = tmp_path / "rec.mcap"
    rec, expected = _many(path, close=False)
    try:
        rec.queue.drain()  # what was handed over (full chunks), not the open one
        got = [(m.log_time_ns, m.payload) for m in read_recording(path)]
        assert 0 < len(got) <= len(expected)
        assert got == [(t, p) for _, t, p, _ in expected[: len(got)]]
    finally:
        rec.close()
    assert len(list(read_recording(path))) == len(expected)


def test_tiny_or_foreign_files(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    _many(path)
    head = tmp_path / "head.mcap"
    head.write_bytes(path.read_bytes()[:20])
    assert list(read_recording(head)) == []
    other = tmp_path / "other.mcap"
    other.write_bytes(b"not a recording at all")
    with pytest.raises(MoonpoolError, match="not an MCAP recording"):
        list(read_recording(other))


def test_close_is_idempotent_and_final(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    rec = Recorder(path)
    ch = rec.add_topic("/pressure/out", "moonpool.v1.Pressure")
    rec.write(ch, 0, _pressure(0, 1e5), publish_time_ns=7)
    rec.close()
    rec.close()
    assert rec.closed
    with pytest.raises(ValueError):
        rec.write(ch, 1, b"")
    (msg,) = list(read_recording(path))
    assert (msg.log_time_ns, msg.publish_time_ns) == (0, 7)


def test_empty_recording(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    Recorder(path, metadata={"a": "b"}).close()
    assert list(read_recording(path)) == []
    assert digest_of_recording(path) == Digest().hexdigest()


def test_bad_arguments(tmp_path: Path) -> None:
    with Recorder(tmp_path / "rec.mcap") as rec:
        ch = rec.add_topic("/pressure/out", "moonpool.v1.Pressure")
        with pytest.raises(ValueError):
            rec.write(ch + 10, 0, b"")
        with pytest.raises(ValueError):
            rec.write(ch, -1, b"")


def test_writing_messages_leaves_nothing_for_the_garbage_collector(tmp_path):
    # Every message's index entry is kept until its chunk is written. Kept as objects
    # the garbage collector tracks (a tuple each, as before), they made it collect
    # again and again during a run (a full collection of the process took 13 ms in a
    # chain of eight FMUs: a late tick in real time). Ints are not tracked.
    import gc

    rec = Recorder(tmp_path / "gc.mcap")
    channel = rec.add_topic("/a/b", "moonpool.v1.Signals")
    payload = wire.serialize(signals_pb2.Signals())
    rec.write(channel, 0, payload)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for k in range(1, 5001):
            rec.write(channel, k * 1000, payload)
        grown = len(gc.get_objects()) - before
    finally:
        gc.enable()
    rec.close()
    assert grown < 50, f"{grown} objects tracked by the collector after 5,000 messages"
    assert len(list(read_recording(tmp_path / "gc.mcap"))) == 5001
