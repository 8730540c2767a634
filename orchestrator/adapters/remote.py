"""RemoteAdapter: a component behind a ZeroMQ endpoint (DEALER here, ROUTER there).

Every call has a deadline. While waiting, the adapter polls in short slices so it
can notice a dead child process (``supervise``), run the execution's idle work
(heartbeats to other components) and drop what does not belong: malformed frames
(counted in ``rejected`` and logged) and replies to earlier, timed-out requests.

A ``remote`` adapter also watches its connection (a ZeroMQ socket monitor, read only
while waiting, never on the hot path): a failed CURVE handshake ends the run at once
with ``AuthenticationFailed`` saying which side's key is wrong, and a timeout says
whether a connection was ever made (docs/distributed.md).

Foreign zmq / protobuf exceptions are translated here into the moonpool tree.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import zmq

from moonpool.components.sdk import wire
from moonpool.components.sdk.wire import (
    K_INPUT,
    K_PARAMETER,
    K_STEP,
    K_STEP_NS,
    K_TIME,
    port_value,
    varint,
)
from moonpool.components.sdk.errors import (
    AuthenticationFailed,
    ConnectionLost,
    ProtocolError,
    StepTimeout,
    error_from_wire,
    remote_text,
)
from moonpool.components.sdk.security import ClientSecurity
from moonpool.v1 import lifecycle_pb2 as lc

from .base import Adapter, Sample, initialize_request

log = logging.getLogger("moonpool.remote")

SLICE_S = 0.05

_EXPECTED = {
    "describe": "description",
    "configure": "ack",
    "initialize": "initialized",
    "step": "step_result",
    "terminate": "terminated",
    "heartbeat": "heartbeat",
    "step_batch": "step_batch_result",
}


class StepEncoder:
    """Encodes the Step messages of one connection by hand (see "hot-path encoding"
    in components/sdk/wire.py): the constant part of each input's PortValue is kept per
    port, and the encoded time and step size are reused while they repeat (every
    member of a process group is stepped at the same instant)."""

    def __init__(self) -> None:
        self._prefixes: dict[str, tuple[str, bytes]] = {}  # port -> (type, encoded port+type)
        self._t = self._dt = None
        self._t_field = self._dt_field = b""

    def step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any], frames: list,
             parameters: tuple[tuple[str, Any], ...] = ()) -> bytes:
        """An encoded Step; attachments are appended to ``frames`` (numbered from 1);
        ``parameters``: tunable parameters to set first (Step.parameters, field 4)."""
        if t_ns != self._t:
            self._t, self._t_field = t_ns, (K_TIME + varint(t_ns)) if t_ns else b""
        if dt_ns != self._dt:
            self._dt, self._dt_field = dt_ns, (K_STEP_NS + varint(dt_ns)) if dt_ns else b""
        parts = [self._t_field, self._dt_field]
        prefixes = self._prefixes
        for port, value in inputs.items():
            for s in value if isinstance(value, list) else (value,):
                known = prefixes.get(port)
                if known is None or known[0] != s.type_name:
                    known = prefixes[port] = (s.type_name,
                                              wire.port_value_prefix(port, s.type_name))
                if s.attachment is None:
                    pv = port_value(known[1], s.payload)
                else:
                    frames.append(s.attachment)
                    pv = port_value(known[1], s.payload, len(frames))
                parts += (K_INPUT, varint(len(pv)), pv)
        for name, value in parameters:
            named = lc.NamedParameter(name=name, value=wire.to_parameter_value(value))
            data = named.SerializeToString(deterministic=True)
            parts += (K_PARAMETER, varint(len(data)), data)
        return b"".join(parts)


class LinkMonitor:
    """What a DEALER's socket monitor says about its connection to one endpoint.

    ``check()`` drains the events and raises ``AuthenticationFailed`` on a failed
    handshake (libzmq gives up on a refused key, and retries forever against a wrong
    server key: without this a run would only see a timeout); ``note()`` describes the
    link for a timeout message."""

    _EVENTS = (zmq.EVENT_CONNECTED | zmq.EVENT_CONNECT_RETRIED | zmq.EVENT_DISCONNECTED
               | zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
               | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)

    def __init__(self, sock: zmq.Socket, endpoint: str, *, secure: bool, name: str,
                 client_public_file: str = "") -> None:
        self.client_public_file = client_public_file
        self.endpoint = endpoint
        self.secure = secure
        self.name = name
        self.sock = sock
        addr = f"inproc://moonpool-monitor-{os.getpid()}-{os.urandom(6).hex()}"
        sock.monitor(addr, self._EVENTS)
        self.pipe = sock.context.socket(zmq.PAIR)
        self.pipe.setsockopt(zmq.LINGER, 0)
        self.pipe.connect(addr)
        self.retries = 0
        self.handshakes = 0
        self.connected_at: float | None = None
        self.disconnected_at: float | None = None
        """When the drop was first read (it happened after ``disconnected_after``)."""
        self.disconnected_after: float | None = None
        self.checked_at: float | None = None

    def check(self) -> None:
        """Drain the monitor's events. They carry no time: an event is dated by when it
        is read, so the adapter reads them while waiting and at every keepalive, and
        a drop is known to have happened between the previous check and this one."""
        from zmq.utils.monitor import parse_monitor_message

        previous, self.checked_at = self.checked_at, time.monotonic()
        while self.pipe.poll(0):
            event = parse_monitor_message(self.pipe.recv_multipart())
            kind, value = event["event"], event["value"]
            now = time.monotonic()
            if kind == zmq.EVENT_CONNECT_RETRIED:
                self.retries += 1
            elif kind == zmq.EVENT_CONNECTED:
                self.connected_at, self.disconnected_at = now, None
            elif kind == zmq.EVENT_DISCONNECTED:
                self.disconnected_at, self.disconnected_after = now, previous
            elif kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.handshakes += 1
            else:
                self._fail(kind, value)

    def _client_public_file(self) -> str:
        """The public half of the rig's client_key, as the user named it."""
        return self.client_public_file or "ORCHESTRATOR.key"

    def _fail(self, kind: int, value: int) -> None:
        where = self.endpoint
        if kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            raise AuthenticationFailed(
                f"the server at {where} refused this orchestrator's key (ZAP status {value})",
                component=self.name,
                fix="start the server with --allow naming the public half of client_key "
                f"(--allow {self._client_public_file()}), or give the rig the client_key it "
                "allows",
            )
        mismatch = kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL and value == getattr(
            zmq, "PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH", 0x11000002)
        if self.secure and mismatch:
            raise AuthenticationFailed(
                f"the server at {where} does not use CURVE, but the rig gives keys",
                component=self.name,
                fix="start it with --key SERVER.key_secret --allow ORCHESTRATOR.key "
                "(or remove server_key/client_key and set insecure = true on a trusted "
                "network)",
            )
        if self.secure:
            raise AuthenticationFailed(
                f"the CURVE handshake with {where} failed: the server there does not hold the "
                "secret key of server_key (or it does not use CURVE at all)",
                component=self.name,
                fix="server_key must be the public key file (NAME.key) of the key pair the "
                "server was started with (--key NAME.key_secret)",
            )
        # Without keys, a server that requires CURVE refuses the handshake (mechanism
        # mismatch, or it closes the connection when its ZAP domain rejects NULL).
        raise AuthenticationFailed(
            f"the server at {where} refused the handshake: it requires CURVE keys and the rig "
            "gives none" + ("" if mismatch else f" (or it is no ZeroMQ peer; event {kind})"),
            component=self.name,
            fix="add server_key (the server's public key file) and client_key (this "
            "orchestrator's secret key file, allowed by the server) to the component",
        )

    def note(self) -> str:
        """A few words on the state of the link, for timeout messages (raises
        AuthenticationFailed if that is what happened)."""
        try:
            self.check()
        except zmq.ZMQError:
            return ""
        now = time.monotonic()
        if self.connected_at is None:
            return (f"no connection could be made ({self.retries} attempts): is `moonpool "
                    "serve` running there, and the port open?") if self.retries else \
                "no connection made yet"
        if self.disconnected_at is not None:
            latest = now - self.disconnected_at
            earliest = now - (self.disconnected_after or self.disconnected_at)
            if earliest - latest > 0.5:  # not read for a while: say what is known
                return f"the connection dropped {latest:.1f} to {earliest:.1f} s ago"
            return f"the connection dropped {latest:.1f} s ago"
        if self.secure and not self.handshakes:
            return "connected, but the CURVE handshake did not complete"
        return ("connected" + (" (CURVE)" if self.secure else "") + "; the component hangs, is "
                "too slow, or the network path is cut")

    def close(self) -> None:
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.pipe.close(0)


