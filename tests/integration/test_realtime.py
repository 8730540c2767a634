"""Real-time mode end to end (orchestrator/realtime.py): short paced runs. Nothing here
asserts how punctual the pacing is (benchmarks/realtime.py measures that); only what
pacing guarantees: it never runs ahead of the wall clock, it does not change the
message stream, and the overrun policy is applied."""

from __future__ import annotations

import contextlib
import json
import textwrap
import time
from fractions import Fraction

import pytest
import zmq

from conftest import RIGS, SUPPORT, moonpool
from moonpool.orchestrator.recording import digest_of_recording, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow

REALTIME_KEYS = ("lateness_p50_us", "lateness_p99_us", "lateness_max_us", "overruns")


def test_realtime_run_has_lateness_figures_and_the_same_digest(tmp_path):
    out = tmp_path / "rt"
    proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1.5", "--seed", "3",
                    "--realtime", "--out", str(out), "--set", "run.plots=false")
    assert proc.returncode == 0, proc.stderr
    assert "real time x1" in proc.stdout and "real time x1" in proc.stderr
    rt = json.loads((out / "summary.json").read_text())
    block = rt["realtime"]
    for key in REALTIME_KEYS:
        assert key in block
    assert block["factor"] == 1.0 and block["overrun_policy"] == "warn"
    assert block["ticks"] == rt["ticks"] == 150
    assert 0 <= block["lateness_p50_us"] <= block["lateness_p99_us"] <= block["lateness_max_us"]
    # Paced: the loop cannot end before the last tick's deadline (1.49 s after the first).
    assert rt["loop_wall_time_s"] >= 1.49
    # The same rig flat out: the same messages, bit for bit.
    flat = load_and_check(RIGS / "quickstart.toml", ["run.plots=false"], until_s=1.5, seed=3)
    result = run_rig(flat, tmp_path / "flat")
    assert result.summary["realtime"] is None
    assert result.summary["digest"] == rt["digest"]
    assert digest_of_recording(out / "recording.mcap") == rt["digest"]


def test_factor_and_rig_keys(tmp_path):
    """run.realtime in the rig, half speed: a 0.3 s run takes at least 0.58 s of wall
    time; --realtime on the command line overrides it."""
    rig = load_and_check(RIGS / "quickstart.toml",
                         ["run.realtime=0.5", "run.overrun=skip", "run.plots=false"], until_s=0.3)
    result = run_rig(rig, tmp_path / "half")
    assert result.ok, result.summary["error"]
    block = result.summary["realtime"]
    assert block["factor"] == 0.5 and block["overrun_policy"] == "skip"
    assert block["period_us"] == 20_000.0  # the fastest component's 10 ms at half speed
    assert result.summary["loop_wall_time_s"] >= 0.58
    fast = load_and_check(RIGS / "quickstart.toml", ["run.realtime=0.5", "run.record=false"],
                          until_s=0.3, realtime=4)
    assert float(fast.run.realtime) == 4.0
    assert "# --realtime 4" in fast.source_text


SLOW_RIG = """
[run]
until = "2s"
realtime = 1
overrun = "abort"

# 50 ms slots: only the deliberately slow step (0.2 s, at t = 0.2 s) overruns, even
# on a machine busy enough to delay a process by several ms.
[components.counter]
entry = "faulty:Slow"
rate_hz = 20
[components.counter.parameters]
at_step = 4
sleep_s = 0.2

[components.probe]
entry = "probes:Probe"
rate_hz = 20

[[connections]]
from = "counter.count"
to = "probe.in"
"""


def test_abort_policy_stops_cleanly_with_a_readable_recording(tmp_path):
    rig = tmp_path / "slow.toml"
    rig.write_text(textwrap.dedent(SLOW_RIG))
    out = tmp_path / "out"
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet")
    assert proc.returncode == 1, proc.stderr
    assert "real-time deadline missed" in proc.stderr
    assert "tick at t=0.250000 s" in proc.stderr  # the tick after the slow step at 0.2 s
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed" and "overrun policy 'abort'" in summary["error"]
    assert summary["realtime"]["overruns"] == 1
    assert summary["realtime"]["lateness_max_us"] >= 150_000  # a 200 ms step, 50 ms slot
    assert summary["ticks"] == 5  # 0 ... 0.2 s; the tick at 0.25 s was refused
    messages = list(read_recording(out / "recording.mcap"))
    assert len(messages) == summary["messages"] == 2 * 5
    assert digest_of_recording(out / "recording.mcap") == summary["digest"]


