"""Thrusters: commanded forces (or shaft speeds) -> rotor speeds -> body wrench.

Per thruster i (docs/actuation.md (thruster model)), with a directional quadratic
steady-state curve (seed 001, "Thrust-curve calibration")::

    T(omega) = c_f · omega²    for omega >= 0         (forward)
    T(omega) = −c_r · omega²   for omega < 0          (reverse)

A force command f is bounded to the profile's limits [−max_reverse_n, max_forward_n],
inverted to a speed set-point omega_sp = sign(f)·sqrt(|f| / c±), and clamped to
|omega_sp| <= max_speed_radps (a speed command is clamped likewise). The rotor follows
the set-point with a first-order lag of time constant tau, discretised exactly::

    omega(t + s) = omega_sp + (omega(t) − omega_sp)·e^(−s/tau),   0 <= s <= dt

The body wrench of a step is B · T̄, T̄ the **exact mean thrust over the step** (the
integral of T(omega(s)) in closed form, split where omega crosses zero), so a vehicle
holding that wrench over [t, t+dt] receives exactly the impulse of the lagged rotors.
Feedback is the state at the end of the step: omega(t+dt) and T(omega(t+dt)), as a
thruster MCU would report.

Profile keys per thruster (optional ones fall back to the component's parameters):
``c_forward``, ``c_reverse`` (N/(rad/s)²; default max_forward_n / max_speed²,
max_reverse_n / max_speed²), ``max_speed_radps``, ``time_constant_s``.

``ThrusterModel`` is the pure vectorised model; ``Thrusters`` the component.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from moonpool.v1 import vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError, PortError
from .geometry import ThrusterSpec, configuration_matrix, thrusters_from_profile

DEFAULT_MAX_SPEED_RADPS = 366.5
"""3500 rpm: a T200-class thruster at full throttle (estimate; see docs/actuation.md)."""
DEFAULT_TIME_CONSTANT_S = 0.05
"""Rotor + ESC speed loop time constant of a T200-class thruster (estimate)."""


class ThrusterModel:
    """n thrusters: curves, speed limits, first-order rotor lag (all arrays of n)."""

    def __init__(self, specs: Sequence[ThrusterSpec], *,
                 max_speed_radps: float = DEFAULT_MAX_SPEED_RADPS,
                 time_constant_s: float = DEFAULT_TIME_CONSTANT_S, component: str = "") -> None:
        if not (math.isfinite(max_speed_radps) and max_speed_radps > 0):
            raise ParameterError(f"max_speed_radps must be > 0, got {max_speed_radps}",
                                 component=component, fix="e.g. 366.5 (3500 rpm)")
        if not (math.isfinite(time_constant_s) and time_constant_s >= 0):
            raise ParameterError(f"time_constant_s must be >= 0, got {time_constant_s}",
                                 component=component, fix="0 for no rotor lag")
        self.specs = tuple(specs)
        self.names = tuple(t.name for t in specs)
        self.n = len(specs)
        self.B = configuration_matrix(specs)
        self.f_max = np.array([t.max_forward_n for t in specs], dtype=float)
        self.f_min = -np.array([t.max_reverse_n for t in specs], dtype=float)
        pick = lambda v, d: d if v is None else v
        self.w_max = np.array([pick(t.max_speed_radps, max_speed_radps) for t in specs])
        self.tau = np.array([pick(t.time_constant_s, time_constant_s) for t in specs])
        self.c_f = np.array([pick(t.c_forward, t.max_forward_n / w**2)
                             for t, w in zip(specs, self.w_max)])
        self.c_r = np.array([pick(t.c_reverse, t.max_reverse_n / w**2)
                             for t, w in zip(specs, self.w_max)])
        for i, t in enumerate(specs):
            for side, c, lim in (("forward", self.c_f[i], t.max_forward_n),
                                 ("reverse", self.c_r[i], t.max_reverse_n)):
                top = c * self.w_max[i] ** 2
                if lim > 0 and top < lim * (1 - 1e-9):
                    raise ParameterError(
                        f"thruster '{t.name}': the {side} curve reaches only c_{side}·"
                        f"max_speed² = {top:.4g} N at {self.w_max[i]:.4g} rad/s, below "
                        f"max_{side}_n = {lim:.4g} N: the allocator would command thrust "
                        "this thruster cannot make",
                        component=component,
                        fix=f"lower max_{side}_n to {top:.4g}, or raise c_{side} or "
                            f"max_speed_radps of '{t.name}'",
                    )
        self.omega = np.zeros(self.n)
        self._cached_dt = None

    # ------------------------------------------------------------ the curve

    def thrust(self, omega: Any) -> np.ndarray:
        """Steady-state thrust T(omega), N."""
        w = np.asarray(omega, dtype=float)
        return np.where(w >= 0, self.c_f, self.c_r) * w * np.abs(w)

    def speed_for_force(self, force_n: Any) -> np.ndarray:
        """Speed set-point for a force command: bounded to the limits, inverted,
        clamped to the speed limit."""
        f = np.clip(np.asarray(force_n, dtype=float), self.f_min, self.f_max)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(f >= 0, np.sqrt(f / self.c_f), -np.sqrt(-f / self.c_r))
        w = np.where(np.isfinite(w), w, 0.0)  # a 0 coefficient with a 0 limit
        return np.clip(w, -self.w_max, self.w_max)

    def clamp_speed(self, speed_radps: Any) -> np.ndarray:
        """Speed set-point for a speed command: clamped to the speed limit; a thruster
        without reverse thrust (max_reverse_n = 0) is not run backwards."""
        w = np.clip(np.asarray(speed_radps, dtype=float), -self.w_max, self.w_max)
        return np.where((w < 0) & (self.f_min == 0), 0.0, w)

    # ------------------------------------------------------------ dynamics

    def advance(self, omega_sp: Any, dt_s: float) -> np.ndarray:
        """Advance the rotors by dt_s towards omega_sp; return the mean thrust over
        the step (N per thruster). ``self.omega`` is then the speed at the end.

        Same result as :func:`mean_thrust`, faster for the usual step: the
        exponentials are cached per dt, and only thrusters whose speed changes sign
        during the step go through the split integral."""
        a = np.asarray(omega_sp, dtype=float)
        w0 = self.omega
        if self._cached_dt != dt_s:
            lag = self.tau > 0
            safe = np.where(lag, self.tau, 1.0)
            self._E = np.where(lag, np.exp(-dt_s / safe), 0.0)
            self._omE = np.where(lag, -np.expm1(-dt_s / safe), 1.0)
            self._omE2 = np.where(lag, -np.expm1(-2 * dt_s / safe), 1.0)
            self._cached_dt = dt_s
        b = w0 - a
        w1 = a + b * self._E
        # ∫ (a + b e^(−s/τ))² ds over [0, dt]; τ = 0 gives a²·dt (E = 0)
        integral = a * a * dt_s + self.tau * b * (2 * a * self._omE + 0.5 * b * self._omE2)
        s = np.where(w0 != 0, w0, a)
        mean = np.sign(s) * np.where(s >= 0, self.c_f, self.c_r) * integral / dt_s
        cross = w0 * w1 < 0
        if cross.any():
            mean[cross] = mean_thrust(w0[cross], a[cross], dt_s, self.tau[cross],
                                      self.c_f[cross], self.c_r[cross])[0]
        self.omega = w1
        return mean

    def wrench(self, thrust_n: Any) -> np.ndarray:
        """Body wrench [X Y Z K M N] of per-thruster thrusts."""
        return self.B @ np.asarray(thrust_n, dtype=float)


def _sq_integral(a, b, tau, s1, s2):
    """∫_{s1}^{s2} (a + b e^(−s/tau))² ds for tau > 0 (expm1 keeps small steps exact)."""
    d = s2 - s1
    e1 = np.exp(-s1 / tau)
    lin = -np.expm1(-d / tau) * e1          # e^(−s1/τ) − e^(−s2/τ)
    quad = -np.expm1(-2 * d / tau) * e1**2  # e^(−2s1/τ) − e^(−2s2/τ)
    return a * a * d + 2 * a * b * tau * lin + 0.5 * b * b * tau * quad


def mean_thrust(w0: Any, w_sp: Any, h: float, tau: Any, c_f: Any, c_r: Any
                ) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean of T(omega(s)) over [0, h] and omega(h), for omega(s) = w_sp +
    (w0 − w_sp) e^(−s/tau) (tau = 0: omega jumps to w_sp at once)."""
    w0, a = np.broadcast_arrays(np.asarray(w0, dtype=float), np.asarray(w_sp, dtype=float))
    tau = np.broadcast_to(np.asarray(tau, dtype=float), a.shape)
    c_f = np.broadcast_to(np.asarray(c_f, dtype=float), a.shape)
    c_r = np.broadcast_to(np.asarray(c_r, dtype=float), a.shape)
    lag = tau > 0
    safe_tau = np.where(lag, tau, 1.0)
    b = w0 - a
    w1 = np.where(lag, a + b * np.exp(-h / safe_tau), a)
    # zero crossing inside the step: omega changes sign between 0 and h
    cross = lag & (w0 * w1 < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_star = np.where(cross, -safe_tau * np.log(np.where(cross, -a / b, 1.0)), h)
    s_star = np.clip(s_star, 0.0, h)
    sign1 = np.where(w0 != 0, np.sign(w0), np.sign(a))
    sign2 = np.sign(a)
    c1 = np.where(sign1 >= 0, c_f, c_r)
    c2 = np.where(sign2 >= 0, c_f, c_r)
    i1 = _sq_integral(a, b, safe_tau, 0.0, s_star)
    i2 = _sq_integral(a, b, safe_tau, s_star, h)
    mean_lag = (sign1 * c1 * i1 + np.where(cross, sign2 * c2 * i2, sign1 * c1 * i2)) / h
    steady = np.where(a >= 0, c_f, c_r) * a * np.abs(a)
    return np.where(lag, mean_lag, steady), w1


def command_speeds(m: ThrusterModel, cmd: vehicle_pb2.ThrusterCommand, component: str) -> tuple[np.ndarray, bool]:
    """Speed set-points (rad/s) for a ThrusterCommand, and whether a force was beyond limits.

    A command carries one force per thruster (inverted through the curves) or one speed
    per thruster (clamped to the speed limits); anything else is a PortError naming
    ``component``. Shared by the thruster model and the MCU bridge.
    """
    if len(cmd.force_n) == m.n:
        values, kind = np.asarray(cmd.force_n, dtype=float), "force_n"
    elif len(cmd.speed_radps) == m.n and len(cmd.force_n) == 0:
        values, kind = np.asarray(cmd.speed_radps, dtype=float), "speed_radps"
    else:
        raise PortError(
            f"command has {len(cmd.force_n)} force_n and {len(cmd.speed_radps)} speed_radps "
            f"values; this vehicle has {m.n} thrusters ({', '.join(m.names)})",
            component=component,
            fix="send one force (or speed) per thruster, in the profile's order",
        )
    if not np.all(np.isfinite(values)):
        raise PortError(f"command {kind} contains a non-finite value: {values.tolist()}",
                        component=component, fix="check the allocator or controller upstream")
    if kind == "force_n":
        return m.speed_for_force(values), bool(np.any((values > m.f_max) | (values < m.f_min)))
    return m.clamp_speed(values), False


class Thrusters(Component):
    """Thrusters of a vehicle profile: directional quadratic curves T = c±·ω|ω|, speed
    limits, first-order rotor lag; body wrench (exact mean over the step) and
    per-thruster speed and force."""

    inputs = (Port("command", vehicle_pb2.ThrusterCommand,
                   "force_n (or speed_radps) per thruster, in profile order"),)
    outputs = (
        Port("wrench", vehicle_pb2.Wrench, "body wrench of the thrusters over the step (N, N·m), FRD"),
        Port("feedback", vehicle_pb2.ThrusterFeedback, "speed and thrust per thruster at t + dt"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        profile: Any = param(doc="a vehicle profile's content (the rig's profile key); "
                                 "geometry and curves from its [[thrusters]]")
        max_speed_radps: float = param(DEFAULT_MAX_SPEED_RADPS,
                                       "speed limit of thrusters whose profile entry has none",
                                       unit="rad/s")
        time_constant_s: float = param(DEFAULT_TIME_CONSTANT_S,
                                       "rotor time constant of thrusters whose profile entry "
                                       "has none (0: no lag)", unit="s")
        frame_id: str = param("body", "frame_id of the wrench header")

    def configure(self, params: Parameters) -> None:
        self.params = params
        specs = thrusters_from_profile(params.profile, self.name)
        self.model = ThrusterModel(specs, max_speed_radps=params.max_speed_radps,
                                   time_constant_s=params.time_constant_s, component=self.name)
        self.setpoint = np.zeros(self.model.n)
        self.steps = 0
        self.limited_steps = 0

    def _outputs(self, t_wrench: int, t_state: int, thrust: np.ndarray) -> dict[str, Any]:
        m = self.model
        w = m.wrench(thrust)
        msg = vehicle_pb2.Wrench(header=self.header(t_wrench, self.params.frame_id))
        msg.force_n.x, msg.force_n.y, msg.force_n.z = (float(v) for v in w[:3])
        msg.torque_nm.x, msg.torque_nm.y, msg.torque_nm.z = (float(v) for v in w[3:])
        fb = vehicle_pb2.ThrusterFeedback(header=self.header(t_state))  # no geometry: frame ""
        force_end = m.thrust(m.omega)
        for name, w_i, f_i in zip(m.names, m.omega, force_end):
            s = fb.thrusters.add(speed_radps=float(w_i), force_n=float(f_i))
            s.validity.valid = True
        return {"wrench": msg, "feedback": fb}

    def initialize(self, start_time_ns: int) -> dict[str, Any]:
        self.model.omega = np.zeros(self.model.n)
        return self._outputs(start_time_ns, start_time_ns, np.zeros(self.model.n))

    def _setpoint(self, cmd: vehicle_pb2.ThrusterCommand) -> np.ndarray:
        speeds, limited = command_speeds(self.model, cmd, self.name)
        self.limited_steps += limited
        return speeds

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        cmd = inputs.get("command")
        if cmd is not None:
            self.setpoint = self._setpoint(cmd)
        thrust = self.model.advance(self.setpoint, dt_ns * 1e-9)
        self.steps += 1
        return self._outputs(t_ns, t_ns + dt_ns, thrust)

    def terminate(self) -> dict[str, float]:
        return {"steps": self.steps, "steps_with_force_beyond_limits": self.limited_steps}
