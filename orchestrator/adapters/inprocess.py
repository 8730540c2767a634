"""InProcessAdapter: a component living in the orchestrator's own process.

Same semantics as the wire: the component goes through a ``ComponentHost`` (the
code the serve loop uses), its outputs are serialized once, and consumers receive
decoded copies, so an in-process run and a multi-process run give the same stream.

A step that does not return within its timeout is interrupted and the run fails with
StepTimeout: a watchdog thread, woken at the running step's deadline, sends SIGALRM to
the main thread, whose handler raises. A step itself only writes its deadline and
clears it (no system call per step); the watchdog wakes at most once per (shortest)
step timeout while steps run, and never signals a step that is within its time.

A run stepped on another thread (a Dask worker's task, a thread of the user's
program) has a watchdog of its own per stepping thread, which raises the same
exception in that thread asynchronously (``PyThreadState_SetAsyncExc``): a step
looping in Python is interrupted as on the main thread; a step blocked in a system
call (a sleep, a socket) or in native code is not, until the call returns (signals
interrupt system calls on the main thread only). The watchdog fires and the step
disarms it under one lock, and disarming withdraws an exception not yet delivered,
so none lands after the step returned. An adapter stepped on another thread than the
one that made it (made on the main thread, stepped on a worker's) moves to that
thread's watchdog at its first step there (one thread id compared per step).

The handler runs when the main thread next executes Python code: a step stuck in
native code (an FMU's doStep that never returns, a C extension's loop) cannot be
interrupted in this process, and neither can Ctrl-C. ``STUCK_WARNING_S`` after the
deadline the watchdog says so, naming the component. When the run has registered
what to do then (``abandon_stuck_steps``: the command line's run), the watchdog
thread ends the run itself: the main thread is parked for good should it ever come
back to Python (the pending SIGALRM's handler blocks instead of raising), and the
callback closes the stream, the components and the recording, writes the summary
and exits the process. Without one (a run driven by other code, e.g. a test or a
notebook) it only warns, with the way out (kill the run; ``run = "process"``).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from moonpool.components.sdk import wire
from moonpool.components.sdk.component import Attached, Component
from moonpool.components.sdk.errors import StepTimeout
from moonpool.components.sdk.host import ComponentHost
from moonpool.v1 import lifecycle_pb2 as lc

from .base import Adapter, Sample


class _Alarm(BaseException):
    """Raised by the SIGALRM handler; BaseException so component code cannot swallow it."""


MIN_POLL_S = 0.02
"""The step watchdog's shortest look-again interval while no step runs, s."""
STUCK_WARNING_S = 1.0
"""How long after interrupting a step the watchdog waits for it to return before
warning that it is stuck in native code, s (Python code returns to the handler at
once)."""

log = logging.getLogger("moonpool.inprocess")


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Deliver ``exc`` to the thread ``thread_id`` at its next Python instruction
    (None: withdraw one not delivered yet)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)


