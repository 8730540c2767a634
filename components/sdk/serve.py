"""The loop that serves one component on a ZeroMQ ROUTER socket.

Call order seen from the socket (docs/protocol.md is the full specification)::

    bind ROUTER at ENDPOINT
    loop:
        receive [identity, (empty delimiter,) envelope, attachment...]
        decode the Request; garbage -> Error(MALFORMED), logged, state unchanged
        Describe / Heartbeat        answered for anyone
        Configure                   binds the session to this peer; others get BUSY
        Initialize / Step           answered for the bound peer
        Terminate                   answered; then exit (--once) or start afresh
        nothing from the peer for peer_timeout -> terminate, then exit or start afresh

The same loop runs a component spawned by the orchestrator (``--once``: exit after
the session) and one hosted by ``moonpool serve`` on another machine (serves one
orchestrator after another). Run it as::

    python -m moonpool.components.sdk.serve ENTRY --bind ipc:///tmp/x.sock [--once]

With ``--key SERVER.key_secret --allow CLIENT.key...`` the socket is a CURVE server
whose ZAP handler admits only the allowed orchestrators' keys (components/sdk/security.py,
docs/distributed.md); a tcp:// endpoint that leaves the loopback is refused without
keys unless ``--insecure``.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import zmq

from moonpool.v1 import lifecycle_pb2 as lc

from . import wire
from .component import Component
from .confine import Confinement
from .errors import (
    ComponentError,
    LifecycleError,
    ParameterError,
    PortError,
    DEFAULT_FIX,
    StepFailed,
    ProtocolError,
    error_to_wire,
    printable,
)
from .host import INITIALIZED, ComponentHost, Output
from .localroutes import LocalRoute, LocalRouter
from .wire import (
    K_COMPUTE,
    K_FAILED,
    K_FINISHED,
    K_INSTANCE,
    K_ITEM,
    K_ITEM_BODY,
    K_OUTPUT,
    K_STEP,
    K_STEP_BATCH_RESULT,
    K_TIME,
    port_value,
    request_head,
    string_field,
    varint,
)
from .lograte import RateLimitedLog
from .scheduling import fifo_thread
from .security import ServerSecurity

log = logging.getLogger("moonpool.serve")

POLL_MS = 100
DEFAULT_PEER_TIMEOUT_S = 0.0


class _Stop(Exception):
    pass


class EscapingFilter(logging.Filter):
    """A handler filter that escapes newlines and control characters in each record's
    message (``errors.printable``): a peer-chosen instance name or error text cannot
    forge a log line or drive the operator's terminal. Tracebacks are left alone."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        escaped = printable(message)
        if escaped is not message:
            record.msg, record.args = escaped, None
        return True


