"""The Python twin of ramp.cpp: Signals{ramp = gain * t} every step (t = the step's
start, s). `moonpool run ramp.toml --mode inproc` runs this instead of the C++ program
and gives the same digest."""

from __future__ import annotations

from dataclasses import dataclass

from moonpool.components import Component, Port, param
from moonpool.v1 import signals_pb2


class Ramp(Component):
    """ramp = gain * t, t = t_ns * 1e-9 (the start of the step), one Signal per step."""

    outputs = (Port("signals", signals_pb2.Signals, "one signal, ramp"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        gain: float = param(1.0, "slope of the ramp", unit="1/s")

    def step(self, t_ns, dt_ns, inputs):
        msg = signals_pb2.Signals(header=self.header(t_ns))
        msg.signals.add(name="ramp", value=self.params.gain * (t_ns * 1e-9))
        return {"signals": msg}
