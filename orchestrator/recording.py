"""Observers of the message stream: the MCAP recording and the stream digest.

Every message an execution publishes is

- hashed into a :class:`Digest` (always; the digest goes into ``summary.json`` and is
  what a determinism check compares), and
- written by a :class:`Recorder` to an MCAP file with protobuf schemas (unless the rig
  says ``record = false``), which opens in Foxglove and is read back by
  :func:`read_recording` for plots and checks.

Layout of a recording (what a reader in another language needs to know):

- Header profile ``""`` (protobuf has no MCAP profile); chunks compressed with zstd,
  about 256 KiB each, so a crash loses at most the chunk being built.
- One channel per output port, topic ``/{component}/{port}``, message encoding
  ``protobuf``; its schema is named by the full type name (``moonpool.v1.VehicleState``),
  encoding ``protobuf``, data a serialized ``google.protobuf.FileDescriptorSet`` holding
  the type's file and every file it imports.
- Message log time and publish time are the **simulation** time in ns (not wall
  clock), so log times may go back and forth across channels; messages are stored in
  the order they were published, and that order is the order of the digest.
- Bulk data travelling beside a message (image pixels) is a second message on a
  sibling channel ``{topic}#data`` (schema id 0, message encoding
  ``application/octet-stream``, channel metadata ``moonpool.attachment_of = {topic}``),
  written right after its message, with the same log time.
- Views (only with ``run.foxglove_images = true``): each frame of an output of type
  ``moonpool.v1.ImageHeader`` that carries pixels is also written, header and pixels
  together, as a ``foxglove.RawImage`` (what Foxglove's Image panel shows) on the
  channel ``{topic}/foxglove``: message encoding ``protobuf``, schema
  ``foxglove.RawImage`` (encoding ``protobuf``, a FileDescriptorSet of
  ``foxglove/RawImage.proto`` and ``google/protobuf/timestamp.proto``), channel
  metadata ``moonpool.view_of = {topic}``; written right after the frame's ``#data``
  message, same log and publish time and sequence; ``timestamp`` is the header's
  ``sim_time_ns`` (the log time for an ImageHeader without header), ``frame_id`` the
  header's (orchestrator/foxglove.py has the whole mapping). A view copies data
  already in the recording: it is not a message of the stream, not in the digest, and
  every reader here skips channels with ``moonpool.view_of``. An output left out by
  ``run.record_exclude`` has no view either.
- Metadata record ``moonpool.run`` describes the run; other metadata records (one per
  component, ...) and attachments (the rig file) are added by the run.
- Metadata record ``moonpool.initialize`` (``messages = N``, written once every
  component is initialized): the first N messages in write order are the components'
  Initialize outputs. A replay (adapters/replay.py) needs it to tell them from the
  outputs of a first step at the same simulation time.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import logging
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message
from mcap.exceptions import InvalidMagic
from mcap.reader import make_reader
from mcap.records import Channel, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader
from mcap.writer import LIBRARY_IDENTIFIER, CompressionType, Writer

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import MoonpoolError, PortError
from moonpool.v1 import vision_pb2

from . import foxglove

log = logging.getLogger("moonpool.recording")

MESSAGE_ENCODING = "protobuf"
"""Message encoding of every port channel (and schema encoding of their schemas)."""
ATTACHMENT_ENCODING = "application/octet-stream"
"""Message encoding of the ``{topic}#data`` channels that carry bulk data."""
ATTACHMENT_SUFFIX = "#data"
"""Suffix of the sibling channel that carries a port's attachments."""
ATTACHMENT_OF = "moonpool.attachment_of"
"""Channel metadata key on a ``#data`` channel: the topic whose attachments it carries."""
VIEW_OF = "moonpool.view_of"
"""Channel metadata key on a view channel (``{topic}/foxglove``): the topic it shows.
Readers of the message stream skip these channels."""
FOXGLOVE_IMAGE_SUFFIX = "/foxglove"
"""Suffix of the channel carrying a port's frames as ``foxglove.RawImage``."""
RUN_METADATA = "moonpool.run"
"""Name of the metadata record describing the run."""
INITIALIZE_METADATA = "moonpool.initialize"
"""Name of the metadata record saying how many messages Initialize published."""
COMPONENT_METADATA = "component/"
"""Prefix of the metadata record of each component (``component/NAME``)."""
CHUNK_SIZE = 256 * 1024
"""Uncompressed size after which a chunk is written out."""

_MAX_U32 = 0xFFFF_FFFF
_MAX_U64 = 0xFFFF_FFFF_FFFF_FFFF


# ------------------------------------------------------------------- digest


