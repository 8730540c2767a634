"""Long-baseline acoustic positioning (docs/sensors.md (lbl)).

Beacons sit at known NED positions b_i (a parameter). The vehicle's transducer at
p_s = p + R_wb r interrogates them; beacon i's one-way travel time is
t_i = |p_s - b_i| / c_h,i with c_h,i the harmonic mean of the water column between the
two depths (straight path, ``harmonic_mean_speed``). Measurement, sample k::

    t_m,i = t_i + σ_t n_i,k            (keyed normals, channel "travel_time", 4 beacons
                                        per channel)
    ρ_i   = c_nom t_m,i                (c_nom = 0: the true c_h,i, a perfectly compensated
                                        system)

**Fix** (Gauss–Newton on the m valid ranges): x minimises Σ (|x - b_i| - ρ_i)²,
started above the beacons (x0 = centroid, z0 = min b_z - mean ρ / 2: beacons on the
seabed have a mirror solution below them), steps halved while the cost grows, until
the step is below 1e-10 m (at most 50 iterations). With H the unit vectors
(x - b_i)/|x - b_i| at the fix and G = (HᵀH)⁻¹:

    PDOP = √tr G,   HDOP = √(G_nn + G_ee),   VDOP = √G_dd,   Cov = (c σ_t)² G

Refused per range: beyond max_range_m (OUT_OF_RANGE), random loss (DROPOUT), the path
blocked by the scene (NOT_DETECTED: a ray from the transducer towards the beacon hits
something more than ``occlusion_margin_m`` before it). The fix is refused with fewer
than 3 valid ranges (NO_LOCK), when Gauss–Newton does not converge or the geometry is
singular (NO_LOCK), and above the surface (ABOVE_SURFACE).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import acoustics_pb2, common_pb2, vehicle_pb2

from ..sdk.component import Port, param
from ..sdk.noise import KeyedNoise
from .acoustic import WATER_DOC, configure_common, draw, surroundings
from ..sdk.frames import rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .sound_rays import harmonic_mean_speed

VALID = 0
OUT_OF_RANGE = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
DROPOUT = common_pb2.REFUSAL_REASON_DROPOUT
NOT_DETECTED = common_pb2.REFUSAL_REASON_NOT_DETECTED
NO_LOCK = common_pb2.REFUSAL_REASON_NO_LOCK


@dataclass(frozen=True)
class LblParams:
    """Beacons, sound speed and errors of an LBL system."""

    beacons_ned_m: tuple[float, ...] = (-200.0, -200.0, 100.0, 200.0, -200.0, 100.0,
                                        0.0, 250.0, 100.0)
    """Beacon positions, NED, m: x, y, z of each beacon one after the other."""
    nominal_sound_speed_mps: float = 1500.0
    """c_nom the ranges are computed with, m/s (0: the true harmonic mean per path)."""
    travel_time_noise_s: float = 1e-4
    """σ_t, s (0.15 m at 1500 m/s)."""
    max_range_m: float = 3000.0
    """Longest slant range a beacon answers from, m."""
    dropout_probability: float = 0.0
    """Probability that a beacon's reply is lost."""
    occlusion_margin_m: float = 0.5
    """A scene hit closer than |p_s - b_i| - margin blocks the path, m."""

    def check(self) -> None:
        if len(self.beacons_ned_m) % 3 or len(self.beacons_ned_m) < 9:
            raise ValueError("beacons_ned_m takes x, y, z of at least 3 beacons "
                             f"(got {len(self.beacons_ned_m)} values)")
        if not np.all(np.isfinite(self.beacons_ned_m)):
            raise ValueError("beacons_ned_m must be finite")
        if not self.nominal_sound_speed_mps >= 0:
            raise ValueError("nominal_sound_speed_mps must be >= 0 (0: the true sound speed)")
        if not (self.travel_time_noise_s >= 0 and self.max_range_m > 0
                and self.occlusion_margin_m >= 0):
            raise ValueError("travel_time_noise_s, occlusion_margin_m must be >= 0 and "
                             "max_range_m > 0")
        if not 0 <= self.dropout_probability <= 1:
            raise ValueError("dropout_probability must be in [0, 1]")

    @property
    def beacons(self) -> np.ndarray:
        return np.asarray(self.beacons_ned_m, dtype=float).reshape(-1, 3)


@dataclass
class Fix:
    """A trilateration result (nan where not solved)."""

    position_ned_m: np.ndarray
    G: np.ndarray  # (3, 3) (HᵀH)⁻¹
    residual_m: float
    iterations: int
    ok: bool

    @property
    def pdop(self) -> float:
        return float(np.sqrt(np.trace(self.G)))

    @property
    def hdop(self) -> float:
        return float(np.sqrt(self.G[0, 0] + self.G[1, 1]))

    @property
    def vdop(self) -> float:
        return float(np.sqrt(self.G[2, 2]))


