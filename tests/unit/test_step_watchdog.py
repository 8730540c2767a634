"""The in-process step timeout (orchestrator/adapters/inprocess.py): a watchdog thread
interrupts a step that overruns its own timeout, and only such a step: many steps
that each return in time are never interrupted, however long they run in all."""

from __future__ import annotations

import threading
import time

import pytest

from logrecords import warnings_of
from moonpool.components.sdk.component import Component
from moonpool.components.sdk.errors import StepTimeout
from moonpool.orchestrator.adapters import inprocess
from moonpool.orchestrator.adapters.inprocess import InProcessAdapter
from moonpool.v1 import lifecycle_pb2 as lc


class Sleeper(Component):
    """Sleeps ``self.pause`` seconds in every step."""

    pause = 0.0

    def step(self, t_ns, dt_ns, inputs):
        time.sleep(self.pause)


def _adapter(timeout_s: float, comp: Component | None = None
             ) -> tuple[InProcessAdapter, Component]:
    """An initialised adapter of ``comp`` (default: a Sleeper), on this thread."""
    comp = Sleeper() if comp is None else comp
    name = type(comp).__name__.lower()
    a = InProcessAdapter(name, comp, step_timeout_ns=int(timeout_s * 1e9))
    a.configure(lc.Configure(instance_name=name))
    a.describe()
    a.initialize(0)
    return a, comp


def _step(a: InProcessAdapter, k: int) -> None:
    a.start_step(k * 1_000_000, 1_000_000, {})
    a.finish_step()


def test_steps_within_their_timeout_are_never_interrupted():
    a, comp = _adapter(0.1)
    comp.pause = 0.02
    try:
        for k in range(12):  # 0.24 s of steps in all, each well within 0.1 s
            _step(a, k)
        assert a.times.count == 12 and not a.failed
    finally:
        a.close()


def test_a_hanging_step_is_interrupted_and_the_watchdog_ends_with_the_last_adapter():
    before = inprocess._WATCHDOG.users  # adapters other tests left open
    a, comp = _adapter(0.1)
    try:
        _step(a, 0)
        comp.pause = 30.0
        with pytest.raises(StepTimeout, match="did not return within 0.1 s"):
            _step(a, 1)
        assert a.failed and a.host.state == lc.COMPONENT_STATE_FAILED
    finally:
        a.close()
    assert inprocess._WATCHDOG.users == before
    if before == 0:
        assert not any(t.name == "moonpool-step-watchdog" for t in threading.enumerate())


# A step stuck in native code (tests/support/spin.py): the SIGALRM handler cannot run
# until the call returns.


class Spinner(Component):
    """Spends ``self.pause`` seconds in a C function in every step (ctypes: the GIL is
    released, as during an FMU's doStep)."""

    pause = 0.0
    spin = None

    def step(self, t_ns, dt_ns, inputs):
        self.spin(self.pause)


@pytest.fixture(scope="module")
def spin(tmp_path_factory):
    import ctypes

    import spin as busy_loop

    fn = ctypes.CDLL(str(busy_loop.build(tmp_path_factory.mktemp("spin")))).spin
    fn.argtypes, fn.restype = [ctypes.c_double], None
    return fn


def _records_of_the_watchdog(run) -> list[str]:
    """The messages the step watchdog logs (WARNING and above) while ``run()`` runs."""
    return warnings_of("moonpool.inprocess", run)


def test_a_step_stuck_in_native_code_is_named_in_a_warning_and_fails_when_it_returns(
        spin, monkeypatch):
    monkeypatch.setattr(inprocess, "STUCK_WARNING_S", 0.2)
    comp = Spinner()
    comp.spin = spin
    a = InProcessAdapter("spinner", comp, step_timeout_ns=100_000_000)
    a.configure(lc.Configure(instance_name="spinner"))
    a.describe()
    a.initialize(0)
    raised = []

    def steps():
        _step(a, 0)  # in time: nothing said
        comp.pause = 0.8  # interrupted at 0.1 s, but the C call goes on to 0.8 s
        t0 = time.monotonic()
        with pytest.raises(StepTimeout, match="did not return within 0.1 s"):
            _step(a, 1)
        raised.append(time.monotonic() - t0)

    try:
        said = _records_of_the_watchdog(steps)
    finally:
        a.close()
    assert raised and raised[0] >= 0.8  # the handler ran only when the C call returned
    assert len(said) == 1, said
    assert said[0].startswith("components.spinner: its step has run ")
    assert "stuck in native code" in said[0] and 'run = "process"' in said[0]
    assert a.failed


