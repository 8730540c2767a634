"""The MCU serial protocol (version 1): framing, CRC-16, message codecs, a resynchronising
stream parser. Pure functions and one parser class; no I/O. The specification for
firmware authors is docs/protocol-mcu.md; this module is its reference implementation.

Frame (every multi-byte integer, the CRC included, is little-endian)::

    offset  size  field
    0       1     SYNC = 0xA5
    1       1     LEN: payload length N, 0..MAX_PAYLOAD (200)
    2       1     SEQ: the sender's frame counter, +1 mod 256 per frame sent
    3       1     MSG_ID
    4       N     PAYLOAD
    4+N     2     CRC-16/CCITT-FALSE of bytes 1 .. 3+N (LEN, SEQ, MSG_ID, PAYLOAD)

CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, xorout 0x0000;
check value crc("123456789") = 0x29B1.

Resynchronisation (``FrameParser``): bytes before a SYNC are skipped (counted as
garbage); a candidate whose LEN exceeds MAX_PAYLOAD or whose CRC does not match is
dropped by discarding its SYNC byte only, and the search restarts at the next byte,
so a real frame that began inside the damaged bytes is still found. After
``frame_timeout_s`` without a byte, every incomplete candidate held is counted as
truncated and dropped the same way (``expire``): a silent gap always resynchronises.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from enum import IntEnum

PROTOCOL_VERSION = 1
SYNC = 0xA5
HEADER_SIZE = 4
CRC_SIZE = 2
OVERHEAD = HEADER_SIZE + CRC_SIZE
MAX_PAYLOAD = 200
"""Largest LEN a receiver accepts; a larger LEN marks a false start byte."""
MAX_THRUSTERS = 32
"""Largest channel count: a TELEMETRY for 32 channels is 13 + 5·32 = 173 bytes."""

SPEED_PER_RADPS = 10
"""Speed scaling: an int16 speed counts 0.1 rad/s (rad/s = counts / 10; ±3276.7 rad/s)."""
CURRENT_PER_A = 100
"""Current scaling: an int16 current counts 0.01 A (A = counts / 100; ±327.67 A)."""
VOLTAGE_PER_V = 1000
"""Voltage scaling: the uint16 bus voltage counts 1 mV (V = counts / 1000; 0 .. 65.535 V)."""

DEFAULT_FRAME_TIMEOUT_S = 0.05
"""Silence after which a partial frame is abandoned (T_gap): far longer than any gap
inside a frame (sent back to back) and than a USB-serial adapter's packet latency
(FTDI: 16 ms)."""


class MsgId(IntEnum):
    """Message ids. Host -> MCU: 0x01..0x7F; MCU -> host: 0x80..0xFF."""

    SET_SPEEDS = 0x01
    STOP = 0x02
    GET_INFO = 0x03
    TELEMETRY = 0x81
    INFO = 0x83
    NACK = 0xFF


class NackReason(IntEnum):
    """Why an MCU refused a frame whose CRC was good (NACK payload byte 2)."""

    UNKNOWN_MESSAGE = 1
    BAD_LENGTH = 2
    BAD_COUNT = 3


class Status:
    """TELEMETRY status bits."""

    WATCHDOG = 0x01
    """Outputs zeroed by the watchdog; no valid SET_SPEEDS since."""
    STOPPED = 0x02
    """Outputs zeroed by a STOP; no valid SET_SPEEDS since."""
    ACKED = 0x04
    """ack_seq is valid: at least one command was accepted since power-up."""
    REPLY = 0x08
    """This TELEMETRY answers the command ack_seq (0: a periodic one)."""


class ChannelFlag:
    """TELEMETRY per-channel flag bits."""

    SATURATED = 0x01
    """The set-point was clamped to the MCU's speed limit."""
    FAULT = 0x02
    """ESC fault: the channel's measurements must not be used."""


