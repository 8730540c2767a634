"""A live view of a run: every message, the camera images and a 3-D scene streamed to
Foxglove over WebSocket while it runs (``moonpool run RIG --live [PORT]``; docs/live.md).

Call order::

    live = LiveView(port)                    checks that the port is free (else LiveError)
    live.set_scene(livescene.rig_scene(rig)) the static 3-D scene (before the run)
    index = live.add_topic(topic, type_name, extra_schemas)   one channel per output
    live.write(index, log_time_ns, payload, attachment)       each message as published;
                                             the first starts the Foxglove WebSocket server
    live.close()                             stops the server

The server starts with the first message, when every channel exists (the execution
adds every output's topic while it sets up, before the Initialize outputs): a client
then finds every channel in the server's first advertisement. (A channel created while
a client is connected is advertised to it; foxglove-sdk 0.30 can answer a subscription
that follows at once with "Unknown channel ID" — seen under load in 1 of 5 runs — and
the client never gets that channel.) If the port was taken meanwhile, the run goes on
without its live view (logged).

Channels (all with message encoding ``protobuf``; a message goes out with its log
time, the simulation time in ns, as in the recording):

- ``/component/port``: every output, with its type's schema (a FileDescriptorSet,
  as in the recording) — what the recording holds, as it is published;
- ``/component/port/foxglove``: for every ``moonpool.v1.ImageHeader`` output (the
  pool camera, the deep-sea camera's image and truth images, the imaging sonar) a
  ``foxglove.RawImage`` of each frame, header and pixels together (``foxglove.py``:
  the mapping the recording's image views use);
- ``/live/transforms``: ``foxglove.FrameTransform``: ``enu`` -> ``ned`` (the world,
  north-east-down, under a z-up root the 3-D panel shows upright) and, from every
  ``VehicleState`` and ``NavigationState`` message, ``ned`` -> its pose frame (the
  topic without its leading slash: ``vehicle/state``, ``ekf/navigation``);
- ``/live/scene``: ``foxglove.SceneUpdate``: the static scene (``livescene.py``: the
  pool or seabed, the scene's objects, the tags on the vehicle, the overhead camera)
  and a set of axes with a label in every pose frame.

The schemas of the last two are the Foxglove SDK's own (``foxglove.channels``). The
static scene and the root transform are sent to a client when it subscribes to their
channel (they never change during a run). Images and transforms are made only while
a client is subscribed to their channel (``Channel.has_sinks``); without ``--live``
nothing of this module is imported and no server runs.
"""

from __future__ import annotations

import logging
import math
import socket
from typing import Any

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import RigError
from moonpool.v1 import navigation_pb2, vehicle_pb2, vision_pb2

from . import foxglove as views
from .livescene import WORLD_FRAME, PlacedPart, topic_frame

log = logging.getLogger("moonpool.live")

DEFAULT_PORT = 8765
"""Foxglove's default WebSocket port."""
ROOT_FRAME = "enu"
"""The z-up root frame; ``ned`` hangs under it, rotated by pi about (1, 1, 0)/sqrt(2)."""
SCENE_TOPIC = "/live/scene"
TRANSFORMS_TOPIC = "/live/transforms"
IMAGE_SUFFIX = "/foxglove"
"""Suffix of an image topic's RawImage channel (as the recording's image views)."""
POSE_TYPES = {"moonpool.v1.VehicleState": vehicle_pb2.VehicleState,
              "moonpool.v1.NavigationState": navigation_pb2.NavigationState}
"""Message types with a pose in NED (``position_ned_m``, ``orientation`` body -> NED)."""
AXIS_M = 0.3
"""Length of the axes drawn in every pose frame."""

_PLAIN, _IMAGE, _POSE = 0, 1, 2
_HALF = math.sqrt(0.5)


class LiveError(RigError):
    """The live view cannot start (package missing, port taken): exit 2."""


