"""A component written in C from docs/protocol.md alone (tests/support/c_component/
scaler.c: hand-written protobuf, the libzmq that pyzmq bundles), compiled here with
`cc`, started as a real process and driven by real sockets and the real CLI.

- Describe: the C Description is byte for byte the canonical encoding of the Python
  twin's (tests/support/c_scaler_twin.py), apart from kind and description.
- Keyed noise (§11): the C draws equal the doc's reference values and KeyedNoise.
- A rig run (`moonpool run`, the C component as `run = "remote"`): the recording
  holds its outputs with the right header fields and exact values; the digest of
  §12, recomputed from the MCAP file, is the summary's; the Python twin in its place
  gives the same digest and metrics.
- Failures: unknown and ill-typed parameters fail the run (exit 1), named; the
  orchestrator then terminates the session, so the next run gets the endpoint.
  Values refused by the component's own configure leave it FAILED.
- The wire: garbage, versions, missing bodies, delimiters (REQ too), bad inputs,
  time going back, a second orchestrator (BUSY), peer silence; mutated requests are
  answered exactly as protobuf's own parser classifies them. The component keeps
  answering throughout, and no process is left behind.
"""

from __future__ import annotations

import json
import random
import select
import struct
import subprocess
import tempfile
import time
from hashlib import sha256
from pathlib import Path

import pytest
import zmq
from conftest import SUPPORT, alive, c_compiler, moonpool
from google.protobuf.message import DecodeError
from moonpool.components.sdk import KeyedNoise, wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2

pytestmark = pytest.mark.slow

SRC = SUPPORT / "c_component"
SIGNALS = "moonpool.v1.Signals"
MS = 1_000_000
TIMEOUT_MS = 3000


# -- build and serve ---------------------------------------------------------------------

def _libzmq() -> Path:
    """The libzmq shared library of pyzmq's wheel (there is no zmq.h on the machine)."""
    libdir = Path(zmq.__file__).resolve().parent.parent / "pyzmq.libs"
    libs = sorted(libdir.glob("libzmq*.so*"))
    if not libs:
        pytest.fail(f"pyzmq bundles no libzmq in {libdir}: this test links the C component "
                    "against the wheel's libzmq; install pyzmq from its manylinux wheel")
    return libs[0]


@pytest.fixture(scope="module")
def scaler_bin(tmp_path_factory) -> Path:
    cc = c_compiler()  # fails (does not skip) without a compiler
    lib = _libzmq()
    out = tmp_path_factory.mktemp("c_build") / "scaler"
    cmd = [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-ffp-contract=off",
           "-o", str(out), str(SRC / "scaler.c"), str(lib), f"-Wl,-rpath,{lib.parent}", "-lm"]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return out


class Served:
    def __init__(self, proc: subprocess.Popen, endpoint: str, log: Path) -> None:
        self.proc, self.endpoint, self.log = proc, endpoint, log

    def log_text(self) -> str:
        return self.log.read_text()


@pytest.fixture(scope="module")
def scaler(scaler_bin, tmp_path_factory):
    """The C component serving sessions on an ipc endpoint; killed at the end."""
    d = tmp_path_factory.mktemp("c_served")
    sock_dir = d if len(str(d)) < 80 else Path(tempfile.mkdtemp(prefix="mp-c-"))
    endpoint = f"ipc://{sock_dir / 'scaler.ipc'}"
    log = d / "scaler.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([str(scaler_bin), endpoint], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        line = proc.stdout.readline() if ready else ""
        assert f"serving c:Scaler on {endpoint}" in line, (line, log.read_text())
        yield Served(proc, endpoint, log)
        assert proc.poll() is None, f"the C component died:\n{log.read_text()}"
    finally:
        proc.terminate()
        try:
            code = proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(5)
        proc.stdout.close()
        assert not alive(proc.pid)
    assert code == 0, f"exit code {code} after SIGTERM:\n{log.read_text()}"


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


def _dealer(ctx, endpoint: str, kind=zmq.DEALER) -> zmq.Socket:
    s = ctx.socket(kind)
    s.linger = 0
    s.connect(endpoint)
    return s


def _request(rid: int, **body) -> bytes:
    req = lc.Request(protocol_version=1, request_id=rid)
    for name, msg in body.items():
        getattr(req, name).CopyFrom(msg)
    return req.SerializeToString(deterministic=True)


