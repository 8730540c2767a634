"""Heartbeats both ways: the orchestrator keeps idle components alive while it
waits on a slow one, and a component ends its session when the orchestrator
falls silent for its peer timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import zmq

from conftest import ROOT, SUPPORT, moonpool
from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc

pytestmark = pytest.mark.slow

RIG = """
[run]
until = "0.5s"
heartbeat_interval = "0.2s"
peer_timeout = "{peer_timeout}"

[components.idle]
entry = "faulty:Healthy"
run = "process"
rate_hz = 2
[components.idle.parameters]
at_step = -1

[components.slow]
entry = "faulty:Slow"
run = "process"
rate_hz = 10
step_timeout = "5s"
[components.slow.parameters]
at_step = 1
sleep_s = 0.8
"""


def test_idle_components_are_kept_alive_while_another_is_slow(tmp_path):
    # Three slow steps of 0.8 s each: the idle component hears nothing but
    # heartbeats for ~2.4 s, far beyond its 1 s peer timeout.
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG.format(peer_timeout="1s"))
    proc = moonpool("run", str(rig), "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "out" / "logs" / "idle.log").read_text()
    assert "no word from the orchestrator" not in log


def test_component_ends_its_session_when_the_orchestrator_falls_silent(tmp_path):
    endpoint = f"ipc://{tmp_path}/c.sock"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    log = open(tmp_path / "c.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.components.sdk.serve", "faulty:Healthy", "--bind", endpoint,
         "--once"], cwd=ROOT, env=env, stderr=log)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    try:
        req = lc.Request(protocol_version=1, request_id=1)
        req.configure.CopyFrom(lc.Configure(instance_name="c", peer_timeout_ns=500_000_000))
        sock.send(wire.serialize(req))
        assert sock.poll(10_000)
        assert lc.Reply.FromString(sock.recv()).WhichOneof("body") == "ack"
        silent_since = time.monotonic()
        proc.wait(10)
        took = time.monotonic() - silent_since
        assert 0.4 < took < 3.0
        assert "no word from the orchestrator" in (tmp_path / "c.log").read_text()
    finally:
        sock.close(0)
        if proc.poll() is None:
            proc.kill()
