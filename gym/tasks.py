"""The registered tasks: seed 001's T1 station keeping and T2 trajectory tracking.

Call order: ``gymnasium.make("moonpool/StationKeeping-v0", **kw)`` calls
:func:`make_station_keeping` (``moonpool/TrajectoryTracking-v0``:
:func:`make_trajectory_tracking`), which builds a :class:`moonpool.gym.env.RigEnv`
whose agent replaces the rig's ``controller`` (Wrench6: a normalised body wrench).

Symbols (SI units; NED world, FRD body): p, p_r position and reference [m]; R the
body-to-NED rotation of the vehicle, R_r = R_z(ψ_r) the reference's; e = Rᵀ(p_r − p)
the target displacement in the body frame [m], d = |e|; e_ψ = wrap(ψ_r − ψ) [rad];
φ, θ roll and pitch [rad]; v, ω body linear [m/s] and angular [rad/s] velocity;
a ∈ [−1, 1]⁶ the action, a⁻ the previous one.

Seed 001 names the reward terms, not their weights; the weights below are
moonpool's, fixed before any policy was trained (docs/gym.md).

T1 (16 observations: e (3), the first two columns of Rᵀ R_r (6, a continuous
relative attitude), v (3), ω (3), d (1)); per step

    r = −d                                   position tracking
        + 0.5 · min(τ_hold / 5 s, 1)         sustained-hold bonus (τ_hold: time held
                                             with d ≤ 0.1 m and |e_ψ| ≤ 5°)
        − 0.5 · e_ψ² − 0.5 · (φ² + θ²)       attitude preference
        − 0.05 · |ω|²                        angular-rate preference
        − 0.01 · |a|² − 0.01 · |a − a⁻|²     low-energy, smooth commands
        − 10, terminated                     failure: |φ| or |θ| > 15° (the T1 guards)

T2 (30 observations: four future reference points 0.5, 1, 1.5, 2 s ahead,
extrapolated from the setpoint's feed-forward p_r + v_r τ + ½ a_r τ², body-relative
(12); v_r in the body frame (3) and its unit tangent (3); v (3), ω (3); a⁻ (6)); per
step, with tracking quality q = exp(−d / 0.1 m)

    r = −d                                   path-tracking quality
        − 0.5 · (φ² + θ²) · q                uprightness, conditioned on tracking
        − 0.05 · r_z² · q                    low yaw rate, conditioned on tracking
        − 0.01 · |a|²                        low-energy actuation
        − 10, terminated                     failure: |φ| or |θ| > 15°, or d > 1.5 m
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.components.sdk.frames import rot_from_quat, rot_z, wrap_angle

from .env import RigEnv

ROOT = Path(__file__).resolve().parents[1]
TILT_LIMIT = math.radians(15.0)
# Wrench6 scale: a = ±1 is ±60 N on each force axis, ±10 N·m on each torque axis
# (inside the BlueROV2 Heavy's reachable box, docs/actuation.md).
WRENCH_SCALE = (60.0, 60.0, 60.0, 10.0, 10.0, 10.0)


def _pose(state: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    p = np.array([state.position_ned_m.x, state.position_ned_m.y, state.position_ned_m.z])
    o = state.orientation
    R = rot_from_quat([o.w, o.x, o.y, o.z]) if (o.w or o.x or o.y or o.z) else np.eye(3)
    v = np.array([state.linear_velocity_body_mps.x, state.linear_velocity_body_mps.y,
                  state.linear_velocity_body_mps.z])
    w = np.array([state.angular_velocity_body_radps.x, state.angular_velocity_body_radps.y,
                  state.angular_velocity_body_radps.z])
    return p, R, v, w


class StationKeepingTask:
    """T1 observation, reward and failure (module docstring)."""

    size = 16

    def __init__(self, state: str = "vehicle.state", setpoint: str = "t1.setpoint",
                 dt_s: float = 0.1) -> None:
        self.state, self.setpoint = state, setpoint
        self.observe_ports = (state, setpoint)
        self.dt_s = dt_s
        self.reset()

    def reset(self) -> None:
        self.hold_s = 0.0
        self.prev = np.zeros(6)

    def _errors(self, m: Mapping[str, Any]):
        st, sp = m.get(self.state), m.get(self.setpoint)
        p, R, v, w = _pose(st)
        p_r = np.array([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z]) \
            if sp is not None else p
        psi_r = sp.yaw_rad if sp is not None else st.yaw_rad
        return p, R, v, w, p_r, psi_r, st

    def observe(self, m: Mapping[str, Any]) -> np.ndarray:
        if m.get(self.state) is None:
            return np.zeros(self.size)
        p, R, v, w, p_r, psi_r, _ = self._errors(m)
        e = R.T @ (p_r - p)
        rel = R.T @ rot_z(psi_r)
        return np.concatenate([e, rel[:, 0], rel[:, 1], v, w, [np.linalg.norm(e)]])

    def reward(self, m: Mapping[str, Any], a: np.ndarray) -> tuple[float, bool, dict[str, float]]:
        p, R, v, w, p_r, psi_r, st = self._errors(m)
        d = float(np.linalg.norm(p_r - p))
        e_psi = float(wrap_angle(psi_r - st.yaw_rad))
        held = d <= 0.1 and abs(e_psi) <= math.radians(5.0)
        self.hold_s = self.hold_s + self.dt_s if held else 0.0
        terms = {
            "position": -d,
            "hold": 0.5 * min(self.hold_s / 5.0, 1.0),
            "attitude": -0.5 * e_psi**2 - 0.5 * (st.roll_rad**2 + st.pitch_rad**2),
            "rate": -0.05 * float(w @ w),
            "energy": -0.01 * float(a @ a),
            "smooth": -0.01 * float((a - self.prev) @ (a - self.prev)),
        }
        self.prev = a.copy()
        failed = abs(st.roll_rad) > TILT_LIMIT or abs(st.pitch_rad) > TILT_LIMIT
        if failed:
            terms["failure"] = -10.0
        return sum(terms.values()), failed, terms


class TrajectoryTrackingTask:
    """T2 observation, reward and failure (module docstring)."""

    size = 30
    LOOKAHEAD_S = (0.5, 1.0, 1.5, 2.0)

    def __init__(self, state: str = "vehicle.state", setpoint: str = "t2.setpoint") -> None:
        self.state, self.setpoint = state, setpoint
        self.observe_ports = (state, setpoint)
        self.reset()

    def reset(self) -> None:
        self.prev = np.zeros(6)

    def observe(self, m: Mapping[str, Any]) -> np.ndarray:
        st, sp = m.get(self.state), m.get(self.setpoint)
        if st is None:
            return np.zeros(self.size)
        p, R, v, w = _pose(st)
        if sp is None:
            p_r, v_r, a_r = p, np.zeros(3), np.zeros(3)
        else:
            p_r = np.array([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z])
            v_r = np.array([sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z])
            a_r = np.array([sp.acceleration_ned_mps2.x, sp.acceleration_ned_mps2.y,
                            sp.acceleration_ned_mps2.z])
        ahead = [R.T @ (p_r + v_r * tau + 0.5 * a_r * tau**2 - p) for tau in self.LOOKAHEAD_S]
        vb = R.T @ v_r
        speed = np.linalg.norm(vb)
        tangent = vb / speed if speed > 1e-9 else np.zeros(3)
        return np.concatenate([*ahead, vb, tangent, v, w, self.prev])

    def reward(self, m: Mapping[str, Any], a: np.ndarray) -> tuple[float, bool, dict[str, float]]:
        st, sp = m.get(self.state), m.get(self.setpoint)
        p, R, v, w = _pose(st)
        p_r = np.array([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z]) \
            if sp is not None else p
        d = float(np.linalg.norm(p_r - p))
        q = math.exp(-d / 0.1)
        terms = {
            "tracking": -d,
            "upright": -0.5 * (st.roll_rad**2 + st.pitch_rad**2) * q,
            "yaw_rate": -0.05 * float(w[2]) ** 2 * q,
            "energy": -0.01 * float(a @ a),
        }
        self.prev = a.copy()
        failed = abs(st.roll_rad) > TILT_LIMIT or abs(st.pitch_rad) > TILT_LIMIT or d > 1.5
        if failed:
            terms["failure"] = -10.0
        return sum(terms.values()), failed, terms


def make_station_keeping(*, rig: str | Path | None = None, horizon_s: float = 20.0,
                         rate_hz: float = 10.0, setpoint: int = 1,
                         randomize: Mapping[str, str] | None = None,
                         overrides: tuple[str, ...] = ()) -> RigEnv:
    """``moonpool/StationKeeping-v0``: T1 on rigs/pool_t1.toml (truth feedback), one
    trial of ``horizon_s`` towards setpoint ``setpoint`` (1..8, docs/tasks.md), the
    agent at ``rate_hz`` in the controller's place."""
    sets = [f"components.controller.rate_hz={rate_hz!r}",
            f"components.t1.parameters.trial_s={float(horizon_s)!r}",
            f"components.t1.parameters.window_start_s={float(horizon_s) * 2 / 3!r}",
            f"components.t1.parameters.window_end_s={float(horizon_s)!r}",
            "components.t1.parameters.count=1", "run.record=false", "run.plots=false"]
    if setpoint != 1:
        rows = _T1_SETPOINTS[setpoint - 1]
        sets.append(f"components.t1.parameters.setpoints=[[{', '.join(map(repr, rows))}]]")
    return RigEnv(rig or ROOT / "rigs" / "pool_t1.toml", action="controller.wrench",
                  task=StationKeepingTask(dt_s=1.0 / rate_hz), horizon_s=horizon_s,
                  randomize=randomize, overrides=sets + list(overrides),
                  action_scale=WRENCH_SCALE)