# ------------------------------------------------------------------- CRC-16


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0)."""
    table = _CRC_TABLE
    for b in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


# ------------------------------------------------------------------- frames


@dataclass(frozen=True)
class Frame:
    """One decoded frame."""

    seq: int
    msg_id: int
    payload: bytes

    def encode(self) -> bytes:
        return encode_frame(self.msg_id, self.seq, self.payload)


def encode_frame(msg_id: int, seq: int, payload: bytes = b"") -> bytes:
    """SYNC, LEN, SEQ, MSG_ID, PAYLOAD, CRC (little-endian)."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((len(payload), seq & 0xFF, msg_id & 0xFF)) + bytes(payload)
    return bytes((SYNC,)) + body + struct.pack("<H", crc16_ccitt_false(body))


@dataclass
class ParserStats:
    """What a FrameParser dropped; a receiver reports these (telemetry, metrics)."""

    frames_ok: int = 0
    bad_crc: int = 0
    """Candidates (a SYNC and a plausible LEN) whose CRC did not match."""
    bad_length: int = 0
    """Candidates whose LEN exceeded the maximum (a false or damaged start byte)."""
    truncated: int = 0
    """Candidates abandoned incomplete (``expire``)."""
    garbage_bytes: int = 0
    """Bytes skipped while looking for a start byte."""

    @property
    def dropped(self) -> int:
        """Candidate frames dropped (bad CRC, bad length, truncated)."""
        return self.bad_crc + self.bad_length + self.truncated

    def as_dict(self) -> dict[str, int]:
        return {"frames_ok": self.frames_ok, "bad_crc": self.bad_crc,
                "bad_length": self.bad_length, "truncated": self.truncated,
                "garbage_bytes": self.garbage_bytes, "dropped": self.dropped}


@dataclass
class FrameParser:
    """Turns a byte stream into frames; never raises on any input.

    ``feed(data, now)`` returns the complete, CRC-checked frames found so far.
    ``expire(now)``: when no byte has arrived for ``frame_timeout_s`` (the line is
    idle) nothing held can still become a frame, so every incomplete candidate is
    dropped (counted as truncated) and the bytes after it rescanned; it returns the
    frames found on the way and leaves the parser empty. Call it when a read times
    out. ``now`` is any monotonic clock in seconds.
    """

    max_payload: int = MAX_PAYLOAD
    frame_timeout_s: float = DEFAULT_FRAME_TIMEOUT_S
    stats: ParserStats = field(default_factory=ParserStats)

    def __post_init__(self) -> None:
        self._buf = bytearray()
        self._last_rx = -math.inf

    @property
    def pending(self) -> int:
        """Bytes held, waiting for the rest of a frame."""
        return len(self._buf)

    @property
    def deadline(self) -> float:
        """When ``expire`` will drop what is held, if no byte arrives (inf: nothing held)."""
        return self._last_rx + self.frame_timeout_s if self._buf else math.inf

    def reset(self) -> None:
        """Forget any partial frame (e.g. after the port was flushed)."""
        self._buf.clear()

    def feed(self, data: bytes | bytearray | memoryview, now: float = 0.0) -> list[Frame]:
        if data:
            self._buf += data
            self._last_rx = now
        return self._scan()

    def expire(self, now: float) -> list[Frame]:
        """After ``frame_timeout_s`` of silence: drop every incomplete candidate held."""
        out: list[Frame] = []
        if not (math.isinf(now) or now - self._last_rx > self.frame_timeout_s):
            return out
        while self._buf:
            self.stats.truncated += 1  # _scan leaves a buffer only when it starts with SYNC
            del self._buf[0]
            out += self._scan()
        return out

    def finish(self) -> list[Frame]:
        """The stream has ended: what is held is truncated; frames found on rescanning."""
        return self.expire(math.inf)

    def _scan(self) -> list[Frame]:
        buf = self._buf
        out: list[Frame] = []
        stats = self.stats
        while buf:
            start = buf.find(SYNC)
            if start < 0:
                stats.garbage_bytes += len(buf)
                buf.clear()
                break
            if start:
                stats.garbage_bytes += start
                del buf[:start]
            if len(buf) < 2:
                break
            n = buf[1]
            if n > self.max_payload:
                stats.bad_length += 1
                del buf[0]
                continue
            size = OVERHEAD + n
            if len(buf) < size:
                break
            crc = buf[HEADER_SIZE + n] | (buf[HEADER_SIZE + n + 1] << 8)
            if crc16_ccitt_false(memoryview(buf)[1:HEADER_SIZE + n]) != crc:
                stats.bad_crc += 1
                del buf[0]
                continue
            out.append(Frame(buf[2], buf[3], bytes(buf[HEADER_SIZE:HEADER_SIZE + n])))
            stats.frames_ok += 1
            del buf[:size]
        return out


