"""The hand-built Step / StepBatch requests and their results (components/sdk/wire.py,
"hot-path encoding") are byte for byte the protobuf library's deterministic
serialization of the same messages, so the wire is unchanged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from moonpool.components.sdk import Attached, Component, Port, wire
from moonpool.components.sdk.serve import Server
from moonpool.orchestrator.adapters.base import Sample
from moonpool.orchestrator.adapters.remote import StepEncoder
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2, vision_pb2

INT64 = st.integers(-(2**63), 2**63 - 1)
NAMES = st.text(min_size=0, max_size=12)


@given(st.integers(0, 2**64 - 1))
def test_varint_of_unsigned_fields(n):
    assert lc.Request(request_id=n).SerializeToString() == (b"\x10" + wire.varint(n) if n else b"")


@given(INT64)
def test_varint_of_signed_fields(n):
    assert lc.Step(time_ns=n).SerializeToString() == (wire.K_TIME + wire.varint(n) if n else b"")


@given(NAMES, NAMES, st.binary(max_size=300), st.integers(0, 2**32 - 1))
def test_port_value(port, type_name, payload, attachment):
    expected = lc.PortValue(port=port, type=type_name, payload=payload, attachment=attachment)
    got = wire.port_value(wire.port_value_prefix(port, type_name), payload, attachment)
    assert got == wire.serialize(expected)


_sample = st.builds(Sample, st.sampled_from(["out", "y"]),
                    st.sampled_from(["moonpool.v1.Signals", "moonpool.v1.Wrench"]),
                    st.binary(max_size=200), st.one_of(st.none(), st.binary(max_size=20)))
_inputs = st.dictionaries(st.sampled_from(["in", "b", "queue", "ü"]),
                          st.one_of(_sample, st.lists(_sample, max_size=3)), max_size=4)


@settings(max_examples=200)
@given(st.lists(st.tuples(INT64, INT64, _inputs), min_size=1, max_size=4))
def test_step_encoder_matches_the_library(steps):
    encoder = StepEncoder()  # one encoder, several steps: its caches must not leak
    for t_ns, dt_ns, inputs in steps:
        frames: list = []
        got = encoder.step(t_ns, dt_ns, inputs, frames)
        expected = lc.Step(time_ns=t_ns, step_ns=dt_ns)
        attachments = []
        for port, value in inputs.items():
            for s in value if isinstance(value, list) else (value,):
                pv = expected.inputs.add(port=port, type=s.type_name, payload=s.payload)
                if s.attachment is not None:
                    attachments.append(s.attachment)
                    pv.attachment = len(attachments)
        assert got == wire.serialize(expected)
        assert frames == attachments


class Camera(Component):
    """Two outputs, one of them with an attachment; fails on request."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("image", vision_pb2.ImageHeader, attachment=True),
               Port("out", signals_pb2.Signals))

    def step(self, t_ns, dt_ns, inputs):
        if "in" in inputs and inputs["in"].signals[0].value < 0:
            raise ValueError("negative")
        out = signals_pb2.Signals(header=self.header(t_ns))
        out.signals.add(name="t", value=t_ns)
        return {"out": out, "image": Attached(vision_pb2.ImageHeader(width=2, height=1), b"ab")}


def _group(*names: str) -> tuple[Server, list]:
    """A serve loop hosting a Camera per name, its socket replaced by a list of what it
    sends."""
    sent: list = []

    class Sock:
        def send_multipart(self, frames, copy=True):
            sent.append(frames)

        def close(self, linger=0):
            pass

    server = Server(None, f"inproc://test-wire-encoding-{len(sent)}-{id(sent)}",
                    components={name: Camera for name in names})
    server.sock.close(0)
    server.sock = Sock()
    return server, sent


def test_step_and_batch_replies_match_the_library():
    """What the serve loop sends for Step and StepBatch equals the Reply built with
    the library from the same outputs (compute_ns taken from the reply itself)."""
    server, sent = _group("a", "b", "c")

    def call(rid, body, payload, instance=""):
        req = lc.Request(protocol_version=1, request_id=rid, instance=instance)
        getattr(req, body).CopyFrom(payload)
        server._handle([b"peer", wire.serialize(req)])
        return sent[-1]

    for i, name in enumerate("abc"):
        call(1 + i, "configure", lc.Configure(instance_name=name), name)
        call(4 + i, "initialize", lc.Initialize(start_time_ns=0), name)

    def good(value):
        return lc.PortValue(port="in", type="moonpool.v1.Signals", payload=wire.serialize(
            signals_pb2.Signals(signals=[signals_pb2.Signal(name="k", value=value)])))

    # One member: Step -> StepResult.
    frames = call(10, "step", lc.Step(time_ns=5_000_000_000_000, step_ns=10**6,
                                      inputs=[good(1.0)]), "a")
    reply = lc.Reply.FromString(frames[1])
    expected = lc.Reply(protocol_version=1, request_id=10, instance="a")
    expected.step_result.CopyFrom(reply.step_result)  # compute_ns is a wall time
    assert frames[1] == wire.serialize(expected)
    assert [pv.port for pv in reply.step_result.outputs] == ["image", "out"]
    assert reply.step_result.outputs[0].attachment == 1 and frames[2:] == [b"ab"]

    # A batch: one member fails (an error entry), the others step; attachments count
    # across the whole reply.
    batch = lc.StepBatch()
    for name, value in (("b", 1.0), ("a", -1.0), ("c", 2.0)):
        item = batch.steps.add(instance=name)
        item.step.time_ns = 6_000_000_000_000 + (value > 1)
        item.step.step_ns = 1
        item.step.inputs.append(good(value))
    frames = call(11, "step_batch", batch)
    reply = lc.Reply.FromString(frames[1])
    results = reply.step_batch_result.results
    assert [r.WhichOneof("body") for r in results] == ["result", "error", "result"]
    assert results[1].error.code == lc.ERROR_CODE_STEP_FAILED
    assert results[1].error.component == "a"
    indices = [pv.attachment for r in (results[0], results[2]) for pv in r.result.outputs]
    assert indices == [1, 0, 2, 0]
    assert frames[2:] == [b"ab", b"ab"]
    expected = lc.Reply(protocol_version=1, request_id=11)
    expected.step_batch_result.CopyFrom(reply.step_batch_result)
    assert frames[1] == wire.serialize(expected)


def test_a_batch_naming_a_member_twice_is_refused_before_stepping():
    """Issue 24, point 7: a StepBatch steps each hosted component at most once."""
    server, sent = _group("a", "b")
    for rid, body, payload, name in ((1, "configure", lc.Configure(instance_name="a"), "a"),
                                     (2, "initialize", lc.Initialize(), "a")):
        req = lc.Request(protocol_version=1, request_id=rid, instance=name)
        getattr(req, body).CopyFrom(payload)
        server._handle([b"peer", wire.serialize(req)])
    batch = lc.StepBatch(steps=[lc.InstanceStep(instance="a", step=lc.Step(time_ns=0, step_ns=1)),
                                lc.InstanceStep(instance="a", step=lc.Step(time_ns=1, step_ns=1))])
    server._handle([b"peer", wire.serialize(lc.Request(protocol_version=1, request_id=3,
                                                       step_batch=batch))])
    reply = lc.Reply.FromString(sent[-1][1])
    assert reply.error.code == lc.ERROR_CODE_INVALID_INPUT, reply
    assert "names a component twice" in reply.error.message
    assert server.hosts["a"]._last_end_ns == 0  # nothing was stepped
