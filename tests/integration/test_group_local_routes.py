"""Pipelined process groups (orchestrator/adapters/group.py, components/sdk/localroutes.py):
under Jacobi a group's server delivers the connections between its own members, so
the orchestrator sends a group's next batch before the previous one is answered (two
in flight). Whatever delivers them, the stream is the same: every rig here gives the
in-process digest in one group — multi-rate with an offset, image attachments,
Initialize outputs, a delayed connection, queued inputs, FMUs that take their inputs
at t0, an input a scenario overrides (left to the orchestrator) — and a member that
fails mid-run still ends the run naming it, with its recording whole."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import RIGS, ROOT, moonpool
from moonpool.orchestrator.adapters.group import local_routes
from moonpool.orchestrator.recording import digest_of_recording, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from replay_sources import RIG as CAMERA_RIG  # (multi-rate, attachments, delay, queued)

pytestmark = pytest.mark.slow

IN_ONE_GROUP = [f"components.{c}.{k}={v}" for c in ("camera", "check", "probe")
                for k, v in (("run", "process"), ("group", "g"))]


def _run(path, out, *overrides):
    rig = load_and_check(path, ["run.plots=false", *overrides])
    result = run_rig(rig, out)
    assert result.ok, result.summary["error"]
    return result.summary


@pytest.mark.parametrize("algorithm", ["jacobi", "gauss-seidel"])
def test_a_group_that_delivers_its_own_connections_gives_the_in_process_stream(
        tmp_path, algorithm):
    path = tmp_path / "camera.toml"
    path.write_text(CAMERA_RIG.format(algorithm=algorithm))
    routes = local_routes(load_and_check(path, IN_ONE_GROUP))
    # Under Jacobi all three connections stay inside the group; under Gauss-Seidel none.
    assert len(routes) == (3 if algorithm == "jacobi" else 0)
    assert {r.text() for r in routes} >= ({"camera.image>check.image@2000000"}
                                          if algorithm == "jacobi" else set())
    inproc = _run(path, tmp_path / "inproc")
    grouped = _run(path, tmp_path / "grouped", *IN_ONE_GROUP)
    assert grouped["digest"] == inproc["digest"]
    assert grouped["messages"] == inproc["messages"] > 100
    # The recording holds what was hashed (the orchestrator still sees every output).
    assert digest_of_recording(tmp_path / "grouped" / "recording.mcap") == grouped["digest"]


FEEDTHROUGH_RIG = textwrap.dedent("""
    [run]
    until = "0.5s"
    algorithm = "jacobi"
    [components.a]
    entry = "fmu"
    rate_hz = 10
    [components.a.parameters]
    fmu = "{fmu}"
    fmi_type = "cs"
    start_values = {{ real_c_in = 2.5 }}
    outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out" }} }}
    [components.b]
    entry = "fmu"
    rate_hz = 10
    [components.b.parameters]
    fmu = "{fmu}"
    fmi_type = "cs"
    inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in" }} }}
    outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out" }} }}
    [components.c]
    entry = "fmu"
    rate_hz = 20
    [components.c.parameters]
    fmu = "{fmu}"
    fmi_type = "cs"
    inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in" }} }}
    outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out" }} }}
    [[connections]]
    from = "a.out"
    to = "b.in"
    [[connections]]
    from = "b.out"
    to = "c.in"
    delay = "50ms"
    """)


def test_fmus_that_take_their_inputs_at_t0_get_them_from_the_group(tmp_path):
    """b's Initialize gets a's Initialize output (2.5, a's start value through its
    feedthrough) from the group's server, as it would from the orchestrator."""
    fmu = ROOT / "fmus" / "build" / "testfmus" / "feedthrough-fmi2.fmu"
    path = tmp_path / "chain.toml"
    path.write_text(FEEDTHROUGH_RIG.format(fmu=fmu.as_posix()))
    group = [f"components.{c}.{k}={v}" for c in "abc"
             for k, v in (("run", "process"), ("group", "fmus"))]
    assert len(local_routes(load_and_check(path, group))) == 2
    inproc = _run(path, tmp_path / "inproc")
    grouped = _run(path, tmp_path / "grouped", *group)
    assert grouped["digest"] == inproc["digest"]
    b_out = [m for m in read_recording(tmp_path / "grouped" / "recording.mcap")
             if m.topic == "/b/out"]
    from moonpool.v1 import signals_pb2
    first = signals_pb2.Signals.FromString(b_out[0].payload)
    assert b_out[0].log_time_ns == 0 and first.signals[0].value == 2.5


