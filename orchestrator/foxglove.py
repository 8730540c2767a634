"""Foxglove views of recorded messages: camera frames as ``foxglove.RawImage``.

Moonpool sends an image as a small ``moonpool.v1.ImageHeader`` with the pixels beside
it (recorded on the sibling channel ``{topic}#data``). Foxglove's Image panel cannot
join the two; it shows messages of its own schema ``foxglove.RawImage``. With
``run.foxglove_images = true`` the :class:`~moonpool.orchestrator.recording.Recorder`
also writes each frame, header and pixels together, as one ``foxglove.RawImage`` on
the channel ``{topic}/foxglove`` (layout: the docstring of the ``recording`` package). Such a
channel is a *view*: a copy of data already in the recording, which every moonpool
reader skips.

The schema is Foxglove's published one (https://docs.foxglove.dev/docs/sdk/schemas/raw-image,
``schemas/proto/foxglove/RawImage.proto`` of github.com/foxglove/foxglove-sdk)::

    syntax = "proto3";
    package foxglove;
    import "google/protobuf/timestamp.proto";
    message RawImage {
      google.protobuf.Timestamp timestamp = 1;
      string frame_id = 7;
      fixed32 width = 2;
      fixed32 height = 3;
      string encoding = 4;
      fixed32 step = 5;
      bytes data = 6;
    }

It is built here as a ``FileDescriptorProto``, not generated into ``proto/``: it is
not part of the moonpool wire (no component sends it), and its class lives in a
private descriptor pool, so it cannot clash with another definition of
``foxglove/RawImage.proto`` in the same process (e.g. Foxglove's
``foxglove-schemas-protobuf`` package, which registers its own in the default pool).

Mapping of an ImageHeader and its pixels to a RawImage:

- ``timestamp``: ``header.sim_time_ns`` (the simulation time the image refers to);
  the message's log time when the ImageHeader has no header;
- ``frame_id``: ``header.frame_id``; ``width``, ``height`` as they are;
- ``encoding``: mono8, mono16, bgr8, rgb8, bayer_rggb8 (moonpool's names are
  Foxglove's; an empty encoding is mono8, as the localizer reads it); a frame in any
  other encoding gets no view (logged once per topic);
- ``step``: ``step_bytes``, or width x bytes per pixel when it is 0 (unpadded rows);
- ``data``: the pixels, byte for byte (mono16: little endian, as Foxglove reads it).
"""

from __future__ import annotations

import functools

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from google.protobuf.message import Message

RAW_IMAGE = "foxglove.RawImage"
"""Schema name of the image views (Foxglove recognises the name)."""
RAW_IMAGE_FILE = "foxglove/RawImage.proto"
"""File name of the schema, as in Foxglove's schema repository."""
IMAGE_HEADER = "moonpool.v1.ImageHeader"
"""The moonpool type whose attached frames get an image view."""
BYTES_PER_PIXEL = {"mono8": 1, "mono16": 2, "bgr8": 3, "rgb8": 3, "bayer_rggb8": 1}
"""The encodings of an ImageHeader that are also Foxglove's (the deep-sea camera's
8-bit Bayer mosaic included), and their pixel size; others (rgb16, bayer_rggb16)
have no view."""

_FIXED32 = descriptor_pb2.FieldDescriptorProto.TYPE_FIXED32
_STRING = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
_BYTES = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL


def raw_image_file() -> descriptor_pb2.FileDescriptorProto:
    """``foxglove/RawImage.proto`` as a FileDescriptorProto (module docstring)."""
    f = descriptor_pb2.FileDescriptorProto(
        name=RAW_IMAGE_FILE, package="foxglove", syntax="proto3",
        dependency=[timestamp_pb2.DESCRIPTOR.name],
    )
    m = f.message_type.add(name="RawImage")
    for name, number, kind, type_name in (
        ("timestamp", 1, _MESSAGE, ".google.protobuf.Timestamp"),
        ("frame_id", 7, _STRING, ""),
        ("width", 2, _FIXED32, ""),
        ("height", 3, _FIXED32, ""),
        ("encoding", 4, _STRING, ""),
        ("step", 5, _FIXED32, ""),
        ("data", 6, _BYTES, ""),
    ):
        field = m.field.add(name=name, number=number, label=_OPTIONAL, type=kind)
        if type_name:
            field.type_name = type_name
    return f


@functools.cache
def raw_image_schema() -> bytes:
    """The schema data of the image views: a serialized FileDescriptorSet holding
    ``google/protobuf/timestamp.proto`` and ``foxglove/RawImage.proto`` (in that order)."""
    timestamp = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(timestamp)
    fds = descriptor_pb2.FileDescriptorSet(file=[timestamp, raw_image_file()])
    return fds.SerializeToString(deterministic=True)


@functools.cache
def raw_image_class() -> type[Message]:
    """The ``foxglove.RawImage`` message class, in a private descriptor pool."""
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(raw_image_schema()).file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(RAW_IMAGE))


def image_view(header: Message, pixels: bytes, log_time_ns: int) -> bytes | None:
    """The serialized ``foxglove.RawImage`` of an ImageHeader and its pixels, or None
    when its encoding is not one Foxglove shares with moonpool (module docstring)."""
    encoding = header.encoding or "mono8"
    size = BYTES_PER_PIXEL.get(encoding)
    if size is None:
        return None
    t_ns = header.header.sim_time_ns if header.HasField("header") else log_time_ns
    seconds, nanos = divmod(int(t_ns), 1_000_000_000)
    msg = raw_image_class()(
        frame_id=header.header.frame_id, width=header.width, height=header.height,
        encoding=encoding, step=header.step_bytes or header.width * size, data=pixels,
    )
    msg.timestamp.seconds = seconds
    msg.timestamp.nanos = nanos
    return msg.SerializeToString(deterministic=True)
