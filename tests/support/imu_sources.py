"""Test-only source for the IMU tests: a constant VehicleState (attitude, body velocity,
angular rate, accelerations from parameters), stamped with the step time."""

from __future__ import annotations

from dataclasses import dataclass

from moonpool.components import Component, Port, param
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.v1 import vehicle_pb2


def make_state(rpy=(0.0, 0.0, 0.0), vel=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0),
               accel=(0.0, 0.0, 0.0), omega_dot=(0.0, 0.0, 0.0)) -> vehicle_pb2.VehicleState:
    s = vehicle_pb2.VehicleState()
    q = quat_from_euler(*rpy)
    s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = (float(v) for v in q)
    for field, v in (("linear_velocity_body_mps", vel), ("angular_velocity_body_radps", omega),
                     ("linear_acceleration_body_mps2", accel),
                     ("angular_acceleration_body_radps2", omega_dot)):
        m = getattr(s, field)
        m.x, m.y, m.z = (float(x) for x in v)
    return s


class ConstantState(Component):
    """A constant vehicle state."""

    outputs = (Port("state", vehicle_pb2.VehicleState, "constant state"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0), "attitude", unit="rad")
        velocity_mps: tuple[float, ...] = param((0.0, 0.0, 0.0), "body velocity", unit="m/s")
        omega_radps: tuple[float, ...] = param((0.0, 0.0, 0.0), "body rate", unit="rad/s")
        accel_mps2: tuple[float, ...] = param((0.0, 0.0, 0.0), "dv/dt", unit="m/s^2")

    def _state(self, t_ns: int):
        s = make_state(self.params.rpy_rad, self.params.velocity_mps, self.params.omega_radps,
                       self.params.accel_mps2)
        s.header.CopyFrom(self.header(t_ns, "ned"))
        return s

    def initialize(self, start_time_ns: int):
        return {"state": self._state(start_time_ns)}

    def step(self, t_ns, dt_ns, inputs):
        return {"state": self._state(t_ns + dt_ns)}
