"""orchestrator/foxglove.py: which ImageHeader encodings get a foxglove.RawImage view
(the recording's ``run.foxglove_images`` and the live view share it): Foxglove's own
names, the deep-sea camera's 8-bit Bayer mosaic included; none for rgb16."""

from __future__ import annotations

from moonpool.orchestrator import foxglove as views
from moonpool.v1 import vision_pb2


def _header(encoding: str, width: int = 4, height: int = 2) -> vision_pb2.ImageHeader:
    h = vision_pb2.ImageHeader(width=width, height=height, encoding=encoding)
    h.header.sim_time_ns = 1_500_000_000
    return h


def test_bayer_rggb8_gets_a_view_byte_for_byte():
    pixels = bytes(range(8))
    view = views.raw_image_class().FromString(
        views.image_view(_header("bayer_rggb8"), pixels, 0))
    assert (view.encoding, view.step, view.data) == ("bayer_rggb8", 4, pixels)
    assert (view.timestamp.seconds, view.timestamp.nanos) == (1, 500_000_000)


def test_encodings_foxglove_does_not_read_get_none():
    assert views.image_view(_header("rgb16"), bytes(48), 0) is None
    assert views.image_view(_header("bayer_rggb16"), bytes(16), 0) is None
