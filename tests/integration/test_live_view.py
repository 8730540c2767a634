"""The live view (issue 22): `moonpool run RIG --live PORT` serves the run to Foxglove
over WebSocket. A headless client (the `websockets` package, the SDK's
``foxglove.sdk.v1`` subprotocol) connects, receives the advertised channels —
the recording's topics with their protobuf schemas — subscribes to all of them and
decodes one message of each with moonpool's classes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import subprocess
import sys
import time

import pytest
from conftest import RIGS, ROOT, SUPPORT

from moonpool.components.sdk import wire

websockets = pytest.importorskip("websockets")
pytest.importorskip("foxglove")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _session(port: int, deadline: float) -> tuple[dict, dict]:
    while True:
        try:
            ws = await websockets.connect(f"ws://127.0.0.1:{port}",
                                          subprotocols=["foxglove.sdk.v1", "foxglove.websocket.v1"])
            break
        except OSError:
            assert time.time() < deadline, "the live view never accepted a connection"
            await asyncio.sleep(0.1)
    channels: dict[int, dict] = {}
    decoded: dict[str, object] = {}
    subscribed: dict[int, int] = {}
    async with ws:
        while time.time() < deadline:
            frame = await asyncio.wait_for(ws.recv(), timeout=max(0.1, deadline - time.time()))
            if isinstance(frame, str):
                op = json.loads(frame)
                if op.get("op") == "advertise":
                    new = []
                    for ch in op["channels"]:
                        channels[ch["id"]] = ch
                        sub_id = len(subscribed) + 1
                        subscribed[sub_id] = ch["id"]
                        new.append({"id": sub_id, "channelId": ch["id"]})
                    await ws.send(json.dumps({"op": "subscribe", "subscriptions": new}))
                continue
            if frame[0] == 0x01:  # MessageData: sub id u32, log time u64, payload
                sub_id, _t = struct.unpack_from("<IQ", frame, 1)
                ch = channels[subscribed[sub_id]]
                if ch["topic"] not in decoded:
                    cls = wire.message_class(ch["schemaName"])
                    decoded[ch["topic"]] = cls.FromString(bytes(frame[13:]))
                if channels and len(decoded) == len(channels):
                    break
    return channels, decoded


def test_live_view_advertises_every_topic_and_each_decodes(tmp_path):
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(RIGS / "quickstart.toml"),
         "--until", "20", "--realtime", "1", "--live", str(port), "--out", str(tmp_path / "o"),
         "--quiet", "--set", "run.plots=false"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        channels, decoded = asyncio.run(_session(port, time.time() + 60))
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    topics = sorted(ch["topic"] for ch in channels.values())
    assert topics == ["/pid/setpoint", "/pid/wrench", "/sensor/pressure", "/vehicle/state"], err
    assert all(ch["encoding"] == "protobuf" and ch["schemaEncoding"] == "protobuf"
               for ch in channels.values())
    assert sorted(decoded) == topics
    assert decoded["/vehicle/state"].header.source == "vehicle"
    assert decoded["/sensor/pressure"].header.source == "sensor"
    assert "live view: ws://127.0.0.1:" in err


def test_the_live_view_does_not_change_the_stream(tmp_path):
    from conftest import moonpool

    digests = []
    for name, extra in (("plain", []), ("live", ["--live", str(_free_port())])):
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "2", "--quiet",
                        "--set", "run.plots=false", "--out", str(tmp_path / name), *extra)
        assert proc.returncode == 0, proc.stderr
        digests.append(json.loads((tmp_path / name / "summary.json").read_text())["digest"])
    assert digests[0] == digests[1]