class _Watchdog:
    """Interrupts the main thread when its in-process step overruns its deadline
    (another stepping thread's: ``_ThreadWatchdog``).

    ``deadline_ns`` (time.perf_counter_ns) is set by the adapter before a step and reset
    to 0 after it; the thread sleeps until the deadline it sees (at most ``poll_s``
    while no step runs, the shortest timeout registered), and if the same step is
    still running then, sends SIGALRM to the main thread. One per process, started
    by the first adapter that needs it."""

    def __init__(self) -> None:
        self.deadline_ns = 0
        self.stepping: Any = None  # the adapter whose step has that deadline
        self.fired = 0  # the deadline of the step the thread interrupted last
        self.warned = 0  # the deadline of the step it last warned about (stuck)
        # Stuck steps: the handler marks the step it raised in (``handled``) and the
        # thread decides to abandon one under the same lock, so exactly one of the two
        # ends the run: the main thread's failure path, or ``on_stuck`` on this thread.
        self.lock = threading.Lock()
        self.handled = 0
        self.abandoned = False
        self.on_stuck: Callable[[InProcessAdapter, float], None] | None = None
        self.poll_s = 1.0
        self.users = 0
        self._previous: Any = None
        self._stop = False
        self._wake = threading.Event()  # set: look again now (stop, or a policy change)
        self._thread: threading.Thread | None = None

    def register(self, timeout_s: float) -> None:
        if self.users == 0:
            self._install()
            self._stop = False
            self._wake.clear()
            self.poll_s = max(MIN_POLL_S, timeout_s)
            self._thread = threading.Thread(target=self._watch, args=(self._target(),),
                                            name="moonpool-step-watchdog", daemon=True)
            self._thread.start()
        self.users += 1
        # While no step runs the thread looks every poll_s: at most the shortest timeout,
        # so a step that starts then is still caught at its deadline; at least 20 ms, so
        # a tiny timeout does not make it wake a thousand times a second (such a step is
        # caught up to 20 ms late).
        self.poll_s = max(MIN_POLL_S, min(self.poll_s, timeout_s))

    def release(self) -> None:
        if self.users == 0:
            return
        self.users -= 1
        if self.users == 0:
            self._stop = True
            self._wake.set()
            if self.abandoned:  # called by the watchdog thread ending the run: the
                return          # handler stays, to park the main thread
            if self._thread is not None:
                self._thread.join(5.0)
                self._thread = None
            self.deadline_ns = 0
            self._uninstall()

    # -- what the main thread's watchdog does its own way (_ThreadWatchdog: another's)

    def _target(self) -> threading.Thread:
        return threading.main_thread()

    def _install(self) -> None:
        """On the first register (on the main thread: only it may set handlers)."""
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        if previous is not _on_alarm:  # (left installed by a release elsewhere)
            self._previous = previous

    def _uninstall(self) -> None:
        """On the last release. Released on another thread, the handler stays: with no
        deadline set it does nothing, and the next register on the main thread keeps it."""
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGALRM) is _on_alarm):
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)

    def _interrupt(self, thread: threading.Thread, deadline: int) -> None:
        """Interrupt the step of ``deadline`` on ``thread`` (still running: checked by
        the handler)."""
        self.fired = deadline
        signal.pthread_kill(thread.ident, signal.SIGALRM)

    def _may_abandon(self) -> bool:
        return self.on_stuck is not None

    def nudge(self) -> None:
        """Make the thread look again at once (the main thread's policy changed)."""
        self._wake.set()

    def _watch(self, main: threading.Thread) -> None:
        wake = self._wake

        def wait(seconds: float) -> None:
            wake.wait(seconds)
            wake.clear()

        policy = None
        while not self._stop:
            # Follow the main thread's scheduling (SCHED_FIFO while a real-time run
            # paces): a watchdog waiting behind other processes for a CPU would hold
            # up the main thread when it asks for the GIL.
            try:
                now_policy = (os.sched_getscheduler(main.native_id),
                              os.sched_getparam(main.native_id).sched_priority)
                if now_policy != policy:
                    os.sched_setscheduler(0, now_policy[0], os.sched_param(now_policy[1]))
                    policy = now_policy
            except (OSError, AttributeError):
                pass
            deadline = self.deadline_ns
            if not deadline:
                wait(self.poll_s)
                continue
            late = time.perf_counter_ns() - deadline
            if late < 0:
                wait(-late * 1e-9)
            elif deadline == self.fired:  # signalled already: wait for that step to end
                if self.warned == deadline:
                    wait(self.poll_s)
                elif late >= STUCK_WARNING_S * 1e9:
                    self.warned = deadline
                    self._stuck(main, deadline, late * 1e-9)
                else:
                    wait(min(self.poll_s, STUCK_WARNING_S - late * 1e-9))
            else:  # the same step, still running: interrupt it
                self._interrupt(main, deadline)

    def _stuck(self, main: threading.Thread, deadline: int, late_s: float) -> None:
        """The step of ``deadline`` was interrupted and has not returned: warn, and end
        the run if one registered how (``abandon_stuck_steps``) and the main thread has
        not raised meanwhile."""
        adapter = self.stepping
        with self.lock:
            abandon = (self._may_abandon() and self.handled != deadline
                       and self.deadline_ns == deadline)
            if abandon:
                self.abandoned = True
        if not abandon:
            self._warn_stuck(late_s)
            return
        adapter.stuck = True
        # Should the call ever return, the pending SIGALRM's handler parks the main
        # thread at its next Python instruction; this one makes sure of it.
        signal.pthread_kill(main.ident, signal.SIGALRM)
        log.warning("components.%s: its step has run %.1f s past its step_timeout (%g s) "
                    "and was interrupted, but goes on: it is stuck in native code (e.g. an "
                    "FMU's doStep), which cannot be interrupted in this process; ending the "
                    "run", adapter.name, late_s, adapter.step_timeout_s)
        self.on_stuck(adapter, late_s)

    def _warn_stuck(self, late_s: float) -> None:
        adapter = self.stepping
        name = getattr(adapter, "name", "?")
        timeout_s = getattr(adapter, "step_timeout_s", 0.0)
        log.warning(
            "components.%s: its step has run %.1f s past its step_timeout (%g s) and was "
            "interrupted, but goes on: it is stuck in native code (e.g. an FMU's doStep), "
            "which an in-process step timeout cannot interrupt, nor Ctrl-C (or its code "
            "caught the interruption: a bare except: clause). The run fails "
            "with StepTimeout if the step ever returns. If it does not: end the run with "
            "SIGKILL (kill -9 %d; summary.json is not written, the recording keeps what "
            "was published until about 0.5 s before the step began), and give this "
            "component run = \"process\" in the rig, where a hanging step is killed at "
            "its timeout", name, late_s, timeout_s, os.getpid())


