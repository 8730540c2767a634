"""McuBridge: the thrusters of a real vehicle (or of the MCU emulator) behind a serial
link that speaks docs/protocol-mcu.md.

Per step (a device component: it runs free on the wall clock; what it receives is
stamped into simulation time on arrival)::

    command (ThrusterCommand, force_n per thruster in profile order, or speed_radps)
      -> speed set-points through the calibrated curves (components/actuation/thrusters.py:
         force bounded to [-max_reverse_n, max_forward_n], omega = sign(T)·sqrt(|T|/c±),
         clamped to max_speed_radps)
      -> SET_SPEEDS frame written to the port (every step; zeros until a command arrives)
    newest TELEMETRY that arrived since the previous step (optionally waiting up to
    reply_wait_s for the one answering this step's command)
      -> feedback (ThrusterFeedback) stamped with the step time t: measured speed,
         thrust from the curve at that speed, current, bus voltage; a channel the MCU
         flags FAULT is refused (REFUSAL_REASON_FAULT);
      -> wrench (Wrench, body FRD): B·T of those thrusts (a FAULT channel counts 0),
         so the bridge has the ports of actuation.thrusters and replaces it in a rig
         (thrusters on a test stand driving a simulated vehicle).
         No new telemetry since the previous step: no output.

Safety: the bridge sends STOP (zero thrust) at terminate, and before it raises for
any fault (link lost, no answer to its commands for link_timeout_s, a NACK, an
unusable command). If the bridge's process dies, the MCU's watchdog zeroes the
thrusters.

``McuLink`` is the host side of the link on its own (the bridge and
benchmarks/mcu_latency.py use it): a reader thread parses frames as they arrive.
"""

from __future__ import annotations

import collections
import logging
import math
import threading
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any

import numpy as np
import serial
from moonpool.v1 import common_pb2, vehicle_pb2

from ..actuation.geometry import thrusters_from_profile
from ..actuation.thrusters import DEFAULT_MAX_SPEED_RADPS, ThrusterModel, command_speeds
from ..sdk.component import Component, Port, param
from ..sdk.errors import MoonpoolError, ParameterError, StepFailed
from .serial_protocol import (
    MAX_THRUSTERS,
    PROTOCOL_VERSION,
    ChannelFlag,
    Frame,
    FrameParser,
    Info,
    MsgId,
    Nack,
    PayloadError,
    SeqCounter,
    SetSpeeds,
    Status,
    Telemetry,
    encode_frame,
)

log = logging.getLogger("moonpool.bridges.mcu")

READ_TIMEOUT_S = 0.01
"""The reader thread wakes at least this often (to abandon stale partial frames)."""


@dataclass(frozen=True)
class Received:
    """A TELEMETRY and when it arrived."""

    telemetry: Telemetry
    mono_s: float
    """time.monotonic() at arrival."""
    unix_ns: int
    """Wall clock at arrival, ns since the Unix epoch."""
    count: int
    """Running number of TELEMETRY frames received (to see news)."""


