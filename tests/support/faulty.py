"""Components that fail on purpose, for the fault-handling tests.

Each one counts steps and misbehaves at step ``at_step``; before that it behaves
like a pass-through of a counter so the recording has something to hold.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from moonpool.components import Component, Port, param
from moonpool.v1 import signals_pb2


class _Counter(Component):
    outputs = (Port("count", signals_pb2.Signals, "steps so far"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        at_step: int = param(10, "step index at which to misbehave")
        pid_file: str = param("", "write the process id here at initialize")
        fault_file: str = param("", "write the wall-clock time (time.time()) here when misbehaving")

    def configure(self, params):
        self.p = params
        self.k = 0

    def initialize(self, start_time_ns):
        if self.p.pid_file:
            Path(self.p.pid_file).write_text(str(os.getpid()))

    def step(self, t_ns, dt_ns, inputs):
        if self.k == self.p.at_step:
            if self.p.fault_file:
                Path(self.p.fault_file).write_text(repr(time.time()))
            self.misbehave()
        self.k += 1
        msg = signals_pb2.Signals(header=self.header(t_ns))
        msg.signals.add(name="k", value=self.k)
        return {"count": msg}

    def misbehave(self):
        raise NotImplementedError


class Raises(_Counter):
    """Raises ValueError in step."""

    def misbehave(self):
        raise ValueError("deliberate failure for the test")


class Hangs(_Counter):
    """Sleeps forever in step."""

    def misbehave(self):
        while True:
            time.sleep(1)


class KillsItself(_Counter):
    """SIGKILLs its own process in step."""

    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


class Healthy(_Counter):
    """Never misbehaves."""

    def misbehave(self):
        pass


class Slow(_Counter):
    """Every step from ``at_step`` on takes ``sleep_s`` seconds (a slow, not hung, component)."""

    @dataclass(frozen=True, kw_only=True)
    class Parameters(_Counter.Parameters):
        sleep_s: float = param(1.0, "duration of a slow step", unit="s")

    def misbehave(self):
        time.sleep(self.p.sleep_s)
        self.p = type(self.p)(at_step=self.p.at_step + 1, sleep_s=self.p.sleep_s,
                              pid_file=self.p.pid_file, fault_file=self.p.fault_file)


class FailsAtInitialize(Healthy):
    """Raises in initialize: the run fails before the components after it (in rig
    order) were initialised."""

    def initialize(self, start_time_ns):
        raise ValueError("deliberate failure at initialize for the test")


class Spins(_Counter):
    """Every step from ``at_step`` on keeps the CPU busy for ``spin_s`` seconds."""

    @dataclass(frozen=True, kw_only=True)
    class Parameters(_Counter.Parameters):
        spin_s: float = param(0.1, "CPU time burnt per step", unit="s")

    def misbehave(self):
        end = time.thread_time() + self.p.spin_s
        while time.thread_time() < end:
            pass
        self.p = type(self.p)(at_step=self.k + 1, spin_s=self.p.spin_s,
                              pid_file=self.p.pid_file, fault_file=self.p.fault_file)


class FinishesFailed(_Counter):
    """Ends the run with ``finish(reason, failed=...)`` at ``at_step``: as a failure
    (a mission manager's safe abort) or, with ``failed = false``, well (a mission
    complete): that step's output is still published, and its metrics are reported at
    terminate."""

    @dataclass(frozen=True, kw_only=True)
    class Parameters(_Counter.Parameters):
        failed: bool = param(True, "end the run as a failure")

    def misbehave(self):
        if self.p.failed:
            self.finish(f"safe abort at step {self.k}", failed=True)
        else:
            self.finish(f"done at step {self.k}")

    def terminate(self):
        return {"steps": float(self.k)} if hasattr(self, "k") else None


class BigReply(_Counter):
    """Answers step ``at_step`` with a message of ``size_bytes`` (a reply larger than the
    orchestrator's max_message_bytes: libzmq drops the connection)."""

    @dataclass(frozen=True, kw_only=True)
    class Parameters(_Counter.Parameters):
        size_bytes: int = param(100_000, "size of the large reply's signal names", unit="B")

    def step(self, t_ns, dt_ns, inputs):
        out = super().step(t_ns, dt_ns, inputs)
        if self.k - 1 == self.p.at_step:
            out["count"].signals.add(name="x" * self.p.size_bytes, value=0.0)
        return out

    def misbehave(self):
        pass
