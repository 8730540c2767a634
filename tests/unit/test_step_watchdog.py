"""The in-process step timeout (orchestrator/adapters/inprocess.py): a watchdog thread
interrupts a step that overruns its own timeout, and only such a step: many steps
that each return in time are never interrupted, however long they run in all."""

from __future__ import annotations

import threading
import time

import pytest

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


def _adapter(timeout_s: float) -> tuple[InProcessAdapter, Sleeper]:
    comp = Sleeper()
    a = InProcessAdapter("sleeper", comp, step_timeout_ns=int(timeout_s * 1e9))
    a.configure(lc.Configure(instance_name="sleeper"))
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
