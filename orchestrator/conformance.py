"""`moonpool conformance ENDPOINT`: the protocol's edge cases, sent to a component.

Call order: :func:`run_suite` (connects DEALER probes to the endpoint, sends every
case, collects one :class:`Result` per check) → :func:`table` (the pass/fail table)
→ exit status 0 (all pass) or 1. ``cheap=True`` sends only the cases that need no
session (no Configure), so it works on any component without knowing its
parameters.

The endpoint must serve **several sessions** (``moonpool serve ENTRY --bind EP``, or
a foreign program that starts a new session after one ends): the suite ends
sessions on purpose (Terminate, peer silence). Each case is what docs/protocol.md
requires; its section is named in the expectation. Every check can fail; each is
demonstrated failing by a deliberately broken component in the tests
(tests/support/broken_servers.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import zmq
from google.protobuf.message import DecodeError

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2

CODE = {v: k.removeprefix("ERROR_CODE_") for k, v in lc.ErrorCode.items()}
STATE = {v: k.removeprefix("COMPONENT_STATE_") for k, v in lc.ComponentState.items()}
PERIOD_NS = 10_000_000


@dataclass(frozen=True)
class Result:
    """One check of the suite."""

    name: str
    """Short name of the case (``garbage-envelope``)."""
    expected: str
    """What protocol.md requires, with its section."""
    got: str
    """What the component answered."""
    ok: bool
    """The answer is the required one."""


class NoAnswer(Exception):
    """The component did not answer within the timeout."""


def _describe_reply(reply: lc.Reply | None) -> str:
    if reply is None:
        return "no answer"
    body = reply.WhichOneof("body")
    if body == "error":
        return f"Error {CODE.get(reply.error.code, reply.error.code)} (request_id {reply.request_id})"
    return f"{body} (request_id {reply.request_id})"


class Probe:
    """One orchestrator identity: a DEALER with an id ``moonpool-`` + 8 random bytes."""

    def __init__(self, ctx: zmq.Context, endpoint: str, timeout_s: float) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.linger = 0
        self.sock.setsockopt(zmq.ROUTING_ID, b"moonpool-" + os.urandom(8))
        # As the orchestrator's sockets: no frame above the protocol's limit is read
        # (a component under test cannot make the tester hold memory), and no send
        # waits for ever on a connection libzmq dropped.
        self.sock.setsockopt(zmq.MAXMSGSIZE, wire.DEFAULT_MAX_MESSAGE_BYTES)
        self.sock.setsockopt(zmq.SNDTIMEO, max(1, int(timeout_s * 1000)))
        self.sock.connect(endpoint)
        self.timeout_ms = int(timeout_s * 1000)
        self.next_id = 1
        self.errors: list[lc.Error] = []
        self.versions: list[int] = []

    def raw(self, frames: list[bytes]) -> list[bytes]:
        """Send frames, return the reply's frames (NoAnswer after the timeout)."""
        try:
            self.sock.send_multipart(frames)
        except zmq.Again as exc:  # libzmq holds no connection to the component
            raise NoAnswer from exc
        if not self.sock.poll(self.timeout_ms):
            raise NoAnswer
        return self.sock.recv_multipart()

    def parse(self, frames: list[bytes]) -> lc.Reply:
        reply = lc.Reply()
        try:
            reply.ParseFromString(frames[0])
        except DecodeError:
            reply = lc.Reply(request_id=2**64 - 1)  # an undecodable reply fails every check
            reply.error.code = 0
            return reply
        self.versions.append(reply.protocol_version)
        if reply.WhichOneof("body") == "error":
            self.errors.append(reply.error)
        return reply

    def request(self, body: str, payload: Any = None, *, version: int = 1, instance: str = "",
                attachments: tuple[bytes, ...] = ()) -> tuple[int, lc.Reply | None, list]:
        """A well-formed Request; (its id, the reply or None, the reply's frames)."""
        rid = self.next_id
        self.next_id += 1
        req = lc.Request(protocol_version=version, request_id=rid, instance=instance)
        getattr(req, body).CopyFrom(payload if payload is not None else getattr(lc, _TYPES[body])())
        try:
            frames = self.raw([req.SerializeToString(), *attachments])
        except NoAnswer:
            return rid, None, []
        return rid, self.parse(frames), frames

    def close(self) -> None:
        self.sock.close(0)


