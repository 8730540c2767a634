"""The protocol floor: the least a Python implementation of moonpool's step protocol
does per component step, on both ends of the round trip, for N components in N
processes over ipc (benchmarks/peers.py's ``proto`` and ``proto-canned`` rows).

Beside the pure-pyzmq echo floor (zmq_echo.py: bytes out, the same bytes back), it
adds only what the protocol itself asks of each side (docs/protocol.md), nothing of
moonpool's own bookkeeping (no time-outs, heartbeats, supervision, step times, input
checks, routing tables):

- the orchestrator: per component and tick a Step request, encoded with the same
  hand-written wire encoding as moonpool's hot path (components/sdk/wire.py), carrying
  the previous component's last output as its one input (a chain, Jacobi); the Reply
  parsed; its output payload parsed (it is untrusted); hashed into the stream digest
  (the real ``Digest``) and appended to a recording buffer (an MCAP message record's
  header and the payload);
- each component process (a ROUTER, as ``moonpool serve``): the Request parsed, its
  input payload parsed (a Wrench), a Wrench output built (header stamped, six values:
  the trivial FMU's copy of its inputs) and serialized, the StepResult and its envelope
  encoded by hand, sent. With ``canned`` it sends a reply encoded once instead: the
  best a compiled component could do (its own work then costs about what an echo's
  does), which leaves the orchestrator's side of the protocol alone above the echo.

No FMU is stepped: the trivial FMU's step is a copy.
"""

from __future__ import annotations

import struct
import sys
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zmq_echo import fan_out  # noqa: E402  (the same processes and sockets as the echo)

from moonpool.components.sdk import wire  # noqa: E402
from moonpool.orchestrator.recording.digest import Digest  # noqa: E402
from moonpool.v1 import lifecycle_pb2 as lc  # noqa: E402
from moonpool.v1 import vehicle_pb2  # noqa: E402

_IN = wire.port_value_prefix("in", "moonpool.v1.Wrench")
_OUT = wire.port_value_prefix("out", "moonpool.v1.Wrench")
_STEP_NS = 1_000_000
_RECORD_HEAD = struct.Struct("<BQHIQQ")  # MCAP Message: opcode, length, channel, seq, times


def _step_result(time_ns: int, payload: bytes) -> bytes:
    out = wire.port_value(_OUT, payload)
    time_field = (wire.K_TIME + wire.varint(time_ns)) if time_ns else b""
    return b"".join((time_field, wire.K_OUTPUT, wire.varint(len(out)), out))


def step_request(request_id: int, t_ns: int, payload: bytes) -> bytes:
    """A Request carrying a Step at ``t_ns`` of 1 ms, with ``payload`` (a Wrench) on
    input port ``in`` unless it is empty, encoded as moonpool's hot path does."""
    body = ((wire.K_TIME + wire.varint(t_ns)) if t_ns else b"") + wire.K_STEP_NS + \
        wire.varint(_STEP_NS)
    if payload:
        pv = wire.port_value(_IN, payload)
        body = b"".join((body, wire.K_INPUT, wire.varint(len(pv)), pv))
    return b"".join((wire.request_head(request_id), wire.K_STEP, wire.varint(len(body)), body))


def _reply(request_id: int, result: bytes) -> bytes:
    return b"".join((wire.request_head(request_id), wire.K_STEP, wire.varint(len(result)),
                     result))


def canned_reply() -> bytes:
    """The reply a ``canned`` component process sends to every request."""
    first = vehicle_pb2.Wrench(force_n={"x": 1.0})
    first.header.source = "f"
    return _reply(1, _step_result(_STEP_NS, first.SerializeToString()))


def answer(request: bytes, seq: int) -> bytes:
    """A component's reply to a Step request (the ``full`` component's work)."""
    wrench = vehicle_pb2.Wrench
    req = lc.Request()
    req.ParseFromString(request)
    step = req.step
    u = wrench.FromString(step.inputs[0].payload) if step.inputs else wrench()
    y = wrench()
    h = y.header
    h.sim_time_ns, h.source, h.seq = step.time_ns + step.step_ns, "f", seq
    f, m = u.force_n, u.torque_nm
    y.force_n.x, y.force_n.y, y.force_n.z = f.x + 1.0, f.y, f.z
    y.torque_nm.x, y.torque_nm.y, y.torque_nm.z = m.x, m.y, m.z
    return _reply(req.request_id, _step_result(step.time_ns, y.SerializeToString()))


def serve(endpoint: str, canned: bool) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    fixed = canned_reply()
    seq = 0
    while True:
        frames = sock.recv_multipart()
        if frames[1] == b"quit":
            return
        sock.send_multipart([frames[0], fixed if canned else answer(frames[1], seq)])
        seq += 1


def proto_tick_us(n: int, ticks: int, canned: bool = False) -> tuple[float, float]:
    """(wall, this process's CPU) µs per tick: one Step to each of n component
    processes, every Reply awaited and its output handled (see the module's docstring)."""
    digest = Digest()
    prefixes = [Digest.topic_prefix(f"/f{i}/out") for i in range(n)]
    record = bytearray()
    last = [b""] * n
    request_id = 0
    wrench = vehicle_pb2.Wrench

    def tick(socks: list[zmq.Socket], k: int) -> None:
        nonlocal request_id
        t = k * _STEP_NS
        for i, s in enumerate(socks):
            request_id += 1
            s.send(step_request(request_id, t, last[i - 1] if i else b""))
        for i, s in enumerate(socks):
            reply = lc.Reply()
            reply.ParseFromString(s.recv())
            payload = reply.step_result.outputs[0].payload
            wrench.FromString(payload)  # untrusted bytes: parsed before anything uses them
            digest.update_prefixed(prefixes[i], t + _STEP_NS, payload)
            record.extend(_RECORD_HEAD.pack(5, 22 + len(payload), i, k, t, t))
            record.extend(payload)
            if len(record) >= 1 << 20:
                record.clear()
            last[i] = payload

    with fan_out(n, __file__, "canned" if canned else "full") as socks:
        for k in range(ticks // 10 + 100):  # warm up (and wait for the binds)
            tick(socks, k)
        t0, c0 = time.perf_counter(), time.process_time()
        for k in range(ticks):
            tick(socks, k)
        return ((time.perf_counter() - t0) / ticks * 1e6,
                (time.process_time() - c0) / ticks * 1e6)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2] == "canned")