def _frames(sock: zmq.Socket, *frames: bytes) -> list[bytes]:
    sock.send_multipart(list(frames))
    assert sock.poll(TIMEOUT_MS), "the C component did not answer"
    return sock.recv_multipart()


def _call(sock: zmq.Socket, *frames: bytes) -> lc.Reply:
    """Send frames, expect exactly one envelope back (after the delimiter if sent)."""
    reply = _frames(sock, *frames)
    if frames[0] == b"" and len(frames) > 1:
        assert reply[0] == b"", "the delimiter was not echoed"
        reply = reply[1:]
    else:
        assert reply[0] != b"", "a delimiter was sent back to a DEALER that sent none"
    assert len(reply) == 1, reply
    msg = lc.Reply.FromString(reply[0])
    assert msg.protocol_version == 1
    return msg


def _error(reply: lc.Reply, code: int, rid: int) -> lc.Error:
    assert reply.WhichOneof("body") == "error", reply
    assert reply.error.code == code, reply.error
    assert reply.request_id == rid
    assert reply.error.message and reply.error.fix
    return reply.error


def _param(name: str, **value) -> lc.NamedParameter:
    return lc.NamedParameter(name=name, value=lc.ParameterValue(**value))


def _signals(seq: int, **values: float) -> bytes:
    m = signals_pb2.Signals()
    m.header.seq = seq
    m.header.source = "test"
    for k, v in values.items():
        m.signals.add(name=k, value=v)
    return m.SerializeToString(deterministic=True)


def _step(t: int, dt: int, *inputs: lc.PortValue) -> lc.Step:
    return lc.Step(time_ns=t, step_ns=dt, inputs=list(inputs))


def _pv(payload: bytes, port="in", type_=SIGNALS, attachment=0) -> lc.PortValue:
    return lc.PortValue(port=port, type=type_, payload=payload, attachment=attachment)


def _outputs(values) -> dict[str, signals_pb2.Signals]:
    out = {}
    for pv in values:
        assert pv.type == SIGNALS and pv.attachment == 0
        msg = signals_pb2.Signals.FromString(pv.payload)
        assert msg.SerializeToString(deterministic=True) == pv.payload, "not canonical"
        out[pv.port] = msg
    return out


def _values(msg: signals_pb2.Signals) -> dict[str, float]:
    return {s.name: s.value for s in msg.signals}


