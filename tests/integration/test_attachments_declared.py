"""Attachments only on ports declared to carry them (issue 24, point 9).

The SDK took an attachment on any input port: the component then met an ``Attached``
where it expected a message, raised AttributeError and failed with STEP_FAILED,
where protocol.md says INVALID_INPUT with the state unchanged; and through the
orchestrator the innocent consumer was blamed for what its source sent. A port now
declares ``attachment`` (Port(..., attachment=True), PortSpec.attachment)."""

from __future__ import annotations

import zmq
from served import replaced, run_against, serving

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2


def test_an_attachment_on_a_plain_input_is_invalid_input_and_changes_nothing():
    from probes import Probe

    with serving(Probe) as server:
        _plain_input_attachment(server)


def _plain_input_attachment(server) -> None:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(server.bound_endpoint)
    rid = 0

    def call(body, msg, frames=()):
        nonlocal rid
        rid += 1
        req = lc.Request(protocol_version=1, request_id=rid)
        getattr(req, body).CopyFrom(msg)
        sock.send_multipart([wire.serialize(req), *frames])
        assert sock.poll(10_000), f"no answer to {body}"
        return lc.Reply.FromString(sock.recv_multipart()[0])

    try:
        assert call("configure", lc.Configure(instance_name="probe")).WhichOneof("body") == "ack"
        assert call("initialize", lc.Initialize()).WhichOneof("body") == "initialized"
        value = signals_pb2.Signals()
        value.signals.add(name="k", value=1.0)
        pv = lc.PortValue(port="in", type="moonpool.v1.Signals",
                          payload=value.SerializeToString(), attachment=1)
        reply = call("step", lc.Step(time_ns=0, step_ns=10**7, inputs=[pv]), [b"\0" * 64])
        assert reply.WhichOneof("body") == "error", reply
        assert reply.error.code == lc.ERROR_CODE_INVALID_INPUT, reply.error
        assert "does not take attachments" in reply.error.message
        # State unchanged: the same step without the attachment goes through.
        pv.attachment = 0
        reply = call("step", lc.Step(time_ns=0, step_ns=10**7, inputs=[pv]))
        assert reply.WhichOneof("body") == "step_result", reply
        assert reply.step_result.outputs[0].port == "seen"
    finally:
        sock.close(0)


def _attaching(reply: lc.Reply, frames: list) -> list:
    """A rewrite: the first output of every StepResult gets an attachment."""
    if reply.WhichOneof("body") != "step_result" or not reply.step_result.outputs:
        return frames
    reply.step_result.outputs[0].attachment = 1
    return replaced(frames, reply, b"\0" * 1000)


RIG = """
[run]
until = "0.1s"
plots = false
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 100
[components.probe]
entry = "probes:Probe"
rate_hz = 100
[[connections]]
from = "far.out"
to = "probe.in"
"""


def test_the_orchestrator_blames_the_sender_of_an_undeclared_attachment(tmp_path):
    from probes import Count
    from moonpool.orchestrator.recording import read_recording

    with serving(Count, _attaching) as server:
        s = run_against(server, RIG, tmp_path)
    assert s["status"] == "failed" and s["failed_component"] == "far", s
    assert "attachment on output 'out'" in s["error"], s["error"]
    assert all(m.attachment is None for m in read_recording(tmp_path / "out" / "recording.mcap"))


WIRING = """
[run]
until = "0.1s"
plots = false
[components.camera]
entry = "replay_sources:Camera"
rate_hz = 10
[components.probe]
entry = "probes:ImageSink"
rate_hz = 10
[[connections]]
from = "camera.image"
to = "probe.in"
"""


def test_an_attachment_output_into_a_plain_input_is_a_wiring_error(tmp_path):
    """Caught before anything runs, naming both ends, rather than at the first frame."""
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig = tmp_path / "rig.toml"
    rig.write_text(WIRING)
    result = run_rig(load_and_check(rig), tmp_path / "out")
    s = result.summary
    assert s["status"] == "failed", s
    assert "carries attachments" in s["error"] and "'probe'" in s["error"], s["error"]
