"""The MCAP recorder: every message of a run, written as it comes, crash-safe
(the layout is in the package docstring)."""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError
from mcap.data_stream import RecordBuilder
from mcap.records import DataEnd, Footer
from mcap.writer import LIBRARY_IDENTIFIER, CompressionType, Writer

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import PortError, RecordingFailed
from moonpool.v1 import vision_pb2

from .. import foxglove
from .layout import (
    ATTACHMENT_ENCODING,
    ATTACHMENT_OF,
    ATTACHMENT_SUFFIX,
    CHUNK_SIZE,
    FLUSH_INTERVAL_S,
    FOXGLOVE_IMAGE_SUFFIX,
    MCAP0_MAGIC,
    MESSAGE_ENCODING,
    RESERVE_BYTES,
    RUN_METADATA,
    VIEW_OF,
)

log = logging.getLogger("moonpool.recording")

_MAX_U32 = 0xFFFF_FFFF
_MAX_U64 = 0xFFFF_FFFF_FFFF_FFFF


class _WriteThrough:
    """The file as the MCAP writer sees it: every write goes straight to the OS.

    The writer hands over whole records (a chunk, its indexes), so no user-space
    buffer is needed, and a killed process leaves every finished chunk on disk. A write
    that fails (a full disk) cuts the file back to the end of the last whole record
    and raises RecordingFailed; so does every write after it (``failure``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.failure: RecordingFailed | None = None
        """Why the file could not be written (None while it can)."""
        self.good = 0
        """Bytes at the start of the file that are whole records."""
        try:
            self._raw = open(path, "wb", buffering=0)  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise self._failed(exc) from exc

    def _failed(self, exc: OSError) -> RecordingFailed:
        self.failure = RecordingFailed(
            f"cannot write the recording {self.path}: {exc.strerror or exc}; the run is "
            "stopped", fix="free space on that disk, or give --out a folder with room; "
            "what was written before is kept (`moonpool recover` indexes it)")
        return self.failure

    def write(self, data: Any) -> int:
        if self.failure is not None:
            raise self.failure
        view = memoryview(data).cast("B")
        total = view.nbytes
        try:
            while view.nbytes:
                n = self._raw.write(view)
                view = view[n:]
        except OSError as exc:
            self.cut()
            raise self._failed(exc) from exc
        self.good += total
        return total

    def cut(self) -> None:
        """Truncate the file to its whole records (after a failed write)."""
        try:
            self._raw.truncate(self.good)
            self._raw.seek(self.good)
        except OSError:
            pass

    def end_cut_file(self) -> None:
        """End a file whose writer failed: DataEnd, a Footer without summary, the magic
        (what any MCAP reader accepts; ``moonpool recover`` adds the index). On no room
        even for that, the file stays cut at its last whole record, still readable."""
        builder = RecordBuilder()
        DataEnd(data_section_crc=0).write(builder)
        Footer(summary_start=0, summary_offset_start=0, summary_crc=0).write(builder)
        try:
            self._raw.write(builder.end() + MCAP0_MAGIC)
        except OSError:
            self.cut()

    def tell(self) -> int:
        return self._raw.tell()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        try:
            self._raw.close()
        except OSError:
            pass


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


@dataclass
class _Topic:
    topic: str
    type_name: str
    channel_id: int
    sequence: int = 0
    data_channel_id: int = 0
    image_view: bool = False
    """Whether its attached frames are also written as ``foxglove.RawImage``."""
    view_channel_id: int = 0
    view_warned: bool = False


def _library() -> str:
    try:
        from importlib.metadata import version

        return f"moonpool {version('moonpool')}; {LIBRARY_IDENTIFIER}"
    except Exception:  # noqa: BLE001 (not installed as a distribution: name it anyway)
        return f"moonpool; {LIBRARY_IDENTIFIER}"


def _strings(data: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): v if isinstance(v, str) else str(v) for k, v in data.items()}


class Recorder:
    """Writes every message to an MCAP file with protobuf schemas (opens in Foxglove).

    Usage::

        rec = Recorder(out / "recording.mcap", metadata={"rig": "rigs/quickstart.toml"})
        ch = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        rec.write(ch, t_ns, payload)
        rec.close()                  # always (also after a failure): writes the indexes

    Also a context manager. See the module docstring for the layout of the file.
    ``foxglove_images``: also write every attached frame of an ImageHeader topic as a
    ``foxglove.RawImage`` on ``{topic}/foxglove`` (``run.foxglove_images``).
    """

    def __init__(
        self,
        path: Path,
        *,
        metadata: Mapping[str, str] | None = None,
        chunk_size: int = CHUNK_SIZE,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        foxglove_images: bool = False,
    ) -> None:
        self.path = Path(path)
        self.flush_interval_s = flush_interval_s
        self._flush_at = time.monotonic() + flush_interval_s
        self.messages = 0
        """Messages written (attachments and views not counted separately)."""
        self.foxglove_images = foxglove_images
        self._view_schema_id = 0
        self._file = _WriteThrough(self.path)
        self._writer = Writer(
            self._file,  # type: ignore[arg-type]  (write/tell/flush is all it uses)
            chunk_size=chunk_size,
            compression=CompressionType.ZSTD,
        )
        self._schemas: dict[str, int] = {}
        self._topics: dict[str, _Topic] = {}
        self._channels: dict[int, _Topic] = {}
        self._closed = False
        try:
            self._writer.start(profile="", library=_library())
            if metadata is not None:
                self._writer.add_metadata(RUN_METADATA, _strings(metadata))
        except BaseException:
            self._file.close()
            raise

    @property
    def failure(self) -> RecordingFailed | None:
        """Why the file could not be written (a full disk), or None: after it every
        write raises, and :meth:`close` ends the file at its last whole record."""
        return self._file.failure

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
        channel_id = self._writer.register_channel(topic, MESSAGE_ENCODING, schema_id)
        entry = _Topic(topic, type_name, channel_id,
                       image_view=self.foxglove_images and type_name == foxglove.IMAGE_HEADER)
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
        schema_id = self._writer.register_schema(type_name, MESSAGE_ENCODING, data)
        self._schemas[type_name] = schema_id
        return schema_id

    def add_metadata(self, name: str, data: Mapping[str, str]) -> None:
        """Add a metadata record (e.g. one per component: its description, placement)."""
        self._check_open()
        self._writer.add_metadata(name, _strings(data))

    def add_attachment(self, name: str, data: bytes, media_type: str) -> None:
        """Add a file to the recording (e.g. the rig text). Times are 0: no wall clock."""
        self._check_open()
        self._writer.add_attachment(
            create_time=0, log_time=0, name=name, media_type=media_type, data=bytes(data)
        )

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
        """
        self._check_open()
        entry = self._channels.get(channel_id)
        if entry is None:
            raise ValueError(f"channel {channel_id} was not registered with add_topic")
        now = time.monotonic()
        if now >= self._flush_at:
            self.flush(now)
        publish = log_time_ns if publish_time_ns is None else publish_time_ns
        if not (0 <= log_time_ns <= _MAX_U64 and 0 <= publish <= _MAX_U64):
            raise ValueError(f"times must be non-negative ns, got {log_time_ns}, {publish}")
        sequence = entry.sequence
        entry.sequence = (sequence + 1) & _MAX_U32
        self._writer.add_message(
            channel_id, log_time=log_time_ns, data=bytes(payload),
            publish_time=publish, sequence=sequence,
        )
        if attachment is not None:
            if not entry.data_channel_id:
                entry.data_channel_id = self._writer.register_channel(
                    entry.topic + ATTACHMENT_SUFFIX,
                    ATTACHMENT_ENCODING,
                    0,
                    metadata={ATTACHMENT_OF: entry.topic},
                )
            data = bytes(memoryview(attachment).cast("B"))
            self._writer.add_message(
                entry.data_channel_id, log_time=log_time_ns, data=data,
                publish_time=publish, sequence=sequence,
            )
            if entry.image_view:
                self._write_image_view(entry, log_time_ns, publish, sequence, payload, data)
        self.messages += 1

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
            self._view_schema_id = self._writer.register_schema(
                foxglove.RAW_IMAGE, MESSAGE_ENCODING, foxglove.raw_image_schema())
        if not entry.view_channel_id:
            entry.view_channel_id = self._writer.register_channel(
                entry.topic + FOXGLOVE_IMAGE_SUFFIX, MESSAGE_ENCODING, self._view_schema_id,
                metadata={VIEW_OF: entry.topic},
            )
        self._writer.add_message(
            entry.view_channel_id, log_time=log_time_ns, data=view,
            publish_time=publish, sequence=sequence,
        )

    def flush(self, now: float | None = None) -> None:
        """Write out the open chunk (its messages become recoverable after a crash); the
        recorder does this on its own every ``flush_interval_s`` of wall clock, at the
        first message after that (and from :meth:`idle`)."""
        if self._closed:
            return
        self._flush_at = (time.monotonic() if now is None else now) + self.flush_interval_s
        self._writer.flush()

    def idle(self, now: float) -> None:
        """Called while the run waits (a slow component, real-time pacing): flush the
        open chunk when due, so a crash then loses nothing older than the interval."""
        if now >= self._flush_at and not self._closed and self._file.failure is None:
            self.flush(now)

    def close(self) -> None:
        """Finish the file (indexes, summary, footer) and close it. Idempotent; never
        raises: after a failed write (``failure``) the file ends at its last whole record
        with a footer and no index (readable; ``moonpool recover`` indexes it)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._file.failure is None:
                try:
                    self._writer.finish()
                except RecordingFailed:
                    pass
            if self._file.failure is not None:
                self._file.end_cut_file()
        finally:
            self._file.close()

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

