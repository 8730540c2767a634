"""The stream digest: SHA-256 over the canonical message stream (docs/protocol.md §12)."""

from __future__ import annotations

import hashlib
import os
import queue
import struct
import threading


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

    __slots__ = ("_hash", "count", "_prefix", "_buffer", "update_prefixed")

    def __init__(self, background: bool = False) -> None:
        """``background``: the records are gathered into 256 KiB pieces that a worker
        thread hashes (in order: the same digest), so that the stepping thread does not
        spend its time in SHA-256, on a camera's frames above all; :meth:`hexdigest`
        waits for it. The attachments are copied into the piece (a component may reuse
        its buffer)."""
        self._hash = hashlib.sha256()
        self.count = 0
        """Messages hashed so far."""
        self._prefix: dict[str, bytes] = {}  # topic -> its encoded length + name
        self._buffer: bytearray | None = bytearray() if background else None
        self.update_prefixed = self._gather if background else self._update_now

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

    def _update_now(
        self,
        prefix: bytes,
        log_time_ns: int,
        payload: bytes,
        attachment: bytes | memoryview | None = None,
    ) -> None:
        """``update_prefixed``: :meth:`update` with the topic given as its
        :meth:`topic_prefix` (the execution's hot path keeps it per channel)."""
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

    def _gather(
        self,
        prefix: bytes,
        log_time_ns: int,
        payload: bytes,
        attachment: bytes | memoryview | None = None,
    ) -> None:
        """``update_prefixed`` in the background: the record into the open piece."""
        buf = self._buffer
        buf += prefix
        buf += _TIME_LENGTH(log_time_ns, len(payload))
        buf += payload
        if attachment is None:
            buf += _NO_ATTACHMENT
        else:
            data = memoryview(attachment).cast("B")
            buf += _U32(data.nbytes)
            buf += data
        self.count += 1
        if len(buf) >= _PIECE:
            _HASHER.put(self._hash.update, buf)
            self._buffer = bytearray()

    def hexdigest(self) -> str:
        """Lowercase hex SHA-256 of the records hashed so far (hashing may go on)."""
        if self._buffer is not None:
            if self._buffer:
                _HASHER.put(self._hash.update, self._buffer)
                self._buffer = bytearray()
            _HASHER.wait()
        return self._hash.hexdigest()


_U32 = struct.Struct("<I").pack
_PIECE = 256 * 1024  # bytes per piece hashed in the background


class _Hasher:
    """One worker thread per process that hashes the background digests' pieces in
    the order they were handed over (a bounded queue: at most 64 MiB waiting)."""

    def __init__(self) -> None:
        self._queue: queue.Queue | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._error: BaseException | None = None

    def _started(self) -> queue.Queue:
        q = self._queue
        if q is None or self._pid != os.getpid():  # none yet, or a forked child's copy
            with self._lock:
                if self._queue is None or self._pid != os.getpid():
                    self._queue = q = queue.Queue(maxsize=256)
                    self._pid = os.getpid()
                    threading.Thread(target=self._run, args=(q,), name="moonpool-digest",
                                     daemon=True).start()
                q = self._queue
        return q

    def _run(self, q: queue.Queue) -> None:
        while True:
            update, data = q.get()
            try:
                update(data)  # a SHA-256 update of a piece lets other threads run
            except BaseException as exc:  # noqa: BLE001 - told to whoever waits
                self._error = exc

    def put(self, update, data: bytearray) -> None:
        self._started().put((update, data))

    def wait(self) -> None:
        """Return when every piece handed over so far is hashed."""
        done = threading.Event()
        self._started().put((lambda _: done.set(), None))
        done.wait()
        if self._error is not None:  # (a memory error, say): the digest would be wrong
            raise RuntimeError(f"hashing the message stream failed: {self._error!r}")


_HASHER = _Hasher()

