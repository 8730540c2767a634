"""The stream digest: SHA-256 over the canonical message stream (docs/protocol.md §12)."""

from __future__ import annotations

import hashlib
import struct


_TIME_LENGTH = struct.Struct("<qI").pack  # a record's log time and payload length
_NO_ATTACHMENT = b"\0\0\0\0"  # a record's attachment length when it has none


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
            h.update(b"".join((prefix, _TIME_LENGTH(log_time_ns, len(payload)), payload,
                               _NO_ATTACHMENT)))
        else:
            h.update(prefix)
            h.update(_TIME_LENGTH(log_time_ns, len(payload)))
            h.update(payload)
            data = memoryview(attachment).cast("B")
            h.update(struct.pack("<I", data.nbytes))
            h.update(data)
        self.count += 1

    def hexdigest(self) -> str:
        """Lowercase hex SHA-256 of the records hashed so far (hashing may go on)."""
        return self._hash.hexdigest()

