"""The MCU serial protocol (docs/protocol-mcu.md): CRC check value, the spec's example
frames byte for byte, payload round trips, and the stream parser under garbage,
truncation and corruption (hypothesis, derandomized so every run is the same)."""

from __future__ import annotations

import binascii
import itertools
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moonpool.components.bridges.serial_protocol import (
    MAX_PAYLOAD,
    SYNC,
    ChannelTelemetry,
    Frame,
    FrameParser,
    Info,
    MsgId,
    Nack,
    NackReason,
    PayloadError,
    SeqCounter,
    SetSpeeds,
    Status,
    Telemetry,
    crc16_ccitt_false,
    encode_frame,
)

FUZZ = settings(derandomize=True, max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def test_crc_check_value():
    # CRC-16/CCITT-FALSE (a.k.a. CRC-16/IBM-3740): the catalogue check value.
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert crc16_ccitt_false(b"") == 0xFFFF


def test_crc_matches_the_bitwise_definition():
    def bitwise(data: bytes) -> int:
        crc = 0xFFFF
        for b in data:
            crc ^= b << 8
            for _ in range(8):
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        return crc

    for data in (b"\x00", b"\xff" * 7, bytes(range(256)), b"moonpool"):
        assert crc16_ccitt_false(data) == bitwise(data)
        assert crc16_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)  # stdlib, independent


# The example frames of docs/protocol-mcu.md, byte for byte (a firmware author tests
# against these, so they must stay true).
DOC_EXAMPLES = {
    "GET_INFO seq 0": (encode_frame(MsgId.GET_INFO, 0), "a5 00 00 03 ff fc"),
    "STOP seq 7": (encode_frame(MsgId.STOP, 7), "a5 00 07 02 49 75"),
    "SET_SPEEDS seq 1 [100.0, -50.5]": (
        encode_frame(MsgId.SET_SPEEDS, 1, SetSpeeds((100.0, -50.5)).encode()),
        "a5 05 01 01 02 e8 03 07 fe fd 0f"),
    "TELEMETRY seq 2": (
        encode_frame(MsgId.TELEMETRY, 2, Telemetry(
            1, Status.ACKED | Status.REPLY, 15.9, 0, 0, 1234,
            (ChannelTelemetry(98.7, 2.35, 0), ChannelTelemetry(-49.9, 1.2, 0))).encode()),
        ("a5 17 02 81 01 0c 1c 3e 00 00 00 00 d2 04 00 00 02 db 03 eb 00 00 "
         "0d fe 78 00 00 9a 84")),
    "INFO seq 0": (
        encode_frame(MsgId.INFO, 0, Info(1, 2, 200, 10, 366.5, "esc-2").encode()),
        "a5 0d 00 83 01 02 c8 00 0a 00 51 0e 65 73 63 2d 32 a3 df"),
    "NACK seq 3": (
        encode_frame(MsgId.NACK, 3, Nack(9, MsgId.SET_SPEEDS, NackReason.BAD_COUNT).encode()),
        "a5 03 03 ff 09 01 03 42 f8"),
}


@pytest.mark.parametrize("name", sorted(DOC_EXAMPLES))
def test_documented_example_frames(name):
    frame, text = DOC_EXAMPLES[name]
    assert frame.hex(" ") == text
    doc = (__import__("conftest").ROOT / "docs" / "protocol-mcu.md").read_text()
    assert text in doc, f"docs/protocol-mcu.md lost the example '{name}'"


def test_frame_layout_and_round_trip():
    payload = bytes(range(10))
    f = encode_frame(0x42, 300, payload)  # seq is taken mod 256
    assert f[0] == SYNC and f[1] == len(payload) and f[2] == 300 % 256 and f[3] == 0x42
    assert f[4:-2] == payload
    assert struct.unpack("<H", f[-2:])[0] == crc16_ccitt_false(f[1:-2])
    assert FrameParser().feed(f) == [Frame(44, 0x42, payload)]
    with pytest.raises(ValueError):
        encode_frame(0x01, 0, bytes(MAX_PAYLOAD + 1))


