#!/usr/bin/env python3
"""What the live view (``moonpool run --live``) costs: the observer's work per message
(``RunObserver.write``: the digest, no recording) in four variants, measured in the
same run, in interleaved rounds (the best of each variant is kept, so a burst of load
from elsewhere on the machine hits all of them alike):

- **none**: ``RunObserver.write`` as it was before the live view existed;
- **off**: ``live=None``, what every run without ``--live`` does (``write`` is then
  the method without live-view code; ``--live`` swaps in ``_write_live``);
- **on, no client**: a Foxglove server running, nobody connected;
- **on, one client**: a WebSocket client subscribed to every channel (it receives
  each message on another thread).

    .venv/bin/python benchmarks/live_overhead.py [--messages 5000] [--rounds 200]

Prints ns per message, each variant's ratio to **none**, and "met" when **off** costs
less than 2 % more than **none** ("costs nothing when off"). Record the figures in
docs/benchmarks.md with the load average (``uptime``) printed at the end.

With ``--session RIG``, a real-time session instead: ``moonpool run RIG --realtime
--until SECONDS`` without the live view, then with ``--live`` and a client subscribed
to every channel, in alternation (``--repeat``), printing each run's real-time
figures from its summary.json (lateness p50/p99/max, overruns, verdict). ``--mcu``
starts the MCU emulator on a pseudo-terminal for the rig's ``thrusters`` bridge (the
HIL rigs, e.g. rigs/hil/pool_mcu.toml)::

    .venv/bin/python benchmarks/live_overhead.py --session rigs/hil/pool_mcu.toml --mcu
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time

from moonpool.orchestrator.run import RunObserver

def _state() -> bytes:
    """A VehicleState as the pool rig's vehicle publishes it (every field set)."""
    from moonpool.v1 import vehicle_pb2

    m = vehicle_pb2.VehicleState(roll_rad=0.01, pitch_rad=-0.02, yaw_rad=1.2,
                                 water_density_kgpm3=1000.0)
    m.header.sim_time_ns, m.header.seq, m.header.source = 123_450_000_000, 12345, "vehicle"
    m.header.frame_id = "ned"
    for v in (m.position_ned_m, m.linear_velocity_body_mps, m.angular_velocity_body_radps,
              m.linear_acceleration_body_mps2, m.angular_acceleration_body_radps2):
        v.x, v.y, v.z = 0.123456789, -0.23456789, 0.3456789
    q = m.orientation
    q.w, q.x, q.y, q.z = 0.8253356149, 0.0, 0.0, 0.5646424734
    return m.SerializeToString(deterministic=True)


PAYLOAD = _state()


class _Baseline(RunObserver):
    """RunObserver.write as it was before the live view (no live branch)."""

    def write(self, index, log_time_ns, payload, attachment=None):
        prefix, channel = self._topics[index]
        self.digest.update_prefixed(prefix, log_time_ns, payload, attachment)
        if channel >= 0:
            self.recorder.write(channel, log_time_ns, payload, attachment=attachment)


def _per_message_ns(observer: RunObserver, index: int, n: int) -> float:
    write = observer.write
    t0 = time.perf_counter_ns()
    for k in range(n):
        write(index, k, PAYLOAD)
    return (time.perf_counter_ns() - t0) / n


def _client(port: int, subscribed: threading.Event, stop: threading.Event) -> None:
    """Subscribe to every advertised channel and drain the messages until ``stop``."""
    import websockets

    async def run() -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}", max_size=None,
                                      subprotocols=["foxglove.sdk.v1"]) as ws:
            while not stop.is_set():
                try:
                    frame = await asyncio.wait_for(ws.recv(), 0.2)
                except TimeoutError:
                    continue
                except websockets.ConnectionClosed:  # the run ended
                    return
                if isinstance(frame, str) and json.loads(frame).get("op") == "advertise":
                    channels = json.loads(frame)["channels"]
                    await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
                        {"id": ch["id"], "channelId": ch["id"]} for ch in channels]}))
                    subscribed.set()

    asyncio.run(run())


