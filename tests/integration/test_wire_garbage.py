"""Garbage on the wire: random bytes and malformed protobuf sent to a component's
endpoint, and to the orchestrator (as replies), are rejected and logged; nothing
crashes or hangs, and the state of the component is unchanged."""

from __future__ import annotations

import logging
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

from conftest import ROOT, SUPPORT
from moonpool.components.sdk import wire
from moonpool.components.sdk.serve import Server
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2

TIMEOUT_MS = 3000


def _request(rid: int, **body) -> bytes:
    req = lc.Request(protocol_version=1, request_id=rid)
    for name, msg in body.items():
        getattr(req, name).CopyFrom(msg)
    return wire.serialize(req)


def _reply(sock: zmq.Socket) -> lc.Reply:
    assert sock.poll(TIMEOUT_MS), "component did not answer"
    frames = sock.recv_multipart()
    reply = lc.Reply()
    reply.ParseFromString(frames[0])
    return reply


@pytest.fixture()
def served(tmp_path):
    """A real component process serving faulty:Healthy on an ipc endpoint."""
    endpoint = f"ipc://{tmp_path}/c.sock"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    log = open(tmp_path / "component.log", "w")  # a file: a full pipe would block the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.components.sdk.serve", "faulty:Healthy", "--bind", endpoint],
        cwd=ROOT, env=env, stderr=log, text=True,
    )
    proc.log_path = tmp_path / "component.log"
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    yield proc, sock
    sock.close(0)
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_component_rejects_garbage_and_keeps_serving(served):
    proc, sock = served
    rng = random.Random(1234)
    # Configure first so the session state exists and must survive the garbage.
    sock.send(_request(1, configure=lc.Configure(instance_name="c", seed=1)))
    assert _reply(sock).WhichOneof("body") == "ack"
    codes = {}
    n = 0
    for i in range(1500):
        kind = i % 5
        if kind == 0:  # random bytes
            frames = [rng.randbytes(rng.randint(1, 300))]
        elif kind == 1:  # several random frames
            frames = [rng.randbytes(rng.randint(0, 50)) for _ in range(rng.randint(2, 5))]
        elif kind == 2:  # valid envelope, wrong protocol version
            req = lc.Request(protocol_version=rng.randint(2, 1000), request_id=10_000 + i)
            req.heartbeat.SetInParent()
            frames = [wire.serialize(req)]
        elif kind == 3:  # valid envelope, step before initialize, garbage payload
            step = lc.Step(time_ns=rng.randint(0, 10**9), step_ns=1000)
            step.inputs.add(port="nope", type="moonpool.v1.Signals", payload=rng.randbytes(20))
            frames = [_request(10_000 + i, step=step)]
        else:  # a request with no body / unknown fields
            frames = [wire.serialize(lc.Request(protocol_version=1, request_id=10_000 + i)) +
                      b"\xfa\x07\x03abc"]
        sock.send_multipart(frames)
        assert sock.poll(TIMEOUT_MS), f"no answer to message {i}: {frames!r}"
        got = sock.recv_multipart()
        # A first frame that is empty was taken as a REQ-style delimiter and echoed.
        reply = lc.Reply.FromString(got[1] if got[0] == b"" and len(got) > 1 else got[0])
        n += 1
        assert reply.WhichOneof("body") == "error"
        codes[reply.error.code] = codes.get(reply.error.code, 0) + 1
    assert n == 1500
    # random bytes sometimes parse as a Request of another version: >=
    assert codes.get(lc.ERROR_CODE_PROTOCOL_VERSION) >= 300
    assert codes.get(lc.ERROR_CODE_INVALID_STATE) == 300
    assert codes.get(lc.ERROR_CODE_MALFORMED, 0) >= 300
    assert proc.poll() is None, "component process died"
    # The session is intact: it still initializes and steps normally.
    sock.send(_request(2, initialize=lc.Initialize(start_time_ns=0)))
    assert _reply(sock).WhichOneof("body") == "initialized"
    sock.send(_request(3, step=lc.Step(time_ns=0, step_ns=10_000_000)))
    reply = _reply(sock)
    assert reply.WhichOneof("body") == "step_result"
    out = signals_pb2.Signals.FromString(reply.step_result.outputs[0].payload)
    assert out.header.source == "c" and out.header.seq == 0 and out.signals[0].value == 1
    sock.send(_request(4, step=lc.Step(time_ns=10_000_000, step_ns=10_000_000)))
    reply = _reply(sock)
    out = signals_pb2.Signals.FromString(reply.step_result.outputs[0].payload)
    assert out.header.seq == 1 and out.signals[0].value == 2
    log = proc.log_path.read_text()
    assert log.count("rejected a request") >= 1200  # every garbage message was logged


