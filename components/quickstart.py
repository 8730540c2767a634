"""Three small components that close a depth loop, so the whole path is exercised
before the real vehicle models exist: a heave-only vehicle, an absolute pressure
sensor with keyed noise, and a depth PID.

Heave dynamics (Fossen's 6-DOF equations restricted to w, body = NED vertical)::

    (m + A_w) dw/dt = tau_Z + W - s(d) B - (D1 + D2 |w|) w,     dd/dt = w

with W = m g the weight, B = rho g V the buoyancy of the fully submerged hull and
s(d) = clip((d + h/2) / h, 0, 1) the submerged fraction of a hull of height h whose
centre is at depth d (so the vehicle floats at the surface instead of leaving the
water). Positive magnitudes throughout; z (depth) points down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from moonpool.v1 import common_pb2, navigation_pb2, sensors_pb2, vehicle_pb2

from .sdk.component import Component, Port, param
from .sdk.errors import ParameterError
from .sdk.noise import KeyedNoise

G = 9.80665  # standard gravity, m/s^2
P_ATM = 101_325.0  # standard atmosphere, Pa


def _positive(name: str, value: float, component: str) -> None:
    if not value > 0:
        raise ParameterError(f"'{name}' must be > 0, got {value}", component=component,
                             fix=f"set {name} to a positive value")


class HeaveVehicle(Component):
    """One-degree-of-freedom vehicle in heave (depth), integrated with RK4.

    Call order: configure → initialize (publishes the initial state) → step* →
    terminate (no metrics). Model (module docstring), in doubles, g = 9.80665 m/s²::

        a(d, w) = (tau_Z + m g - s(d) rho g V - (D1 + D2 |w|) w) / (m + A_w)
        s(d)    = min(max((d + h/2) / h, 0), 1)

    - Step t → t + dt: tau_Z = the latest wrench's ``force_n.z`` (N, down), 0 before the
      first one; held for the whole step. n = max(1, ceil(dt / substep_s − 1e-9))
      equal sub-steps of h = dt / n, each classical RK4 on (d, w) with tau_Z fixed.
    - Output ``state`` (initialize: at the start time; step: at t + dt), frame_id
      ``"ned"``: ``position_ned_m.z`` = d, ``orientation.w`` = 1, ``linear_velocity_body_mps.z``
      = w, ``linear_acceleration_body_mps2.z`` = a(d, w) with the step's tau_Z,
      ``water_density_kgpm3`` = the parameter; every other field 0.
    """

    inputs = (Port("wrench", vehicle_pb2.Wrench, "body wrench; only force_n.z (down) is used"),)
    outputs = (Port("state", vehicle_pb2.VehicleState, "depth, heave velocity and acceleration"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        mass_kg: float = param(13.5, "dry mass m", unit="kg")
        added_mass_kg: float = param(18.68, "heave added mass A_w (positive magnitude)", unit="kg")
        volume_m3: float = param(0.0134, "displaced volume V when submerged", unit="m^3")
        hull_height_m: float = param(0.25, "hull height h (for the surface transition)", unit="m")
        linear_damping: float = param(33.0, "D1, linear heave damping", unit="N s/m")
        quadratic_damping: float = param(190.0, "D2, quadratic heave damping", unit="N s^2/m^2")
        water_density_kgpm3: float = param(1025.0, "water density rho", unit="kg/m^3")
        initial_depth_m: float = param(0.5, "initial depth of the hull centre", unit="m")
        substep_s: float = param(0.001, "RK4 sub-step (the step is cut into equal sub-steps)", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Masses, volume, hull and step positive; damping and added mass >= 0."""
        for name in ("mass_kg", "volume_m3", "hull_height_m", "water_density_kgpm3", "substep_s"):
            _positive(name, getattr(params, name), "")
        for name in ("added_mass_kg", "linear_damping", "quadratic_damping"):
            if getattr(params, name) < 0:
                raise ParameterError(f"'{name}' must be >= 0 (a positive magnitude)",
                                     fix=f"set {name} >= 0")

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.p = params

    def initialize(self, start_time_ns: int):
        self.d = self.p.initial_depth_m
        self.w = 0.0
        self.tau_z = 0.0
        return {"state": self._state(start_time_ns)}

    def _accel(self, d: float, w: float) -> float:
        p = self.p
        submerged = min(max((d + p.hull_height_m / 2) / p.hull_height_m, 0.0), 1.0)
        weight = p.mass_kg * G
        buoyancy = submerged * p.water_density_kgpm3 * G * p.volume_m3
        damping = (p.linear_damping + p.quadratic_damping * abs(w)) * w
        return (self.tau_z + weight - buoyancy - damping) / (p.mass_kg + p.added_mass_kg)

    def step(self, t_ns, dt_ns, inputs):
        wrench = inputs.get("wrench")
        self.tau_z = wrench.force_n.z if wrench is not None else 0.0
        dt = dt_ns * 1e-9
        n = max(1, math.ceil(dt / self.p.substep_s - 1e-9))
        h = dt / n
        d, w = self.d, self.w
        for _ in range(n):
            k1d, k1w = w, self._accel(d, w)
            k2d, k2w = w + 0.5 * h * k1w, self._accel(d + 0.5 * h * k1d, w + 0.5 * h * k1w)
            k3d, k3w = w + 0.5 * h * k2w, self._accel(d + 0.5 * h * k2d, w + 0.5 * h * k2w)
            k4d, k4w = w + h * k3w, self._accel(d + h * k3d, w + h * k3w)
            d += h / 6 * (k1d + 2 * k2d + 2 * k3d + k4d)
            w += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w)
        self.d, self.w = d, w
        return {"state": self._state(t_ns + dt_ns)}

    def _state(self, t_ns: int) -> vehicle_pb2.VehicleState:
        s = vehicle_pb2.VehicleState(header=self.header(t_ns, "ned"))
        s.position_ned_m.z = self.d
        s.orientation.w = 1.0
        s.linear_velocity_body_mps.z = self.w
        s.linear_acceleration_body_mps2.z = self._accel(self.d, self.w)
        s.water_density_kgpm3 = self.p.water_density_kgpm3
        return s