class McuLink:
    """The host end of the serial link to a thruster MCU.

    Errors are ``StepFailed`` naming the port (``component`` names the component).
    Thread-safe: one reader thread, writes under a lock.
    """

    def __init__(self, port: str, baudrate: int = 115200, *, component: str = "",
                 link_timeout_s: float = 0.5) -> None:
        self.port = port
        self.baudrate = baudrate
        self.component = component
        self.link_timeout_s = link_timeout_s
        self.parser = FrameParser()
        self.seq = SeqCounter()
        self.ser: serial.Serial | None = None
        self._cond = threading.Condition()
        self._wlock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = False
        self.error: BaseException | None = None
        self.nack: Nack | None = None
        self.info: Info | None = None
        self.latest: Received | None = None
        self.telemetry_count = 0
        self.last_reply_seq: int | None = None
        self.rx_lost = 0
        self.bad_payloads = 0
        self.unexpected = 0
        self.watchdog_trips = 0
        self.commands_sent = 0
        self.latencies_s: collections.deque[float] = collections.deque(maxlen=100_000)
        self._rx_seq: int | None = None
        self._sent_at: dict[int, float] = {}
        self._pending_since: float | None = None
        self._in_watchdog = False

    # -- errors ------------------------------------------------------------------

    def _fail(self, message: str, fix: str, cause: BaseException | None = None) -> StepFailed:
        exc = StepFailed(message, component=self.component, fix=fix)
        exc.__cause__ = cause
        return exc

    # -- open / close ------------------------------------------------------------

    def open(self) -> None:
        try:
            self.ser = serial.Serial(self.port, self.baudrate, timeout=READ_TIMEOUT_S,
                                     write_timeout=self.link_timeout_s, exclusive=True)
            self.ser.reset_input_buffer()  # whatever the MCU said before we listened
        except (serial.SerialException, OSError, ValueError) as exc:
            raise self._fail(
                f"cannot open the MCU's serial port {self.port} at {self.baudrate} Bd: {exc}",
                fix=f"check that the MCU is connected at {self.port} (ls /dev/serial/by-id/) "
                    "and no other program holds it; without hardware, start the emulator "
                    "(python -m moonpool.components.bridges.mcu_emulator --pty) and give "
                    "the path it prints as port",
                cause=exc,
            ) from exc
        self._closing = False
        self._thread = threading.Thread(target=self._read_loop, name=f"mcu-link {self.port}",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closing = True
        ser = self.ser
        if ser is not None:
            try:
                ser.cancel_read()
            except (serial.SerialException, OSError, AttributeError):
                pass
        if self._thread is not None:
            self._thread.join(1.0)
            self._thread = None
        if ser is not None:
            try:
                ser.close()
            except (serial.SerialException, OSError):
                pass
        self.ser = None

    @property
    def is_open(self) -> bool:
        return self.ser is not None

    # -- receiving ---------------------------------------------------------------

    def _read_loop(self) -> None:
        ser = self.ser
        assert ser is not None
        while not self._closing:
            try:
                data = ser.read(ser.in_waiting or 1)
                if data and ser.in_waiting:
                    data += ser.read(ser.in_waiting)
            except Exception as exc:  # noqa: BLE001 - SerialException, OSError, closed port
                if not self._closing:
                    with self._cond:
                        self.error = exc
                        self._cond.notify_all()
                return
            now = time.monotonic()
            frames = self.parser.feed(data, now) if data else self.parser.expire(now)
            if frames:
                wall = time.time_ns()
                with self._cond:
                    for f in frames:
                        self._on_frame(f, now, wall)
                    self._cond.notify_all()

    def _on_frame(self, f: Frame, now: float, wall: int) -> None:
        if self._rx_seq is not None:
            self.rx_lost += (f.seq - self._rx_seq - 1) & 0xFF
        self._rx_seq = f.seq
        try:
            if f.msg_id == MsgId.TELEMETRY:
                tel = Telemetry.decode(f.payload)
            elif f.msg_id == MsgId.INFO:
                self.info = Info.decode(f.payload)
                return
            elif f.msg_id == MsgId.NACK:
                self.nack = Nack.decode(f.payload)
                return
            else:
                self.unexpected += 1
                return
        except PayloadError as exc:
            self.bad_payloads += 1
            log.warning("%s: dropped a frame with an unusable payload: %s", self.port, exc)
            return
        self.telemetry_count += 1
        self.latest = Received(tel, now, wall, self.telemetry_count)
        if tel.status & Status.REPLY and tel.status & Status.ACKED:
            sent = self._sent_at.pop(tel.ack_seq, None)
            if sent is not None:
                self.latencies_s.append(now - sent)
            self.last_reply_seq = tel.ack_seq
            self._pending_since = None
        watchdog = bool(tel.status & Status.WATCHDOG)
        if watchdog and not self._in_watchdog:
            self.watchdog_trips += 1
            log.warning("%s: the MCU's watchdog zeroed the thrusters (commands came too late)",
                        self.port)
        self._in_watchdog = watchdog

    # -- sending -----------------------------------------------------------------

    def send(self, msg_id: int, payload: bytes = b"") -> int:
        """Write one frame; return its SEQ."""
        ser = self.ser
        if ser is None:
            raise self._fail(f"the serial port {self.port} is not open",
                             fix="this is a bug in the bridge; report it")
        with self._wlock:
            seq = self.seq.next()
            frame = encode_frame(msg_id, seq, payload)
            now = time.monotonic()
            if msg_id in (MsgId.SET_SPEEDS, MsgId.STOP):
                with self._cond:
                    self._sent_at[seq] = now
                    if self._pending_since is None:
                        self._pending_since = now
                self.commands_sent += 1
            try:
                ser.write(frame)
            except serial.SerialTimeoutException as exc:
                raise self._fail(
                    f"writing to the MCU's serial port {self.port} timed out "
                    f"after {self.link_timeout_s:g} s", cause=exc,
                    fix="check the cable and the MCU's flow control; the MCU's watchdog "
                        "zeroes the thrusters",
                ) from exc
            except (serial.SerialException, OSError) as exc:
                raise self._fail(f"lost the serial link to the MCU on {self.port}: {exc}",
                                 fix=f"check the cable at {self.port}; the MCU's watchdog "
                                     "zeroes the thrusters", cause=exc) from exc
        return seq

    def send_speeds(self, speeds_radps: Any) -> int:
        return self.send(MsgId.SET_SPEEDS, SetSpeeds(tuple(float(s) for s in speeds_radps)).encode())

    def handshake(self, timeout_s: float) -> Info:
        """GET_INFO -> INFO, asked again every 0.1 s (a board that resets when the port
        opens answers once it has booted); a StepFailed naming the port if nothing
        usable answers within ``timeout_s``."""
        with self._cond:
            self.info = None
        deadline = time.monotonic() + timeout_s
        info = None
        while info is None and time.monotonic() < deadline:
            self.send(MsgId.GET_INFO)
            retry = min(deadline, time.monotonic() + 0.1)
            with self._cond:
                while self.info is None and self.error is None and self.nack is None:
                    left = retry - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                info = self.info
                if self.error is not None or self.nack is not None:
                    break
        self.check()
        if info is None:
            raise self._fail(
                f"the MCU on {self.port} did not answer GET_INFO within {timeout_s:g} s "
                f"({self.parser.stats.frames_ok} good frames, {self.parser.stats.dropped} "
                f"malformed, {self.parser.stats.garbage_bytes} stray bytes received)",
                fix=f"check that the firmware speaks docs/protocol-mcu.md at {self.baudrate} Bd "
                    "on this port (baudrate parameter), and that it is powered",
            )
        if info.protocol_version != PROTOCOL_VERSION:
            raise self._fail(
                f"the MCU on {self.port} speaks protocol version {info.protocol_version}, "
                f"this bridge version {PROTOCOL_VERSION}",
                fix="update the firmware or moonpool so both speak the same version",
            )
        return info

    def wait_reply(self, seq: int, timeout_s: float) -> bool:
        """Wait until the TELEMETRY answering command ``seq`` has arrived."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (self.last_reply_seq != seq and self.error is None and self.nack is None):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return self.last_reply_seq == seq

    def check(self) -> None:
        """Raise for a lost link, a NACK, or commands unanswered for link_timeout_s."""
        with self._cond:
            error, nack, pending = self.error, self.nack, self._pending_since
        if error is not None:
            raise self._fail(f"lost the serial link to the MCU on {self.port}: {error}",
                             fix=f"check the cable and the MCU at {self.port}; the MCU's "
                                 "watchdog zeroes the thrusters", cause=error)
        if nack is not None:
            raise self._fail(f"the MCU on {self.port} refused a frame: {nack.describe()}",
                             fix="the bridge and the firmware disagree on docs/protocol-mcu.md "
                                 "(channel count, payload layout); fix the firmware or the "
                                 "profile")
        if pending is not None:
            silent = time.monotonic() - pending
            if silent > self.link_timeout_s:
                raise self._fail(
                    f"no answer from the MCU on {self.port} to commands sent over the last "
                    f"{silent:.2f} s (link_timeout_s = {self.link_timeout_s:g})",
                    fix=f"check the cable, the baud rate ({self.baudrate}) and the MCU's power; "
                        "its watchdog zeroes the thrusters",
                )

    def take(self, newer_than: int) -> Received | None:
        """The newest TELEMETRY if it is newer than count ``newer_than``."""
        with self._cond:
            latest = self.latest
        if latest is None or latest.count <= newer_than:
            return None
        return latest

    def stop(self, wait_s: float = 0.2) -> bool:
        """Send STOP (zero thrust), again every 0.1 s until the MCU confirms it or
        ``wait_s`` has passed (a lost frame must not leave the thrusters running).
        Best effort: never raises; True when the MCU confirmed."""
        if self.ser is None:
            return False
        with self._cond:
            self.nack = None  # a NACK from now on is about the STOP
        deadline = time.monotonic() + wait_s
        while True:
            try:
                seq = self.send(MsgId.STOP)
            except MoonpoolError as exc:
                log.error("%s: could not send STOP: %s", self.port, exc)
                return False
            left = deadline - time.monotonic()
            if self.wait_reply(seq, max(0.0, min(0.1, left))):
                return True
            if left <= 0.1 or self.error is not None or self.nack is not None:
                break
        log.error("%s: the MCU did not confirm STOP within %.2f s; its watchdog must "
                  "zero the thrusters", self.port, wait_s)
        return False

    def metrics(self) -> dict[str, Any]:
        s = self.parser.stats
        lat = np.asarray(self.latencies_s, dtype=float) * 1e3
        out: dict[str, Any] = {
            "commands_sent": self.commands_sent,
            "telemetry_received": self.telemetry_count,
            "frames_dropped": s.dropped,
            "bad_crc": s.bad_crc,
            "bad_length": s.bad_length,
            "truncated": s.truncated,
            "garbage_bytes": s.garbage_bytes,
            "bad_payloads": self.bad_payloads,
            "unexpected_frames": self.unexpected,
            "frames_lost": self.rx_lost,
            "watchdog_trips": self.watchdog_trips,
        }
        if lat.size:
            out["reply_latency_ms_p50"] = float(np.percentile(lat, 50))
            out["reply_latency_ms_p99"] = float(np.percentile(lat, 99))
            out["reply_latency_ms_max"] = float(lat.max())
        if self.latest is not None:
            out["mcu_rx_dropped"] = self.latest.telemetry.rx_dropped
            out["mcu_rx_rejected"] = self.latest.telemetry.rx_rejected
        return out


class McuBridge(Component):
    """Thruster MCU over a serial link (docs/protocol-mcu.md): force commands -> speed
    set-points through the thrust curves; speed, current and voltage telemetry ->
    feedback and the body wrench. Zero thrust on terminate and on any fault.

    Channel i of the MCU is thruster i of the profile's [[thrusters]].
    """

    inputs = (Port("command", vehicle_pb2.ThrusterCommand,
                   "force_n (or speed_radps) per thruster, in profile order"),)
    outputs = (
        Port("wrench", vehicle_pb2.Wrench,
             "body wrench B·T of the thrusts at the measured speeds (N, N·m), FRD"),
        Port("feedback", vehicle_pb2.ThrusterFeedback,
             "measured speed, thrust from the curve, current and bus voltage per thruster"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        port: str = param(doc="serial device of the MCU, e.g. /dev/ttyACM0 or "
                              "/dev/serial/by-id/...; the emulator prints its pty path",
                          device=True)
        baudrate: int = param(115200, "serial line speed", unit="Bd")
        profile: Any = param(doc="a vehicle profile's content (the rig's profile key): "
                                 "thruster order, limits and curves from its [[thrusters]]")
        max_speed_radps: float = param(DEFAULT_MAX_SPEED_RADPS,
                                       "speed limit of thrusters whose profile entry has none",
                                       unit="rad/s")
        link_timeout_s: float = param(0.5, "fault when the MCU answers none of the commands "
                                           "sent over this long", unit="s")
        open_timeout_s: float = param(2.0, "initialize: wait this long for the MCU's INFO "
                                           "(boards that reset when the port opens need "
                                           "their boot time)", unit="s")
        reply_wait_s: float = param(0.0, "wait up to this long in each step for the telemetry "
                                         "answering this step's command (0: do not wait; "
                                         "send the newest that has arrived)", unit="s")
        frame_id: str = param("body", "frame_id of the wrench header")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Port, baud rate and timeouts; that the port exists, nothing opened (also by ``moonpool check``)."""
        if not params.port.strip():
            raise ParameterError("port is empty",
                                 fix="set port to the MCU's serial device, e.g. /dev/ttyACM0")
        if params.baudrate <= 0:
            raise ParameterError(f"baudrate must be > 0, got {params.baudrate}",
                                 fix="e.g. 115200")
        for key, positive in (("link_timeout_s", True), ("open_timeout_s", True),
                              ("reply_wait_s", False)):
            v = getattr(params, key)
            if not (math.isfinite(v) and (v > 0 if positive else v >= 0)):
                raise ParameterError(f"{key} must be {'> 0' if positive else '>= 0'}, got {v}",
                                     fix=f"give {key} in seconds")
        if "://" not in params.port and not Path(params.port).exists():
            raise ParameterError(
                f"port: the MCU's serial port {params.port} does not exist",
                fix="connect the MCU (ls /dev/serial/by-id/) and give its path as port; "
                    "without hardware, start the emulator (python -m "
                    "moonpool.components.bridges.mcu_emulator --pty) and give the path it prints")

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        name = self.name
        specs = thrusters_from_profile(params.profile, name)
        if len(specs) > MAX_THRUSTERS:
            raise ParameterError(f"the profile has {len(specs)} thrusters; the MCU protocol "
                                 f"carries at most {MAX_THRUSTERS}", component=name,
                                 fix="split them over several MCUs (several bridges)")
        self.params = params
        self.model = ThrusterModel(specs, max_speed_radps=params.max_speed_radps,
                                   component=name)
        self.link: McuLink | None = None
        self.speeds = np.zeros(self.model.n)
        self.seen = 0
        self.steps = 0
        self.limited = 0

    # -- lifecycle -----------------------------------------------------------------

    def initialize(self, start_time_ns: int) -> None:
        p = self.params
        n = self.model.n
        link = McuLink(p.port, p.baudrate, component=self.name, link_timeout_s=p.link_timeout_s)
        link.open()
        self.link = link
        try:
            info = link.handshake(p.open_timeout_s)
            if info.channels != n:
                raise StepFailed(
                    f"the MCU on {p.port} ('{info.name}') drives {info.channels} thrusters, "
                    f"the profile has {n} ({', '.join(self.model.names)})",
                    component=self.name,
                    fix="use the profile of this vehicle, or configure the firmware's channels",
                )
            watchdog_s = info.watchdog_ms * 1e-3
            if self.period_ns and self.period_ns * 1e-9 >= watchdog_s:
                raise ParameterError(
                    f"the bridge's period {self.period_ns * 1e-6:g} ms is not shorter than the "
                    f"MCU's watchdog {info.watchdog_ms} ms: the MCU would zero the thrusters "
                    "between commands",
                    component=self.name,
                    fix=f"step the bridge faster than {1 / watchdog_s:g} Hz (rate_hz)",
                )
            slow = [name for name, w in zip(self.model.names, self.model.w_max)
                    if w > info.max_speed_radps + 0.05]
            if slow:
                log.warning("%s: the MCU limits speeds to %.1f rad/s, below the profile's limit "
                            "for %s: it will clamp (flag SATURATED)", p.port,
                            info.max_speed_radps, ", ".join(slow))
            self.info = info
            log.info("%s: MCU '%s', %d channels, watchdog %d ms", p.port, info.name,
                     info.channels, info.watchdog_ms)
            link.stop(p.link_timeout_s)  # a known state: zero
            link.check()
        except BaseException:
            self._shutdown()
            raise

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any] | None:
        link = self.link
        assert link is not None
        try:
            link.check()
            cmd = inputs.get("command")
            if cmd is not None:
                self.speeds = self._setpoints(cmd)
            seq = link.send_speeds(self.speeds)
            if self.params.reply_wait_s > 0:
                link.wait_reply(seq, self.params.reply_wait_s)
                link.check()
            got = link.take(self.seen)
            out = None if got is None else self._outputs(t_ns, got)
        except BaseException:
            self._shutdown()
            raise
        self.steps += 1
        if got is not None:
            self.seen = got.count
        return out

    def terminate(self) -> dict[str, Any]:
        self._shutdown()
        return {"steps": getattr(self, "steps", 0),
                "steps_with_force_beyond_limits": getattr(self, "limited", 0),
                **getattr(self, "final_metrics", {})}

    # -- helpers -------------------------------------------------------------------

    def _shutdown(self) -> None:
        """Zero thrust (best effort), then close the port. Idempotent."""
        link, self.link = getattr(self, "link", None), None
        if link is None:
            return
        link.stop(min(0.2, self.params.link_timeout_s))
        self.final_metrics = link.metrics()
        link.close()

    def _setpoints(self, cmd: vehicle_pb2.ThrusterCommand) -> np.ndarray:
        speeds, limited = command_speeds(self.model, cmd, self.name)
        self.limited += limited
        return speeds

    def _outputs(self, t_ns: int, got: Received) -> dict[str, Any]:
        tel = got.telemetry
        if len(tel.channels) != self.model.n:
            raise StepFailed(
                f"the MCU on {self.params.port} sent telemetry for {len(tel.channels)} "
                f"channels; it announced {self.model.n}",
                component=self.name, fix="the firmware breaks docs/protocol-mcu.md; fix it",
            )
        fb = vehicle_pb2.ThrusterFeedback(header=self.header(t_ns))
        forces = self.model.thrust([c.speed_radps for c in tel.channels])
        usable = np.ones(self.model.n, dtype=bool)
        for i, (c, f) in enumerate(zip(tel.channels, forces)):
            s = fb.thrusters.add(speed_radps=c.speed_radps, force_n=float(f),
                                 current_a=c.current_a, voltage_v=tel.voltage_v)
            if c.flags & ChannelFlag.FAULT:
                s.validity.reason = common_pb2.REFUSAL_REASON_FAULT
                s.validity.detail = "the MCU reports an ESC fault on this channel"
                usable[i] = False
            else:
                s.validity.valid = True
        # A faulty channel's thrust is unknown: it contributes nothing to the wrench.
        w = self.model.wrench(np.where(usable, forces, 0.0))
        msg = vehicle_pb2.Wrench(header=self.header(t_ns, self.params.frame_id))
        msg.force_n.x, msg.force_n.y, msg.force_n.z = (float(v) for v in w[:3])
        msg.torque_nm.x, msg.torque_nm.y, msg.torque_nm.z = (float(v) for v in w[3:])
        return {"wrench": msg, "feedback": fb}
