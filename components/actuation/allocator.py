"""Allocator component: desired body wrench -> thruster forces (``allocation.py``).

Each step takes the latest ``wrench`` (τ_d, body FRD; zero until one arrives) and
outputs a ``ThrusterCommand``: ``force_n`` per thruster in profile order (within
[−max_reverse_n·derate, max_forward_n·derate]), ``thruster_saturated`` (at a
non-zero limit), ``saturated`` (the demand was not met to 1e-4, weighted),
``achieved`` (B f) and ``demanded`` (τ_d). docs/actuation.md has the problem, the
baselines and how to choose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from moonpool.v1 import vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import PortError
from .allocation import METHODS, SATURATION_MODES, Allocation, AllocationResult


def _set_wrench(msg: vehicle_pb2.Wrench, w: np.ndarray) -> None:
    msg.force_n.x, msg.force_n.y, msg.force_n.z = (float(v) for v in w[:3])
    msg.torque_nm.x, msg.torque_nm.y, msg.torque_nm.z = (float(v) for v in w[3:])


class Allocator(Component):
    """Constrained thrust allocation (OSQP QP, warm-started): body wrench -> per-thruster
    forces within directional limits, with the achieved wrench and saturation flags;
    pseudo-inverse baselines selectable."""

    inputs = (Port("wrench", vehicle_pb2.Wrench, "desired body wrench τ_d (N, N·m), FRD"),)
    outputs = (Port("command", vehicle_pb2.ThrusterCommand,
                    "force per thruster (profile order), saturation, achieved and demanded wrench"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        profile: Any = param(doc="a vehicle profile's content (the rig's profile key); "
                                 "geometry and limits from its [[thrusters]]")
        method: str = param("qp", f"one of {', '.join(METHODS)}")
        saturation: str = param("preserve-direction",
                                f"qp only: one of {', '.join(SATURATION_MODES)}")
        weights: tuple[float, ...] = param(
            (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            "relative weight of each normalised axis X Y Z K M N (0: axis not controlled)")
        regularization: float = param(
            0.0, "effort weight λ on the normalised forces (0: 1e-3 for preserve-direction, "
                 "1e-6 for least-squares)")
        derate: float = param(1.0, "fraction of the profile's force limits the allocator may use")
        disabled: tuple[str, ...] = param((), "names of thrusters not to use (force 0)")

    def configure(self, params: Parameters) -> None:
        self.params = params
        self.alloc = Allocation.from_profile(
            params.profile, derate=params.derate, weights=params.weights,
            regularization=params.regularization, method=params.method,
            saturation=params.saturation, disabled=params.disabled, component=self.name,
        )
        self.steps = 0
        self.saturated_steps = 0

    def _command(self, t_ns: int, r: AllocationResult) -> vehicle_pb2.ThrusterCommand:
        cmd = vehicle_pb2.ThrusterCommand(header=self.header(t_ns, "body"))
        cmd.force_n.extend(r.force_n.tolist())
        cmd.saturated = bool(r.saturated)
        cmd.thruster_saturated.extend(bool(v) for v in r.thruster_saturated)
        cmd.achieved.header.CopyFrom(self.header(t_ns, "body"))
        _set_wrench(cmd.achieved, r.achieved)
        cmd.demanded.header.CopyFrom(self.header(t_ns, "body"))
        _set_wrench(cmd.demanded, r.demanded)
        return cmd

    def initialize(self, start_time_ns: int) -> dict[str, Any]:
        return {"command": self._command(start_time_ns, self.alloc.allocate(np.zeros(6)))}

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        w = inputs.get("wrench")
        tau = np.zeros(6)
        if w is not None:
            frame = w.header.frame_id
            if frame not in ("", "body"):
                raise PortError(
                    f"the demanded wrench is in frame '{frame}'; the allocator takes a body "
                    "(FRD) wrench", component=self.name,
                    fix="rotate the wrench into the body frame upstream and stamp it 'body'",
                )
            tau = np.array([w.force_n.x, w.force_n.y, w.force_n.z,
                            w.torque_nm.x, w.torque_nm.y, w.torque_nm.z])
        r = self.alloc.allocate(tau)
        self.steps += 1
        self.saturated_steps += bool(r.saturated)
        return {"command": self._command(t_ns, r)}

    def terminate(self) -> dict[str, float]:
        return {
            "steps": self.steps,
            "saturated_steps": self.saturated_steps,
            "solver_fallbacks": self.alloc.fallbacks,
        }
