"""Acoustic Doppler current profiler (docs/sensors.md (adcp)).

A Janus ADCP: beam i leaves along b_i = (sin a cos φ_i, sin a sin φ_i, ±cos a) in the
sensor frame (+ looking down the sensor z axis, - looking up). Range bin k is centred
at the distance D_k = blanking + (k + ½)·bin_size along the instrument axis, i.e. at
the slant distance D_k / cos a on each beam, at the point q_ik = p_s + (D_k / cos a) R_ws b_i.

The water velocity relative to the instrument at q_ik, sensor frame, is
w_ik = R_wsᵀ c(q_ik,z) - v_s (c: the water column's current at that depth;
v_s = R_bsᵀ (v + ω × r) the instrument's velocity). Each beam measures

    u_ik = b_i · w_ik + σ_v n_ik        (positive away from the transducer; keyed normals,
                                         channel "bin/k" for bin k, 4 beams per channel)

and bin k's velocity is the least-squares solution over its valid beams,
ŵ_k = (HᵀH)⁻¹ Hᵀ u (H: rows b_i; at least 3 beams). Truth: w on the axis at D_k.

**Boundary.** Each beam and the axis are cast against the scene (or the flat seabed)
and, looking up, the sea surface z = 0 (closed form); t_i is beam i's first boundary.
A bin is refused on beam i when its slant distance D_k / cos a exceeds t_i (beyond the
seabed / surface). With ``side_lobe_rejection`` (default) also when it exceeds the
nearest boundary t_near = min(t_axis, t_i): the side lobes' echo from the nearest
surface arrives then and swamps the bin (for a flat seabed at axis distance H: bins
beyond D = H cos a are lost, the classic (1 - cos a) rule). A bin with fewer than 3
beams left is refused (OUT_OF_RANGE); the profile is refused when no bin is valid or
the instrument is above the surface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.noise import KeyedNoise
from .acoustic import WATER_DOC, configure_common, draw, surroundings
from ..sdk.frames import cross, rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state

VALID = 0
OUT_OF_RANGE = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE


@dataclass(frozen=True)
class AdcpParams:
    """Geometry, bins and noise of an ADCP."""

    beam_angle_deg: float = 20.0
    """Beam angle a from the instrument axis, deg."""
    beam_azimuths_deg: tuple[float, ...] = (45.0, 135.0, 225.0, 315.0)
    """Beam azimuths φ_i about the sensor z axis from x, deg (>= 3)."""
    upward: bool = False
    """Looking up (towards the surface) instead of down."""
    bin_count: int = 20
    """Number of range bins."""
    bin_size_m: float = 2.0
    """Bin length along the axis, m."""
    blanking_m: float = 1.0
    """Blanking distance along the axis before the first bin, m."""
    velocity_noise_mps: float = 0.01
    """Along-beam velocity noise σ_v per bin, m/s."""
    side_lobe_rejection: bool = True
    """Refuse bins beyond the nearest boundary's side-lobe echo."""

    def check(self) -> None:
        if not 0 < self.beam_angle_deg < 90:
            raise ValueError("beam_angle_deg must be in (0, 90)")
        if len(self.beam_azimuths_deg) < 3:
            raise ValueError("at least 3 beam azimuths are needed")
        if self.bin_count < 1 or not self.bin_size_m > 0 or not self.blanking_m >= 0:
            raise ValueError("need bin_count >= 1, bin_size_m > 0, blanking_m >= 0")
        if not self.velocity_noise_mps >= 0:
            raise ValueError("velocity_noise_mps must be >= 0")

    @property
    def beams(self) -> np.ndarray:
        a = math.radians(self.beam_angle_deg)
        phi = np.radians(np.asarray(self.beam_azimuths_deg, dtype=float))
        z = -math.cos(a) if self.upward else math.cos(a)
        return np.stack([np.sin(a) * np.cos(phi), np.sin(a) * np.sin(phi),
                         np.full_like(phi, z)], axis=1)

    @property
    def axis(self) -> np.ndarray:
        return np.array([0.0, 0.0, -1.0 if self.upward else 1.0])

    @property
    def distances_m(self) -> np.ndarray:
        """Bin centres D_k along the axis, m."""
        return self.blanking_m + (np.arange(self.bin_count) + 0.5) * self.bin_size_m


