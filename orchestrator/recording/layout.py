"""The names and sizes of moonpool's recording layout (see the package docstring)."""

from __future__ import annotations

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
CHUNK_SIZE = 1024 * 1024
"""Uncompressed size after which a chunk is written out (1 MiB, the mcap package's own
default). Each chunk is a job for the writer thread, which takes the GIL back a handful
of times per job; while the stepping thread runs flat out each of those waits costs it
too (with 256 KiB chunks, eight trivial FMUs stepped about 10 % slower than with the
chunks written on the stepping thread; with 1 MiB as fast: docs/benchmarks.md)."""
FLUSH_INTERVAL_S = 0.5
"""Wall-clock seconds after which the open chunk is written out even if it is not full:
a crash (SIGKILL, power kept) loses at most the messages of about this long
(docs/recordings.md, the figures in docs/benchmarks.md)."""
RESERVE_BYTES = 256 * 1024
"""Disk space held during a run (writer.DiskReserve) so that summary.json and the end of
the recording can be written when the disk fills."""
MCAP0_MAGIC = b"\x89MCAP0\r\n"
"""The 8 bytes an MCAP file starts and ends with."""
QUEUE_BYTES = 16 * 1024 * 1024
"""Bytes of closed chunks (and other records) the writer thread may hold before it has
written them; a hand-over beyond it waits for the disk (bounded memory; one chunk is
always let through, however large: a camera frame)."""
QUEUE_SECONDS = 0.25
"""How long ago the oldest chunk the writer thread holds unwritten may have been handed
over before a hand-over waits: a crash loses at most about this much more than the
open chunk, and a disk that stalls for less does not hold the run up."""
