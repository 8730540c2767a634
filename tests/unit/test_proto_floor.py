"""benchmarks/proto_floor.py: the protocol floor speaks the real protocol (its requests
and replies are the bytes protobuf makes of the same messages) and its processes answer
(nothing here asserts how fast)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("proto_floor", ROOT / "benchmarks" / "proto_floor.py")
pf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pf)

WRENCH = "moonpool.v1.Wrench"


def _wrench(x: float) -> bytes:
    w = vehicle_pb2.Wrench()
    w.header.sim_time_ns, w.header.source = 7_000_000, "f"
    w.force_n.x, w.torque_nm.z = x, -2.5
    return w.SerializeToString()


def test_its_step_request_is_protobufs_encoding_of_the_same_request():
    payload = _wrench(1.5)
    for request_id, t_ns, p in ((1, 0, b""), (300, 20_000_000_000, payload)):
        expected = lc.Request(protocol_version=wire.PROTOCOL_VERSION, request_id=request_id)
        expected.step.time_ns, expected.step.step_ns = t_ns, 1_000_000
        if p:
            expected.step.inputs.add(port="in", type=WRENCH, payload=p)
        assert pf.step_request(request_id, t_ns, p) == expected.SerializeToString()


def test_a_component_answers_with_its_input_passed_on_as_a_step_result():
    reply = lc.Reply.FromString(pf.answer(pf.step_request(42, 5_000_000, _wrench(1.5)), seq=3))
    assert reply.protocol_version == wire.PROTOCOL_VERSION and reply.request_id == 42
    result = reply.step_result
    assert result.time_ns == 5_000_000 and len(result.outputs) == 1
    out = result.outputs[0]
    assert (out.port, out.type) == ("out", WRENCH)
    y = vehicle_pb2.Wrench.FromString(out.payload)
    assert (y.force_n.x, y.torque_nm.z) == (2.5, -2.5)  # the trivial model: x + 1, copies
    assert (y.header.sim_time_ns, y.header.seq, y.header.source) == (6_000_000, 3, "f")
    expected = lc.Reply(protocol_version=wire.PROTOCOL_VERSION, request_id=42)
    expected.step_result.time_ns = 5_000_000
    expected.step_result.outputs.add(port="out", type=WRENCH, payload=out.payload)
    assert pf.answer(pf.step_request(42, 5_000_000, _wrench(1.5)), seq=3) == \
        expected.SerializeToString()
    canned = lc.Reply.FromString(pf.canned_reply())
    assert canned.WhichOneof("body") == "step_result"
    assert vehicle_pb2.Wrench.FromString(canned.step_result.outputs[0].payload).force_n.x == 1.0


def test_both_floors_run_with_real_processes():
    for canned in (False, True):
        wall_us, cpu_us = pf.proto_tick_us(2, 50, canned=canned)
        assert wall_us > 0 and cpu_us > 0