@dataclass
class AdcpSample:
    """One profile: nk bins × nb beams."""

    index: int
    reason: int
    bin_reason: np.ndarray  # (nk,)
    beam_ok: np.ndarray  # (nk, nb)
    velocity_mps: np.ndarray  # (nk, 3) nan where refused
    beam_velocity_mps: np.ndarray  # (nk, nb) nan where the beam is refused
    true_velocity_mps: np.ndarray  # (nk, 3)
    true_depth_m: np.ndarray  # (nk,)
    boundary_m: np.ndarray  # (nb,) t_i
    boundary_near_m: float
    sensor_depth_m: float
    params: AdcpParams

    def fill(self, msg: acoustics_pb2.Adcp) -> acoustics_pb2.Adcp:
        p = self.params
        msg.upward, msg.bin_size_m, msg.blanking_m = p.upward, p.bin_size_m, p.blanking_m
        msg.true_boundary_range_m = float(np.min(self.boundary_m))
        ca = math.cos(math.radians(p.beam_angle_deg))
        for k, D in enumerate(p.distances_m):
            b = msg.bins.add()
            b.distance_m = float(D)
            tv = self.true_velocity_mps[k]
            b.true_velocity_mps.x, b.true_velocity_mps.y, b.true_velocity_mps.z = map(float, tv)
            b.true_depth_m = float(self.true_depth_m[k])
            r = int(self.bin_reason[k])
            if r == VALID:
                set_valid(b.validity)
                v = self.velocity_mps[k]
                b.velocity_mps.x, b.velocity_mps.y, b.velocity_mps.z = map(float, v)
                b.beam_velocity_mps.extend(float(u) for u in self.beam_velocity_mps[k])
            elif r == ABOVE_SURFACE:
                refuse(b.validity, r, "instrument above the surface")
            else:
                where = "surface" if p.upward else "seabed"
                limit = self.boundary_near_m if p.side_lobe_rejection else float(np.min(self.boundary_m))
                refuse(b.validity, r, f"bin at {D / ca:.2f} m slant range beyond the {where} or its "
                                      f"side-lobe echo ({int(self.beam_ok[k].sum())} beams left; "
                                      f"boundary {limit:.2f} m)")
        if self.reason == VALID:
            set_valid(msg.validity)
        elif self.reason == ABOVE_SURFACE:
            refuse(msg.validity, self.reason, f"instrument {-self.sensor_depth_m:.3f} m above "
                                              "the surface")
        else:
            refuse(msg.validity, self.reason, f"no valid bin of {p.bin_count}")
        return msg


