"""Bounded memory before (and after) authentication (issue 24, point 1): every moonpool
socket sets ZMQ_MAXMSGSIZE, so a frame declaring more than ``max_message_bytes`` closes
the connection before anything is allocated.

A real `moonpool serve` with CURVE on a loopback port; its RSS is read from /proc. Each
attacking connection declares a 700 MB frame and pushes 32 MB of it (the server would
buffer all of it without the limit): memory and time stay small."""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

import pytest
import zmq
from served import replaced, run_against, serve_process, serving

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import ProtocolError
from moonpool.components.sdk.security import ClientSecurity, generate_keys
from moonpool.orchestrator.adapters.remote import RemoteAdapter
from moonpool.v1 import lifecycle_pb2 as lc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc RSS")

MB = 2**20


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture()
def served(tmp_path):
    keys = tmp_path / "keys"
    for name in ("server", "orchestrator"):
        generate_keys(name, keys)
    server = serve_process(tmp_path, "faulty:Healthy", "--key", str(keys / "server.key_secret"),
                           "--allow", str(keys / "orchestrator.key"))
    try:
        yield server.proc, server.endpoint, keys, server.log
    finally:
        server.close()


def _greeting() -> bytes:
    """A ZMTP 3.0 greeting asking for CURVE, as a client (RFC 23)."""
    return (b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\0")
            + b"\x00" + b"\0" * 31)


def _describe(endpoint: str, keys: Path) -> lc.Reply:
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    ClientSecurity.from_files(keys / "server.key", keys / "orchestrator.key_secret").apply(sock)
    sock.connect(endpoint)
    try:
        req = lc.Request(protocol_version=1, request_id=1)
        req.describe.SetInParent()
        sock.send(wire.serialize(req))
        assert sock.poll(10_000), "the server did not answer Describe"
        return lc.Reply.FromString(sock.recv())
    finally:
        sock.close(0)


def test_keyless_huge_frames_do_not_grow_the_server(served):
    proc, endpoint, keys, log = served
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    time.sleep(0.5)
    idle = _rss_mb(proc.pid)
    chunk = b"\0" * MB
    conns = []
    for _ in range(4):
        s = socket.create_connection((host, int(port)), timeout=10)
        conns.append(s)
        try:
            # A command frame (flags 0x06: command, 8-byte size) declaring 700 MB.
            s.sendall(_greeting() + b"\x06" + struct.pack(">Q", 700 * 10**6))
            for _ in range(32):
                s.sendall(chunk)
        except OSError:  # the server closed the connection: what the limit does
            pass
    time.sleep(0.5)
    grown = _rss_mb(proc.pid) - idle
    for s in conns:
        s.close()
    assert grown < 50, f"server RSS grew by {grown:.0f} MB (idle {idle:.0f} MB)"
    assert _describe(endpoint, keys).HasField("description")  # still serving
    assert "Traceback" not in log.read_text()


def test_authorised_oversize_frame_is_refused_clearly(served):
    proc, endpoint, keys, log = served
    security = ClientSecurity.from_files(keys / "server.key", keys / "orchestrator.key_secret")
    adapter = RemoteAdapter("camera", endpoint, step_timeout_ns=5 * 10**9,
                            setup_timeout_ns=10 * 10**9, security=security,
                            max_message_bytes=wire.DEFAULT_MAX_MESSAGE_BYTES)
    try:
        assert adapter.describe().outputs
        with pytest.raises(ProtocolError, match="max_message_bytes") as err:
            adapter.send_encoded("step", wire.K_STEP, b"", 5.0, [b"\0" * (17 * MB)])
        assert err.value.component == "camera" and err.value.fix
    finally:
        adapter.close()
    # A peer that sends it anyway (an authorised raw socket) is disconnected; the
    # server stays small and serves the next one.
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    security.apply(sock)
    sock.connect(endpoint)
    idle = _rss_mb(proc.pid)
    time.sleep(0.5)
    closed = log.read_text().count("a connection closed")
    try:
        sock.send(b"\0" * (40 * MB))
        time.sleep(1.0)
        assert _rss_mb(proc.pid) - idle < 30
        # The server dropped it (this side has not closed): the log says so, naming the
        # limit (a frame dropped for size left no line before).
        lines = log.read_text().split("\n")
        dropped = [x for x in lines if "a connection closed" in x]
        assert len(dropped) > closed, lines[-5:]
        assert f"--max-message-bytes ({wire.DEFAULT_MAX_MESSAGE_BYTES} bytes)" in dropped[-1]
    finally:
        sock.close(0)
    assert _describe(endpoint, keys).HasField("description")
    assert "Traceback" not in log.read_text()


# -- untrusted Terminated.metrics_json (issue 24, point 2) ------------------------------

RIG = """
[run]
until = "0.2s"
[components.src]
entry = "faulty:Healthy"
rate_hz = 100
[components.src.parameters]
at_step = -1
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 50
"""


def _metrics(metrics_json: str):
    """A rewrite: Terminated replies carry ``metrics_json`` instead."""

    def rewrite(reply: lc.Reply, frames: list) -> list:
        if reply.WhichOneof("body") != "terminated":
            return frames
        reply.terminated.metrics_json = metrics_json
        return replaced(frames, reply)

    return rewrite


@pytest.mark.parametrize("metrics_json", ["{", "[" * 5000 + "]" * 5000, '"a string"'])
def test_malformed_metrics_fail_the_run_cleanly(tmp_path, metrics_json):
    from faulty import Healthy
    from moonpool.orchestrator.recording import read_recording

    with serving(Healthy, _metrics(metrics_json)) as server:
        s = run_against(server, RIG, tmp_path)
    assert s["status"] == "failed" and "component 'far'" in s["error"], s["error"]
    assert "metrics_json" in s["error"] and "far" not in s["metrics"]
    assert s["failed_component"] == "far"  # not null (noticed by the last session)
    assert (tmp_path / "out" / "summary.json").exists()
    mcap = tmp_path / "out" / "recording.mcap"
    assert mcap.read_bytes().endswith(b"\x89MCAP0\r\n")  # finalised: footer and magic
    assert sum(1 for _ in read_recording(mcap)) > 0


