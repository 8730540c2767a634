"""The MCU emulator: a thruster MCU that speaks docs/protocol-mcu.md over a serial line,
with ESC dynamics and the watchdog, so the MCU bridge runs end to end without hardware.

Run it as its own process; it creates a pseudo-terminal pair and prints the path the
bridge opens (``port``)::

    python -m moonpool.components.bridges.mcu_emulator --pty --link /tmp/moonpool-mcu
    # stdout: {"event": "ready", "port": "/dev/pts/7", "link": "/tmp/moonpool-mcu", ...}

or serve an existing serial device (a USB-serial adapter looped to the vehicle's
port, one end of ``socat``): ``--port /dev/ttyUSB1 --baudrate 115200``.

Model (per channel i, SI units; docs/devices.md gives the equations):

- set-point ω_sp,i (rad/s) from SET_SPEEDS, clamped to ±max_speed (flag SATURATED);
- first-order speed lag: ω_i(t+Δ) = ω_sp,i + (ω_i(t) − ω_sp,i)·exp(−Δ/τ), exact for
  any Δ (the loop integrates on every event, not on a fixed tick);
- thrust (reported in the status lines only): T = c_fwd·ω² for ω ≥ 0, −c_rev·ω² for ω < 0;
- current: I_i = I_idle + I_max·(|ω_i|/ω_max)³ (shaft power of a propeller ∝ |ω|³
  at constant bus voltage);
- bus voltage: V = V_supply − R_internal·Σ I_i (battery sag).

Safety: each accepted SET_SPEEDS arms the watchdog; if no valid SET_SPEEDS follows
within ``--watchdog`` seconds every set-point is zeroed (status bit WATCHDOG) and the
ESCs spin down with their lag. Malformed frames are counted and dropped, never acted
on; frames with a good CRC but unusable content are answered with NACK.

Stdout carries one JSON object per line (``ready``, ``watchdog``, ``stop``, ``nack``,
``status`` every ``--status-interval`` s, ``exit``), each with ``t_mono``
(CLOCK_MONOTONIC, s, comparable with ``time.monotonic()`` of other processes on the
same machine). ``spawn()`` starts the emulator as a child process and follows them.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import math
import os
import queue
import random
import select
import signal
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from .serial_protocol import (
    PROTOCOL_VERSION,
    ChannelFlag,
    ChannelTelemetry,
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
    encode_frame,
)


@dataclass(frozen=True)
class EscParameters:
    """The emulated ESCs and motors (defaults: a T200-class thruster at 16 V, the values
    of fmus/hydrodynamics/profiles/bluerov2_heavy.toml)."""

    time_constant_s: float = 0.05
    max_speed_radps: float = 366.5
    c_forward: float = 3.7224e-4
    """T = c_forward·ω² for ω >= 0, N/(rad/s)² (50 N at 366.5 rad/s)."""
    c_reverse: float = 2.8663e-4
    """T = −c_reverse·ω² for ω < 0 (38.5 N at 366.5 rad/s)."""
    idle_current_a: float = 0.1
    max_current_a: float = 20.0
    supply_voltage_v: float = 16.0
    internal_resistance_ohm: float = 0.02


def thrust(speed_radps: float, esc: EscParameters) -> float:
    c = esc.c_forward if speed_radps >= 0 else esc.c_reverse
    return c * speed_radps * abs(speed_radps)


class McuEmulator:
    """The emulated MCU on one file descriptor (a pty or a serial device)."""

    def __init__(
        self,
        fd: int,
        *,
        channels: int = 8,
        watchdog_s: float = 0.2,
        telemetry_period_s: float = 0.01,
        esc: EscParameters = EscParameters(),
        name: str = "moonpool MCU emulator",
        events: IO[str] | None = None,
        status_interval_s: float = 0.0,
        corrupt_every: int = 0,
        seed: int = 0,
    ) -> None:
        self.fd = fd
        self.n = channels
        self.watchdog_s = watchdog_s
        self.telemetry_period_s = telemetry_period_s
        self.esc = esc
        self.name = name
        self.events = events
        self.status_interval_s = status_interval_s
        self.corrupt_every = corrupt_every
        self.rng = random.Random(seed)
        self.parser = FrameParser()
        self.seq = SeqCounter()
        self.t0 = time.monotonic()
        self.t_model = self.t0
        self.setpoints = [0.0] * channels
        self.speeds = [0.0] * channels
        self.saturated = [False] * channels
        self.status = 0
        self.ack_seq = 0
        self.armed_at: float | None = None  # when the last accepted SET_SPEEDS arrived
        self.rx_rejected = 0
        self.commands_applied = 0
        self.stops = 0
        self.watchdog_trips = 0
        self.tx_frames = 0
        self.tx_dropped_bytes = 0
        self.tx_corrupted = 0
        self.telemetry_sent = 0
        self._next_telemetry = self.t0 + telemetry_period_s if telemetry_period_s > 0 else math.inf
        self._next_status = self.t0 + status_interval_s if status_interval_s > 0 else math.inf
        self._stop = False

    # -- model -------------------------------------------------------------------

    def update(self, now: float) -> None:
        """Advance the ESC model to ``now`` (exact exponential lag); fire the watchdog."""
        if self.armed_at is not None and now - self.armed_at > self.watchdog_s:
            fire = self.armed_at + self.watchdog_s
            self._advance(fire)
            self.setpoints = [0.0] * self.n
            self.saturated = [False] * self.n
            self.status = (self.status | Status.WATCHDOG) & ~Status.STOPPED
            self.armed_at = None
            self.watchdog_trips += 1
            self._emit("watchdog", t_fired=fire, silent_s=now - fire + self.watchdog_s)
        self._advance(now)

    def _advance(self, now: float) -> None:
        dt = now - self.t_model
        if dt <= 0:
            return
        tau = self.esc.time_constant_s
        k = math.exp(-dt / tau) if tau > 0 else 0.0
        self.speeds = [sp + (w - sp) * k for w, sp in zip(self.speeds, self.setpoints)]
        self.t_model = now

    def currents(self) -> list[float]:
        e = self.esc
        return [e.idle_current_a + e.max_current_a * min(abs(w) / e.max_speed_radps, 2.0) ** 3
                for w in self.speeds]

    def voltage(self, currents: list[float]) -> float:
        return max(0.0, self.esc.supply_voltage_v - self.esc.internal_resistance_ohm * sum(currents))

    # -- frames ------------------------------------------------------------------

    def handle(self, frame, now: float) -> None:
        self.update(now)
        mid = frame.msg_id
        try:
            if mid == MsgId.SET_SPEEDS:
                cmd = SetSpeeds.decode(frame.payload)
                if len(cmd.speeds_radps) != self.n:
                    raise PayloadError(NackReason.BAD_COUNT,
                                       f"SET_SPEEDS for {len(cmd.speeds_radps)} channels, "
                                       f"this MCU has {self.n}")
                vmax = self.esc.max_speed_radps
                self.setpoints = [max(-vmax, min(vmax, s)) for s in cmd.speeds_radps]
                self.saturated = [abs(s) > vmax for s in cmd.speeds_radps]
                self.status &= ~(Status.WATCHDOG | Status.STOPPED)
                self.armed_at = now
                self.commands_applied += 1
                self._ack(frame.seq, now)
            elif mid == MsgId.STOP:
                if frame.payload:
                    raise PayloadError(NackReason.BAD_LENGTH,
                                       f"STOP carries no payload, got {len(frame.payload)} bytes")
                self.setpoints = [0.0] * self.n
                self.saturated = [False] * self.n
                self.status = (self.status | Status.STOPPED) & ~Status.WATCHDOG
                self.armed_at = None
                self.stops += 1
                self._emit("stop")
                self._ack(frame.seq, now)
            elif mid == MsgId.GET_INFO:
                if frame.payload:
                    raise PayloadError(NackReason.BAD_LENGTH,
                                       f"GET_INFO carries no payload, got {len(frame.payload)} bytes")
                info = Info(PROTOCOL_VERSION, self.n, round(self.watchdog_s * 1000),
                            round(self.telemetry_period_s * 1000), self.esc.max_speed_radps,
                            self.name)
                self._send(MsgId.INFO, info.encode())
            else:
                raise PayloadError(NackReason.UNKNOWN_MESSAGE, f"unknown message id 0x{mid:02X}")
        except PayloadError as exc:
            self.rx_rejected += 1
            self._send(MsgId.NACK, Nack(frame.seq, mid, exc.reason).encode())
            self._emit("nack", seq=frame.seq, msg_id=mid, reason=int(exc.reason), detail=str(exc))

    def _ack(self, seq: int, now: float) -> None:
        self.ack_seq = seq
        self.status |= Status.ACKED
        self._telemetry(now, reply=True)

    def _telemetry(self, now: float, reply: bool) -> None:
        currents = self.currents()
        chans = tuple(
            ChannelTelemetry(w, i, ChannelFlag.SATURATED if sat else 0)
            for w, i, sat in zip(self.speeds, currents, self.saturated)
        )
        tel = Telemetry(self.ack_seq, self.status | (Status.REPLY if reply else 0),
                        self.voltage(currents), self.parser.stats.dropped, self.rx_rejected,
                        int((now - self.t0) * 1000), chans)
        self.telemetry_sent += 1
        payload = tel.encode()
        if self.corrupt_every and self.telemetry_sent % self.corrupt_every == 0:
            # Fault injection: a damaged copy (channel 0 speed = +3000 rad/s, CRC of the
            # original), then random bytes with start bytes in them. Must be dropped.
            frame = bytearray(encode_frame(MsgId.TELEMETRY, self.seq.next(), payload))
            frame[4 + 13:4 + 15] = (30000).to_bytes(2, "little", signed=True)
            junk = bytes(self.rng.choice((0xA5, self.rng.randrange(256))) for _ in range(12))
            self.tx_corrupted += 1
            self._write(bytes(frame) + junk)
            return
        self._send(MsgId.TELEMETRY, payload)

    def _send(self, msg_id: int, payload: bytes) -> None:
        self._write(encode_frame(msg_id, self.seq.next(), payload))

    def _write(self, data: bytes) -> None:
        try:
            n = os.write(self.fd, data)
        except BlockingIOError:
            n = 0  # nobody reads the line (bridge gone, buffer full): drop, like a UART
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EAGAIN):
                raise
            n = 0
        self.tx_frames += 1
        self.tx_dropped_bytes += len(data) - n

    # -- reporting ---------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        return {**self.parser.stats.as_dict(), "rx_rejected": self.rx_rejected,
                "commands_applied": self.commands_applied, "stops": self.stops,
                "watchdog_trips": self.watchdog_trips, "tx_frames": self.tx_frames,
                "tx_dropped_bytes": self.tx_dropped_bytes, "tx_corrupted": self.tx_corrupted}

    def snapshot(self) -> dict[str, Any]:
        currents = self.currents()
        return {
            "setpoints_radps": [round(s, 4) for s in self.setpoints],
            "thrust_setpoint_n": [round(thrust(s, self.esc), 4) for s in self.setpoints],
            "speeds_radps": [round(w, 4) for w in self.speeds],
            "thrust_n": [round(thrust(w, self.esc), 4) for w in self.speeds],
            "current_a": [round(i, 4) for i in currents],
            "voltage_v": round(self.voltage(currents), 4),
            "status": self.status,
            "counters": self.counters(),
        }

    def _emit(self, event: str, **extra: Any) -> None:
        if self.events is None:
            return
        line = {"event": event, "t_mono": time.monotonic(), **extra, **self.snapshot()}
        try:
            self.events.write(json.dumps(line) + "\n")
            self.events.flush()
        except (BrokenPipeError, ValueError):
            self.events = None

    # -- loop --------------------------------------------------------------------

    def stop(self) -> None:
        self._stop = True

    def run(self) -> None:
        """Serve until stop() (or SIGTERM / SIGINT in main())."""
        while not self._stop:
            now = time.monotonic()
            deadline = min(self._next_telemetry, self._next_status, now + 0.1)
            if self.armed_at is not None:
                deadline = min(deadline, self.armed_at + self.watchdog_s + 1e-4)
            deadline = min(deadline, self.parser.deadline + 1e-4)
            try:
                ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - now))
            except InterruptedError:
                continue
            now = time.monotonic()
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except BlockingIOError:
                    data = b""
                except OSError as exc:
                    if exc.errno != errno.EIO:  # EIO: the line's other end is closed
                        raise
                    data = b""
                if not data:
                    time.sleep(0.01)  # readable but empty: the device is gone; do not spin
                for frame in self.parser.feed(data, now):
                    self.handle(frame, now)
            else:
                for frame in self.parser.expire(now):
                    self.handle(frame, now)
            self.update(now)
            if now >= self._next_telemetry:
                self._telemetry(now, reply=False)
                self._next_telemetry = max(self._next_telemetry + self.telemetry_period_s, now)
            if now >= self._next_status:
                self._emit("status")
                self._next_status = max(self._next_status + self.status_interval_s, now)


# ------------------------------------------------------------------- the pty


def open_pty() -> tuple[int, int, str]:
    """A raw pseudo-terminal pair: (emulator's fd, the device end's fd, its path).

    The emulator keeps the device end open itself, so the line survives a bridge that
    closes or dies (a new bridge can open the path again), and sets it raw (no echo,
    no line editing) before anyone opens it.
    """
    ctl_fd, dev_fd = os.openpty()
    tty.setraw(dev_fd)
    os.set_blocking(ctl_fd, False)
    return ctl_fd, dev_fd, os.ttyname(dev_fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m moonpool.components.bridges.mcu_emulator",
        description="Emulate a thruster MCU speaking docs/protocol-mcu.md on a pty or a serial port.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true",
                       help="create a pseudo-terminal pair and print the path to open (default)")
    where.add_argument("--port", help="serve this existing serial device instead")
    parser.add_argument("--link", help="with --pty: also make this symlink to the pty (a stable path for rigs)")
    parser.add_argument("--baudrate", type=int, default=115200, help="with --port")
    parser.add_argument("--thrusters", type=int, default=8, help="channels (default 8)")
    parser.add_argument("--watchdog", type=float, default=0.2, help="s without a valid SET_SPEEDS before zeroing (default 0.2)")
    parser.add_argument("--telemetry-period", type=float, default=0.01, help="s between periodic TELEMETRY (0: replies only; default 0.01)")
    parser.add_argument("--time-constant", type=float, default=EscParameters.time_constant_s, help="ESC speed lag τ, s")
    parser.add_argument("--max-speed", type=float, default=EscParameters.max_speed_radps, help="rad/s")
    parser.add_argument("--c-forward", type=float, default=EscParameters.c_forward, help="N/(rad/s)^2")
    parser.add_argument("--c-reverse", type=float, default=EscParameters.c_reverse, help="N/(rad/s)^2")
    parser.add_argument("--idle-current", type=float, default=EscParameters.idle_current_a, help="A per ESC")
    parser.add_argument("--max-current", type=float, default=EscParameters.max_current_a, help="A per ESC at max speed")
    parser.add_argument("--supply-voltage", type=float, default=EscParameters.supply_voltage_v, help="V")
    parser.add_argument("--internal-resistance", type=float, default=EscParameters.internal_resistance_ohm, help="Ω")
    parser.add_argument("--status-interval", type=float, default=0.0, help="s between status lines on stdout (0: none)")
    parser.add_argument("--corrupt-every", type=int, default=0,
                        help="fault injection: damage every Nth TELEMETRY and add garbage (0: off)")
    parser.add_argument("--name", default="moonpool MCU emulator", help="device name in INFO")
    parser.add_argument("--quiet", action="store_true", help="no JSON lines on stdout except 'ready'")
    args = parser.parse_args(argv)
    problems = []
    if not 1 <= args.thrusters <= 32:
        problems.append("--thrusters must be 1..32")
    if not 0 < args.watchdog <= 65.535:
        problems.append("--watchdog must be in (0, 65.535] s")
    if not 0 <= args.telemetry_period <= 65.535:
        problems.append("--telemetry-period must be in [0, 65.535] s")
    if args.time_constant < 0 or args.max_speed <= 0 or args.c_forward <= 0 or args.c_reverse <= 0:
        problems.append("--time-constant must be >= 0; --max-speed, --c-forward, --c-reverse > 0")
    if problems:
        parser.error("; ".join(problems))
    esc = EscParameters(args.time_constant, args.max_speed, args.c_forward, args.c_reverse,
                        args.idle_current, args.max_current, args.supply_voltage,
                        args.internal_resistance)
    keep: Any = None
    if args.port:
        import serial

        try:
            keep = serial.Serial(args.port, args.baudrate, timeout=0)
        except (serial.SerialException, OSError) as exc:
            print(f"error: cannot open serial port {args.port}: {exc} (fix: check the device "
                  "path and that no other program holds it)", file=sys.stderr)
            return 2
        fd, path = keep.fileno(), args.port
    else:
        fd, dev_fd, path = open_pty()
        keep = dev_fd
        if args.link:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(args.link)
            os.symlink(path, args.link)
    emu = McuEmulator(fd, channels=args.thrusters, watchdog_s=args.watchdog,
                      telemetry_period_s=args.telemetry_period, esc=esc, name=args.name,
                      events=None if args.quiet else sys.stdout,
                      status_interval_s=args.status_interval, corrupt_every=args.corrupt_every)
    signal.signal(signal.SIGTERM, lambda *_: emu.stop())
    signal.signal(signal.SIGINT, lambda *_: emu.stop())
    print(json.dumps({"event": "ready", "t_mono": time.monotonic(), "port": path,
                      "link": args.link or "", "pid": os.getpid(), "channels": args.thrusters,
                      "watchdog_s": args.watchdog}), flush=True)
    print(f"MCU emulator: {args.thrusters} channels on {path}"
          + (f" (link {args.link})" if args.link else "")
          + f", watchdog {args.watchdog * 1000:g} ms; Ctrl-C to stop", file=sys.stderr, flush=True)
    try:
        emu.run()
    finally:
        emu.events = sys.stdout
        emu._emit("exit")
        if args.link and not args.port:
            with contextlib.suppress(OSError):
                if os.readlink(args.link) == path:
                    os.unlink(args.link)
    return 0


# ------------------------------------------------------------------- as a child


class EmulatorProcess:
    """An emulator running as a child process; its JSON lines are collected in a thread.

    ``port`` is the path to open. ``wait_for(pred, timeout)`` returns the first event
    (a dict) received from now on, or already queued, for which ``pred`` is true.
    """

    def __init__(self, args: list[str], startup_timeout_s: float = 10.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moonpool.components.bridges.mcu_emulator", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.history: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        ready = self.wait_for(lambda e: e["event"] == "ready", startup_timeout_s)
        if ready is None:
            self.stop()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"the MCU emulator did not start: {err.strip()}")
        self.port: str = ready["port"]
        self.pid: int = self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            event.setdefault("t_read", time.monotonic())
            self.events.put(event)

    def wait_for(self, pred: Callable[[dict[str, Any]], bool],
                 timeout_s: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                return None
            self.history.append(event)
            if pred(event):
                return event

    def latest(self, timeout_s: float = 2.0) -> dict[str, Any] | None:
        """The first status line written after this call (needs --status-interval)."""
        now = time.monotonic()
        return self.wait_for(lambda e: e["event"] == "status" and e["t_mono"] >= now, timeout_s)

    def stop(self) -> dict[str, Any] | None:
        """SIGTERM, then the final ``exit`` event (counters), or None."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._reader.join(2)
        last = None
        while True:
            try:
                e = self.events.get_nowait()
            except queue.Empty:
                break
            self.history.append(e)
            if e["event"] == "exit":
                last = e
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
        return last

    def __enter__(self) -> EmulatorProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn(*args: str, **options: Any) -> EmulatorProcess:
    """Start an emulator on a new pty: ``spawn("--watchdog", "0.2")`` or
    ``spawn(watchdog=0.2, status_interval=0.02)`` (options become ``--flags``)."""
    argv = ["--pty", *args]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not None and value is not False:
            argv += [flag, str(value)]
    return EmulatorProcess(argv)


if __name__ == "__main__":
    sys.exit(main())