class RemoteAdapter(Adapter):
    placement = "remote"
    pipelined = False
    """Whether the execution may send the next request before this one is answered
    (a process group's connection under Jacobi, group.py); else one at a time."""
    local_routes: tuple = ()
    """The connections the component process delivers itself (a process group's,
    components/sdk/localroutes.py): the execution neither routes nor gathers them."""

    def __init__(
        self,
        name: str,
        endpoint: str,
        *,
        step_timeout_ns: int,
        setup_timeout_ns: int,
        heartbeat_interval_ns: int = 1_000_000_000,
        peer_timeout_ns: int = 10_000_000_000,
        context: zmq.Context | None = None,
        socket_setup: Callable[[zmq.Socket], None] | None = None,
        security: ClientSecurity | None = None,
        max_message_bytes: int = wire.DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        """``max_message_bytes``: the largest frame sent or accepted (``ZMQ_MAXMSGSIZE``: a
        component replying with a larger one is disconnected; see docs/protocol.md §2)."""
        super().__init__(name)
        self.max_message_bytes = max_message_bytes
        self.endpoint = endpoint
        self.step_timeout_s = step_timeout_ns * 1e-9
        self.setup_timeout_s = setup_timeout_ns * 1e-9
        self.heartbeat_interval_s = heartbeat_interval_ns * 1e-9
        self.peer_timeout_s = peer_timeout_ns * 1e-9
        self.ctx = context or zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        # A send waits only when libzmq holds no connection to the component at all: it
        # dropped it (a reply larger than max_message_bytes, a protocol error, a refused
        # handshake) and did not reconnect. ``_send_bounded`` waits in slices, reading
        # the link's events, at most the peer timeout (then ConnectionLost); the socket's
        # own send timeout is the same bound, for any send made without it.
        self.sock.setsockopt(zmq.SNDTIMEO, max(1, int(self.peer_timeout_s * 1000)))
        # A stable identity: after a TCP reconnect the component still knows us
        # as the peer its session is bound to (a fresh one would get BUSY).
        self.sock.setsockopt(zmq.ROUTING_ID, b"moonpool-" + os.urandom(8))
        if security is not None:
            security.apply(self.sock)  # CURVE client: before connect
        if socket_setup:
            socket_setup(self.sock)
        self.link: LinkMonitor | None = None
        if self.placement == "remote":  # (process children are ours, on an ipc path)
            self.link = LinkMonitor(self.sock, endpoint, secure=security is not None, name=name,
                                    client_public_file=security.client_public_file
                                    if security is not None else "")
        try:
            self.sock.connect(endpoint)
        except zmq.ZMQError as exc:
            if self.link is not None:
                self.link.close()
            self.sock.close(0)
            raise ConnectionLost(
                f"cannot connect to {endpoint}: {exc}",
                component=name,
                fix="check the endpoint in the rig (tcp://host:port or ipc://path)",
            ) from exc
        self._next_id = 1
        self._rejected = 0
        self._in_flight: tuple[int, str, float, float] | None = None  # id, body, sent, deadline
        # Requests sent after the one in flight, still unanswered (a pipelined process
        # group's next batch: group.py); replies come in order.
        self._later: deque[tuple[int, str, float, float]] = deque()
        self._last_contact = time.monotonic()
        self._hb_outstanding: float | None = None
        self._hb_sent = 0.0  # the last heartbeat sent while a request was out
        self._ready: tuple[lc.Reply, list] | None = None  # in-flight reply, read early
        self.idle: Callable[[], None] | None = None
        self.closed = False
        self.error_reply = False
        self.fail_on_error = True
        self._rcvtimeo = -1
        self.encoder = StepEncoder()

    # -- supervision hooks (ProcessAdapter overrides) ----------------------------

    def supervise(self) -> None:
        """Raise if the component is known to be unreachable (remote: a failed handshake)."""
        if self.link is not None:
            try:
                self.link.check()
            except AuthenticationFailed:
                self.failed = True
                raise

    def _where(self) -> str:
        if self.link is None:
            return f"at {self.endpoint}"
        try:
            note = self.link.note()
        except AuthenticationFailed:
            self.failed = True
            raise
        return f"at {self.endpoint}; {note}" if note else f"at {self.endpoint}"

    # -- calls -------------------------------------------------------------------

    def _send(self, body: str, payload: Any, instance: str = "") -> int:
        if body != "heartbeat":
            self._ready = None  # a reply read early belongs to an abandoned request
        req = lc.Request(protocol_version=wire.PROTOCOL_VERSION, request_id=self._next_id,
                         instance=instance)
        getattr(req, body).CopyFrom(payload)
        self._next_id += 1
        data = wire.serialize(req)
        if len(data) > self.max_message_bytes:
            self._too_big(body, len(data))
        self._send_bounded(body, lambda flags: self.sock.send(data, flags))
        return req.request_id

    def _send_bounded(self, body: str, send: Callable[[int], Any]) -> None:
        """``send(flags)`` without blocking; when libzmq holds no connection to queue on
        (it dropped it, or a handshake failed and took it away), wait for one in slices,
        reading the link's events meanwhile (a refused handshake is named at once, as
        while waiting for a reply), at most the peer timeout."""
        deadline = None
        while True:
            try:
                send(zmq.NOBLOCK)
                return
            except zmq.Again:
                pass
            except zmq.ZMQError as exc:
                raise self._send_failed(body, exc) from exc
            now = time.monotonic()
            deadline = deadline or now + self.peer_timeout_s
            self.supervise()  # AuthenticationFailed (remote), a dead child (process)
            if now >= deadline:
                raise self._send_failed(body, zmq.Again())
            self.sock.poll(int(min(deadline - now, SLICE_S) * 1000) + 1, zmq.POLLOUT)

    def _send_failed(self, body: str, exc: zmq.ZMQError) -> ConnectionLost:
        """ConnectionLost for a send that failed; a send that timed out (zmq.Again) means
        libzmq holds no connection to the component: it dropped it."""
        self.failed = True
        if isinstance(exc, zmq.Again):
            return ConnectionLost(
                f"cannot send {body}: the connection to {self.endpoint} was dropped and did "
                f"not come back within {self.peer_timeout_s:g} s (peer_timeout). libzmq drops "
                f"a connection when the component sends a frame larger than "
                f"run.max_message_bytes ({self.max_message_bytes} bytes), e.g. a large reply, "
                "or on a protocol error",
                component=self.name,
                fix="if the component's outputs can be that large, raise run.max_message_bytes "
                    "in the rig; otherwise check the component and the network")
        return ConnectionLost(f"cannot send {body}: {exc}", component=self.name)

    def _call(
        self, body: str, payload: Any, timeout_s: float, instance: str = ""
    ) -> tuple[lc.Reply, list]:
        self._later.clear()  # (abandoned: their late replies are dropped)
        rid = self._send(body, payload, instance)
        now = time.monotonic()
        self._in_flight = (rid, body, now, now + timeout_s)
        return self._wait()

    def _too_big(self, body: str, size: int, what: str = "the request") -> None:
        raise ProtocolError(
            f"{what} of {body} is {size} bytes, more than max_message_bytes "
            f"({self.max_message_bytes}); the component would drop the connection",
            component=self.name,
            fix="raise run.max_message_bytes in the rig (and --max-message-bytes of a "
                "`moonpool serve`), or send smaller inputs (e.g. a smaller image)")

    def send_encoded(self, body: str, key: bytes, data: bytes, timeout_s: float,
                     frames: list) -> None:
        """Send a request whose body is already encoded (``key``: the body's field key
        in Request), with raw attachment frames, without waiting; ``wait_reply``
        collects the answer. Sent while another request is unanswered (a pipelined
        group's next batch), it is answered after that one."""
        rid = self._next_id
        self._next_id += 1
        envelope = b"".join((wire.request_head(rid), key, varint(len(data)), data))
        if len(envelope) > self.max_message_bytes:
            self._too_big(body, len(envelope))
        for f in frames:
            if memoryview(f).nbytes > self.max_message_bytes:
                self._too_big(body, memoryview(f).nbytes, "an attachment")
        if frames:  # zero-copy: attachments are large (images)
            parts = [envelope, *frames]
            self._send_bounded(body, lambda flags: self.sock.send_multipart(
                parts, flags, copy=False))
        else:
            self._send_bounded(body, lambda flags: self.sock.send(envelope, flags))
        now = time.monotonic()
        if self._in_flight is None:
            self._ready = None
            self._in_flight = (rid, body, now, now + timeout_s)
        else:
            self._later.append((rid, body, now, now + timeout_s))

    @property
    def last_request_id(self) -> int:
        """The id of the request sent last."""
        return self._next_id - 1

    def wait_reply(self) -> tuple[lc.Reply, list]:
        """The reply to the request in flight (see ``send_encoded``)."""
        return self._wait()

    @property
    def in_flight_request(self) -> int | None:
        """The id of the request being answered (the oldest unanswered), or None."""
        return None if self._in_flight is None else self._in_flight[0]

    @property
    def reply_read(self) -> bool:
        """Whether the reply to the request in flight has been read from the socket
        (by ``reply_ready``) and waits to be taken."""
        return self._ready is not None

    def reply_ready(self) -> bool:
        """Whether the reply to the request in flight has arrived (without waiting):
        reads what the socket holds (heartbeat answers, garbage: as ``_wait`` does)
        and keeps the reply for ``_wait``."""
        if self._in_flight is None:
            return False
        if self._ready is not None:
            return True
        sock, rid = self.sock, self._in_flight[0]
        try:
            while sock.poll(0, zmq.POLLIN):
                frames = sock.recv_multipart()
                reply = self._accept(frames)
                if reply is not None and reply.request_id == rid:
                    self._ready = (reply, frames)
                    return True
        except zmq.ZMQError:
            return True  # let _wait meet the error
        return False

    def _wait(self) -> tuple[lc.Reply, list]:
        assert self._in_flight is not None
        rid, body, sent, deadline = self._in_flight
        sock = self.sock
        try:
            while True:
                if self._ready is not None:  # read already by reply_ready
                    (reply, frames), self._ready = self._ready, None
                    checked = self._checked(reply, frames, body)
                    if checked is not None:
                        return checked
                remaining = deadline - time.monotonic()
                # A blocking receive with a timeout of one slice (no poll object per
                # call: the hot path is a single system call). Even past the deadline
                # look once without waiting: a reply that arrived while the
                # orchestrator was busy elsewhere is not late.
                ms = int(min(remaining, SLICE_S) * 1000) + 1 if remaining > 0 else 0
                if ms != self._rcvtimeo:
                    sock.setsockopt(zmq.RCVTIMEO, ms)
                    self._rcvtimeo = ms
                try:
                    frames = sock.recv_multipart()
                except zmq.Again:
                    frames = None
                except zmq.ZMQError as exc:
                    raise ConnectionLost(f"socket error: {exc}", component=self.name) from exc
                if frames is None:
                    self._check_heartbeat(time.monotonic())
                    if remaining <= 0:
                        self.supervise()  # a dead child is a crash, not a timeout
                        self.failed = True
                        raise StepTimeout(
                            f"no answer to {body} within {deadline - sent:g} s ({self._where()})",
                            component=self.name,
                            fix="the component hangs or is too slow: fix it, or raise "
                            + ("step_timeout" if body in ("step", "step_batch") else "setup_timeout")
                            + " in the rig",
                        )
                    self.supervise()
                    if self.idle is not None:
                        self.idle()
                    continue
                reply = self._accept(frames)
                if reply is None or reply.request_id != rid:
                    continue
                checked = self._checked(reply, frames, body)
                if checked is None:
                    continue
                return checked
        finally:
            self._in_flight = None
            self._last_contact = now = time.monotonic()
            if self._later:  # the next request's time starts now: the server begins it now
                rid, body, sent, deadline = self._later.popleft()
                self._in_flight = (rid, body, now, now + (deadline - sent))

    def _checked(self, reply: lc.Reply, frames: list, body: str) -> tuple[lc.Reply, list] | None:
        """The reply to the request in flight, checked (None: dropped as unexpected)."""
        if reply.protocol_version != wire.PROTOCOL_VERSION:
            self.failed = True
            raise ProtocolError(
                f"the component at {self.endpoint} answers in protocol version "
                f"{reply.protocol_version}; this orchestrator speaks "
                f"{wire.PROTOCOL_VERSION}",
                component=self.name,
                fix="run the same moonpool protocol version on both sides",
            )
        kind = reply.WhichOneof("body")
        if kind == "error":
            # A process group's connection is not failed by one member's error.
            if self.fail_on_error:
                self.failed = True
                self.error_reply = True
            raise error_from_wire(reply.error, self.name)
        if kind != _EXPECTED[body]:
            self._reject(f"answer to {body} is {kind}, expected {_EXPECTED[body]}")
            return None
        return reply, frames[1:]

    def _accept(self, frames: list) -> lc.Reply | None:
        """Decode a reply envelope; drop and count garbage; note heartbeats."""
        try:
            reply = wire.decode_envelope(frames[:1], lc.Reply)
        except ProtocolError as exc:
            self._reject(str(exc))
            return None
        self._last_contact = time.monotonic()
        if reply.WhichOneof("body") == "heartbeat":
            self._hb_outstanding = None
            return reply
        if self._in_flight is None or reply.request_id != self._in_flight[0]:
            log.debug("%s: dropped a late reply to request %d", self.name, reply.request_id)
        return reply

    def _reject(self, why: str) -> None:
        self._rejected += 1
        log.warning("%s: rejected a frame from %s: %s", self.name, self.endpoint, why)

    @property
    def rejected(self) -> int:
        return self._rejected

    # -- lifecycle -----------------------------------------------------------------

    def describe(self) -> lc.Description:
        reply, _ = self._call("describe", lc.Describe(), self.setup_timeout_s)
        desc = reply.description
        if desc.protocol_version and desc.protocol_version != wire.PROTOCOL_VERSION:
            raise ProtocolError(
                f"component speaks protocol version {desc.protocol_version}, this orchestrator "
                f"{wire.PROTOCOL_VERSION}",
                component=self.name,
                fix="run the same moonpool version on both sides",
            )
        self.description = desc
        return desc

    def configure(self, msg: lc.Configure) -> None:
        self._call("configure", msg, self.setup_timeout_s)

    def initialize(self, start_time_ns: int,
                   inputs: dict[str, Any] | None = None) -> list[Sample]:
        reply, frames = self._call(
            "initialize", initialize_request(start_time_ns, inputs), self.setup_timeout_s
        )
        return self._samples(reply.initialized.outputs, frames)

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        frames: list[Any] = []
        step = self.encoder.step(t_ns, dt_ns, inputs, frames, self.take_parameters())
        self.send_encoded("step", K_STEP, step, self.step_timeout_s, frames)
        self._t_sent = time.perf_counter_ns()

    def finish_step(self) -> list[Sample]:
        reply, frames = self._wait()
        self.times.add(time.perf_counter_ns() - self._t_sent)
        result = reply.step_result
        if result.compute_ns > 0:
            self.compute.add(result.compute_ns)
        if result.finished:
            self.finished = remote_text(result.finished, 500)
            self.finished_failed = result.failed
        return self._samples(result.outputs, frames)

    def _samples(self, values: Any, frames: list) -> list[Sample]:
        out = []
        for pv in values:
            att = None
            if pv.attachment:
                if pv.attachment > len(frames):
                    raise ProtocolError(
                        f"output '{pv.port}' refers to missing attachment frame {pv.attachment}",
                        component=self.name,
                    )
                att = bytes(frames[pv.attachment - 1])
            out.append(Sample(pv.port, pv.type, pv.payload, att))
        return out

    def keepalive(self, now: float) -> None:
        if self.closed:
            return
        if self.link is not None:  # date a dropped connection while nothing is waited for
            self.supervise()
        if self._in_flight is not None:
            # A step is out: collected when needed, so the component may have answered
            # long ago and now hears nothing. Keep its session alive; the step's own
            # timeout, not a heartbeat's, governs whether it is hung (its answer comes
            # after the step's reply and is skipped when that is collected). A
            # heartbeat sent before the step still counts: a step sent into a silent
            # link does not restart the heartbeat's clock.
            self._check_heartbeat(now)
            if now - max(self._in_flight[2], self._hb_sent) > self.heartbeat_interval_s:
                self._send("heartbeat", lc.Heartbeat(state=lc.COMPONENT_STATE_INITIALIZED))
                self._hb_sent = now
            return
        if self._hb_outstanding is not None:
            self.supervise()  # a dead child: ComponentCrashed now, not after peer_timeout
            # Drain whatever arrived (heartbeat answers, garbage) without blocking.
            while self.sock.poll(0, zmq.POLLIN):
                self._accept(self.sock.recv_multipart())
            self._check_heartbeat(now)
            return
        if now - self._last_contact > self.heartbeat_interval_s:
            self.supervise()
            self._send("heartbeat", lc.Heartbeat(state=lc.COMPONENT_STATE_INITIALIZED))
            self._hb_outstanding = now

    def _check_heartbeat(self, now: float) -> None:
        """ConnectionLost once a heartbeat has gone unanswered for peer_timeout, whatever
        was sent after it (docs/distributed.md: detection within heartbeat_interval +
        peer_timeout)."""
        sent = self._hb_outstanding
        if sent is not None and now - sent > self.peer_timeout_s:
            self.failed = True
            raise ConnectionLost(
                f"no heartbeat answer for {now - sent:.1f} s ({self._where()})",
                component=self.name,
                fix="check that the component is running and the network path is up",
            )

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        reply, _ = self._call("terminate", lc.Terminate(), timeout_s or self.setup_timeout_s)
        from moonpool.components.sdk.host import metrics_from_json

        return metrics_from_json(reply.terminated.metrics_json, self.name)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.link is not None:
                self.link.close()
            self.sock.close(0)