def test_a_python_step_that_is_interrupted_gets_no_stuck_warning(monkeypatch):
    monkeypatch.setattr(inprocess, "STUCK_WARNING_S", 0.05)
    a, comp = _adapter(0.1)

    def steps():
        comp.pause = 30.0
        with pytest.raises(StepTimeout):
            _step(a, 0)
        time.sleep(0.3)  # the watchdog had time to warn, were the step still running

    try:
        said = _records_of_the_watchdog(steps)
    finally:
        a.close()
    assert said == []


# Steps run on a thread other than the main one (a Dask worker's task, a user's
# thread): SIGALRM cannot reach them; that thread's own watchdog raises in it.


class Looper(Component):
    """Loops in Python (busy) for ``self.pause`` seconds in every step."""

    pause = 0.0

    def step(self, t_ns, dt_ns, inputs):
        end = time.monotonic() + self.pause
        while time.monotonic() < end:
            pass


def _on_a_thread(fn):
    """``fn()`` on a new thread: its value, or what it raised."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=run, name="stepping-thread", daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive()
    return out


def _ended(w) -> bool:
    """The watchdog ``w`` has no user left and its thread has ended."""
    return w.users == 0 and w._thread is None


def test_a_step_looping_on_another_thread_is_interrupted_and_only_it():
    watchdogs = []

    def steps():
        a, comp = _adapter(0.1, Looper())
        watchdogs.append(a._watchdog)
        try:
            comp.pause = 0.02
            for k in range(12):  # 0.24 s of steps in all, each well within 0.1 s
                _step(a, k)
            assert a.times.count == 12 and not a.failed
            assert isinstance(a._watchdog, inprocess._ThreadWatchdog)
            assert a._watchdog.target is threading.current_thread()
            comp.pause = 20.0  # returns by itself after 20 s: not interrupted, no raise
            with pytest.raises(StepTimeout, match="did not return within 0.1 s"):
                _step(a, 12)
            return a.failed and a.host.state == lc.COMPONENT_STATE_FAILED
        finally:
            a.close()

    out = _on_a_thread(steps)
    assert out == {"value": True}, out
    assert _ended(watchdogs[0])  # it ended with the thread's last adapter


@pytest.mark.parametrize("withdrawn", [True, False])
def test_an_exception_fired_and_withdrawn_before_the_thread_runs_python_never_lands(
        withdrawn):
    # What disarming relies on: the watchdog fires while the step is in native code
    # (here: blocked on a lock, the GIL released), the step returns and withdraws it
    # before running Python again; the thread then runs on undisturbed. Not withdrawn,
    # it lands at once (the check can fail).
    gate = threading.Lock()
    gate.acquire()
    ready = threading.Event()
    result = {}

    def blocked():
        ready.set()
        try:
            gate.acquire()  # native code: an asynchronous exception waits for its return
            result["value"] = sum(range(100_000))  # Python instructions to land in
        except BaseException as exc:  # noqa: BLE001 - what the test looks at
            result["error"] = exc

    t = threading.Thread(target=blocked, daemon=True)
    t.start()
    try:
        assert ready.wait(5)
        time.sleep(0.05)  # (in acquire by now)
        inprocess._raise_in(t.ident, inprocess._Alarm)
        if withdrawn:
            inprocess._raise_in(t.ident, None)
    finally:
        gate.release()
        t.join(10)
    if withdrawn:
        assert result == {"value": sum(range(100_000))}, result
    else:
        assert isinstance(result.get("error"), inprocess._Alarm), result


def test_a_step_on_another_thread_than_the_adapters_is_watched_there():
    # Made on the main thread, stepped on a worker's (a gym environment made in one
    # thread and stepped in another): the main thread's SIGALRM used to interrupt the
    # main thread, wherever it was, with an exception meant for the step.
    a, comp = _adapter(0.1, Looper())  # on the main thread
    moved = []

    def steps():
        comp.pause = 0.01
        _step(a, 0)
        assert a._watchdog.target is threading.current_thread()
        moved.append(a._watchdog)
        comp.pause = 20.0
        with pytest.raises(StepTimeout, match="did not return within 0.1 s"):
            _step(a, 1)
        return a.failed

    try:
        out = _on_a_thread(steps)  # (the main thread waits in join meanwhile)
    finally:
        a.close()
    assert out == {"value": True}, out
    assert _ended(moved[0])
