"""Process groups: several components in one child process, one StepBatch per
instant. Same stream as any other layout; faults still name the component."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import zmq

from conftest import RIGS, ROOT, SUPPORT, alive, moonpool
from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2

pytestmark = pytest.mark.slow

GROUPED = [
    "--set", "components.vehicle.run=process", "--set", "components.vehicle.group=loop",
    "--set", "components.sensor.run=process", "--set", "components.sensor.group=loop",
    "--set", "components.pid.run=process", "--set", "components.pid.group=control",
]


def _run(tmp_path, name, *args):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "quickstart.toml"), "--out", str(out), "--quiet",
                    "--until", "5", "--seed", "2", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


@pytest.mark.parametrize("algorithm", ["gauss-seidel", "jacobi"])
def test_groups_give_the_same_digest_as_in_process(tmp_path, algorithm):
    algo = ["--set", f"run.algorithm={algorithm}", "--set", "run.order=[]"]
    inproc, _ = _run(tmp_path, "inproc", *algo, "--mode", "inproc")
    grouped, out = _run(tmp_path, "grouped", *algo, *GROUPED)
    assert grouped["digest"] == inproc["digest"]
    assert {c["placement"] for c in grouped["components"].values()} == {"process"}
    assert grouped["components"]["vehicle"]["steps"] == 500
    # two child processes, one log each
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["group-control.log",
                                                                "group-loop.log"]


def test_a_group_split_by_an_in_process_component_gives_the_same_digest(tmp_path):
    """Jacobi sends a group's batch once its last due member is queued: here the
    group's members (vehicle at 100 Hz, pid at 50 Hz) are not neighbours, an
    in-process component sits between them, and only the vehicle is due at every
    other instant."""
    algo = ["--set", "run.algorithm=jacobi", "--set", "run.order=[]"]
    inproc, _ = _run(tmp_path, "inproc", *algo, "--mode", "inproc")
    split, _ = _run(tmp_path, "split", *algo,
                    "--set", "components.vehicle.run=process",
                    "--set", "components.vehicle.group=g",
                    "--set", "components.pid.run=process", "--set", "components.pid.group=g")
    assert split["digest"] == inproc["digest"]
    assert [split["components"][c]["placement"] for c in ("vehicle", "sensor", "pid")] == [
        "process", "inproc", "process"]


RIG = """
[run]
until = "60s"
[components.good]
entry = "faulty:Healthy"
run = "process"
group = "g"
rate_hz = 100
[components.good.parameters]
at_step = -1
pid_file = "{tmp}/good.pid"
[components.bad]
entry = "faulty:{kind}"
run = "process"
group = "g"
rate_hz = 100
step_timeout = "2s"
[components.bad.parameters]
at_step = 50
fault_file = "{tmp}/fault.time"
"""


@pytest.mark.parametrize("kind,what,culprit", [
    ("Raises", "ValueError", "bad"),                   # its own error: pinned on it
    ("Hangs", "within 2 s", "group g [good, bad]"),   # the shared process: the group
    ("KillsItself", "SIGKILL", "group g [good, bad]"),
])
def test_faults_in_a_group_name_the_component(tmp_path, kind, what, culprit):
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG.format(tmp=tmp_path, kind=kind))
    t0 = time.time()
    proc = moonpool("run", str(rig), "--out", str(tmp_path / "out"), "--quiet")
    ended = time.time()
    assert proc.returncode == 1, proc.stderr
    fault = float((tmp_path / "fault.time").read_text())
    assert ended - fault < 5.0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert f"component '{culprit}'" in summary["error"] and what in summary["error"]
    assert summary["failed_component"] == culprit
    assert not alive(int((tmp_path / "good.pid").read_text()))
    assert ended - t0 < 60


def _request(rid, instance="", **body):
    req = lc.Request(protocol_version=1, request_id=rid, instance=instance)
    for name, msg in body.items():
        getattr(req, name).CopyFrom(msg)
    return wire.serialize(req)


def test_group_server_batches_and_isolates_errors(tmp_path):
    endpoint = f"ipc://{tmp_path}/g.sock"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    log = open(tmp_path / "g.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonpool.components.sdk.serve", "--component", "a=faulty:Healthy",
         "--component", "b=faulty:Raises", "--bind", endpoint, "--once"],
        cwd=ROOT, env=env, stderr=log)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)

    def call(rid, instance="", **body):
        sock.send(_request(rid, instance, **body))
        assert sock.poll(10_000), "no answer"
        return lc.Reply.FromString(sock.recv_multipart()[0])

    try:
        for rid, name in ((1, "a"), (2, "b")):
            cfg = lc.Configure(instance_name=name)
            cfg.parameters.add(name="at_step", value=wire.to_parameter_value(1))
            assert call(rid, name, configure=cfg).WhichOneof("body") == "ack"
            assert call(rid + 10, name,
                        initialize=lc.Initialize()).WhichOneof("body") == "initialized"
        unknown = call(30, "zzz", describe=lc.Describe())
        assert unknown.error.code == lc.ERROR_CODE_INVALID_INPUT and "zzz" in unknown.error.message
        results = []
        for k in range(2):
            batch = lc.StepBatch()
            for name in ("a", "b"):
                item = batch.steps.add(instance=name)
                item.step.time_ns = k * 10
                item.step.step_ns = 10
            reply = call(40 + k, step_batch=batch)
            results.append(reply.step_batch_result.results)
        # step 0: both fine; step 1: b raises, a still steps
        assert [r.WhichOneof("body") for r in results[0]] == ["result", "result"]
        assert [r.instance for r in results[1]] == ["a", "b"]
        assert results[1][0].WhichOneof("body") == "result"
        out = signals_pb2.Signals.FromString(results[1][0].result.outputs[0].payload)
        assert out.header.source == "a" and out.header.seq == 1
        assert results[1][1].error.code == lc.ERROR_CODE_STEP_FAILED
        assert results[1][1].error.component == "b"
        # The session ends (and the --once process exits) when every member terminated.
        assert call(50, "a", terminate=lc.Terminate()).WhichOneof("body") == "terminated"
        assert proc.poll() is None
        assert call(51, "b", terminate=lc.Terminate()).WhichOneof("body") == "terminated"
        proc.wait(10)
    finally:
        sock.close(0)
        if proc.poll() is None:
            proc.kill()


OWN_TIMES_RIG = """
[run]
until = "0.2s"
algorithm = "jacobi"
[components.fast]
entry = "faulty:Healthy"
run = "process"
group = "g"
rate_hz = 50
[components.fast.parameters]
at_step = -1
[components.slow]
entry = "faulty:Slow"
run = "process"
group = "g"
rate_hz = 50
[components.slow.parameters]
at_step = 0
sleep_s = 0.02
[components.alone]
entry = "faulty:Healthy"
run = "process"
rate_hz = 50
[components.alone.parameters]
at_step = -1
[components.here]
entry = "faulty:Healthy"
rate_hz = 50
[components.here.parameters]
at_step = -1
"""


def test_the_summary_gives_each_members_own_step_time(tmp_path):
    """A group member's step time is its batch's round trip, so a member that costs
    nothing looked as slow as the slowest in its group; summary.json now also has
    each remote component's own step time as its process reported it
    (StepResult.compute_ns, which the orchestrator ignored): compute_p50_us, ...
    Orderings only, no timed assertion: a round trip holds the whole batch, and the
    slow member sleeps 20 ms per step."""
    rig = tmp_path / "rig.toml"
    rig.write_text(OWN_TIMES_RIG)
    proc = moonpool("run", str(rig), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    c = json.loads((tmp_path / "out" / "summary.json").read_text())["components"]
    assert c["slow"]["compute_p50_us"] >= 20_000  # its own: the sleep
    assert c["fast"]["p50_us"] >= 20_000  # its round trip is the batch's: the slow one's too
    assert c["fast"]["compute_p50_us"] < c["slow"]["compute_p50_us"]  # its own: not the batch
    for name in ("fast", "slow", "alone"):  # each step's own time is inside its round trip
        assert 0 < c[name]["compute_p50_us"] <= c[name]["p50_us"]
        assert c[name]["compute_p50_us"] <= c[name]["compute_p99_us"] \
            <= c[name]["compute_max_us"] <= c[name]["max_us"]
    assert "compute_p50_us" not in c["here"]  # in-process: its step time is the call
    assert "own p50 µs" in proc.stdout  # the table printed at the end has the column
