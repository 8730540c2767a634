"""`moonpool serve` says when a session starts and ends (issue 22), so whoever watches
a served component knows an orchestrator is driving it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import zmq
from served import serve_process

from conftest import RIGS, ROOT, moonpool


def test_serve_logs_session_start_and_end(tmp_path):
    endpoint = f"ipc://{tmp_path}/pressure.sock"
    server = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "serve", "quickstart.pressure",
         "--bind", endpoint, "--once"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ))
    try:
        deadline = time.time() + 30
        while not (tmp_path / "pressure.sock").exists() and time.time() < deadline:
            time.sleep(0.05)
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1", "--quiet",
                        "--out", str(tmp_path / "out"), "--set", "components.sensor.run=remote",
                        "--set", f'components.sensor.endpoint="{endpoint}"')
        assert proc.returncode == 0, proc.stderr
        _, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert "session 1 started: sensor configured by an orchestrator" in err, err
    assert "session 1 ended after" in err and "terminated" in err, err
    assert err.index("started") < err.index("ended")


# -- session squatting (issue 24, point 4) -----------------------------------------------

SQUAT_RIG = """
[run]
until = "0.1s"
plots = false
heartbeat_interval = "0.2s"
peer_timeout = "1s"
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 50
setup_timeout = "5s"
[components.far.parameters]
at_step = -1
"""


@pytest.mark.parametrize("peer_timeout_ns", [-1, 0, 2**62])
def test_a_squatter_cannot_hold_a_server_nor_be_blamed(tmp_path, peer_timeout_ns):
    """A Configure with a peer timeout of 0 or less (or a huge one), then silence,
    left `moonpool serve` BUSY until restarted, and the next run's error named the
    instance the squatter chose. Now the timeout is checked before it takes effect
    (0: the server's limit; negative or above it: INVALID_PARAMETER), the squatter's
    session expires after the server's limit, and BUSY names no instance."""
    from moonpool.components.sdk import wire
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig
    from moonpool.v1 import lifecycle_pb2 as lc

    server = serve_process(tmp_path, "faulty:Healthy", "--max-peer-timeout", "1.5")
    endpoint, log = server.endpoint, server.log
    try:
        squatter = zmq.Context.instance().socket(zmq.DEALER)
        squatter.setsockopt(zmq.LINGER, 0)
        squatter.connect(endpoint)
        req = lc.Request(protocol_version=1, request_id=1)
        req.configure.CopyFrom(lc.Configure(instance_name="thruster_evil",
                                            peer_timeout_ns=peer_timeout_ns))
        squatter.send(wire.serialize(req))
        assert squatter.poll(10_000)
        reply = lc.Reply.FromString(squatter.recv())
        squatter.close(0)  # and goes away
        if peer_timeout_ns:
            assert reply.error.code == lc.ERROR_CODE_INVALID_PARAMETER, reply
            assert "peer_timeout_ns" in reply.error.message
        else:
            assert reply.WhichOneof("body") == "ack", reply

        rig = tmp_path / "rig.toml"
        rig.write_text(SQUAT_RIG.format(endpoint=endpoint))
        busy = run_rig(load_and_check(rig), tmp_path / "busy").summary
        assert busy["status"] == "failed" and busy["failed_component"] == "far", busy
        assert "serving another orchestrator" in busy["error"], busy["error"]
        assert "thruster_evil" not in busy["error"], busy["error"]

        deadline = time.monotonic() + 15  # the limit is 1.5 s
        while "session 1 ended" not in log.read_text():
            assert time.monotonic() < deadline, "the squatter's session never expired"
            time.sleep(0.1)
        ok = run_rig(load_and_check(rig), tmp_path / "ok").summary
        assert ok["status"] == "ok", ok
    finally:
        text = server.close()
    assert "Traceback" not in text