def test_payload_round_trips_and_scaling():
    s = SetSpeeds((0.0, 0.05, -0.05, 366.5, -3276.8, 1e9))
    counts = struct.unpack("<B6h", s.encode())
    assert counts == (6, 0, 0, 0, 3665, -32768, 32767)  # round half to even, saturate
    assert SetSpeeds.decode(s.encode()).speeds_radps == (0.0, 0.0, 0.0, 366.5, -3276.8, 3276.7)
    t = Telemetry(255, 0x0F, 16.123, 70000, 3, 2**32 + 5,
                  tuple(ChannelTelemetry(w, i, f) for w, i, f in ((12.3, 4.56, 1), (-7.0, -0.5, 2))))
    back = Telemetry.decode(t.encode())
    assert back.ack_seq == 255 and back.status == 0x0F and back.voltage_v == 16.123
    assert back.rx_dropped == 70000 & 0xFFFF and back.uptime_ms == 5
    assert back.channels == (ChannelTelemetry(12.3, 4.56, 1), ChannelTelemetry(-7.0, -0.5, 2))
    info = Info(1, 8, 200, 10, 366.5, "T200 x8")
    assert Info.decode(info.encode()) == info
    assert Nack.decode(Nack(1, 2, 3).encode()) == Nack(1, 2, 3)
    with pytest.raises(PayloadError) as e:
        SetSpeeds.decode(b"\x02\x00\x00")
    assert e.value.reason == NackReason.BAD_LENGTH
    with pytest.raises(ValueError):
        SetSpeeds((math.nan,)).encode()


def test_seq_counter_wraps():
    c = SeqCounter(254)
    assert [c.next() for _ in range(4)] == [254, 255, 0, 1]


def test_resync_after_a_false_start_byte_and_a_silent_gap():
    good = encode_frame(MsgId.STOP, 1)
    p = FrameParser(frame_timeout_s=0.05)
    # A5 C8 claims a 200-byte payload: the good frame after it is held, not lost ...
    assert p.feed(b"\xa5\xc8" + good, now=0.0) == []
    assert p.expire(0.01) == []                                  # not silent long enough
    assert p.expire(0.06) == [Frame(1, MsgId.STOP, b"")]         # ... and found after the gap
    assert p.pending == 0 and p.stats.truncated == 1 and p.stats.garbage_bytes == 1


# ------------------------------------------------------------------- fuzzing

frames_st = st.builds(
    lambda mid, seq, payload: Frame(seq, mid, payload),
    st.integers(0, 255), st.integers(0, 255), st.binary(max_size=40),
)
# A stream made of pieces: intact frames, random bytes, truncated frames, frames with
# one byte changed (CRC-16 detects every single-byte error).
piece_st = st.one_of(
    st.tuples(st.just("frame"), frames_st),
    st.tuples(st.just("junk"), st.binary(min_size=1, max_size=30)),
    st.tuples(st.just("truncated"), st.tuples(frames_st, st.integers(1, 100))),
    st.tuples(st.just("damaged"), st.tuples(frames_st, st.integers(0, 1000),
                                            st.integers(1, 255))),
)


def _build(pieces):
    """The stream, the intact frames sent, and the truncated ones."""
    stream, sent, cut_frames = bytearray(), [], []
    for kind, value in pieces:
        if kind == "frame":
            stream += value.encode()
            sent.append(value)
        elif kind == "junk":
            stream += value
        elif kind == "truncated":
            f, cut = value
            raw = f.encode()
            stream += raw[: max(1, min(cut, len(raw) - 1))]
            cut_frames.append(f)
        else:
            f, pos, xor = value
            raw = bytearray(f.encode())
            raw[pos % len(raw)] ^= xor
            stream += raw
    return bytes(stream), sent, cut_frames


def _parse(stream: bytes, cuts: list[int]) -> tuple[list[Frame], FrameParser]:
    p = FrameParser()
    out: list[Frame] = []
    edges = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(edges):
        out += p.feed(stream[a:b], now=0.0)
    out += p.finish()
    return out, p


@FUZZ
@given(st.binary(max_size=600), st.lists(st.integers(0, 10_000), max_size=8))
def test_random_bytes_never_raise_and_every_frame_is_in_the_input(data, cuts):
    out, p = _parse(data, cuts)
    assert p.pending == 0
    for f in out:
        assert f.encode() in data  # never invented: its exact bytes were received
    s = p.stats
    assert s.frames_ok == len(out)