def _session(rig: str, seconds: float, live: bool, mcu: bool, out: str) -> dict:
    """One real-time run of ``rig`` (with the live view and a watching client when
    ``live``); its summary.json ``realtime`` figures."""
    import contextlib
    import subprocess
    import sys

    port = 0
    if live:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    emulator = contextlib.nullcontext()
    extra: list[str] = []
    if mcu:
        from moonpool.components.bridges.mcu_emulator import spawn

        link = os.path.join(out, "mcu")
        emulator = spawn("--link", link, watchdog=0.5, status_interval=0.02)
        extra = ["--set", f"components.thrusters.parameters.port={link}"]
    with emulator:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moonpool.orchestrator.cli", "run", rig, "--realtime",
             "--until", str(seconds), "--quiet", "--set", "run.plots=false",
             "--set", "run.realtime_strict=false", "--out", os.path.join(out, "run"),
             *extra, *(["--live", str(port)] if live else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        stop = threading.Event()
        if live:
            threading.Thread(target=_client_retrying, args=(port, stop), daemon=True).start()
        _, err = proc.communicate()
        stop.set()
    if proc.returncode != 0:
        raise SystemExit(f"the run failed (exit {proc.returncode}):\n{err[-2000:]}")
    with open(os.path.join(out, "run", "summary.json")) as f:
        return json.load(f)["realtime"]


def _client_retrying(port: int, stop: threading.Event) -> None:
    """The watching client of a session: connects once the server listens."""
    deadline = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            _client(port, threading.Event(), stop)
            return
        except OSError:
            time.sleep(0.1)


def sessions(args: argparse.Namespace) -> None:
    import tempfile

    print(f"{args.session}, {args.seconds:g} s in real time, each run "
          f"{'with the MCU emulator, ' if args.mcu else ''}plots off")
    print(f"{'live view':<24} {'p50 us':>9} {'p99 us':>10} {'max us':>10} {'overruns':>9}  verdict")
    for _ in range(args.repeat):
        for live in (False, True):
            with tempfile.TemporaryDirectory(prefix="moonpool-live-") as out:
                rt = _session(args.session, args.seconds, live, args.mcu, out)
            name = "on, one client watching" if live else "off"
            print(f"{name:<24} {rt['lateness_p50_us']:9.0f} {rt['lateness_p99_us']:10.0f} "
                  f"{rt['lateness_max_us']:10.0f} {rt['overruns']:9d}  {rt['verdict']}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=5_000, help="messages per measurement")
    ap.add_argument("--rounds", type=int, default=200, help="interleaved rounds (best kept)")
    ap.add_argument("--session", metavar="RIG", help="measure real-time runs of RIG instead")
    ap.add_argument("--seconds", type=float, default=10.0, help="--session: simulated seconds")
    ap.add_argument("--repeat", type=int, default=2, help="--session: off/on pairs")
    ap.add_argument("--mcu", action="store_true",
                    help="--session: the MCU emulator on a pty for the thrusters bridge")
    args = ap.parse_args()
    if args.session:
        sessions(args)
        return

    variants: dict[str, tuple[RunObserver, int]] = {}
    for name, observer in (("none", _Baseline(None)), ("off", RunObserver(None))):
        variants[name] = (observer, observer.add_topic("/vehicle/state",
                                                       "moonpool.v1.VehicleState"))
    servers = []
    stop = threading.Event()
    try:
        from moonpool.orchestrator.live import LiveView

        for name in ("on, no client", "on, one client"):
            live = LiveView(0)
            servers.append(live)
            observer = RunObserver(None, live=live)
            variants[name] = (observer, observer.add_topic("/vehicle/state",
                                                           "moonpool.v1.VehicleState"))
            live.start()  # (a run's first message does it)
        subscribed = threading.Event()
        threading.Thread(target=_client, args=(servers[1].port, subscribed, stop),
                         daemon=True).start()
        if not subscribed.wait(10):
            print("on, one client: the client did not subscribe; not measured")
            del variants["on, one client"]
    except Exception as exc:  # noqa: BLE001 - the live extra may be missing
        print(f"live view on: not measured ({type(exc).__name__}: {exc})")

    best = {name: float("inf") for name in variants}
    for _ in range(args.rounds):
        for name, (observer, index) in variants.items():
            best[name] = min(best[name], _per_message_ns(observer, index, args.messages))
    stop.set()
    for live in servers:
        live.close()

    base = best["none"]
    print(f"{'variant':<16} {'ns/message':>11} {'ratio':>7}")
    for name, ns in best.items():
        print(f"{name:<16} {ns:11.1f} {ns / base:7.3f}")
    ratio = best["off"] / base
    print(f"off costs < 2 % more than none: {'met' if ratio < 1.02 else 'not met'} "
          f"(ratio {ratio:.3f})")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
