"""InProcessAdapter: a component living in the orchestrator's own process.

Same semantics as the wire: the component goes through a ``ComponentHost`` (the
code the serve loop uses), its outputs are serialized once, and consumers receive
decoded copies, so an in-process run and a multi-process run give the same stream.

A step that does not return within its timeout is interrupted with SIGALRM (main
thread only) and the run fails with StepTimeout.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

from moonpool.components.sdk import wire
from moonpool.components.sdk.component import Attached, Component
from moonpool.components.sdk.errors import StepTimeout
from moonpool.components.sdk.host import ComponentHost, Output
from moonpool.v1 import lifecycle_pb2 as lc

from .base import Adapter, Sample


class _Alarm(BaseException):
    """Raised by the SIGALRM handler; BaseException so component code cannot swallow it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


_previous_handler: Any = None
_installed = 0


def _install_alarm() -> None:
    """Install the SIGALRM handler once (per process) while any adapter uses it."""
    global _previous_handler, _installed
    if not _installed:
        _previous_handler = signal.signal(signal.SIGALRM, _on_alarm)
        _installed = 1


def _restore_alarm() -> None:
    global _installed
    if _installed and signal.getsignal(signal.SIGALRM) is _on_alarm:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, _previous_handler or signal.SIG_DFL)
        _installed = 0


def to_samples(outputs: list[Output]) -> list[Sample]:
    return [Sample(o.port, o.type_name, o.payload, o.attachment) for o in outputs]


class InProcessAdapter(Adapter):
    placement = "inproc"

    def __init__(
        self, name: str, component: Component, *, step_timeout_ns: int, base_dir: Any = None
    ) -> None:
        super().__init__(name)
        self.host = ComponentHost(component, base_dir=base_dir)
        self.step_timeout_s = step_timeout_ns * 1e-9
        self._pending: tuple[int, int, dict[str, Any]] | None = None
        self._queued = {p.name for p in type(component).inputs if p.queued}
        self._use_alarm = threading.current_thread() is threading.main_thread()

    def describe(self) -> lc.Description:
        self.description = self.host.describe()
        return self.description

    def configure(self, msg: lc.Configure) -> None:
        self.host.configure(msg)
        self._queued = {p.name for p in self.host.inputs if p.queued}

    def initialize(self, start_time_ns: int,
                   inputs: dict[str, Any] | None = None) -> list[Sample]:
        decoded = {port: _payload_of(s) for port, s in (inputs or {}).items()
                   if not isinstance(s, list)}
        return to_samples(self.host.initialize(start_time_ns, decoded or None))

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        self._pending = (t_ns, dt_ns, inputs, self.take_parameters())

    def finish_step(self) -> list[Sample]:
        assert self._pending is not None, "finish_step without start_step"
        t_ns, dt_ns, inputs, parameters = self._pending
        self._pending = None
        decoded: dict[str, Any] = {}
        for port, value in inputs.items():
            if isinstance(value, list):
                decoded[port] = [_payload_of(s) for s in value]
            else:
                decoded[port] = _payload_of(value)
        for port in self._queued:
            decoded.setdefault(port, [])
        t0 = time.perf_counter_ns()
        if self._use_alarm:
            _install_alarm()
            signal.setitimer(signal.ITIMER_REAL, self.step_timeout_s)
        try:
            outputs = self.host.step(t_ns, dt_ns, decoded, parameters)
        except _Alarm as exc:
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
        finally:
            if self._use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
        self.times.add(time.perf_counter_ns() - t0)
        if self.host.component.finished:
            self.finished = self.host.component.finished
            self.finished_failed = self.host.component.finished_failed
        return to_samples(outputs)

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        return self.host.terminate()

    def close(self) -> None:
        if self._use_alarm:
            _restore_alarm()
        if self.host.state != lc.COMPONENT_STATE_TERMINATED:
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
