"""Amplification and starvation (issue 24, point 7).

A 10.5 MB StepBatch of 1 M items made a single-component `moonpool serve` step its
component a million times: a 146 MB reply (refused by the frame limit only once it
was built), 745 MB RSS and 5.1 s of CPU during which the single-threaded server
answered nobody else. A StepBatch may now list each hosted component once; Step
inputs, parameter lists and the problems an Error lists are capped; and an operator
can give each session a CPU budget (--session-cpu-budget).

A real `moonpool serve` on a loopback port; CPU and memory read from /proc."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import zmq
from served import serve_process

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc figures")


def _proc(pid: int) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of a process."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return cpu, int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


class _Served:
    """`moonpool serve ENTRY OPTIONS` and a request at a time to it."""

    def __init__(self, tmp_path: Path, entry: str, *options: str) -> None:
        self.server = serve_process(tmp_path, entry, *options)
        self.proc, self.endpoint = self.server.proc, self.server.endpoint
        self.rid = 0

    def socket(self) -> zmq.Socket:
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, -1)  # to see a reply of any size
        sock.connect(self.endpoint)
        return sock

    def call(self, sock: zmq.Socket, body: str, msg) -> tuple[lc.Reply, int]:
        self.rid += 1
        req = lc.Request(protocol_version=1, request_id=self.rid)
        getattr(req, body).CopyFrom(msg)
        sock.send(wire.serialize(req))
        assert sock.poll(120_000), f"no answer to {body}"
        frames = sock.recv_multipart()
        return lc.Reply.FromString(frames[0]), sum(len(f) for f in frames)

    def close(self) -> str:
        return self.server.close()


def _configure(**params) -> lc.Configure:
    msg = lc.Configure(instance_name="c", peer_timeout_ns=10**10)
    for name, value in params.items():
        msg.parameters.add(name=name, value=wire.to_parameter_value(value))
    return msg


def test_a_million_item_step_batch_is_refused_before_anything_is_stepped(tmp_path):
    served = _Served(tmp_path, "faulty:Healthy")
    sock = served.socket()
    try:
        assert served.call(sock, "configure", _configure(at_step=-1))[0].HasField("ack")
        assert served.call(sock, "initialize", lc.Initialize())[0].HasField("initialized")
        # The attack's request, encoded by hand (a million protobuf objects here would
        # cost the test what it costs the server): InstanceStep{instance "", Step{t, dt}}.
        step = wire.K_TIME + wire.varint(10**9) + wire.K_STEP_NS + wire.varint(10)
        item = wire.K_ITEM_BODY + wire.varint(len(step)) + step
        served.rid += 1

        def envelope(n: int) -> bytes:
            batch = (wire.K_ITEM + wire.varint(len(item)) + item) * n
            return b"".join((wire.request_head(served.rid), wire.K_STEP_BATCH,
                             wire.varint(len(batch)), batch))

        assert len(lc.Request.FromString(envelope(3)).step_batch.steps) == 3  # well formed
        size = len(envelope(1_000_000))
        cpu0, _ = _proc(served.proc.pid)
        sock.send(envelope(1_000_000))
        assert sock.poll(120_000), "no answer to the StepBatch"
        frames = sock.recv_multipart()
        reply, reply_bytes = lc.Reply.FromString(frames[0]), sum(len(f) for f in frames)
        cpu1, peak_mb = _proc(served.proc.pid)
        print(f"\nStepBatch of 1,000,000 items, {size / 1e6:.1f} MB: reply {reply_bytes} bytes, "
              f"server CPU {cpu1 - cpu0:.2f} s, peak RSS {peak_mb:.0f} MB")
        assert reply.WhichOneof("body") == "error", reply
        assert reply.error.code == lc.ERROR_CODE_INVALID_INPUT, reply.error
        assert "1000000 steps for an endpoint hosting 1 component" in reply.error.message
        assert reply_bytes < 4096
        assert peak_mb < 400  # 745 MB before: the whole reply was built
        # Nothing was stepped: the component is at its first step still.
        step = lc.Step(time_ns=0, step_ns=10)
        reply, _ = served.call(sock, "step", step)
        assert reply.step_result.outputs[0].payload  # k = 1: its first step
    finally:
        sock.close(0)
        log = served.close()
    assert "Traceback" not in log


def test_parameter_floods_get_a_small_answer(tmp_path):
    """100,000 unknown parameters: one short INVALID_PARAMETER, not a 100,000-line
    error (each with a did-you-mean search)."""
    served = _Served(tmp_path, "faulty:Healthy")
    sock = served.socket()
    try:
        flood = _configure(**{f"p{k}": 1 for k in range(100_000)})
        reply, reply_bytes = served.call(sock, "configure", flood)
        assert reply.error.code == lc.ERROR_CODE_INVALID_PARAMETER, reply
        assert reply_bytes < 4096, reply_bytes
        few = _configure(**{f"p{k}": 1 for k in range(50)})
        sock2 = served.socket()
        served.call(sock, "terminate", lc.Terminate())
        reply, reply_bytes = served.call(sock2, "configure", few)
        assert reply.error.code == lc.ERROR_CODE_INVALID_PARAMETER, reply
        assert "and 30 more" in reply.error.message and reply_bytes < 4096
        sock2.close(0)
    finally:
        sock.close(0)
        served.close()


def test_a_session_past_its_cpu_budget_is_ended_and_the_next_one_served(tmp_path):
    served = _Served(tmp_path, "faulty:Spins", "--session-cpu-budget", "0.3")
    hog, other = served.socket(), served.socket()
    try:
        assert served.call(hog, "configure", _configure(at_step=0, spin_s=0.1))[0].HasField("ack")
        served.call(hog, "initialize", lc.Initialize())
        replies = [served.call(hog, "step", lc.Step(time_ns=10 * k, step_ns=10))[0]
                   for k in range(8)]
        kinds = [r.WhichOneof("body") for r in replies]
        assert "error" in kinds, kinds
        first = kinds.index("error")
        assert 3 <= first <= 5, kinds  # 0.1 s of CPU per step against a 0.3 s budget
        assert "budget" in replies[first].error.message, replies[first].error
        # The session is over: another orchestrator is served at once.
        reply, _ = served.call(other, "configure", _configure(at_step=-1))
        assert reply.HasField("ack"), reply
    finally:
        hog.close(0)
        other.close(0)
        log = served.close()
    assert "CPU budget used up" in log