def make_trajectory_tracking(*, rig: str | Path | None = None, horizon_s: float = 40.0,
                             rate_hz: float = 10.0, trajectory: str = "lemniscate",
                             randomize: Mapping[str, str] | None = None,
                             overrides: tuple[str, ...] = ()) -> RigEnv:
    """``moonpool/TrajectoryTracking-v0``: T2 on rigs/pool_t2.toml (truth feedback),
    reference ``trajectory``, ``horizon_s`` long, the agent at ``rate_hz``."""
    sets = [f"components.controller.rate_hz={rate_hz!r}",
            f"components.t2.parameters.trajectory={trajectory}",
            "run.record=false", "run.plots=false"]
    return RigEnv(rig or ROOT / "rigs" / "pool_t2.toml", action="controller.wrench",
                  task=TrajectoryTrackingTask(), horizon_s=horizon_s, randomize=randomize,
                  overrides=sets + list(overrides), action_scale=WRENCH_SCALE)


# docs/tasks.md: x, y, z [m], yaw [deg]
_T1_SETPOINTS = [(0.0, 0.0, 1.0, 0.0), (0.6, 0.0, 1.0, 0.0), (0.6, 0.5, 0.8, 90.0),
                 (0.0, 0.5, 1.2, 180.0), (-0.6, 0.5, 1.0, -90.0), (-0.6, -0.5, 0.8, 45.0),
                 (0.0, -0.5, 1.2, -135.0), (0.3, -0.3, 1.0, 0.0)]
