"""The recording's writer thread: compressing and writing chunks off the stepping thread.

The stepping thread hands jobs over (a closed chunk to compress and write, a metadata
record, the summary at the end); this thread runs them in order. What is handed over
and not yet written is bounded twice: ``limit`` bytes (at least one job goes through,
however large), and ``lag`` seconds (the oldest job not done was handed over at most
that long ago). A hand-over beyond either waits until the thread has caught up
(backpressure): memory stays bounded, a slow disk slows the run instead of filling the
memory, and a crash loses at most about ``lag`` more than the open chunk.

The time bound matters because of Python's GIL: the thread spends most of a job
without it (zstd, crc32 of large buffers and the write release it), but each time it
needs it back while the stepping thread runs flat out it may wait up to the switch
interval (5 ms); a job takes it back a handful of times. A stepping thread that waits
for the thread releases the GIL, and the thread catches up at once.

A job that fails (a full disk: RecordingFailed; anything else is wrapped in one) is
kept in ``failure``: every job after it is dropped, and the next hand-over raises it
on the stepping thread, which ends the run as a failure with that reason (the thread
prints nothing).

In a real-time run the thread starts a job only while the stepping thread sleeps
(``slack``: the pacer sets it for its sleep before each tick and clears it when the
tick starts; orchestrator/realtime.py, "The GIL"). A job needs the GIL a handful of
times; started while the stepping thread works, it took the GIL at each of that
thread's releases (a NumPy or FMI call inside a step) and held it for its own Python.
Flat out ``slack`` is always set. A hand-over that has to wait for the thread
(backpressure), :meth:`Background.drain` and :meth:`Background.stop` set it: the
thread is never held back while someone waits for it.

In a real-time run at SCHED_FIFO N (the pacer raises the stepping thread), the thread
follows at N - 1 (looked at before a job, at most every ``FOLLOW_S``), like the
components' processes: it then never waits behind other programs while it holds the
GIL the stepping thread needs.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from moonpool.components.sdk.errors import RecordingFailed

log = logging.getLogger("moonpool.recording")

FOLLOW_S = 0.25
"""How often (at most) the thread looks at the stepping thread's scheduling, s."""


class Background:
    """Runs jobs in order on a thread of its own, holding at most ``limit`` bytes of
    jobs (their declared sizes) that are not done, handed over at most ``lag`` s ago
    (see the module docstring). ``thread = False``: every job runs in :meth:`put`, on
    the calling thread (for comparison)."""

    def __init__(self, limit: int, lag: float, thread: bool = True) -> None:
        self.limit = limit
        """Bytes of jobs handed over and not done beyond which a hand-over waits."""
        self.lag = lag
        """Age (s) of the oldest job not done beyond which a hand-over waits."""
        self.failure: RecordingFailed | None = None
        """Why a job failed (then every later job is dropped), or None."""
        self.waits = 0
        """Hand-overs that had to wait (the disk, or the thread, was behind)."""
        self.most = 0
        """The most bytes ever handed over and not done at once."""
        self.slack = threading.Event()
        """Set while the thread may start a job (see the module docstring)."""
        self.slack.set()
        self._cond = threading.Condition()
        # (job, its arguments, its size, when it was handed over)
        self._jobs: deque[tuple[Callable[..., Any] | None, tuple, int, float]] = deque()
        self._pending = 0
        self._stepping = threading.get_native_id()  # the thread whose priority it follows
        self._policy: tuple[int, int] | None = None  # (policy, priority) it last took
        self._follow_at = 0.0
        self._thread = threading.Thread(target=self._run, name="moonpool-recording",
                                        daemon=True)
        if thread:
            self._thread.start()
        else:
            self.put = self._run_now  # type: ignore[method-assign]

    def _behind(self, size: int, now: float) -> bool:
        jobs = self._jobs
        return bool(jobs) and self.failure is None and (
            self._pending + size > self.limit or now - jobs[0][3] > self.lag)

    def put(self, job: Callable[..., Any], args: tuple, size: int) -> None:
        """Hand ``job(*args)`` over (``size``: the bytes it holds); waits while the
        thread is behind (``limit``, ``lag``). Raises the failure of an earlier job."""
        cond = self._cond
        now = time.monotonic()
        with cond:
            if self._behind(size, now):
                self.waits += 1
                self.slack.set()  # (waiting for the thread: let it work)
                while self._behind(size, now):
                    cond.wait()
                now = time.monotonic()
            if self.failure is not None:
                raise self.failure
            self._jobs.append((job, args, size, now))
            self._pending += size
            self.most = max(self.most, self._pending)
            cond.notify_all()

    def _run_now(self, job: Callable[..., Any], args: tuple, size: int) -> None:
        if self.failure is not None:
            raise self.failure
        self._do(job, args)
        if self.failure is not None:
            raise self.failure

    def drain(self) -> None:
        """Wait until every job handed over is done (written, or dropped after a
        failure)."""
        self.slack.set()
        with self._cond:
            while self._jobs:
                self._cond.wait()

    def stop(self) -> None:
        """Finish the jobs handed over, then end the thread (idempotent)."""
        self.slack.set()
        if self._thread.is_alive():
            with self._cond:
                self._jobs.append((None, (), 0, 0.0))
                self._cond.notify_all()
            self._thread.join()

    def _run(self) -> None:
        cond, jobs = self._cond, self._jobs
        while True:
            with cond:
                while not jobs:
                    cond.wait()
                job, args, size, _ = jobs[0]
            if job is None:
                break
            self.slack.wait()  # real time: while the stepping thread sleeps
            if self.failure is None:
                if time.monotonic() >= self._follow_at:
                    self._follow()
                self._do(job, args)
            with cond:
                jobs.popleft()
                self._pending -= size
                cond.notify_all()
        with cond:
            jobs.popleft()
            cond.notify_all()

    def _do(self, job: Callable[..., Any], args: tuple) -> None:
        try:
            job(*args)
        except RecordingFailed as exc:
            self.failure = exc
        except Exception as exc:  # noqa: BLE001 (any error: the run fails with it)
            log.debug("recording: the writer thread failed", exc_info=True)
            failure = RecordingFailed(
                f"the recording's writer thread failed: {type(exc).__name__}: {exc}; "
                "the run is stopped",
                fix="report it with the run folder; what was written before is kept "
                    "(`moonpool recover` indexes it)")
            failure.__cause__ = exc
            self.failure = failure

    def _follow(self) -> None:
        """Take the stepping thread's scheduling: SCHED_FIFO N - 1 while it runs as
        SCHED_FIFO N, back to normal when it is."""
        self._follow_at = time.monotonic() + FOLLOW_S
        try:
            policy = os.sched_getscheduler(self._stepping)
            priority = os.sched_getparam(self._stepping).sched_priority
        except (OSError, AttributeError):  # the thread is gone; not Linux
            return
        want = ((os.SCHED_FIFO, max(1, priority - 1)) if policy == os.SCHED_FIFO
                else (os.SCHED_OTHER, 0))
        if want == (self._policy or (os.SCHED_OTHER, 0)):
            return
        try:
            os.sched_setscheduler(0, want[0], os.sched_param(want[1]))
        except OSError as exc:
            log.debug("recording: the writer thread cannot take %s: %s", want, exc)
        self._policy = want
