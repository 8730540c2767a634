"""What the execution needs from a component, wherever it runs.

Call order (one execution; the execution never deviates from it)::

    configure(Configure)
    describe()                         -> Description (the configured ports, parameters)
    initialize(start_time_ns[, inputs]) -> initial samples (visible at the start time)
    ( [set_parameters(values)]         tunable parameters for the next step (scenarios)
      start_step(t, dt, inputs)        send / begin (or queue) the step
      flush()                          send what was queued (process groups)
      finish_step()                    -> samples produced by the step ) *
    keepalive(now)                     between calls: heartbeat if idle (remote only)
    terminate()                        -> metrics
    close()                            always, also after a failure; idempotent

``start_step`` / ``finish_step`` are split so the execution can put every due
remote component to work before waiting for any of them (Jacobi); results are
always collected in a fixed order, so they never depend on which reply arrives
first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from google.protobuf.message import Message

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc


class Sample:
    """A message on its way through the execution: serialized once, decoded lazily."""

    __slots__ = ("port", "type_name", "payload", "attachment", "_message")

    def __init__(self, port: str, type_name: str, payload: bytes, attachment: Any = None) -> None:
        self.port = port
        """Output port that produced it."""
        self.type_name = type_name
        """Full protobuf type name."""
        self.payload = payload
        """Deterministic serialization."""
        self.attachment = attachment
        """Raw bulk data (bytes-like), or None."""
        self._message: Message | None = None

    def message(self) -> Message:
        """The decoded message (decoded once and cached: do not modify it)."""
        if self._message is None:
            self._message = wire.decode(self.type_name, self.payload)
        return self._message


class StepTimes:
    """Wall-clock durations of one component's steps, ns."""

    def __init__(self) -> None:
        self._values: list[int] = []
        self.add = self._values.append  # the hot path: one bound-method call

    @property
    def count(self) -> int:
        return len(self._values)

    def values(self) -> np.ndarray:
        return np.asarray(self._values, dtype=np.int64)


def initialize_request(start_time_ns: int, inputs: dict[str, Any] | None) -> lc.Initialize:
    """The Initialize request, with the held inputs visible at the start (port ->
    Sample; only for a component with ``initial_inputs``; attachments are not carried)."""
    msg = lc.Initialize(start_time_ns=start_time_ns)
    for port, s in (inputs or {}).items():
        msg.inputs.add(port=port, type=s.type_name, payload=s.payload)
    return msg


class Adapter:
    """Base of the adapters (see the module docstring for the call order)."""

    placement = "inproc"
    next_parameters: tuple[tuple[str, Any], ...] = ()
    """Tunable parameters (name, value) the next start_step sends, then clears."""

    def set_parameters(self, values: tuple[tuple[str, Any], ...]) -> None:
        """Set these tunable parameters before the next step (a rig's [[scenario]])."""
        self.next_parameters = tuple(values)

    def take_parameters(self) -> tuple[tuple[str, Any], ...]:
        """The parameters for the step being started (and clear them)."""
        values = self.next_parameters
        if values:
            self.next_parameters = ()
        return values

    def __init__(self, name: str) -> None:
        self.name = name
        self.times = StepTimes()
        self.compute = StepTimes()
        """The component's own step times as it reports them (StepResult.compute_ns: a
        process, remote or group member's step function, without the transport; empty
        in-process, where ``times`` is the step call itself)."""
        self.description: lc.Description | None = None
        self.failed = False
        self.finished = ""
        """Non-empty once a step's result said the component ended the simulation
        (StepResult.finished): why."""
        self.finished_failed = False
        """True when it ended the run as a failure (StepResult.failed)."""

    def describe(self) -> lc.Description:
        raise NotImplementedError

    def configure(self, msg: lc.Configure) -> None:
        raise NotImplementedError

    def initialize(self, start_time_ns: int,
                   inputs: dict[str, Any] | None = None) -> list[Sample]:
        """``inputs`` (port -> Sample): the held inputs visible at the start, only for a
        component whose description has ``initial_inputs`` (a queued input's messages
        come in its first step)."""
        raise NotImplementedError

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Send what start_step queued (process groups batch their members' steps)."""

    def step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> list[Sample]:
        """``start_step`` and ``finish_step`` in one call (the execution's way of stepping
        an in-process component)."""
        self.start_step(t_ns, dt_ns, inputs)
        return self.finish_step()

    def finish_step(self) -> list[Sample]:
        raise NotImplementedError

    @property
    def connection(self) -> "Adapter":
        """What carries this component's messages: the adapter itself, or the shared
        connection of its process group. Heartbeats and idle work go per connection."""
        return self

    def keepalive(self, now: float) -> None:
        """Send a heartbeat if the component has been idle too long (remote only)."""

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        """Release everything; never raises."""

    @property
    def rejected(self) -> int:
        """Frames received from this component that were malformed and dropped."""
        return 0