def _on_alarm(signum: int, frame: Any) -> None:
    # Only while the overrunning step is still running: a signal that arrives just
    # after it returned (its deadline cleared) is ignored. Once the watchdog thread
    # ends the run (a step stuck in native code), the main thread must not run on:
    # it waits here until the process exits.
    w = _WATCHDOG
    with w.lock:
        park = w.abandoned
        if not park:
            if not (w.deadline_ns and w.deadline_ns == w.fired):
                return
            w.handled = w.deadline_ns
    if park:
        threading.Event().wait()
    raise _Alarm()


class _ThreadWatchdog(_Watchdog):
    """The watchdog of steps run on ``target``, a thread other than the main one: it
    raises ``_Alarm`` in that thread (an asynchronous exception, delivered at its next
    Python instruction), fired under the lock that ``disarm`` takes after each step;
    it never abandons a step (``abandon_stuck_steps`` is the main thread's)."""

    def __init__(self, target: threading.Thread) -> None:
        super().__init__()
        self.target = target

    def disarm(self) -> None:
        """After a step: no deadline; an exception fired for it and not delivered yet
        is withdrawn."""
        with self.lock:
            deadline, self.deadline_ns = self.deadline_ns, 0
            if deadline and deadline == self.fired:
                _raise_in(self.target.ident, None)

    def _target(self) -> threading.Thread:
        return self.target

    def _install(self) -> None:
        pass

    def _uninstall(self) -> None:
        pass

    def _interrupt(self, thread: threading.Thread, deadline: int) -> None:
        self.fired = deadline
        with self.lock:
            if self.deadline_ns == deadline:
                _raise_in(thread.ident, _Alarm)

    def _may_abandon(self) -> bool:
        return False

    def _warn_stuck(self, late_s: float) -> None:
        adapter = self.stepping
        log.warning(
            "components.%s: its step has run %.1f s past its step_timeout (%g s) and was "
            "interrupted, but goes on: it is blocked in a system call (a sleep, a "
            "socket) or stuck in native code, which an in-process step timeout cannot "
            "interrupt on thread '%s' (only on the main thread can it cut a system call "
            "short). The run fails with StepTimeout if the step ever returns. Give this "
            "component run = \"process\" in the rig (in a sweep: mode = \"process\"), "
            "where a hanging step is killed at its timeout", getattr(adapter, "name", "?"),
            late_s, getattr(adapter, "step_timeout_s", 0.0), self.target.name)


_get_ident = threading.get_ident
_WATCHDOG = _Watchdog()  # the main thread's
_HERE = threading.local()  # .watchdog: another stepping thread's _ThreadWatchdog


def _watchdog_here() -> _Watchdog:
    """The step watchdog of steps run on the calling thread."""
    if threading.current_thread() is threading.main_thread():
        return _WATCHDOG
    w = getattr(_HERE, "watchdog", None)
    if w is None:
        w = _HERE.watchdog = _ThreadWatchdog(threading.current_thread())
    return w


@contextlib.contextmanager
def abandon_stuck_steps(on_stuck: Callable[[InProcessAdapter, float], None]) -> Iterator[None]:
    """While inside: an in-process step stuck in native code ``STUCK_WARNING_S`` past
    its deadline is abandoned: ``on_stuck(adapter, seconds_late)`` runs on the
    watchdog thread (the main thread never runs Python again) and must end the
    process (``os._exit``): the run cannot go on, nor return to its caller."""
    _WATCHDOG.on_stuck = on_stuck
    try:
        yield
    finally:
        _WATCHDOG.on_stuck = None


def nudge_watchdog() -> None:
    """Tell the step watchdog that the main thread's scheduling policy changed (the
    real-time pacer raised or restored it): it follows at once."""
    _WATCHDOG.nudge()


class _LocalSample(Sample):
    """A Sample made by the host straight from the component's output (no Output object
    in between; the message is not kept: consumers decode their own copy)."""

    __slots__ = ()

    def __init__(self, port: str, type_name: str, message: Any, payload: bytes,
                 attachment: Any = None) -> None:
        self.port = port
        self.type_name = type_name
        self.payload = payload
        self.attachment = attachment
        self._message = None


