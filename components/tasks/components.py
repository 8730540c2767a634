"""The T1 and T2 task components: guidance (they publish the setpoint) and scoring
(they compare the true vehicle state with it and report ``metrics`` at the end).

Name the component ``t1`` / ``t2`` in the rig and its metrics land in
``summary.json`` under ``metrics.t1`` / ``metrics.t2`` (keys in
:mod:`moonpool.components.tasks.scoring`). Both take the *true* state: the
controller may run on an estimate (the pool localizer), the score never does.

Call order (as every component): configure → initialize → step(t) … → terminate.
Each step samples the state input (the vehicle state at t) and outputs the setpoint
valid at t plus the instantaneous errors (``error``: a Signals message with e_x,
e_y, e_z, e_3d in m and e_yaw in rad) for plots.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from moonpool.v1 import navigation_pb2, signals_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import wrap_angle
from .references import T2_TRAJECTORIES, RefPoint, t2_reference
from .scoring import T1Trial, t1_summary, t2_summary

NS = 1_000_000_000

# Eight fixed 4-DOF poses in a 4 m x 3 m pool (NED about the pool centre, depth down):
# x_m, y_m, z_m, yaw_deg. They spread over the camera's view, change depth and turn
# through every quadrant, including a half turn.
DEFAULT_SETPOINTS = (
    (0.0, 0.0, 1.0, 0.0),
    (0.6, 0.0, 1.0, 0.0),
    (0.6, 0.5, 0.8, 90.0),
    (0.0, 0.5, 1.2, 180.0),
    (-0.6, 0.5, 1.0, -90.0),
    (-0.6, -0.5, 0.8, 45.0),
    (0.0, -0.5, 1.2, -135.0),
    (0.3, -0.3, 1.0, 0.0),
)


def _state_pose(state: vehicle_pb2.VehicleState) -> tuple[np.ndarray, float, float, float]:
    p = state.position_ned_m
    return np.array([p.x, p.y, p.z]), state.yaw_rad, state.roll_rad, state.pitch_rad


def _setpoint_msg(header, ref: RefPoint, yaw: float, index: int, phase: str) -> navigation_pb2.Setpoint:
    msg = navigation_pb2.Setpoint(header=header, yaw_rad=yaw, index=index, phase=phase)
    msg.position_ned_m.x, msg.position_ned_m.y, msg.position_ned_m.z = map(float, ref.p)
    msg.velocity_ned_mps.x, msg.velocity_ned_mps.y, msg.velocity_ned_mps.z = map(float, ref.v)
    msg.acceleration_ned_mps2.x, msg.acceleration_ned_mps2.y, msg.acceleration_ned_mps2.z = map(float, ref.a)
    return msg


def _error_msg(header, e: np.ndarray, e_yaw: float) -> signals_pb2.Signals:
    msg = signals_pb2.Signals(header=header)
    for name, value in (("e_x", e[0]), ("e_y", e[1]), ("e_z", e[2]),
                        ("e_3d", float(np.linalg.norm(e))), ("e_yaw", e_yaw)):
        msg.signals.add(name=name, value=float(value))
    return msg


class StationKeeping(Component):
    """T1: hold each of the setpoints for ``trial_s`` in turn, score the late hold.

    The trials run back to back: setpoint k is issued at t = k·trial_s and the
    vehicle moves there from wherever trial k−1 left it (in a pool, trials are not
    reset by hand between setpoints either). Trial k is scored over
    [k·trial_s + window_start_s, k·trial_s + window_end_s].
    """

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state (for scoring)"),)
    outputs = (
        Port("setpoint", navigation_pb2.Setpoint, "the 4-DOF pose to hold (NED, yaw)"),
        Port("error", signals_pb2.Signals, "e_x e_y e_z e_3d (m), e_yaw (rad): true pose − setpoint"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        setpoints: Any = param(
            [list(s) for s in DEFAULT_SETPOINTS],
            "rows [x_m, y_m, z_m, yaw_deg] (NED), held in turn",
        )
        trial_s: float = param(60.0, "time per setpoint (seed 001: 60 s)", unit="s")
        window_start_s: float = param(40.0, "start of the late-hold window, after the setpoint is issued", unit="s")
        window_end_s: float = param(60.0, "end of the late-hold window", unit="s")
        count: int = param(0, "use only the first COUNT setpoints (0 = all of them); for short runs")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Setpoint rows, trial and window lengths, count (also by ``moonpool check``)."""
        rows = params.setpoints
        if not (isinstance(rows, (list, tuple)) and rows and all(
                isinstance(r, (list, tuple)) and len(r) == 4 and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                    for v in r) for r in rows)):
            raise ParameterError(f"setpoints must be a non-empty list of rows [x_m, y_m, z_m, yaw_deg], got {rows!r}",
                                 fix="e.g. setpoints = [[0, 0, 1, 0], [0.5, 0, 1, 90]]")
        if not params.trial_s > 0:
            raise ParameterError(f"trial_s must be > 0, got {params.trial_s}",
                                 fix="give the time per setpoint in seconds, e.g. 60")
        if not 0 <= params.window_start_s < params.window_end_s <= params.trial_s:
            raise ParameterError(
                f"the window [{params.window_start_s}, {params.window_end_s}] s must lie inside the "
                f"{params.trial_s} s trial and have a positive length",
                fix="set 0 <= window_start_s < window_end_s <= trial_s")
        if params.count < 0:
            raise ParameterError(f"count: must be >= 0, got {params.count}",
                                 fix="0 scores every setpoint")

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        rows = params.setpoints
        self.p = params
        n = len(rows) if params.count == 0 else min(params.count, len(rows))
        self.poses = [(np.array(r[:3], dtype=float), math.radians(r[3])) for r in rows[:n]]
        self.trial_ns = round(params.trial_s * NS)

    def initialize(self, start_time_ns: int):
        self.t0_ns = start_time_ns
        self.trials = [T1Trial(k, (self.p.window_start_s, self.p.window_end_s))
                       for k in range(len(self.poses))]
        return None

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        rel = t_ns - self.t0_ns
        k = min(rel // self.trial_ns, len(self.poses) - 1)
        tau = (rel - k * self.trial_ns) / NS
        p_ref, yaw_ref = self.poses[k]
        header = self.header(t_ns, "ned")
        out: dict[str, Any] = {"setpoint": _setpoint_msg(
            header, RefPoint(p_ref, np.zeros(3), np.zeros(3)), yaw_ref, k,
            f"T1/{k + 1}")}
        state = inputs.get("state")
        if state is not None:
            p, yaw, roll, pitch = _state_pose(state)
            e = p - p_ref
            e_yaw = wrap_angle(yaw - yaw_ref)
            if rel < (k + 1) * self.trial_ns:  # after the last trial ends: not scored
                self.trials[k].add(tau, e, e_yaw, roll, pitch)
            out["error"] = _error_msg(self.header(t_ns, "ned"), e, e_yaw)
        return out

    def terminate(self):
        trials = getattr(self, "trials", None)
        return t1_summary(trials) if trials is not None else {}


class TrajectoryTracking(Component):
    """T2: hold the reference's start for ``settle_s``, then follow it; score the run.

    The reference is one of ``straight``, ``broken``, ``ellipse``, ``lemniscate``
    (:mod:`moonpool.components.tasks.references`), built around ``center`` with
    ``size_m``, ``speed_mps`` and ``heave_m``. Yaw is held at ``yaw_deg``. Errors are
    scored from t = settle_s to the end of the reference (plus ``tail_s``).
    """

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state (for scoring)"),)
    outputs = (
        Port("setpoint", navigation_pb2.Setpoint, "reference pose, velocity and acceleration (NED)"),
        Port("error", signals_pb2.Signals, "e_x e_y e_z e_3d (m), e_yaw (rad): true pose − reference"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        trajectory: str = param("lemniscate", "one of straight, broken, ellipse, lemniscate")
        center: tuple[float, ...] = param((0.0, 0.0, 1.0), "centre of the path (NED)", unit="m")
        size_m: float = param(1.0, "half extent of the path along north (east: 0.6 of it)", unit="m")
        speed_mps: float = param(0.12, "mean speed along the path", unit="m/s")
        heave_m: float = param(0.2, "depth excursion of the path", unit="m")
        yaw_deg: float = param(0.0, "yaw held during the run", unit="deg")
        settle_s: float = param(15.0, "hold at the start point before the reference moves", unit="s")
        tail_s: float = param(0.0, "keep scoring this long after the reference stops", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Trajectory name, centre, sizes and durations (also by ``moonpool check``)."""
        if params.trajectory not in T2_TRAJECTORIES:
            close = difflib.get_close_matches(params.trajectory, T2_TRAJECTORIES, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ParameterError(f"trajectory: unknown trajectory {params.trajectory!r}",
                                 fix=f"{hint}choose one of {', '.join(T2_TRAJECTORIES)}")
        if len(params.center) != 3:
            raise ParameterError(f"center must be [x_m, y_m, z_m], got {params.center!r}",
                                 fix="e.g. center = [0, 0, 1]")
        for name in ("size_m", "speed_mps"):
            if not getattr(params, name) > 0:
                raise ParameterError(f"{name} must be > 0, got {getattr(params, name)}",
                                     fix=f"give a positive {name}")
        for name in ("settle_s", "tail_s", "heave_m"):
            if getattr(params, name) < 0:
                raise ParameterError(f"{name} must be >= 0, got {getattr(params, name)}",
                                     fix=f"give {name} >= 0")

    def configure(self, params: Parameters) -> None:
        self.check_parameters(params)
        self.p = params
        self.ref = t2_reference(params.trajectory, tuple(map(float, params.center)),
                                params.size_m, params.speed_mps, params.heave_m)
        self.yaw_ref = math.radians(params.yaw_deg)

    @property
    def end_s(self) -> float:
        """Simulation time (from start) at which scoring stops; a rig runs at least this long."""
        return self.p.settle_s + self.ref.duration_s + self.p.tail_s

    def initialize(self, start_time_ns: int):
        self.t0_ns = start_time_ns
        self.errors: list[np.ndarray] = []
        self.reached_end = False
        return None

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        t = (t_ns - self.t0_ns) / NS
        tau = t - self.p.settle_s
        ref = self.ref.at(tau)
        phase = f"T2/{self.p.trajectory}" + ("/settle" if tau < 0 else "")
        out: dict[str, Any] = {"setpoint": _setpoint_msg(self.header(t_ns, "ned"), ref, self.yaw_ref, 0, phase)}
        state = inputs.get("state")
        if state is not None:
            p, yaw, _, _ = _state_pose(state)
            e = p - ref.p
            if 0.0 <= tau <= self.ref.duration_s + self.p.tail_s:
                self.errors.append(e)
            self.reached_end |= tau >= self.ref.duration_s + self.p.tail_s
            out["error"] = _error_msg(self.header(t_ns, "ned"), e, wrap_angle(yaw - self.yaw_ref))
        return out

    def terminate(self):
        if not hasattr(self, "errors"):  # never initialised: nothing was scored
            return {}
        result = t2_summary(np.array(self.errors), self.p.trajectory)
        # False when the run stopped before the reference did: the figures cover part of it.
        result["complete"] = bool(self.reached_end)
        result["reference_duration_s"] = self.ref.duration_s
        return result


__all__ = ["DEFAULT_SETPOINTS", "StationKeeping", "TrajectoryTracking"]
