"""CTD: temperature, practical salinity, pressure and sound speed at the sensor point
from the water column (docs/sensors.md (ctd)).

The sensor point is p_s = p + R_wb r, its depth d_s = p_s,z. Truth comes from the
scene's (or the ``water`` table's) ``WaterColumn`` (TEOS-10 through gsw): T(d_s),
S(d_s), p(d_s) absolute and c(d_s). Measurement, sample k (keyed normals, one channel
each: ``temperature``, ``salinity``, ``pressure``)::

    T_m = T + b_T + σ_T n_T,   S_m = S + b_S + σ_S n_S,   p_m = p + b_p + σ_p n_p
    c_m = gsw.sound_speed(SA(S_m, p_m), CT(T_m, p_m), p_m)     (from the measured values,
                                                               as the instrument does)

with SA = gsw.SA_from_SP(S_m, p_m - p_atm, lon, lat), CT = gsw.CT_from_t(SA, T_m, ·) and
pressures in dbar for gsw. Refused above the surface (ABOVE_SURFACE).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gsw
import numpy as np

from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.noise import KeyedNoise
from .acoustic import WATER_DOC, configure_common, surroundings
from ..sdk.frames import rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state

VALID = 0
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
P_ATM_PA = 101_325.0
PA_PER_DBAR = 1.0e4


@dataclass(frozen=True)
class CtdParams:
    """Noise and bias of the three CTD channels."""

    temperature_noise_c: float = 0.002
    """σ_T, °C."""
    temperature_bias_c: float = 0.0
    """b_T, °C."""
    salinity_noise_psu: float = 0.003
    """σ_S (practical salinity)."""
    salinity_bias_psu: float = 0.0
    """b_S."""
    pressure_noise_pa: float = 100.0
    """σ_p, Pa (1 cm of water: ~0.01 % of a 1,000 dbar full scale)."""
    pressure_bias_pa: float = 0.0
    """b_p, Pa."""

    def check(self) -> None:
        for f in ("temperature_noise_c", "salinity_noise_psu", "pressure_noise_pa"):
            if not getattr(self, f) >= 0:
                raise ValueError(f"{f} must be >= 0")
        for f in ("temperature_bias_c", "salinity_bias_psu", "pressure_bias_pa"):
            if not np.isfinite(getattr(self, f)):
                raise ValueError(f"{f} must be finite")


def sound_speed_from_tsp(temperature_c, salinity_psu, pressure_pa, longitude_deg,
                         latitude_deg) -> np.ndarray:
    """TEOS-10 sound speed (m/s) from in-situ T (°C), practical salinity and absolute
    pressure (Pa)."""
    p_dbar = (np.asarray(pressure_pa, dtype=float) - P_ATM_PA) / PA_PER_DBAR
    sa = gsw.SA_from_SP(salinity_psu, p_dbar, longitude_deg, latitude_deg)
    ct = gsw.CT_from_t(sa, temperature_c, p_dbar)
    return np.asarray(gsw.sound_speed(sa, ct, p_dbar), dtype=float)


@dataclass
class CtdBatch:
    """n CTD samples; measured values NaN where refused."""

    index: np.ndarray
    reason: np.ndarray
    temperature_c: np.ndarray
    salinity_psu: np.ndarray
    pressure_pa: np.ndarray
    sound_speed_mps: np.ndarray
    true_temperature_c: np.ndarray
    true_salinity_psu: np.ndarray
    true_pressure_pa: np.ndarray
    true_sound_speed_mps: np.ndarray
    true_depth_m: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID

    def fill(self, i: int, msg: acoustics_pb2.Ctd) -> acoustics_pb2.Ctd:
        for f in ("temperature_c", "salinity_psu", "pressure_pa", "sound_speed_mps", "depth_m"):
            setattr(msg, "true_" + f, float(getattr(self, "true_" + f)[i]))
        if self.reason[i] != VALID:
            refuse(msg.validity, int(self.reason[i]),
                   f"sensor {-self.true_depth_m[i]:.3f} m above the surface")
            return msg
        set_valid(msg.validity)
        for f in ("temperature_c", "salinity_psu", "pressure_pa", "sound_speed_mps"):
            setattr(msg, f, float(getattr(self, f)[i]))
        return msg


class CtdModel:
    """Pure vectorised CTD of one instance (seed, name) in a water column."""

    def __init__(self, params: CtdParams, water: Any, mount: Mount = Mount(), seed: int = 0,
                 name: str = "ctd") -> None:
        params.check()
        self.params, self.water, self.mount = params, water, mount
        self.noise = KeyedNoise(seed, name)

    def measure(self, position_ned_m, quaternion, first: int = 0) -> CtdBatch:
        """Samples first..first+n-1 from n positions (n, 3) and quaternions (n, 4)."""
        p, w = self.params, self.water
        pos = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
        n = pos.shape[0]
        R_wb = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
        depth = (pos + R_wb @ self.mount.r)[:, 2]
        d = np.maximum(depth, 0.0)
        T, S = np.asarray(w.temperature_c(d), float), np.asarray(w.salinity_psu(d), float)
        P, C = np.asarray(w.pressure_pa(d), float), np.asarray(w.sound_speed_mps(d), float)
        Tm = T + p.temperature_bias_c + p.temperature_noise_c * self.noise.normal_range(
            first, n, "temperature")[:, 0]
        Sm = S + p.salinity_bias_psu + p.salinity_noise_psu * self.noise.normal_range(
            first, n, "salinity")[:, 0]
        Pm = P + p.pressure_bias_pa + p.pressure_noise_pa * self.noise.normal_range(
            first, n, "pressure")[:, 0]
        Cm = sound_speed_from_tsp(Tm, np.maximum(Sm, 0.0), Pm, w.longitude_deg, w.latitude_deg)
        reason = np.where(depth < 0, ABOVE_SURFACE, VALID)
        ok = reason == VALID

        def m(x):
            return np.where(ok, x, np.nan)

        return CtdBatch(np.arange(first, first + n), reason, m(Tm), m(Sm), m(Pm), m(Cm),
                        T, S, P, C, depth)


class CtdSensor(SensorComponent):
    """CTD: temperature, practical salinity, absolute pressure and the TEOS-10 sound
    speed at the sensor point, from the scene's water column (or the ``water`` table),
    with keyed noise and bias; refused above the surface."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("ctd", acoustics_pb2.Ctd, "temperature, salinity, pressure, sound speed"),)
    output_port = "ctd"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML) whose water column is sampled; "
                                         "empty: the `water` table")
        water: dict = param({}, WATER_DOC)
        temperature_noise_c: float = param(0.002, "temperature noise (1 sigma)", unit="degC")
        temperature_bias_c: float = param(0.0, "temperature bias", unit="degC")
        salinity_noise_psu: float = param(0.003, "practical salinity noise (1 sigma)", unit="1")
        salinity_bias_psu: float = param(0.0, "practical salinity bias", unit="1")
        pressure_noise_pa: float = param(100.0, "pressure noise (1 sigma)", unit="Pa")
        pressure_bias_pa: float = param(0.0, "pressure bias", unit="Pa")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes (no effect on the readings)", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        self.sensor_params = CtdParams(params.temperature_noise_c, params.temperature_bias_c,
                                       params.salinity_noise_psu, params.salinity_bias_psu,
                                       params.pressure_noise_pa, params.pressure_bias_pa)
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, 0.0, params.water, self.name)
        self.model = CtdModel(self.sensor_params, env.water, self.mount, self.seed, self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.Ctd(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        return self.model.measure(truth.position_ned_m, truth.quaternion, k).fill(0, msg)
