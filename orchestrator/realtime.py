"""Real-time mode: pace simulation time to the wall clock (``moonpool run --realtime``).

The execution calls the :class:`Pacer` once per tick, with the tick's simulation
time, before stepping anything (``Execution.pace``). The pacer waits until the
tick's **deadline** and records how late the tick actually started::

    deadline(t) = wall_start + (t - t_start) / factor        (monotonic clock, ns)
    lateness(t) = start of the tick - deadline(t)            (>= 0)

Deadlines are absolute: each is computed from the start, never from the previous
tick, so no error accumulates (no drift); ``factor`` is exact (a Fraction) and the
arithmetic is integer. The first tick anchors the schedule (``wall_start`` = the
moment it is paced; its lateness is 0).

**Waiting.** Sleeping alone wakes 40-200 µs late on a loaded VM; the pacer sleeps
until ``spin`` before the deadline (200 µs by default) and busy-waits the rest, so a
tick that had slack starts a few µs after its deadline. A long wait is cut into
slices of at most :data:`IDLE_SLICE_S`, calling ``idle`` between them (heartbeats to
remote components, whose peers would otherwise time out at a slow factor).

**Overruns.** A tick *overruns* when the pacer finds its deadline already passed:
the previous tick's work (steps, routing, recording) did not fit in its slot. The
lateness of such a tick is how much it overran by. A tick also overruns when a step
sent to another process at an earlier tick, whose reply this tick needs, is still
running at the deadline (the execution's ``prepare``, called before the final spin):
the tick starts when the reply is in, and its lateness counts from the deadline.
What happens next is the rig's
``run.overrun`` policy:

- ``warn`` (default): count it; log the first overrun and then every
  :data:`WARN_EVERY`-th (each one at DEBUG). The schedule stays anchored, so the following ticks run
  back to back until they have caught up with the wall clock.
- ``skip``: count it; when the tick is later than one **period** (the period of the
  fastest component, at the real-time factor), the schedule jumps forward: the
  deadline base is re-anchored so that this tick's deadline is now (the simulation
  time does not skip; no step is left out). Counted as ``reanchors``. A tick late by
  less than a period is caught up as with ``warn``.
- ``abort``: raise :class:`~moonpool.components.sdk.errors.DeadlineMissed` naming the
  tick and its lateness; the run stops cleanly (components terminated, recording
  closed readable, exit status 1).

A tick that started late although the previous one finished in time (the OS woke
the orchestrator late) is not an overrun: it shows in the lateness figures only —
also when ``prepare`` ran after such a wake-up, as long as it waited for no step (a
reply that is in when its collection begins is no step still running: only that takes
time) and the wait before it was collecting no reply when it ended (a wait woken
after its end leaves what came in to ``prepare``).

**What does not change.** Pacing only waits: the message stream and its digest are
those of the same rig run as fast as possible (tested).

**Priority.** On a machine busy with other work, a woken process at normal priority
may wait for the running one's time slice (about 3 ms with Linux's EEVDF scheduler):
the lateness p99 of an otherwise idle loop was 2.5-3 ms on the loaded 2-core VM of
docs/benchmarks.md. ``run.realtime_priority = N`` (1-99) makes the stepping thread a
``SCHED_FIFO`` real-time thread of priority N while pacing (needs root,
``CAP_SYS_NICE`` or an ``ulimit -r`` of at least N; otherwise a warning and normal
priority); it is restored when the loop ends. Such a thread is not preempted by
ordinary processes, so a component that spins forever would keep one core to itself
(Linux still leaves ordinary tasks 5 %): use it on a machine dedicated to the run.

**Garbage collection.** While pacing, Python's cyclic garbage collector does not
run at arbitrary allocations inside a tick: everything allocated during setup is
frozen (``gc.freeze``, never scanned again), automatic collection is disabled, and
the pacer collects the young generation itself in a tick's slack (when more than
:data:`GC_MIN_SLACK_NS` remain before the deadline), the older ones less often, and
in any case at least every :data:`GC_FORCE_TICKS` ticks. :meth:`Pacer.close`
restores the collector as it was.

**The GIL.** The recording's writer thread (orchestrator/recording/background.py) is
the orchestrator's other Python thread. Started while a tick works, its job took the
GIL at each of the stepping thread's releases (a NumPy or FMI call) and held it for
its own Python: a step in the orchestrator's process then waited, up to the switch
interval (5 ms). So while pacing, the writer starts a job only while the pacer sleeps
(its ``slack`` event: set for the sleep, cleared when the tick starts, set again by
:meth:`Pacer.close`), and the interpreter's switch interval is
:data:`SWITCH_INTERVAL_S` (``sys.setswitchinterval``; restored at close), so a job
that is still running when the tick starts gives the GIL back within that. In the
pool rig in real time (three 60 s runs each), steps that lost more than 0.3 ms of
wall time to waiting went from 9-16 per minute to 0-1 (docs/benchmarks.md).

The per-tick lateness is kept in memory (8 bytes per tick) and summarised by
:meth:`Pacer.summary` into ``summary.json`` (``realtime``).
"""

