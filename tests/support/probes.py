"""Tiny components for the execution-semantics tests: a counter and a probe that
reports what it received."""

from __future__ import annotations

from dataclasses import dataclass

from moonpool.components import Component, Port, param
from moonpool.v1 import signals_pb2, vehicle_pb2, vision_pb2


class Count(Component):
    """Emits k (its step index) stamped at the step's start time; 0 at initialize
    when ``initial_output`` is true (value -1)."""

    outputs = (Port("out", signals_pb2.Signals),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        initial_output: bool = param(False, "emit value -1 at initialize")

    def configure(self, params):
        self.p = params
        self.k = 0

    def initialize(self, start_time_ns):
        if self.p.initial_output:
            return {"out": self._msg(start_time_ns, -1)}

    def _msg(self, t, v):
        m = signals_pb2.Signals(header=self.header(t))
        m.signals.add(name="k", value=v)
        m.signals.add(name="t", value=t)
        return m

    def step(self, t_ns, dt_ns, inputs):
        out = {"out": self._msg(t_ns, self.k)}
        self.k += 1
        return out


class Probe(Component):
    """Records, per step, (t, the value of its input or None)."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("seen", signals_pb2.Signals),)
    log: list = []

    def step(self, t_ns, dt_ns, inputs):
        m = inputs.get("in")
        seen = signals_pb2.Signals(header=self.header(t_ns))
        if m is not None:
            seen.signals.add(name="k", value=m.signals[0].value)
        return {"seen": seen}


class QueueProbe(Component):
    """Queued input: reports every value received since its last step."""

    inputs = (Port("in", signals_pb2.Signals, queued=True),)
    outputs = (Port("seen", signals_pb2.Signals),)

    def step(self, t_ns, dt_ns, inputs):
        seen = signals_pb2.Signals(header=self.header(t_ns))
        for m in inputs["in"]:
            seen.signals.add(name="k", value=m.signals[0].value)
        return {"seen": seen}


class T0QueueProbe(Component):
    """Takes its inputs at t0 (``initial_inputs``): reports what Initialize gave it
    (``held``; value -2 if nothing) and, per step, every value its queued input received
    since the step before (``seen``)."""

    initial_inputs = True
    inputs = (Port("in", signals_pb2.Signals, queued=True),
              Port("held", signals_pb2.Signals))
    outputs = (Port("seen", signals_pb2.Signals), Port("at_t0", signals_pb2.Signals))

    def initialize(self, start_time_ns, inputs):
        m = signals_pb2.Signals(header=self.header(start_time_ns))
        held = inputs.get("held")
        m.signals.add(name="held", value=held.signals[0].value if held is not None else -2)
        for q in inputs.get("in", ()):  # none: a queued input's messages come in the first step
            m.signals.add(name="in", value=q.signals[0].value)
        return {"at_t0": m}

    def step(self, t_ns, dt_ns, inputs):
        seen = signals_pb2.Signals(header=self.header(t_ns))
        for m in inputs["in"]:
            seen.signals.add(name="k", value=m.signals[0].value)
        return {"seen": seen}


class WrenchSink(Component):
    """Takes a Wrench (for type-mismatch tests)."""

    inputs = (Port("in", vehicle_pb2.Wrench),)

    def step(self, t_ns, dt_ns, inputs):
        return None


class SchedulingProbe(Component):
    """Reports, as metrics, how its process's threads are scheduled at its last step
    (policy and priority of the stepping thread and of the others: ZeroMQ's I/O
    threads in a served component)."""

    outputs = ()

    def step(self, t_ns, dt_ns, inputs):
        import os
        import threading

        me = threading.get_native_id()
        self.seen = {"policy": os.sched_getscheduler(0),
                     "priority": os.sched_getparam(0).sched_priority, "others": []}
        for task in os.listdir(f"/proc/{os.getpid()}/task"):
            tid = int(task)
            if tid != me:
                self.seen["others"].append([os.sched_getscheduler(tid),
                                            os.sched_getparam(tid).sched_priority])

    def terminate(self):
        return getattr(self, "seen", {})


class ImageSink(Component):
    """Takes an ImageHeader without declaring attachments (for the wiring check)."""

    inputs = (Port("in", vision_pb2.ImageHeader),)

    def step(self, t_ns, dt_ns, inputs):
        return None
