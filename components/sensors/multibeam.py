"""Multibeam echosounder on the scene (docs/sensors.md (multibeam)).

N beams fan out across track in the sensor's y–z plane: beam j leaves along
b_j = (0, sin φ_j, cos φ_j) (sensor frame; x along track, y starboard, z down), with
φ_j equally spaced over the swath [-swath/2, +swath/2]. Each beam is traced through a
**constant-gradient sound-speed profile** c(z) = c_ref + g (z - z_ref) as a circular
arc in the vertical plane of its launch direction (``sound_rays``: Snell's invariant
cos θ / c = const, curvature κ = g cos θ0 / c0, closed-form position and travel time).

Against the scene the arc is cast as ``arc_chords`` straight chords (one engine call
for all beams and chords); the first chord that hits is split into ``arc_refine``
sub-chords and cast again. The hit is the engine's point on the last chord, at arc
length s = s_start + f·Δs (f: the hit's fraction of that sub-chord); a chord lies
within the sagitta Δs² |κ| / 8 of the arc (16 × 16 chords over 250 m at g = 0.05 1/s:
~1e-5 m). Last, the arc itself is intersected with the plane of the hit triangle
(Newton on n·(P(s) - p_hit) = 0, three steps): exact for a planar surface, and within
the sagitta elsewhere. With g = 0 the beam is one straight ray.

The instrument measures the two-way travel time τ = 2 t(s) and reports the range with
its nominal sound speed, r = c_nom τ / 2, plus keyed noise (σ0 + σ1 r_true) n; the
truth is the hit point (NED), its label and instance, the straight-line distance
r_true = |p_hit - p_s| and the noise-free τ.

A beam is refused (OUT_OF_RANGE) when it meets nothing within CAST_MARGIN · max range
of arc, or its noise-free range lies outside [min_range_m, max_range_m]; DROPOUT on
random loss. The ping is refused when no beam is valid (the reason of the beams when
they share one, else NO_LOCK) or the transducer is above the surface.
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
from ..sdk.frames import rot_from_quat
from .common import Mount, SensorComponent, refuse, set_valid, truth_from_state
from .sound_rays import arc_curvature, arc_points, arc_time, launch_geometry

VALID = 0
OUT_OF_RANGE = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
ABOVE_SURFACE = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
DROPOUT = common_pb2.REFUSAL_REASON_DROPOUT
NO_LOCK = common_pb2.REFUSAL_REASON_NO_LOCK

CAST_MARGIN = 1.25
"""Arcs are traced to CAST_MARGIN · max_range_m of arc length."""


@dataclass(frozen=True)
class MultibeamParams:
    """Fan, range window, sound-speed profile and errors of a multibeam echosounder."""

    beam_count: int = 128
    """Number of beams N."""
    swath_deg: float = 120.0
    """Full swath angle, deg (beams at -swath/2 .. +swath/2 from the sensor z axis)."""
    min_range_m: float = 0.5
    """Shortest measurable range, m."""
    max_range_m: float = 200.0
    """Longest measurable range, m."""
    nominal_sound_speed_mps: float = 1500.0
    """Sound speed c_nom the instrument converts travel times with, m/s."""
    sound_speed_mps: float = 1500.0
    """True profile: c_ref at depth z_ref = 0, m/s (0: fitted to the water column)."""
    sound_speed_gradient_per_s: float = 0.0
    """True profile: g = dc/dz, 1/s (ignored when fitted to the water column)."""
    range_noise_m: float = 0.02
    """Range noise σ0, m."""
    range_noise_per_m: float = 0.0005
    """Range noise growth σ1, m/m."""
    dropout_probability: float = 0.0
    """Probability of losing one beam in a ping."""
    arc_chords: int = 16
    """Chords per arc in the first cast."""
    arc_refine: int = 16
    """Sub-chords of the hit chord in the second cast."""

    def check(self) -> None:
        if self.beam_count < 1:
            raise ValueError("beam_count must be >= 1")
        if not 0 <= self.swath_deg < 180:
            raise ValueError("swath_deg must be in [0, 180)")
        if not 0 <= self.min_range_m < self.max_range_m < np.inf:
            raise ValueError("need 0 <= min_range_m < max_range_m < inf")
        if not self.nominal_sound_speed_mps > 0:
            raise ValueError("nominal_sound_speed_mps must be > 0")
        if not (self.sound_speed_mps > 0 or self.sound_speed_mps == 0):
            raise ValueError("sound_speed_mps must be > 0 (or 0: from the water column)")
        if not np.isfinite(self.sound_speed_gradient_per_s):
            raise ValueError("sound_speed_gradient_per_s must be finite")
        if not (self.range_noise_m >= 0 and self.range_noise_per_m >= 0):
            raise ValueError("range_noise_m and range_noise_per_m must be >= 0")
        if not 0 <= self.dropout_probability <= 1:
            raise ValueError("dropout_probability must be in [0, 1]")
        if self.arc_chords < 1 or self.arc_refine < 1:
            raise ValueError("arc_chords and arc_refine must be >= 1")

    @property
    def angles_rad(self) -> np.ndarray:
        """Beam launch angles φ_j across track, rad."""
        half = math.radians(self.swath_deg) / 2
        if self.beam_count == 1:
            return np.zeros(1)
        return np.linspace(-half, half, self.beam_count)

    @property
    def beams(self) -> np.ndarray:
        """Beam unit vectors, sensor frame, (N, 3)."""
        a = self.angles_rad
        return np.stack([np.zeros_like(a), np.sin(a), np.cos(a)], axis=1)


def fit_profile(water: Any, depth_m: float, span_m: float) -> tuple[float, float]:
    """(c at depth_m, gradient): least-squares line through the water column's sound
    speed at 33 depths over [depth_m, depth_m + span_m], referred to depth_m."""
    z = depth_m + np.linspace(0.0, span_m, 33)
    c = np.asarray(water.sound_speed_mps(z), dtype=float)
    g, c0 = np.polyfit(z - depth_m, c, 1)
    return float(c0), float(g)


@dataclass
class ArcHits:
    """Where N traced arcs meet the scene (inf / nan / 0 where not): arc length, point,
    class and instance ids."""

    arc_length_m: np.ndarray
    point_ned: np.ndarray
    label: np.ndarray
    instance: np.ndarray

    @property
    def hit(self) -> np.ndarray:
        return np.isfinite(self.arc_length_m)


def cast_arcs(engine: Any, origins: np.ndarray, directions: np.ndarray, c0: np.ndarray,
              gradient: np.ndarray, max_arc_m: float, chords: int = 16,
              refine: int = 16) -> ArcHits:
    """Trace N arcs (module docstring) from origins (N, 3) along unit launch directions
    (N, 3) through c(z) = c0 + g (z - z_origin), up to arc length max_arc_m."""
    n = origins.shape[0]
    if n == 0:
        return ArcHits(np.zeros(0), np.zeros((0, 3)), np.zeros(0, np.int32), np.zeros(0, np.int32))
    c0 = np.broadcast_to(np.asarray(c0, dtype=float), (n,))
    g = np.broadcast_to(np.asarray(gradient, dtype=float), (n,))
    if np.all(g == 0):
        h = engine.cast(origins, directions, max_arc_m)
        return ArcHits(h.distance_m, h.point_ned, h.label, h.instance)
    horiz, th0 = launch_geometry(directions)
    kappa = arc_curvature(th0, c0, g)
    ds = max_arc_m / chords
    s1 = np.tile(np.linspace(0.0, max_arc_m, chords + 1), (n, 1))
    s_hit, point, normal, label, instance, first = _cast_chords(engine, origins, horiz, th0,
                                                                kappa, s1)
    ok = np.isfinite(s_hit)
    if refine > 1 and ok.any():
        idx = np.flatnonzero(ok)
        s2 = s1[idx, first[idx], None] + np.linspace(0.0, ds, refine + 1)[None, :]
        sub = _cast_chords(engine, origins[idx], horiz[idx], th0[idx], kappa[idx], s2)
        better = np.isfinite(sub[0])  # a grazing hit the sub-chords miss keeps the chord's
        j = idx[better]
        s_hit[j], point[j], normal[j], label[j], instance[j] = (v[better] for v in sub[:5])
    # the arc itself against the plane of the hit triangle: n·(P(s) - p_hit) = 0 (Newton)
    idx = np.flatnonzero(ok)
    if idx.size:
        s_n = s_hit[idx]
        nrm, p_hit = normal[idx], point[idx]
        for _ in range(3):
            P = arc_points(origins[idx], horiz[idx], th0[idx], kappa[idx], s_n[:, None])[:, 0]
            th = th0[idx] - kappa[idx] * s_n
            tangent = np.cos(th)[:, None] * horiz[idx]
            tangent[:, 2] += np.sin(th)
            f = np.einsum("ij,ij->i", nrm, P - p_hit)
            df = np.einsum("ij,ij->i", nrm, tangent)
            step = np.where(np.abs(df) > 1e-6, f / np.where(np.abs(df) > 1e-6, df, 1.0), 0.0)
            s_n = s_n - np.clip(step, -ds, ds)
        s_hit[idx] = s_n
        point[idx] = arc_points(origins[idx], horiz[idx], th0[idx], kappa[idx], s_n[:, None])[:, 0]
    return ArcHits(s_hit, point, label, instance)


def _cast_chords(engine, origins, horiz, th0, kappa, s_nodes):
    """First hit along the chords between arc lengths s_nodes (n, k+1): (arc length,
    point, label, instance, chord index); inf / nan / 0 where none."""
    n, k = s_nodes.shape[0], s_nodes.shape[1] - 1
    P = arc_points(origins, horiz, th0, kappa, s_nodes)
    seg = P[:, 1:] - P[:, :-1]
    length = np.linalg.norm(seg, axis=2)
    h = engine.cast(P[:, :-1].reshape(-1, 3), seg.reshape(-1, 3), length.ravel())
    dist = h.distance_m.reshape(n, k)
    got = np.isfinite(dist)
    first = np.argmax(got, axis=1)
    ar = np.arange(n)
    rows = ar * k + first
    ok = got.any(axis=1)
    frac = np.where(ok, dist[ar, first], 0.0) / length[ar, first]
    s_hit = np.where(ok, s_nodes[ar, first] + frac * (s_nodes[ar, first + 1] - s_nodes[ar, first]),
                     np.inf)
    return (s_hit, np.where(ok[:, None], h.point_ned[rows], np.nan),
            np.where(ok[:, None], h.normal_ned[rows], np.nan),
            np.where(ok, h.label[rows], 0), np.where(ok, h.instance[rows], 0), first)


@dataclass
class MultibeamBatch:
    """n pings of N beams ((n, N) arrays); measured values NaN where refused."""

    index: np.ndarray
    reason: np.ndarray  # (n,) ping
    beam_reason: np.ndarray  # (n, N)
    angle_rad: np.ndarray  # (N,)
    range_m: np.ndarray
    true_range_m: np.ndarray  # straight-line distance to the hit (inf: none)
    true_point_ned_m: np.ndarray  # (n, N, 3)
    true_label: np.ndarray
    true_instance: np.ndarray
    true_travel_time_s: np.ndarray  # one-way, noise-free
    sound_speed_mps: np.ndarray  # (n,) c at the transducer
    gradient_per_s: np.ndarray  # (n,)
    sensor_depth_m: np.ndarray
    params: MultibeamParams

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID

    def fill(self, i: int, msg: acoustics_pb2.Multibeam) -> acoustics_pb2.Multibeam:
        p = self.params
        c_nom = p.nominal_sound_speed_mps
        msg.nominal_sound_speed_mps = c_nom
        msg.true_sound_speed_mps = float(self.sound_speed_mps[i])
        msg.true_sound_speed_gradient_per_s = float(self.gradient_per_s[i])
        for j in range(self.angle_rad.shape[0]):
            beam = msg.beams.add()
            beam.angle_rad = float(self.angle_rad[j])
            beam.true_range_m = float(self.true_range_m[i, j])
            if np.isfinite(self.true_range_m[i, j]):
                pt = self.true_point_ned_m[i, j]
                beam.true_point_ned_m.x, beam.true_point_ned_m.y, beam.true_point_ned_m.z = map(float, pt)
                beam.true_two_way_travel_time_s = float(2 * self.true_travel_time_s[i, j])
            beam.true_label = int(self.true_label[i, j])
            beam.true_instance = int(self.true_instance[i, j])
            r = int(self.beam_reason[i, j])
            if r == VALID:
                set_valid(beam.validity)
                beam.range_m = float(self.range_m[i, j])
                beam.two_way_travel_time_s = 2.0 * beam.range_m / c_nom
            elif r == DROPOUT:
                refuse(beam.validity, r, "beam lost (random dropout)")
            elif r == ABOVE_SURFACE:
                refuse(beam.validity, r, "transducer above the surface")
            elif np.isfinite(self.true_range_m[i, j]):
                rr = c_nom * self.true_travel_time_s[i, j]
                refuse(beam.validity, r, f"range {rr:.2f} m outside [{p.min_range_m:g}, "
                                         f"{p.max_range_m:g}] m")
            else:
                refuse(beam.validity, r, f"no return within {CAST_MARGIN * p.max_range_m:g} m of arc")
        r = int(self.reason[i])
        if r == VALID:
            set_valid(msg.validity)
        elif r == ABOVE_SURFACE:
            refuse(msg.validity, r, f"transducer {-self.sensor_depth_m[i]:.3f} m above the surface")
        else:
            refuse(msg.validity, r, f"no valid beam of {self.angle_rad.shape[0]}")
        return msg


class MultibeamModel:
    """Pure vectorised multibeam of one instance (seed, name) against a ray engine and
    (for a fitted profile) a water column."""

    def __init__(self, params: MultibeamParams, engine: Any, water: Any = None,
                 mount: Mount = Mount(), seed: int = 0, name: str = "multibeam") -> None:
        params.check()
        if params.sound_speed_mps == 0 and water is None:
            raise ValueError("sound_speed_mps = 0 (fit to the water column) needs a water column")
        self.params, self.engine, self.water, self.mount = params, engine, water, mount
        self.noise = KeyedNoise(seed, name)
        self.B = params.beams

    def profile(self, depth_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(c at the transducer, gradient) for n transducer depths."""
        p = self.params
        if p.sound_speed_mps > 0:
            g = np.full(depth_m.shape, p.sound_speed_gradient_per_s)
            return p.sound_speed_mps + g * depth_m, g
        fits = [fit_profile(self.water, float(d), p.max_range_m) for d in depth_m]
        return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])

    def measure(self, position_ned_m, quaternion, first: int = 0) -> MultibeamBatch:
        """Pings first..first+n-1 from n positions (n, 3) and quaternions (n, 4)."""
        p, B = self.params, self.B
        pos = np.atleast_2d(np.asarray(position_ned_m, dtype=float))
        n, nb = pos.shape[0], B.shape[0]
        R_wb = rot_from_quat(np.atleast_2d(np.asarray(quaternion, dtype=float)))
        R_ws = R_wb @ self.mount.R_bs
        p_s = pos + R_wb @ self.mount.r
        depth = p_s[:, 2]
        c0, g = self.profile(depth)
        dirs = np.einsum("nij,kj->nki", R_ws, B).reshape(-1, 3)
        arcs = cast_arcs(self.engine, np.repeat(p_s, nb, axis=0), dirs, np.repeat(c0, nb),
                         np.repeat(g, nb), CAST_MARGIN * p.max_range_m, p.arc_chords, p.arc_refine)
        horiz, th0 = launch_geometry(dirs)
        s = arcs.arc_length_m
        seen = np.isfinite(s)
        t = np.full(s.shape, np.inf)
        if seen.any():
            t[seen] = arc_time(th0[seen], np.repeat(c0, nb)[seen], np.repeat(g, nb)[seen], s[seen])
        t = t.reshape(n, nb)
        seen = seen.reshape(n, nb)
        point = arcs.point_ned.reshape(n, nb, 3)
        true_range = np.where(seen, np.linalg.norm(point - p_s[:, None, :], axis=2), np.inf)
        r_clean = p.nominal_sound_speed_mps * t
        z = draw(self.noise, first, n, "range", nb)
        lost = draw(self.noise, first, n, "dropout", nb, uniform=True) < p.dropout_probability
        sigma = p.range_noise_m + p.range_noise_per_m * np.where(seen, true_range, 0.0)
        r = r_clean + sigma * z
        beam_reason = np.where(lost, DROPOUT, VALID)
        beam_reason[~seen | (r_clean > p.max_range_m) | (r_clean < p.min_range_m)] = OUT_OF_RANGE
        above = depth < 0
        beam_reason[above] = ABOVE_SURFACE
        ok = beam_reason == VALID
        reason = np.where(ok.any(axis=1), VALID, np.where(
            np.all(beam_reason == beam_reason[:, :1], axis=1), beam_reason[:, 0], NO_LOCK))
        reason[above] = ABOVE_SURFACE
        return MultibeamBatch(np.arange(first, first + n), reason, beam_reason, p.angles_rad,
                              np.where(ok, r, np.nan), true_range, point,
                              arcs.label.reshape(n, nb), arcs.instance.reshape(n, nb), t, c0, g,
                              depth, p)


