"""docs/protocol.md is enough to write a component: ``RawDoubler`` below is written
from that page alone, with nothing but ``zmq`` and the generated ``moonpool.v1``
messages (no ``moonpool.components``).

- It runs as a ``run = "remote"`` component of a real rig beside an SDK component,
  and its recorded outputs are ``gain x input`` with the header source/seq the page
  prescribes; a second run gives the same digest, and so does the same rig with the
  raw component replaced by its SDK twin (``protocol_peers.Doubler``) in-process.
- A scripted conversation (garbage, wrong version, out-of-order calls, a second
  orchestrator, a REQ client, a peer timeout) gets the same answers from the raw
  component as from the SDK's serving loop.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from pathlib import Path

import pytest
import zmq
from google.protobuf.message import DecodeError
from zmq.utils import z85

from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, signals_pb2, vehicle_pb2

log = logging.getLogger("raw")

pytestmark = pytest.mark.slow

MS = 1_000_000
LIMIT_S = 300.0
"""The longest peer timeout the twin accepts, and a bound session's until Configure (§6)."""

# =====================================================================================
# The component, from docs/protocol.md only (no moonpool.components below this line
# until the tests).
# =====================================================================================

SIGNALS = "moonpool.v1.Signals"


class _Refuse(Exception):
    """An Error reply: code, message, fix."""

    def __init__(self, code: int, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.fix = code, message, fix


def read_certificate(path: str) -> tuple[bytes, bytes | None]:
    """(public, secret or None), Z85, from a ZeroMQ certificate file (§1a)."""
    keys: dict[str, bytes] = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        for name in ("public-key", "secret-key"):
            if line.startswith(name) and "=" in line:
                keys[name] = line.split("=", 1)[1].strip().strip('"').encode()
    return keys["public-key"], keys.get("secret-key")


class RawDoubler:
    """A ROUTER loop serving one "doubler": input ``in`` and output ``out``
    (moonpool.v1.Signals), parameter ``gain`` (double, default 2.0); out = gain * in.
    Serves one orchestrator after another (protocol.md §6), until ``stop()``."""

    KIND = "raw:Doubler"

    def __init__(self, endpoint: str = "tcp://127.0.0.1:*", curve: tuple[str, list[str]] | None = None
                 ) -> None:
        """``curve``: (its secret key file, the public key files it admits), §1a."""
        self.ctx = zmq.Context()
        self.zap: zmq.Socket | None = None
        self.admitted: set[bytes] = set()
        self.zap_refused = 0
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        if curve is not None:
            secret_file, admitted_files = curve
            # 1. The ZAP handler first, in the same context, at the fixed address.
            self.zap = self.ctx.socket(zmq.REP)
            self.zap.setsockopt(zmq.LINGER, 0)
            self.zap.bind("inproc://zeromq.zap.01")
            self.admitted = {z85.decode(read_certificate(f)[0]) for f in admitted_files}
            # 2. The ROUTER a CURVE server that fails closed.
            self.sock.setsockopt(zmq.CURVE_SERVER, 1)
            self.sock.setsockopt(zmq.CURVE_SECRETKEY, read_certificate(secret_file)[1])
            self.sock.setsockopt(zmq.ZAP_DOMAIN, b"moonpool")
            self.sock.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)
        self.sock.bind(endpoint)
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.rejected = 0
        self.sessions_ended = 0
        self._stop = threading.Event()
        self._new_session()

    # -- session (§6) --------------------------------------------------------------

    def _new_session(self) -> None:
        self.state = lc.COMPONENT_STATE_CREATED
        self.peer: bytes | None = None
        self.peer_timeout_s = LIMIT_S
        self.last_heard = time.monotonic()
        self.heartbeats = 0
        self.name = self.KIND
        self.gain = 2.0
        self.seq = {"out": 0}
        self.last_end: int | None = None
        self.outputs_made = 0

    def _end_session(self) -> None:
        self.sessions_ended += 1
        self._new_session()

    def stop(self) -> None:
        self._stop.set()

    def serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        if self.zap is not None:
            poller.register(self.zap, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                ready = dict(poller.poll(50))
                if self.zap is not None and self.zap in ready:
                    self._authenticate(self.zap.recv_multipart())
                if self.sock in ready:
                    self._handle(self.sock.recv_multipart())
                elif ready:
                    continue
                elif (
                    self.peer is not None
                    and time.monotonic() - self.last_heard > self.peer_timeout_s
                ):
                    log.info("%s: no word from the orchestrator; session ended", self.name)
                    self._end_session()
        finally:
            self.sock.close(0)
            if self.zap is not None:
                self.zap.close(0)
            self.ctx.term()

    def _authenticate(self, request: list[bytes]) -> None:
        """One ZAP request (§1a): admit exactly the listed client keys."""
        version, request_id, _domain, _address, _identity, mechanism, *creds = request
        ok = (version == b"1.0" and mechanism == b"CURVE" and len(creds) == 1
              and creds[0] in self.admitted)
        if not ok:
            self.zap_refused += 1
        self.zap.send_multipart([b"1.0", request_id, b"200" if ok else b"400",
                                 b"OK" if ok else b"Unknown key", b"", b""])

    # -- one request (§2, §3) --------------------------------------------------------

    def _handle(self, frames: list[bytes]) -> None:
        identity, rest = frames[0], frames[1:]
        prefix = [identity]
        if len(rest) > 1 and rest[0] == b"":  # REQ-style empty delimiter: echo it
            prefix.append(b"")
            rest = rest[1:]
        req = lc.Request()
        try:
            if not rest:
                raise DecodeError("no envelope frame")
            req.ParseFromString(rest[0])
        except (DecodeError, ValueError, RuntimeError) as exc:
            self._malformed(prefix, 0, f"frame 0 is not a moonpool.v1.Request: {exc}")
            return
        attachments = rest[1:]
        reply = lc.Reply(protocol_version=1, request_id=req.request_id)
        body = req.WhichOneof("body")
        if req.protocol_version != 1:
            self._error(reply, lc.ERROR_CODE_PROTOCOL_VERSION,
                        f"protocol version {req.protocol_version} not supported (this is 1)",
                        "use an orchestrator speaking protocol version 1")
            self._send(prefix, reply)
            return
        if body is None:
            self._malformed(prefix, req.request_id, "request has no body")
            return
        if body not in ("describe", "heartbeat"):
            if self.peer is None and body == "configure":
                self.peer = identity
                self.peer_timeout_s = LIMIT_S  # §6: bound, so it expires, whatever follows
            elif self.peer != identity:
                if self.peer is None:
                    self._error(reply, lc.ERROR_CODE_INVALID_STATE, f"{body} before configure",
                                "send configure first")
                else:
                    self._error(reply, lc.ERROR_CODE_BUSY,
                                "this component is serving another orchestrator",
                                "wait until that run ends")
                reply.error.component = self.KIND  # §6: never the bound instance's name
                self._send(prefix, reply)
                return
        if identity == self.peer:
            self.last_heard = time.monotonic()
        out_frames: list[bytes] = []
        end_session = False
        try:
            if body == "describe":
                reply.description.CopyFrom(self.description())
            elif body == "heartbeat":
                self.heartbeats += 1
                reply.heartbeat.state = self.state
                reply.heartbeat.counter = self.heartbeats
            elif body == "configure":
                self._require(lc.COMPONENT_STATE_CREATED, body)
                ns = req.configure.peer_timeout_ns  # §4 Configure: 0 = the limit
                if not 0 <= ns <= LIMIT_S * 1e9:
                    raise _Refuse(lc.ERROR_CODE_INVALID_PARAMETER,
                                  f"peer_timeout_ns {ns} is not in (0, {LIMIT_S:g} s]",
                                  "give a peer timeout up to the limit")
                self.peer_timeout_s = ns * 1e-9 if ns else LIMIT_S
                self.gain = self._parameters(req.configure)
                self.name = req.configure.instance_name or self.KIND
                self.state = lc.COMPONENT_STATE_CONFIGURED
                reply.ack.SetInParent()
            elif body == "initialize":
                self._require(lc.COMPONENT_STATE_CONFIGURED, body)
                self.last_end = req.initialize.start_time_ns
                self.state = lc.COMPONENT_STATE_INITIALIZED
                reply.initialized.SetInParent()  # no initial outputs
            elif body == "step":
                self._step(req.step, attachments, reply)
            elif body == "terminate":
                metrics = ""
                if self.state == lc.COMPONENT_STATE_INITIALIZED:  # §5: no run, no metrics
                    metrics = json.dumps({"outputs": self.outputs_made}, sort_keys=True)
                self.state = lc.COMPONENT_STATE_TERMINATED
                reply.terminated.metrics_json = metrics
                end_session = True
        except _Refuse as exc:
            reply = lc.Reply(protocol_version=1, request_id=req.request_id)
            self._error(reply, exc.code, exc.message, exc.fix)
            out_frames = []
        self._send(prefix, reply, out_frames)
        if end_session:
            self._end_session()

    def description(self) -> lc.Description:
        d = lc.Description(kind=self.KIND, description="out = gain * in", protocol_version=1)
        d.inputs.add(name="in", direction=lc.PORT_DIRECTION_INPUT, type=SIGNALS,
                     description="values to scale")
        d.outputs.add(name="out", direction=lc.PORT_DIRECTION_OUTPUT, type=SIGNALS,
                      description="scaled values")
        p = d.parameters.add(name="gain", type=lc.PARAMETER_TYPE_DOUBLE, description="factor")
        p.default_value.double_value = 2.0
        return d

    def _require(self, state: int, call: str) -> None:
        if self.state != state:
            name = lc.ComponentState.Name(self.state)
            raise _Refuse(lc.ERROR_CODE_INVALID_STATE, f"{call} called in state {name}",
                          "follow describe -> configure -> initialize -> step* -> terminate")

    def _parameters(self, cfg: lc.Configure) -> float:
        """§7: DOUBLE accepts double_value (not NaN) and int_value; all problems at once."""
        gain, problems = 2.0, []
        for p in cfg.parameters:
            if p.name != "gain":
                problems.append(f"unknown parameter '{p.name}'")
                continue
            kind = p.value.WhichOneof("kind")
            if kind == "int_value":
                gain = float(p.value.int_value)
            elif kind == "double_value" and not math.isnan(p.value.double_value):
                gain = p.value.double_value
            else:
                problems.append(f"parameter 'gain' expects a number, got {kind}")
        if problems:
            raise _Refuse(lc.ERROR_CODE_INVALID_PARAMETER, "; ".join(problems),
                          "fix [parameters] in the rig (known parameters: gain)")
        return gain

    def _step(self, step: lc.Step, attachments: list[bytes], reply: lc.Reply) -> None:
        self._require(lc.COMPONENT_STATE_INITIALIZED, "step")
        t, dt = step.time_ns, step.step_ns
        latest = None
        for pv in step.inputs:  # §8: decode everything before touching the state
            if pv.port != "in":
                raise _Refuse(lc.ERROR_CODE_INVALID_INPUT, f"input for unknown port '{pv.port}'",
                              "inputs are ['in']")
            if pv.type != SIGNALS:
                raise _Refuse(lc.ERROR_CODE_INVALID_INPUT, f"input 'in' expects {SIGNALS}, "
                              f"got {pv.type}", "connect an output of the same type")
            if pv.attachment > len(attachments):
                raise _Refuse(lc.ERROR_CODE_INVALID_INPUT,
                              f"input 'in' refers to attachment frame {pv.attachment}")
            msg = signals_pb2.Signals()
            try:
                msg.ParseFromString(pv.payload)
            except (DecodeError, ValueError, RuntimeError) as exc:
                raise _Refuse(lc.ERROR_CODE_INVALID_INPUT, f"payload is not a {SIGNALS}: {exc}")
            latest = msg
        if dt <= 0:
            raise _Refuse(lc.ERROR_CODE_INVALID_STATE, f"step size must be positive, got {dt} ns")
        if self.last_end is not None and t < self.last_end:
            raise _Refuse(lc.ERROR_CODE_INVALID_STATE, f"step at {t} ns goes back in time")
        t0 = time.perf_counter_ns()
        r = reply.step_result
        r.time_ns = t
        if latest is not None:
            out = signals_pb2.Signals()
            out.header.sim_time_ns = t  # the content: the input as seen at t
            for s in latest.signals:
                out.signals.add(name=s.name, value=self.gain * s.value)
            self.outputs_made += 1
            r.outputs.append(self._stamp("out", out))
        r.compute_ns = time.perf_counter_ns() - t0
        self.last_end = t + dt

    def _stamp(self, port: str, msg: signals_pb2.Signals) -> lc.PortValue:
        """§8 header stamping: source = instance name, seq = per-port counter from 0."""
        msg.header.source = self.name
        msg.header.seq = self.seq[port]
        self.seq[port] += 1
        return lc.PortValue(port=port, type=SIGNALS,
                            payload=msg.SerializeToString(deterministic=True))

    # -- answers ------------------------------------------------------------------

    def _error(self, reply: lc.Reply, code: int, message: str, fix: str = "") -> None:
        reply.error.code = code
        reply.error.component = self.name
        reply.error.message = message
        reply.error.fix = fix

    def _malformed(self, prefix: list[bytes], request_id: int, why: str) -> None:
        """§9: answer MALFORMED, log, count; state and session unchanged."""
        self.rejected += 1
        log.warning("%s: rejected a request: %s", self.name, why)
        reply = lc.Reply(protocol_version=1, request_id=request_id)
        self._error(reply, lc.ERROR_CODE_MALFORMED, why, "send a serialized moonpool.v1.Request")
        self._send(prefix, reply)

    def _send(self, prefix: list[bytes], reply: lc.Reply, frames: list[bytes] = ()) -> None:
        try:
            self.sock.send_multipart([*prefix, reply.SerializeToString(deterministic=True), *frames])
        except zmq.ZMQError:  # the peer is gone
            pass


# =====================================================================================
# Tests
# =====================================================================================


@pytest.fixture
def raw():
    server = RawDoubler()
    thread = threading.Thread(target=server.serve, name="raw-doubler", daemon=True)
    thread.start()
    yield server
    server.stop()
    thread.join(5)
    assert not thread.is_alive()


RIG = """
name = "protocol-doc"
[run]
until = "0.5s"
seed = 4
algorithm = "{algorithm}"
plots = false
heartbeat_interval = "100ms"
peer_timeout = "5s"

[components.src]
entry = "protocol_peers:Counter"
rate_hz = 100

[components.raw]
{raw}
rate_hz = 100
[components.raw.parameters]
gain = 3

[[connections]]
from = "src.out"
to = "raw.in"
"""

REMOTE = 'run = "remote"\nendpoint = "{endpoint}"'
TWIN = 'entry = "protocol_peers:Doubler"'


def _run(tmp_path: Path, name: str, algorithm: str, raw_table: str):
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig_file = tmp_path / f"{name}.toml"
    rig_file.write_text(RIG.format(algorithm=algorithm, raw=raw_table))
    rig = load_and_check(rig_file)
    result = run_rig(rig, tmp_path / name)
    assert result.summary["status"] == "ok", result.summary["error"]
    return result


def _messages(out_dir: Path, topic: str) -> list[tuple[int, signals_pb2.Signals]]:
    from moonpool.orchestrator.recording import read_recording

    return [
        (m.log_time_ns, signals_pb2.Signals.FromString(m.payload))
        for m in read_recording(out_dir / "recording.mcap")
        if m.topic == topic
    ]


@pytest.mark.parametrize("algorithm", ["jacobi", "gauss-seidel"])
def test_raw_component_in_a_rig(tmp_path, raw, algorithm):
    remote = REMOTE.format(endpoint=raw.endpoint)
    assert raw.endpoint.startswith("tcp://127.0.0.1:")
    first = _run(tmp_path, "first", algorithm, remote)
    s = first.summary
    assert s["components"]["raw"]["steps"] == 50
    assert s["components"]["raw"]["placement"] == "remote"
    assert s["metrics"]["raw"] == {"outputs": 50}
    assert "rejected_frames" not in s["components"]["raw"]

    src = _messages(first.out_dir, "/src/out")
    out = _messages(first.out_dir, "/raw/out")
    assert len(src) == 51 and len(out) == 50  # src: the initial value + one per step
    for j, (log_time, msg) in enumerate(out):
        t = j * 10 * MS
        assert msg.header.source == "raw"
        assert msg.header.seq == j
        assert msg.header.sim_time_ns == t
        # Jacobi: at t the raw component sees what src published at the end of its
        # previous step (visible at t); Gauss-Seidel (src first): src's step at t.
        seen = src[j][1] if algorithm == "jacobi" else src[j + 1][1]
        assert [(x.name, x.value) for x in msg.signals] == [
            (x.name, 3 * x.value) for x in seen.signals
        ]
        assert log_time == (t + 10 * MS if algorithm == "jacobi" else t)
    assert [m.header.seq for _, m in src] == list(range(51))
    assert all(m.header.source == "src" for _, m in src)

    # Same rig again: same stream (and a fresh session on the raw side: seq from 0).
    second = _run(tmp_path, "second", algorithm, remote)
    assert second.summary["digest"] == s["digest"]
    assert raw.sessions_ended == 2
    # The SDK twin, in-process, produces the same stream byte for byte.
    twin = _run(tmp_path, "twin", algorithm, TWIN)
    assert twin.summary["digest"] == s["digest"]
    assert twin.summary["metrics"]["raw"] == {"outputs": 50}


def test_raw_component_with_curve(tmp_path):
    """§1a alone: the raw component's CURVE server and ZAP handler admit the orchestrator
    whose key it was given (same stream as without CURVE) and refuse another one."""
    from moonpool.components.sdk.security import generate_keys

    for name in ("raw", "orchestrator", "intruder"):
        generate_keys(name, tmp_path / "keys")
    k = tmp_path / "keys"
    server = RawDoubler(curve=(str(k / "raw.key_secret"), [str(k / "orchestrator.key")]))
    thread = threading.Thread(target=server.serve, name="raw-curve", daemon=True)
    thread.start()
    try:
        remote = REMOTE.format(endpoint=server.endpoint)
        keys = f'server_key = "{k}/raw.key"\nclient_key = "{k}/{{who}}.key_secret"'
        secure = _run(tmp_path, "secure", "jacobi", remote + "\n" + keys.format(who="orchestrator"))
        plain = _run(tmp_path, "twin", "jacobi", TWIN)
        assert secure.summary["digest"] == plain.summary["digest"]
        assert server.zap_refused == 0 and server.sessions_ended == 1

        from moonpool.orchestrator.rigfile import load_and_check
        from moonpool.orchestrator.run import run_rig

        rig_file = tmp_path / "intruder.toml"
        rig_file.write_text(RIG.format(algorithm="jacobi",
                                       raw=remote + "\n" + keys.format(who="intruder")))
        refused = run_rig(load_and_check(rig_file), tmp_path / "intruder").summary
        assert refused["status"] == "failed" and refused["failed_component"] == "raw"
        assert "refused this orchestrator's key" in refused["error"]
        assert server.zap_refused >= 1 and server.sessions_ended == 1
    finally:
        server.stop()
        thread.join(5)


# -- the same conversation with the raw component and with the SDK's serving loop --


def _request(rid: int, version: int = 1, **body) -> bytes:
    req = lc.Request(protocol_version=version, request_id=rid)
    for name, msg in body.items():
        getattr(req, name).CopyFrom(msg)
    return req.SerializeToString()


def _signals(k: float, seq: int) -> bytes:
    msg = signals_pb2.Signals(header=common_pb2.Header(sim_time_ns=seq * 10 * MS, source="src",
                                                       seq=seq))
    msg.signals.add(name="k", value=k)
    msg.signals.add(name="half", value=k / 2)
    return msg.SerializeToString(deterministic=True)


def _step(t: int, dt: int = 10 * MS, *inputs: lc.PortValue) -> lc.Step:
    return lc.Step(time_ns=t, step_ns=dt, inputs=list(inputs))


def _configure(peer_timeout_ns: int = 0, **params) -> lc.Configure:
    cfg = lc.Configure(instance_name="dbl", seed=1, period_ns=10 * MS,
                       peer_timeout_ns=peer_timeout_ns)
    for name, value in params.items():
        cfg.parameters.add(name=name, value=value)
    return cfg


def _summary(frames: list[bytes]) -> tuple:
    """What must agree between implementations: kind of answer, code, id, content."""
    reply = lc.Reply.FromString(frames[0])
    body = reply.WhichOneof("body")
    extra: object = None
    if body == "error":
        extra = reply.error.code
        assert reply.error.message and reply.error.component
    elif body == "heartbeat":
        extra = (reply.heartbeat.state, reply.heartbeat.counter)
    elif body == "description":
        d = reply.description
        extra = (
            [(p.name, p.direction, p.type, p.queued) for p in (*d.inputs, *d.outputs)],
            [(p.name, p.type, p.default_value.SerializeToString(), p.required)
             for p in d.parameters],
            d.protocol_version,
        )
    elif body == "step_result":
        r = reply.step_result
        extra = (r.time_ns, [(o.port, o.type, o.payload, o.attachment) for o in r.outputs])
    elif body == "initialized":
        extra = list(reply.initialized.outputs)
    elif body == "terminated":
        extra = reply.terminated.metrics_json
    assert reply.protocol_version == 1
    return body, reply.request_id, extra, len(frames)


def _conversation(endpoint: str) -> list[tuple]:
    ctx = zmq.Context()
    a, b = ctx.socket(zmq.DEALER), ctx.socket(zmq.DEALER)
    c = ctx.socket(zmq.REQ)
    for s in (a, b, c):
        s.setsockopt(zmq.LINGER, 0)
        s.connect(endpoint)
    log_ = []

    def call(sock, *frames: bytes):
        sock.send_multipart(list(frames))
        assert sock.poll(5000), f"no answer to {frames!r}"
        reply = sock.recv_multipart()
        if sock.type == zmq.DEALER and frames[0] == b"":  # we sent a delimiter
            assert reply[0] == b"", "the delimiter must be echoed"
            reply = reply[1:]
        log_.append(_summary(reply))

    sig = lambda k, seq: lc.PortValue(port="in", type=SIGNALS, payload=_signals(k, seq))  # noqa: E731
    dbl = lambda v: lc.ParameterValue(double_value=v)  # noqa: E731
    try:
        call(a, b"\xff\xff\xff")                                   # garbage
        call(a, _request(100, version=2, describe=lc.Describe()))  # another version
        call(a, _request(101))                                     # no body
        call(a, _request(1, step=_step(0)))                        # before configure
        call(a, _request(2, describe=lc.Describe()))
        call(a, _request(3, configure=_configure(
            gain=lc.ParameterValue(string_value="x"), gian=dbl(1.0))))  # binds a; refused
        call(b, _request(1, configure=_configure()))               # busy
        call(b, _request(2, describe=lc.Describe()))               # describe: anyone
        call(b, _request(3, heartbeat=lc.Heartbeat()))             # heartbeat: anyone
        call(a, _request(4, initialize=lc.Initialize()))           # not configured
        call(a, _request(5, configure=_configure(gain=lc.ParameterValue(int_value=3))))
        call(a, _request(6, configure=_configure()))               # twice
        call(a, _request(7, step=_step(0)))                        # not initialized
        call(a, _request(8, initialize=lc.Initialize(start_time_ns=0)))
        call(a, _request(9, heartbeat=lc.Heartbeat()))
        call(a, _request(10, step=_step(0, 10 * MS, sig(1.0, 0))))
        call(a, _request(11, step=_step(10 * MS, 0)))               # dt = 0
        call(a, _request(12, step=_step(5 * MS)))                   # back in time
        call(a, _request(13, step=_step(10 * MS, 10 * MS, lc.PortValue(port="nope", type=SIGNALS))))
        wrench = vehicle_pb2.Wrench().SerializeToString()
        call(a, _request(14, step=_step(10 * MS, 10 * MS,
                                        lc.PortValue(port="in", type="moonpool.v1.Wrench",
                                                     payload=wrench))))
        call(a, _request(15, step=_step(10 * MS, 10 * MS,
                                        lc.PortValue(port="in", type=SIGNALS, payload=b"\xff"))))
        call(a, _request(16, step=_step(10 * MS, 10 * MS,
                                        lc.PortValue(port="in", type=SIGNALS,
                                                     payload=_signals(2.0, 1), attachment=1))))
        call(a, _request(17, step=_step(10 * MS)))                  # no input: no output
        call(a, _request(18, step=_step(20 * MS, 10 * MS, sig(-0.0, 1))),
             b"bulk")                                               # unused attachment frame
        call(a, b"", _request(19, step=_step(30 * MS, 10 * MS, sig(2.5, 2))))  # a delimiter
        call(c, _request(1, describe=lc.Describe()))               # REQ client
        call(c, _request(2, step=_step(40 * MS)))                  # REQ client: busy
        call(a, _request(20, terminate=lc.Terminate()))
        call(b, _request(4, heartbeat=lc.Heartbeat()))             # a fresh session
        call(b, _request(5, configure=_configure(peer_timeout_ns=300 * MS)))
        time.sleep(1.0)                                            # b falls silent
        call(c, _request(3, configure=_configure()))               # b's session has ended
        call(c, _request(4, terminate=lc.Terminate()))
    finally:
        for s in (a, b, c):
            s.close(0)
        ctx.term()
    return log_


def test_raw_component_answers_like_the_sdk(raw):
    from moonpool.components.sdk.serve import Server
    from protocol_peers import Doubler

    sdk = Server(Doubler, "tcp://127.0.0.1:*", context=zmq.Context())
    thread = threading.Thread(target=sdk.serve_forever, daemon=True)
    thread.start()
    try:
        expected = _conversation(sdk.bound_endpoint)
    finally:
        sdk.stop()
        thread.join(5)
    got = _conversation(raw.endpoint)
    assert got == expected

    codes = [(body, rid, extra) for body, rid, extra, _ in got]
    assert codes[0] == ("error", 0, lc.ERROR_CODE_MALFORMED)
    assert codes[1] == ("error", 100, lc.ERROR_CODE_PROTOCOL_VERSION)
    assert codes[2] == ("error", 101, lc.ERROR_CODE_MALFORMED)
    assert codes[3] == ("error", 1, lc.ERROR_CODE_INVALID_STATE)
    assert codes[5] == ("error", 3, lc.ERROR_CODE_INVALID_PARAMETER)
    assert codes[6] == ("error", 1, lc.ERROR_CODE_BUSY)
    assert codes[7][0] == "description"
    assert codes[8] == ("heartbeat", 3, (lc.COMPONENT_STATE_CREATED, 1))
    assert codes[9] == ("error", 4, lc.ERROR_CODE_INVALID_STATE)
    assert codes[10] == ("ack", 5, None)
    assert codes[11][2] == codes[12][2] == lc.ERROR_CODE_INVALID_STATE
    assert codes[14] == ("heartbeat", 9, (lc.COMPONENT_STATE_INITIALIZED, 2))
    t, outputs = codes[15][2]
    assert t == 0 and len(outputs) == 1
    out = signals_pb2.Signals.FromString(outputs[0][2])
    assert (out.header.source, out.header.seq, out.header.sim_time_ns) == ("dbl", 0, 0)
    assert [(s.name, s.value) for s in out.signals] == [("k", 3.0), ("half", 1.5)]
    assert [c[2] for c in codes[16:18]] == [lc.ERROR_CODE_INVALID_STATE] * 2
    assert [c[2] for c in codes[18:22]] == [lc.ERROR_CODE_INVALID_INPUT] * 4
    assert codes[22] == ("step_result", 17, (10 * MS, []))  # state unchanged by the errors
    out = signals_pb2.Signals.FromString(codes[23][2][1][0][2])
    assert out.header.seq == 1 and math.copysign(1, out.signals[0].value) == -1
    assert codes[24][0] == "step_result"  # the delimiter was echoed (checked in call)
    assert codes[25][0] == "description"
    assert codes[26] == ("error", 2, lc.ERROR_CODE_BUSY)
    assert codes[27] == ("terminated", 20, '{"outputs": 3}')
    assert codes[28] == ("heartbeat", 4, (lc.COMPONENT_STATE_CREATED, 1))
    assert codes[30] == ("ack", 3, None)
    assert codes[31] == ("terminated", 4, "")  # configured, never initialized: no metrics
