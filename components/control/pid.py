"""The world-frame 4-DOF PID of seed 003 (Grimaldi et al., OMAE 2026, §3).

Errors are taken in the world (NED) frame, one PID per axis a ∈ {x, y, z, ψ}::

    e_a   = a_ref − a                 (e_ψ wrapped into (−π, π])
    ė_a   = ȧ_ref − ȧ                 (from the state's velocity: no differencing;
                                       with ȧ_ref = 0 it is derivative on measurement)
    ẽ_a   = sign(e_a) · max(|e_a| − δ_a, 0)          deadband δ_a (continuous)
    I_a  ← clamp(I_a + k_i,a ẽ_a Δt, ±I_max,a)       only while |ẽ_a| ≤ z_a (integral
                                                      zone) and the output is not
                                                      saturated (or ẽ_a drives it back)
    F_a   = clamp(k_p,a ẽ_a + I_a + k_d,a ė_a + F_ff,a, ±F_max,a)

and the world-frame wrench F = (F_x, F_y, F_z, M_ψ) is turned into a body wrench by
the yaw alone (the paper's Rz(ψ)ᵀ)::

    [X, Y] = Rz(ψ)ᵀ [F_x, F_y],   Z = F_z,   N = M_ψ.

Roll and pitch are not part of the paper's controller. A vehicle with a small
metacentric height (the BlueROV2 Heavy profile: 1 cm) tilts under the Munk moments of
combined surge/heave motion, so a PD levelling term may be added (``level_gains``;
(0, 0) gives the paper's K = M = 0)::

    K = −k_p φ − k_d p,   M = −k_p θ − k_d q      (clamped to ±level_limit)

Feed-forward F_ff (optional): the net weight B(d) − W on heave at the vehicle's depth d
(``buoyancy_feedforward``; B(d) with the profile's pycnocline and hull compression),
and the model term R (M a_ref + D(ν_ref) ν_ref) from the setpoint's velocity and
acceleration (``model_feedforward``), both from the vehicle profile.

**Free axes.** A setpoint coordinate that is NaN (x, y, z or yaw) leaves that axis
uncontrolled: its output is 0 (no P, I, D or feed-forward) and its integral is reset,
so it starts afresh when a number comes back. The hadal descent holds depth rate and
heading and lets the current carry the vehicle (x = y = NaN).

**Known disturbance.** The optional ``disturbance`` input (a body wrench w_d the
vehicle is known to receive, e.g. the arm's reaction, ``manipulation.arm``'s
``wrench``) is cancelled: τ ← τ − w_d on all six axes (seed 003's coordinated
vehicle–manipulator control), after the saturation of the world-frame PID and the
levelling, so a large disturbance is still answered; the allocator bounds the sum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
from moonpool.v1 import navigation_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import wrap_angle
from .fossen import FossenModel
from .state import Kinematics, StateInput, kinematics, state_message_class, state_type_param

AXES = ("x", "y", "z", "yaw")


def deadband(e: float, width: float) -> float:
    """sign(e)·max(|e| − width, 0): zero inside the band, continuous at its edge."""
    if width <= 0.0:
        return e
    if e > width:
        return e - width
    if e < -width:
        return e + width
    return 0.0


class PidAxis:
    """One PID axis with deadband, clamped and conditional integration, saturation.

    ``update(error, error_rate, dt)`` returns the saturated output; ``error_rate``
    is the derivative of the error computed from velocities by the caller (so no
    differencing, no derivative kick on a setpoint step).
    """

    def __init__(self, kp: float, ki: float, kd: float, *, deadband: float = 0.0,
                 integral_limit: float = math.inf, output_limit: float = math.inf,
                 integral_zone: float = math.inf) -> None:
        self.kp, self.ki, self.kd = kp, ki, kd
        self.deadband = deadband
        self.integral_zone = integral_zone
        self.integral_limit = integral_limit
        self.output_limit = output_limit
        self.integral = 0.0
        """The integral term I (already multiplied by ki), in output units."""
        self.saturated = False
        """True when the last output was limited."""

    def reset(self) -> None:
        self.integral = 0.0
        self.saturated = False

    def update(self, error: float, error_rate: float, dt: float, feedforward: float = 0.0) -> float:
        e = deadband(error, self.deadband)
        unsat = self.kp * e + self.integral + self.kd * error_rate + feedforward
        # Conditional integration: integrate only near the setpoint (|e| within the
        # integral zone) and unless the output is saturated and the error would push it
        # further into saturation; the integral itself is clamped.
        if abs(e) <= self.integral_zone and (
                abs(unsat) < self.output_limit or (e > 0.0) != (unsat > 0.0)):
            lim = self.integral_limit
            self.integral = min(max(self.integral + self.ki * e * dt, -lim), lim)
        unsat = self.kp * e + self.integral + self.kd * error_rate + feedforward
        lim = self.output_limit
        out = min(max(unsat, -lim), lim)
        self.saturated = out != unsat
        return out


def body_wrench_from_world(force_world: np.ndarray, yaw: float) -> np.ndarray:
    """(X, Y, Z, N) from the world-frame (F_x, F_y, F_z, M_ψ): [X Y]ᵀ = Rz(ψ)ᵀ [F_x F_y]ᵀ."""
    c, s = math.cos(yaw), math.sin(yaw)
    fx, fy, fz, mz = force_world
    return np.array([c * fx + s * fy, -s * fx + c * fy, fz, mz])


def _tuple4(name: str, value: Any, component: str, *, positive: bool = False) -> tuple[float, ...]:
    ok = isinstance(value, (list, tuple)) and len(value) == 4 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok or any(v < 0 for v in value) or (positive and any(v <= 0 for v in value)):
        bound = "> 0" if positive else ">= 0"
        raise ParameterError(f"{name} must be 4 finite numbers {bound} (x, y, z, yaw), got {value!r}",
                             component=component, fix=f"e.g. {name} = [1.0, 1.0, 1.0, 0.5]")
    return tuple(float(v) for v in value)


class WorldFramePid(StateInput, Component):
    """World-frame 4-DOF PID (x, y, z, yaw) with anti-windup and deadband; the wrench is
    rotated into the body by the yaw (seed 003).

    Until both a state and a setpoint have arrived it outputs a zero wrench; on an
    unusable state (a NavigationState refused as invalid) it holds its last command.
    """

    inputs = (
        Port("setpoint", navigation_pb2.Setpoint, "pose to hold or follow (NED, yaw) with feed-forward"),
        Port("state", vehicle_pb2.VehicleState, "vehicle state: VehicleState, or NavigationState (parameter state_type)"),
        Port("disturbance", vehicle_pb2.Wrench, "optional: a known body wrench on the vehicle "
             "(the arm's reaction) to cancel"),
    )
    outputs = (Port("wrench", vehicle_pb2.Wrench, "commanded body wrench (FRD)"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        kp: tuple[float, ...] = param((60.0, 60.0, 80.0, 3.0), "proportional gains x, y, z, yaw",
                                      unit="N/m (x y z), N·m/rad (yaw)")
        ki: tuple[float, ...] = param((25.0, 25.0, 30.0, 0.5), "integral gains x, y, z, yaw",
                                      unit="N/(m·s), N·m/(rad·s)")
        kd: tuple[float, ...] = param((55.0, 55.0, 70.0, 3.0), "derivative gains x, y, z, yaw",
                                      unit="N·s/m, N·m·s/rad")
        deadband: tuple[float, ...] = param((0.0, 0.0, 0.0, 0.0),
                                            "error deadband x, y, z, yaw (continuous: the band is subtracted)",
                                            unit="m, rad")
        integral_limit: tuple[float, ...] = param((30.0, 30.0, 30.0, 2.0),
                                                  "anti-windup: |integral term| limit x, y, z, yaw",
                                                  unit="N, N·m")
        integral_zone: tuple[float, ...] = param(
            (0.15, 0.15, 0.15, 0.1), "anti-windup: integrate only while |error| ≤ this, x, y, z, yaw "
            "(a large value: always)", unit="m, rad")
        output_limit: tuple[float, ...] = param(
            (), "saturation x, y, z, yaw of the world-frame output; empty: the profile's "
            "reachable box (smaller of ± and of X/Y for x and y) times limit_margin", unit="N, N·m")
        limit_margin: float = param(0.8, "fraction of the reachable box used when output_limit is empty")
        level_gains: tuple[float, ...] = param(
            (10.0, 3.0), "roll/pitch levelling (k_p, k_d): K = −k_p φ − k_d p, M = −k_p θ − k_d q; "
            "(0, 0): K = M = 0 as in seed 003", unit="N·m/rad, N·m·s/rad")
        level_limit: float = param(10.0, "|K|, |M| limit of the levelling term", unit="N·m")
        buoyancy_feedforward: bool = param(True, "add B − W (from the profile) to the heave force")
        model_feedforward: bool = param(
            True, "add R (M a_ref + D(ν_ref) ν_ref) from the setpoint's velocity and acceleration")
        state_type: str = state_type_param()
        profile: dict[str, Any] = param(
            {}, "vehicle profile (the rig's profile key): [parameters] for the feed-forward, "
            "[[thrusters]] for the default output limits")

    @classmethod
    def _gains(cls, params: Parameters) -> tuple:
        """The per-axis gains and limits and the vehicle model of ``params``, checked:
        (kp, ki, kd, deadband, integral_limit, integral_zone, output_limit, model)."""
        name = ""  # the host and ``moonpool check`` name the component
        state_message_class(params.state_type, name)
        kp = _tuple4("kp", params.kp, name)
        ki = _tuple4("ki", params.ki, name)
        kd = _tuple4("kd", params.kd, name)
        db = _tuple4("deadband", params.deadband, name)
        ilim = _tuple4("integral_limit", params.integral_limit, name)
        izone = _tuple4("integral_zone", params.integral_zone, name)
        profile = params.profile or {}
        if not isinstance(profile, Mapping):
            raise ParameterError("profile must be a table", component=name,
                                 fix='give the rig component profile = "path/to/vehicle.toml"')
        model_params = profile.get("parameters") or {}
        if (params.buoyancy_feedforward or params.model_feedforward) and not model_params:
            raise ParameterError(
                "the feed-forward needs the vehicle's [parameters] but no profile was given",
                component=name,
                fix='add profile = "../fmus/hydrodynamics/profiles/VEHICLE.toml" to the component, '
                    "or set buoyancy_feedforward = false and model_feedforward = false")
        if params.output_limit:
            olim = _tuple4("output_limit", params.output_limit, name, positive=True)
        else:
            olim = _limits_from_profile(profile, params.limit_margin, name)
        lg = params.level_gains
        if not (isinstance(lg, (list, tuple)) and len(lg) == 2 and all(
                isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in lg)):
            raise ParameterError(f"level_gains must be [k_p, k_d] >= 0, got {lg!r}", component=name,
                                 fix="e.g. level_gains = [10, 3]; [0, 0] disables levelling")
        if not params.level_limit >= 0:
            raise ParameterError("level_limit must be >= 0", component=name, fix="e.g. level_limit = 10")
        model = None
        if model_params:
            try:
                model = FossenModel(model_params)
            except ValueError as exc:
                raise ParameterError(f"profile [parameters]: {exc}", component=name,
                                     fix="fix the vehicle profile") from exc
        return kp, ki, kd, db, ilim, izone, olim, model

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """The state type, gains, limits, levelling and the vehicle profile (``_gains``)."""
        cls._gains(params)

    def configure(self, params: Parameters) -> None:
        kp, ki, kd, db, ilim, izone, olim, model = self.checked(params, self._gains)
        self.p = params
        self.axes = [PidAxis(kp[i], ki[i], kd[i], deadband=db[i], integral_limit=ilim[i],
                             output_limit=olim[i], integral_zone=izone[i]) for i in range(4)]
        self.model = model
        if model is not None:
            d = ca.SX.sym("d")
            self._net_weight = ca.Function("net_weight", [d], [model.W - model.buoyancy(d)])
            self._M = model.M
            self._D1, self._D2 = model.D1, model.D2

    def initialize(self, start_time_ns: int):
        for axis in self.axes:
            axis.reset()
        self.command = np.zeros(6)
        self.last_t_ns: int | None = None
        self.steps = 0
        self.saturated_steps = 0

    def feedforward(self, sp: navigation_pb2.Setpoint, yaw: float, depth: float = 0.0) -> np.ndarray:
        """World-frame feed-forward (F_x, F_y, F_z, M_ψ) at the vehicle's yaw and depth."""
        ff = np.zeros(4)
        if self.p.buoyancy_feedforward:
            ff[2] -= float(self._net_weight(depth))  # W − B > 0 sinks: push up (−z)
        if self.p.model_feedforward and self.model is not None:
            c, s = math.cos(yaw), math.sin(yaw)
            Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            v = np.array([sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z])
            a = np.array([sp.acceleration_ned_mps2.x, sp.acceleration_ned_mps2.y,
                          sp.acceleration_ned_mps2.z])
            nu_ref = np.r_[Rz.T @ v, 0.0, 0.0, sp.yaw_rate_radps]
            acc_ref = np.r_[Rz.T @ a, 0.0, 0.0, 0.0]
            body = self._M @ acc_ref + (self._D1 + self._D2 * np.abs(nu_ref)) * nu_ref
            ff[:3] += Rz @ body[:3]
            ff[3] += body[5]
        return ff

    def level(self, kin: Kinematics) -> tuple[float, float]:
        """(K, M) holding roll and pitch level (zero with level_gains = (0, 0))."""
        kp, kd = self.p.level_gains
        lim = self.p.level_limit
        k = -kp * kin.euler[0] - kd * kin.nu[3]
        m = -kp * kin.euler[1] - kd * kin.nu[4]
        return min(max(k, -lim), lim), min(max(m, -lim), lim)

    def control(self, kin: Kinematics, sp: navigation_pb2.Setpoint, dt: float) -> np.ndarray:
        """The body wrench (X, Y, Z, K, M, N) for one step of length dt."""
        ref = np.array([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z])
        ref_rate = np.array([sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z])
        e = ref - kin.position_ned
        e_rate = ref_rate - kin.velocity_ned
        e_yaw = wrap_angle(sp.yaw_rad - kin.yaw)
        e_yaw_rate = sp.yaw_rate_radps - kin.yaw_rate
        ff = self.feedforward(sp, kin.yaw, kin.position_ned[2])
        errors = (e[0], e[1], e[2], e_yaw)
        rates = (e_rate[0], e_rate[1], e_rate[2], e_yaw_rate)
        world = np.zeros(4)
        for i, ax in enumerate(self.axes):
            if math.isnan(errors[i]):  # a NaN coordinate: the axis is free
                ax.reset()
            else:
                world[i] = ax.update(errors[i], rates[i], dt, ff[i])
        x, y, z, n = body_wrench_from_world(world, kin.yaw)
        k, m = self.level(kin)
        return np.array([x, y, z, k, m, n])

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]):
        sp, state = inputs.get("setpoint"), inputs.get("state")
        if sp is not None and state is not None:
            kin = kinematics(state)
            if kin is not None:  # else: hold the last command
                # dt: time since the last control update (longer after a refused state)
                elapsed = dt_ns if self.last_t_ns is None else t_ns - self.last_t_ns
                self.last_t_ns = t_ns
                self.command = self.control(kin, sp, elapsed * 1e-9)
                dist = inputs.get("disturbance")
                if dist is not None:
                    self.command = self.command - np.array(
                        [dist.force_n.x, dist.force_n.y, dist.force_n.z,
                         dist.torque_nm.x, dist.torque_nm.y, dist.torque_nm.z])
                self.steps += 1
                self.saturated_steps += any(ax.saturated for ax in self.axes)
        return {"wrench": make_wrench(self.header(t_ns, "body"), self.command)}

    def terminate(self):
        if not hasattr(self, "steps"):  # never initialised
            return {}
        return {"steps": self.steps, "saturated_steps": self.saturated_steps,
                "integral": {a: ax.integral for a, ax in zip(AXES, self.axes)} if self.steps else {}}


def make_wrench(header, tau: np.ndarray) -> vehicle_pb2.Wrench:
    """A Wrench message from τ = (X, Y, Z, K, M, N)."""
    w = vehicle_pb2.Wrench(header=header)
    w.force_n.x, w.force_n.y, w.force_n.z = float(tau[0]), float(tau[1]), float(tau[2])
    w.torque_nm.x, w.torque_nm.y, w.torque_nm.z = float(tau[3]), float(tau[4]), float(tau[5])
    return w


def _limits_from_profile(profile: Mapping[str, Any], margin: float, component: str) -> tuple[float, ...]:
    from .limits import limit_box

    box = limit_box(profile, margin, component, "output_limit",
                    "give output_limit = [Fx, Fy, Fz, Mz] or a profile with thrusters")
    lo, hi = np.abs(box[0]), np.abs(box[1])
    horizontal = min(lo[0], hi[0], lo[1], hi[1])
    limits = (horizontal, horizontal, min(lo[2], hi[2]), min(lo[5], hi[5]))
    if min(limits) <= 0:
        raise ParameterError(f"the profile's thrusters cannot push on every axis (box {limits})",
                             component=component, fix="give output_limit explicitly")
    return tuple(margin * v for v in limits)