class MultibeamSensor(SensorComponent):
    """Multibeam echosounder: a fan of beams across track traced as circular arcs
    through a constant-gradient sound-speed profile against the scene (or a flat
    seabed); travel-time ranges with the nominal sound speed, keyed noise, per-beam
    validity and truth (hit point, label)."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("multibeam", acoustics_pb2.Multibeam, "per-beam ranges of one ping"),)
    output_port = "multibeam"

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML); empty: a flat seabed at seabed_depth_m")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed without a scene (NED z)",
                                      unit="m")
        water: dict = param({}, WATER_DOC + " (used when sound_speed_mps = 0)")
        beam_count: int = param(128, "number of beams")
        swath_deg: float = param(120.0, "full swath angle across track", unit="deg")
        min_range_m: float = param(0.5, "shortest measurable range", unit="m")
        max_range_m: float = param(200.0, "longest measurable range", unit="m")
        nominal_sound_speed_mps: float = param(1500.0, "sound speed the instrument assumes",
                                               unit="m/s")
        sound_speed_mps: float = param(1500.0, "true sound speed at the surface (0: line fitted "
                                               "to the water column below the transducer)", unit="m/s")
        sound_speed_gradient_per_s: float = param(0.0, "true sound-speed gradient dc/dz",
                                                  unit="1/s")
        range_noise_m: float = param(0.02, "range noise at zero range (1 sigma)", unit="m")
        range_noise_per_m: float = param(0.0005, "range noise growth with range", unit="m/m")
        dropout_probability: float = param(0.0, "probability of losing a beam in a ping")
        arc_chords: int = param(16, "chords per arc in the first cast")
        arc_refine: int = param(16, "sub-chords of the hit chord in the second cast")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX); the fan "
                                                 "lies in the sensor y-z plane", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

    def configure(self, params: Parameters) -> None:
        self.sensor_params = MultibeamParams(
            params.beam_count, params.swath_deg, params.min_range_m, params.max_range_m,
            params.nominal_sound_speed_mps, params.sound_speed_mps,
            params.sound_speed_gradient_per_s, params.range_noise_m, params.range_noise_per_m,
            params.dropout_probability, params.arc_chords, params.arc_refine)
        self.mount = configure_common(self, self.sensor_params, params)
        env = surroundings(params.scene, params.seabed_depth_m, params.water, self.name)
        self.model = MultibeamModel(self.sensor_params, env.engine, env.water, self.mount,
                                    self.seed, self.name)

    def measure(self, k: int, t_ns: int, inputs):
        msg = acoustics_pb2.Multibeam(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            return msg
        truth = truth_from_state(state)
        return self.model.measure(truth.position_ned_m, truth.quaternion, k).fill(0, msg)
