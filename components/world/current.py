"""``world.current``: the ocean current where the vehicle is, as a message the
hydrodynamics FMU (its ``current_n/e/d`` inputs) and anything else that moves through
the water (the arm's grasped object) take from one place.

Call order: configure (loads the scene's water column, or checks the parameters) →
initialize (publishes the current at the start, at ``initial_depth_m``) → step(t): the
current at the depth of the latest ``state`` → terminate.

Sources (``source``):

- ``"scene"``: the scene file's water column, ``WaterColumn.current_ned_mps(depth)``
  (docs/world.md: uniform, or piecewise linear in depth and held beyond the ends), at
  the vehicle's depth; a hadal descent crosses the whole profile;
- ``"parameters"``: a uniform current of ``speed_mps`` flowing towards
  ``direction_deg`` (from north, clockwise: 90 = towards the east), horizontal. Two
  scalars, so a sweep can draw them (``--random
  components.current.parameters.speed_mps='uniform(0, 0.1)'``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError


class WaterCurrentSource(Component):
    """The ocean current at the vehicle's depth, from the scene's water column or from
    two parameters (speed, direction)."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "vehicle state (its depth)"),)
    outputs = (Port("current", vehicle_pb2.WaterCurrent, "water velocity at the vehicle, NED"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        source: str = param("scene", "'scene' (the scene's current profile at the vehicle's "
                            "depth) or 'parameters' (speed_mps towards direction_deg)")
        scene: Path | None = param(None, "scene file (TOML), relative to the rig file's folder; "
                                   "needed with source = 'scene'")
        speed_mps: float = param(0.0, "source = 'parameters': current speed", unit="m/s")
        direction_deg: float = param(0.0, "source = 'parameters': direction the water flows "
                                     "towards, from north, clockwise", unit="deg")
        initial_depth_m: float = param(0.0, "depth of the current published at the start, "
                                       "before a state arrives", unit="m")

        def __post_init__(self) -> None:
            problems = []
            if self.source not in ("scene", "parameters"):
                problems.append(f"source must be 'scene' or 'parameters', got {self.source!r}")
            if self.source == "scene" and not self.scene:
                problems.append("source = 'scene' needs scene = \"path/to/scene.toml\"")
            if self.source == "scene" and self.scene:
                from .scenefile import validate_scene

                problems += [f"scene {p}" for p in validate_scene(self.scene)]
            if not (self.speed_mps >= 0 and math.isfinite(self.speed_mps)
                    and math.isfinite(self.direction_deg)):
                problems.append("speed_mps must be >= 0 and direction_deg finite")
            if problems:
                raise ParameterError("; ".join(problems), fix="correct world.current's "
                                     "parameters (docs/missions.md)")

    def configure(self, params: Parameters) -> None:
        self.params = params
        self.water = None
        if params.source == "scene":
            from .scenefile import read_scene_file

            self.water = read_scene_file(params.scene).water
        a = math.radians(params.direction_deg)
        self.uniform = np.array([params.speed_mps * math.cos(a),
                                 params.speed_mps * math.sin(a), 0.0])

    def _at(self, depth_m: float) -> np.ndarray:
        if self.water is None:
            return self.uniform
        return np.asarray(self.water.current_ned_mps(depth_m), float).reshape(3)

    def _message(self, t_ns: int, depth_m: float) -> vehicle_pb2.WaterCurrent:
        v = self._at(depth_m)
        msg = vehicle_pb2.WaterCurrent(header=self.header(t_ns, "ned"), depth_m=float(depth_m))
        msg.velocity_ned_mps.x, msg.velocity_ned_mps.y, msg.velocity_ned_mps.z = map(float, v)
        return msg

    def initialize(self, start_time_ns: int) -> dict[str, Any]:
        self.depth = self.params.initial_depth_m
        return {"current": self._message(start_time_ns, self.depth)}

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        state = inputs.get("state")
        if state is not None:
            self.depth = state.position_ned_m.z
        return {"current": self._message(t_ns, self.depth)}


__all__ = ["WaterCurrentSource"]