def trilaterate(beacons: np.ndarray, ranges: np.ndarray, x0: np.ndarray | None = None,
                max_iter: int = 50, tol_m: float = 1e-10) -> Fix:
    """Gauss–Newton least-squares position from ranges to m >= 3 beacons (module
    docstring); ``x0`` defaults to above the beacons."""
    b = np.asarray(beacons, dtype=float).reshape(-1, 3)
    rho = np.asarray(ranges, dtype=float).reshape(-1)
    nan = Fix(np.full(3, np.nan), np.full((3, 3), np.nan), np.nan, 0, False)
    if b.shape[0] < 3 or b.shape[0] != rho.shape[0]:
        return nan
    if x0 is None:
        x0 = b.mean(axis=0)
        x0[2] = b[:, 2].min() - 0.5 * rho.mean()
    x = np.asarray(x0, dtype=float).copy()

    def cost(x):
        return float(np.sum((np.linalg.norm(x - b, axis=1) - rho) ** 2))

    c = cost(x)
    it = 0
    converged = False
    for it in range(1, max_iter + 1):
        diff = x - b
        dist = np.linalg.norm(diff, axis=1)
        if np.any(dist == 0):
            return nan
        H = diff / dist[:, None]
        r = rho - dist
        try:
            dx = np.linalg.lstsq(H, r, rcond=None)[0]
        except np.linalg.LinAlgError:
            return nan
        step = 1.0
        while True:
            x_new = x + step * dx
            c_new = cost(x_new)
            if c_new <= c or step < 1e-6:
                break
            step *= 0.5
        x, c = x_new, c_new
        if np.linalg.norm(step * dx) < tol_m * max(1.0, float(np.abs(x).max())):
            converged = True
            break
    diff = x - b
    H = diff / np.linalg.norm(diff, axis=1)[:, None]
    HtH = H.T @ H
    if not converged or np.linalg.cond(HtH) > 1e12:
        return Fix(x, np.full((3, 3), np.nan), np.sqrt(c / len(rho)), it, False)
    return Fix(x, np.linalg.inv(HtH), float(np.sqrt(c / len(rho))), it, True)


@dataclass
class LblSample:
    """One LBL cycle (m beacons)."""

    index: int
    reason: int
    range_reason: np.ndarray  # (m,)
    range_m: np.ndarray  # (m,) nan where refused
    travel_time_s: np.ndarray
    true_range_m: np.ndarray
    true_position_ned_m: np.ndarray
    fix: Fix
    sigma_range_m: float
    blocked_at_m: np.ndarray  # (m,) scene hit distance (inf: clear)
    params: LblParams

    def fill(self, msg: acoustics_pb2.Lbl) -> acoustics_pb2.Lbl:
        p = self.params
        msg.true_position_ned_m.x, msg.true_position_ned_m.y, msg.true_position_ned_m.z = map(
            float, self.true_position_ned_m)
        for i, b in enumerate(p.beacons):
            r = msg.ranges.add()
            r.beacon = i
            r.beacon_ned_m.x, r.beacon_ned_m.y, r.beacon_ned_m.z = map(float, b)
            r.true_range_m = float(self.true_range_m[i])
            why = int(self.range_reason[i])
            if why == VALID:
                set_valid(r.validity)
                r.range_m = float(self.range_m[i])
                r.travel_time_s = float(self.travel_time_s[i])
            elif why == OUT_OF_RANGE:
                refuse(r.validity, why, f"slant range {self.true_range_m[i]:.1f} m > max range "
                                        f"{p.max_range_m:g} m")
            elif why == NOT_DETECTED:
                refuse(r.validity, why, f"path blocked by the scene {self.blocked_at_m[i]:.1f} m "
                                        "from the transducer")
            elif why == ABOVE_SURFACE:
                refuse(r.validity, why, "transducer above the surface")
            else:
                refuse(r.validity, why, "reply lost (random dropout)")
        if self.reason == VALID:
            set_valid(msg.validity)
            f = self.fix
            msg.position_ned_m.x, msg.position_ned_m.y, msg.position_ned_m.z = map(
                float, f.position_ned_m)
            msg.position_covariance.n = 3
            msg.position_covariance.values.extend(
                float(v) for v in (self.sigma_range_m ** 2 * f.G).ravel())
            msg.pdop, msg.hdop, msg.vdop = f.pdop, f.hdop, f.vdop
            msg.residual_m = f.residual_m
        elif self.reason == ABOVE_SURFACE:
            refuse(msg.validity, self.reason,
                   f"transducer {-self.true_position_ned_m[2]:.3f} m above the surface")
        else:
            n_ok = int(np.sum(self.range_reason == VALID))
            refuse(msg.validity, self.reason,
                   f"{n_ok} valid ranges, 3 needed" if n_ok < 3 else
                   "trilateration did not converge or the beacon geometry is singular")
        return msg


