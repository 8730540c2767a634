"""`moonpool recover RECORDING`: a recording without its index made whole again.

A recording whose run was killed (SIGKILL, power cut) or stopped by a full disk ends
after its last whole chunk, with no summary section and no footer (or a footer
without summary). Every reader here reads it by scanning, but seeking tools
(Foxglove's indexed loading, ``mcap info``) want the index. :func:`recover` reads
every whole record in file order (schemas, channels, messages, attachments,
metadata; a broken tail is dropped) and writes them again through the MCAP writer,
which adds chunk and message indexes, statistics, the summary and the footer. The
messages keep their order, times and bytes, so the stream digest is unchanged.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from mcap.exceptions import InvalidMagic
from mcap.records import Attachment, Channel, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader
from mcap.writer import CompressionType, Writer

from moonpool.components.sdk.errors import MoonpoolError, RecordingFailed

from .layout import CHUNK_SIZE, MCAP0_MAGIC
from .reader import recording_info

log = logging.getLogger("moonpool.recording")


@dataclass(frozen=True)
class Recovered:
    """What :func:`recover` did."""

    path: Path
    """The whole recording written."""
    messages: int
    """Message records kept (``#data`` attachments and views counted, as in the file)."""
    complete: bool
    """Whether the input already had its index (it is then copied as it is)."""
    dropped_bytes: int
    """Bytes at the end of the input that were not whole records (a cut chunk)."""


def recover(path: Path | str, out: Path | str | None = None) -> Recovered:
    """Write the whole records of recording ``path`` into ``out`` (default: ``path``
    itself, replaced atomically once the new file is complete) with a full index.
    MoonpoolError when ``path`` is not a recording or ``out`` cannot be written."""
    path = Path(path)
    target = Path(out) if out is not None else path
    info = recording_info(path)  # MoonpoolError if it is not MCAP at all
    tmp = target.with_name(f".{target.name}.recovering")
    size = os.path.getsize(path)
    try:
        kept, broken_at = _rewrite(path, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise RecordingFailed(f"cannot write {target}: {exc.strerror or exc}",
                              fix="free space there, or give another output (-o)") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Recovered(target, kept, info.complete,
                     0 if broken_at is None else size - broken_at)


def _rewrite(src: Path, dst: Path) -> tuple[int, int | None]:
    """Copy the whole records of ``src`` into a new, indexed file ``dst``; returns
    (message records, offset of the first broken record or None)."""
    schemas: dict[int, int] = {}  # id in src -> id in dst
    channels: dict[int, int] = {}
    messages = 0
    with open(src, "rb") as f, open(dst, "wb") as out:
        writer = Writer(out, chunk_size=CHUNK_SIZE, compression=CompressionType.ZSTD)
        header = None
        records = StreamReader(f, skip_magic=False).records
        used, broken_at = len(MCAP0_MAGIC), None
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except InvalidMagic:
                break  # the trailing magic of a complete file
            except Exception as exc:  # noqa: BLE001 (a cut or damaged tail: stop there)
                log.warning("recover %s: stopped at a broken record after %d messages "
                            "(%s)", src, messages, exc)
                broken_at = used
                break
            used = f.tell()
            kind = type(record).__name__
            if kind == "Header":
                header = record
                writer.start(profile=header.profile, library=header.library)
            elif header is None:
                continue
            elif kind == "DataEnd":
                break  # the summary section repeats what was read
            elif isinstance(record, Schema):
                if record.id not in schemas:
                    schemas[record.id] = writer.register_schema(record.name, record.encoding,
                                                                record.data)
            elif isinstance(record, Channel) and record.id not in channels:
                channels[record.id] = writer.register_channel(
                    record.topic, record.message_encoding, schemas.get(record.schema_id, 0),
                    dict(record.metadata))
            elif isinstance(record, McapMessage):
                channel = channels.get(record.channel_id)
                if channel is not None:
                    writer.add_message(channel, log_time=record.log_time, data=record.data,
                                       publish_time=record.publish_time,
                                       sequence=record.sequence)
                    messages += 1
            elif isinstance(record, Attachment):
                writer.add_attachment(record.create_time, record.log_time, record.name,
                                      record.media_type, record.data)
            elif isinstance(record, Metadata):
                writer.add_metadata(record.name, dict(record.metadata))
        if header is None:
            raise MoonpoolError(f"{src} has no MCAP header: nothing to recover",
                                fix="give the recording.mcap of a run")
        writer.finish()
    return messages, broken_at