class Digest:
    """sha256 over the canonical message stream.

    The digest is the SHA-256 of the concatenation, in publication order, of one
    record per message::

        u32 LE   byte length of the topic in UTF-8
        bytes    the topic in UTF-8, e.g. "/vehicle/state" (no terminator)
        i64 LE   log time: the simulation time of the message, ns
        u32 LE   byte length of the payload
        bytes    the payload: the message's deterministic protobuf serialization
        u32 LE   byte length of the attachment (0 when there is none)
        bytes    the attachment (raw bulk data, e.g. image pixels), if any

    Nothing else enters: no wall-clock time, no publish time, no type name, no
    separator between records. A message without an attachment and one with an
    empty attachment hash alike. :meth:`hexdigest` is the lowercase hex of the hash;
    the digest of no messages is the SHA-256 of the empty string.

    Example (Python)::

        topic = b"/a/b"
        record = (struct.pack("<I", len(topic)) + topic + struct.pack("<q", t_ns)
                  + struct.pack("<I", len(payload)) + payload + struct.pack("<I", 0))
    """

    __slots__ = ("_hash", "count", "_prefix")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0
        """Messages hashed so far."""
        self._prefix: dict[str, bytes] = {}  # topic -> its encoded length + name

    def update(
        self,
        topic: str,
        log_time_ns: int,
        payload: bytes,
        attachment: bytes | memoryview | None = None,
    ) -> None:
        """Hash one message (in the order the messages were published)."""
        prefix = self._prefix.get(topic)
        if prefix is None:
            prefix = self._prefix[topic] = self.topic_prefix(topic)
        self.update_prefixed(prefix, log_time_ns, payload, attachment)

    @staticmethod
    def topic_prefix(topic: str) -> bytes:
        """The start of every record of ``topic``: its length and UTF-8 bytes."""
        name = topic.encode("utf-8")
        return struct.pack("<I", len(name)) + name

    def update_prefixed(
        self,
        prefix: bytes,
        log_time_ns: int,
        payload: bytes,
        attachment: bytes | memoryview | None = None,
    ) -> None:
        """:meth:`update` with the topic given as its :meth:`topic_prefix` (the
        execution's hot path keeps it per channel)."""
        h = self._hash
        if attachment is None:
            h.update(b"".join((prefix, struct.pack("<qI", log_time_ns, len(payload)), payload,
                               b"\0\0\0\0")))
        else:
            h.update(prefix)
            h.update(struct.pack("<qI", log_time_ns, len(payload)))
            h.update(payload)
            data = memoryview(attachment).cast("B")
            h.update(struct.pack("<I", data.nbytes))
            h.update(data)
        self.count += 1

    def hexdigest(self) -> str:
        """Lowercase hex SHA-256 of the records hashed so far (hashing may go on)."""
        return self._hash.hexdigest()


# ----------------------------------------------------------------- recorder