class LiveView:
    """The Foxglove WebSocket server of one run (module docstring)."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> None:
        try:
            import foxglove
            import foxglove.channels
            import foxglove.messages
        except ImportError:
            raise LiveError("--live needs the foxglove-sdk package, which is not installed",
                            fix="install the live extra: pip install -e '.[live]'") from None
        self._fg = foxglove
        self._m = foxglove.messages
        self._topics: list[tuple[Any, int, Any]] = []  # (channel, kind, image view / class)
        self._schemas: dict[str, Any] = {}
        self._parts: list[PlacedPart] = []
        self._frames: list[str] = []
        self._t_ns = 0
        self.context = foxglove.Context()
        self.host, self.port = host, _free(host, port)
        self.server: Any = None  # started by the first message (module docstring)
        self._failed = False
        self.scene = foxglove.channels.SceneUpdateChannel(SCENE_TOPIC, context=self.context)
        self.transforms = foxglove.channels.FrameTransformChannel(TRANSFORMS_TOPIC,
                                                                  context=self.context)
        self._image_schema = foxglove.Schema(name=views.RAW_IMAGE, encoding="protobuf",
                                             data=views.raw_image_schema())

    # -- set-up

    def set_scene(self, parts: list[PlacedPart]) -> None:
        """The static scene (``livescene.rig_scene``), sent to every client that subscribes."""
        self._parts = list(parts)

    def add_topic(self, topic: str, type_name: str, extra_schemas: bytes = b"") -> int:
        schema = self._schemas.get(type_name)
        if schema is None:
            try:
                data = wire.serialize(wire.file_descriptor_set(
                    [wire.message_class(type_name).DESCRIPTOR]))
            except Exception:  # noqa: BLE001 - a type only its component knows
                data = bytes(extra_schemas)
            schema = self._schemas[type_name] = self._fg.Schema(
                name=type_name, encoding="protobuf", data=data)
        channel = self._fg.Channel(topic, schema=schema, message_encoding="protobuf",
                                   context=self.context)
        if type_name == views.IMAGE_HEADER:
            view = self._fg.Channel(topic + IMAGE_SUFFIX, schema=self._image_schema,
                                    message_encoding="protobuf", context=self.context)
            self._topics.append((channel, _IMAGE, view))
        elif type_name in POSE_TYPES:
            frame = topic_frame(topic)
            self._frames.append(frame)
            self._topics.append((channel, _POSE, (POSE_TYPES[type_name], frame)))
        else:
            self._topics.append((channel, _PLAIN, None))
        return len(self._topics) - 1

    # -- the stream

    def start(self) -> None:
        """Start the WebSocket server (the first ``write`` does; module docstring)."""
        if self.server is not None or self._failed:
            return
        try:
            self.server = self._fg.start_server(
                name="moonpool", host=self.host, port=self.port, context=self.context,
                server_listener=_listener(self._fg, self))
        except Exception as exc:  # noqa: BLE001 - a viewer never fails a run
            self._failed = True
            log.error("live view: cannot serve on %s:%d (%s); the run goes on without it",
                      self.host, self.port, exc)

    def write(self, index: int, log_time_ns: int, payload: bytes, attachment: Any = None) -> None:
        if self.server is None:
            self.start()
        channel, kind, extra = self._topics[index]
        channel.log(payload, log_time=log_time_ns)
        self._t_ns = log_time_ns
        if kind == _PLAIN:
            return
        try:
            if kind == _IMAGE:
                if attachment is not None and extra.has_sinks():
                    header = vision_pb2.ImageHeader.FromString(payload)
                    view = views.image_view(header, bytes(memoryview(attachment).cast("B")),
                                            log_time_ns)
                    if view is not None:
                        extra.log(view, log_time=log_time_ns)
            elif self.transforms.has_sinks():
                cls, frame = extra
                self.transforms.log(self._pose_transform(cls.FromString(payload), frame,
                                                         log_time_ns), log_time=log_time_ns)
        except Exception as exc:  # noqa: BLE001 - a viewer never fails a run
            log.warning("live view: no view of %s (%s: %s); the message itself is streamed",
                        channel.topic, type(exc).__name__, exc)
            self._topics[index] = (channel, _PLAIN, None)  # said once: plain from now on

    def _stamp(self, t_ns: int):
        sec, nsec = divmod(int(t_ns), 1_000_000_000)
        return self._m.Timestamp(sec=sec, nsec=nsec)

    def _pose_transform(self, msg, frame: str, t_ns: int):
        """``ned`` -> the pose frame of a VehicleState / NavigationState."""
        m, p, q = self._m, msg.position_ned_m, msg.orientation
        if not (q.w or q.x or q.y or q.z):  # unset: level, heading north
            rotation = m.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)
        else:
            rotation = m.Quaternion(x=q.x, y=q.y, z=q.z, w=q.w)
        t = msg.header.sim_time_ns if msg.HasField("header") else t_ns
        return m.FrameTransform(timestamp=self._stamp(t), parent_frame_id=WORLD_FRAME,
                                child_frame_id=frame,
                                translation=m.Vector3(x=p.x, y=p.y, z=p.z), rotation=rotation)

    def publish_static(self, channel_topic: str) -> None:
        """The root transform (to the transforms' subscribers) or the static scene (to
        the scene's), at the latest log time: called when a client subscribes."""
        t = self._t_ns
        if channel_topic == TRANSFORMS_TOPIC:
            m = self._m
            self.transforms.log(m.FrameTransform(
                timestamp=self._stamp(t), parent_frame_id=ROOT_FRAME, child_frame_id=WORLD_FRAME,
                translation=m.Vector3(x=0.0, y=0.0, z=0.0),
                rotation=m.Quaternion(x=_HALF, y=_HALF, z=0.0, w=0.0)), log_time=t)
        elif channel_topic == SCENE_TOPIC:
            self.scene.log(self._scene_update(t), log_time=t)

    def _scene_update(self, t_ns: int):
        m = self._m
        stamp = self._stamp(t_ns)
        identity = m.Pose(position=m.Vector3(x=0.0, y=0.0, z=0.0),
                          orientation=m.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0))
        entities = []
        for placed in self._parts:
            part = placed.part
            r, g, b, a = part.color
            tri = m.TriangleListPrimitive(
                pose=identity, color=m.Color(r=r, g=g, b=b, a=a),
                points=[m.Point3(x=x, y=y, z=z) for x, y, z in part.vertices.tolist()],
                indices=part.faces.ravel().tolist())
            entities.append(m.SceneEntity(timestamp=stamp, frame_id=placed.frame, id=placed.id,
                                          frame_locked=True, triangles=[tri]))
        for frame in self._frames:
            entities.append(m.SceneEntity(timestamp=stamp, frame_id=frame, id=f"axes/{frame}",
                                          frame_locked=True, arrows=_axes(m, AXIS_M),
                                          texts=[m.TextPrimitive(
                                              pose=identity, billboard=True, font_size=14.0,
                                              scale_invariant=True, text=frame,
                                              color=m.Color(r=1.0, g=1.0, b=1.0, a=1.0))]))
        return m.SceneUpdate(entities=entities)

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()


