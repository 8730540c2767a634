"""The file side of a recording: whole MCAP records onto the disk, and at the end the
summary that indexes them (the layout is in the package docstring).

The recorder (writer.py) builds the open chunk's records itself on the stepping thread
(one ``struct`` pack and one copy per message: the ``mcap`` package's writer spends
about 4 µs per message in Python, docs/benchmarks.md "Recording"); everything here
runs on the recording's writer thread (background.py): compressing a chunk, its
checksum, its message indexes, the write to the disk, and the summary. The records
other than Chunk and MessageIndex are written by the ``mcap`` package's record classes.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import zstandard
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import (
    Attachment,
    AttachmentIndex,
    Channel,
    ChunkIndex,
    DataEnd,
    Footer,
    Header,
    Metadata,
    MetadataIndex,
    Schema,
    Statistics,
    SummaryOffset,
)

from moonpool.components.sdk.errors import RecordingFailed

from .layout import MCAP0_MAGIC

_CHUNK_HEAD = struct.Struct("<BQQQQI")  # opcode, length, start, end, uncompressed size, crc
_MESSAGE_INDEX_HEAD = struct.Struct("<BQHI")  # opcode, length, channel id, records length
_COMPRESSION = b"zstd"
_LITTLE = sys.byteorder == "little"


class WriteThrough:
    """The file as the recording sees it: every write goes straight to the OS.

    Whole records are handed over (a chunk with its indexes), so no user-space buffer
    is needed, and a killed process leaves every record written on disk. A write that
    fails (a full disk) cuts the file back to the end of the last whole record and
    raises RecordingFailed; so does every write after it (``failure``).
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

    def write(self, *parts: Any) -> int:
        """Write ``parts`` (bytes-like) as one whole: after a failure in any of them
        the file ends where it ended before the first."""
        if self.failure is not None:
            raise self.failure
        total = 0
        try:
            for part in parts:
                view = memoryview(part).cast("B")
                total += view.nbytes
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
        """End a file whose writing failed: DataEnd, a Footer without summary, the magic
        (what any MCAP reader accepts; ``moonpool recover`` adds the index). On no room
        even for that, the file stays cut at its last whole record, still readable."""
        builder = RecordBuilder()
        DataEnd(data_section_crc=0).write(builder)
        Footer(summary_start=0, summary_offset_start=0, summary_crc=0).write(builder)
        try:
            self._raw.write(builder.end() + MCAP0_MAGIC)
        except OSError:
            self.cut()

    def close(self) -> None:
        try:
            self._raw.close()
        except OSError:
            pass