class LblModel:
    """Pure LBL model of one instance (seed, name): water column (sound speed) and an
    optional ray engine for occlusion."""

    def __init__(self, params: LblParams, water: Any, engine: Any = None, mount: Mount = Mount(),
                 seed: int = 0, name: str = "lbl") -> None:
        params.check()
        self.params, self.water, self.engine, self.mount = params, water, engine, mount
        self.noise = KeyedNoise(seed, name)
        self.B = params.beacons

    def measure(self, position_ned_m, quaternion, k: int = 0) -> LblSample:
        """Cycle k from one position (3,) and quaternion (4,)."""
        p, B = self.params, self.B
        m = B.shape[0]
        R_wb = rot_from_quat(np.asarray(quaternion, dtype=float))
        p_s = np.asarray(position_ned_m, dtype=float) + R_wb @ self.mount.r
        diff = B - p_s
        true_r = np.linalg.norm(diff, axis=1)
        c_h = harmonic_mean_speed(self.water.sound_speed_mps, np.full(m, p_s[2]), B[:, 2])
        t_true = true_r / c_h
        t_m = t_true + p.travel_time_noise_s * draw(self.noise, k, 1, "travel_time", m)[0]
        c_nom = c_h if p.nominal_sound_speed_mps == 0 else np.full(m, p.nominal_sound_speed_mps)
        rho = c_nom * t_m
        lost = draw(self.noise, k, 1, "dropout", m, uniform=True)[0] < p.dropout_probability
        blocked_at = np.full(m, np.inf)
        if self.engine is not None:
            reach = np.maximum(true_r - p.occlusion_margin_m, 0.0)
            look = reach > 0
            if look.any():
                hits = self.engine.cast(np.tile(p_s, (int(look.sum()), 1)), diff[look], reach[look])
                blocked_at[look] = hits.distance_m
        why = np.where(lost, DROPOUT, VALID)
        why[np.isfinite(blocked_at)] = NOT_DETECTED
        why[true_r > p.max_range_m] = OUT_OF_RANGE
        above = p_s[2] < 0
        if above:
            why[:] = ABOVE_SURFACE
        ok = why == VALID
        fix = trilaterate(B[ok], rho[ok]) if ok.sum() >= 3 else trilaterate(B[:0], rho[:0])
        reason = ABOVE_SURFACE if above else (VALID if fix.ok else NO_LOCK)
        sigma_r = float(np.mean(c_nom)) * p.travel_time_noise_s
        return LblSample(k, reason, why, np.where(ok, rho, np.nan), np.where(ok, t_m, np.nan),
                         true_r, p_s, fix, sigma_r, blocked_at, p)


class LblSensor(SensorComponent):
    """Long-baseline positioning: travel-time ranges to seabed beacons through the water
    column (occluded by the scene), keyed noise, and the Gauss–Newton trilateration fix
    with its covariance and DOP; refused with fewer than 3 valid ranges."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("lbl", acoustics_pb2.Lbl, "beacon ranges and the fix"),)
    output_port = "lbl"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML): water column and occlusion; empty: "
                                         "the `water` table, no occlusion")
        water: dict = param({}, WATER_DOC)
        beacons_ned_m: tuple[float, ...] = param(
            (-200.0, -200.0, 100.0, 200.0, -200.0, 100.0, 0.0, 250.0, 100.0),
            "beacon positions, NED: x, y, z of each beacon in turn", unit="m")
        nominal_sound_speed_mps: float = param(1500.0, "sound speed the ranges are computed "
                                                       "with (0: the true one per path)", unit="m/s")
        travel_time_noise_s: float = param(1e-4, "one-way travel-time noise (1 sigma)", unit="s")
        max_range_m: float = param(3000.0, "longest slant range a beacon answers from", unit="m")
        dropout_probability: float = param(0.0, "probability of losing a beacon's reply")
        occlusion_margin_m: float = param(0.5, "scene hits closer than range - margin block "
                                               "the path", unit="m")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "transducer lever arm, body "
                                                                "frame (FRD)", unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "transducer axes (unused: omnidirectional)",
                                                 unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        self.sensor_params = LblParams(tuple(params.beacons_ned_m), params.nominal_sound_speed_mps,
                                       params.travel_time_noise_s, params.max_range_m,
                                       params.dropout_probability, params.occlusion_margin_m)
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, 0.0, params.water, self.name)
        self.model = LblModel(self.sensor_params, env.water,
                              env.engine if env.scene is not None else None, self.mount,
                              self.seed, self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.Lbl(header=self.header(t_ns, "ned"))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        return self.model.measure(truth.position_ned_m, truth.quaternion, k).fill(msg)
