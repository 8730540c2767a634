"""Reading recordings back: messages in write order with their attachments joined,
what a recording declares, tables; a file cut short by a crash is read as far as it
goes (the layout is in the package docstring)."""

from __future__ import annotations

import functools
import io
import itertools
import logging
from collections.abc import Iterable, Iterator
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

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import MoonpoolError, PortError

from .digest import Digest
from .layout import ATTACHMENT_OF, ATTACHMENT_SUFFIX, MCAP0_MAGIC, VIEW_OF

log = logging.getLogger("moonpool.recording")


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
        if f.read(8) != MCAP0_MAGIC:
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
        if f.read(8) != MCAP0_MAGIC:
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
    from ..export import read as read_tables

    return read_tables(path, None if topics is None else list(topics))