_TYPES = {"describe": "Describe", "configure": "Configure", "initialize": "Initialize",
          "step": "Step", "terminate": "Terminate", "heartbeat": "Heartbeat",
          "step_batch": "StepBatch"}


class Suite:
    """The cases, in order (see the module docstring)."""

    def __init__(self, endpoint: str, parameters: Mapping[str, Any], *, timeout_s: float,
                 peer_timeout_s: float, cheap: bool) -> None:
        self.endpoint = endpoint
        self.parameters = dict(parameters)
        self.timeout_s = timeout_s
        self.peer_timeout_s = peer_timeout_s
        self.cheap = cheap
        self.ctx = zmq.Context()
        self.results: list[Result] = []
        self.probes: list[Probe] = []
        self.description: lc.Description | None = None

    # -- helpers

    def probe(self) -> Probe:
        p = Probe(self.ctx, self.endpoint, self.timeout_s)
        self.probes.append(p)
        return p

    def check(self, name: str, expected: str, got: str, ok: bool) -> bool:
        self.results.append(Result(name, expected, got, ok))
        return ok

    def expect_error(self, name: str, code: int, where: str, reply: lc.Reply | None,
                     request_id: int | None) -> bool:
        """``reply`` is Error ``code`` with ``request_id`` (None: not checked)."""
        want = f"Error {CODE[code]}" + (f", request_id {request_id}" if request_id is not None
                                        else "") + f" ({where})"
        ok = (reply is not None and reply.WhichOneof("body") == "error"
              and reply.error.code == code
              and (request_id is None or reply.request_id == request_id))
        return self.check(name, want, _describe_reply(reply), ok)

    def expect_body(self, name: str, body: str, where: str, reply: lc.Reply | None,
                    request_id: int) -> bool:
        ok = (reply is not None and reply.WhichOneof("body") == body
              and reply.request_id == request_id)
        got = _describe_reply(reply)
        if reply is not None and reply.WhichOneof("body") == "error":
            got += f": {reply.error.message}"
        return self.check(name, f"{body}, request_id {request_id} ({where})", got, ok)

    def configure_msg(self, peer_timeout_ns: int = 0, extra: Mapping[str, Any] = {}) -> lc.Configure:
        msg = lc.Configure(instance_name="conformance", seed=1, period_ns=PERIOD_NS,
                           peer_timeout_ns=peer_timeout_ns)
        for name, value in {**self.parameters, **extra}.items():
            msg.parameters.add(name=name, value=wire.to_parameter_value(value))
        return msg

    def step_msg(self, t_ns: int, dt_ns: int = PERIOD_NS, inputs: tuple = ()) -> lc.Step:
        return lc.Step(time_ns=t_ns, step_ns=dt_ns, inputs=list(inputs))

    # -- the cases

    def run(self) -> list[Result]:
        try:
            self.stateless()
            if not self.cheap and self.description is not None:
                self.session()
                if self.peer_timeout_s > 0:
                    self.peer_timeout()
            self.aggregate()
        finally:
            for p in self.probes:
                p.close()
            self.ctx.destroy(linger=0)
        return self.results

    def stateless(self) -> None:
        p = self.probe()
        rid, reply, _ = p.request("describe")
        if not self.expect_body("describe", "description", "§4", reply, rid):
            return
        d = reply.description
        self.description = d
        problems = []
        for specs, direction in ((d.inputs, lc.PORT_DIRECTION_INPUT),
                                 (d.outputs, lc.PORT_DIRECTION_OUTPUT)):
            names = [s.name for s in specs]
            if len(set(names)) != len(names):
                problems.append(f"duplicate port names {names}")
            for s in specs:
                if not s.name or not s.type:
                    problems.append(f"port {s.name!r} without a name or type")
                if s.direction != direction:
                    problems.append(f"port {s.name!r} has direction {s.direction}")
        names = [s.name for s in d.parameters]
        if len(set(names)) != len(names):
            problems.append(f"duplicate parameter names {names}")
        for s in d.parameters:
            if s.required == s.HasField("default_value"):
                problems.append(f"parameter {s.name!r}: required={s.required} but default "
                                f"{'set' if s.HasField('default_value') else 'unset'}")
        if d.protocol_version != 1:
            problems.append(f"protocol_version {d.protocol_version}")
        self.check("description-valid", "unique named, typed ports in the right direction; "
                   "required iff no default; protocol_version 1 (§4)",
                   "; ".join(problems) or "valid", not problems)

        # Frames that do not decode: MALFORMED, request_id 0 (§9).
        try:
            reply = p.parse(p.raw([b"\xff\xff\xff"]))
        except NoAnswer:
            reply = None
        self.expect_error("garbage-envelope", lc.ERROR_CODE_MALFORMED, "§9", reply, 0)
        # version 1, request_id 77, instance = bytes ff fe (not UTF-8), describe {}
        bad_utf8 = b"\x08\x01\x10\x4d\x1a\x02\xff\xfe\x52\x00"
        try:
            reply = p.parse(p.raw([bad_utf8]))
        except NoAnswer:
            reply = None
        self.expect_error("invalid-utf8", lc.ERROR_CODE_MALFORMED, "a string that is not "
                          "UTF-8 does not decode, §8", reply, 0)
        try:
            frames = p.raw([b""])
            reply = p.parse(frames)
        except NoAnswer:
            reply, frames = None, []
        self.expect_error("lone-empty-frame", lc.ERROR_CODE_PROTOCOL_VERSION,
                          "the envelope, version 0, §2", reply, 0)
        for version in (2, 0):
            rid, reply, _ = p.request("describe", version=version)
            self.expect_error(f"protocol-version-{version}", lc.ERROR_CODE_PROTOCOL_VERSION,
                              "§3", reply, rid)
        rid = p.next_id
        p.next_id += 1
        for name, envelope in (
                ("no-body", b"\x08\x01" + b"\x10" + wire.varint(rid)),
                ("unknown-body", b"\x08\x01" + b"\x10" + wire.varint(rid + 1)
                 + b"\xf2\x01\x00")):  # field 30, length 0: skipped, so no body
            if name == "unknown-body":
                p.next_id += 1
            try:
                reply = p.parse(p.raw([envelope]))
            except NoAnswer:
                reply = None
            self.expect_error(name, lc.ERROR_CODE_MALFORMED, "no body, id echoed, §3", reply,
                              rid if name == "no-body" else rid + 1)
        # REQ-style delimiter (§2): the reply carries it too.
        req = lc.Request(protocol_version=1, request_id=p.next_id, describe=lc.Describe())
        p.next_id += 1
        try:
            frames = p.raw([b"", req.SerializeToString()])
            ok = len(frames) == 2 and frames[0] == b"" and \
                p.parse(frames[1:]).WhichOneof("body") == "description"
            got = f"{len(frames)} frames, first {frames[0][:8]!r}"
        except NoAnswer:
            ok, got = False, "no answer"
        self.check("delimiter", "[empty, Description] (§2)", got, ok)
        # Heartbeats before Configure (§4): state CREATED, counter counting.
        _, r1, _ = p.request("heartbeat")
        _, r2, _ = p.request("heartbeat")
        ok = (r1 is not None and r2 is not None and r1.WhichOneof("body") == "heartbeat"
              and r2.WhichOneof("body") == "heartbeat"
              and r1.heartbeat.state == lc.COMPONENT_STATE_CREATED
              and r2.heartbeat.counter == r1.heartbeat.counter + 1 >= 2)
        got = (f"state {STATE.get(r1.heartbeat.state)}, counters {r1.heartbeat.counter}, "
               f"{r2.heartbeat.counter}" if r1 is not None and r2 is not None
               and r1.WhichOneof("body") == r2.WhichOneof("body") == "heartbeat"
               else f"{_describe_reply(r1)}, {_describe_reply(r2)}")
        self.check("heartbeat-unbound", "state CREATED, counter +1 per heartbeat (§4)", got, ok)
        # Before a Configure bound the session (§5, §6).
        batch = lc.StepBatch(steps=[lc.InstanceStep(instance="", step=self.step_msg(0))])
        for body, payload in (("initialize", lc.Initialize()), ("step", self.step_msg(0)),
                              ("step_batch", batch), ("terminate", lc.Terminate())):
            rid, reply, _ = p.request(body, payload)
            self.expect_error(f"{body}-unbound", lc.ERROR_CODE_INVALID_STATE, "before "
                              "Configure, §5", reply, rid)

    def session(self) -> None:
        d = self.description
        assert d is not None
        missing = [s.name for s in d.parameters if s.required and s.name not in self.parameters]
        if missing:
            self.check("session", "Configure with the given parameters", "not run: required "
                       f"parameters not given: {', '.join(missing)} (--set NAME=VALUE)", False)
            return
        p, other = self.probe(), self.probe()
        # An unknown parameter: INVALID_PARAMETER; the session is bound even so (§6).
        rid, reply, _ = p.request("configure", self.configure_msg(
            extra={"conformance_no_such_parameter": 1}))
        self.expect_error("configure-unknown-parameter", lc.ERROR_CODE_INVALID_PARAMETER,
                          "§7", reply, rid)
        rid, reply, _ = other.request("initialize", lc.Initialize())
        self.expect_error("busy-after-failed-configure", lc.ERROR_CODE_BUSY,
                          "a failed Configure binds too, §6", reply, rid)
        rid, reply, _ = p.request("terminate")
        self.expect_body("terminate-after-failed-configure", "terminated", "§5", reply, rid)
        # A peer timeout that would never expire (negative): refused before it takes
        # effect (§4 Configure, §6); the session it bound ends with the Terminate.
        rid, reply, _ = p.request("configure", self.configure_msg(peer_timeout_ns=-1))
        self.expect_error("configure-peer-timeout-refused", lc.ERROR_CODE_INVALID_PARAMETER,
                          "a negative peer_timeout_ns, §4", reply, rid)
        p.request("terminate")
        # A fresh session.
        rid, reply, _ = p.request("heartbeat")
        ok = (reply is not None and reply.WhichOneof("body") == "heartbeat"
              and reply.heartbeat.state == lc.COMPONENT_STATE_CREATED
              and reply.heartbeat.counter == 1)
        self.check("new-session", "after Terminated: state CREATED, heartbeat counter 1 (§4, §6)",
                   f"state {STATE.get(reply.heartbeat.state)}, counter {reply.heartbeat.counter}"
                   if reply is not None and reply.WhichOneof("body") == "heartbeat"
                   else _describe_reply(reply), ok)
        rid, reply, _ = p.request("configure", self.configure_msg())
        if not self.expect_body("configure", "ack", "§4", reply, rid):
            return
        rid, reply, _ = other.request("configure", self.configure_msg())
        if self.expect_error("busy", lc.ERROR_CODE_BUSY, "another peer, §6", reply, rid):
            self.check("busy-names-no-instance", "Error.component of BUSY is not the bound "
                       "session's instance_name 'conformance' (§6)",
                       repr(reply.error.component), reply.error.component != "conformance")
        rid, reply, _ = other.request("describe")
        self.expect_body("describe-other-peer", "description", "answered to anyone, §6",
                         reply, rid)
        rid, reply, _ = other.request("heartbeat")
        ok = (reply is not None and reply.WhichOneof("body") == "heartbeat"
              and reply.heartbeat.state == lc.COMPONENT_STATE_CONFIGURED)
        self.check("heartbeat-other-peer", "Heartbeat with the bound session's state "
                   "CONFIGURED (§6)", f"state {STATE.get(reply.heartbeat.state)}"
                   if ok or (reply is not None and reply.WhichOneof("body") == "heartbeat")
                   else _describe_reply(reply), ok)
        rid, reply, _ = p.request("configure", self.configure_msg())
        self.expect_error("configure-twice", lc.ERROR_CODE_INVALID_STATE, "§5", reply, rid)
        rid, reply, _ = p.request("step", self.step_msg(0))
        self.expect_error("step-before-initialize", lc.ERROR_CODE_INVALID_STATE, "§5", reply,
                          rid)
        rid, reply, _ = p.request("initialize", lc.Initialize(start_time_ns=0))
        if not self.expect_body("initialize", "initialized", "§4", reply, rid):
            return
        self.bad_inputs(p)
        rid, reply, _ = p.request("step", self.step_msg(0, 0))
        self.expect_error("step-dt-zero", lc.ERROR_CODE_INVALID_STATE, "dt <= 0, §4", reply,
                          rid)
        rid, reply, _ = p.request("step", self.step_msg(0))
        if self.expect_body("step", "step_result", "§4", reply, rid):
            outs = {s.name: s.type for s in d.outputs}
            seen: list[str] = []
            problems = []
            if reply.step_result.time_ns != 0:
                problems.append(f"time_ns {reply.step_result.time_ns}, not 0")
            for pv in reply.step_result.outputs:
                if pv.port not in outs:
                    problems.append(f"undeclared output {pv.port!r}")
                elif pv.type != outs[pv.port]:
                    problems.append(f"{pv.port} typed {pv.type!r}, declared {outs[pv.port]!r}")
                if pv.port in seen:
                    problems.append(f"two values on {pv.port}")
                seen.append(pv.port)
            order = [n for n in outs if n in seen]
            if seen != order and not problems:
                problems.append(f"outputs in order {seen}, declared {list(outs)}")
            self.check("step-result", "time echoed; declared outputs, at most one each, in "
                       "declared order (§4)", "; ".join(problems) or "valid", not problems)
        rid, reply, _ = p.request("step", self.step_msg(0))
        self.expect_error("time-going-back", lc.ERROR_CODE_INVALID_STATE, "§4", reply, rid)
        batch = lc.StepBatch(steps=[lc.InstanceStep(instance="", step=self.step_msg(PERIOD_NS))])
        rid, reply, _ = p.request("step_batch", batch)
        ok = reply is not None and reply.request_id == rid and (
            (reply.WhichOneof("body") == "step_batch_result"
             and len(reply.step_batch_result.results) == 1)
            or (reply.WhichOneof("body") == "error"
                and reply.error.code == lc.ERROR_CODE_INVALID_INPUT))
        self.check("step-batch", "StepBatchResult with one result, or Error INVALID_INPUT "
                   "(one component, §4)", _describe_reply(reply), ok)
        rid, reply, _ = p.request("terminate")
        if self.expect_body("terminate", "terminated", "§4", reply, rid):
            text = reply.terminated.metrics_json
            ok, got = True, repr(text[:60]) if text else '""'
            if text:
                try:
                    value = json.loads(text)
                    ok = isinstance(value, dict) and list(value) == sorted(value)
                    if not ok:
                        got += " (not an object with sorted keys)"
                except ValueError:
                    ok, got = False, got + " (not JSON)"
            self.check("metrics-json", '"" or a JSON object, keys sorted (§4)', got, ok)

    def bad_inputs(self, p: Probe) -> None:
        """Bad Step inputs (§2, §8): INVALID_INPUT, state unchanged (a good step follows)."""
        d = self.description
        assert d is not None
        signals = signals_pb2.Signals().SerializeToString()
        first = d.inputs[0] if d.inputs else None
        cases = [("input-unknown-port", lc.PortValue(port="conformance_no_such_port",
                                                      type="moonpool.v1.Signals",
                                                      payload=signals), ())]
        if first is not None:
            wrong = "moonpool.v1.Header" if first.type != "moonpool.v1.Header" else \
                "moonpool.v1.Signals"
            cases += [
                ("input-wrong-type", lc.PortValue(port=first.name, type=wrong), ()),
                ("input-undecodable", lc.PortValue(port=first.name, type=first.type,
                                                   payload=b"\xff\xff\xff"), ()),
                ("input-dangling-attachment", lc.PortValue(port=first.name, type=first.type,
                                                           attachment=1), ()),
            ]
        plain = next((i for i in d.inputs if not i.attachment), None)
        if plain is not None:  # an attachment on a port that does not take them (§8)
            cases.append(("input-attachment-not-declared", lc.PortValue(
                port=plain.name, type=plain.type, attachment=1), (b"\x00" * 16,)))
        cases.append(("attachment-on-unknown-port", lc.PortValue(
            port="conformance_no_such_port", type="moonpool.v1.Signals", attachment=1),
            (b"\x00" * 16,)))
        for name, pv, frames in cases:
            rid, reply, _ = p.request("step", self.step_msg(0, inputs=(pv,)), attachments=frames)
            self.expect_error(name, lc.ERROR_CODE_INVALID_INPUT, "§8", reply, rid)

    def peer_timeout(self) -> None:
        """A silent bound peer loses the session after peer_timeout_ns (§6)."""
        if self.description is None:
            return
        p, other = self.probe(), self.probe()
        rid, reply, _ = p.request("configure", self.configure_msg(
            peer_timeout_ns=int(self.peer_timeout_s * 1e9)))
        if reply is None or reply.WhichOneof("body") != "ack":
            self.check("peer-timeout", "Configure acknowledged", _describe_reply(reply), False)
            return
        time.sleep(self.peer_timeout_s * 2 + 0.3)
        rid, reply, _ = other.request("configure", self.configure_msg())
        ok = self.expect_body("peer-timeout", "ack", f"a peer silent for "
                              f"{self.peer_timeout_s:g} s loses the session, §6; a new peer "
                              "binds", reply, rid)
        if ok:
            other.request("terminate")

    def aggregate(self) -> None:
        """Checks over every reply of the suite; with nothing to look at they fail (a
        component that never answered, or never with an Error, is not shown to comply)."""
        errors = [e for p in self.probes for e in p.errors]
        empty = [f"{CODE.get(e.code, e.code)}: {e.message[:50]}" for e in errors
                 if not e.fix.strip() or not e.message.strip()]
        self.check("errors-have-fix", "every Error has a message and a fix (§9)",
                   "; ".join(empty[:3]) or (f"all {len(errors)} Errors" if errors
                                             else "no Error reply to check"),
                   bool(errors) and not empty)
        replies = [v for p in self.probes for v in p.versions]
        versions = sorted({v for v in replies if v != 1})
        self.check("replies-version-1", "every Reply has protocol_version 1 (§3)",
                   f"versions {versions}" if versions else
                   (f"{len(replies)} replies, all 1" if replies else "no reply to check"),
                   bool(replies) and not versions)


def run_suite(endpoint: str, parameters: Mapping[str, Any] | None = None, *,
              timeout_s: float = 3.0, peer_timeout_s: float = 0.3,
              cheap: bool = False) -> list[Result]:
    """Every case against ``endpoint``; one Result per check, in order.
    ``peer_timeout_s = 0`` leaves the (slow) silent-peer case out."""
    return Suite(endpoint, parameters or {}, timeout_s=timeout_s,
                 peer_timeout_s=peer_timeout_s, cheap=cheap).run()


def table(results: list[Result], out: Callable[[str], None] = print) -> None:
    """The pass/fail table, then a count."""
    width = max((len(r.name) for r in results), default=5)
    for r in results:
        mark = "pass" if r.ok else "FAIL"
        line = f"{mark}  {r.name:<{width}}  {r.got}"
        if not r.ok:
            line += f"\n      {'':<{width}}  expected: {r.expected}"
        out(line)
    failed = sum(not r.ok for r in results)
    out(f"{len(results) - failed} of {len(results)} checks passed"
        + (f", {failed} failed" if failed else ""))
