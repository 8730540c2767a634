"""Real-time pacing (orchestrator/realtime.py) with an injected clock: no timed assertions."""

from __future__ import annotations

import gc
import logging
from fractions import Fraction

import pytest

from logrecords import warnings_of
from moonpool.components.sdk.errors import DeadlineMissed, RigValidationError, SimulationError
from moonpool.orchestrator.realtime import GC_FORCE_TICKS, IDLE_SLICE_S, WARN_EVERY, Pacer
from moonpool.orchestrator.rigfile import load_rig

MS = 1_000_000


class FakeClock:
    """A monotonic clock in ns that advances by ``read_ns`` at every reading (so a
    busy-wait ends), by the time asked at every sleep plus ``oversleep_ns``, and by
    ``work`` (the steps of a tick)."""

    def __init__(self, read_ns: int = 1_000, oversleep_ns: int = 0) -> None:
        self.now = 5_000_000_000_000
        self.read_ns = read_ns
        self.oversleep_ns = oversleep_ns
        self.sleeps: list[float] = []
        self.reads = 0

    def clock(self) -> int:
        self.now += self.read_ns
        self.reads += 1
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += round(seconds * 1e9) + self.oversleep_ns

    def work(self, ns: int) -> None:
        self.now += ns


def pacer(fc: FakeClock, factor=1, policy="warn", period_ns=10 * MS, **kw) -> Pacer:
    kw.setdefault("switch_interval_s", None)  # (the process's: most pacers here are not closed)
    return Pacer(factor, policy, period_ns=period_ns, clock=fc.clock, sleep=fc.sleep,
                 manage_gc=False, **kw)


def run_ticks(p: Pacer, fc: FakeClock, times, work_ns) -> list[int]:
    """Pace each tick, then 'work'; returns the clock when each tick was released."""
    released = []
    for i, t in enumerate(times):
        p(t)
        released.append(fc.now)
        fc.work(work_ns(i) if callable(work_ns) else work_ns)
    return released


def test_deadlines_are_absolute_no_drift():
    fc = FakeClock()
    p = pacer(fc)
    times = [k * 10 * MS for k in range(2000)]
    # Irregular work, always inside the 10 ms slot.
    released = run_ticks(p, fc, times, lambda i: (i * 7919) % (8 * MS))
    base = p.deadline(0)  # the first tick anchors the schedule
    for t, r in zip(times, released):
        assert 0 <= r - (p.deadline(t)) <= fc.read_ns  # released at its deadline
        assert p.deadline(t) == p.deadline(0) + t  # absolute: base + t, never accumulated
    assert released[-1] - base >= times[-1]
    assert released[-1] - base - times[-1] <= 2 * fc.read_ns  # no drift after 2000 ticks
    assert p.overruns == 0
    assert max(p.lateness) <= fc.read_ns
    assert len(p.lateness) == len(times) and list(p.times) == times


def test_factor_scales_deadlines_exactly():
    fc = FakeClock()
    p = pacer(fc, factor=Fraction(1, 2))
    run_ticks(p, fc, [0, 10 * MS, 20 * MS, 30 * MS], 1 * MS)
    assert p.deadline(30 * MS) - p.deadline(0) == 60 * MS  # half speed: twice the wall time
    fc2 = FakeClock()
    p2 = pacer(fc2, factor=Fraction(3))  # three times real time, exact integers
    run_ticks(p2, fc2, [0, 10 * MS, 20 * MS], 1 * MS)
    assert p2.deadline(30 * MS) - p2.deadline(0) == 10 * MS
    assert p2.deadline(10 * MS) - p2.deadline(0) == 3_333_333
    assert p.overruns == p2.overruns == 0


