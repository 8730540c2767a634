"""A headless Foxglove WebSocket client for the live view's tests (`moonpool run --live`).

It speaks the Foxglove WebSocket protocol with the `websockets` package (subprotocol
``foxglove.sdk.v1``): it takes every channel the server advertises, subscribes to
all of them, and decodes each message with the schema the channel advertised (a
protobuf FileDescriptorSet, base64 in the advertisement) — never with moonpool's own
classes, so a wrong schema fails the decode.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
MESSAGE_DATA = 0x01
"""Opcode of a server's binary MessageData frame: u32 subscription, u64 log time, payload."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def class_of(channel: dict):
    """The message class of an advertised protobuf channel, from its own schema."""
    assert channel["schemaEncoding"] == "protobuf", channel
    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))


@dataclass
class Session:
    """What a client saw: the channels by topic and the decoded messages by topic."""

    channels: dict[str, dict] = field(default_factory=dict)
    messages: dict[str, list[tuple[int, object]]] = field(default_factory=dict)
    """topic -> [(log time ns, decoded message)], at most ``keep`` per topic (the first)."""
    counts: dict[str, int] = field(default_factory=dict)


async def _session(port: int, deadline: float, done: Callable[[Session], bool],
                   keep: Callable[[str], int]) -> Session:
    import websockets

    while True:
        try:
            ws = await websockets.connect(f"ws://127.0.0.1:{port}", subprotocols=SUBPROTOCOLS,
                                          max_size=None)
            break
        except OSError:
            assert time.time() < deadline, "the live view never accepted a connection"
            await asyncio.sleep(0.05)
    seen = Session()
    by_sub: dict[int, tuple[dict, object]] = {}
    async with ws:
        while time.time() < deadline and not done(seen):
            try:
                frame = await asyncio.wait_for(ws.recv(), timeout=0.5)
            except TimeoutError:
                continue
            except websockets.ConnectionClosed:
                break
            if isinstance(frame, str):
                op = json.loads(frame)
                if op.get("op") == "advertise":
                    subs = []
                    for ch in op["channels"]:
                        sub_id = len(by_sub) + 1
                        by_sub[sub_id] = (ch, class_of(ch))
                        seen.channels[ch["topic"]] = ch
                        subs.append({"id": sub_id, "channelId": ch["id"]})
                    await ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
                continue
            if frame[0] != MESSAGE_DATA:
                continue
            sub_id, log_time = struct.unpack_from("<IQ", frame, 1)
            ch, cls = by_sub[sub_id]
            topic = ch["topic"]
            seen.counts[topic] = seen.counts.get(topic, 0) + 1
            kept = seen.messages.setdefault(topic, [])
            if len(kept) < keep(topic):
                kept.append((log_time, cls.FromString(bytes(frame[13:]))))
    return seen


def watch(port: int, timeout: float, until: Iterable[str] = (),
          keep: Callable[[str], int] = lambda topic: 3,
          done: Callable[[Session], bool] | None = None) -> Session:
    """Connect to the live view on ``port`` (retrying until it listens), subscribe to
    every channel and collect until every topic of ``until`` has a message (or
    ``done(session)``), the server closes, or ``timeout`` seconds have passed."""
    wanted = tuple(until)
    if done is None:
        def done(s: Session) -> bool:  # noqa: E306 - the default stop condition
            return bool(wanted) and all(s.counts.get(t) for t in wanted)
    return asyncio.run(_session(port, time.time() + timeout, done, keep))