from __future__ import annotations

import array
import gc
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from moonpool.components.sdk.errors import DeadlineMissed

from .adapters.inprocess import nudge_watchdog

log = logging.getLogger("moonpool.realtime")

OverrunPolicy = Literal["warn", "skip", "abort"]
"""What real-time mode does when a tick overruns (module docstring)."""
OVERRUN_POLICIES: tuple[str, ...] = ("warn", "skip", "abort")

SPIN_NS = 200_000
"""Default busy-wait before each deadline, ns (sleep wakes up to ~200 µs late)."""
IDLE_SLICE_S = 0.25
"""Longest single sleep; ``idle`` is called between slices."""
WARN_EVERY = 100
"""``warn`` logs the first overrun and then every WARN_EVERY-th."""
GC_MIN_SLACK_NS = 2_000_000
"""Collect garbage only when at least this much time remains before the deadline."""
GC_FORCE_TICKS = 1000
"""Collect the young generation at least this often (ticks), slack or not."""

SWITCH_INTERVAL_S = 0.0002
"""The interpreter's switch interval while pacing, s (Python's default is 0.005): how
long the stepping thread waits at most for the GIL when another thread holds it
(module docstring, "The GIL")."""


class Pacer:
    """Waits for each tick's deadline and records its lateness (module docstring).

    ``factor``: simulated seconds per wall-clock second (> 0; 1 = real time, 0.5 =
    half speed). ``period_ns``: the simulation period of the fastest component (the
    ``skip`` threshold is that period at the factor). ``clock`` (monotonic ns) and
    ``sleep`` (seconds) are injectable for tests; ``idle`` is called between sleep
    slices of at most ``idle_slice_s`` seconds. ``manage_gc``: take the garbage
    collector over while pacing.
    """

    def __init__(
        self,
        factor: Fraction | float | int,
        policy: OverrunPolicy = "warn",
        *,
        period_ns: int,
        spin_ns: int = SPIN_NS,
        clock: Callable[[], int] = time.monotonic_ns,
        sleep: Callable[[float], Any] = time.sleep,
        idle: Callable[[], Any] | None = None,
        idle_slice_s: float = IDLE_SLICE_S,
        manage_gc: bool = True,
        priority: int = 0,
        switch_interval_s: float | None = SWITCH_INTERVAL_S,
        writer_slack: Any = None,
    ) -> None:
        factor = Fraction(factor)
        if factor <= 0:
            raise ValueError(f"real-time factor must be > 0, got {factor}")
        if policy not in OVERRUN_POLICIES:
            raise ValueError(f"overrun policy must be one of {OVERRUN_POLICIES}, got {policy!r}")
        if period_ns <= 0:
            raise ValueError(f"period_ns must be > 0, got {period_ns}")
        if not idle_slice_s > 0:
            raise ValueError(f"idle_slice_s must be > 0, got {idle_slice_s}")
        if not 0 <= priority <= 99:
            raise ValueError(f"priority must be 0 (normal) or 1-99 (SCHED_FIFO), got {priority}")
        self.factor = factor
        self.policy = policy
        self.period_ns = period_ns
        self.spin_ns = int(spin_ns)
        self._num, self._den = factor.numerator, factor.denominator
        self.period_wall_ns = period_ns * self._den // self._num
        """The skip threshold: one period of the fastest component, in wall-clock ns."""
        self._clock = clock
        self._sleep = sleep
        self._idle = idle
        self.idle_slice_s = float(idle_slice_s)
        """Longest single sleep between two ``idle`` calls, seconds."""
        self._manage_gc = manage_gc
        self._gc_state: tuple[bool, bool] | None = None  # (was enabled, froze)
        self.priority = priority
        self._sched_before: tuple[int, int] | None = None  # (policy, priority) to restore
        self._switch_interval_s = switch_interval_s  # while pacing (None: left as it is)
        self._switch_before: float | None = None  # the switch interval to restore
        self.writer_slack = writer_slack
        """The recording's writer thread's ``slack`` event (recording/background.py), or
        None: set while the pacer sleeps, cleared while a tick works, set at close."""
        self.scheduler = "normal"
        """How the stepping thread was scheduled while pacing: "normal" or "SCHED_FIFO N"."""
        self._gc_ticks = 0
        self._base: int | None = None  # wall-clock ns of the first tick
        self._t0 = 0  # simulation ns of the first tick
        self.times = array.array("q")
        """Simulation time of every paced tick, ns."""
        self.lateness = array.array("q")
        """Lateness of every paced tick, ns (same order as ``times``)."""
        self.overruns = 0
        """Ticks whose deadline had passed before the previous tick's work was done."""
        self.reanchors = 0
        """Times the ``skip`` policy moved the schedule forward."""
        self.gc_collections = 0
        """Collections the pacer ran (``manage_gc``)."""

    # -- pacing -----------------------------------------------------------------

    def deadline(self, t_ns: int) -> int:
        """Wall-clock deadline (monotonic ns) of the tick at simulation time ``t_ns``."""
        assert self._base is not None, "the first tick anchors the schedule"
        return self._base + (t_ns - self._t0) * self._den // self._num

    def __call__(self, t_ns: int, prepare: Callable[[], Any] | None = None) -> None:
        """Pace the tick at simulation time ``t_ns``: return at its deadline (or at once
        when late), having recorded its lateness. Raises DeadlineMissed (abort).

        ``prepare`` (the execution collecting the earlier steps this tick needs) runs
        after the sleep, before the final spin: if it returns after the deadline
        (a step of another process still running), the tick is late by that much and
        counts as an overrun. What it returns (the step it waited for longest, or None)
        goes into the overrun's message."""
        if self._base is None:
            self._start(t_ns)
            if prepare is not None:
                prepare()
            return
        clock = self._clock
        now = clock()
        deadline = self._base + (t_ns - self._t0) * self._den // self._num
        self._gc_ticks += 1
        if now < deadline:
            if self._manage_gc and (deadline - now >= GC_MIN_SLACK_NS
                                    or self._gc_ticks >= GC_FORCE_TICKS):
                self._collect()
                now = clock()
            wake = deadline - self.spin_ns
            during = None
            if now < wake:
                slack = self.writer_slack
                if slack is not None:
                    slack.set()  # the recording's writer thread may start a job now
                during = self._sleep_until(wake, now)
                if slack is not None:
                    slack.clear()
            if prepare is not None:
                woke = clock()
                waited = prepare()
                now = clock()
                if now > deadline:
                    late = now - deadline
                    self.times.append(t_ns)
                    self.lateness.append(late)
                    if woke > deadline and during is None and waited is None:
                        # The machine woke the stepping thread late, and nothing of the
                        # rig held it (no reply being collected, no step waited for):
                        # lateness, not an overrun, as without ``prepare``.
                        return
                    self.overruns += 1
                    self._overrun(t_ns, late, self._why_late(woke - deadline, during, waited,
                                                             now - woke))
                    return
            while (now := clock()) < deadline:
                pass
            self.times.append(t_ns)
            self.lateness.append(now - deadline)
            return
        if prepare is not None:
            prepare()
            now = clock()
        late = now - deadline
        self.times.append(t_ns)
        self.lateness.append(late)
        self.overruns += 1
        if self._manage_gc and self._gc_ticks >= GC_FORCE_TICKS:
            self._collect()  # no slack for a long time: collect anyway (bounded memory)
        self._overrun(t_ns, late)

    def _start(self, t_ns: int) -> None:
        """The first tick: raise the priority, take the collector over, then anchor."""
        if self.priority and self._sched_before is None:
            self._raise_priority()
        if self._switch_interval_s is not None and self._switch_before is None:
            self._switch_before = sys.getswitchinterval()
            sys.setswitchinterval(self._switch_interval_s)
        if self._manage_gc and self._gc_state is None:
            was_enabled = gc.isenabled()
            gc.disable()
            gc.collect()
            gc.freeze()  # what setup allocated is never scanned again
            self._gc_state = (was_enabled, True)
        if self.writer_slack is not None:
            self.writer_slack.clear()  # set again only while sleeping
        self._base, self._t0 = self._clock(), t_ns
        self.times.append(t_ns)
        self.lateness.append(0)

    def _raise_priority(self) -> None:
        import os

        try:
            before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))
        except (OSError, AttributeError) as exc:  # EPERM; not Linux
            log.warning(
                "real time: cannot run the stepping thread as SCHED_FIFO priority %d (%s); "
                "pacing at normal priority (allow it with root, CAP_SYS_NICE or "
                "`ulimit -r %d`, or set run.realtime_priority = 0)",
                self.priority, exc, self.priority)
            return
        self._sched_before = before
        self.scheduler = f"SCHED_FIFO {self.priority}"
        nudge_watchdog()

    def _sleep_until(self, wake: int, now: int) -> Any:
        """Sleep (in slices, calling ``idle`` between them) until ``wake``; returns what
        the last call of ``sleep`` returned (the execution's ``wait``: what it was
        collecting when it overran its end, or None)."""
        sleep, clock, idle, slice_s = self._sleep, self._clock, self._idle, self.idle_slice_s
        while True:
            left = (wake - now) * 1e-9
            if left <= slice_s:
                return sleep(left)
            during = sleep(slice_s)
            if idle is not None:
                idle()
            now = clock()
            if now >= wake:
                return during

    @staticmethod
    def _why_late(woke_late_ns: int, during: Any, waited: Any, prepare_ns: int = 0) -> str:
        """Why a tick that collected earlier steps before starting is late: its wait
        ended after the deadline (a reply collected while waiting took that long, or
        the machine woke the stepping thread late), and/or it waited for a step, or
        (on time, waiting for none) collecting the replies that were in took past it."""
        parts = []
        if woke_late_ns > 0:
            parts.append(f"the wait before it ended {woke_late_ns * 1e-6:.3f} ms after the "
                         "deadline: " + (str(during) if during else
                                         "the machine woke the stepping thread late"))
        if waited:
            parts.append(f"a step of an earlier tick was still running: {waited}")
        elif not parts:
            parts.append(f"collecting the earlier steps' replies, all in, took "
                         f"{prepare_ns * 1e-6:.3f} ms")
        return "; ".join(parts)

    def _collect(self) -> None:
        """Run the collector: the young generation each time, generation 1 every 10th
        time and 2 every 100th (roughly what its own thresholds would do); frozen
        objects are not scanned."""
        n = self.gc_collections
        gc.collect(2 if n % 100 == 99 else 1 if n % 10 == 9 else 0)
        self.gc_collections += 1
        self._gc_ticks = 0

    def _overrun(self, t_ns: int, late_ns: int,
                 why: str = "the previous tick's work overran its slot") -> None:
        what = (f"tick at t={t_ns * 1e-9:.6f} s started {late_ns * 1e-6:.3f} ms after its "
                f"deadline ({why})")
        if self.policy == "abort":
            raise DeadlineMissed(
                f"real-time deadline missed: {what}; overrun policy 'abort'",
                fix=("make the slow component faster (summary.json lists step times), run "
                     "slower than real time (--realtime 0.5), or set run.overrun = \"warn\""),
            )
        if self.policy == "skip" and late_ns > self.period_wall_ns:
            self._base += late_ns  # this tick's deadline becomes now
            self.reanchors += 1
            if self.reanchors == 1 or self.reanchors % WARN_EVERY == 0:
                log.warning("real time: %s; schedule moved forward by %.3f ms "
                            "(re-anchor #%d)", what, late_ns * 1e-6, self.reanchors)
            return
        if self.overruns == 1 or self.overruns % WARN_EVERY == 0:
            log.warning("real time: %s (overrun #%d; logged every %d)",
                        what, self.overruns, WARN_EVERY)
        else:  # each one with --log-level DEBUG
            log.debug("real time: %s (overrun #%d)", what, self.overruns)

    def close(self) -> None:
        """Give the garbage collector and the scheduling policy back, and the recording's
        writer thread its freedom (idempotent)."""
        if self.writer_slack is not None:
            self.writer_slack.set()
        if self._switch_before is not None:
            sys.setswitchinterval(self._switch_before)
            self._switch_before = None
        if self._sched_before is not None:
            import os

            policy, priority = self._sched_before
            self._sched_before = None
            try:
                os.sched_setscheduler(0, policy, os.sched_param(priority))
            except OSError as exc:
                log.warning("real time: could not restore the scheduling policy: %s", exc)
            nudge_watchdog()
        if self._gc_state is not None:
            was_enabled, froze = self._gc_state
            self._gc_state = None
            if froze:
                gc.unfreeze()
            if was_enabled:
                gc.enable()

    # -- results ----------------------------------------------------------------

    def lateness_ns(self) -> np.ndarray:
        """The lateness of every paced tick, ns (int64, a copy)."""
        return np.frombuffer(self.lateness, dtype=np.int64).copy()

    def summary(self) -> dict[str, Any]:
        """The ``realtime`` block of summary.json."""
        late = np.frombuffer(self.lateness, dtype=np.int64)
        if late.size:
            p50, p99 = np.percentile(late, [50.0, 99.0])
            worst = int(late.argmax())
            stats = {
                "lateness_p50_us": float(p50) / 1e3,
                "lateness_p99_us": float(p99) / 1e3,
                "lateness_max_us": float(late[worst]) / 1e3,
                "lateness_max_at_s": self.times[worst] * 1e-9,
                "ticks_late_over_1ms": int((late > 1_000_000).sum()),
            }
        else:
            stats = {"lateness_p50_us": 0.0, "lateness_p99_us": 0.0, "lateness_max_us": 0.0,
                     "lateness_max_at_s": None, "ticks_late_over_1ms": 0}
        return {
            "factor": float(self.factor),
            "overrun_policy": self.policy,
            "ticks": int(late.size),
            **stats,
            "overruns": self.overruns,
            "reanchors": self.reanchors,
            "period_us": self.period_wall_ns / 1e3,
            "spin_us": self.spin_ns / 1e3,
            "scheduler": self.scheduler,
            "gc_collections": self.gc_collections,
        }

    def plot(self, path: Path) -> Path:
        """Draw the lateness of every tick against simulation time (PNG); returns path."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t = np.frombuffer(self.times, dtype=np.int64) * 1e-9
        late_us = np.frombuffer(self.lateness, dtype=np.int64) / 1e3
        s = self.summary()
        fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
        ax.plot(t, np.maximum(late_us, 0.1), ".", markersize=2)
        ax.set_yscale("log")
        ax.set_xlabel("simulation time [s]")
        ax.set_ylabel("lateness [µs] (below 0.1 drawn at 0.1)")
        ax.set_title(
            f"Real time x{float(self.factor):g}: lateness p50 {s['lateness_p50_us']:.1f} µs, "
            f"p99 {s['lateness_p99_us']:.1f} µs, max {s['lateness_max_us']:.0f} µs, "
            f"overruns {self.overruns}"
        )
        ax.grid(True, which="both", alpha=0.3)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path


def verdict(lateness_ns: Any, tolerance_ns: int) -> dict[str, Any]:
    """Did the run keep up with the wall clock? ``lateness_ns``: each tick's lateness
    (ns, the pacer's ``lateness``); "met" when no tick started more than
    ``tolerance_ns`` after its deadline, else "missed" (summary.json ``realtime``)."""
    late = np.frombuffer(lateness_ns, dtype=np.int64) if not isinstance(
        lateness_ns, np.ndarray) else lateness_ns
    over = int((late > tolerance_ns).sum())
    return {"verdict": "missed" if over else "met", "tolerance_us": tolerance_ns / 1e3,
            "ticks_over_tolerance": over}


def verdict_line(rt: dict[str, Any]) -> str:
    """The loud line a missed verdict ends a run with."""
    return (f"REAL TIME MISSED: {rt['ticks_over_tolerance']} of {rt['ticks']} ticks started "
            f"more than {rt['tolerance_us'] / 1e3:g} ms late (lateness p50 "
            f"{rt['lateness_p50_us'] / 1e3:.3g} ms, max {rt['lateness_max_us'] / 1e3:.3g} ms): "
            "this run did not keep up with the wall clock; lower the factor (--realtime 0.5), "
            "move slow components to their own process, or raise run.realtime_tolerance")