def _raw_field(buf: bytes, field: int) -> bytes:
    """The bytes of length-delimited `field` in a serialized message (as sent)."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        wt = key & 7
        if wt == 0:
            _, i = _varint(buf, i)
            continue
        if wt in (1, 5):
            i += 8 if wt == 1 else 4
            continue
        n, i = _varint(buf, i)
        if key >> 3 == field:
            return buf[i:i + n]
        i += n
    raise KeyError(field)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


# -- Describe and noise --------------------------------------------------------------------

def test_description_is_the_python_twins_byte_for_byte(scaler, ctx):
    from c_scaler_twin import Scaler

    a = _dealer(ctx, scaler.endpoint)
    raw = _frames(a, _request(1, describe=lc.Describe()))
    assert len(raw) == 1
    reply = lc.Reply.FromString(raw[0])
    assert reply.request_id == 1 and reply.WhichOneof("body") == "description"
    desc = reply.description
    assert desc.kind == "c:Scaler" and desc.protocol_version == 1
    assert [(p.name, p.direction, p.type) for p in desc.inputs] == [("in", 1, SIGNALS)]
    assert [(p.name, p.direction, p.type) for p in desc.outputs] == [
        ("out", 2, SIGNALS), ("stats", 2, SIGNALS)]
    types = {p.name: (p.type, p.required, p.default_value.WhichOneof("kind"))
             for p in desc.parameters}
    assert types == {
        "gain": (lc.PARAMETER_TYPE_DOUBLE, True, None),
        "offset": (lc.PARAMETER_TYPE_DOUBLE, False, "double_value"),
        "noise_std": (lc.PARAMETER_TYPE_DOUBLE, False, "double_value"),
        "every": (lc.PARAMETER_TYPE_INT, False, "int_value"),
        "frame_id": (lc.PARAMETER_TYPE_STRING, False, "string_value"),
    }
    # The exact bytes the C component wrote are the canonical encoding of the SDK's
    # Description of the twin (kind and description aside): same ports, parameters,
    # defaults (oneof members written even when 0.0 / 0 / ""), field order.
    twin = wire.describe_class(Scaler)
    twin.kind, twin.description = desc.kind, desc.description
    assert _raw_field(raw[0], 10) == twin.SerializeToString(deterministic=True)


def test_keyed_noise_matches_the_doc_and_the_sdk(scaler_bin):
    def draw(seed, instance, channel, index):
        out = subprocess.run([str(scaler_bin), "--noise", str(seed), instance, channel,
                              str(index)], capture_output=True, text=True, check=True, timeout=10)
        return tuple(float(x) for x in out.stdout.split())

    # The reference values of protocol.md §11.
    assert draw(0, "sensor", "pressure", 0) == (0.3160830237651713, -0.6669597960079894)
    for seed, instance, channel, index in [(7, "scaler", "a", 0), (7, "scaler", "b", 98),
                                           (2**64 - 1, "név", "ü/x", 123456789)]:
        noise = KeyedNoise(seed, instance)
        assert draw(seed, instance, channel, index) == (noise.uniform(index, channel),
                                                        noise.normal(index, channel))


# -- the wire, directly ---------------------------------------------------------------------

def test_garbage_errors_and_sessions_on_the_wire(scaler, ctx):
    a = _dealer(ctx, scaler.endpoint)
    b = _dealer(ctx, scaler.endpoint)

    # Frames that do not parse as a Request: MALFORMED, request_id 0, named by kind.
    bad_utf8 = bytes.fromhex("0801102a1a01ff5200")       # instance = b"\xff"
    cut_step = bytes.fromhex("0801102a6a041a020a05")     # Step.inputs[0].port cut short
    for garbage in (b"\xff\xff", b"\x08", bad_utf8, cut_step, b"\x0b\x10\x01"):
        with pytest.raises(DecodeError):
            lc.Request.FromString(garbage)  # protobuf agrees: it does not parse
        err = _error(_call(a, garbage), lc.ERROR_CODE_MALFORMED, 0)
        assert err.component == "c:Scaler"
    # A single empty frame is an (empty) envelope, not a delimiter: version 0.
    _error(_call(a, b""), lc.ERROR_CODE_PROTOCOL_VERSION, 0)
    # A delimiter and an empty envelope: the delimiter is echoed.
    _error(_call(a, b"", b""), lc.ERROR_CODE_PROTOCOL_VERSION, 0)
    req = lc.Request(protocol_version=2, request_id=41, describe=lc.Describe())
    _error(_call(a, req.SerializeToString()), lc.ERROR_CODE_PROTOCOL_VERSION, 41)
    _error(_call(a, lc.Request(protocol_version=1, request_id=42).SerializeToString()),
           lc.ERROR_CODE_MALFORMED, 42)
    for rid, body in ((43, {"initialize": lc.Initialize()}), (44, {"step": _step(0, 10)}),
                      (45, {"terminate": lc.Terminate()})):
        _error(_call(a, _request(rid, **body)), lc.ERROR_CODE_INVALID_STATE, rid)

    # Heartbeats: answered for anyone, counting within the session; a REQ socket
    # (which adds and expects the delimiter) is served too.
    h1 = _call(a, _request(46, heartbeat=lc.Heartbeat())).heartbeat
    h2 = _call(b, b"", _request(47, heartbeat=lc.Heartbeat())).heartbeat
    assert h1.state == h2.state == lc.COMPONENT_STATE_CREATED and h2.counter == h1.counter + 1
    req_sock = _dealer(ctx, scaler.endpoint, zmq.REQ)
    req_sock.send(_request(48, describe=lc.Describe()))
    assert req_sock.poll(TIMEOUT_MS)
    assert lc.Reply.FromString(req_sock.recv()).description.kind == "c:Scaler"

    # A session for a. Inputs that break the Description: INVALID_INPUT, state unchanged.
    conf = lc.Configure(instance_name="direct", seed=1, peer_timeout_ns=0,
                        parameters=[_param("gain", double_value=3.0), _param("frame_id", string_value="f")])
    assert _call(a, _request(1, configure=conf)).WhichOneof("body") == "ack"
    init = _call(a, _request(2, initialize=lc.Initialize(start_time_ns=0))).initialized
    stats0 = _outputs(init.outputs)
    assert list(stats0) == ["stats"] and _values(stats0["stats"]) == {"steps": 0.0, "fresh": 0.0}
    assert stats0["stats"].header.seq == 0 and stats0["stats"].header.source == "direct"
    good = _signals(0, x=1.5, y=-2.0)
    for rid, pv in ((3, _pv(good, port="inn")), (4, _pv(good, type_="moonpool.v1.Signal")),
                    (5, _pv(b"\xff")), (6, _pv(good, attachment=1))):
        err = _error(_call(a, _request(rid, step=_step(0, 10 * MS, pv))),
                     lc.ERROR_CODE_INVALID_INPUT, rid)
        assert err.component == "direct"
    _error(_call(a, _request(7, step=_step(0, 0, _pv(good)))), lc.ERROR_CODE_INVALID_STATE, 7)
    _error(_call(a, b"\x00"), lc.ERROR_CODE_MALFORMED, 0)  # garbage changes nothing either
    # The first real step (with a delimiter), then t going back, then one with an
    # attachment frame that an input refers to: 'in' is not declared to take one
    # (PortSpec.attachment), so INVALID_INPUT, state unchanged, and the same step
    # without it goes through.
    res = _call(a, b"", _request(8, step=_step(0, 10 * MS, _pv(good)))).step_result
    out = _outputs(res.outputs)
    assert list(out) == ["out", "stats"] and res.time_ns == 0
    assert _values(out["out"]) == {"x": 4.5, "y": -6.0}
    h = out["out"].header
    assert (h.sim_time_ns, h.seq, h.source, h.frame_id) == (0, 0, "direct", "f")
    h = out["stats"].header
    assert (h.sim_time_ns, h.seq, h.source, h.frame_id) == (10 * MS, 1, "direct", "")
    _error(_call(a, _request(9, step=_step(5 * MS, 10 * MS, _pv(good)))),
           lc.ERROR_CODE_INVALID_STATE, 9)
    err = _error(_call(a, _request(10, step=_step(10 * MS, 10 * MS,
                                                 _pv(_signals(1, x=1.0), attachment=1))),
                       b"raw bytes"), lc.ERROR_CODE_INVALID_INPUT, 10)
    assert "does not take attachments" in err.message
    res = _call(a, _request(10, step=_step(10 * MS, 10 * MS, _pv(_signals(1, x=1.0))))).step_result
    out = _outputs(res.outputs)
    assert _values(out["out"]) == {"x": 3.0} and out["out"].header.seq == 1
    assert _values(out["stats"]) == {"steps": 2.0, "fresh": 2.0}

    # Another orchestrator meanwhile: BUSY, but Describe and Heartbeat are answered.
    _error(_call(b, _request(1, configure=conf)), lc.ERROR_CODE_BUSY, 1)
    _error(_call(b, _request(2, step=_step(20 * MS, 10 * MS))), lc.ERROR_CODE_BUSY, 2)
    assert _call(b, _request(3, describe=lc.Describe())).description.kind == "c:Scaler"
    hb = _call(b, _request(4, heartbeat=lc.Heartbeat())).heartbeat
    assert hb.state == lc.COMPONENT_STATE_INITIALIZED

    term = _call(a, _request(11, terminate=lc.Terminate()))
    assert term.request_id == 11
    assert json.loads(term.terminated.metrics_json) == {"fresh": 2, "steps": 2}
    # The session is over: a is a stranger now, and b can have the component.
    _error(_call(a, _request(12, step=_step(20 * MS, 10 * MS))), lc.ERROR_CODE_INVALID_STATE, 12)
    assert _call(b, _request(5, configure=conf)).WhichOneof("body") == "ack"
    assert _call(b, _request(6, terminate=lc.Terminate())).terminated.metrics_json
    assert scaler.proc.poll() is None


def test_values_refused_by_its_configure_fail_the_session(scaler, ctx):
    a = _dealer(ctx, scaler.endpoint)
    conf = lc.Configure(instance_name="picky", parameters=[
        _param("gain", int_value=2), _param("every", int_value=0)])
    err = _error(_call(a, _request(1, configure=conf)), lc.ERROR_CODE_INVALID_PARAMETER, 1)
    assert "every" in err.message and err.component == "picky"
    hb = _call(a, _request(2, heartbeat=lc.Heartbeat())).heartbeat
    assert hb.state == lc.COMPONENT_STATE_FAILED
    _error(_call(a, _request(3, initialize=lc.Initialize())), lc.ERROR_CODE_INVALID_STATE, 3)
    term = _call(a, _request(4, terminate=lc.Terminate()))
    assert term.WhichOneof("body") == "terminated" and term.terminated.metrics_json == ""
    # Ill-typed parameters are refused before its configure: still CREATED.
    conf = lc.Configure(instance_name="picky", parameters=[
        _param("gain", bool_value=True), _param("every", double_value=2.5),
        _param("ofset", double_value=1.0), _param("frame_id", int_value=3)])
    err = _error(_call(a, _request(5, configure=conf)), lc.ERROR_CODE_INVALID_PARAMETER, 5)
    for words in ("'gain'", "'every'", "unknown parameter 'ofset'", "did you mean 'offset'",
                  "'frame_id'"):
        assert words in err.message
    assert _call(a, _request(6, heartbeat=lc.Heartbeat())).heartbeat.state == \
        lc.COMPONENT_STATE_CREATED
    conf = lc.Configure(instance_name="picky", parameters=[_param("offset", double_value=1.0)])
    err = _error(_call(a, _request(7, configure=conf)), lc.ERROR_CODE_INVALID_PARAMETER, 7)
    assert "missing required parameter 'gain'" in err.message
    assert _call(a, _request(8, terminate=lc.Terminate())).WhichOneof("body") == "terminated"


def test_mutated_requests_are_classified_as_protobuf_does(scaler, ctx):
    """Hand-written decoding against protobuf's own parser: every mutated request gets
    the answer its parse by protobuf implies (no session is bound, so every body other
    than Describe/Heartbeat is INVALID_STATE)."""
    a = _dealer(ctx, scaler.endpoint)
    pv = _pv(_signals(3, a=1.5), attachment=0)
    seeds = [
        _request(5, step=_step(10, 20, pv, pv)),
        lc.Request(protocol_version=1, request_id=6, instance="x",
                   heartbeat=lc.Heartbeat(state=3, counter=2)).SerializeToString(),
        _request(7, describe=lc.Describe()),
        _request(8, initialize=lc.Initialize(start_time_ns=-5)),
        _request(9, step_batch=lc.StepBatch(steps=[lc.InstanceStep(instance="a", step=_step(1, 2, pv))])),
        _request(10, configure=lc.Configure(instance_name="q", parameters=[
            _param("gain", double_array=lc.DoubleArray(values=[1, 2])),
            _param("s", string_array=lc.StringArray(values=["é", ""]))])),
    ]
    rng = random.Random(20240501)
    counts: dict[str, int] = {}
    for _ in range(1500):
        g = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            op, i = rng.randrange(4), rng.randrange(len(g) + 1)
            if op == 0 and i < len(g):
                g[i] ^= 1 << rng.randrange(8)
            elif op == 1:
                del g[i:]
            elif op == 2:
                g.insert(i, rng.randrange(256))
            elif i < len(g):
                g[i] = rng.randrange(256)
        g = bytes(g)
        try:
            req = lc.Request.FromString(g)
        except DecodeError:
            expected = ("error", lc.ERROR_CODE_MALFORMED, 0)
        else:
            body = req.WhichOneof("body")
            if body == "configure":
                continue  # it could bind a session
            if req.protocol_version != 1:
                expected = ("error", lc.ERROR_CODE_PROTOCOL_VERSION, req.request_id)
            elif body is None:
                expected = ("error", lc.ERROR_CODE_MALFORMED, req.request_id)
            elif body in ("describe", "heartbeat"):
                expected = ("description" if body == "describe" else "heartbeat", 0,
                            req.request_id)
            else:
                expected = ("error", lc.ERROR_CODE_INVALID_STATE, req.request_id)
        reply = _call(a, g)
        got = (reply.WhichOneof("body"), reply.error.code, reply.request_id)
        assert got == expected, g.hex()
        counts[expected[0] + str(expected[1])] = counts.get(expected[0] + str(expected[1]), 0) + 1
    assert len(counts) >= 4, counts  # the mutations reached every kind of answer
    assert _call(a, _request(1, describe=lc.Describe())).description.kind == "c:Scaler"


def test_a_silent_orchestrator_loses_the_session(scaler, ctx):
    a = _dealer(ctx, scaler.endpoint)
    b = _dealer(ctx, scaler.endpoint)
    # Half a second of margin on either side of the 1 s peer timeout: a loaded CI
    # machine may stall a process for a good fraction of that.
    conf = lc.Configure(instance_name="quiet", peer_timeout_ns=1000 * MS,
                        parameters=[_param("gain", double_value=1.0)])
    assert _call(a, _request(1, configure=conf)).WhichOneof("body") == "ack"
    _error(_call(b, _request(1, configure=conf)), lc.ERROR_CODE_BUSY, 1)
    time.sleep(0.5)
    assert _call(a, _request(2, heartbeat=lc.Heartbeat())).heartbeat.state == \
        lc.COMPONENT_STATE_CONFIGURED  # a heartbeat counts as hearing from it
    time.sleep(0.5)
    _error(_call(b, _request(2, configure=conf)), lc.ERROR_CODE_BUSY, 2)
    time.sleep(1.0)
    assert _call(b, _request(3, configure=conf)).WhichOneof("body") == "ack"
    assert "session ends (peer timeout)" in scaler.log_text()
    _error(_call(a, _request(3, initialize=lc.Initialize())), lc.ERROR_CODE_BUSY, 3)
    assert _call(b, _request(4, terminate=lc.Terminate())).WhichOneof("body") == "terminated"


# -- rigs through the CLI ------------------------------------------------------------------

RIG = """
[run]
until = "2s"
seed = 7
plots = false
heartbeat_interval = "{hb}"
peer_timeout = "2s"
{extra}

