"""A component that takes its inputs at t0 (``initial_inputs``) gets its held inputs in
Initialize, and a queued input's messages up to the start time in its first step, as
any other component does — in-process, in its own process, and in a process group whose
server delivers the connection itself. (Before: Initialize took those messages off the
queue and gave them to nobody, so the first message was lost.)"""

from __future__ import annotations

import pytest

from moonpool.orchestrator.recording import decode_recorded, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

RIG = """
[run]
until = "0.05s"
seed = 1
algorithm = "{algorithm}"

[components.events]
entry = "probes:Count"
rate_hz = 100
[components.events.parameters]
initial_output = true

[components.level]
entry = "probes:Count"
rate_hz = 100
[components.level.parameters]
initial_output = true

[components.probe]
entry = "probes:T0QueueProbe"
rate_hz = 100

[[connections]]
from = "events.out"
to = "probe.in"

[[connections]]
from = "level.out"
to = "probe.held"
"""

LAYOUTS = {
    "inproc": [],
    "process": [f"components.{c}.run=process" for c in ("events", "level", "probe")],
    "group": [f"components.{c}.{k}={v}" for c in ("events", "level", "probe")
              for k, v in (("run", "process"), ("group", "g"))],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("algorithm", ["jacobi", "gauss-seidel"])
def test_a_queued_input_loses_nothing_to_initialize(tmp_path, algorithm, layout):
    path = tmp_path / "t0.toml"
    path.write_text(RIG.format(algorithm=algorithm))
    out = tmp_path / "out"
    result = run_rig(load_and_check(path, ["run.plots=false", *LAYOUTS[layout]]), out)
    assert result.ok, result.summary["error"]
    msgs: dict[str, list] = {}
    for m in read_recording(out / "recording.mcap"):
        msgs.setdefault(m.topic, []).append(decode_recorded(m))
    (t0,) = msgs["/probe/at_t0"]
    assert [(s.name, s.value) for s in t0.signals] == [("held", -1)]
    steps = [[s.value for s in m.signals] for m in msgs["/probe/seen"]]
    assert len(steps) == 5
    # Every message of the queued input, once and in order: the Initialize output (-1)
    # in the first step, then one per step of the source.
    received = [k for step in steps for k in step]
    assert received[0] == -1 and steps[0][0] == -1
    assert received == list(range(-1, len(received) - 1))
    assert len(received) >= 5