def _axes(m: Any, length: float) -> list[Any]:
    """x (forward) red, y (right) green, z (down) blue, as arrows from the frame origin."""
    out = []
    for (qx, qy, qz, qw), (r, g, b) in (
            ((0.0, 0.0, 0.0, 1.0), (1.0, 0.2, 0.2)),          # +x
            ((0.0, 0.0, _HALF, _HALF), (0.2, 1.0, 0.2)),      # +x turned to +y
            ((0.0, -_HALF, 0.0, _HALF), (0.3, 0.5, 1.0))):    # +x turned to +z
        out.append(m.ArrowPrimitive(
            pose=m.Pose(position=m.Vector3(x=0.0, y=0.0, z=0.0),
                        orientation=m.Quaternion(x=qx, y=qy, z=qz, w=qw)),
            shaft_length=0.8 * length, shaft_diameter=0.02 * length / 0.3,
            head_length=0.2 * length, head_diameter=0.05 * length / 0.3,
            color=m.Color(r=r, g=g, b=b, a=1.0)))
    return out


def _free(host: str, port: int) -> int:
    """``port`` (0: one the system picks) if nothing listens on it, else LiveError."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise LiveError(f"--live: cannot serve on {host}:{port}: {exc.strerror or exc}",
                            fix="choose a free port: --live 8766") from exc
        return probe.getsockname()[1]


def _listener(foxglove: Any, live: LiveView) -> Any:
    """The server's callbacks: a client subscribing to the scene or the transforms gets
    the static scene or the root transform at once (sent from the server's thread;
    the SDK's channels may be logged to from any thread)."""

    class Listener(foxglove.ServerListener):
        def on_subscribe(self, client: Any, channel: Any) -> None:
            try:
                live.publish_static(channel.topic)
            except Exception as exc:  # noqa: BLE001 - a viewer never fails a run
                log.warning("live view: cannot send %s: %s", channel.topic, exc)

    return Listener()
