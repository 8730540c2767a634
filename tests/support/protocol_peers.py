"""SDK components that talk to the raw (SDK-free) component of
tests/integration/test_protocol_doc.py.

- ``Counter`` feeds it: Signals ``k`` and ``half`` counting up from 0 (the value 0 is
  the initial output, at the start time).
- ``Doubler`` is the SDK twin of the raw component: ``out = gain * in``, stamped at the
  step's start time, nothing when no input has arrived yet. The raw component must
  produce the same stream, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from moonpool.components import Component, Port, param
from moonpool.v1 import signals_pb2


class Counter(Component):
    """Counts up: k = number of steps done, half = k / 2."""

    outputs = (Port("out", signals_pb2.Signals, "k and k/2"),)

    def _message(self, t_ns: int) -> signals_pb2.Signals:
        msg = signals_pb2.Signals(header=self.header(t_ns))
        msg.signals.add(name="k", value=float(self.k))
        msg.signals.add(name="half", value=self.k / 2)
        return msg

    def initialize(self, start_time_ns):
        self.k = 0
        return {"out": self._message(start_time_ns)}

    def step(self, t_ns, dt_ns, inputs):
        self.k += 1
        return {"out": self._message(t_ns + dt_ns)}


class Doubler(Component):
    """out = gain * in."""

    inputs = (Port("in", signals_pb2.Signals, "values to scale"),)
    outputs = (Port("out", signals_pb2.Signals, "scaled values"),)

    @dataclass(frozen=True)
    class Parameters:
        gain: float = param(2.0, "factor")

    def configure(self, params):
        self.gain = params.gain
        self.outputs_made = 0

    def step(self, t_ns, dt_ns, inputs):
        got = inputs.get("in")
        if got is None:
            return None
        out = signals_pb2.Signals(header=self.header(t_ns))
        for s in got.signals:
            out.signals.add(name=s.name, value=self.gain * s.value)
        self.outputs_made += 1
        return {"out": out}

    def terminate(self):
        return {"outputs": self.outputs_made}
