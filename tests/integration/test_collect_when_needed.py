"""A step of a component in another process is collected when something needs it,
not at once: a slow step spans ticks whenever the rig leaves it time, and the
message stream is the same as if every step were collected at once (any layout).

No timing here: a gate component blocks in one step until a file exists that an
in-process component writes at a *later* simulation time. Only an execution that
goes on with later instants while the gate works can finish the run."""

from __future__ import annotations

import json

import pytest

from conftest import moonpool

pytestmark = pytest.mark.slow

GATE_RIG = """
name = "gate"
[run]
until = "0.6s"
algorithm = "{algorithm}"
order = []

[components.gate]
entry = "overlap:Gate"
run = "{run}"
rate_hz = 10
[components.gate.parameters]
wait_for = "{marker}"
wait_at_ns = 100000000
give_up_s = {give_up}

[components.marker]
entry = "overlap:Marker"
rate_hz = 100
[components.marker.parameters]
path = "{marker}"
write_at_ns = 140000000

[[connections]]
from = "gate.out"
to = "marker.in"
delay = "{delay}"

[[connections]]
from = "marker.out"
to = "gate.in"
"""


def _run(tmp_path, name, rig_text, *args):
    rig = tmp_path / f"{name}.toml"
    rig.write_text(rig_text)
    out = tmp_path / name
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet", *args)
    summary = json.loads((out / "summary.json").read_text())
    return proc, summary


def _gate(tmp_path, name, *, algorithm, run="process", wait=True, delay="50ms", give_up=10):
    marker = tmp_path / f"{name}.marker"
    return GATE_RIG.format(algorithm=algorithm, run=run, marker=marker if wait else "",
                           delay=delay, give_up=give_up)


@pytest.mark.parametrize("algorithm", ["gauss-seidel", "jacobi"])
def test_a_slow_step_spans_later_instants_and_the_stream_is_unchanged(tmp_path, algorithm):
    """The gate's step at 0.1 s waits for the marker written at 0.14 s; its output is
    needed at 0.15 s (delay 50 ms) under Gauss-Seidel, at 0.2 s under Jacobi."""
    proc, spanned = _run(tmp_path, "spanned", _gate(tmp_path, "spanned", algorithm=algorithm))
    assert proc.returncode == 0, proc.stderr
    assert spanned["status"] == "ok"
    assert (tmp_path / "spanned.marker").read_text() == "140000000"
    assert spanned["components"]["gate"]["placement"] == "process"
    # The same rig, nothing waiting, every component in-process: the same stream.
    proc, plain = _run(tmp_path, "plain",
                       _gate(tmp_path, "plain", algorithm=algorithm, run="inproc", wait=False))
    assert proc.returncode == 0, proc.stderr
    assert spanned["digest"] == plain["digest"]
    assert spanned["messages"] == plain["messages"] == 6 + 60


def test_a_step_needed_at_once_is_waited_for(tmp_path):
    """The control: with no delay the marker needs the gate's output at 0.1 s itself
    (Gauss-Seidel, gate first), so the execution must wait for the gate, the marker
    is not written in time and the gate gives up: the run fails, naming it."""
    proc, summary = _run(tmp_path, "waits", _gate(tmp_path, "waits", algorithm="gauss-seidel",
                                                  delay="0s", give_up=1))
    assert proc.returncode == 1
    assert summary["status"] == "failed"
    assert summary["failed_component"] == "gate"
    assert "did not appear" in summary["error"]
    assert not (tmp_path / "waits.marker").exists()


MIXED_RIG = """
name = "mixed"
[run]
until = "1.3s"
seed = 5
algorithm = "{algorithm}"
order = []

[components.a]
entry = "probes:Count"
run = "process"
rate_hz = 30

[components.b]
entry = "overlap:Marker"
rate_hz = 100
offset = "5ms"

[components.c]
entry = "probes:QueueProbe"
run = "process"
group = "g"
rate_hz = 7

[components.d]
entry = "overlap:Gate"
run = "process"
group = "g"
rate_hz = 50
offset = "3ms"

[components.e]
entry = "probes:Probe"
rate_hz = 100

[[connections]]
from = "a.out"
to = "b.in"
delay = "20ms"

[[connections]]
from = "b.out"
to = "c.in"

[[connections]]
from = "c.seen"
to = "d.in"
delay = "10ms"

[[connections]]
from = "d.out"
to = "e.in"
"""


@pytest.mark.parametrize("algorithm", ["gauss-seidel", "jacobi"])
def test_multi_rate_offsets_delays_and_groups_give_the_in_process_stream(tmp_path, algorithm):
    """Sources in processes and a process group feeding in-process consumers through
    delays, at rates and offsets whose instants interleave: every layout gives the
    stream of the all-in-process run."""
    text = MIXED_RIG.format(algorithm=algorithm)
    proc, inproc = _run(tmp_path, "inproc", text, "--mode", "inproc")
    assert proc.returncode == 0, proc.stderr
    proc, laid_out = _run(tmp_path, "laid_out", text)
    assert proc.returncode == 0, proc.stderr
    proc, separate = _run(tmp_path, "separate", text, "--mode", "process")
    assert proc.returncode == 0, proc.stderr
    assert laid_out["digest"] == separate["digest"] == inproc["digest"]
    assert laid_out["messages"] == inproc["messages"] > 300
