"""Real time at SCHED_FIFO N (docs/realtime.md "Priorities"): a component's child
process steps below N, rate-monotonic (N - 1 for the fastest children, N - 2 for the
next rate, ...) and its ZeroMQ I/O threads run at FIFO too; the orchestrator's
I/O threads at N, the recording's writer thread at N - 1. Needs the right to use SCHED_FIFO (root, CAP_SYS_NICE or ulimit -r);
skipped where the kernel refuses it. Nothing here is timed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SUPPORT
from moonpool.components.sdk.scheduling import fifo_allowed
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow


def _rig(tmp_path, priority: int, record: bool = False):
    path = tmp_path / "sched.toml"
    path.write_text(textwrap.dedent(f"""\
        name = "sched"
        [run]
        until = "{'1.5s' if record else '0.3s'}"
        realtime = 1
        realtime_priority = {priority}
        plots = false
        record = {str(record).lower()}
        [components.child]
        entry = "probes:SchedulingProbe"
        run = "process"
        rate_hz = 20
        [components.here]
        entry = "probes:SchedulingProbe"
        rate_hz = 20
        """) + (textwrap.dedent("""\
        [components.counter]
        entry = "probes:Count"
        rate_hz = 20
        """) if record else ""))
    return load_and_check(path)


@pytest.mark.skipif(not fifo_allowed(20), reason="SCHED_FIFO is not allowed here")
def test_child_processes_step_one_below_the_stepping_thread(tmp_path):
    result = run_rig(_rig(tmp_path, 20), tmp_path / "run")
    assert result.ok, result.summary["error"]
    child = result.summary["metrics"]["child"]
    here = result.summary["metrics"]["here"]
    assert (child["policy"], child["priority"]) == (os.SCHED_FIFO, 19)
    assert [os.SCHED_FIFO, 19] in child["others"]  # its ZeroMQ I/O thread
    assert (here["policy"], here["priority"]) == (os.SCHED_FIFO, 20)  # the stepping thread
    assert [os.SCHED_FIFO, 20] in here["others"]  # the orchestrator's I/O thread


@pytest.mark.skipif(not fifo_allowed(20), reason="SCHED_FIFO is not allowed here")
def test_a_slower_child_steps_below_a_faster_one(tmp_path):
    """Rate-monotonic: the 20 Hz child (and its I/O thread) at N - 1, a 10 Hz one at
    N - 2, so the faster one's steps are not held up behind the slower one's on a busy
    core (two FIFO threads of one priority do not preempt each other)."""
    rig = _rig(tmp_path, 20)
    path = tmp_path / "sched.toml"
    path.write_text(path.read_text() + textwrap.dedent("""\
        [components.slow]
        entry = "probes:SchedulingProbe"
        run = "process"
        rate_hz = 10
        """))
    result = run_rig(load_and_check(path), tmp_path / "run")
    assert result.ok, result.summary["error"]
    fast, slow = result.summary["metrics"]["child"], result.summary["metrics"]["slow"]
    assert (fast["policy"], fast["priority"]) == (os.SCHED_FIFO, 19)
    assert (slow["policy"], slow["priority"]) == (os.SCHED_FIFO, 18)
    assert [os.SCHED_FIFO, 18] in slow["others"]  # its ZeroMQ I/O thread
    assert rig.component("child").schedule.rate_hz == 20


@pytest.mark.skipif(not fifo_allowed(20), reason="SCHED_FIFO is not allowed here")
def test_the_recordings_writer_thread_runs_one_below_the_stepping_thread(tmp_path):
    """Recording on: the writer thread (the only other thread of the orchestrator at
    N - 1) takes N - 1 at its first chunk after the pacer raised the stepping thread
    (the open chunk is handed over every 0.5 s, at a write: 1.5 s of run, and a counter
    that writes at every tick — without it the probes wrote nothing, no chunk was
    handed over after the start, and the test failed about one run in three)."""
    result = run_rig(_rig(tmp_path, 20, record=True), tmp_path / "run")
    assert result.ok, result.summary["error"]
    here = result.summary["metrics"]["here"]
    assert (here["policy"], here["priority"]) == (os.SCHED_FIFO, 20)
    assert [os.SCHED_FIFO, 19] in here["others"], here


def test_without_a_priority_nothing_changes(tmp_path):
    result = run_rig(_rig(tmp_path, 0), tmp_path / "run")
    assert result.ok, result.summary["error"]
    for name in ("child", "here"):
        m = result.summary["metrics"][name]
        assert m["policy"] == os.SCHED_OTHER
        assert all(policy == os.SCHED_OTHER for policy, _ in m["others"]), m


def test_serve_refuses_a_priority_out_of_range():
    proc = subprocess.run(
        [sys.executable, "-m", "moonpool.components.sdk.serve", "probes:SchedulingProbe",
         "--bind", "ipc:///nonexistent/x.sock", "--realtime-priority", "100"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(SUPPORT)})
    assert proc.returncode == 2
    assert "--realtime-priority must be 0-99, got 100" in proc.stderr