class PressureSensor(Component):
    """Absolute pressure p = p_atm + rho g z + bias + noise, quantized; refused above the surface.

    Call order: configure → initialize (nothing published) → step* → terminate (no
    metrics). Each step at t publishes one ``pressure`` message, header
    ``sim_time_ns`` = t, ``frame_id`` = the instance name; in this order, in doubles:

    1. k = the number of steps before this one (0 for the first after initialize),
       counted on every step: the keyed-noise sample index (docs/protocol.md §11).
    2. No ``state`` received yet: refused, ``validity.reason`` = NOT_READY,
       ``validity.detail`` = "no vehicle state received yet"; no other field set.
    3. d = ``state.position_ned_m.z`` + mount_z_m (m, + down);
       p_true = atmospheric_pa + water_density_kgpm3 · g · max(d, 0), g = 9.80665 m/s²
       (the density is this parameter, never the vehicle's). ``true_pressure_pa`` =
       p_true and ``true_depth_m`` = d are set on every message from here on, refused
       or not.
    4. d < 0: refused, reason ABOVE_SURFACE, detail "sensor {−d:.3f} m above the
       surface", ``pressure_pa`` unset. d = 0 is valid (p_true = atmospheric_pa).
    5. p = p_true + bias_pa + noise_pa · z, z = KeyedNoise(seed, instance).normal(k,
       "pressure") (z0 of the block; bias before noise, both before quantization).
    6. resolution_pa > 0: p = round(p / resolution_pa) · resolution_pa with Python's
       round (to nearest, ties to even), the division and product rounded as
       IEEE 754 doubles; resolution_pa = 0: no quantization.
    7. ``pressure_pa`` = p, ``validity.valid`` = true (reason and detail unset).
    """

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("pressure", sensors_pb2.Pressure, "absolute pressure, Pa"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        noise_pa: float = param(50.0, "white noise standard deviation", unit="Pa")
        bias_pa: float = param(0.0, "constant bias", unit="Pa")
        resolution_pa: float = param(1.0, "quantization step (0: none)", unit="Pa")
        mount_z_m: float = param(0.0, "sensor below the body origin (+ down)", unit="m")
        atmospheric_pa: float = param(P_ATM, "pressure at the surface", unit="Pa")
        water_density_kgpm3: float = param(1025.0, "density used for the water column", unit="kg/m^3")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """Noise and resolution >= 0, water density > 0."""
        if params.noise_pa < 0 or params.resolution_pa < 0:
            raise ParameterError("noise_pa and resolution_pa must be >= 0",
                                 fix="use non-negative values")
        _positive("water_density_kgpm3", params.water_density_kgpm3, "")

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.p = params
        self.noise = KeyedNoise(self.seed, self.name)
        self.k = 0  # sample index: the noise key, independent of process layout

    def step(self, t_ns, dt_ns, inputs):
        k, self.k = self.k, self.k + 1
        state = inputs.get("state")
        msg = sensors_pb2.Pressure(header=self.header(t_ns, self.name))
        if state is None:
            msg.validity.reason = common_pb2.REFUSAL_REASON_NOT_READY
            msg.validity.detail = "no vehicle state received yet"
            return {"pressure": msg}
        p = self.p
        depth = state.position_ned_m.z + p.mount_z_m
        true_p = p.atmospheric_pa + p.water_density_kgpm3 * G * max(depth, 0.0)
        msg.true_pressure_pa = true_p
        msg.true_depth_m = depth
        if depth < 0:
            msg.validity.reason = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
            msg.validity.detail = f"sensor {-depth:.3f} m above the surface"
            return {"pressure": msg}
        value = true_p + p.bias_pa + p.noise_pa * float(self.noise.normal(k, "pressure"))
        if p.resolution_pa > 0:
            value = round(value / p.resolution_pa) * p.resolution_pa
        msg.pressure_pa = value
        msg.validity.valid = True
        return {"pressure": msg}


class DepthPid(Component):
    """Depth PID on measured pressure, following a schedule of depth setpoints.

    tau_Z = kp e + ki ∫e dt - kd dz/dt (derivative on the measurement; anti-windup:
    the integral is clamped and frozen while the output saturates; output limited to
    ±max_force_n), e = z_ref - z.

    Call order: configure → initialize (integral 0, command 0, nothing published) →
    step* → terminate (metrics). Each step at t (seconds t = t_ns · 1e-9, dt likewise):

    1. Setpoint index i = min(floor(t / hold_s), len(setpoints_m) − 1), z_ref =
       setpoints_m[i], since = t − i · hold_s.
    2. With a measurement whose ``validity.valid`` is true:
       z = (pressure_pa − atmospheric_pa) / (water_density_kgpm3 · g);
       e = z_ref − z; dz = (z − z_prev) / dt (0 for the first valid one);
       u = kp e + I − kd dz with the integral I before this step; if |u| < max_force_n or
       the signs of u and e differ (u > 0 ≠ e > 0): I = clip(I + ki e dt, ±integral_limit_n);
       tau = clip(kp e + I − kd dz, ±max_force_n). If since ≥ settle_s, the squared
       error (z_ref − ``true_depth_m``)² enters the RMSE.
       Otherwise (none yet, or refused): tau stays the last command (0 at first).
    3. Outputs, header ``sim_time_ns`` = t: ``wrench`` (frame_id ``"body"``,
       ``force_n.z`` = tau) and ``setpoint`` (frame_id ``"ned"``, ``index`` = i,
       ``phase`` = "depth/i", ``position_ned_m.z`` = z_ref).

    Terminate returns {"depth_rmse_m": sqrt(mean of the squared errors), "samples": n}
    ({"depth_rmse_m": null, "samples": 0} when n = 0).
    """

    inputs = (Port("pressure", sensors_pb2.Pressure, "absolute pressure measurement"),)
    outputs = (
        Port("wrench", vehicle_pb2.Wrench, "commanded body wrench (force_n.z, down)"),
        Port("setpoint", navigation_pb2.Setpoint, "current depth setpoint"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        setpoints_m: tuple[float, ...] = param((1.0, 3.0, 2.0), "depth setpoints, in turn", unit="m")
        hold_s: float = param(10.0, "time spent on each setpoint", unit="s")
        kp: float = param(120.0, "proportional gain", unit="N/m")
        ki: float = param(15.0, "integral gain", unit="N/(m s)")
        kd: float = param(60.0, "derivative gain", unit="N s/m")
        max_force_n: float = param(80.0, "output limit (symmetric)", unit="N")
        integral_limit_n: float = param(10.0, "anti-windup: limit of the integral term", unit="N")
        atmospheric_pa: float = param(P_ATM, "pressure at the surface", unit="Pa")
        water_density_kgpm3: float = param(1025.0, "density used to turn pressure into depth", unit="kg/m^3")
        settle_s: float = param(5.0, "time after each setpoint change excluded from the RMSE", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """At least one set-point; hold time and force limit positive."""
        if not params.setpoints_m:
            raise ParameterError("setpoints_m is empty", fix="give at least one depth")
        _positive("hold_s", params.hold_s, "")
        _positive("max_force_n", params.max_force_n, "")

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.p = params

    def initialize(self, start_time_ns: int):
        self.integral = 0.0
        self.last_z: float | None = None
        self.tau = 0.0
        self.sq_err = 0.0
        self.n_err = 0
        return None

    def _setpoint(self, t_ns: int) -> tuple[int, float, float]:
        t = t_ns * 1e-9
        i = min(int(t // self.p.hold_s), len(self.p.setpoints_m) - 1)
        return i, self.p.setpoints_m[i], t - i * self.p.hold_s

    def step(self, t_ns, dt_ns, inputs):
        p = self.p
        dt = dt_ns * 1e-9
        i, z_ref, since = self._setpoint(t_ns)
        meas = inputs.get("pressure")
        if meas is not None and meas.validity.valid:
            z = (meas.pressure_pa - p.atmospheric_pa) / (p.water_density_kgpm3 * G)
            e = z_ref - z
            dz = 0.0 if self.last_z is None else (z - self.last_z) / dt
            self.last_z = z
            unsat = p.kp * e + self.integral - p.kd * dz
            # Anti-windup: clamp the integral, and freeze it while the output saturates
            # in the direction the error pushes (conditional integration).
            if abs(unsat) < p.max_force_n or (unsat > 0) != (e > 0):
                self.integral = min(max(self.integral + p.ki * e * dt, -p.integral_limit_n),
                                    p.integral_limit_n)
            self.tau = min(max(p.kp * e + self.integral - p.kd * dz, -p.max_force_n), p.max_force_n)
            if since >= p.settle_s:
                self.sq_err += (z_ref - meas.true_depth_m) ** 2
                self.n_err += 1
        # else: hold the last command (a refused measurement is never used)
        wrench = vehicle_pb2.Wrench(header=self.header(t_ns, "body"))
        wrench.force_n.z = self.tau
        sp = navigation_pb2.Setpoint(header=self.header(t_ns, "ned"), index=i, phase=f"depth/{i}")
        sp.position_ned_m.z = z_ref
        return {"wrench": wrench, "setpoint": sp}

    def terminate(self):
        if getattr(self, "n_err", 0) == 0:
            return {"depth_rmse_m": None, "samples": 0}
        return {"depth_rmse_m": math.sqrt(self.sq_err / self.n_err), "samples": self.n_err}