class McapFile:
    """Writes the records of one MCAP file in order and keeps what its summary needs
    (the chunk, metadata and attachment indexes, the statistics). Not thread-safe: the
    writer thread is its only user once the header is written."""

    def __init__(self, path: Path, profile: str, library: str) -> None:
        self.file = WriteThrough(path)
        self._crc = 0  # of the data section so far
        self._offset = 0
        self._compressor = zstandard.ZstdCompressor()
        self._chunk_indexes: list[ChunkIndex] = []
        self._metadata_indexes: list[MetadataIndex] = []
        self._attachment_indexes: list[AttachmentIndex] = []
        self.statistics = Statistics(
            attachment_count=0, channel_count=0, channel_message_counts={}, chunk_count=0,
            message_count=0, message_end_time=0, message_start_time=0, metadata_count=0,
            schema_count=0)
        builder = RecordBuilder()
        Header(profile=profile, library=library).write(builder)
        try:
            self._put(MCAP0_MAGIC, builder.end())
        except BaseException:
            self.file.close()
            raise

    def _put(self, *parts: Any) -> None:
        crc, offset = self._crc, self._offset
        for part in parts:
            crc = zlib.crc32(part, crc)
            offset += len(part)
        self.file.write(*parts)
        self._crc, self._offset = crc, offset

    def write_chunk(self, records: bytes | bytearray,
                    indexes: Mapping[int, list[int]]) -> None:
        """One chunk: its ``records`` (Schema, Channel and Message records as built by
        the recorder) compressed, then a MessageIndex per channel: ``indexes`` maps a
        channel id to its log time and offset in ``records`` of each message, flat
        (time, offset, time, offset, ...), in write order."""
        stats = self.statistics
        start = end = -1
        counts = stats.channel_message_counts
        for channel_id, flat in indexes.items():
            times = flat[0::2]
            low, high = min(times), max(times)
            start = low if start < 0 else min(start, low)
            end = max(end, high)
            counts[channel_id] = counts.get(channel_id, 0) + len(times)
            stats.message_count += len(times)
        if stats.chunk_count == 0:
            stats.message_start_time, stats.message_end_time = start, end
        else:
            stats.message_start_time = min(stats.message_start_time, start)
            stats.message_end_time = max(stats.message_end_time, end)
        stats.chunk_count += 1
        compressed = self._compressor.compress(records)
        length = 8 + 8 + 8 + 4 + 4 + len(_COMPRESSION) + 8 + len(compressed)
        head = _CHUNK_HEAD.pack(Opcode.CHUNK, length, start, end, len(records),
                                zlib.crc32(records)) + struct.pack(
            f"<I{len(_COMPRESSION)}sQ", len(_COMPRESSION), _COMPRESSION, len(compressed))
        chunk_start = self._offset
        index_parts: list[bytes] = []
        index_offsets: dict[int, int] = {}
        at = chunk_start + len(head) + len(compressed)
        for channel_id, flat in indexes.items():
            entries = array("Q", flat)
            if not _LITTLE:
                entries.byteswap()
            body = entries.tobytes()
            part = _MESSAGE_INDEX_HEAD.pack(Opcode.MESSAGE_INDEX, 6 + len(body), channel_id,
                                            len(body)) + body
            index_offsets[channel_id] = at
            at += len(part)
            index_parts.append(part)
        # One buffer, one checksum, one write: each call that releases the GIL may
        # wait up to the switch interval to get it back (background.py).
        self._put(b"".join((head, compressed, *index_parts)))
        self._chunk_indexes.append(ChunkIndex(
            message_start_time=start, message_end_time=end, chunk_start_offset=chunk_start,
            chunk_length=len(head) + len(compressed), message_index_offsets=index_offsets,
            message_index_length=at - chunk_start - len(head) - len(compressed),
            compression=_COMPRESSION.decode(), compressed_size=len(compressed),
            uncompressed_size=len(records)))

    def add_metadata(self, name: str, data: Mapping[str, str]) -> None:
        builder = RecordBuilder()
        Metadata(name=name, metadata=dict(data)).write(builder)
        record = builder.end()
        self._metadata_indexes.append(MetadataIndex(offset=self._offset, length=len(record),
                                                    name=name))
        self._put(record)
        self.statistics.metadata_count += 1

    def add_attachment(self, name: str, data: bytes, media_type: str) -> None:
        builder = RecordBuilder()
        Attachment(create_time=0, log_time=0, name=name, media_type=media_type,
                   data=data).write(builder)
        record = builder.end()
        self._attachment_indexes.append(AttachmentIndex(
            offset=self._offset, length=len(record), log_time=0, create_time=0,
            data_size=len(data), name=name, media_type=media_type))
        self._put(record)
        self.statistics.attachment_count += 1

    def finish(self, schemas: list[Schema], channels: list[Channel]) -> None:
        """DataEnd, the summary (schemas, channels, statistics, chunk, attachment and
        metadata indexes, their offsets) and the footer."""
        builder = RecordBuilder()
        DataEnd(data_section_crc=self._crc).write(builder)
        self._put(builder.end())
        summary_start = self._offset
        stats = self.statistics
        stats.schema_count, stats.channel_count = len(schemas), len(channels)
        summary = RecordBuilder()
        offsets: list[SummaryOffset] = []
        groups: list[tuple[Opcode, list[Any]]] = [
            (Opcode.SCHEMA, schemas), (Opcode.CHANNEL, channels),
            (Opcode.STATISTICS, [stats]), (Opcode.CHUNK_INDEX, self._chunk_indexes),
            (Opcode.ATTACHMENT_INDEX, self._attachment_indexes),
            (Opcode.METADATA_INDEX, self._metadata_indexes)]
        for opcode, records in groups:
            start = summary.count
            for record in records:
                record.write(summary)
            offsets.append(SummaryOffset(group_opcode=opcode, group_start=summary_start + start,
                                         group_length=summary.count - start))
        summary_offset_start = summary_start + summary.count
        for offset in offsets:
            offset.write(summary)
        data = summary.end()
        crc = zlib.crc32(struct.pack("<BQQQ", Opcode.FOOTER, 8 + 8 + 4, summary_start,
                                     summary_offset_start), zlib.crc32(data))
        footer = RecordBuilder()
        Footer(summary_start=summary_start, summary_offset_start=summary_offset_start,
               summary_crc=crc).write(footer)
        self.file.write(data, footer.end(), MCAP0_MAGIC)
