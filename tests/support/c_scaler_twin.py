"""Python counterparts of the C component in tests/support/c_component/scaler.c
(tests/integration/test_c_component.py).

- `Wave`: a Signals source for the scaler's input.
- `Scaler`: the scaler again, with the Python SDK: same ports, parameters and
  arithmetic, so a rig gives the same digest with either one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from moonpool.components import Component, KeyedNoise, ParameterError, Port, param
from moonpool.v1 import signals_pb2


class Wave(Component):
    """Signals a = sin(2π f t), b = t (seconds), c = -0.0."""

    outputs = (Port("signals", signals_pb2.Signals, "a, b and c"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        freq_hz: float = param(1.0, "frequency of a", unit="Hz")

    def step(self, t_ns, dt_ns, inputs):
        t = t_ns * 1e-9
        msg = signals_pb2.Signals(header=self.header(t_ns, "wave"))
        msg.signals.add(name="a", value=math.sin(2.0 * math.pi * self.params.freq_hz * t))
        msg.signals.add(name="b", value=t)
        msg.signals.add(name="c", value=-0.0)
        return {"signals": msg}


class Scaler(Component):
    """out = gain * in + offset (+ keyed noise): the Python twin of scaler.c."""

    inputs = (Port("in", signals_pb2.Signals, "signals to scale"),)
    outputs = (
        Port("out", signals_pb2.Signals, "the scaled signals, same names and order"),
        Port("stats", signals_pb2.Signals, "steps done and steps with a fresh input"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        gain: float = param(doc="factor applied to every input signal")
        offset: float = param(0.0, "added after the gain")
        noise_std: float = param(0.0, "standard deviation of the keyed Gaussian noise added (0: none)")
        every: int = param(1, "publish `out` on every N-th step only")
        frame_id: str = param("", "Header.frame_id of `out`")

    def configure(self, params):
        if not (math.isfinite(params.noise_std) and params.noise_std >= 0):
            raise ParameterError(f"parameter 'noise_std' is {params.noise_std}; it must be finite and >= 0",
                                 component=self.name, fix="change the value in the rig's parameters")
        if params.every < 1:
            raise ParameterError(f"parameter 'every' is {params.every}; it must be >= 1",
                                 component=self.name, fix="change the value in the rig's parameters")
        self.p = params
        self.noise = KeyedNoise(self.seed, self.name)

    def initialize(self, start_time_ns):
        self.steps = self.fresh = 0
        self.last_seq = None
        return {"stats": self._stats(start_time_ns)}

    def _stats(self, t_ns):
        msg = signals_pb2.Signals(header=self.header(t_ns))
        msg.signals.add(name="steps", value=float(self.steps))
        msg.signals.add(name="fresh", value=float(self.fresh))
        return msg

    def step(self, t_ns, dt_ns, inputs):
        index, out = self.steps, {}
        sig = inputs.get("in")
        if sig is not None and sig.header.seq != self.last_seq:
            self.fresh += 1
            self.last_seq = sig.header.seq
        if sig is not None and index % self.p.every == 0:
            msg = signals_pb2.Signals(header=self.header(t_ns, self.p.frame_id))
            for s in sig.signals:
                y = self.p.gain * s.value + self.p.offset
                if self.p.noise_std != 0.0:
                    y = y + self.p.noise_std * self.noise.normal(index, s.name)
                msg.signals.add(name=s.name, value=y)
            out["out"] = msg
        self.steps += 1
        out["stats"] = self._stats(t_ns + dt_ns)
        return out

    def terminate(self):
        return {"fresh": self.fresh, "steps": self.steps}