def test_an_input_a_scenario_overrides_stays_with_the_orchestrator(tmp_path):
    """hydro_fmu's thrust -> vehicle wrench, overridden by a ramp: in one group under
    Jacobi the connection is not delivered by the group (the orchestrator changes the
    input), and the digest is the in-process one."""
    text = (RIGS / "hydro_fmu.toml").read_text().replace("../fmus/", f"{ROOT}/fmus/")
    text += textwrap.dedent("""
        [[scenario]]
        at = "0.5s"
        end = "0.8s"
        set = "vehicle.wrench:force_n.z"
        from = 0.0
        value = 10.0
        """)
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    jacobi = ["run.algorithm=jacobi", "run.order=[]", "run.until=1s"]
    group = [f"components.{c}.{k}={v}" for c in ("thrust", "vehicle")
             for k, v in (("run", "process"), ("group", "g"))]
    rig = load_and_check(path, [*jacobi, *group])
    assert all(r.target_port != "wrench" for r in local_routes(rig))
    inproc = _run(path, tmp_path / "inproc", *jacobi)
    grouped = _run(path, tmp_path / "grouped", *jacobi, *group)
    assert grouped["digest"] == inproc["digest"]


def _three_in_a_group(until: str, kind: str, parameters: str, step_timeout: str = "2s") -> str:
    """src -> seen, and a faulty member between them, all in one group (Jacobi)."""
    members = [("src", "probes:Count", ""), ("bad", f"faulty:{kind}", parameters),
               ("seen", "probes:Probe", "")]
    text = f'[run]\nuntil = "{until}"\nalgorithm = "jacobi"\n'
    for name, entry, params in members:
        text += (f'[components.{name}]\nentry = "{entry}"\nrate_hz = 100\nrun = "process"\n'
                 f'group = "g"\nstep_timeout = "{step_timeout}"\n')
        if params:
            text += f"[components.{name}.parameters]\n{params}\n"
    return text + '[[connections]]\nfrom = "src.out"\nto = "seen.in"\n'


def test_a_member_failing_in_a_pipelined_group_ends_the_run_naming_it(tmp_path):
    """faulty.Raises at its 30th step, beside a connection inside its group: the run
    fails naming it, not the group, and the recording holds what was hashed."""
    rig = tmp_path / "fail.toml"
    rig.write_text(_three_in_a_group("1s", "Raises", "at_step = 30"))
    out = tmp_path / "out"
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet")
    assert proc.returncode == 1, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["failed_component"] == "bad", summary
    assert "Traceback" not in proc.stderr
    assert digest_of_recording(out / "recording.mcap") == summary["digest"]
    # The stream ends before the failed step: bad's 30 counts (steps 0-29) are in it.
    counts = [m for m in read_recording(out / "recording.mcap") if m.topic == "/bad/count"]
    assert len(counts) == 30


def test_a_batch_sent_while_the_previous_one_runs_gets_its_full_step_timeout(tmp_path):
    """Each step of faulty.Slow takes 0.6 s against a step timeout of 1.1 s (every
    member's: a batch has the largest): the second of two batches in flight is answered
    1.2 s after it was sent, yet its step took 0.6 s (its time starts when the group can
    begin it); no StepTimeout. (0.5 s to spare for a loaded machine.)"""
    rig = tmp_path / "slow.toml"
    rig.write_text(_three_in_a_group("40ms", "Slow", "at_step = 0\nsleep_s = 0.6", "1.1s"))
    out = tmp_path / "out"
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["components"]["bad"]["steps"] == 4