class AdcpModel:
    """Pure ADCP of one instance (seed, name) against a ray engine and a water column."""

    def __init__(self, params: AdcpParams, engine: Any, water: Any, mount: Mount = Mount(),
                 seed: int = 0, name: str = "adcp") -> None:
        params.check()
        self.params, self.engine, self.water, self.mount = params, engine, water, mount
        self.noise = KeyedNoise(seed, name)
        self.B = params.beams

    def boundaries(self, p_s: np.ndarray, dirs: np.ndarray, reach: float) -> np.ndarray:
        """First boundary along each direction (m, inf: none within reach)."""
        t = np.asarray(self.engine.cast(p_s, dirs, reach).distance_m, dtype=float).copy()
        if self.params.upward:
            with np.errstate(divide="ignore", invalid="ignore"):
                ts = np.where(dirs[:, 2] < 0, -p_s[2] / dirs[:, 2], np.inf)
            t = np.minimum(t, ts)
        return t

    def measure(self, position_ned_m, quaternion, velocity_body_mps=(0.0, 0.0, 0.0),
                angular_velocity_body_radps=(0.0, 0.0, 0.0), k: int = 0) -> AdcpSample:
        """Profile k from one state (NED position, quaternion, body velocities)."""
        p, B = self.params, self.B
        nb, nk = B.shape[0], p.bin_count
        R_wb = rot_from_quat(np.asarray(quaternion, dtype=float))
        R_ws = R_wb @ self.mount.R_bs
        r = self.mount.r
        p_s = np.asarray(position_ned_m, dtype=float) + R_wb @ r
        v_body = np.asarray(velocity_body_mps, dtype=float) + cross(
            np.asarray(angular_velocity_body_radps, dtype=float), r)
        v_s = self.mount.R_bs.T @ v_body
        ca = math.cos(math.radians(p.beam_angle_deg))
        D = p.distances_m
        reach = 1.5 * (D[-1] + p.bin_size_m) / ca
        dirs = np.vstack([(R_ws @ B.T).T, R_ws @ p.axis])
        t = self.boundaries(p_s, dirs, reach)
        t_beam, t_near = t[:nb], float(np.min(t))
        slant = D / ca  # (nk,)
        beam_ok = slant[:, None] <= t_beam[None, :]
        if p.side_lobe_rejection:
            beam_ok &= (slant <= t_near)[:, None]
        q = p_s + slant[:, None, None] * (R_ws @ B.T).T[None, :, :]  # (nk, nb, 3)
        cur = self.water.current_ned_mps(np.maximum(q[..., 2], 0.0).ravel()).reshape(nk, nb, 3)
        w = np.einsum("ji,knj->kni", R_ws, cur) - v_s  # sensor frame, (nk, nb, 3)
        u_true = np.einsum("nj,knj->kn", B, w)
        z = np.vstack([draw(self.noise, k, 1, f"bin/{j}", nb)[0] for j in range(nk)])
        u = u_true + p.velocity_noise_mps * z
        axis_pts = p_s + D[:, None] * (R_ws @ p.axis)[None, :]
        c_axis = self.water.current_ned_mps(np.maximum(axis_pts[:, 2], 0.0))
        true_w = c_axis @ R_ws - v_s  # R_wsᵀ c per row
        vel = np.full((nk, 3), np.nan)
        n_ok = beam_ok.sum(axis=1)
        for j in np.flatnonzero(n_ok >= 3):
            H = B[beam_ok[j]]
            vel[j] = np.linalg.lstsq(H, u[j, beam_ok[j]], rcond=None)[0]
        above = p_s[2] < 0
        bin_reason = np.where(n_ok >= 3, VALID, OUT_OF_RANGE)
        if above:
            bin_reason[:] = ABOVE_SURFACE
            vel[:] = np.nan
        ok = bin_reason == VALID
        reason = ABOVE_SURFACE if above else (VALID if ok.any() else OUT_OF_RANGE)
        return AdcpSample(k, reason, bin_reason, beam_ok, vel,
                          np.where(beam_ok & ok[:, None], u, np.nan), true_w, axis_pts[:, 2],
                          t_beam, t_near, float(p_s[2]), p)


class AdcpSensor(SensorComponent):
    """Janus ADCP: water velocity relative to the instrument in range bins (down- or
    up-looking) from the water column's current profile, blanking, keyed beam noise;
    bins beyond the seabed (or surface) and its side-lobe echo refused."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("adcp", acoustics_pb2.Adcp, "current profile in range bins, sensor frame"),)
    output_port = "adcp"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML): geometry and water column; empty: "
                                         "a flat seabed and the `water` table")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed without a scene (NED z)",
                                      unit="m")
        water: dict = param({}, WATER_DOC)
        beam_angle_deg: float = param(20.0, "beam angle from the instrument axis", unit="deg")
        beam_azimuths_deg: tuple[float, ...] = param((45.0, 135.0, 225.0, 315.0),
                                                     "beam azimuths about z from x", unit="deg")
        upward: bool = param(False, "look up towards the surface (else down)")
        bin_count: int = param(20, "number of range bins")
        bin_size_m: float = param(2.0, "bin length along the axis", unit="m")
        blanking_m: float = param(1.0, "blanking distance before the first bin", unit="m")
        velocity_noise_mps: float = param(0.01, "along-beam velocity noise per bin (1 sigma)",
                                          unit="m/s")
        side_lobe_rejection: bool = param(True, "refuse bins beyond the nearest boundary's "
                                                "side-lobe echo")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX)", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        self.sensor_params = AdcpParams(params.beam_angle_deg, tuple(params.beam_azimuths_deg),
                                        params.upward, params.bin_count, params.bin_size_m,
                                        params.blanking_m, params.velocity_noise_mps,
                                        params.side_lobe_rejection)
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, params.seabed_depth_m, params.water, self.name)
        self.model = AdcpModel(self.sensor_params, env.engine, env.water, self.mount, self.seed,
                               self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.Adcp(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        tr = truth_from_state(state)
        return self.model.measure(tr.position_ned_m, tr.quaternion, tr.velocity_body_mps,
                                  tr.angular_velocity_body_radps, k).fill(msg)