def escape_log_lines() -> None:
    """Install ``EscapingFilter`` on every handler of the root logger (call after
    ``logging.basicConfig``)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, EscapingFilter) for f in handler.filters):
            handler.addFilter(EscapingFilter())


def output_values(outputs: list[Output]) -> tuple[list[lc.PortValue], list[Any]]:
    """Outputs -> PortValues and the attachment frames they refer to."""
    values, frames = [], []
    for out in outputs:
        pv = lc.PortValue(port=out.port, type=out.type_name, payload=out.payload)
        if out.attachment is not None:
            frames.append(out.attachment)
            pv.attachment = len(frames)
        values.append(pv)
    return values, frames


def _say(text: str) -> None:
    """A line for whoever watches ``moonpool serve`` (stderr, with the wall-clock time);
    control characters escaped (it may hold a peer-chosen instance name)."""
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {printable(text)}", file=sys.stderr,
          flush=True)


class Server:
    """Serves one component class, or several (a process group), on a bound ROUTER
    socket (see the module docstring)."""

    def __init__(
        self,
        factory: Callable[[], Component] | None,
        endpoint: str,
        *,
        components: dict[str, Callable[[], Component]] | None = None,
        once: bool = False,
        context: zmq.Context | None = None,
        socket_setup: Callable[[zmq.Socket], None] | None = None,
        base_dir: str | None = None,
        security: ServerSecurity | None = None,
        max_message_bytes: int = wire.DEFAULT_MAX_MESSAGE_BYTES,
        max_peer_timeout_ns: int = wire.DEFAULT_MAX_PEER_TIMEOUT_NS,
        cpu_budget_s: float = 0.0,
        confinement: Confinement | None = None,
        realtime_priority: int = 0,
        local_routes: Sequence[LocalRoute] = (),
    ) -> None:
        """``max_message_bytes``: the largest frame accepted or sent (``ZMQ_MAXMSGSIZE``;
        a peer declaring a larger one is disconnected before anything is allocated).
        ``max_peer_timeout_ns``: the longest peer timeout a Configure may ask for, and
        the one a session bound by a refused (or unset) one gets (protocol.md §6).
        ``cpu_budget_s``: the CPU time (of the serving thread) one session may use, its
        component's work included; past it the session's next request is refused and
        the session ended, so no peer holds the server for longer than the operator
        allows (0: no budget). ``realtime_priority`` 1-99: the serving thread becomes
        SCHED_FIFO of that priority at the first step (set-up, e.g. loading a scene, stays
        at normal priority). ``local_routes``: connections between the hosted components
        that this server delivers itself (a process group the orchestrator pipelines;
        localroutes.py)."""
        self.cpu_budget_s = cpu_budget_s
        self.confinement = confinement
        """Where the path parameters of the hosted components may point (``moonpool
        serve``; confine.py), or None: anywhere (components spawned from a local rig)."""
        if not 0 < max_peer_timeout_ns <= wire.MAX_PEER_TIMEOUT_LIMIT_NS:
            raise ValueError(f"max_peer_timeout_ns must be in (0, "
                             f"{wire.MAX_PEER_TIMEOUT_LIMIT_NS}], got {max_peer_timeout_ns}")
        self.max_peer_timeout_s = max_peer_timeout_ns * 1e-9
        self.realtime_priority = realtime_priority
        if (factory is None) == (components is None):
            raise ValueError("give either one factory or a dict of named components")
        # One component: key "" (requests need not name it). A group: by instance name.
        self.factories = components if components is not None else {"": factory}
        self.group = components is not None
        for r in local_routes:
            for member in (r.source, r.target):
                if member not in self.factories:
                    raise ValueError(f"local route {r.text()}: no hosted component '{member}'")
        self.local_routes = tuple(local_routes)
        self.base_dir = base_dir
        self.endpoint = endpoint
        self.once = once
        self.ctx = context or zmq.Context.instance()
        self.security = security
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self.max_message_bytes = max_message_bytes
        self.sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        try:
            if security is not None:
                # Before bind: no connection may be accepted without CURVE and ZAP.
                security.apply(self.sock)
            if socket_setup:
                socket_setup(self.sock)
            self.sock.bind(endpoint)
        except BaseException:
            self.sock.close(0)
            if security is not None:
                security.close()
            raise
        self.bound_endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        # libzmq closes a connection that declares a frame over ZMQ_MAXMSGSIZE without a
        # word: the socket monitor's "disconnected" events, read when idle, are what a
        # log line can say about it (rate-limited: a flood of connections is counted).
        self._monitor = self.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.closed_connections = RateLimitedLog(
            log, logging.INFO, "{n} more connection(s) closed in {s} s (not logged one by one)")
        self.rejected = 0
        self._stopping = False
        self._time = (None, b"")  # the last Step time and its encoded field
        self._instance_fields = {key: string_field(K_ITEM, key) for key in self.factories}
        self._new_session()
        # What this endpoint serves, as its operator named it: the name in an Error sent
        # to a peer that is not the bound one -- never the bound session's instance name,
        # which its peer chose (a squatter could otherwise make BUSY blame anyone).
        self.kind = ("group(" + ",".join(self.hosts) + ")" if self.group
                     else type(self.host.component).kind())

    # -- session ---------------------------------------------------------------

    @property
    def host(self) -> ComponentHost:
        """The hosted component (the first one of a group)."""
        return next(iter(self.hosts.values()))

    @property
    def name(self) -> str:
        if not self.group:
            return self.host.name
        return "group(" + ",".join(self.hosts) + ")"

    sessions = 0
    """Sessions begun so far (a Configure from a new peer starts one)."""
    session_t0 = 0.0

    def _new_session(self) -> None:
        self.hosts = {
            key: ComponentHost(f(), base_dir=self.base_dir, confinement=self.confinement)
            for key, f in self.factories.items()
        }
        self.router = LocalRouter(self.local_routes) if self.local_routes else None
        self.peer: bytes | None = None
        self.peer_timeout_s = DEFAULT_PEER_TIMEOUT_S
        self.last_heard = time.monotonic()
        self.heartbeats = 0
        self.session_cpu_s = 0.0

    def _end_session(self, why: str) -> None:
        log.info("%s: session ended (%s)", self.name, why)
        if self.peer is not None:
            _say(f"session {self.sessions} ended after "
                 f"{time.monotonic() - self.session_t0:.1f} s: {why}")
        self._terminate_all()
        if self.once:
            raise _Stop
        self._new_session()

    def _terminate_all(self) -> None:
        for host in self.hosts.values():
            if host.state != lc.COMPONENT_STATE_TERMINATED:
                try:
                    host.terminate()
                except ComponentError as exc:
                    log.warning("%s", exc)

    def _host_for(self, instance: str) -> ComponentHost:
        if not self.group:
            return self.host
        host = self.hosts.get(instance)
        if host is None:
            raise PortError(
                f"this process group hosts no component '{instance}'",
                component=self.name, fix=f"name one of {sorted(self.hosts)} in Request.instance",
            )
        return host

    # -- loop ------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping = True

    def serve_forever(self) -> int:
        sock = self.sock
        # A blocking receive with a timeout: one system call fewer per message than
        # poll-then-receive, which matters at thousands of steps per second.
        sock.setsockopt(zmq.RCVTIMEO, POLL_MS)
        try:
            while not self._stopping:
                try:
                    frames = sock.recv_multipart()
                except zmq.Again:
                    frames = None
                if frames is not None:
                    if self.cpu_budget_s:
                        t0 = time.thread_time()
                        self._handle(frames)
                        if frames[0] == self.peer:
                            self.session_cpu_s += time.thread_time() - t0
                    else:
                        self._handle(frames)
                elif self._monitor.poll(0):
                    self._log_closed_connections()
                elif self.peer is not None and self.peer_timeout_s > 0:
                    silent = time.monotonic() - self.last_heard
                    if silent > self.peer_timeout_s:
                        self._end_session(f"no word from the orchestrator for {silent:.1f} s")
        except _Stop:
            pass
        finally:
            self._terminate_all()
            try:
                self.sock.disable_monitor()
            except zmq.ZMQError:
                pass
            self._monitor.close(0)
            self.sock.close(0)
            if self.security is not None:
                self.security.close()
        return 0

    def _log_closed_connections(self) -> None:
        while self._monitor.poll(0):
            self._monitor.recv_multipart()
            self.closed_connections.log(
                "a connection closed: its peer ended it, the network dropped it, or it sent "
                "a frame larger than --max-message-bytes (%d bytes), which is dropped unread",
                self.max_message_bytes)

    def _handle(self, frames: list[bytes]) -> None:
        identity = frames[0]
        rest = frames[1:]
        prefix: list[bytes] = [identity]
        if len(rest) > 1 and len(rest[0]) == 0:  # REQ-style empty delimiter
            prefix.append(b"")
            rest = rest[1:]
        if not rest:
            self._reject(prefix, 0, ProtocolError(
                "message without an envelope frame",
                fix="send the serialized Request after the identity (and optional empty "
                    "delimiter) frame (docs/protocol.md §2)"))
            return
        try:
            req = wire.decode_envelope([rest[0]], lc.Request)
        except ProtocolError as exc:
            self._reject(prefix, 0, exc)
            return
        body = req.WhichOneof("body")
        if req.protocol_version != wire.PROTOCOL_VERSION:
            err = ProtocolError(
                f"protocol version {req.protocol_version} not supported (this component speaks "
                f"{wire.PROTOCOL_VERSION})",
                fix="use a moonpool orchestrator of the same protocol version",
            )
            err.code = lc.ERROR_CODE_PROTOCOL_VERSION
            self._reject(prefix, req.request_id, err)
            return
        if body is None:
            self._reject(prefix, req.request_id, ProtocolError(
                "request has no body (or only one this protocol version does not know)",
                fix="set exactly one body of Request (describe, configure, initialize, step, "
                    "terminate, heartbeat, step_batch; docs/protocol.md §3)"))
            return
        if body not in ("describe", "heartbeat"):
            if self.peer is None and body == "configure":
                self.peer = identity
                self.session_t0 = time.monotonic()
                self.sessions += 1
                # Bound from now on: the session expires after the longest allowed peer
                # timeout unless a valid Configure asks for a shorter one.
                self.peer_timeout_s = self.max_peer_timeout_s
                _say(f"session {self.sessions} started: "
                     f"{req.instance or req.configure.instance_name} configured by an "
                     f"orchestrator (seed {req.configure.seed})")
            elif self.peer != identity:
                err = ProtocolError(
                    "this component is serving another orchestrator" if self.peer
                    else f"{body} before configure",
                    fix="wait until that run ends, or start another `moonpool serve`"
                    if self.peer else "send configure first",
                )
                err.code = lc.ERROR_CODE_BUSY if self.peer else lc.ERROR_CODE_INVALID_STATE
                self._reject(prefix, req.request_id, err)
                return
        if identity == self.peer:
            self.last_heard = time.monotonic()
            if self.cpu_budget_s and self.session_cpu_s > self.cpu_budget_s and \
                    body not in ("describe", "heartbeat"):
                self._reject(prefix, req.request_id, StepFailed(
                    f"this session has used {self.session_cpu_s:.1f} s of this server's CPU, "
                    f"more than its budget of {self.cpu_budget_s:g} s; the session is ended",
                    fix="run shorter sessions, or ask the server's operator for a larger "
                        "--session-cpu-budget"))
                self._end_session("CPU budget used up")
                return
        reply = None  # the Reply message, or for Step and StepBatch the encoded envelope:
        envelope = None  # those are built by hand (components/sdk/wire.py, hot-path encoding)
        attachments: list[Any] = []
        end_session = False
        host = None
        if self.realtime_priority and body in ("step", "step_batch"):
            fifo_thread(self.realtime_priority)
            self.realtime_priority = 0  # once
        try:
            if body == "step_batch":
                result = self._step_batch(req.step_batch, rest[1:], attachments)
                envelope = b"".join((request_head(req.request_id), K_STEP_BATCH_RESULT,
                                     varint(len(result)), result))
            else:
                host = self._host_for(req.instance)
                if body == "step":
                    result = self._step(host, req.step, rest[1:], attachments, req.instance)
                    envelope = b"".join((request_head(req.request_id),
                                         string_field(K_INSTANCE, req.instance), K_STEP,
                                         varint(len(result)), result))
                else:
                    reply = lc.Reply(protocol_version=wire.PROTOCOL_VERSION,
                                     request_id=req.request_id, instance=req.instance)
                if body == "heartbeat":
                    self.heartbeats += 1
                    reply.heartbeat.state = host.state
                    reply.heartbeat.counter = self.heartbeats
                elif body == "describe":
                    reply.description.CopyFrom(host.describe())
                elif body == "configure":
                    # Before configure can fail: a failed session must still time out.
                    # Only a Configure the state allows counts: an out-of-order one is
                    # refused below and changes nothing (found by fuzzing).
                    if host.state == lc.COMPONENT_STATE_CREATED:
                        self.peer_timeout_s = self._peer_timeout(req.configure, host)
                    host.configure(req.configure)
                    reply.ack.SetInParent()
                elif body == "initialize":
                    start = req.initialize.start_time_ns
                    given: Any = req.initialize.inputs
                    local_frames: list[Any] = []
                    router = self.router
                    if (router is not None and router.targets(req.instance)
                            and getattr(host.component, "initial_inputs", False)):
                        # As the orchestrator's Initialize: the held inputs at t0 (a
                        # queued input's messages stay for the first step).
                        given = [*given, *router.inputs(
                            req.instance, host.queued_input_names, start, local_frames,
                            held_only=True)]
                    outputs = host.initialize(
                        start, host.decode_inputs(given, local_frames) if given else None)
                    if router is not None:
                        router.deliver(req.instance, outputs, start)
                    values, attachments = output_values(outputs)
                    reply.initialized.SetInParent()
                    reply.initialized.outputs.extend(values)
                elif body == "terminate":
                    metrics = host.terminate()
                    reply.terminated.metrics_json = wire.json_dumps(metrics) if metrics else ""
                    end_session = all(
                        h.state == lc.COMPONENT_STATE_TERMINATED for h in self.hosts.values()
                    )
        except ComponentError as exc:
            if not isinstance(exc, LifecycleError):
                log.error("%s", exc, exc_info=exc.__cause__ is not None)
            reply = lc.Reply(protocol_version=wire.PROTOCOL_VERSION, request_id=req.request_id,
                             instance=req.instance)
            reply.error.CopyFrom(error_to_wire(exc, host.name if host else self.name))
            attachments = []
            envelope = None
        except Exception as exc:  # noqa: BLE001 - a bug in this loop must still answer
            log.exception("internal error while serving %s", body)
            reply = lc.Reply(protocol_version=wire.PROTOCOL_VERSION, request_id=req.request_id,
                             instance=req.instance)
            reply.error.CopyFrom(error_to_wire(exc, host.name if host else self.name))
            reply.error.code = lc.ERROR_CODE_INTERNAL
            reply.error.fix = DEFAULT_FIX[lc.ERROR_CODE_INTERNAL]
            attachments = []
            envelope = None
        if envelope is None:
            envelope = wire.serialize(reply)
        too_big = (max(len(envelope), *(len(f) for f in attachments)) if attachments
                   else len(envelope))
        if too_big > self.max_message_bytes:
            # The orchestrator would drop the connection on it (its own ZMQ_MAXMSGSIZE).
            exc = ProtocolError(
                f"the reply to {body} has a frame of {too_big} bytes, more than "
                f"max_message_bytes ({self.max_message_bytes})",
                component=host.name if host else self.name,
                fix="raise run.max_message_bytes in the rig and --max-message-bytes of the "
                    "server, or make the output smaller (e.g. a smaller image)")
            log.error("%s", exc)
            reply = lc.Reply(protocol_version=wire.PROTOCOL_VERSION, request_id=req.request_id,
                             instance=req.instance)
            reply.error.CopyFrom(error_to_wire(exc, host.name if host else self.name))
            envelope, attachments = wire.serialize(reply), []
        frames_out = [*prefix, envelope, *attachments]
        # Zero-copy only pays for large frames (images); small ones are cheaper copied.
        self.sock.send_multipart(frames_out, copy=not attachments)
        if end_session:
            self._end_session("terminated")

    def _peer_timeout(self, configure: lc.Configure, host: ComponentHost) -> float:
        """The session's peer timeout, s, from a Configure: 0 (unset) is the server's
        limit; a negative value or one above the limit is refused (ParameterError,
        before anything takes effect: the session keeps the limit)."""
        ns = configure.peer_timeout_ns
        limit_ns = round(self.max_peer_timeout_s * 1e9)
        if ns == 0:
            return self.max_peer_timeout_s
        if not 0 < ns <= limit_ns:
            raise ParameterError(
                f"Configure.peer_timeout_ns is {ns} ns; it must be more than 0 and at most "
                f"this server's limit, {limit_ns} ns ({limit_ns * 1e-9:g} s)",
                component=host.name,
                fix="give run.peer_timeout a duration up to the limit (or start the server "
                    "with a larger --max-peer-timeout)")
        return ns * 1e-9

    def _step(self, host: ComponentHost, s: lc.Step, frames_in: list,
              frames_out: list, instance: str) -> bytes:
        """Step one host: its encoded StepResult (components/sdk/wire.py, hot-path encoding);
        attachments are appended to ``frames_out`` (numbered across the whole reply)."""
        if host.state != INITIALIZED:
            host.require(INITIALIZED, "step")
        t_ns = s.time_ns
        router = self.router
        if router is not None and router.targets(instance):
            frames_in = list(frames_in)  # (local attachments numbered after the request's)
            values = [*s.inputs, *router.inputs(instance, host.queued_input_names, t_ns,
                                                frames_in)]
            inputs = host.decode_inputs(values, frames_in)
        else:
            inputs = host.decode_inputs(s.inputs, frames_in)
        t0 = time.perf_counter_ns()
        if s.parameters:  # a scenario's tunable parameters (protocol.md §5)
            host.set_parameters([(p.name, wire.from_parameter_value(p.value))
                                 for p in s.parameters], t_ns)
        outputs = host.step(t_ns, s.step_ns, inputs)
        compute_ns = time.perf_counter_ns() - t0
        if router is not None:
            router.deliver(instance, outputs, t_ns + s.step_ns)  # visible at its end (Jacobi)
        if t_ns != self._time[0]:  # the members of a batch share it
            self._time = (t_ns, (K_TIME + varint(t_ns)) if t_ns else b"")
        parts = [self._time[1]]  # time_ns (1), outputs (2), compute_ns (3)
        prefixes = host.port_value_prefixes
        for out in outputs:
            if out.attachment is None:
                pv = port_value(prefixes[out.port], out.payload)
            else:
                frames_out.append(out.attachment)
                pv = port_value(prefixes[out.port], out.payload, len(frames_out))
            parts += (K_OUTPUT, varint(len(pv)), pv)
        if compute_ns:
            parts += (K_COMPUTE, varint(compute_ns))
        if host.component.finished:
            why = host.component.finished.encode()
            parts += (K_FINISHED, varint(len(why)), why)
            if host.component.finished_failed:
                parts += (K_FAILED, b"\x01")
        return b"".join(parts)

    def _step_batch(self, batch: lc.StepBatch, frames_in: list, frames_out: list) -> bytes:
        """Step every listed component in order; one failing does not stop the others.
        Returns the encoded StepBatchResult. A batch naming more steps than this
        endpoint hosts components, or a component twice, is refused before anything is
        stepped (INVALID_INPUT): a request cannot make the server step more often than
        it serves members."""
        parts: list[bytes] = []
        names, hosts = self._instance_fields, self.hosts
        items = batch.steps
        # (the count first: a long batch is refused before its names are read; each
        # name is read once, a new str per read)
        instances = [item.instance for item in items] if len(items) <= len(hosts) else []
        if len(items) > len(hosts) or (self.group and len(set(instances)) != len(items)):
            raise PortError(
                f"a StepBatch of {len(items)} steps"
                + (" names a component twice" if len(items) <= len(hosts) else
                   f" for an endpoint hosting {len(hosts)} component(s)"),
                component=self.name,
                fix="list each hosted component at most once per StepBatch "
                    "(docs/protocol.md §6a)")
        for item, instance in zip(items, instances):
            host = None
            try:
                host = hosts.get(instance) or self._host_for(instance)
                result = self._step(host, item.step, frames_in, frames_out, instance)
                name = names.get(instance) or string_field(K_ITEM, instance)
                entry = b"".join((name, K_ITEM_BODY, varint(len(result)), result))
            except ComponentError as exc:
                if not isinstance(exc, LifecycleError):
                    log.error("%s", exc, exc_info=exc.__cause__ is not None)
                error = error_to_wire(exc, host.name if host else instance)
                entry = wire.serialize(lc.InstanceStepResult(instance=instance, error=error))
            parts += (K_ITEM, varint(len(entry)), entry)
        return b"".join(parts)

    def _reject(self, prefix: list[bytes], request_id: int, exc: ComponentError) -> None:
        self.rejected += 1
        log.warning("%s: rejected a request: %s", self.name, exc)
        reply = lc.Reply(protocol_version=wire.PROTOCOL_VERSION, request_id=request_id)
        reply.error.CopyFrom(error_to_wire(exc, self.kind))
        try:
            self.sock.send_multipart([*prefix, wire.serialize(reply)])
        except zmq.ZMQError:  # peer gone; nothing to answer
            pass


def main(argv: list[str] | None = None) -> int:
    """``python -m moonpool.components.sdk.serve``: the command line (serve_cli.py)."""
    from .serve_cli import main as serve_main

    return serve_main(argv)


if __name__ == "__main__":
    sys.exit(main())