@FUZZ
@given(st.lists(piece_st, max_size=12), st.lists(st.integers(0, 10_000), max_size=6))
def test_damage_is_counted_and_only_sent_frames_come_out(pieces, cuts):
    stream, sent, cut_frames = _build(pieces)
    out, p = _parse(stream, cuts)
    # Every frame that came out was sent: single-byte damage always breaks the CRC, and
    # junk does not contain a valid frame in these (derandomized) examples. A truncated
    # frame may come out whole when the bytes after the cut happen to be its missing
    # tail (its last CRC byte was 0xA5 and the next frame's SYNC follows): that is
    # the frame that was sent, and its bytes are on the wire.
    assert all(f in sent or f in cut_frames for f in out)
    # Every intact frame came out, in order (resynchronisation never skips past a real
    # start byte), unless a restored truncated frame took its start byte.
    if not any(f in cut_frames and f not in sent for f in out):
        it = iter(out)
        assert all(any(f == g for g in it) for f in sent)
    # Damage is counted.
    if any(k in ("truncated", "damaged") for k, _ in pieces):
        assert p.stats.dropped + p.stats.garbage_bytes > 0


@FUZZ
@given(st.lists(frames_st, min_size=1, max_size=10), st.lists(st.integers(0, 10_000), max_size=10))
def test_clean_streams_parse_exactly_whatever_the_chunking(frames, cuts):
    stream = b"".join(f.encode() for f in frames)
    out, p = _parse(stream, cuts)
    assert out == frames
    assert p.stats.dropped == 0 and p.stats.garbage_bytes == 0


# ------------------------------------------------- the spec's C code, compiled

_HARNESS = r"""
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
static void handle(uint8_t seq, uint8_t id, const uint8_t *p, uint8_t len);
%s
static void handle(uint8_t seq, uint8_t id, const uint8_t *p, uint8_t len)
{
    printf("F %%02x %%02x ", seq, id);
    for (int i = 0; i < len; i++) printf("%%02x", p[i]);
    printf("\n");
}
int main(void)
{
    int c;
    while ((c = getchar()) != EOF) on_byte((uint8_t)c);
    on_idle(50);  /* the stream ended: a silent gap */
    printf("C %%u %%u %%u %%u\n", garbage, bad_length, bad_crc, truncated);
    return 0;
}
"""


@pytest.fixture(scope="module")
def spec_parser(tmp_path_factory):
    """The CRC and parser C code of docs/protocol-mcu.md, compiled as a filter."""
    import re
    import subprocess

    from conftest import ROOT, c_compiler

    doc = (ROOT / "docs" / "protocol-mcu.md").read_text()
    code = "\n".join(re.findall(r"```c\n(.*?)```", doc, re.DOTALL))
    folder = tmp_path_factory.mktemp("spec-c")
    (folder / "parser.c").write_text(_HARNESS % code)
    exe = folder / "parser"
    subprocess.run([c_compiler(), "-std=c99", "-Wall", "-Werror", "-O1", "-o", str(exe),
                    str(folder / "parser.c")], check=True, capture_output=True)

    def run(stream: bytes) -> tuple[list[Frame], tuple[int, ...]]:
        out = subprocess.run([str(exe)], input=stream, capture_output=True, check=True).stdout
        frames, counters = [], ()
        for line in out.decode().splitlines():
            kind, *rest = line.split(" ")
            if kind == "F":
                frames.append(Frame(int(rest[0], 16), int(rest[1], 16), bytes.fromhex(rest[2])))
            else:
                counters = tuple(int(v) for v in rest)
        return frames, counters

    return run


@settings(derandomize=True, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(piece_st, max_size=12))
def test_the_specs_c_parser_agrees_with_the_reference(spec_parser, pieces):
    # A firmware author copies the C of docs/protocol-mcu.md: it must deliver the same
    # frames and count the same damage as serial_protocol.FrameParser.
    stream, _, _ = _build(pieces)
    frames, counters = spec_parser(stream)
    out, p = _parse(stream, [])
    s = p.stats
    assert frames == out
    assert counters == (s.garbage_bytes, s.bad_length, s.bad_crc, s.truncated)