class InProcessAdapter(Adapter):
    placement = "inproc"

    def __init__(
        self, name: str, component: Component, *, step_timeout_ns: int, base_dir: Any = None
    ) -> None:
        super().__init__(name)
        self.host = ComponentHost(component, base_dir=base_dir)
        self.host.output_type = _LocalSample
        self.step_timeout_s = step_timeout_ns * 1e-9
        self._timeout_ns = step_timeout_ns
        self._pending: tuple[int, int, dict[str, Any]] | None = None
        self._queued = {p.name for p in type(component).inputs if p.queued}
        self.stuck = False  # its step is stuck in native code and was abandoned
        # The watchdog of the thread that makes it, where its steps usually run (the
        # execution is single-threaded); a step on another thread moves it there.
        self._thread_id = threading.get_ident()
        self._watchdog: _Watchdog | None = _watchdog_here()
        self._watchdog.register(self.step_timeout_s)

    def describe(self) -> lc.Description:
        self.description = self.host.describe()
        return self.description

    def configure(self, msg: lc.Configure) -> None:
        self.host.configure(msg)
        self._queued = {p.name for p in self.host.inputs if p.queued}

    def initialize(self, start_time_ns: int,
                   inputs: dict[str, Any] | None = None) -> list[Sample]:
        decoded = {port: _payload_of(s) for port, s in (inputs or {}).items()}
        return self.host.initialize(start_time_ns, decoded or None)

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        self._pending = (t_ns, dt_ns, inputs, self.take_parameters())

    def finish_step(self) -> list[Sample]:
        pending = self._pending
        assert pending is not None, "finish_step without start_step"
        self._pending = None
        return self.step(*pending)

    def step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any],
             parameters: tuple[tuple[str, Any], ...] | None = None) -> list[Sample]:
        if parameters is None:
            parameters = self.take_parameters() if self.next_parameters else ()
        if inputs:
            decoded: dict[str, Any] = {}
            for port, value in inputs.items():
                if value.__class__ is list:
                    decoded[port] = [_payload_of(s) for s in value]
                else:
                    decoded[port] = _payload_of(value)
        else:
            decoded = {}
        for port in self._queued:
            decoded.setdefault(port, [])
        watch = self._watchdog
        if watch is not None and self._thread_id != _get_ident():
            watch = self._move_watchdog()
        t0 = time.perf_counter_ns()
        if watch is not None:
            watch.stepping = self
            watch.deadline_ns = t0 + self._timeout_ns
        try:
            try:
                outputs = self.host.step(t_ns, dt_ns, decoded, parameters)
            finally:
                if watch is _WATCHDOG:
                    watch.deadline_ns = 0  # (the SIGALRM handler checks it)
                elif watch is not None:
                    watch.disarm()
        except _Alarm as exc:  # (also one that landed while disarming: the step overran)
            if watch is not None:
                watch.deadline_ns = 0
            self.host.state = lc.COMPONENT_STATE_FAILED
            self.failed = True
            raise StepTimeout(
                f"step at t={t_ns * 1e-9:.6f} s did not return within {self.step_timeout_s:g} s",
                component=self.name,
                fix="fix the hang in the component, or raise step_timeout in the rig",
            ) from exc
        except BaseException:
            self.failed = True
            raise
        self.times.add(time.perf_counter_ns() - t0)
        if self.host.component.finished:
            self.finished = self.host.component.finished
            self.finished_failed = self.host.component.finished_failed
        return outputs

    def _move_watchdog(self) -> _Watchdog:
        """Stepped on another thread than before (e.g. made on the main thread, stepped
        on a worker's): its steps are watched by that thread's watchdog from now on (the
        main thread's SIGALRM would interrupt whatever the main thread is doing)."""
        old = self._watchdog
        self._thread_id = _get_ident()
        self._watchdog = _watchdog_here()
        self._watchdog.register(self.step_timeout_s)
        if old is not None:
            old.release()
        return self._watchdog

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        return self.host.terminate()

    def close(self) -> None:
        if self._watchdog is not None:
            watch, self._watchdog = self._watchdog, None
            watch.release()
        # (A stuck step's component is still running on the main thread: nothing may
        # call into it from the thread that ends the run.)
        if self.host.state != lc.COMPONENT_STATE_TERMINATED and not self.stuck:
            try:
                self.host.terminate()
            except Exception:  # noqa: BLE001 - close never raises
                pass


def _payload_of(sample: Sample) -> Any:
    # A fresh decode per delivery: a consumer that modifies its input cannot
    # affect another consumer, exactly as when each runs in its own process.
    msg = wire.decode(sample.type_name, sample.payload)
    if sample.attachment is not None:
        return Attached(msg, sample.attachment)
    return msg
