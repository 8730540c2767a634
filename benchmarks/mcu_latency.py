"""Command -> telemetry latency of the MCU link (docs/protocol-mcu.md).

Starts the MCU emulator in its own process on a new pseudo-terminal (or uses a real
MCU with --port), then sends SET_SPEEDS at --rate Hz and measures, for each, the time
from writing the frame to the arrival of the TELEMETRY that answers it (ack_seq,
REPLY bit), as seen by the bridge's reader thread. Two rows:

- link:   McuLink alone (the protocol, the pty/UART and the reader thread);
- bridge: the McuBridge component stepped through a ComponentHost with
          reply_wait_s > 0 (adds the step: force -> speed, encode, publish); also the
          wall time of the whole step.

    .venv/bin/python benchmarks/mcu_latency.py                # emulator on a pty
    .venv/bin/python benchmarks/mcu_latency.py --port /dev/ttyACM0   # a real MCU
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
from moonpool.components.sdk import wire
from moonpool.components.bridges.mcu_bridge import McuBridge, McuLink
from moonpool.components.bridges.mcu_emulator import spawn
from moonpool.components.sdk.host import ComponentHost
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml"


def _row(name: str, values_s, extra: str = "") -> str:
    ms = np.asarray(values_s, dtype=float) * 1e3
    if not ms.size:
        return f"| {name} | 0 | – | – | – | {extra} |"
    return (f"| {name} | {ms.size} | {np.percentile(ms, 50):.3f} | {np.percentile(ms, 99):.3f} | "
            f"{ms.max():.3f} | {extra} |")


def bench_link(port: str, baudrate: int, count: int, rate: float, channels: int) -> tuple[str, dict]:
    link = McuLink(port, baudrate, component="benchmark", link_timeout_s=1.0)
    link.open()
    lost = 0
    try:
        info = link.handshake(2.0)
        n = info.channels or channels
        period = 1.0 / rate
        next_t = time.monotonic()
        for k in range(count):
            speeds = [50.0 * np.sin(2 * np.pi * k / 200.0)] * n
            seq = link.send_speeds(speeds)
            if not link.wait_reply(seq, 0.5):
                lost += 1
            link.check()
            next_t += period
            time.sleep(max(0.0, next_t - time.monotonic()))
        link.stop()
        metrics = link.metrics()
    finally:
        link.close()
    return _row("link (McuLink)", list(link.latencies_s), f"{lost} unanswered"), metrics


def bench_bridge(port: str, baudrate: int, count: int, rate: float) -> tuple[str, str, dict]:
    profile = tomllib.loads(PROFILE.read_text())
    host = ComponentHost(McuBridge())
    params = {"port": port, "baudrate": baudrate, "profile": profile, "reply_wait_s": 0.1}
    host.configure(lc.Configure(instance_name="mcu", period_ns=int(1e9 / rate), parameters=[
        lc.NamedParameter(name=k, value=wire.to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    steps = []
    period = 1.0 / rate
    next_t = time.monotonic()
    dt_ns = int(1e9 / rate)
    try:
        for k in range(count):
            cmd = vehicle_pb2.ThrusterCommand(force_n=[10.0 * np.sin(2 * np.pi * k / 200.0)] * 8)
            t0 = time.perf_counter()
            host.step(k * dt_ns, dt_ns, {"command": cmd})
            steps.append(time.perf_counter() - t0)
            next_t += period
            time.sleep(max(0.0, next_t - time.monotonic()))
        link = host.component.link
        latencies = list(link.latencies_s) if link is not None else []
    finally:
        metrics = host.terminate()
    return (_row("bridge (McuBridge, reply_wait_s=0.1)", latencies),
            _row("bridge step wall time", steps), metrics)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", help="a real MCU's serial device (default: start the emulator on a pty)")
    ap.add_argument("--baudrate", type=int, default=115200)
    ap.add_argument("--count", type=int, default=1000, help="commands per row (default 1000)")
    ap.add_argument("--rate", type=float, default=100.0, help="commands per second (default 100)")
    args = ap.parse_args()
    emu = None
    port = args.port
    if port is None:
        emu = spawn(watchdog=0.2, telemetry_period=0.01, quiet=True)
        port = emu.port
    try:
        link_row, link_metrics = bench_link(port, args.baudrate, args.count, args.rate, 8)
        bridge_row, step_row, bridge_metrics = bench_bridge(port, args.baudrate, args.count, args.rate)
    finally:
        final = emu.stop() if emu is not None else None
    where = f"emulator on {port} (pty)" if emu else f"{port} at {args.baudrate} Bd"
    print(f"MCU command -> telemetry latency, {where}; {args.count} commands at {args.rate:g} Hz")
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}")
    print()
    print("| path | n | p50 ms | p99 ms | max ms | notes |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(link_row)
    print(bridge_row)
    print(step_row)
    print()
    for name, m in (("link", link_metrics), ("bridge", bridge_metrics)):
        print(f"{name}: frames dropped {m.get('frames_dropped')}, lost {m.get('frames_lost')}, "
              f"MCU rx dropped {m.get('mcu_rx_dropped')}, rejected {m.get('mcu_rx_rejected')}, "
              f"watchdog trips {m.get('watchdog_trips')}")
    if final is not None:
        print(f"emulator: {final['counters']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