def test_a_forged_instance_name_cannot_forge_a_server_log_line(served):
    """Issue 24, point 12: a newline in Configure.instance_name wrote a forged line."""
    proc, endpoint, keys, log = served
    forged = "c\n[x INFO] accepted a connection from the holder of admin.key"
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    ClientSecurity.from_files(keys / "server.key", keys / "orchestrator.key_secret").apply(sock)
    sock.connect(endpoint)
    try:
        for rid, body, msg in ((1, "configure", lc.Configure(instance_name=forged)),
                               (2, "terminate", lc.Terminate())):
            req = lc.Request(protocol_version=1, request_id=rid)
            getattr(req, body).CopyFrom(msg)
            sock.send(wire.serialize(req))
            assert sock.poll(10_000)
            sock.recv()
    finally:
        sock.close(0)
    deadline = time.monotonic() + 10
    while "session ended" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    lines = log.read_text().splitlines()
    assert not any(line.startswith("[x INFO]") for line in lines), lines
    assert any("c\\n[x INFO] accepted" in line for line in lines), lines


# -- remote text (issue 24, point 8) -----------------------------------------------------


def _blaming():
    """A rewrite: the third StepResult becomes an Error blaming another component, its
    text full of terminal escapes."""
    steps = [0]

    def rewrite(reply: lc.Reply, frames: list) -> list:
        if reply.WhichOneof("body") != "step_result":
            return frames
        steps[0] += 1
        if steps[0] != 3:
            return frames
        reply = lc.Reply(protocol_version=1, request_id=reply.request_id)
        reply.error.code = lc.ERROR_CODE_STEP_FAILED
        reply.error.component = "../../etc\x1b[2J"
        reply.error.message = "boom\x1b]0;pwned\x07\n[INFO] all good\x1b[31m"
        reply.error.fix = "relax\x1b[0m"
        return replaced(frames, reply)

    return rewrite


def test_remote_error_text_is_sanitised_and_cannot_blame_another(tmp_path):
    import json

    from faulty import Healthy

    with serving(Healthy, _blaming()) as server:
        s = run_against(server, RIG, tmp_path)
    assert s["status"] == "failed" and s["failed_component"] == "far", s
    assert "'../../etc\\x1b[2J'" in s["error"] and "\\n[INFO] all good" in s["error"]
    text = (tmp_path / "out" / "summary.json").read_text()
    assert not any(ord(c) < 32 and c != "\n" for c in json.loads(text)["error"])
    assert "\\u001b" not in text and "\x1b" not in text


# -- untrusted Initialize outputs (issue 24, point 13) -----------------------------------


def _garbling(body: str):
    """A rewrite: the first output of every reply of kind ``body`` gets a payload that
    does not parse."""

    def rewrite(reply: lc.Reply, frames: list) -> list:
        outputs = getattr(reply, body).outputs if reply.WhichOneof("body") == body else None
        if not outputs:
            return frames
        outputs[0].payload = b"\xff\xff\xff"
        return replaced(frames, reply)

    return rewrite


GARBLE_RIG = """
[run]
until = "0.1s"
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 100
[components.far.parameters]
initial_output = true
"""


@pytest.mark.parametrize("body", ["initialized", "step_result"])
def test_an_unparseable_output_fails_the_run_naming_its_sender(tmp_path, body):
    """An Initialize output that does not parse was recorded with status ok; now it
    fails the run like a Step output, naming the component, and is not recorded."""
    from probes import Count
    from moonpool.orchestrator.recording import read_recording

    with serving(Count, _garbling(body)) as server:
        s = run_against(server, GARBLE_RIG, tmp_path)
    assert s["status"] == "failed" and s["failed_component"] == "far", s
    assert "output 'out' that is not a valid moonpool.v1.Signals" in s["error"], s["error"]
    recorded = [m.payload for m in read_recording(tmp_path / "out" / "recording.mcap")]
    assert b"\xff\xff\xff" not in recorded


BIG_REPLY_RIG = """
[run]
until = "1s"
plots = false
max_message_bytes = 20000
peer_timeout = "2s"
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 10
[components.far.parameters]
at_step = 3
size_bytes = 100000
"""


def test_a_reply_larger_than_max_message_bytes_fails_the_run_naming_the_component(tmp_path):
    """A served component answers a step with a 100 kB frame, the orchestrator accepts
    20 kB: libzmq drops the connection (and does not reconnect). The run used to hang in
    the next send (a heartbeat) for ever, a second Ctrl-C ending it with the user
    blamed; now the send fails after the peer timeout, the run fails naming the
    component and the limit, and the summary and recording are kept."""
    from faulty import BigReply
    from moonpool.orchestrator.recording import read_recording

    t0 = time.monotonic()
    with serving(BigReply) as server:
        s = run_against(server, BIG_REPLY_RIG, tmp_path)
    assert time.monotonic() - t0 < 60  # (a hang is the failure: not a speed figure)
    assert s["status"] == "failed" and s["failed_component"] == "far", s
    assert "was dropped and did not come back within 2 s" in s["error"], s["error"]
    assert "run.max_message_bytes (20000 bytes)" in s["error"]
    assert "raise run.max_message_bytes" in s["error"]
    assert (tmp_path / "out" / "summary.json").exists()
    assert sum(1 for _ in read_recording(tmp_path / "out" / "recording.mcap")) >= 3