def test_multi_rate_ticks_are_paced_at_their_own_instants():
    # The union of 100 Hz and 30 Hz instants: irregular gaps, each tick its own deadline.
    times = sorted({k * 10 * MS for k in range(10)} | {(2 * k * 10**9 + 30) // 60 for k in range(4)})
    fc = FakeClock()
    p = pacer(fc)
    released = run_ticks(p, fc, times, 100_000)
    for t, r in zip(times, released):
        assert 0 <= r - p.deadline(t) <= fc.read_ns


def test_sleeps_then_spins_the_last_part():
    fc = FakeClock(oversleep_ns=150_000)  # sleep wakes 150 µs late, as on a busy VM
    p = pacer(fc, spin_ns=200_000)
    run_ticks(p, fc, [k * 10 * MS for k in range(50)], 3 * MS)
    # Each wait is one sleep to 200 µs before the deadline, then a busy wait.
    assert len(fc.sleeps) == 49
    assert all(s == pytest.approx((7 * MS - 200_000) * 1e-9, abs=5e-6) for s in fc.sleeps)
    assert max(p.lateness) <= fc.read_ns  # the spin absorbed the late wake-up
    assert p.overruns == 0


def test_oversleeping_past_the_spin_is_lateness_not_an_overrun():
    fc = FakeClock(oversleep_ns=500_000)
    p = pacer(fc, spin_ns=200_000)
    run_ticks(p, fc, [k * 10 * MS for k in range(10)], 1 * MS)
    assert p.overruns == 0
    assert 290_000 <= max(p.lateness) <= 310_000  # the OS woke it late: lateness only
    s = p.summary()
    assert 290 <= s["lateness_max_us"] <= 310


def test_overrun_warn_keeps_the_schedule_and_catches_up(caplog):
    fc = FakeClock()
    p = pacer(fc, policy="warn")
    # Tick 3's work takes 25 ms: ticks 4 and 5 find their deadlines passed.
    times = [k * 10 * MS for k in range(10)]
    with caplog.at_level(logging.WARNING, logger="moonpool.realtime"):
        released = run_ticks(p, fc, times, lambda i: 25 * MS if i == 3 else 1 * MS)
    base = p.deadline(0)
    assert p.overruns == 2
    assert [round(x / MS) for x in p.lateness[4:6]] == [15, 6]
    # Anchored: tick 6 onwards is back on the original schedule.
    for t, r in zip(times[6:], released[6:]):
        assert 0 <= r - (base + t) <= fc.read_ns
    assert p.reanchors == 0
    assert len([r for r in caplog.records if "overrun #1" in r.getMessage()]) == 1
    assert "t=0.040000 s" in caplog.records[0].getMessage()


def test_warn_logs_once_per_n(caplog):
    fc = FakeClock()
    p = pacer(fc, policy="warn")
    with caplog.at_level(logging.WARNING, logger="moonpool.realtime"):
        run_ticks(p, fc, [k * 10 * MS for k in range(2 * WARN_EVERY + 2)], 11 * MS)
    assert p.overruns == 2 * WARN_EVERY + 1
    assert len(caplog.records) == 3  # the first, the 100th, the 200th


def test_skip_reanchors_when_later_than_a_period():
    fc = FakeClock()
    p = pacer(fc, policy="skip")
    times = [k * 10 * MS for k in range(10)]
    released = run_ticks(p, fc, times, lambda i: 35 * MS if i == 3 else 1 * MS)
    # Tick 4 starts 25 ms late (> one 10 ms period): the schedule jumps forward by
    # 25 ms; the simulation time does not skip (every tick is still paced, in order).
    assert p.overruns == 1 and p.reanchors == 1
    assert round(p.lateness[4] / MS) == 25
    assert list(p.times) == times
    for t, r in zip(times[5:], released[5:]):
        assert 0 <= r - p.deadline(t) <= fc.read_ns
    assert p.deadline(50 * MS) - released[0] == pytest.approx(75 * MS, abs=10_000)


def test_skip_catches_up_a_small_overrun_without_reanchoring():
    fc = FakeClock()
    p = pacer(fc, policy="skip")
    run_ticks(p, fc, [k * 10 * MS for k in range(10)], lambda i: 14 * MS if i == 3 else 1 * MS)
    assert p.overruns == 1 and p.reanchors == 0


def test_skip_threshold_is_one_period_at_the_factor():
    p = Pacer(Fraction(1, 4), "skip", period_ns=10 * MS, manage_gc=False)
    assert p.period_wall_ns == 40 * MS


def test_abort_raises_naming_the_tick_and_lateness():
    fc = FakeClock()
    p = pacer(fc, policy="abort")
    with pytest.raises(DeadlineMissed) as info:
        run_ticks(p, fc, [k * 10 * MS for k in range(10)], lambda i: 17 * MS if i == 2 else 1 * MS)
    assert isinstance(info.value, SimulationError)
    text = str(info.value)
    assert "t=0.030000 s" in text and "7.0" in text and "abort" in text and "fix:" in text
    assert p.overruns == 1 and len(p.lateness) == 4  # recorded before raising


def test_long_waits_are_sliced_and_idle_is_called():
    fc = FakeClock()
    calls = []
    p = pacer(fc, factor=Fraction(1, 100), idle=lambda: calls.append(fc.now))  # 10 ms -> 1 s
    run_ticks(p, fc, [0, 10 * MS, 20 * MS], 1 * MS)
    assert max(fc.sleeps) <= IDLE_SLICE_S
    assert len(calls) >= 2 * int(0.99 / IDLE_SLICE_S) - 1
    assert max(p.lateness) <= fc.read_ns


def test_a_shorter_idle_slice_is_honoured():
    fc = FakeClock()
    calls = []
    p = pacer(fc, factor=Fraction(1, 100), idle=lambda: calls.append(fc.now), idle_slice_s=0.05)
    run_ticks(p, fc, [0, 10 * MS], 1 * MS)  # one wait of ~1 s
    assert max(fc.sleeps) <= 0.05
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert len(calls) >= 18 and max(gaps) <= 0.05e9 + 10 * fc.read_ns
    with pytest.raises(ValueError, match="idle_slice_s"):
        pacer(FakeClock(), idle_slice_s=0)


def test_summary_block():
    fc = FakeClock()
    p = pacer(fc)
    run_ticks(p, fc, [k * 10 * MS for k in range(101)], lambda i: 12 * MS if i == 50 else 1 * MS)
    s = p.summary()
    for key in ("lateness_p50_us", "lateness_p99_us", "lateness_max_us", "overruns"):
        assert key in s
    assert s["factor"] == 1.0 and s["overrun_policy"] == "warn" and s["ticks"] == 101
    assert s["overruns"] == 1
    assert s["lateness_max_us"] == pytest.approx(2000, abs=5)
    assert s["lateness_max_at_s"] == pytest.approx(0.51)
    assert s["lateness_p50_us"] <= 1.0
    assert s["ticks_late_over_1ms"] == 1
    empty = pacer(FakeClock()).summary()
    assert empty["ticks"] == 0 and empty["lateness_max_us"] == 0.0


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        Pacer(0, period_ns=MS)
    with pytest.raises(ValueError):
        Pacer(1, "later", period_ns=MS)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Pacer(1, period_ns=0)


def test_manages_the_garbage_collector_and_restores_it():
    assert gc.isenabled()
    fc = FakeClock()
    p = Pacer(1, period_ns=10 * MS, clock=fc.clock, sleep=fc.sleep, manage_gc=True)
    try:
        run_ticks(p, fc, [k * 10 * MS for k in range(5)], 1 * MS)  # 9 ms slack each
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert p.gc_collections == 4  # in the slack of every tick after the first
        # Without slack, it still collects every GC_FORCE_TICKS ticks.
        before = p.gc_collections
        run_ticks(p, fc, [(5 + k) * 10 * MS for k in range(GC_FORCE_TICKS + 1)], 10 * MS + 1)
        assert p.gc_collections == before + 2  # the first of these had slack; one forced
    finally:
        p.close()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    p.close()  # idempotent


def test_priority_is_raised_while_pacing_and_restored(monkeypatch):
    import os

    calls = []
    monkeypatch.setattr(os, "sched_getscheduler", lambda pid: 0)
    monkeypatch.setattr(os, "sched_getparam", lambda pid: os.sched_param(0))
    monkeypatch.setattr(os, "sched_setscheduler",
                        lambda pid, policy, param: calls.append((policy, param.sched_priority)))
    fc = FakeClock()
    p = pacer(fc, priority=40)
    run_ticks(p, fc, [0, 10 * MS], 1 * MS)
    assert calls == [(os.SCHED_FIFO, 40)] and p.summary()["scheduler"] == "SCHED_FIFO 40"
    p.close()
    assert calls[-1] == (0, 0)


def test_priority_refused_is_a_warning(monkeypatch, caplog):
    import os

    def refuse(pid, policy, param):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    fc = FakeClock()
    p = pacer(fc, priority=10)
    with caplog.at_level(logging.WARNING, logger="moonpool.realtime"):
        run_ticks(p, fc, [0, 10 * MS], 1 * MS)
    p.close()
    assert "pacing at normal priority" in caplog.text and p.scheduler == "normal"


# ------------------------------------------------------------------ rig keys


def _rig(tmp_path, run_lines: str, **kw):
    path = tmp_path / "rig.toml"
    path.write_text(f'[run]\nuntil = 1\n{run_lines}\n[components.a]\nentry = "x:Y"\nrate_hz = 10\n')
    return load_rig(path, **kw)


def test_rig_keys(tmp_path):
    assert _rig(tmp_path, "").run.realtime is None
    assert _rig(tmp_path, "").run.overrun == "warn"
    assert _rig(tmp_path, "realtime = true").run.realtime == 1
    assert _rig(tmp_path, "realtime = false").run.realtime is None
    assert _rig(tmp_path, "realtime = 0.1").run.realtime == Fraction(1, 10)  # exact
    r = _rig(tmp_path, 'realtime = 2\noverrun = "abort"\nrealtime_priority = 50').run
    assert (r.realtime, r.overrun, r.realtime_priority) == (2, "abort", 50)
    assert _rig(tmp_path, "realtime = false", realtime=0.5).run.realtime == Fraction(1, 2)


def test_the_rig_pacer_keeps_heartbeats_within_the_heartbeat_interval(tmp_path):
    """Between keepalives the rig's pacer sleeps at most a quarter heartbeat interval
    (and never more than IDLE_SLICE_S), so a short interval is honoured in real time."""
    from moonpool.orchestrator.run import make_pacer

    short = make_pacer(_rig(tmp_path, 'realtime = 0.01\nheartbeat_interval = "0.2s"\n'
                                      'peer_timeout = "0.3s"'), {})
    assert short.idle_slice_s == pytest.approx(0.05)
    default = make_pacer(_rig(tmp_path, "realtime = 1"), {})
    assert default.idle_slice_s == IDLE_SLICE_S
    assert make_pacer(_rig(tmp_path, ""), {}) is None


def test_realtime_spin_sets_the_pacers_busy_wait(tmp_path):
    """run.realtime_spin: how long before each deadline the pacer stops sleeping (a
    wake-up that late is then no lateness); 0.2 ms unless the rig says otherwise."""
    from moonpool.orchestrator.run import make_pacer

    assert make_pacer(_rig(tmp_path, "realtime = 1"), {}).spin_ns == 200_000
    p = make_pacer(_rig(tmp_path, 'realtime = 1\nrealtime_spin = "1ms"'), {})
    assert p.spin_ns == 1_000_000
    assert make_pacer(_rig(tmp_path, "realtime = 1\nrealtime_spin = 0"), {}).spin_ns == 0
    fc = FakeClock(oversleep_ns=600_000)  # woken 0.6 ms late every time
    late = pacer(fc, spin_ns=1_000_000)
    run_ticks(late, fc, [k * 10 * MS for k in range(20)], 3 * MS)
    assert max(late.lateness) <= fc.read_ns and late.overruns == 0


def test_bad_rig_keys_are_all_reported(tmp_path):
    with pytest.raises(RigValidationError) as info:
        _rig(tmp_path, 'realtime = -1\noverrun = "skp"\nrealtime_priority = true\n'
                       'realtime_spin = "11ms"')
    text = str(info.value)
    assert "run.realtime_spin: at most 10 ms, got '11ms'" in text
    assert "run.realtime: must be a finite number above 0" in text
    assert "run.overrun: 'skp' is not one of" in text and "did you mean 'skip'" in text
    assert "run.realtime_priority: expected 0" in text
    assert "rig.toml:3" in text



def test_waiting_for_an_earlier_step_before_the_deadline_costs_nothing():
    """prepare (collecting the replies a tick needs) runs after the sleep: when it is
    done before the deadline, the tick starts on time."""
    fc = FakeClock()
    p = pacer(fc)
    calls = []
    p(0, lambda: calls.append(fc.now))
    p(10 * MS, lambda: (calls.append(fc.now), fc.work(100_000)))  # 0.1 ms < the spin
    assert len(calls) == 2
    assert p.lateness[-1] < 10_000 and p.overruns == 0
    assert fc.now >= p.deadline(10 * MS)


def test_waiting_for_an_earlier_step_past_the_deadline_makes_the_tick_late():
    """A step of another process still running at the deadline: the tick starts when
    its reply is in, late by exactly that much, and counts as an overrun."""
    fc = FakeClock()
    p = pacer(fc, policy="warn")
    p(0)
    p(10 * MS, lambda: fc.work(3 * MS))  # the reply comes 3 ms after the wake-up
    late = p.lateness[-1]
    assert 3 * MS - p.spin_ns <= late <= 3 * MS - p.spin_ns + 20_000
    assert p.overruns == 1
    # The same with the abort policy fails the run, naming why.
    fc2 = FakeClock()
    p2 = pacer(fc2, policy="abort")
    p2(0)
    with pytest.raises(DeadlineMissed, match="earlier tick was still running: counter's"):
        p2(10 * MS, lambda: (fc2.work(3 * MS), "counter's step ending at t = 0.010000 s")[1])


def test_collecting_replies_that_were_in_past_the_deadline_is_an_overrun_said_so():
    """Woken on time, prepare waits for no step (every reply it collects is in when it
    looks: it returns None) but collecting them takes past the deadline: the rig's
    work made the tick late, an overrun, and the message says what took the time —
    not "a step was still running", which it said before for any late prepare."""
    fc = FakeClock()
    p = pacer(fc, policy="warn")
    text = _warnings_of_the_pacer(lambda: (p(0), p(10 * MS, lambda: fc.work(1 * MS))))
    assert p.overruns == 1
    assert "collecting the earlier steps' replies, all in, took 1.0" in text
    assert "still running" not in text


def test_an_overrun_names_the_step_the_tick_waited_for():
    """What prepare returns (the execution: the step it waited for longest) is in the
    overrun's message, so a user sees which component held the tick."""
    fc = FakeClock()
    p = pacer(fc, policy="warn")
    text = _warnings_of_the_pacer(lambda: (p(0), p(10 * MS, lambda: (
        fc.work(3 * MS), "localizer's step ending at t = 0.010000 s")[1])))
    assert p.overruns == 1
    assert "still running: localizer's step ending at t = 0.010000 s" in text


def test_a_late_tick_waits_for_its_inputs_too():
    """Already late at the call: prepare runs, and its wait adds to the lateness."""
    fc = FakeClock()
    p = pacer(fc)
    p(0)
    fc.work(12 * MS)  # the previous tick overran by 2 ms
    p(10 * MS, lambda: fc.work(1 * MS))
    assert 3 * MS <= p.lateness[-1] <= 3 * MS + 20_000
    assert p.overruns == 1


def _warnings_of_the_pacer(run) -> str:
    """The text of the pacer's log records (WARNING and above) while ``run()`` runs."""
    return " ".join(warnings_of("moonpool.realtime", run))


def test_a_late_wake_up_before_prepare_is_lateness_not_an_overrun():
    """The wait before a tick ends after its deadline (the machine woke the stepping
    thread late), having collected nothing, and prepare waits for no step: the tick is
    late, but the rig's work fitted in its slot, so it is no overrun — as when no
    prepare is given (the empty loop). Before, such a wake-up counted as an overrun
    (docs/realtime.md said it did not): a 0.25 ms late wake-up was overrun #1 of a
    120 s run of the pool."""
    fc = FakeClock()
    p = pacer(fc, policy="abort")

    def late_wait(seconds):  # returns 2 ms after its time, having collected nothing
        fc.now += round(seconds * 1e9) + 2 * MS

    p._sleep = late_wait
    text = _warnings_of_the_pacer(lambda: (p(0, lambda: None), p(10 * MS, lambda: None),
                                           p(20 * MS, lambda: None)))
    assert p.overruns == 0 and text == ""
    assert len(p.lateness) == 3  # 2 ms minus the spin, plus the fake clock's reads
    assert all(1_800_000 <= x <= 1_810_000 for x in p.lateness[1:])
    # The same late wake-up, then waiting for a step: an overrun, both causes said.
    fc2 = FakeClock()
    p2 = pacer(fc2, policy="warn")

    def late_wait2(seconds):
        fc2.now += round(seconds * 1e9) + 2 * MS

    p2._sleep = late_wait2
    text = _warnings_of_the_pacer(lambda: (p2(0), p2(10 * MS, lambda: (
        fc2.work(1 * MS), "localizer's step ending at t = 0.010000 s")[1])))
    assert p2.overruns == 1
    assert "the wait before it ended 1.8" in text
    assert "the machine woke the stepping thread late; a step of an earlier tick was still " \
           "running: localizer's step ending at t = 0.010000 s" in text


def test_an_overrun_from_a_reply_collected_while_waiting_names_it():
    """The execution's wait collects replies as they arrive; when one of those carries
    it past the deadline, the wait says which (its return value) and the message has it."""
    fc = FakeClock()
    p = pacer(fc, policy="warn")

    def wait(seconds):
        fc.now += round(seconds * 1e9) + 3 * MS
        return "collecting camera's reply while waiting took 3.100 ms"

    p._sleep = wait
    text = _warnings_of_the_pacer(lambda: (p(0), p(10 * MS, lambda: None)))
    assert p.overruns == 1
    assert ("ms after the deadline: collecting camera's reply while waiting took 3.100 ms"
            in text)
    # Late from the wait and then waiting for a step as well: both are said.
    fc2 = FakeClock()
    p2 = pacer(fc2, policy="warn")

    def wait2(seconds):
        fc2.now += round(seconds * 1e9) + 1 * MS
        return None

    p2._sleep = wait2
    text = _warnings_of_the_pacer(lambda: (p2(0), p2(10 * MS, lambda: (
        fc2.work(2 * MS), "localizer's step ending at t = 0.010000 s")[1])))
    assert p2.overruns == 1
    assert "the machine woke the stepping thread late; a step of an earlier tick was still " \
           "running: localizer's step ending at t = 0.010000 s" in text


def test_the_recordings_writer_works_only_while_the_pacer_sleeps():
    """``writer_slack`` (the recording's writer thread's event) is set for each sleep
    and cleared while a tick works, and set for good at close; the interpreter's
    switch interval is SWITCH_INTERVAL_S while pacing, then restored."""
    import sys
    import threading

    from moonpool.orchestrator.realtime import SWITCH_INTERVAL_S

    fc = FakeClock()
    p = pacer(fc, switch_interval_s=SWITCH_INTERVAL_S)
    slack = threading.Event()
    slack.set()
    p.writer_slack = slack
    during_sleeps: list[bool] = []

    def sleep(seconds):
        during_sleeps.append(slack.is_set())
        fc.sleep(seconds)

    p._sleep = sleep
    before = sys.getswitchinterval()
    try:
        p(0)
        assert not slack.is_set()  # the first tick works
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
        for k in range(1, 4):
            p(k * 10 * MS)
            assert not slack.is_set()  # each tick works with the writer held
        assert during_sleeps and all(during_sleeps)  # and it could work in every sleep
    finally:
        p.close()
    assert slack.is_set()
    assert sys.getswitchinterval() == pytest.approx(before)