class _WriteThrough:
    """The file as the MCAP writer sees it: every write goes straight to the OS.

    The writer already hands over whole records (a chunk, its indexes), so no
    user-space buffer is needed, and a killed process leaves every finished chunk on
    disk.
    """

    def __init__(self, path: Path) -> None:
        self._raw = open(path, "wb", buffering=0)  # noqa: SIM115 (closed by close())

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        total = view.nbytes
        while view.nbytes:
            n = self._raw.write(view)
            view = view[n:]
        return total

    def tell(self) -> int:
        return self._raw.tell()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._raw.close()


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
        foxglove_images: bool = False,
    ) -> None:
        self.path = Path(path)
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

    def close(self) -> None:
        """Finish the file (indexes, summary, footer) and close it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.finish()
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


# ------------------------------------------------------------------ reading


@dataclass(frozen=True)
class RecordedMessage:
    """One message read back from a recording, with its attachment joined back."""

    topic: str
    type_name: str
    """Full type name (the schema name); "" for a channel without schema."""
    log_time_ns: int
    publish_time_ns: int
    payload: bytes
    attachment: bytes | None = None
    schema: bytes = field(default=b"", repr=False, compare=False)
    """The schema data (FileDescriptorSet) of the channel, to decode unknown types."""


def read_recording(path: Path | str) -> Iterator[RecordedMessage]:
    """Messages of a recording in write (publication) order, attachments joined;
    view channels (``moonpool.view_of``, e.g. ``{topic}/foxglove``) are skipped.

    Works on a file cut short by a crash: everything up to the last complete chunk is
    read (with a warning). Raises MoonpoolError for a file that is not MCAP at all.
    """
    with open(path, "rb") as f:
        if f.read(8) != b"\x89MCAP0\r\n":
            raise MoonpoolError(
                f"{path} is not an MCAP recording", fix="give the recording.mcap of a run"
            )
        f.seek(0)
        pending: RecordedMessage | None = None
        for schema, channel, record in _records_in_file_order(f, str(path)):
            if VIEW_OF in channel.metadata:
                continue  # a copy of messages already read (a Foxglove view)
            parent = channel.metadata.get(ATTACHMENT_OF)
            if parent is not None:
                if (
                    pending is not None
                    and pending.topic == parent
                    and pending.log_time_ns == record.log_time
                    and pending.attachment is None
                ):
                    pending = replace(pending, attachment=bytes(record.data))
                else:
                    log.debug("attachment on %s without its message", channel.topic)
                continue
            if pending is not None:
                yield pending
            pending = RecordedMessage(
                topic=channel.topic,
                type_name=schema.name if schema is not None else "",
                log_time_ns=record.log_time,
                publish_time_ns=record.publish_time,
                payload=bytes(record.data),
                schema=schema.data if schema is not None else b"",
            )
        if pending is not None:
            yield pending


_Record = tuple[Schema | None, Channel, McapMessage]


def _records_in_file_order(f: io.BufferedReader, name: str) -> Iterator[_Record]:
    """(schema, channel, message) in file order: through the index when the file is
    complete, else (or when the indexed read breaks) by scanning the stream."""
    done = 0
    try:
        reader = make_reader(f)
        summary = reader.get_summary()
    except Exception:  # noqa: BLE001 (a cut file fails in many ways: mcap, struct, OS)
        summary = None
    if summary is not None and summary.chunk_indexes:
        try:
            # log_time_order=False: chunks and messages in file order, not sorted.
            for item in reader.iter_messages(log_time_order=False):
                yield item
                done += 1
            return
        except Exception as exc:  # noqa: BLE001 (damaged chunk: rescan the stream)
            log.warning("recording %s: indexed read failed (%s); scanning it", name, exc)
    elif summary is None:
        log.warning("recording %s has no summary (cut short?); reading what is there", name)
    yield from itertools.islice(_scan(f, name), done, None)


def _scan(f: io.BufferedReader, name: str) -> Iterator[_Record]:
    """Linear read of the records, stopping quietly at the first broken one."""
    f.seek(0)
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    records = iter(StreamReader(f, skip_magic=False).records)
    count = 0
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except InvalidMagic:
            return  # the trailing magic of a complete file, or garbage after the footer
        except Exception as exc:  # noqa: BLE001 (truncated or damaged: keep what we have)
            log.warning(
                "recording %s ends in a broken record after %d message records (%s: %s)",
                name, count, type(exc).__name__, exc,
            )
            return
        if isinstance(record, McapMessage):
            channel = channels.get(record.channel_id)
            if channel is None:
                continue
            count += 1
            yield schemas.get(channel.schema_id), channel, record
        elif isinstance(record, Schema):
            schemas[record.id] = record
        elif isinstance(record, Channel):
            channels[record.id] = record


def decode_recorded(msg: RecordedMessage) -> Message:
    """The decoded message: through moonpool's types, else the schema stored in the file.

    Raises PortError when the type is unknown and the schema does not declare it, or
    when the payload does not parse.
    """
    cls = recorded_class(msg.type_name, msg.schema)
    out = cls()
    try:
        out.ParseFromString(msg.payload)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise PortError(
            f"recorded payload on {msg.topic} is not a valid {msg.type_name}: {exc}"
        ) from exc
    return out


def recorded_class(type_name: str, schema: bytes) -> type[Message]:
    """The class of a recorded message type: moonpool's own, else one built from the
    schema stored in the recording. PortError when neither knows it."""
    try:
        return wire.message_class(type_name)
    except PortError:
        if not schema:
            raise
        return _class_from_schema(type_name, schema)


@functools.lru_cache(maxsize=64)
def _class_from_schema(type_name: str, schema: bytes) -> type[Message]:
    """A message class built from a FileDescriptorSet, in a private descriptor pool."""
    try:
        fds = descriptor_pb2.FileDescriptorSet.FromString(schema)
    except DecodeError as exc:
        raise PortError(f"the recorded schema of {type_name} does not parse: {exc}") from exc
    pool = descriptor_pool.DescriptorPool()
    todo = list(fds.file)
    added: set[str] = set()
    while todo:  # dependencies first, whatever order the set is in
        ready = [f for f in todo if all(d in added for d in f.dependency)]
        if not ready:
            missing = sorted({d for f in todo for d in f.dependency if d not in added})
            raise PortError(f"the recorded schema of {type_name} lacks {missing}")
        for f in ready:
            pool.AddSerializedFile(f.SerializeToString())
            added.add(f.name)
            todo.remove(f)
    try:
        desc = pool.FindMessageTypeByName(type_name)
    except KeyError as exc:
        raise PortError(f"the recorded schema does not declare {type_name}") from exc
    return message_factory.GetMessageClass(desc)


def digest_of_recording(path: Path | str, topics: Iterable[str] | None = None) -> str:
    """The :class:`Digest` of a recording, recomputed in write order.

    Equals the live digest of the run that wrote it (when every message was recorded
    and the file is complete). ``topics``: hash only the messages of these topics
    (e.g. a downstream component's, to compare a replayed run with the original;
    :func:`component_topics` lists a component's), in the same record format.
    """
    wanted = None if topics is None else set(topics)
    digest = Digest()
    for m in read_recording(path):
        if wanted is None or m.topic in wanted:
            digest.update(m.topic, m.log_time_ns, m.payload, m.attachment)
    return digest.hexdigest()


def component_topics(topics: Iterable[str], component: str) -> list[str]:
    """The port topics ``/{component}/{port}`` among ``topics`` (no ``#data`` or view
    channels)."""
    prefix = f"/{component}/"
    return sorted(t for t in topics
                  if t.startswith(prefix) and "/" not in t[len(prefix):]
                  and not t.endswith(ATTACHMENT_SUFFIX))


@dataclass(frozen=True)
class RecordingInfo:
    """What a recording declares, without reading its messages (:func:`recording_info`)."""

    topics: dict[str, str]
    """Port topic -> full type name of its messages (``#data`` and view channels left out)."""
    schemas: dict[str, bytes]
    """Full type name -> schema data (a serialized FileDescriptorSet)."""
    metadata: dict[str, dict[str, str]]
    """Metadata records by name (``moonpool.run``, ``component/NAME``, ...)."""
    complete: bool
    """Whether the file has its summary (closed properly); a file cut short is read
    by scanning it."""
    attached: frozenset[str] = frozenset()
    """Port topics with a ``#data`` channel: their messages carried attachments."""

    def components(self) -> list[str]:
        """Names of the components that published on a port topic, sorted."""
        return sorted({t.split("/")[1] for t in self.topics if t.count("/") == 2})


def recording_info(path: Path | str) -> RecordingInfo:
    """Channels, schemas and metadata of a recording (from its summary when it has
    one, else by scanning the file). Raises MoonpoolError when the file cannot be read
    or is not MCAP."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise MoonpoolError(f"cannot read recording {path}: {exc.strerror or exc}",
                            fix="give the path of a run's recording.mcap") from exc
    with f:
        if f.read(8) != b"\x89MCAP0\r\n":
            raise MoonpoolError(f"{path} is not an MCAP recording",
                                fix="give the recording.mcap of a run")
        f.seek(0)
        schemas: dict[int, Schema] = {}
        channels: dict[int, Channel] = {}
        metadata: dict[str, dict[str, str]] = {}
        summary = None
        try:
            reader = make_reader(f)
            summary = reader.get_summary()
            if summary is not None:
                schemas, channels = dict(summary.schemas), dict(summary.channels)
                for record in reader.iter_metadata():
                    metadata[record.name] = dict(record.metadata)
        except Exception:  # noqa: BLE001 (a cut file fails in many ways)
            summary = None
        if summary is None:
            schemas, channels, metadata = {}, {}, {}
            f.seek(0)
            try:
                for record in StreamReader(f, skip_magic=False).records:
                    if isinstance(record, Schema):
                        schemas[record.id] = record
                    elif isinstance(record, Channel):
                        channels[record.id] = record
                    elif isinstance(record, Metadata):
                        metadata[record.name] = dict(record.metadata)
            except Exception:  # noqa: BLE001 (the broken end of a cut file)
                pass
    topics: dict[str, str] = {}
    types: dict[str, bytes] = {}
    attached = frozenset(c.metadata[ATTACHMENT_OF] for c in channels.values()
                         if ATTACHMENT_OF in c.metadata)
    for channel in channels.values():
        if ATTACHMENT_OF in channel.metadata or VIEW_OF in channel.metadata:
            continue
        schema = schemas.get(channel.schema_id)
        type_name = schema.name if schema is not None else ""
        topics[channel.topic] = type_name
        if schema is not None:
            types[type_name] = bytes(schema.data)
    return RecordingInfo(topics, types, metadata, summary is not None, attached)


def read(path: Path | str, topics: Iterable[str] | None = None) -> dict[str, Any]:
    """The recording as tables: ``{topic: pyarrow.Table}``, one row per message, time as
    ``log_time_ns`` and ``t_s``, fields flattened with their protobuf names
    (``position_ned_m.x``); ``.to_pandas()`` gives a DataFrame. Needs pyarrow (the
    ``data`` extra). See :mod:`moonpool.orchestrator.export` and docs/recordings.md."""
    from .export import read as read_tables

    return read_tables(path, None if topics is None else list(topics))

