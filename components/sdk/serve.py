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

import argparse
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import zmq

from moonpool.v1 import lifecycle_pb2 as lc

from . import wire
from .component import Component
from .errors import (
    ComponentError,
    EntryError,
    LifecycleError,
    PortError,
    DEFAULT_FIX,
    ProtocolError,
    error_to_wire,
    printable,
)
from .host import INITIALIZED, ComponentHost, Output
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
from .security import ServerSecurity, leaves_loopback

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
    ) -> None:
        """``max_message_bytes``: the largest frame accepted or sent (``ZMQ_MAXMSGSIZE``;
        a peer declaring a larger one is disconnected before anything is allocated)."""
        if (factory is None) == (components is None):
            raise ValueError("give either one factory or a dict of named components")
        # One component: key "" (requests need not name it). A group: by instance name.
        self.factories = components if components is not None else {"": factory}
        self.group = components is not None
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
        self.rejected = 0
        self._stopping = False
        self._time = (None, b"")  # the last Step time and its encoded field
        self._instance_fields = {key: string_field(K_ITEM, key) for key in self.factories}
        self._new_session()

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
            key: ComponentHost(f(), base_dir=self.base_dir) for key, f in self.factories.items()
        }
        self.peer: bytes | None = None
        self.peer_timeout_s = DEFAULT_PEER_TIMEOUT_S
        self.last_heard = time.monotonic()
        self.heartbeats = 0

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
                    self._handle(frames)
                elif self.peer is not None and self.peer_timeout_s > 0:
                    silent = time.monotonic() - self.last_heard
                    if silent > self.peer_timeout_s:
                        self._end_session(f"no word from the orchestrator for {silent:.1f} s")
        except _Stop:
            pass
        finally:
            self._terminate_all()
            self.sock.close(0)
            if self.security is not None:
                self.security.close()
        return 0

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
        reply = None  # the Reply message, or for Step and StepBatch the encoded envelope:
        envelope = None  # those are built by hand (components/sdk/wire.py, hot-path encoding)
        attachments: list[Any] = []
        end_session = False
        host = None
        try:
            if body == "step_batch":
                result = self._step_batch(req.step_batch, rest[1:], attachments)
                envelope = b"".join((request_head(req.request_id), K_STEP_BATCH_RESULT,
                                     varint(len(result)), result))
            else:
                host = self._host_for(req.instance)
                if body == "step":
                    result = self._step(host, req.step, rest[1:], attachments)
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
                        self.peer_timeout_s = req.configure.peer_timeout_ns * 1e-9
                    host.configure(req.configure)
                    reply.ack.SetInParent()
                elif body == "initialize":
                    given = req.initialize.inputs
                    outputs = host.initialize(
                        req.initialize.start_time_ns,
                        host.decode_inputs(given, []) if given else None)
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
        too_big = max((len(f) for f in (envelope, *attachments)), default=0)
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

    def _step(self, host: ComponentHost, s: lc.Step, frames_in: list,
              frames_out: list) -> bytes:
        """Step one host: its encoded StepResult (components/sdk/wire.py, hot-path encoding);
        attachments are appended to ``frames_out`` (numbered across the whole reply)."""
        if host.state != INITIALIZED:
            host.require(INITIALIZED, "step")
        inputs = host.decode_inputs(s.inputs, frames_in)
        t_ns = s.time_ns
        t0 = time.perf_counter_ns()
        if s.parameters:  # a scenario's tunable parameters (protocol.md §5)
            host.set_parameters([(p.name, wire.from_parameter_value(p.value))
                                 for p in s.parameters], t_ns)
        outputs = host.step(t_ns, s.step_ns, inputs)
        compute_ns = time.perf_counter_ns() - t0
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
        Returns the encoded StepBatchResult."""
        parts: list[bytes] = []
        names, hosts = self._instance_fields, self.hosts
        for item in batch.steps:
            instance = item.instance
            host = None
            try:
                host = hosts.get(instance) or self._host_for(instance)
                result = self._step(host, item.step, frames_in, frames_out)
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
        reply.error.CopyFrom(error_to_wire(exc, self.name))
        try:
            self.sock.send_multipart([*prefix, wire.serialize(reply)])
        except zmq.ZMQError:  # peer gone; nothing to answer
            pass


INSECURE_WARNING = """\
WARNING: INSECURE ENDPOINT {endpoint}
  It is reachable from other machines and is NOT authenticated or encrypted
  (--insecure): anyone who can reach it can read the stream and drive this component.
  Use --key SERVER.key_secret --allow ORCHESTRATOR.key instead (moonpool keys generate).
