"""Served components are confined to their folder (issue 24, point 6).

`moonpool serve` took any path an orchestrator gave: absolute and ``../`` paths were
accepted, `devices.camera` returned the pixels of any readable image on the server,
an error said whether a file existed, and `fmu` loaded native code from any `.fmu`.
Now every path parameter must resolve inside the served folder (components/sdk/
confine.py), devices must be allowed by the operator (--device), and a refusal reads
the same whether or not the path exists.

The unit part configures every registered component through a confined host with
each escape; the integration part serves `devices.camera` from a real `moonpool
serve` process and drives it over a socket."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import cv2
import numpy as np
import pytest
import zmq
from served import serve_process

from moonpool.components.sdk import wire
from moonpool.components.sdk.confine import Confinement
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.loading import load_entry, registered
from moonpool.v1 import lifecycle_pb2 as lc


def _path_parameters(cls) -> list[str]:
    """The parameters of a component class that name files or devices."""
    hints = typing.get_type_hints(cls.Parameters)
    out = []
    for f in dataclasses.fields(cls.Parameters):
        t = hints.get(f.name)
        if t is Path or set(typing.get_args(t)) == {Path, type(None)} or f.metadata.get("device"):
            out.append(f.name)
    return out


COMPONENTS = sorted((entry, name) for entry in registered()
                    for name in _path_parameters(load_entry(entry)))


@pytest.fixture
def place(tmp_path):
    """A served folder and, beside it, a secret file and a symlink into it that leads out."""
    served, outside = tmp_path / "served", tmp_path / "outside"
    served.mkdir()
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"secret")
    (served / "out").symlink_to(outside, target_is_directory=True)
    return served, outside


def test_the_path_parameters_are_found():
    """Every shipped component with a file or device parameter is in the list below
    (a component that adds one is covered without editing this test)."""
    names = {entry for entry, _ in COMPONENTS}
    assert {"devices.camera", "devices.mcu_bridge", "fmu", "sources.signal",
            "vision.camera", "localization.localizer"} <= names, names


@pytest.mark.parametrize("entry, name", COMPONENTS)
def test_no_path_parameter_escapes_the_served_folder(place, entry, name):
    served, outside = place
    cls = load_entry(entry)

    def refusal(value: str) -> str:
        host = ComponentHost(cls(), confinement=Confinement.of(served))
        msg = lc.Configure(instance_name="c")
        msg.parameters.add(name=name, value=wire.to_parameter_value(value))
        with pytest.raises(ParameterError) as err:
            host.configure(msg)
        assert host.state == lc.COMPONENT_STATE_CREATED  # refused before the component ran
        return err.value.message.replace(value, "VALUE")

    escapes = [str(outside / "secret.png"), str(outside / "nothing.png"), "../outside/secret.png",
               "../outside/nothing.png", "out/secret.png", "out/nothing.png", "/etc/passwd"]
    if typing.get_type_hints(cls.Parameters)[name] is str:  # a device only: no file at all
        escapes += ["socket://127.0.0.1:9", "secret.png"]
    texts = {refusal(v) for v in escapes}
    # One wording whatever the path: whether it exists outside is not told.
    assert len(texts) == 1, texts
    text = texts.pop()
    assert ("is not a path inside the folder this server serves" in text
            or "is not a device this server may open" in text), text


def test_inside_paths_and_allowed_devices_resolve(place):
    served, _ = place
    (served / "scenes").mkdir()
    confinement = Confinement.of(served, devices=["/dev/ttyACM0"])
    assert confinement.path("p", "scenes/../scenes/a.toml") == served.resolve() / "scenes/a.toml"
    assert confinement.path("p", "/dev/ttyACM0") == Path("/dev/ttyACM0")
    assert confinement.device("port", "/dev/ttyACM0") == "/dev/ttyACM0"
    with pytest.raises(ParameterError):
        confinement.device("port", "/dev/ttyACM1")
    # --confine above --base-dir: a rig's "../fmus/x.fmu" from its folder stays inside.
    (served / "rigs").mkdir()
    wide = Confinement.of(served / "rigs", served)
    assert wide.path("fmu", "../fmus/x.fmu") == served.resolve() / "fmus/x.fmu"
    with pytest.raises(ParameterError):
        wide.path("fmu", "../../x.fmu")


# -- a real `moonpool serve devices.camera` ----------------------------------------------


def _image(level: int) -> np.ndarray:
    return np.full((12, 16, 3), level, np.uint8)


def test_a_served_camera_shows_only_the_images_of_its_folder(tmp_path, place):
    served, outside = place
    (served / "frames").mkdir()
    cv2.imwrite(str(served / "frames" / "a.png"), _image(40))
    (outside / "private").mkdir()
    cv2.imwrite(str(outside / "private" / "b.png"), _image(200))
    server = serve_process(tmp_path, "devices.camera", "--base-dir", str(served))
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    rid = 0

    def call(body: str, msg) -> tuple[lc.Reply, list]:
        nonlocal rid
        rid += 1
        req = lc.Request(protocol_version=1, request_id=rid)
        getattr(req, body).CopyFrom(msg)
        sock.send(wire.serialize(req))
        assert sock.poll(30_000), f"no answer to {body}"
        frames = sock.recv_multipart()
        return lc.Reply.FromString(frames[0]), frames[1:]

    def configure(source: str) -> lc.Reply:
        msg = lc.Configure(instance_name="camera", period_ns=10**8)
        for k, v in (("source", source), ("pacing", "step")):
            msg.parameters.add(name=k, value=wire.to_parameter_value(v))
        return call("configure", msg)[0]

    try:
        sock.connect(server.endpoint)
        for source in (str(outside / "private"), "../outside/private", "out/private"):
            reply = configure(source)
            assert reply.error.code == lc.ERROR_CODE_INVALID_PARAMETER, (source, reply)
            assert "is not a path inside the folder this server serves" in reply.error.message
            call("terminate", lc.Terminate())  # the refused Configure bound a session: end it
        assert configure("frames").HasField("ack")
        reply, frames = call("initialize", lc.Initialize())
        reply, frames = call("step", lc.Step(time_ns=0, step_ns=10**8))
        assert reply.HasField("step_result"), reply
        assert set(frames[0]) == {40}  # its own image, nothing else
        call("terminate", lc.Terminate())
    finally:
        sock.close(0)
        log = server.close()
    assert "Traceback" not in log
