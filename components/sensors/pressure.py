"""Absolute pressure sensor (docs/sensors.md (pressure)).

The sensor sits at the lever arm r of the body; its depth is d_s = d + (R_wb r)_z and
it measures the absolute pressure of the water column there: the FMU's (rho_surface and
the pycnocline) or, with ``scene``, the scene's TEOS-10 column (the one the FMU uses
with its ``water_column``, components/world/environment.py)::

    p_true = p_atm + g ∫0^d_s rho(z) dz            (WaterColumn)
    p      = Q(p_true + b + sigma_p n_k),   n_k ~ N(0, 1) keyed on (seed, name, "pressure", k)

with Q the quantization to ``resolution_pa`` (round to nearest; 0: none). Refused
above the surface (d_s < 0, REFUSAL_REASON_ABOVE_SURFACE) and beyond the full scale
(p_true > full_scale_pa when full_scale_pa > 0, REFUSAL_REASON_SATURATED).

``PressureModel`` is the pure vectorised model (arrays of truth in, arrays out);
``PressureSensor`` the component wrapping it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import rot_from_quat, rot_rows
from ..sdk.noise import KeyedNoise
from .common import (G, P_ATM, Mount, SensorComponent, floats3, quaternion_of, refuse, rint,
                     set_valid)
from .environment import WaterColumn

VALID = 0
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
SATURATED = common_pb2.REFUSAL_REASON_SATURATED


@dataclass(frozen=True)
class PressureParams:
    """Error model of the pressure sensor (the water column is a separate WaterColumn)."""

    noise_pa: float = 50.0
    """White noise standard deviation sigma_p, Pa."""
    bias_pa: float = 0.0
    """Constant bias b, Pa."""
    resolution_pa: float = 1.0
    """Quantization step (LSB), Pa; 0: no quantization."""
    full_scale_pa: float = 0.0
    """Largest absolute pressure the sensor measures, Pa; 0: unlimited."""

    def check(self) -> None:
        for name in ("noise_pa", "resolution_pa", "full_scale_pa"):
            v = getattr(self, name)
            if not (v >= 0 and np.isfinite(v)):
                raise ValueError(f"{name} must be finite and >= 0, got {v}")
        if not np.isfinite(self.bias_pa):
            raise ValueError(f"bias_pa must be finite, got {self.bias_pa}")


@dataclass
class PressureBatch:
    """n pressure samples (arrays on axis 0)."""

    index: np.ndarray  # (n,) sample indices
    reason: np.ndarray  # (n,) 0 (valid) or a REFUSAL_REASON_*
    pressure_pa: np.ndarray  # (n,) measured; NaN where refused
    true_pressure_pa: np.ndarray  # (n,)
    true_depth_m: np.ndarray  # (n,) depth of the sensor point

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID

    def fill(self, i: int, msg: sensors_pb2.Pressure, water: WaterColumn,
             params: PressureParams) -> sensors_pb2.Pressure:
        """Write sample i into msg (validity, value, truth)."""
        return fill(msg, int(self.reason[i]), float(self.pressure_pa[i]),
                    float(self.true_pressure_pa[i]), float(self.true_depth_m[i]), params)


def fill(msg: sensors_pb2.Pressure, reason: int, value: float, true_p: float, depth: float,
         params: PressureParams) -> sensors_pb2.Pressure:
    """Write one sample into msg (validity, value, truth)."""
    msg.true_pressure_pa = true_p
    msg.true_depth_m = depth
    if reason == VALID:
        msg.pressure_pa = value
        set_valid(msg.validity)
    elif reason == ABOVE_SURFACE:
        refuse(msg.validity, reason, f"sensor {-depth:.3f} m above the surface")
    else:
        refuse(msg.validity, reason, f"true pressure {true_p:.1f} Pa beyond the "
                                     f"full scale {params.full_scale_pa:.1f} Pa")
    return msg


class PressureModel:
    """Pure vectorised pressure model of one sensor instance (seed, name)."""

    def __init__(self, params: PressureParams = PressureParams(),
                 water: WaterColumn = WaterColumn(), mount: Mount = Mount(),
                 seed: int = 0, name: str = "pressure") -> None:
        params.check()
        self.params, self.water, self.mount = params, water, mount
        self.noise = KeyedNoise(seed, name, ahead=64)  # draws made 64 samples ahead: same values

    def sensor_depth(self, position_ned_m, quaternion) -> np.ndarray:
        """d_s = d + (R_wb r)_z for n samples."""
        pos = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
        R = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
        r = self.mount.r
        return pos[:, 2] + (R[:, 2, 0] * r[0] + R[:, 2, 1] * r[1] + R[:, 2, 2] * r[2])

    def measure(self, position_ned_m, quaternion, first: int = 0) -> PressureBatch:
        """Samples first .. first+n-1 from n positions (n, 3) and quaternions (n, 4)
        (w, x, y, z, body -> NED). Identical whether called once for n samples or n
        times for one."""
        p = self.params
        depth = self.sensor_depth(position_ned_m, quaternion)
        n = depth.shape[0]
        true_p = np.asarray(self.water.pressure(depth), dtype=float)
        z = self.noise.normal_range(first, n, "pressure")[:, 0]
        value = true_p + p.bias_pa + p.noise_pa * z
        if p.resolution_pa > 0:
            value = np.round(value / p.resolution_pa) * p.resolution_pa
        reason = np.zeros(n, dtype=int)
        if p.full_scale_pa > 0:
            reason[true_p > p.full_scale_pa] = SATURATED
        reason[depth < 0] = ABOVE_SURFACE
        value = np.where(reason == VALID, value, np.nan)
        return PressureBatch(np.arange(first, first + n), reason, value, true_p, depth)

    def measure1(self, position_ned_m, quaternion, k: int) -> tuple[int, float, float, float]:
        """:meth:`measure` of one sample k (a sensor's step) in Python floats: the same
        operations in the same order, so the same bits (``test_measure1_equals_measure``).
        position_ned_m, quaternion: sequences of 3 and 4 floats. Returns (reason,
        measured Pa (NaN where refused), true Pa, sensor depth m)."""
        p = self.params
        R = rot_rows(quaternion[0], quaternion[1], quaternion[2], quaternion[3])[2]
        r = self.mount.lever_arm_m
        depth = position_ned_m[2] + (R[0] * r[0] + R[1] * r[1] + R[2] * r[2])
        true_p = float(self.water.pressure(np.array([depth]))[0])
        value = true_p + p.bias_pa + p.noise_pa * float(self.noise.normals4(k, "pressure")[0])
        if p.resolution_pa > 0:
            value = rint(value / p.resolution_pa) * p.resolution_pa
        reason = VALID
        if p.full_scale_pa > 0 and true_p > p.full_scale_pa:
            reason = SATURATED
        if depth < 0:
            reason = ABOVE_SURFACE
        return reason, value if reason == VALID else math.nan, true_p, depth


_FMU_COLUMN = (1025.0, 0.0, 0.0, 0.0, G, P_ATM)
"""The defaults of the FMU-column parameters (any other value beside `scene` is refused)."""


def _latency_ns(latency_s: float) -> int:
    return int(round(latency_s * 1e9))


class PressureSensor(SensorComponent):
    """Absolute pressure at the sensor point through the FMU's density profile
    (p_atm + g ∫rho dz), with bias, white noise and quantization; refused above the
    surface and beyond the full scale."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("pressure", sensors_pb2.Pressure, "absolute pressure, Pa"),)
    output_port = "pressure"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML) whose water column (TEOS-10) the "
                                         "sensor is in; empty: the FMU's column below")
        noise_pa: float = param(50.0, "white noise standard deviation", unit="Pa")
        bias_pa: float = param(0.0, "constant bias", unit="Pa")
        resolution_pa: float = param(1.0, "quantization step (0: none)", unit="Pa")
        full_scale_pa: float = param(0.0, "largest measurable absolute pressure (0: unlimited)",
                                     unit="Pa")
        rho_surface: float = param(1025.0, "water density at the surface (FMU name)", unit="kg/m^3")
        pycnocline_depth: float = param(0.0, "depth of the centre of the density ramp", unit="m")
        pycnocline_width: float = param(0.0, "thickness of the density ramp (0: a step)", unit="m")
        pycnocline_delta_rho: float = param(0.0, "density increase across the ramp",
                                            unit="kg/m^3")
        g: float = param(G, "gravity", unit="m/s^2")
        atmospheric_pa: float = param(P_ATM, "pressure at the surface", unit="Pa")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX)", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """The mount, the latency, the water column and the sensor's error figures."""
        fail = None
        if len(params.mount_xyz_m) != 3 or len(params.mount_rpy_rad) != 3:
            fail = "mount_xyz_m and mount_rpy_rad take 3 values each"
        elif params.latency_s < 0:
            fail = "latency_s must be >= 0"
        elif not (params.rho_surface > 0 and params.pycnocline_width >= 0 and params.g >= 0):
            fail = "rho_surface must be > 0, pycnocline_width and g >= 0"
        elif params.scene is not None and (
                params.rho_surface, params.pycnocline_depth, params.pycnocline_width,
                params.pycnocline_delta_rho, params.g, params.atmospheric_pa) != _FMU_COLUMN:
            fail = ("both `scene` and the FMU's water column (rho_surface, pycnocline_*, g, "
                    "atmospheric_pa) are given: two water columns")
        if fail:
            raise ParameterError(fail, fix="correct the value in the rig (with `scene`, the "
                                           "scene's water column is used: drop the others)")
        if params.scene is not None:
            from .acoustic import check_scene_parameters

            check_scene_parameters(params)
        try:
            PressureParams(params.noise_pa, params.bias_pa, params.resolution_pa,
                           params.full_scale_pa).check()
        except ValueError as exc:
            raise ParameterError(str(exc), fix="use a value >= 0") from None

    def configure(self, params: Parameters) -> None:
        self.checked(params)
        self.sensor_params = PressureParams(params.noise_pa, params.bias_pa,
                                            params.resolution_pa, params.full_scale_pa)
        if params.scene is not None:
            from .acoustic import load_scene

            self.water = load_scene(str(params.scene), self.name).environment
        else:
            self.water = WaterColumn(params.rho_surface, params.pycnocline_depth,
                                     params.pycnocline_width, params.pycnocline_delta_rho,
                                     params.g, params.atmospheric_pa)
        self.mount = Mount(tuple(params.mount_xyz_m), tuple(params.mount_rpy_rad))
        self.model = PressureModel(self.sensor_params, self.water, self.mount, self.seed, self.name)
        self.latency_ns = _latency_ns(params.latency_s)

    def measure(self, k: int, t_ns: int, inputs):
        msg = sensors_pb2.Pressure(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
        else:
            reason, value, true_p, depth = self.model.measure1(
                floats3(state.position_ned_m), quaternion_of(state), k)
            fill(msg, reason, value, true_p, depth, self.sensor_params)
        return msg
