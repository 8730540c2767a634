"""Shutdown after a failure: run.safe_stop components are terminated first, in their
order; every healthy component still gets Terminate, each waiting at most its step
timeout (>= 1 s); the failed one gets nothing."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from moonpool.components.sdk.errors import StepTimeout
from moonpool.orchestrator.adapters.base import Adapter
from moonpool.orchestrator.execution import Execution
from moonpool.orchestrator.rig import ComponentConfig, Rig, RunConfig, Schedule


class Fake(Adapter):
    def __init__(self, name, log):
        super().__init__(name)
        self.log = log

    def terminate(self, timeout_s=None):
        self.log.append((self.name, timeout_s))
        if self.name == "slow":
            raise StepTimeout("no answer to terminate", component=self.name)
        return {}


class NoObserver:
    """Shutdown publishes nothing; an observer that takes nothing."""

    def add_topic(self, topic, type_name, extra_schemas=b""):
        return 0

    def write(self, channel, log_time_ns, payload, attachment=None):
        raise AssertionError("shutdown should not publish")


def _execution(safe_stop=(), step_timeouts=None):
    names = ["a", "slow", "cut", "mcu"]
    step_timeouts = step_timeouts or {}
    comps = tuple(ComponentConfig(n, "x:Y", "inproc", Schedule(Fraction(1)),
                                  step_timeout_ns=step_timeouts.get(n, 2 * 10**9))
                  for n in names)
    rig = Rig(Path("t.toml"), "t", RunConfig(until_ns=1, safe_stop=tuple(safe_stop)), comps, ())
    log: list = []
    adapters = {n: Fake(n, log) for n in names}
    adapters["cut"].failed = True
    return Execution(rig, adapters, observer=NoObserver()), log


def test_safe_stop_first_after_a_failure():
    ex, log = _execution(safe_stop=["mcu", "a"], step_timeouts={"a": 10**8, "mcu": 5 * 10**9})
    problems = ex.shutdown(ok=False)
    assert log == [("mcu", 5.0), ("a", 1.0), ("slow", 2.0)]  # never "cut"
    assert problems == ["component 'slow': no answer to terminate"]


def test_rig_order_and_full_timeouts_when_the_run_went_well():
    ex, log = _execution(safe_stop=["mcu"])
    ex.by_name["cut"].adapter.failed = False
    ex.shutdown(ok=True)
    assert log == [("a", None), ("slow", None), ("cut", None), ("mcu", None)]
