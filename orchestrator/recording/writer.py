"""The MCAP recorder: every message of a run, written as it comes, crash-safe
(the layout is in the package docstring).

On the stepping thread :meth:`Recorder.write` only appends the message's record to
the open chunk (one ``struct`` pack and one copy) and notes its index entry; a full
chunk, or the open one every ``flush_interval_s``, is handed to the writer thread
(background.py), which compresses it and writes it with its indexes (mcapfile.py).
The stream digest (digest.py) is computed by the caller, on the stepping thread."""

from __future__ import annotations

import logging
import os
import struct
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import Channel, Schema
from mcap.writer import LIBRARY_IDENTIFIER

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import PortError, RecordingFailed
from moonpool.v1 import vision_pb2

from .. import foxglove
from .background import Background
from .layout import (
    ATTACHMENT_ENCODING,
    ATTACHMENT_OF,
    ATTACHMENT_SUFFIX,
    CHUNK_SIZE,
    FLUSH_INTERVAL_S,
    FOXGLOVE_IMAGE_SUFFIX,
    MESSAGE_ENCODING,
    QUEUE_BYTES,
    QUEUE_SECONDS,
    RESERVE_BYTES,
    RUN_METADATA,
    VIEW_OF,
)
from .mcapfile import McapFile

log = logging.getLogger("moonpool.recording")

_MAX_U32 = 0xFFFF_FFFF
_MESSAGE = struct.Struct("<BQHIQQ")
"""A Message record up to its data: opcode, length, channel id, sequence, log time,
publish time (MCAP)."""
_MESSAGE_FIXED = 2 + 4 + 8 + 8  # the record's length without its data
_OP_MESSAGE = int(Opcode.MESSAGE)


class DiskReserve:
    """Space held on the disk of a run folder (a file with no name, allocated at the
    start): released when the disk fills, so that summary.json and the end of the
    recording can still be written. It leaves nothing behind, also when the process
    is killed. Without room for it (or support), it holds nothing."""

    def __init__(self, folder: Path, size: int = RESERVE_BYTES) -> None:
        self._file = None
        try:
            f = tempfile.TemporaryFile(dir=folder)  # O_TMPFILE, or unlinked at once
        except OSError:
            return
        try:
            os.posix_fallocate(f.fileno(), 0, size)
        except (OSError, AttributeError):
            f.close()
            return
        self._file = f

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None




class _Topic:
    """A recorded topic: its channel, the channels of its attachments and views, and
    their index entries in the open chunk: log time, offset in the chunk, log time,
    offset, ... in one flat list of ints (ints are not tracked by Python's garbage
    collector; a tuple per message was, and their collections cost about 0.4 µs per
    message, with a full collection of the process now and then)."""

    __slots__ = ("topic", "type_name", "channel_id", "sequence", "index", "data_channel_id",
                 "data_index", "image_view", "view_channel_id", "view_index", "view_warned")

    def __init__(self, topic: str, type_name: str, channel_id: int, image_view: bool) -> None:
        self.topic = topic
        self.type_name = type_name
        self.channel_id = channel_id
        self.sequence = 0
        self.index: list[int] = []
        self.data_channel_id = 0
        self.data_index: list[int] = []
        self.image_view = image_view
        """Whether its attached frames are also written as ``foxglove.RawImage``."""
        self.view_channel_id = 0
        self.view_index: list[int] = []
        self.view_warned = False


def _library() -> str:
    try:
        from importlib.metadata import version

        return f"moonpool {version('moonpool')}; {LIBRARY_IDENTIFIER}"
    except Exception:  # noqa: BLE001 (not installed as a distribution: name it anyway)
        return f"moonpool; {LIBRARY_IDENTIFIER}"


def _strings(data: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): v if isinstance(v, str) else str(v) for k, v in data.items()}


def _record(record: Any) -> bytes:
    builder = RecordBuilder()
    record.write(builder)
    return builder.end()