def test_warn_policy_counts_overruns_and_finishes(tmp_path):
    rig = load_and_check(tmp_path_rig(tmp_path), ["run.overrun=warn", "run.until=0.4s",
                                                  "run.plots=false"])
    result = run_rig(rig, tmp_path / "warn")
    assert result.ok
    # Every step from t = 0.2 s on takes 0.2 s: the ticks at 0.25, 0.3 and 0.35 s
    # find their deadlines passed (and run as soon as they can).
    assert result.summary["realtime"]["overruns"] >= 3
    assert result.summary["ticks"] == 8


def tmp_path_rig(tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text(textwrap.dedent(SLOW_RIG))
    return path


def test_bad_realtime_values_exit_2(tmp_path):
    proc = moonpool("check", str(RIGS / "quickstart.toml"), "--realtime", "0")
    assert proc.returncode == 2
    assert "--realtime: must be a finite number above 0" in proc.stderr
    proc = moonpool("run", "--realtime", str(RIGS / "quickstart.toml"))
    assert proc.returncode == 2
    assert "write the rig before the option" in proc.stderr
    proc = moonpool("check", str(RIGS / "quickstart.toml"), "--set", "run.overrun=later",
                    "--set", "run.realtime=fast", "--set", "run.realtime_priority=120")
    assert proc.returncode == 2
    assert "run.overrun: 'later' is not one of \"warn\" or \"skip\" or \"abort\"" in proc.stderr
    assert "run.realtime: expected a real-time factor" in proc.stderr
    assert "run.realtime_priority: expected 0 (normal scheduling)" in proc.stderr
    assert moonpool("check", str(RIGS / "quickstart.toml"), "--realtime", "0.5").returncode == 0


def test_an_overrun_waiting_for_another_process_names_its_step(tmp_path):
    """Under Jacobi, a step in a child process that runs past the tick that needs it
    makes that tick late; the warning says whose step the tick waited for."""
    rig = tmp_path / "slow_child.toml"
    rig.write_text(textwrap.dedent(SLOW_RIG).replace(
        'overrun = "abort"', 'overrun = "warn"\nalgorithm = "jacobi"').replace(
        'until = "2s"', 'until = "0.4s"').replace(
        'entry = "faulty:Slow"', 'entry = "faulty:Slow"\nrun = "process"'))
    # Every overrun at DEBUG: on a loaded machine an ordinary step may make an earlier
    # tick late by a hair first, and only the first and every 100th are warnings.
    proc = moonpool("--log-level", "DEBUG", "run", str(rig), "--out", str(tmp_path / "out"),
                    "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "a step of an earlier tick was still running: counter's step ending at t = 0.250000" \
        in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["realtime"]["overruns"] >= 1


@contextlib.contextmanager
def _execution(tmp_path, components, algorithm="jacobi"):
    """An execution of process components at 100 Hz, set up (not run), shut down after:
    ``components`` are (name, entry, parameters, group) with entries from tests/support."""
    from moonpool.orchestrator.execution import Execution
    from moonpool.orchestrator.rig import ComponentConfig, Rig, RunConfig, Schedule
    from moonpool.orchestrator.run import RunObserver, build_adapters

    rig = Rig(tmp_path / "w.toml", "w", RunConfig(until_ns=10**8, algorithm=algorithm),
              tuple(ComponentConfig(name, entry, "process", Schedule(Fraction(100)),
                                    parameters=parameters, group=group, base_dir=SUPPORT)
                    for name, entry, parameters, group in components), ())
    ex = Execution(rig, build_adapters(rig, tmp_path, None), RunObserver(None))
    try:
        ex.setup()
        yield ex
    finally:
        ex.shutdown(True)


def _send(ex, s, flush=True):
    """Send ``s``'s step from its next instant (one period) and hold its place."""
    s.adapter.start_step(s.t_next - 10_000_000, 10_000_000, {})
    if flush:
        s.adapter.flush()
    ex._hole(s, s.t_next)


def _in(s):
    """Wait until ``s``'s reply is readable in its socket (not read)."""
    assert s.adapter.connection.sock.poll(30_000, zmq.POLLIN)


def test_the_wait_says_when_collecting_a_reply_carried_it_past_its_end(tmp_path,
                                                                       monkeypatch):
    """Execution.wait (the pacer's sleep) collects replies as they come; when a
    collection ends after the wait's end it returns what it collected and how long it
    took, which goes into the overrun's message (tests/unit/test_realtime_pacer.py)."""
    from moonpool.orchestrator.execution import Execution

    with _execution(tmp_path, [("src", "probes:Count", {}, "")]) as ex:
        s = ex.slots[0]
        _send(ex, s)
        _in(s)  # the reply is in before the wait starts
        assert ex.wait(0.0) is None  # nothing left of the wait: nothing collected
        collect = Execution._collect

        def slow_collect(self, hole):
            time.sleep(0.1)
            collect(self, hole)

        monkeypatch.setattr(Execution, "_collect", slow_collect)
        said = ex.wait(0.05)
        assert said is not None and said.startswith("collecting src's reply while waiting "
                                                    "took ")
        assert not ex._holes  # collected
        monkeypatch.setattr(Execution, "_collect", collect)
        assert ex.wait(0.01) is None  # nothing outstanding: a plain sleep


def test_prepare_names_only_a_step_it_waited_for_and_a_late_wait_leaves_replies(
        tmp_path, monkeypatch):
    """The tick's prepare collects the replies the tick needs. One that is in when it
    looks is no step still running (prepare returns None: only collecting it took
    time); one it has to wait for is named. And a wait (the pacer's sleep) whose poll
    returns after the wait's end — the machine woke the thread late — collects
    nothing and says nothing: the tick's prepare takes what came in. Before, both
    counted as the rig's fault: an OS-late wake-up that found a reply waiting was an
    overrun ("collecting src's reply while waiting took …", or "waited for")."""
    slow = ("slow", "faulty:Slow", {"at_step": 2, "sleep_s": 0.3}, "")
    with _execution(tmp_path, [slow]) as ex:
        s = ex.slots[0]

        def send():
            _send(ex, s)
            ex.time_ns, ex._due = s.t_next, [s]
            s.t_next += 10_000_000

        # 1. The reply is in (readable, not read) before prepare looks: not waited for.
        send()
        _in(s)
        assert ex._prepare() is None
        assert not ex._holes  # collected all the same
        # 2. A wait whose poll comes back after its end (a late wake-up): the reply
        # that is in stays for prepare, and the wait says nothing.
        send()
        _in(s)
        poll = zmq.Poller.poll

        def late_poll(self, timeout=None):
            got = poll(self, timeout)
            time.sleep(0.02)  # the thread runs again 20 ms after the poll returned
            return got

        monkeypatch.setattr(zmq.Poller, "poll", late_poll)
        assert ex.wait(0.005) is None
        assert ex._holes  # not collected by the wait
        monkeypatch.setattr(zmq.Poller, "poll", poll)
        assert ex._prepare() is None  # in: not waited for
        assert not ex._holes
        # 3. Step 2 (index from 0) sleeps 0.3 s: prepare waits for it and names it.
        send()
        said = ex._prepare()
        assert said is not None and said.startswith("slow's step ending at t = 0.030000 s, "
                                                    "waited for ")
        assert not ex._holes


def test_a_reply_read_and_not_taken_is_collected_by_the_next_wait(tmp_path):
    """A reply read from its socket to see whether it is in (``reply_ready``) and not
    taken is out of its socket: the next wait (the pacer's sleep) must still collect it
    in the slack, or it waits for the tick that needs it. It did: prepare looked at
    every busy connection before each due step (73498fa and before), and a camera
    reply it read but the tick did not need waited a period — the camera's round-trip
    p99 went from 7-10 to 31 ms in a 120 s real-time run of the pool. Prepare now
    looks only at the replies it collects (this test's first part)."""
    with _execution(tmp_path, [(n, "probes:Count", {}, "") for n in ("a", "b")]) as ex:
        a, b = ex.slots
        for s in (a, b):
            _send(ex, s)
        for s in (a, b):
            _in(s)
        ex.time_ns, ex._due = a.t_next, [a]  # this tick needs a's step only
        assert ex._prepare() is None  # a's reply was in: not waited for
        assert a.index not in ex._holes and b.index in ex._holes
        assert not b.adapter.connection.reply_read  # prepare left b's in its socket
        assert b.adapter.connection.reply_ready()  # read, not taken (as prepare did)
        assert ex.wait(0.05) is None
        assert not ex._holes  # b collected in the slack


def test_prepare_counts_a_group_batch_that_was_in_as_not_waited_for(tmp_path):
    """A process group's members share one reply: collecting the second member's step
    after the first's took the batch is no wait either (its request was answered).
    (Gauss-Seidel: a group is not pipelined, so the tick collects its only batch.)"""
    members = [(n, "probes:Count", {}, "g") for n in ("a", "b")]
    with _execution(tmp_path, members, algorithm="gauss-seidel") as ex:
        a, b = ex.slots
        _send(ex, a, flush=False)
        _send(ex, b)  # one batch, both members
        _in(a)
        ex.time_ns, ex._due = a.t_next, [a, b]
        assert ex._prepare() is None
        assert not ex._holes
