"""Tiny components for the rig-file tests (test_rigfile.py copies this file next to
its rigs and names the classes as ``entry = "rigfile_components.py:Source"``)."""

from __future__ import annotations

from dataclasses import dataclass

from moonpool.components import Component, Port, param
from moonpool.v1 import sensors_pb2, vehicle_pb2


class Source(Component):
    """Produces a wrench and a pressure."""

    outputs = (
        Port("wrench", vehicle_pb2.Wrench),
        Port("pressure", sensors_pb2.Pressure),
    )

    @dataclass(frozen=True)
    class Parameters:
        gain: float = param(1.0, "force per unit", unit="N")
        label: str = param("source", "a name")
        weights: tuple[float, ...] = param((1.0, 2.0), "per-axis weights")

    def step(self, t_ns, dt_ns, inputs):
        return {}


class Sink(Component):
    """Consumes a wrench and a pressure; echoes the wrench; needs a threshold >= 0."""

    inputs = (
        Port("wrench", vehicle_pb2.Wrench),
        Port("pressure", sensors_pb2.Pressure),
    )
    outputs = (Port("echo", vehicle_pb2.Wrench),)

    @dataclass(frozen=True)
    class Parameters:
        threshold_pa: float = param(doc="trip level", unit="Pa")
        count: int = param(3, "how many")

        def __post_init__(self) -> None:
            if self.threshold_pa < 0:
                raise ValueError(f"threshold_pa must be >= 0, got {self.threshold_pa}")

    def step(self, t_ns, dt_ns, inputs):
        return {}


class NotAComponent:
    """Named by a test as an entry that is not a Component."""
