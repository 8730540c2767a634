"""A body wrench on a schedule: the source that drives a vehicle model's wrench input.

``ConstantWrench`` (short name ``sources.constant_wrench``) outputs a body wrench
that is piecewise constant in time: ``schedule`` is a list of
``[t_s, X, Y, Z, K, M, N]`` rows (time in s, force in N, moment in N·m, body FRD);
from ``t_s`` on (until the next row) the wrench is that row. Before the first row it
is zero. Each step outputs the wrench in force over the step, stamped ``t``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moonpool.v1 import vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError


class ConstantWrench(Component):
    """A body wrench that is constant between the instants of a schedule."""

    outputs = (Port("wrench", vehicle_pb2.Wrench, "body wrench (N, N·m), FRD"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        schedule: Any = param(
            [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
            "rows [t_s, X_n, Y_n, Z_n, K_nm, M_nm, N_nm], times increasing",
        )
        frame_id: str = param("body", "frame_id of the output header")

        def __post_init__(self) -> None:
            rows = self.schedule
            ok = isinstance(rows, (list, tuple)) and len(rows) > 0 and all(
                isinstance(r, (list, tuple)) and len(r) == 7
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r)
                for r in rows
            )
            if not ok:
                raise ParameterError(
                    f"schedule must be a non-empty list of rows [t_s, X, Y, Z, K, M, N], got {rows!r}",
                    fix="e.g. schedule = [[0, 40, 0, 0, 0, 0, 0], [10, 0, 0, 0, 0, 0, 0]]",
                )
            times = [float(r[0]) for r in rows]
            if any(b <= a for a, b in zip(times, times[1:])):
                raise ParameterError("schedule times must increase strictly",
                                     fix="sort the rows by time")

    def configure(self, params: Parameters) -> None:
        self.params = params
        self._rows = [(round(float(r[0]) * 1e9), [float(v) for v in r[1:]]) for r in params.schedule]

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        w = [0.0] * 6
        for t0, row in self._rows:
            if t0 <= t_ns:
                w = row
            else:
                break
        msg = vehicle_pb2.Wrench(header=self.header(t_ns, self.params.frame_id))
        msg.force_n.x, msg.force_n.y, msg.force_n.z = w[0], w[1], w[2]
        msg.torque_nm.x, msg.torque_nm.y, msg.torque_nm.z = w[3], w[4], w[5]
        return {"wrench": msg}
