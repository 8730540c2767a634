"""rigs/pool_realtime.toml is the pool rig laid out for real time: the same components,
models, parameters and connections as rigs/pool.toml; only the algorithm (Jacobi), the
placement (camera and localizer in child processes of their own, the other eight in one
process group), the real-time keys, the delay
of one connection (the localizer's processing time, which under Jacobi is its step)
and the resolution of the localizer's first whole-frame search (which finds the same
tags sooner) differ. Its message stream does not depend on that layout or on the
pacing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from conftest import RIGS, moonpool
from moonpool.orchestrator.rigfile import check_rig, load_rig

pytestmark = pytest.mark.slow

ALONE = {"camera", "localizer"}  # each in a process of its own; the others in group "fast"


def test_it_is_the_pool_rig_with_only_the_layout_and_the_pacing_changed(fmus):
    pool = load_rig(RIGS / "pool.toml")
    rt = load_rig(RIGS / "pool_realtime.toml")
    assert rt.run.algorithm == "jacobi" and pool.run.algorithm == "gauss-seidel"
    assert rt.run.realtime == 1 and rt.run.realtime_priority == 50
    assert rt.run.realtime_spin_ns == 1_000_000
    assert replace(rt.run, algorithm=pool.run.algorithm, order=pool.run.order,
                   until_ns=pool.run.until_ns, realtime=None, realtime_priority=0,
                   realtime_spin_ns=pool.run.realtime_spin_ns) == pool.run
    assert [c.name for c in rt.components] == [c.name for c in pool.components]
    for mine, theirs in zip(rt.components, pool.components, strict=True):
        assert mine.placement == "process"
        assert mine.group == ("" if mine.name in ALONE else "fast")
        assert theirs.placement == "inproc"
        if mine.name == "localizer":  # a coarser first search (the default is 3)
            assert mine.parameters == {**theirs.parameters, "acquire_decimate": 4.0}
            mine = replace(mine, parameters=theirs.parameters)
        assert replace(mine, placement="inproc", group="") == theirs, mine.name
    # Every connection, and only the localizer's pose loses its delay (under Jacobi
    # the localizer's step is the processing time the delay stands for).
    changed = [(a, b) for a, b in zip(rt.connections, pool.connections, strict=True) if a != b]
    assert [(str(a), a.delay_ns, b.delay_ns) for a, b in changed] == \
        [("localizer.pose -> ekf.pose", 0, 40_000_000)]
    assert replace(changed[0][0], delay_ns=changed[0][1].delay_ns) == changed[0][1]
    assert rt.plots == pool.plots
    assert check_rig(rt) == []


def _run(tmp_path, name, *args):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "pool_realtime.toml"), "--out", str(out), "--quiet",
                    "--until", "2", "--set", "run.plots=false", *args, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text())


def test_the_stream_is_that_of_the_same_rig_in_process_and_flat_out(tmp_path, fmus):
    """Real time, with every step collected when needed, gives the stream of the same
    (Jacobi) rig run flat out with every component in the orchestrator's process."""
    paced = _run(tmp_path, "paced", "--set", "run.realtime_priority=0")
    assert paced["realtime"]["ticks"] == paced["ticks"] == 240  # 100 Hz, and the 30 Hz instants off that grid
    flat = _run(tmp_path, "inproc", "--set", "run.realtime=false", "--mode", "inproc")
    assert flat["realtime"] is None
    assert paced["digest"] == flat["digest"]
    assert paced["messages"] == flat["messages"]
    assert paced["metrics"]["localizer"]["valid"] == paced["metrics"]["localizer"]["images"] > 50