class Recorder:
    """Writes every message to an MCAP file with protobuf schemas (opens in Foxglove).

    Usage::

        rec = Recorder(out / "recording.mcap", metadata={"rig": "rigs/quickstart.toml"})
        ch = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        rec.write(ch, t_ns, payload)
        rec.close()                  # always (also after a failure): writes the indexes

    Also a context manager. See the module docstring for the layout of the file and
    the package docstring for how it is written. ``foxglove_images``: also write every
    attached frame of an ImageHeader topic as a ``foxglove.RawImage`` on
    ``{topic}/foxglove`` (``run.foxglove_images``). ``queue_bytes``, ``queue_seconds``:
    how much the writer thread may hold that is not written yet, and how old it may
    be, before a hand-over waits. ``writer_thread = False``: compress and write on the
    calling thread instead (benchmarks/recording.py compares the two).
    """

    def __init__(
        self,
        path: Path,
        *,
        metadata: Mapping[str, str] | None = None,
        chunk_size: int = CHUNK_SIZE,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        foxglove_images: bool = False,
        queue_bytes: int = QUEUE_BYTES,
        queue_seconds: float = QUEUE_SECONDS,
        writer_thread: bool = True,
    ) -> None:
        self.path = Path(path)
        self.flush_interval_s = flush_interval_s
        self._flush_at = time.monotonic() + flush_interval_s
        self.messages = 0
        """Messages written (attachments and views not counted separately)."""
        self.foxglove_images = foxglove_images
        self._chunk_size = chunk_size
        self._chunk = bytearray()  # the open chunk's records
        self._handed = 0  # self.messages when the last chunk was handed over
        self._view_schema_id = 0
        self._schemas: dict[str, int] = {}
        self._schema_records: list[Schema] = []
        self._channel_records: list[Channel] = []
        self._topics: dict[str, _Topic] = {}
        self._channels: dict[int, _Topic] = {}  # emptied by close(): writes then refused
        self._closed = False
        self._file = McapFile(self.path, "", _library())  # RecordingFailed if it cannot
        self._background = Background(queue_bytes, queue_seconds, writer_thread)
        if metadata is not None:
            self.add_metadata(RUN_METADATA, metadata)

    @property
    def failure(self) -> RecordingFailed | None:
        """Why the file could not be written (a full disk), or None: after it every
        write raises, and :meth:`close` ends the file at its last whole record."""
        return self._background.failure

    @property
    def queue(self) -> Background:
        """The writer thread (its ``waits`` and ``most`` tell how far the disk fell
        behind)."""
        return self._background

    # -- registration

    def add_topic(self, topic: str, type_name: str, extra_schemas: bytes = b"") -> int:
        """Register a channel for ``topic`` carrying ``type_name``; returns its channel id.

        The schema is written once per type. Its data is the FileDescriptorSet of the
        type; for a type moonpool does not know, ``extra_schemas`` (a serialized
        FileDescriptorSet, e.g. a component's ``Description.extra_schemas``) must
        declare it. Registering the same topic again with the same type returns the
        same id; with another type it raises PortError.
        """
        self._check_open()
        known = self._topics.get(topic)
        if known is not None:
            if known.type_name != type_name:
                raise PortError(
                    f"topic '{topic}' is recorded as {known.type_name}, not {type_name}",
                    fix="give every output port a single message type",
                )
            return known.channel_id
        schema_id = self._schema_id(type_name, extra_schemas)
        channel_id = self._register_channel(topic, MESSAGE_ENCODING, schema_id)
        entry = _Topic(topic, type_name, channel_id,
                       self.foxglove_images and type_name == foxglove.IMAGE_HEADER)
        self._topics[topic] = entry
        self._channels[channel_id] = entry
        return channel_id

    def _schema_id(self, type_name: str, extra_schemas: bytes) -> int:
        schema_id = self._schemas.get(type_name)
        if schema_id is not None:
            return schema_id
        try:
            cls = wire.message_class(type_name)
        except PortError:
            if not extra_schemas:
                raise
            data = bytes(extra_schemas)
            try:
                fds = descriptor_pb2.FileDescriptorSet.FromString(data)
            except DecodeError as exc:
                raise PortError(
                    f"the schemas given for {type_name} are not a FileDescriptorSet: {exc}",
                    fix="send Description.extra_schemas as a serialized FileDescriptorSet",
                ) from exc
            if not _declares(fds, type_name):
                raise PortError(
                    f"the schemas given for {type_name} do not declare it",
                    fix="put the file defining the type (and its imports) into extra_schemas",
                ) from None
        else:
            data = wire.serialize(wire.file_descriptor_set([cls.DESCRIPTOR]))
        schema_id = self._register_schema(type_name, data)
        self._schemas[type_name] = schema_id
        return schema_id

    def _register_schema(self, name: str, data: bytes) -> int:
        """A Schema record in the open chunk (ahead of every message using it)."""
        schema = Schema(id=len(self._schema_records) + 1, name=name,
                        encoding=MESSAGE_ENCODING, data=data)
        self._schema_records.append(schema)
        self._chunk += _record(schema)
        return schema.id

    def _register_channel(self, topic: str, encoding: str, schema_id: int,
                          metadata: Mapping[str, str] | None = None) -> int:
        """A Channel record in the open chunk (ahead of every message on it)."""
        channel = Channel(id=len(self._channel_records) + 1, topic=topic,
                          message_encoding=encoding, schema_id=schema_id,
                          metadata=dict(metadata or {}))
        self._channel_records.append(channel)
        self._chunk += _record(channel)
        return channel.id

    def add_metadata(self, name: str, data: Mapping[str, str]) -> None:
        """Add a metadata record (e.g. one per component: its description, placement)."""
        self._check_open()
        strings = _strings(data)
        self._background.put(self._file.add_metadata, (name, strings),
                             sum(len(k) + len(v) for k, v in strings.items()))

    def add_attachment(self, name: str, data: bytes, media_type: str) -> None:
        """Add a file to the recording (e.g. the rig text). Times are 0: no wall clock."""
        self._check_open()
        data = bytes(data)
        self._background.put(self._file.add_attachment, (name, data, media_type), len(data))

    # -- messages

    def write(
        self,
        channel_id: int,
        log_time_ns: int,
        payload: bytes,
        publish_time_ns: int | None = None,
        attachment: bytes | memoryview | None = None,
    ) -> None:
        """Write one message; ``log_time_ns`` is its simulation time.

        ``publish_time_ns`` defaults to the log time. An ``attachment`` goes on the
        sibling channel ``{topic}#data`` right after the message, with the same times
        (then, with ``foxglove_images``, an image's view on ``{topic}/foxglove``).
        Raises the writer thread's failure (RecordingFailed) when it hands a chunk
        over after one.
        """
        entry = self._channels.get(channel_id)
        if entry is None:
            self._check_open()
            raise ValueError(f"channel {channel_id} was not registered with add_topic")
        publish = log_time_ns if publish_time_ns is None else publish_time_ns
        chunk = self._chunk
        sequence = entry.sequence
        try:
            head = _MESSAGE.pack(_OP_MESSAGE, _MESSAGE_FIXED + len(payload), channel_id,
                                 sequence, log_time_ns, publish)
        except struct.error:
            raise ValueError(f"times must be non-negative ns below 2**64, got {log_time_ns}, "
                             f"{publish}") from None
        entry.index += (log_time_ns, len(chunk))
        chunk += head
        chunk += payload
        entry.sequence = (sequence + 1) & _MAX_U32
        if attachment is not None:
            self._attach(entry, log_time_ns, publish, sequence, payload, attachment)
        self.messages += 1
        if len(chunk) >= self._chunk_size or time.monotonic() >= self._flush_at:
            self._hand_over()

    def _attach(self, entry: _Topic, log_time_ns: int, publish: int, sequence: int,
                payload: bytes, attachment: bytes | memoryview) -> None:
        """The attachment on ``{topic}#data`` (and the frame's view, if asked for)."""
        if not entry.data_channel_id:
            entry.data_channel_id = self._register_channel(
                entry.topic + ATTACHMENT_SUFFIX, ATTACHMENT_ENCODING, 0,
                metadata={ATTACHMENT_OF: entry.topic})
        data = memoryview(attachment).cast("B")
        chunk = self._chunk
        entry.data_index += (log_time_ns, len(chunk))
        chunk += _MESSAGE.pack(_OP_MESSAGE, _MESSAGE_FIXED + data.nbytes,
                               entry.data_channel_id, sequence, log_time_ns, publish)
        chunk += data
        if entry.image_view:
            self._write_image_view(entry, log_time_ns, publish, sequence, payload, bytes(data))

    def _write_image_view(self, entry: _Topic, log_time_ns: int, publish: int,
                          sequence: int, payload: bytes, pixels: bytes) -> None:
        """The frame as a ``foxglove.RawImage`` on ``{topic}/foxglove`` (module docstring).
        A frame that cannot be shown (header does not parse, unknown encoding) gets no
        view (logged once per topic): a view never fails a run."""
        view = problem = None
        try:
            header = vision_pb2.ImageHeader.FromString(bytes(payload))
        except DecodeError as exc:
            problem = f"the ImageHeader does not parse ({exc})"
        else:
            view = foxglove.image_view(header, pixels, log_time_ns)
            if view is None:
                problem = (f"encoding {header.encoding!r} is not one of "
                           f"{', '.join(foxglove.BYTES_PER_PIXEL)}")
        if view is None:
            if not entry.view_warned:
                entry.view_warned = True
                log.warning("recording: frames on %s get no Foxglove view: %s",
                            entry.topic, problem)
            return
        if not self._view_schema_id:
            self._view_schema_id = self._register_schema(foxglove.RAW_IMAGE,
                                                         foxglove.raw_image_schema())
        if not entry.view_channel_id:
            entry.view_channel_id = self._register_channel(
                entry.topic + FOXGLOVE_IMAGE_SUFFIX, MESSAGE_ENCODING, self._view_schema_id,
                metadata={VIEW_OF: entry.topic})
        chunk = self._chunk
        entry.view_index += (log_time_ns, len(chunk))
        chunk += _MESSAGE.pack(_OP_MESSAGE, _MESSAGE_FIXED + len(view),
                               entry.view_channel_id, sequence, log_time_ns, publish)
        chunk += view

    def _hand_over(self, now: float | None = None) -> None:
        """Close the open chunk and give it to the writer thread (if it holds messages;
        schemas and channels registered meanwhile wait for the first one)."""
        self._flush_at = (time.monotonic() if now is None else now) + self.flush_interval_s
        if self.messages == self._handed:
            return
        records, self._chunk, self._handed = self._chunk, bytearray(), self.messages
        indexes: dict[int, list[int]] = {}
        for entry in self._channels.values():
            if entry.index:
                indexes[entry.channel_id], entry.index = entry.index, []
            if entry.data_index:
                indexes[entry.data_channel_id], entry.data_index = entry.data_index, []
            if entry.view_index:
                indexes[entry.view_channel_id], entry.view_index = entry.view_index, []
        self._background.put(self._file.write_chunk, (records, indexes), len(records))

    def flush(self, now: float | None = None) -> None:
        """Hand the open chunk over and wait until everything handed over is on the
        disk (its messages are then recoverable after a crash). The recorder hands the
        open chunk over on its own every ``flush_interval_s`` of wall clock, at the
        first message after that (and from :meth:`idle`), without waiting."""
        if self._closed:
            return
        self._hand_over(now)
        self._background.drain()
        if self._background.failure is not None:
            raise self._background.failure

    def idle(self, now: float) -> None:
        """Called while the run waits (a slow component, real-time pacing): hand the
        open chunk over when due, so a crash then loses nothing older than the interval."""
        if now >= self._flush_at and not self._closed:
            self._hand_over(now)

    def close(self) -> None:
        """Finish the file (indexes, summary, footer) and close it, once the writer
        thread has written everything handed over. Idempotent; never raises: after a
        failed write (``failure``) the file ends at its last whole record with a footer
        and no index (readable; ``moonpool recover`` indexes it)."""
        if self._closed:
            return
        self._closed = True
        background = self._background
        try:
            try:
                self._hand_over()
                self._channels = {}
                background.put(self._file.finish,
                               (self._schema_records, self._channel_records), 0)
            except RecordingFailed:
                pass
            self._channels = {}
            background.stop()
            if background.failure is not None:
                self._file.file.end_cut_file()
        finally:
            self._file.file.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"recording {self.path} is closed")

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _declares(fds: descriptor_pb2.FileDescriptorSet, type_name: str) -> bool:
    """Whether a FileDescriptorSet declares the message ``type_name`` (nested too)."""

    def walk(prefix: str, messages: Any) -> Iterator[str]:
        for m in messages:
            name = f"{prefix}.{m.name}" if prefix else m.name
            yield name
            yield from walk(name, m.nested_type)

    return any(type_name in set(walk(f.package, f.message_type)) for f in fds.file)