class RogueServer(Server):
    """A real component server that, before each true reply, sends garbage:
    random bytes, a reply to a request that was never made, and a reply of the
    wrong kind carrying the right request id is NOT sent (that would be a valid
    protocol violation the orchestrator must fail on, tested separately)."""

    def __init__(self, *args, garbage_per_reply: int = 3, only_garbage: bool = False, **kw):
        super().__init__(*args, **kw)
        self.rng = random.Random(99)
        self.garbage_per_reply = garbage_per_reply
        self.only_garbage = only_garbage

    def _handle(self, frames):
        identity = frames[0]
        for _ in range(self.garbage_per_reply):
            self.sock.send_multipart([identity, self.rng.randbytes(self.rng.randint(1, 80))])
            stale = lc.Reply(protocol_version=1, request_id=10**9 + self.rng.randint(0, 99))
            stale.ack.SetInParent()
            self.sock.send_multipart([identity, wire.serialize(stale)])
        if not self.only_garbage:
            super()._handle(frames)


def _serve_in_thread(server: Server):
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return t


RIG = """
[run]
until = "1s"
seed = 5
[components.src]
entry = "faulty:Healthy"
rate_hz = 100
[components.src.parameters]
at_step = -1
[components.rogue]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 50
step_timeout = "{timeout}"
setup_timeout = "{timeout}"
"""


def _run(tmp_path: Path, server: Server, timeout: str = "2s"):
    rig_file = tmp_path / "rig.toml"
    rig_file.write_text(RIG.format(endpoint=server.bound_endpoint, timeout=timeout))
    thread = _serve_in_thread(server)
    try:
        return run_rig(load_and_check(rig_file), tmp_path / "out")
    finally:
        server.stop()
        thread.join(5)


def test_orchestrator_drops_garbage_replies_and_runs_on(tmp_path, caplog):
    from faulty import Healthy

    server = RogueServer(Healthy, f"ipc://{tmp_path}/rogue.sock", context=zmq.Context())
    with caplog.at_level(logging.WARNING, logger="moonpool.remote"):
        result = _run(tmp_path, server)
    assert result.summary["status"] == "ok", result.summary["error"]
    rogue = result.summary["components"]["rogue"]
    assert rogue["steps"] == 50
    # 3 random frames per request; some random bytes happen to parse as a Reply
    # (protobuf accepts many byte strings) and are dropped as stale instead.
    assert rogue["rejected_frames"] > 50
    assert "rejected a frame" in caplog.text


def test_orchestrator_fails_cleanly_when_only_garbage_comes_back(tmp_path):
    from faulty import Healthy

    server = RogueServer(Healthy, f"ipc://{tmp_path}/rogue.sock", context=zmq.Context(),
                         only_garbage=True)
    t0 = time.monotonic()
    result = _run(tmp_path, server, timeout="1s")
    assert time.monotonic() - t0 < 10
    assert result.summary["status"] == "failed"
    assert "rogue" in result.summary["error"] and "no answer to configure" in result.summary["error"]
