"""Observers of the message stream: the MCAP recording and the stream digest.

Modules: ``layout`` (names and sizes), ``digest`` (:class:`Digest`), ``writer``
(:class:`Recorder`, :class:`DiskReserve`), ``reader`` (:func:`read_recording`,
:func:`recording_info`, ...), ``recover`` (:func:`recover`); the public names are
re-exported here.

Every message an execution publishes is

- hashed into a :class:`Digest` (always; the digest goes into ``summary.json`` and is
  what a determinism check compares), and
- written by a :class:`Recorder` to an MCAP file with protobuf schemas (unless the rig
  says ``record = false``), which opens in Foxglove and is read back by
  :func:`read_recording` for plots and checks.

Layout of a recording (what a reader in another language needs to know):

- Header profile ``""`` (protobuf has no MCAP profile); chunks compressed with zstd,
  at most about 1 MiB each, and the open chunk is written out at least every 0.5 s of
  wall clock (``FLUSH_INTERVAL_S``), so a crash loses at most the messages of about the
  last half second (docs/recordings.md). A file cut short has no summary section
  (and, after a full disk, a footer without one); :func:`read_recording` reads it by
  scanning and :func:`recover` (``moonpool recover``) rewrites it with its index.
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

from .digest import Digest
from .layout import (
    ATTACHMENT_ENCODING,
    ATTACHMENT_OF,
    ATTACHMENT_SUFFIX,
    CHUNK_SIZE,
    COMPONENT_METADATA,
    FLUSH_INTERVAL_S,
    FOXGLOVE_IMAGE_SUFFIX,
    INITIALIZE_METADATA,
    MESSAGE_ENCODING,
    RUN_METADATA,
    VIEW_OF,
)
from .reader import (
    RecordedMessage,
    RecordingInfo,
    component_topics,
    decode_recorded,
    digest_of_recording,
    read,
    read_recording,
    recorded_class,
    recording_info,
)
from .recover import Recovered, recover
from .writer import DiskReserve, Recorder

__all__ = [
    "ATTACHMENT_ENCODING", "ATTACHMENT_OF", "ATTACHMENT_SUFFIX", "CHUNK_SIZE",
    "COMPONENT_METADATA", "FLUSH_INTERVAL_S", "FOXGLOVE_IMAGE_SUFFIX", "INITIALIZE_METADATA",
    "MESSAGE_ENCODING", "RUN_METADATA", "VIEW_OF", "Digest", "DiskReserve", "RecordedMessage",
    "RecordingInfo", "Recorder", "Recovered", "component_topics", "decode_recorded",
    "digest_of_recording", "read", "read_recording", "recorded_class", "recording_info",
    "recover",
]
