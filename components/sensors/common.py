"""Pieces every sensor shares: rotations, the mount pose, truth extraction from a
VehicleState, latency, and validity.

Conventions (DESIGN.md): NED world, FRD body, quaternions (w, x, y, z) rotate body
vectors into the world; a sensor frame is given by its mount: lever arm r (body
frame, m) and rotation R_bs (sensor -> body) from roll/pitch/yaw (ZYX, rad).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from moonpool.v1 import common_pb2

from ..sdk.component import Component
from ..sdk.noise import KeyedNoise

G = 9.80665  # standard gravity, m/s^2
P_ATM = 101_325.0  # standard atmosphere, Pa


# ----------------------------------------------------------------- rotations


def cross(a: Any, b: Any) -> np.ndarray:
    """a × b over the last axis, broadcasting (3-vectors or stacks of them).

    The same products and differences, in the same order, as ``np.cross`` (so the
    same bits), without its axis handling: ~1-2 µs instead of ~30 for one pair."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def rot_from_quat(q: np.ndarray) -> np.ndarray:
    """R (3x3, or (..., 3, 3)) from unit quaternions (..., 4) = (w, x, y, z): v_world = R v_body."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def rot_from_euler(roll: Any, pitch: Any, yaw: Any) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (Fossen's ZYX convention), broadcasting."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    R = np.empty(np.broadcast(cr, cp, cy).shape + (3, 3))
    R[..., 0, 0] = cy * cp
    R[..., 0, 1] = cy * sp * sr - sy * cr
    R[..., 0, 2] = cy * sp * cr + sy * sr
    R[..., 1, 0] = sy * cp
    R[..., 1, 1] = sy * sp * sr + cy * cr
    R[..., 1, 2] = sy * sp * cr - cy * sr
    R[..., 2, 0] = -sp
    R[..., 2, 1] = cp * sr
    R[..., 2, 2] = cp * cr
    return R


def quat_from_euler(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(w, x, y, z) of Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])


def euler_from_rot(R: np.ndarray) -> tuple[Any, Any, Any]:
    """(roll, pitch, yaw) of R = Rz Ry Rx."""
    roll = np.arctan2(R[..., 2, 1], R[..., 2, 2])
    pitch = -np.arcsin(np.clip(R[..., 2, 0], -1.0, 1.0))
    yaw = np.arctan2(R[..., 1, 0], R[..., 0, 0])
    return roll, pitch, yaw


# --------------------------------------------------------------------- mount


@dataclass(frozen=True)
class Mount:
    """Where a sensor sits on the body: lever arm r (body frame, m) and its axes."""

    lever_arm_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position of the sensor in the body frame (FRD), m."""
    rpy_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Roll, pitch, yaw of the sensor frame relative to the body frame (ZYX), rad."""

    @property
    def r(self) -> np.ndarray:
        return np.asarray(self.lever_arm_m, dtype=float)

    @property
    def R_bs(self) -> np.ndarray:
        """Rotation sensor -> body: v_body = R_bs v_sensor."""
        return rot_from_euler(*self.rpy_rad)


# --------------------------------------------------------- truth from state


@dataclass
class Truth:
    """Vehicle truth as arrays (one sample, or n samples stacked on axis 0)."""

    position_ned_m: np.ndarray  # (..., 3)
    quaternion: np.ndarray  # (..., 4) w x y z, body -> NED
    velocity_body_mps: np.ndarray  # (..., 3) [u v w]
    angular_velocity_body_radps: np.ndarray  # (..., 3) [p q r]
    acceleration_body_mps2: np.ndarray  # (..., 3) [du dv dw], from the dynamics
    angular_acceleration_body_radps2: np.ndarray  # (..., 3) [dp dq dr]
    water_density_kgpm3: np.ndarray | float = 0.0


def _v3(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z])


def truth_from_state(state) -> Truth:
    """A moonpool.v1.VehicleState as arrays."""
    q = state.orientation
    quat = np.array([q.w, q.x, q.y, q.z])
    if not np.any(quat):
        quat = np.array([1.0, 0.0, 0.0, 0.0])
    return Truth(_v3(state.position_ned_m), quat, _v3(state.linear_velocity_body_mps),
                 _v3(state.angular_velocity_body_radps), _v3(state.linear_acceleration_body_mps2),
                 _v3(state.angular_acceleration_body_radps2), state.water_density_kgpm3)


# ------------------------------------------------------------------- latency


class Latency:
    """Holds measurements for a fixed latency: ``push(t_sample, msg)`` then
    ``pop_ready(t_now)`` returns those with t_sample + latency <= t_now (oldest first).
    With zero latency a measurement is released at once."""

    def __init__(self, latency_ns: int) -> None:
        if latency_ns < 0:
            raise ValueError("latency must be >= 0")
        self.latency_ns = int(latency_ns)
        self._queue: deque = deque()

    def push(self, t_sample_ns: int, item: Any) -> None:
        self._queue.append((t_sample_ns + self.latency_ns, item))

    def pop_ready(self, t_now_ns: int) -> list:
        out = []
        while self._queue and self._queue[0][0] <= t_now_ns:
            out.append(self._queue.popleft()[1])
        return out


# ------------------------------------------------------------------- validity


def set_valid(validity: common_pb2.Validity) -> None:
    validity.valid = True
    validity.reason = common_pb2.REFUSAL_REASON_UNSPECIFIED
    validity.detail = ""


def refuse(validity: common_pb2.Validity, reason: int, detail: str) -> None:
    """Mark a measurement refused, with the machine-readable reason and a sentence."""
    validity.valid = False
    validity.reason = reason
    validity.detail = detail


# ---------------------------------------------------------- sensor component


class SensorComponent(Component):
    """What the sensor components share: the sample index, keyed noise and latency.

    Call order (on top of Component's): ``configure`` sets ``self.latency_ns``;
    ``initialize`` resets the sample index k to 0 and creates ``self.noise``; each
    ``step`` measures sample k (``measure(k, t_ns, inputs)``, stamped t_ns), holds it
    for the latency and publishes on ``output_port`` the newest sample that is due.
    """

    output_port: str = ""
    """Name of the output port the measurement is published on."""
    latency_ns: int = 0

    def initialize(self, start_time_ns: int):
        self.k = 0
        self.noise = KeyedNoise(self.seed, self.name)
        self.latency = Latency(self.latency_ns)
        return None

    def measure(self, k: int, t_ns: int, inputs: Any):
        """The measurement message of sample k taken at t_ns."""
        raise NotImplementedError

    def step(self, t_ns, dt_ns, inputs):
        k, self.k = self.k, self.k + 1
        self.latency.push(t_ns, self.measure(k, t_ns, inputs))
        ready = self.latency.pop_ready(t_ns)
        return {self.output_port: ready[-1]} if ready else None
