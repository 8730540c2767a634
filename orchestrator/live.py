"""A live view of a run: every message streamed to Foxglove over WebSocket while it
runs (``moonpool run RIG --live [PORT]``; docs/live.md).

Call order::

    live = LiveView(port)                    starts the Foxglove WebSocket server
    index = live.add_topic(topic, type_name, extra_schemas)   one channel per output
    live.write(index, log_time_ns, payload)  each message as it is published
    live.close()                             stops the server

Channels are the recording's topics (``/component/port``) with the same protobuf
schemas (a FileDescriptorSet per type), message encoding ``protobuf``; a message is
sent with its log time (simulation time, ns) — what the recording holds, as it is
published. Attachments (image pixels) are not streamed. Foxglove (the app, "Open
connection", ``ws://HOST:PORT``) shows the topics in any panel; docs/foxglove-layout.json
is a layout for the pool rigs. The server uses the ``foxglove-sdk`` package (the ``live``
extra); without ``--live`` nothing of it is imported or run.
"""

from __future__ import annotations

from typing import Any

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import RigError

DEFAULT_PORT = 8765
"""Foxglove's default WebSocket port."""


class LiveError(RigError):
    """The live view cannot start (package missing, port taken): exit 2."""


class LiveView:
    """The Foxglove WebSocket server of one run (module docstring)."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> None:
        try:
            import foxglove
        except ImportError:
            raise LiveError("--live needs the foxglove-sdk package, which is not installed",
                            fix="install the live extra: pip install -e '.[live]'") from None
        self._foxglove = foxglove
        self.context = foxglove.Context()
        try:
            self.server = foxglove.start_server(name="moonpool", host=host, port=port,
                                                context=self.context)
        except Exception as exc:  # noqa: BLE001 - the SDK raises its own RuntimeError
            raise LiveError(f"--live: cannot serve on {host}:{port}: {exc}",
                            fix="choose a free port: --live 8766") from exc
        self.port = self.server.port
        self.channels: list[Any] = []
        self._schemas: dict[str, Any] = {}

    def add_topic(self, topic: str, type_name: str, extra_schemas: bytes = b"") -> int:
        schema = self._schemas.get(type_name)
        if schema is None:
            try:
                data = wire.serialize(wire.file_descriptor_set(
                    [wire.message_class(type_name).DESCRIPTOR]))
            except Exception:  # noqa: BLE001 - a type only its component knows
                data = bytes(extra_schemas)
            schema = self._schemas[type_name] = self._foxglove.Schema(
                name=type_name, encoding="protobuf", data=data)
        self.channels.append(self._foxglove.Channel(
            topic, schema=schema, message_encoding="protobuf", context=self.context))
        return len(self.channels) - 1

    def write(self, index: int, log_time_ns: int, payload: bytes) -> None:
        self.channels[index].log(payload, log_time=log_time_ns)

    def close(self) -> None:
        self.server.stop()
