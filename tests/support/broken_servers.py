"""Deliberately broken component servers, one per check of `moonpool conformance`
(orchestrator/conformance.py), for tests/integration/test_conformance.py.

Each is the SDK's real serve loop (a ROUTER socket serving `c_scaler_twin:Scaler`)
with one answer changed the way a faulty implementation would get it wrong: the
request is handled as usual, then :data:`BREAKS` [check] may rewrite (or drop) the
reply, knowing the request, the session before it and the reply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq
from c_scaler_twin import Scaler
from google.protobuf.message import DecodeError
from moonpool.components.sdk.serve import Server
from moonpool.v1 import lifecycle_pb2 as lc

CREATED, CONFIGURED, INITIALIZED = (lc.COMPONENT_STATE_CREATED, lc.COMPONENT_STATE_CONFIGURED,
                                    lc.COMPONENT_STATE_INITIALIZED)
E = lc  # error codes


@dataclass
class Seen:
    """What a break knows: the request (raw envelope and parsed, None if it does not
    parse), whether it came with a delimiter or attachments, from the bound peer, and
    the state before it."""

    raw: bytes
    req: lc.Request | None
    body: str | None
    delimiter: bool
    attachments: int
    bound: bool
    from_peer: bool
    state: int
    server: Server


Break = Callable[[Seen, lc.Reply], "lc.Reply | None"]


def _error(reply: lc.Reply, code: int) -> lc.Reply:
    reply.error.code = code
    return reply


def _is_error(reply: lc.Reply, code: int | None = None) -> bool:
    return reply.WhichOneof("body") == "error" and (code is None or reply.error.code == code)


def _when(pred: Callable[[Seen, lc.Reply], bool], change: Callable[[Seen, lc.Reply], Any]) -> Break:
    def brk(seen: Seen, reply: lc.Reply):
        if pred(seen, reply):
            out = change(seen, reply)
            return reply if out is None else (None if out is False else out)
        return reply
    return brk


def _set(**fields) -> Callable[[Seen, lc.Reply], lc.Reply]:
    def change(seen, reply):
        for k, v in fields.items():
            setattr(reply, k, v)
        return reply
    return change


def _to_body(body: str) -> Callable[[Seen, lc.Reply], lc.Reply]:
    def change(seen, reply):
        reply.ClearField("body")
        getattr(reply, body).SetInParent()
        return reply
    return change


def _code(code: int) -> Callable[[Seen, lc.Reply], lc.Reply]:
    return lambda seen, reply: _error(reply, code)


def _step_with(pred: Callable[[lc.PortValue], bool]) -> Callable[[Seen, lc.Reply], bool]:
    return lambda s, r: (s.body == "step" and any(pred(pv) for pv in s.req.step.inputs))


def _dup_output(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.description.outputs.append(reply.description.outputs[0])
    return reply


def _heartbeat_counter(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.heartbeat.counter = 0
    return reply


def _heartbeat_plus(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.heartbeat.counter += 100
    return reply


def _heartbeat_created(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.heartbeat.state = CREATED
    return reply


def _no_fix(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.error.fix = ""
    return reply


def _unsorted_metrics(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.terminated.metrics_json = '{"steps": 1, "fresh": 0}'
    return reply


def _time_off(seen: Seen, reply: lc.Reply) -> lc.Reply:
    reply.step_result.time_ns += 5
    return reply


BAD_UTF8 = b"\x08\x01\x10\x4d\x1a\x02\xff\xfe\x52\x00"

BREAKS: dict[str, Break] = {
    "describe": _when(lambda s, r: s.body == "describe", lambda s, r: False),
    "description-valid": _when(lambda s, r: r.WhichOneof("body") == "description", _dup_output),
    "garbage-envelope": _when(lambda s, r: s.raw == b"\xff\xff\xff", _code(E.ERROR_CODE_INTERNAL)),
    # A lenient decoder: the bytes taken as a string (U+FFFD), the Describe answered.
    "invalid-utf8": _when(lambda s, r: s.raw == BAD_UTF8,
                          lambda s, r: _to_body("description")(s, _set(request_id=77)(s, r))),
    "lone-empty-frame": _when(lambda s, r: s.raw == b"", _code(E.ERROR_CODE_MALFORMED)),
    "protocol-version-2": _when(lambda s, r: s.req is not None and s.req.protocol_version == 2,
                                _to_body("description")),
    "protocol-version-0": _when(lambda s, r: s.req is not None and s.req.protocol_version == 0
                                and s.raw, _set(request_id=0)),
    "no-body": _when(lambda s, r: s.req is not None and s.body is None and s.raw.endswith(
        bytes([s.req.request_id])) and s.req.protocol_version == 1, _set(request_id=0)),
    "unknown-body": _when(lambda s, r: s.raw.endswith(b"\xf2\x01\x00"),
                          _code(E.ERROR_CODE_INVALID_INPUT)),
    "delimiter": _when(lambda s, r: s.delimiter, lambda s, r: "drop-delimiter"),
    "heartbeat-unbound": _when(lambda s, r: s.body == "heartbeat" and not s.bound,
                               _heartbeat_counter),
    "initialize-unbound": _when(lambda s, r: s.body == "initialize" and not s.bound,
                                _code(E.ERROR_CODE_BUSY)),
    "step-unbound": _when(lambda s, r: s.body == "step" and not s.bound,
                          _code(E.ERROR_CODE_INVALID_INPUT)),
    "step_batch-unbound": _when(lambda s, r: s.body == "step_batch" and not s.bound,
                                _to_body("step_batch_result")),
    "terminate-unbound": _when(lambda s, r: s.body == "terminate" and not s.bound,
                               _to_body("terminated")),
    "configure-unknown-parameter": _when(
        lambda s, r: s.body == "configure" and _is_error(r, E.ERROR_CODE_INVALID_PARAMETER),
        _to_body("ack")),
    "busy-after-failed-configure": _when(
        lambda s, r: s.body == "initialize" and _is_error(r, E.ERROR_CODE_BUSY),
        _code(E.ERROR_CODE_INVALID_STATE)),
    "terminate-after-failed-configure": _when(
        lambda s, r: s.body == "terminate" and s.state == CREATED and s.bound,
        _to_body("error")),
    "configure-peer-timeout-refused": _when(
        lambda s, r: s.body == "configure" and s.req.configure.peer_timeout_ns < 0,
        _to_body("ack")),
    "new-session": _when(lambda s, r: s.body == "heartbeat", _heartbeat_plus),
    "configure": _when(lambda s, r: s.body == "configure" and r.WhichOneof("body") == "ack",
                       _code(E.ERROR_CODE_INVALID_PARAMETER)),
    "busy": _when(lambda s, r: s.body == "configure" and _is_error(r, E.ERROR_CODE_BUSY),
                  _to_body("ack")),
    "busy-names-no-instance": _when(lambda s, r: _is_error(r, E.ERROR_CODE_BUSY),
                                    lambda s, r: (setattr(r.error, "component", "conformance"),
                                                  r)[1]),
    "describe-other-peer": _when(lambda s, r: s.body == "describe" and s.bound
                                 and not s.from_peer, _to_body("error")),
    "heartbeat-other-peer": _when(lambda s, r: s.body == "heartbeat" and s.bound
                                  and not s.from_peer, _heartbeat_created),
    "configure-twice": _when(lambda s, r: s.body == "configure" and s.state == CONFIGURED,
                             _to_body("ack")),
    "step-before-initialize": _when(lambda s, r: s.body == "step" and s.state == CONFIGURED,
                                    _code(E.ERROR_CODE_STEP_FAILED)),
    "initialize": _when(lambda s, r: s.body == "initialize" and s.from_peer
                        and s.state == CONFIGURED, lambda s, r: _error(
                            _to_body("error")(s, r), E.ERROR_CODE_STEP_FAILED)),
    "input-unknown-port": _when(_step_with(lambda pv: pv.port == "conformance_no_such_port"
                                           and not pv.attachment), _to_body("step_result")),
    "input-wrong-type": _when(_step_with(lambda pv: pv.port == "in"
                                         and pv.type != "moonpool.v1.Signals"),
                              _code(E.ERROR_CODE_STEP_FAILED)),
    "input-undecodable": _when(_step_with(lambda pv: pv.payload == b"\xff\xff\xff"),
                               _code(E.ERROR_CODE_STEP_FAILED)),
    "input-dangling-attachment": _when(_step_with(lambda pv: pv.attachment == 1
                                                  and pv.port == "in"),
                                       _code(E.ERROR_CODE_MALFORMED)),
    "input-attachment-not-declared": _when(
        lambda s, r: s.attachments and _step_with(lambda pv: pv.port == "in"
                                                  and pv.attachment == 1)(s, r),
        _code(E.ERROR_CODE_STEP_FAILED)),
    "attachment-on-unknown-port": _when(lambda s, r: s.body == "step" and s.attachments,
                                        _code(E.ERROR_CODE_STEP_FAILED)),
    "step-dt-zero": _when(lambda s, r: s.body == "step" and s.req.step.step_ns == 0,
                          _code(E.ERROR_CODE_INVALID_INPUT)),
    "step": _when(lambda s, r: r.WhichOneof("body") == "step_result",
                  lambda s, r: _error(_to_body("error")(s, r), E.ERROR_CODE_STEP_FAILED)),
    "step-result": _when(lambda s, r: r.WhichOneof("body") == "step_result", _time_off),
    "time-going-back": _when(lambda s, r: s.body == "step" and s.state == INITIALIZED
                             and _is_error(r, E.ERROR_CODE_INVALID_STATE) and s.req.step.step_ns,
                             _to_body("step_result")),
    "step-batch": _when(lambda s, r: s.body == "step_batch" and s.bound,
                        _code(E.ERROR_CODE_INVALID_STATE)),
    "terminate": _when(lambda s, r: s.body == "terminate" and s.state == INITIALIZED,
                       lambda s, r: _error(_to_body("error")(s, r), E.ERROR_CODE_STEP_FAILED)),
    "metrics-json": _when(lambda s, r: r.WhichOneof("body") == "terminated"
                          and s.state == INITIALIZED, _unsorted_metrics),
    "peer-timeout": _when(lambda s, r: False, lambda s, r: None),  # see BrokenServer
    "errors-have-fix": _when(lambda s, r: _is_error(r), _no_fix),
    "replies-version-1": _when(lambda s, r: s.body == "heartbeat", _set(protocol_version=0)),
}


class _Capture:
    """Stands in for the ROUTER socket while the SDK handles one request."""

    def __init__(self) -> None:
        self.frames: list | None = None

    def send_multipart(self, frames, copy=True) -> None:
        self.frames = list(frames)


class BrokenServer(Server):
    """The SDK's serve loop serving the scaler twin, with one check broken."""

    def __init__(self, broken: str, endpoint: str, context: zmq.Context) -> None:
        super().__init__(Scaler, endpoint, context=context)
        self.broken = broken
        self.brk = BREAKS[broken]

    def _handle(self, frames: list[bytes]) -> None:
        identity, rest = frames[0], frames[1:]
        delimiter = len(rest) > 1 and len(rest[0]) == 0
        body_frames = rest[1:] if delimiter else rest
        raw = bytes(body_frames[0]) if body_frames else b""
        req: lc.Request | None = lc.Request()
        try:
            req.ParseFromString(raw)
        except DecodeError:
            req = None
        seen = Seen(raw, req, req.WhichOneof("body") if req is not None else None, delimiter,
                    len(body_frames) - 1, self.peer is not None, identity == self.peer,
                    self.host.state, self)
        real, capture = self.sock, _Capture()
        self.sock = capture  # type: ignore[assignment]
        try:
            super()._handle(frames)
        finally:
            self.sock = real
        if self.broken == "peer-timeout":
            self.peer_timeout_s = 0.0
        if capture.frames is None:
            return
        prefix = 2 if delimiter else 1  # identity (and delimiter)
        head, envelope, tail = capture.frames[:prefix], capture.frames[prefix], \
            capture.frames[prefix + 1:]
        reply = lc.Reply()
        reply.ParseFromString(bytes(envelope))
        out = self.brk(seen, reply)
        if out is None:
            return  # dropped: no answer
        if out == "drop-delimiter":
            head = head[:1]
        else:
            reply = out
        real.send_multipart([*head, reply.SerializeToString(), *tail])


class Serving:
    """A BrokenServer (or, with broken=None, the SDK's own) in a thread."""

    def __init__(self, broken: str | None, endpoint: str) -> None:
        self.ctx = zmq.Context()
        self.server = (BrokenServer(broken, endpoint, self.ctx) if broken
                       else Server(Scaler, endpoint, context=self.ctx))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.stop()
        self.thread.join(5)
        self.ctx.destroy(linger=0)
