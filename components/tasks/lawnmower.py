"""Lawnmower survey guidance: waypoints -> setpoints for the world-frame PID, with
altitude hold from the altimeter (docs/tasks.md (lawnmower)).

Call order (as every component): configure -> initialize -> step(t) ... -> terminate.

**Path.** Legs of length L along the heading χ (from north), ``legs`` of them, joined
by cross legs of length S to the right of the first leg (h = (cos χ, sin χ),
c = (−sin χ, cos χ))::

    W_0 = start,  W_1 = W_0 + L h,  W_2 = W_1 + S c,  W_3 = W_2 − L h,  W_4 = W_3 + S c, ...

The setpoint moves along the polyline at the survey speed v: its arc length
s_k = s_{k−1} + v Δt, except while the vehicle is more than ``max_lag_m`` behind it
(horizontal distance), when it waits (a leash: a slow or pushed vehicle is not left
behind). The setpoint carries the position P(s), the yaw of the segment it is on, and
the feed-forward velocity v t̂ (zero at the end, where it holds the last waypoint).

**Altitude.** Each valid altimeter range r gives a seabed depth under the vehicle,
z_b = d + r cos φ cos θ (d the vehicle's depth, φ, θ its roll and pitch: the beam
points along the body z axis), filtered first-order, ẑ_b ← ẑ_b + (1 − e^(−Δt/τ))
(z_b − ẑ_b) (the first one taken as it is); the depth setpoint is ẑ_b − h_ref.
Before the first valid range the depth setpoint is the vehicle's depth at its first
state (hold). An invalid range (out of range, dropout) leaves ẑ_b as it was.

Outputs ``setpoint`` (``Setpoint``: ``index`` the segment, ``phase`` "leg i/n" or
"cross i", "done") and ``altitude`` (``Signals``: the filtered seabed depth, the
altitude measured, the along-path lag). Metrics: ``path_m`` (arc length flown by the
setpoint), ``done`` (1 when the end was reached), ``altitude_rmse_m`` (altimeter
range against h_ref over the valid ranges after the first ``settle_s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from moonpool.v1 import acoustics_pb2, navigation_pb2, signals_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError

NS = 1_000_000_000


def lawnmower_waypoints(start_ne_m, heading_deg: float, leg_length_m: float,
                        leg_spacing_m: float, legs: int) -> np.ndarray:
    """(2 legs, 2) waypoints W_0 .. W_{2 legs − 1} (north, east), m (module docstring)."""
    chi = math.radians(heading_deg)
    h = np.array([math.cos(chi), math.sin(chi)])
    c = np.array([-math.sin(chi), math.cos(chi)])
    w = [np.asarray(start_ne_m, dtype=float)]
    for i in range(legs):
        w.append(w[-1] + (leg_length_m if i % 2 == 0 else -leg_length_m) * h)
        if i < legs - 1:
            w.append(w[-1] + leg_spacing_m * c)
    return np.array(w)


class Polyline:
    """Arc-length parametrised polyline: ``at(s)`` -> (point, unit tangent, segment)."""

    def __init__(self, points: np.ndarray) -> None:
        self.points = points
        seg = np.diff(points, axis=0)
        self.lengths = np.linalg.norm(seg, axis=1)
        self.tangents = seg / self.lengths[:, None]
        self.starts = np.concatenate([[0.0], np.cumsum(self.lengths)])
        self.total = float(self.starts[-1])

    def at(self, s: float) -> tuple[np.ndarray, np.ndarray, int]:
        s = min(max(s, 0.0), self.total)
        i = int(np.searchsorted(self.starts, s, side="right") - 1)
        i = min(i, len(self.lengths) - 1)
        return self.points[i] + (s - self.starts[i]) * self.tangents[i], self.tangents[i], i


class Lawnmower(Component):
    """Lawnmower survey: a setpoint moving along parallel legs at the survey speed, with
    a leash, and the depth setpoint from the altimeter's seabed depth minus the
    altitude to hold."""

    inputs = (
        Port("state", vehicle_pb2.VehicleState, "true vehicle state (position, attitude)"),
        Port("altimeter", acoustics_pb2.Altimeter, "altimeter range (altitude hold)"),
    )
    outputs = (
        Port("setpoint", navigation_pb2.Setpoint, "pose setpoint for control.pid"),
        Port("altitude", signals_pb2.Signals, "seabed depth estimate, altitude, lag"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        start_ne_m: tuple[float, ...] = param((0.0, 0.0), "first waypoint [north, east]",
                                              unit="m")
        heading_deg: float = param(0.0, "direction of the first leg, from north", unit="deg")
        leg_length_m: float = param(60.0, "length L of each leg", unit="m")
        leg_spacing_m: float = param(15.0, "spacing S between legs (to the right of the "
                                           "first)", unit="m")
        legs: int = param(3, "number of legs")
        speed_mps: float = param(0.5, "survey speed v along the path", unit="m/s")
        max_lag_m: float = param(3.0, "the setpoint waits while the vehicle is farther "
                                      "behind it than this", unit="m")
        altitude_m: float = param(10.0, "altitude h_ref to hold above the seabed", unit="m")
        altitude_filter_s: float = param(2.0, "time constant τ of the seabed-depth filter",
                                         unit="s")
        settle_s: float = param(30.0, "altitude_rmse_m counts from this time on", unit="s")

        def __post_init__(self) -> None:
            problems = []
            if len(self.start_ne_m) != 2:
                problems.append("start_ne_m takes 2 values [north, east]")
            if not (self.leg_length_m > 0 and self.leg_spacing_m > 0 and self.legs >= 1):
                problems.append("need leg_length_m > 0, leg_spacing_m > 0 and legs >= 1")
            if not (self.speed_mps > 0 and self.max_lag_m > 0):
                problems.append("need speed_mps > 0 and max_lag_m > 0")
            if not (self.altitude_m > 0 and self.altitude_filter_s > 0):
                problems.append("need altitude_m > 0 and altitude_filter_s > 0")
            if problems:
                raise ParameterError("; ".join(problems), fix="correct the lawnmower's "
                                     "parameters (docs/tasks.md)")

    def configure(self, params: Parameters) -> None:
        self.params = params
        self.path = Polyline(lawnmower_waypoints(params.start_ne_m, params.heading_deg,
                                                 params.leg_length_m, params.leg_spacing_m,
                                                 params.legs))

    def initialize(self, start_time_ns: int):
        self.s = 0.0
        self.seabed_depth: float | None = None
        self.hold_depth: float | None = None
        self.last_t_ns: int | None = None
        self.sq_err, self.n_err = 0.0, 0
        return None

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        p = self.params
        state = inputs.get("state")
        dt = 0.0 if self.last_t_ns is None else (t_ns - self.last_t_ns) / NS
        self.last_t_ns = t_ns
        altitude = math.nan
        lag = 0.0
        if state is not None:
            pos = state.position_ned_m
            if self.hold_depth is None:
                self.hold_depth = pos.z
            alt = inputs.get("altimeter")
            if alt is not None and alt.validity.valid:
                tilt = math.cos(state.roll_rad) * math.cos(state.pitch_rad)
                z_b = pos.z + alt.range_m * tilt
                altitude = alt.range_m * tilt
                if self.seabed_depth is None:
                    self.seabed_depth = z_b
                else:
                    a = 1.0 - math.exp(-dt / p.altitude_filter_s)
                    self.seabed_depth += a * (z_b - self.seabed_depth)
                if t_ns >= p.settle_s * NS:
                    self.sq_err += (alt.range_m - p.altitude_m) ** 2
                    self.n_err += 1
            here, _, _ = self.path.at(self.s)
            lag = float(np.hypot(here[0] - pos.x, here[1] - pos.y))
            if lag <= p.max_lag_m:
                self.s = min(self.s + p.speed_mps * dt, self.path.total)
        point, tangent, seg = self.path.at(self.s)
        done = self.s >= self.path.total
        if self.seabed_depth is not None:
            z_ref = self.seabed_depth - p.altitude_m
        else:
            z_ref = self.hold_depth if self.hold_depth is not None else 0.0
        sp = navigation_pb2.Setpoint(header=self.header(t_ns, "ned"))
        sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z = (
            float(point[0]), float(point[1]), float(z_ref))
        sp.yaw_rad = math.atan2(tangent[1], tangent[0])
        if not done:
            sp.velocity_ned_mps.x, sp.velocity_ned_mps.y = map(float, p.speed_mps * tangent)
        sp.index = seg
        sp.phase = "done" if done else (f"leg {seg // 2 + 1}/{p.legs}" if seg % 2 == 0
                                        else f"cross {seg // 2 + 1}")
        sig = signals_pb2.Signals(header=self.header(t_ns, "ned"))
        seabed = self.seabed_depth if self.seabed_depth is not None else math.nan
        for name, value in (("seabed_depth_m", seabed), ("altitude_m", altitude),
                            ("lag_m", lag)):
            sig.signals.add(name=name, value=float(value))
        return {"setpoint": sp, "altitude": sig}

    def terminate(self):
        if not hasattr(self, "s"):  # ended before initialize
            return None
        rmse = math.sqrt(self.sq_err / self.n_err) if self.n_err else math.nan
        return {"path_m": self.s, "done": float(self.s >= self.path.total),
                "altitude_rmse_m": rmse}
