"""Components that show whether a step is collected only when needed: ``Gate``
blocks in one step until a file exists, ``Marker`` writes that file at a given
simulation time. If the execution waited for the gate's reply before going on
with later instants, the marker would never be written (the gate times out)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from moonpool.components import Component, Port, param
from moonpool.v1 import signals_pb2


def _value(t_ns: int, header, value: float) -> signals_pb2.Signals:
    m = signals_pb2.Signals(header=header)
    m.signals.add(name="v", value=value)
    m.signals.add(name="t", value=t_ns)
    return m


class Gate(Component):
    """Emits its step count; its step at ``wait_at_ns`` waits for ``wait_for`` to exist
    (at most ``give_up_s``, then raises). Its outputs never depend on the wait."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("out", signals_pb2.Signals),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        wait_for: str = param("", "file to wait for (empty: never wait)")
        wait_at_ns: int = param(0, "simulation time of the step that waits, ns")
        give_up_s: float = param(5.0, "longest wait before raising, s")

    def configure(self, params):
        self.p = params
        self.k = 0

    def step(self, t_ns, dt_ns, inputs):
        if self.p.wait_for and t_ns == self.p.wait_at_ns:
            end = time.monotonic() + self.p.give_up_s
            while not Path(self.p.wait_for).exists():
                if time.monotonic() > end:
                    raise RuntimeError(f"{self.p.wait_for} did not appear: the execution "
                                       "waited for this step before going on")
                time.sleep(0.002)
        self.k += 1
        seen = inputs.get("in")
        got = sum(x.value for x in seen.signals) if seen is not None else 0.0
        return {"out": _value(t_ns, self.header(t_ns), self.k + 1000 * got)}


class Marker(Component):
    """Emits a running sum of its input; at ``write_at_ns`` writes ``path``."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("out", signals_pb2.Signals),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        path: str = param("", "file to write (empty: none)")
        write_at_ns: int = param(0, "simulation time at which to write it, ns")

    def configure(self, params):
        self.p = params
        self.total = 0.0

    def step(self, t_ns, dt_ns, inputs):
        if self.p.path and t_ns == self.p.write_at_ns:
            Path(self.p.path).write_text(str(t_ns))
        seen = inputs.get("in")
        if seen is not None:
            self.total += sum(x.value for x in seen.signals)
        return {"out": _value(t_ns, self.header(t_ns), self.total)}
