"""Fuzzing component endpoints over TCP with CURVE (hypothesis): random and malformed
frames, truncated and garbled protobuf, wrong protocol versions and out-of-order
lifecycle calls — thousands of messages against a served component and a served
process group.

- An **authenticated** fuzzer (an allowed key) gets exactly one answer to every
  message, promptly (no crash, no hang); before a session is bound nothing it sends
  binds one, and once the orchestrator's session is bound nothing it sends changes it.
- The bound orchestrator's own garbage (everything but a valid state-changing call)
  is answered with errors and changes nothing either.
- **Unauthenticated** peers (no key, an unknown key) and raw TCP garbage get nothing
  at all.
- Afterwards the orchestrator steps on and gets, byte for byte, the outputs a fresh
  component gives for the same calls: no state changed.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, SUPPORT
from moonpool.components.sdk import wire
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.security import generate_keys, read_key_pair
from moonpool.v1 import lifecycle_pb2 as lc

pytestmark = pytest.mark.slow

MS = 1_000_000
DT = 10 * MS
REPLY_MS = 3000
SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))

SINGLE = {"": "faulty:Healthy"}
GROUP = {"a": "faulty:Healthy", "b": "probes:Count"}


# -- the served endpoints -----------------------------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fuzzkeys")
    for name in ("server", "orchestrator", "fuzzer", "stranger"):
        generate_keys(name, folder)
    return folder


def _serve(tmp_path: Path, keys: Path, members: dict[str, str]):
    what = ([members[""]] if "" in members else
            [f"--component={name}={entry}" for name, entry in members.items()])
    log = tmp_path / "serve.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    with open(log, "w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moonpool.components.sdk.serve", *what, "--bind",
             "tcp://127.0.0.1:*", "--key", str(keys / "server.key_secret"),
             "--allow", str(keys / "orchestrator.key"), "--allow", str(keys / "fuzzer.key")],
            cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "serving" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    line = next(x for x in log.read_text().splitlines() if "serving" in x)
    return proc, line.split(" on ", 1)[1].split(" ", 1)[0], log


class Client:
    """A DEALER with a key pair (or none) to the served endpoint."""

    def __init__(self, ctx: zmq.Context, endpoint: str, keys: Path, name: str | None,
                 server_key: bytes | None = None) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        if name is not None:
            pub, sec = read_key_pair(keys / f"{name}.key_secret")
            self.sock.curve_publickey, self.sock.curve_secretkey = pub, sec
            self.sock.curve_serverkey = server_key or read_key_pair(keys / "server.key_secret")[0]
        self.sock.connect(endpoint)
        self.rid = 0

    def call(self, instance: str = "", **body) -> lc.Reply:
        self.rid += 1
        req = lc.Request(protocol_version=1, request_id=self.rid, instance=instance)
        for name, msg in body.items():
            getattr(req, name).CopyFrom(msg)
        self.sock.send(wire.serialize(req))
        return self.reply()

    def reply(self) -> lc.Reply:
        assert self.sock.poll(REPLY_MS), "no answer: the endpoint hangs or crashed"
        frames = self.sock.recv_multipart()
        # An empty first frame followed by more was a REQ-style delimiter, echoed.
        env = frames[1] if len(frames) > 1 and frames[0] == b"" else frames[0]
        return lc.Reply.FromString(env)

    def close(self) -> None:
        self.sock.close(0)


# -- what the fuzzer sends -------------------------------------------------------------

names = st.one_of(st.just(""), st.sampled_from(["a", "b", "c", "zz"]), st.text(max_size=8))
types = st.one_of(st.just("moonpool.v1.Signals"), st.just("moonpool.v1.Wrench"), st.text(max_size=20))
port_values = st.builds(
    lc.PortValue, port=st.one_of(st.just("count"), st.just("in"), st.text(max_size=8)),
    type=types, payload=st.binary(max_size=40), attachment=st.integers(0, 4))
i64 = st.integers(-(2**63), 2**63 - 1)
steps = st.builds(lc.Step, time_ns=i64, step_ns=i64, inputs=st.lists(port_values, max_size=3))
params = st.builds(lc.NamedParameter, name=st.one_of(st.just("at_step"), st.text(max_size=8)),
                   value=st.one_of(
                       st.builds(lc.ParameterValue, int_value=i64),
                       st.builds(lc.ParameterValue, double_value=st.floats()),
                       st.builds(lc.ParameterValue, string_value=st.text(max_size=8)),
                       st.builds(lc.ParameterValue, json_value=st.text(max_size=12))))
bodies = st.one_of(
    st.tuples(st.just("describe"), st.just(lc.Describe())),
    st.tuples(st.just("heartbeat"), st.builds(lc.Heartbeat, state=st.integers(0, 9),
                                              counter=st.integers(0, 2**64 - 1))),
    st.tuples(st.just("configure"), st.builds(
        lc.Configure, instance_name=names, seed=st.integers(0, 2**64 - 1),
        parameters=st.lists(params, max_size=3), period_ns=i64,
        peer_timeout_ns=st.integers(0, 2**63 - 1))),
    st.tuples(st.just("initialize"), st.builds(lc.Initialize, start_time_ns=i64)),
    st.tuples(st.just("step"), steps),
    st.tuples(st.just("terminate"), st.just(lc.Terminate())),
    st.tuples(st.just("step_batch"), st.builds(lc.StepBatch, steps=st.lists(
        st.builds(lc.InstanceStep, instance=names, step=steps), max_size=3))),
    st.tuples(st.just(""), st.none()),
)


@st.composite
def requests(draw) -> lc.Request:
    req = lc.Request(protocol_version=draw(st.one_of(st.just(1), st.just(1),
                                                     st.integers(0, 2**32 - 1))),
                     request_id=draw(st.integers(0, 2**64 - 1)), instance=draw(names))
    body, msg = draw(bodies)
    if body:
        getattr(req, body).CopyFrom(msg)
    return req


@st.composite
def messages(draw) -> list[bytes]:
    """One multipart message: random frames, or a request as is, truncated, garbled or
    extended, with random attachments and maybe a REQ-style delimiter."""
    kind = draw(st.sampled_from(["random", "request", "request", "request", "truncated",
                                 "garbled", "extended"]))
    if kind == "random":
        return draw(st.lists(st.binary(max_size=120), min_size=1, max_size=5))
    env = draw(requests()).SerializeToString()
    if kind == "truncated" and env:
        env = env[:draw(st.integers(0, len(env) - 1))]
    elif kind == "garbled" and env:
        i = draw(st.integers(0, len(env) - 1))
        env = env[:i] + bytes([draw(st.integers(0, 255))]) + env[i + 1:]
    elif kind == "extended":
        env += draw(st.binary(min_size=1, max_size=30))
    frames = [env, *draw(st.lists(st.binary(max_size=30), max_size=3))]
    if draw(st.booleans()) and draw(st.booleans()):
        frames.insert(0, b"")
    return frames


def parsed(frames: list[bytes]) -> lc.Request | None:
    """The Request a server reads from these frames (its delimiter rule), if any."""
    rest = frames[1:] if len(frames) > 1 and frames[0] == b"" else frames
    try:
        return lc.Request.FromString(rest[0])
    except Exception:  # noqa: BLE001 - garbage
        return None


def binds(frames: list[bytes]) -> bool:
    """A valid Configure binds a free session (protocol.md §6): legitimately a change."""
    req = parsed(frames)
    return req is not None and req.protocol_version == 1 and req.WhichOneof("body") == "configure"


def valid_call(members: dict[str, str], last_end: int):
    """For the bound peer: would the server legitimately act on these frames? A Step
    (or a StepBatch item) that is in order for a hosted member, or a Terminate."""

    def member(instance: str) -> bool:
        return "" in members or instance in members

    def in_order(instance: str, step: lc.Step) -> bool:
        return member(instance) and not step.inputs and step.step_ns > 0 and \
            step.time_ns >= last_end

    def check(frames: list[bytes]) -> bool:
        req = parsed(frames)
        if req is None or req.protocol_version != 1:
            return False
        body = req.WhichOneof("body")
        if body == "step":
            return in_order(req.instance, req.step)
        if body == "step_batch":
            return any(in_order(i.instance, i.step) for i in req.step_batch.steps)
        return body == "terminate"

    return check


def _fuzz(client: Client, *, skip=lambda frames: False, examples: int) -> dict[str, int]:
    """Send ``examples`` hypothesis messages from ``client``: each gets exactly one
    answer, at once; messages that would legitimately change state (``skip``) are not
    sent."""
    seen: dict[str, int] = {"sent": 0}
    unanswered: list = []

    @settings(max_examples=examples, **SETTINGS)
    @given(messages())
    def one(frames):
        if skip(frames) or unanswered:
            return
        client.sock.send_multipart(frames)
        if not client.sock.poll(REPLY_MS):
            unanswered.append(frames)  # (not raised: shrinking would wait again and again)
            return
        reply = client.reply()
        assert not client.sock.poll(0), "more than one answer"
        kind = reply.WhichOneof("body") or "none"
        if kind == "error":
            kind = lc.ErrorCode.Name(reply.error.code)
        seen[kind] = seen.get(kind, 0) + 1
        seen["sent"] += 1

    one()
    assert not unanswered, f"no answer within {REPLY_MS} ms to {unanswered[0]!r}: it hangs"
    return seen


# -- the test ----------------------------------------------------------------------------


@pytest.mark.parametrize("members", [SINGLE, GROUP], ids=["component", "group"])
def test_fuzzing_an_endpoint_changes_nothing(tmp_path, keys, members):
    proc, endpoint, log = _serve(tmp_path, keys, members)
    ctx = zmq.Context()
    orch = Client(ctx, endpoint, keys, "orchestrator")
    fuzzer = Client(ctx, endpoint, keys, "fuzzer")
    try:
        # 1. Nothing bound yet: nothing the fuzzer sends (but a Configure) binds or
        #    changes anything.
        before = _fuzz(fuzzer, skip=binds, examples=700)
        # 2. The orchestrator's session: configure, initialize, one step per member.
        fresh = {name: ComponentHost(_load(entry)()) for name, entry in members.items()}
        for name, host in fresh.items():
            cfg = lc.Configure(instance_name=name or "c", seed=7, period_ns=DT)
            assert orch.call(name, configure=cfg).HasField("ack")
            host.configure(cfg)
            got = orch.call(name, initialize=lc.Initialize(start_time_ns=0))
            assert got.HasField("initialized"), got
            assert [v.payload for v in got.initialized.outputs] == [
                o.payload for o in host.initialize(0)]
        outputs = _step_all(orch, members, 0)
        # 3. The fuzzer, now another peer: everything is allowed, nothing may change.
        during = _fuzz(fuzzer, examples=1500)
        # 4. The orchestrator's own garbage and out-of-order calls.
        own = _fuzz(orch, skip=valid_call(members, last_end=DT), examples=700)
        # 5. Unauthenticated peers and raw TCP: nothing comes back at all.
        _strangers(ctx, endpoint, keys)
        # 6. Stepping on gives what a fresh component gives for the same calls.
        outputs += _step_all(orch, members, DT) + _step_all(orch, members, 2 * DT)
        reference = []
        for t in (0, DT, 2 * DT):
            for name, host in fresh.items():
                reference += [o.payload for o in host.step(t, DT, {})]
        assert outputs == reference, "a fuzzed session diverged from a fresh one"
        assert proc.poll() is None, "the server died"
        total = before["sent"] + during["sent"] + own["sent"]
        print(f"\n{members}: {total} fuzz messages answered (unbound {before}, "
              f"bound/other peer {during}, bound peer {own})")
        assert total >= 2000
        assert "none" not in before and "none" not in during and "none" not in own, \
            "a reply without a body"
        assert during.get("ERROR_CODE_BUSY", 0) > 0
        assert before.get("ERROR_CODE_INVALID_STATE", 0) > 0
        assert own.get("ERROR_CODE_INVALID_STATE", 0) + own.get("ERROR_CODE_INVALID_INPUT", 0) > 0
        assert "Traceback" not in log.read_text()
    finally:
        ctx.destroy(linger=0)
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _load(entry: str):
    from moonpool.components.sdk.loading import load_entry

    return load_entry(entry, ROOT)


def _step_all(orch: Client, members: dict[str, str], t: int) -> list[bytes]:
    out = []
    for name in members:
        reply = orch.call(name, step=lc.Step(time_ns=t, step_ns=DT))
        assert reply.HasField("step_result"), reply
        out += [v.payload for v in reply.step_result.outputs]
    return out


def _strangers(ctx: zmq.Context, endpoint: str, keys: Path) -> None:
    """Peers without an allowed key send thousands of valid and invalid messages; raw
    TCP connections send random bytes and broken ZeroMQ greetings. Nothing answers."""
    rng = random.Random(4242)
    stranger = Client(ctx, endpoint, keys, "stranger")
    anonymous = Client(ctx, endpoint, keys, None)
    blind = Client(ctx, endpoint, keys, "fuzzer",
                   server_key=read_key_pair(keys / "stranger.key_secret")[0])
    valid = [lc.Request(protocol_version=1, request_id=i + 1) for i in range(5)]
    valid[0].describe.SetInParent()
    valid[1].heartbeat.SetInParent()
    valid[2].step.CopyFrom(lc.Step(time_ns=DT, step_ns=DT))
    valid[3].terminate.SetInParent()
    valid[4].configure.CopyFrom(lc.Configure(instance_name="evil"))
    for c in (stranger, anonymous, blind):
        for i in range(1000):
            frames = ([valid[i % 5].SerializeToString()] if i % 2 else
                      [rng.randbytes(rng.randint(0, 60)) for _ in range(rng.randint(1, 3))])
            try:  # queued until the handshake, then dropped; refused once it has failed
                c.sock.send_multipart(frames, flags=zmq.DONTWAIT)
            except zmq.Again:
                pass
    host, port = endpoint[len("tcp://"):].rsplit(":", 1)
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + \
        b"\x00" * 31
    for i in range(60):
        with socket.create_connection((host, int(port)), timeout=2) as s:
            junk = rng.randbytes(rng.randint(1, 400))
            s.sendall(greeting[: rng.randint(0, len(greeting))] + junk if i % 2 else junk)
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        for c in (stranger, anonymous, blind):
            assert not c.sock.poll(10), "an unauthenticated peer got an answer"
    for c in (stranger, anonymous, blind):
        c.close()