[components.wave]
entry = "c_scaler_twin:Wave"
rate_hz = {wave_hz}

[components.scaler]
{placement}
rate_hz = {scaler_hz}
[components.scaler.parameters]
gain = 2
offset = 0.5
noise_std = 0.01
every = 2
frame_id = "scaled"

[[connections]]
from = "wave.signals"
to = "scaler.in"
"""


def _rig(tmp_path: Path, name: str, endpoint: str | None, hb="1s", extra="", wave_hz=20,
         scaler_hz=50) -> Path:
    placement = (f'run = "remote"\nendpoint = "{endpoint}"' if endpoint
                 else 'entry = "c_scaler_twin:Scaler"')
    path = tmp_path / f"{name}.toml"
    path.write_text(RIG.format(placement=placement, hb=hb, extra=extra, wave_hz=wave_hz,
                               scaler_hz=scaler_hz))
    return path


def _run(tmp_path: Path, rig: Path, *args: str):
    out = tmp_path / (rig.stem + "-out")
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet", *args, timeout=60)
    summary = json.loads((out / "summary.json").read_text())
    return proc, summary, out


def _decoded(path: Path) -> dict[str, list]:
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    topics: dict[str, list] = {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, msg in reader.iter_decoded_messages(log_time_order=False):
            assert schema.name == SIGNALS
            topics.setdefault(channel.topic, []).append((message.log_time, msg))
    return topics


def _digest_from_mcap(path: Path) -> str:
    """protocol.md §12, from the recorded records (no attachments in this rig)."""
    from mcap.reader import make_reader

    h = sha256()
    with open(path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages(log_time_order=False):
            topic = channel.topic.encode()
            h.update(struct.pack("<I", len(topic)) + topic)
            h.update(struct.pack("<qI", message.log_time, len(message.data)) + message.data)
            h.update(struct.pack("<I", 0))
    return h.hexdigest()


def test_rig_run_records_the_c_outputs_and_the_python_twin_gives_the_same_digest(
        scaler, tmp_path):
    proc, summary, out = _run(tmp_path, _rig(tmp_path, "c", scaler.endpoint))
    assert proc.returncode == 0, proc.stderr + scaler.log_text()
    assert summary["status"] == "ok" and summary["error"] is None
    assert summary["components"]["scaler"]["placement"] == "remote"
    assert summary["components"]["scaler"]["steps"] == 100
    # wave publishes at 50 ms, 100 ms, ... 1950 ms: 39 of them reach a step before 2 s.
    assert summary["metrics"]["scaler"] == {"fresh": 39, "steps": 100}

    rec = out / "recording.mcap"
    assert _digest_from_mcap(rec) == summary["digest"]
    topics = _decoded(rec)
    assert set(topics) == {"/wave/signals", "/scaler/out", "/scaler/stats"}
    assert summary["messages"] == sum(map(len, topics.values()))
    period, noise = 20 * MS, KeyedNoise(7, "scaler")
    waves = topics["/wave/signals"]
    # stats: the Initialize message (seq 0 at 0 s), then one per step, stamped t + dt.
    stats = topics["/scaler/stats"]
    assert len(stats) == 101
    for seq, (log_time, msg) in enumerate(stats):
        assert log_time == seq * period  # Jacobi: visible at the end of the step
        h = msg.header
        assert (h.sim_time_ns, h.seq, h.source, h.frame_id) == (log_time, seq, "scaler", "")
        assert msg.signals[0].name == "steps" and msg.signals[0].value == seq
    assert _values(stats[-1][1]) == {"steps": 100.0, "fresh": 39.0}
    # out: on even step indices once a wave message is visible; exact values.
    expected_times = []
    for k in range(100):
        t = k * period
        if k % 2 == 0 and any(lt <= t for lt, _ in waves):
            expected_times.append(t)
    outs = topics["/scaler/out"]
    assert [lt - period for lt, _ in outs] == expected_times and len(outs) == 48
    for seq, (log_time, msg) in enumerate(outs):
        t = log_time - period
        h = msg.header
        assert (h.sim_time_ns, h.seq, h.source, h.frame_id) == (t, seq, "scaler", "scaled")
        wave = [m for lt, m in waves if lt <= t][-1]  # sample and hold
        k = t // period
        want = [(s.name, 2.0 * s.value + 0.5 + 0.01 * noise.normal(k, s.name))
                for s in wave.signals]
        assert [(s.name, s.value) for s in msg.signals] == want

    twin_proc, twin, _ = _run(tmp_path, _rig(tmp_path, "twin", None))
    assert twin_proc.returncode == 0, twin_proc.stderr
    assert twin["components"]["scaler"]["placement"] == "inproc"
    assert twin["messages"] == summary["messages"]
    assert twin["metrics"] == summary["metrics"]
    assert twin["digest"] == summary["digest"]


def test_bad_parameters_fail_the_run_and_the_next_run_gets_the_endpoint(scaler, tmp_path):
    bad = ("--set", "components.scaler.parameters.gian=1",
           "--set", "components.scaler.parameters.every=1.5")
    start = len(scaler.log_text())
    proc, summary, _ = _run(tmp_path, _rig(tmp_path, "bad", scaler.endpoint), *bad)
    assert proc.returncode == 1, proc.stderr
    for words in ("component 'scaler'", "unknown parameter 'gian' (did you mean 'gain'?)",
                  "parameter 'every' must be an integer"):
        assert words in proc.stderr
        assert words in summary["error"]
    assert summary["status"] == "failed" and summary["failed_component"] == "scaler"
    # The orchestrator still told the component that answered an Error that the session
    # is over (Terminate), so the endpoint is free at once for the next run.
    log = scaler.log_text()[start:]
    assert log.index("-> error 4") < log.index("terminate request") < \
        log.index("session ends (terminated)")
    proc, summary, _ = _run(tmp_path, _rig(tmp_path, "after", scaler.endpoint))
    assert proc.returncode == 0, proc.stderr
    # The same parameters for the Python twin are refused when the rig is checked.
    # (exit 2, nothing run), while a remote component can only be asked (exit 1).
    proc = moonpool("run", str(_rig(tmp_path, "bad-twin", None)), "--quiet",
                    "--out", str(tmp_path / "bad-twin-out"), *bad, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "unknown parameter 'gian'" in proc.stderr and "every" in proc.stderr


def test_real_time_run_heartbeats_the_c_component(scaler, tmp_path):
    start = len(scaler.log_text())
    rig = _rig(tmp_path, "rt", scaler.endpoint, hb="0.1s", extra="realtime = true",
               wave_hz=2, scaler_hz=2)
    proc, summary, _ = _run(tmp_path, rig, "--until", "1")
    assert proc.returncode == 0, proc.stderr + scaler.log_text()
    assert summary["components"]["scaler"]["steps"] == 2
    log = scaler.log_text()[start:]
    session = log[log.index("configure request"):log.index("session ends (terminated)")]
    # Not strictly periodic (§10: checked after every tick), but the 0.5 s between the
    # two steps exceed the interval.
    assert "heartbeat request" in session, session
