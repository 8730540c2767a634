"""The one place where controllers read the vehicle's state from a message.

Controllers take ``vehicle_pb2.VehicleState`` (ground truth) today and may take a
``navigation_pb2.NavigationState`` (an estimator's output) tomorrow: both become a
:class:`Kinematics`, so nothing else in a controller knows which message it got.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from moonpool.v1 import navigation_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import euler_from_rot, rot_from_euler, rot_from_quat, wrap_angle

STATE_TYPES = {
    "moonpool.v1.VehicleState": vehicle_pb2.VehicleState,
    "moonpool.v1.NavigationState": navigation_pb2.NavigationState,
}
"""The message types a controller's ``state`` input may take (parameter ``state_type``)."""


def state_message_class(type_name: str, component: str):
    """The state input's message class for a ``state_type`` parameter value."""
    try:
        return STATE_TYPES[type_name]
    except KeyError:
        raise ParameterError(f"state_type {type_name!r} is not a state message", component=component,
                             fix=f"use one of {', '.join(STATE_TYPES)}") from None


def state_type_param() -> str:
    """The ``state_type`` parameter of a controller (a dataclass field)."""
    return param(
        "moonpool.v1.VehicleState", "message type of the state input: moonpool.v1.VehicleState "
        "(truth) or moonpool.v1.NavigationState (an estimator's output)")


class StateInput:
    """Mixin for a controller whose ``state`` input takes the message type named by its
    ``state_type`` parameter (:func:`state_type_param`); the other ports are the class's."""

    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]

    @classmethod
    def ports_for(cls, params) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
        state_cls = state_message_class(params.state_type, "")
        inputs = tuple(Port(p.name, state_cls, p.description) if p.name == "state" else p
                       for p in cls.inputs)
        return inputs, tuple(cls.outputs)


@dataclass(frozen=True)
class Kinematics:
    """What a controller needs to know of the vehicle, in SI units, NED / FRD."""

    position_ned: np.ndarray
    """η₁ = (n, e, d) [m]."""
    euler: np.ndarray
    """Θ = (φ, θ, ψ) [rad], zyx, ψ in (−π, π]."""
    rotation: np.ndarray
    """R (3×3), body → NED."""
    nu: np.ndarray
    """ν = (u, v, w, p, q, r) [m/s, rad/s], body FRD."""

    @property
    def yaw(self) -> float:
        return float(self.euler[2])

    @property
    def velocity_ned(self) -> np.ndarray:
        """η̇₁ = R ν₁ [m/s]."""
        return self.rotation @ self.nu[:3]

    @property
    def yaw_rate(self) -> float:
        """ψ̇ = (q sin φ + r cos φ) / cos θ [rad/s]."""
        phi, theta = self.euler[0], self.euler[1]
        return float((self.nu[4] * math.sin(phi) + self.nu[5] * math.cos(phi))
                     / max(math.cos(theta), 1e-6))

    def euler_state(self) -> np.ndarray:
        """x = (n, e, d, φ, θ, ψ, u, v, w, p, q, r): the 12-state Euler form."""
        return np.r_[self.position_ned, self.euler, self.nu]

    @classmethod
    def from_euler_state(cls, x: np.ndarray) -> Kinematics:
        """The inverse of :meth:`euler_state` (ψ wrapped into (−π, π])."""
        x = np.asarray(x, dtype=float)
        euler = np.array([x[3], x[4], wrap_angle(x[5])])
        return cls(position_ned=x[0:3].copy(), euler=euler, rotation=rot_from_euler(*euler),
                   nu=x[6:12].copy())


def kinematics(msg: vehicle_pb2.VehicleState | navigation_pb2.NavigationState) -> Kinematics | None:
    """The kinematics a state message carries, or None when it must not be used.

    - ``VehicleState`` (truth): position, attitude from the quaternion (from the
      Euler fields when the quaternion is unset), body velocities.
    - ``NavigationState`` (an estimate): used only when ``validity.valid``; NED
      velocity turned into body axes, ν₁ = Rᵀ η̇₁; attitude from the quaternion, or
      from ``yaw_rad`` with zero roll and pitch when the quaternion is unset.
    """
    nav = isinstance(msg, navigation_pb2.NavigationState)
    if nav and not msg.validity.valid:
        return None
    o = msg.orientation
    if (o.w, o.x, o.y, o.z) != (0.0, 0.0, 0.0, 0.0):
        R = rot_from_quat((o.w, o.x, o.y, o.z))
    elif nav:
        R = rot_from_euler(0.0, 0.0, msg.yaw_rad)
    else:
        R = rot_from_euler(msg.roll_rad, msg.pitch_rad, msg.yaw_rad)
    phi, theta, psi = euler_from_rot(R)
    p = msg.position_ned_m
    if nav:
        v = msg.velocity_ned_mps
        nu1 = R.T @ np.array([v.x, v.y, v.z])
    else:
        v = msg.linear_velocity_body_mps
        nu1 = np.array([v.x, v.y, v.z])
    w = msg.angular_velocity_body_radps
    return Kinematics(
        position_ned=np.array([p.x, p.y, p.z]),
        euler=np.array([phi, theta, wrap_angle(psi)]),
        rotation=R,
        nu=np.r_[nu1, w.x, w.y, w.z],
    )