"""


def security_from_args(args: argparse.Namespace, endpoint: str) -> tuple[ServerSecurity | None, str]:
    """The server's CURVE setup from --key/--allow/--insecure, or (None, error text)."""
    if args.insecure and (args.key or args.allow):
        return None, "--insecure contradicts --key/--allow; give either keys or --insecure"
    if args.key and not args.allow:
        return None, ("--key needs --allow: the public key file(s) of the orchestrators that "
                      "may connect, or a folder of them (fix: --allow keys/orchestrator.key)")
    if args.allow and not args.key:
        return None, ("--allow needs --key, this server's secret key file "
                      "(fix: moonpool keys generate NAME, then --key NAME.key_secret)")
    if not args.key:
        if leaves_loopback(endpoint) and not args.insecure:
            return None, (f"{endpoint} is reachable from other machines and no keys are given: "
                          "refusing to serve it unauthenticated (fix: --key SERVER.key_secret "
                          "--allow ORCHESTRATOR.key, keys from `moonpool keys generate NAME`; "
                          "or bind tcp://127.0.0.1:PORT; or --insecure on a trusted network)")
        return None, ""
    from .errors import KeyFileError

    try:
        return ServerSecurity.from_files(
            args.key, args.allow,
            allow_insecure_permissions=args.allow_insecure_key_permissions), ""
    except KeyFileError as exc:
        return None, str(exc)


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """--key, --allow, --insecure (shared by `moonpool serve`)."""
    parser.add_argument("--key", metavar="SERVER_SECRET_FILE",
                        help="this server's secret key file (NAME.key_secret): CURVE "
                        "encryption and authentication; needs --allow")
    parser.add_argument("--allow", action="append", default=[], metavar="CLIENT_PUBLIC_FILE",
                        help="public key file (NAME.key) of an orchestrator allowed to connect, "
                        "or a folder of them (repeatable); every other key is refused")
    parser.add_argument("--insecure", action="store_true",
                        help="serve a non-loopback tcp endpoint without keys (trusted networks "
                        "only; warns loudly)")
    parser.add_argument("--allow-insecure-key-permissions", action="store_true",
                        help="accept a secret key file other users may read, and an --allow "
                        "folder they may write (warns); refused by default")


def add_max_message_argument(parser: argparse.ArgumentParser) -> None:
    """--max-message-bytes (shared by `moonpool serve`)."""

    def size(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if not 1024 <= n <= wire.MAX_MESSAGE_BYTES_LIMIT:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of bytes from 1024 to {wire.MAX_MESSAGE_BYTES_LIMIT}, "
                f"got {text!r}")
        return n

    parser.add_argument("--max-message-bytes", type=size,
                        default=wire.DEFAULT_MAX_MESSAGE_BYTES, metavar="BYTES",
                        help="the largest frame (request, reply or attachment) accepted or "
                        "sent; a peer declaring a larger one is disconnected before anything "
                        f"is allocated (default {wire.DEFAULT_MAX_MESSAGE_BYTES})")


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no orphans)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m moonpool.components.sdk.serve",
        description="Serve one component, or a group of them (--component), on a ZeroMQ endpoint.",
    )
    parser.add_argument("entry", nargs="?",
                        help="module:Class, file.py:Class or a registered short name")
    parser.add_argument("--component", action="append", default=[], metavar="NAME=ENTRY",
                        help="host a group: one component instance per flag (instead of ENTRY)")
    parser.add_argument("--bind", required=True, help="endpoint, e.g. ipc:///tmp/c.sock or tcp://*:5555")
    parser.add_argument("--once", action="store_true", help="exit after one session")
    parser.add_argument("--base-dir", default=None, help="folder for relative file.py entries and file-path parameters")
    parser.add_argument("--parent-pid", type=int, default=0, help="exit when this process dies")
    parser.add_argument("--log-level", default="INFO")
    add_max_message_argument(parser)
    add_security_arguments(parser)
    args = parser.parse_args(argv)
    if bool(args.entry) == bool(args.component):
        parser.error("give either ENTRY or one or more --component NAME=ENTRY")
    label = args.entry or "group:" + ",".join(c.split("=", 1)[0] for c in args.component)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper(), logging.INFO),
        format=f"[{label} %(levelname)s] %(message)s",
        stream=sys.stderr,
    )
    escape_log_lines()
    if args.parent_pid:
        _die_with_parent()
        if os.getppid() != args.parent_pid:  # parent died before prctl took effect
            return 1
    from .loading import load_entry

    try:
        if args.entry:
            cls, components = load_entry(args.entry, args.base_dir), None
        else:
            cls, components = None, {}
            for spec in args.component:
                name, sep, entry = spec.partition("=")
                if not sep or not name or not entry:
                    parser.error(f"--component expects NAME=ENTRY, got {spec!r}")
                components[name] = load_entry(entry, args.base_dir)
    except EntryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    security, problem = security_from_args(args, args.bind)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        server = Server(cls, args.bind, components=components, once=args.once,
                        base_dir=args.base_dir, security=security,
                        max_message_bytes=args.max_message_bytes)
    except zmq.ZMQError as exc:
        print(f"error: cannot bind {args.bind}: {exc} (fix: choose a free endpoint)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    if args.once:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if security is None and leaves_loopback(args.bind):
        print(INSECURE_WARNING.format(endpoint=args.bind), file=sys.stderr, flush=True)
    how = (f"CURVE, {len(security.allow.allowed)} allowed client key(s)" if security
           else "no authentication")
    print(f"serving {label} on {server.bound_endpoint} ({how})", file=sys.stderr, flush=True)
    return server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
