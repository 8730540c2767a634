"""Local routes (components/sdk/localroutes.py): the command-line form, and the
execution's delivery rules as a group's server applies them."""

from __future__ import annotations

import pytest

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.localroutes import LocalRoute, LocalRouter
from moonpool.components.sdk.serve_cli import main as serve_main


class _Out:
    """A host Output's fields the router reads."""

    def __init__(self, port, payload, attachment=None):
        self.port, self.type_name, self.payload, self.attachment = (
            port, "moonpool.v1.Signals", payload, attachment)


def test_the_command_line_form_round_trips_and_bad_forms_are_refused():
    r = LocalRoute("vehicle", "state", "sensor", "state", 2_000_000)
    assert r.text() == "vehicle.state>sensor.state@2000000"
    assert LocalRoute.parse(r.text()) == r
    for bad in ("vehicle.state>sensor.state", "vehicle>sensor.state@0",
                "vehicle.state>sensor@0", "a.b>c.d@-1", "a.b>c.d@1 "):
        with pytest.raises(ParameterError, match="SOURCE.PORT>TARGET.PORT@DELAY_NS"):
            LocalRoute.parse(bad)


def test_held_queued_and_delayed_inputs_follow_the_execution():
    router = LocalRouter([LocalRoute("a", "out", "b", "held", 0),
                          LocalRoute("a", "out", "b", "queue", 0),
                          LocalRoute("a", "out", "c", "held", 5)])
    assert router.targets("b") and router.targets("c") and not router.targets("a")
    queued = frozenset({"queue"})
    # nothing yet: an ordinary input gives nothing, a queued one nothing either
    assert router.inputs("b", queued, 0, []) == []
    router.deliver("a", [_Out("out", b"1")], 10)  # a's step ending at 10
    router.deliver("a", [_Out("out", b"2"), _Out("other", b"x")], 20)
    assert router.inputs("b", queued, 9, []) == []  # not visible before 10
    got = router.inputs("b", queued, 20, [])
    assert [(v.port, v.payload) for v in got] == [("held", b"2"), ("queue", b"1"),
                                                  ("queue", b"2")]
    got = router.inputs("b", queued, 30, [])  # held again; the queue is empty now
    assert [(v.port, v.payload) for v in got] == [("held", b"2")]
    # c's connection has a delay of 5 ns: the message of 10 reaches it at 15
    assert router.inputs("c", frozenset(), 14, []) == []
    assert [v.payload for v in router.inputs("c", frozenset(), 25, [])] == [b"2"]


def test_attachments_are_numbered_after_the_request_frames():
    router = LocalRouter([LocalRoute("cam", "image", "check", "image", 0)])
    router.deliver("cam", [_Out("image", b"head", b"pixels")], 0)
    frames = [b"request frame"]
    (v,) = router.inputs("check", frozenset(), 0, frames)
    assert frames == [b"request frame", b"pixels"] and v.attachment == 2


def test_serve_refuses_a_route_that_names_no_member(capsys):
    code = serve_main(["--component", "v=quickstart.vehicle", "--component",
                       "s=quickstart.pressure", "--local-route", "v.state>x.state@0",
                       "--bind", "inproc://never"])
    assert code == 2
    assert "names x, not a --component of this group" in capsys.readouterr().err
    code = serve_main(["--component", "v=quickstart.vehicle", "--local-route", "v.state",
                       "--bind", "inproc://never"])
    assert code == 2
    assert "SOURCE.PORT>TARGET.PORT@DELAY_NS" in capsys.readouterr().err
