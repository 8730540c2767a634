"""Trivial components for the overhead benchmarks: a counter and relays."""

from __future__ import annotations

from moonpool.components import Component, Port
from moonpool.v1 import signals_pb2


class Counter(Component):
    """Emits a Signals message with one counter value per step."""

    outputs = (Port("out", signals_pb2.Signals),)

    def initialize(self, start_time_ns):
        self.k = 0

    def step(self, t_ns, dt_ns, inputs):
        self.k += 1
        msg = signals_pb2.Signals(header=self.header(t_ns))
        msg.signals.add(name="k", value=self.k)
        return {"out": msg}


class Relay(Component):
    """Copies its input to its output (adds one to the value)."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("out", signals_pb2.Signals),)

    def step(self, t_ns, dt_ns, inputs):
        msg = signals_pb2.Signals(header=self.header(t_ns))
        src = inputs.get("in")
        msg.signals.add(name="k", value=(src.signals[0].value + 1) if src is not None else 0.0)
        return {"out": msg}
