"""Pieces every sensor shares: the mount pose, truth extraction from a VehicleState,
latency, and validity.

Conventions (``moonpool.components.sdk.frames``, where the rotations live): NED world,
FRD body, quaternions (w, x, y, z) rotate body vectors into the world; a sensor frame
is given by its mount: lever arm r (body frame, m) and rotation R_bs (sensor -> body)
from roll/pitch/yaw (ZYX, rad).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from moonpool.v1 import common_pb2

from ..sdk.component import Component
from ..sdk.frames import rot_from_euler  # the mount rotation
from ..sdk.noise import KeyedNoise

G = 9.80665  # standard gravity, m/s^2
P_ATM = 101_325.0  # standard atmosphere, Pa


# --------------------------------------------------------------------- mount


@dataclass(frozen=True)
class Mount:
    """Where a sensor sits on the body: lever arm r (body frame, m) and its axes."""

    lever_arm_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position of the sensor in the body frame (FRD), m."""
    rpy_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Roll, pitch, yaw of the sensor frame relative to the body frame (ZYX), rad."""

    @cached_property
    def r(self) -> np.ndarray:
        """The lever arm as an array (read-only: made once per mount)."""
        return _read_only(np.asarray(self.lever_arm_m, dtype=float))

    @cached_property
    def R_bs(self) -> np.ndarray:
        """Rotation sensor -> body: v_body = R_bs v_sensor (read-only: made once per
        mount, not at every step)."""
        return _read_only(rot_from_euler(*self.rpy_rad))


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


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


def floats3(v) -> tuple[float, float, float]:
    """A Vector3 message as three Python floats (a sensor's per-step arithmetic)."""
    return v.x, v.y, v.z


def quaternion_of(state) -> tuple[float, float, float, float]:
    """The state's orientation (w, x, y, z) as Python floats; an unset (all-zero)
    quaternion is the identity."""
    q = state.orientation
    quat = (q.w, q.x, q.y, q.z)
    return quat if any(quat) else (1.0, 0.0, 0.0, 0.0)


def truth_from_state(state) -> Truth:
    """A moonpool.v1.VehicleState as arrays."""
    quat = np.array(quaternion_of(state))
    return Truth(_v3(state.position_ned_m), quat, _v3(state.linear_velocity_body_mps),
                 _v3(state.angular_velocity_body_radps), _v3(state.linear_acceleration_body_mps2),
                 _v3(state.angular_acceleration_body_radps2), state.water_density_kgpm3)


def rint(v: float) -> float:
    """``np.rint`` (``np.round``) of one Python float: round half to even, a zero keeps
    its sign (a -0.0 is another message on the wire), inf and NaN pass. For a
    quantization step computed in floats with the same bits as the vectorised model."""
    if v != v or v in (math.inf, -math.inf):
        return v
    r = float(round(v))
    return r if r else math.copysign(0.0, v)


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


def extend_packed(msg, field: str, values) -> None:
    """Append an array to a repeated numeric field of ``msg`` at C speed: the values are
    written as the field's packed wire encoding and merged (``MergeFromString``), the
    same content as ``getattr(msg, field).extend(...)`` (so the same serialization).

    float / double fields: little-endian float32 / float64; int32 / uint32 fields whose
    values are all in [0, 127] (one-byte varints, e.g. class ids); anything else falls
    back to ``extend(values.tolist())``."""
    from google.protobuf.descriptor import FieldDescriptor as F

    fd = msg.DESCRIPTOR.fields_by_name[field]
    arr = np.asarray(values).ravel()
    if arr.size == 0:
        return
    if fd.type == F.TYPE_FLOAT:
        payload = arr.astype("<f4").tobytes()
    elif fd.type == F.TYPE_DOUBLE:
        payload = arr.astype("<f8").tobytes()
    elif fd.type in (F.TYPE_INT32, F.TYPE_UINT32) and arr.min() >= 0 and arr.max() <= 127:
        payload = arr.astype(np.uint8).tobytes()
    else:
        getattr(msg, field).extend(arr.tolist())
        return
    msg.MergeFromString(_varint((fd.number << 3) | 2) + _varint(len(payload)) + payload)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