# ------------------------------------------------------------------- payloads


class PayloadError(ValueError):
    """A payload whose length or contents do not fit its message id (-> NACK / fault)."""

    def __init__(self, reason: NackReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _to_counts(value: float, per_unit: int, lo: int, hi: int) -> int:
    """value -> counts (value · per_unit rounded to nearest, saturated to [lo, hi])."""
    if not math.isfinite(value):
        raise ValueError(f"cannot encode {value!r}")
    return max(lo, min(hi, round(value * per_unit)))


def speed_to_counts(speed_radps: float) -> int:
    """rad/s -> int16 counts of 0.1 rad/s (rounded to nearest, saturated)."""
    return _to_counts(speed_radps, SPEED_PER_RADPS, -32768, 32767)


@dataclass(frozen=True)
class SetSpeeds:
    """SET_SPEEDS (0x01): u8 N, then N x int16 speed set-point (0.1 rad/s)."""

    speeds_radps: tuple[float, ...]

    def encode(self) -> bytes:
        n = len(self.speeds_radps)
        if n > MAX_THRUSTERS:
            raise ValueError(f"{n} channels exceed {MAX_THRUSTERS}")
        counts = [speed_to_counts(s) for s in self.speeds_radps]
        return struct.pack(f"<B{n}h", n, *counts)

    @classmethod
    def decode(cls, payload: bytes) -> SetSpeeds:
        if not payload:
            raise PayloadError(NackReason.BAD_LENGTH, "SET_SPEEDS without a count byte")
        n = payload[0]
        if len(payload) != 1 + 2 * n:
            raise PayloadError(NackReason.BAD_LENGTH,
                               f"SET_SPEEDS for {n} channels needs {1 + 2 * n} bytes, "
                               f"got {len(payload)}")
        counts = struct.unpack_from(f"<{n}h", payload, 1)
        return cls(tuple(c / SPEED_PER_RADPS for c in counts))


@dataclass(frozen=True)
class ChannelTelemetry:
    speed_radps: float
    current_a: float
    flags: int = 0


_TELEMETRY_HEAD = struct.Struct("<BBHHHIB")  # ack_seq status voltage rx_dropped rx_rejected uptime N
_CHANNEL = struct.Struct("<hhB")


@dataclass(frozen=True)
class Telemetry:
    """TELEMETRY (0x81): see docs/protocol-mcu.md for the layout."""

    ack_seq: int
    status: int
    voltage_v: float
    rx_dropped: int
    rx_rejected: int
    uptime_ms: int
    channels: tuple[ChannelTelemetry, ...]

    def encode(self) -> bytes:
        n = len(self.channels)
        if n > MAX_THRUSTERS:
            raise ValueError(f"{n} channels exceed {MAX_THRUSTERS}")
        out = bytearray(_TELEMETRY_HEAD.pack(
            self.ack_seq & 0xFF, self.status & 0xFF,
            _to_counts(self.voltage_v, VOLTAGE_PER_V, 0, 0xFFFF),
            self.rx_dropped & 0xFFFF, self.rx_rejected & 0xFFFF,
            self.uptime_ms & 0xFFFFFFFF, n))
        for c in self.channels:
            out += _CHANNEL.pack(speed_to_counts(c.speed_radps),
                                 _to_counts(c.current_a, CURRENT_PER_A, -32768, 32767),
                                 c.flags & 0xFF)
        return bytes(out)

    @classmethod
    def decode(cls, payload: bytes) -> Telemetry:
        if len(payload) < _TELEMETRY_HEAD.size:
            raise PayloadError(NackReason.BAD_LENGTH, f"TELEMETRY of {len(payload)} bytes")
        ack, status, mv, dropped, rejected, uptime, n = _TELEMETRY_HEAD.unpack_from(payload)
        if len(payload) != _TELEMETRY_HEAD.size + _CHANNEL.size * n:
            raise PayloadError(NackReason.BAD_LENGTH,
                               f"TELEMETRY for {n} channels needs "
                               f"{_TELEMETRY_HEAD.size + _CHANNEL.size * n} bytes, "
                               f"got {len(payload)}")
        channels = tuple(
            ChannelTelemetry(s / SPEED_PER_RADPS, i / CURRENT_PER_A, f)
            for s, i, f in _CHANNEL.iter_unpack(payload[_TELEMETRY_HEAD.size:])
        )
        return cls(ack, status, mv / VOLTAGE_PER_V, dropped, rejected, uptime, channels)


_INFO_HEAD = struct.Struct("<BBHHH")  # version N watchdog_ms telemetry_period_ms max_speed


@dataclass(frozen=True)
class Info:
    """INFO (0x83): the MCU's identity and limits, the answer to GET_INFO."""

    protocol_version: int
    channels: int
    watchdog_ms: int
    telemetry_period_ms: int
    max_speed_radps: float
    name: str = ""

    def encode(self) -> bytes:
        name = self.name.encode("ascii", "replace")[: MAX_PAYLOAD - _INFO_HEAD.size]
        return _INFO_HEAD.pack(self.protocol_version, self.channels, self.watchdog_ms,
                               self.telemetry_period_ms,
                               _to_counts(self.max_speed_radps, SPEED_PER_RADPS, 0, 0xFFFF)) + name

    @classmethod
    def decode(cls, payload: bytes) -> Info:
        if len(payload) < _INFO_HEAD.size:
            raise PayloadError(NackReason.BAD_LENGTH, f"INFO of {len(payload)} bytes")
        version, n, wd, period, vmax = _INFO_HEAD.unpack_from(payload)
        name = payload[_INFO_HEAD.size:].decode("ascii", "replace")
        return cls(version, n, wd, period, vmax / SPEED_PER_RADPS, name)


@dataclass(frozen=True)
class Nack:
    """NACK (0xFF): u8 rejected SEQ, u8 rejected MSG_ID, u8 reason."""

    seq: int
    msg_id: int
    reason: int

    def encode(self) -> bytes:
        return bytes((self.seq & 0xFF, self.msg_id & 0xFF, self.reason & 0xFF))

    @classmethod
    def decode(cls, payload: bytes) -> Nack:
        if len(payload) != 3:
            raise PayloadError(NackReason.BAD_LENGTH, f"NACK of {len(payload)} bytes")
        return cls(payload[0], payload[1], payload[2])

    def describe(self) -> str:
        try:
            what = MsgId(self.msg_id).name
        except ValueError:
            what = f"0x{self.msg_id:02X}"
        try:
            why = NackReason(self.reason).name
        except ValueError:
            why = f"reason {self.reason}"
        return f"{what} seq {self.seq} refused: {why}"


def msg_name(msg_id: int) -> str:
    try:
        return MsgId(msg_id).name
    except ValueError:
        return f"0x{msg_id:02X}"


class SeqCounter:
    """A sender's 8-bit frame counter: 0, 1, ..., 255, 0, ..."""

    def __init__(self, start: int = 0) -> None:
        self.value = start & 0xFF

    def next(self) -> int:
        v = self.value
        self.value = (v + 1) & 0xFF
        return v
