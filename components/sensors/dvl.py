"""Janus Doppler velocity log (docs/sensors.md (dvl)).

Geometry. Beam i points along b_i = [sin a cos phi_i, sin a sin phi_i, cos a] in the
sensor frame (a: beam angle from the sensor's down axis z, phi_i: beam azimuths). The
sensor sits at the lever arm r; its velocity in the sensor frame is
v_s = R_bs^T (v + omega x r), its position p_s = p + R_wb r.

Bottom track. Each beam is a ray from p_s along R_wb R_bs b_i; its slant range t_i is
the ray-plane intersection with the seabed (flat at ``seabed_depth_m``; or, when a
grid is given, a bilinear height field found by marching and bisection). A beam is in
range when min_range <= t_i <= max_range. With at least 3 beams in range the DVL is
bottom-locked and each beam measures the velocity of the transducer relative to the
bottom along the beam, u_i = b_i . v_s (positive when the transducer moves towards
where the beam points). Out of bottom range, with ``water_track`` on, the beams
measure relative to the water: u_i = b_i . (v_s - c_s), c_s the current in the sensor
frame.

Errors per beam and sample k::

    u_i,k = (1 + s0 + s_i,k) u_true + b_i,k + (k_n |u_true| + c_n) n_i,k
    s_i,k = s_i,k-1 + sigma_s sqrt(dt) z_i,k       (scale-factor drift, s_i,0 = 0)
    b_i,k = b_i,k-1 + sigma_b sqrt(dt) w_i,k       (bias random walk,   b_i,0 = 0)

and a beam drops out when its keyed uniform is below ``dropout_probability``.

Solution. With the valid beams H (rows b_i), v = (H^T H)^-1 H^T u (least squares),
residual RMS sqrt(sum r_i^2 / m), covariance (H^T H)^-1 H^T diag(sigma_i^2) H (H^T H)^-1
(= sigma^2 (H^T H)^-1 for equal beam noise). Fewer than 3 valid beams: refused
(REFUSAL_REASON_DROPOUT when the beams were in range but dropped,
REFUSAL_REASON_OUT_OF_RANGE when the seabed is seen outside the range window,
REFUSAL_REASON_NO_LOCK when no beam meets the seabed at all). Altitude: along the
sensor's z axis, from the plane z = alpha x + beta y + h fitted through the valid beam
hit points rho_i b_i (measured ranges rho_i = t_i + sigma_r n_i), h being the altitude.

``DvlModel`` is the pure vectorised model; ``DvlSensor`` the component wrapping it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import cross, rot_from_quat
from ..sdk.noise import KeyedNoise
from .acoustic import BODIES_DOC, SeesBodies
from .common import Latency, Mount, Truth, refuse, set_valid, truth_from_state

VALID = 0
OUT_OF_RANGE = common_pb2.REFUSAL_REASON_OUT_OF_RANGE
NO_LOCK = common_pb2.REFUSAL_REASON_NO_LOCK
DROPOUT = common_pb2.REFUSAL_REASON_DROPOUT

TRACK_NONE = sensors_pb2.DVL_TRACK_UNSPECIFIED
TRACK_BOTTOM = sensors_pb2.DVL_TRACK_BOTTOM
TRACK_WATER = sensors_pb2.DVL_TRACK_WATER


@dataclass(frozen=True)
class DvlParams:
    """Geometry, environment and error model of a Janus DVL."""

    beam_angle_deg: float = 25.0
    """Beam angle a from the sensor's down (z) axis, deg."""
    beam_azimuths_deg: tuple[float, ...] = (45.0, 135.0, 225.0, 315.0)
    """Beam azimuths phi_i about the sensor z axis from its x axis, deg (>= 3 beams)."""
    min_range_m: float = 0.5
    """Shortest slant range a beam locks on, m."""
    max_range_m: float = 100.0
    """Longest slant range a beam locks on, m."""
    seabed_depth_m: float = 100.0
    """Depth of the flat seabed (NED z), m; used when no grid is given."""
    seabed_grid_north_m: tuple[float, ...] = ()
    """Height field: increasing north coordinates of the grid, m (empty: flat seabed)."""
    seabed_grid_east_m: tuple[float, ...] = ()
    """Height field: increasing east coordinates of the grid, m."""
    seabed_grid_depth_m: tuple[float, ...] = ()
    """Height field: seabed depth at the grid nodes, row-major (north index first), m;
    bilinear between nodes, held constant beyond the edges."""
    water_track: bool = False
    """Out of bottom range, measure relative to the water (else refuse)."""
    current_ned_mps: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Water current, NED, m/s (uniform over the vehicle), for water track."""
    noise_k: float = 0.002
    """Beam noise proportional to |along-beam velocity|, fraction (sigma_i = k|u| + c)."""
    noise_c_mps: float = 0.003
    """Beam noise floor c, m/s."""
    range_noise_m: float = 0.02
    """Slant range noise standard deviation, m."""
    scale_factor: float = 0.0
    """Constant scale-factor error s0 of every beam, fraction."""
    scale_walk_per_sqrt_s: float = 0.0
    """Scale-factor random walk sigma_s per beam, 1/sqrt(s)."""
    bias_walk_mps_per_sqrt_s: float = 1e-5
    """Beam velocity bias random walk sigma_b, m/s/sqrt(s)."""
    dropout_probability: float = 0.0
    """Probability that a beam is lost in a sample (independent per beam and sample)."""

    def check(self) -> None:
        """Raise ValueError for inconsistent values."""
        if not 0 <= self.beam_angle_deg < 90:
            raise ValueError("beam_angle_deg must be in [0, 90)")
        if len(self.beam_azimuths_deg) < 3:
            raise ValueError("at least 3 beam azimuths are needed")
        if not 0 <= self.min_range_m < self.max_range_m:
            raise ValueError("need 0 <= min_range_m < max_range_m")
        if len(self.current_ned_mps) != 3:
            raise ValueError("current_ned_mps takes 3 values")
        for name in ("noise_k", "noise_c_mps", "range_noise_m", "scale_walk_per_sqrt_s",
                     "bias_walk_mps_per_sqrt_s"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0")
        if not 0 <= self.dropout_probability <= 1:
            raise ValueError("dropout_probability must be in [0, 1]")
        nn, ne = len(self.seabed_grid_north_m), len(self.seabed_grid_east_m)
        if nn or ne or self.seabed_grid_depth_m:
            if nn < 2 or ne < 2 or len(self.seabed_grid_depth_m) != nn * ne:
                raise ValueError("the seabed grid needs >= 2 north and >= 2 east coordinates and "
                                 "len(north) * len(east) depths")
            if np.any(np.diff(self.seabed_grid_north_m) <= 0) or np.any(
                    np.diff(self.seabed_grid_east_m) <= 0):
                raise ValueError("seabed grid coordinates must increase strictly")

    @property
    def beams(self) -> np.ndarray:
        """Beam unit vectors in the sensor frame, (nb, 3)."""
        a = math.radians(self.beam_angle_deg)
        phi = np.radians(np.asarray(self.beam_azimuths_deg, dtype=float))
        return np.stack([np.sin(a) * np.cos(phi), np.sin(a) * np.sin(phi),
                         np.full_like(phi, np.cos(a))], axis=1)


@dataclass
class DvlState:
    """Drift state after the last produced sample (to continue a batch)."""

    next_index: int
    scale: np.ndarray  # (nb,) scale-factor walk at sample next_index - 1
    bias: np.ndarray  # (nb,) bias walk at sample next_index - 1


@dataclass
class DvlBatch:
    """n DVL samples; nb beams. Measured values are NaN where not measured."""

    index: np.ndarray  # (n,)
    reason: np.ndarray  # (n,) 0 valid, else REFUSAL_REASON_*
    track: np.ndarray  # (n,) DVL_TRACK_*
    velocity_mps: np.ndarray  # (n, 3) sensor frame
    covariance: np.ndarray  # (n, 3, 3)
    residual_mps: np.ndarray  # (n,)
    altitude_m: np.ndarray  # (n,)
    beam_reason: np.ndarray  # (n, nb)
    beam_velocity_mps: np.ndarray  # (n, nb)
    beam_range_m: np.ndarray  # (n, nb) measured slant range (bottom track)
    true_beam_velocity_mps: np.ndarray  # (n, nb)
    true_beam_range_m: np.ndarray  # (n, nb), inf when the beam never meets the seabed
    true_velocity_mps: np.ndarray  # (n, 3) sensor velocity relative to the tracked medium
    true_altitude_m: np.ndarray  # (n,), inf when the z axis never meets the seabed
    scale: np.ndarray  # (n, nb) scale-factor drift s_i,k (truth of the drift)
    bias_mps: np.ndarray  # (n, nb) bias walk b_i,k
    in_range: np.ndarray  # (n, nb) bool
    dropped: np.ndarray  # (n, nb) bool
    params: DvlParams = field(repr=False, default_factory=DvlParams)

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID

    def _detail(self, i: int) -> str:
        p, nb = self.params, self.in_range.shape[1]
        n_in, n_drop = int(self.in_range[i].sum()), int(self.dropped[i].sum())
        if self.reason[i] == DROPOUT:
            ok = int((self.beam_reason[i] == VALID).sum())
            return f"only {ok} of {nb} beams valid ({n_drop} dropped out); 3 are needed"
        ranges = ", ".join("none" if not np.isfinite(t) else f"{t:.1f}"
                           for t in self.true_beam_range_m[i])
        if self.reason[i] == NO_LOCK:
            return f"no beam meets the seabed; {nb} beams, water track off"
        return (f"{n_in} of {nb} beams within the range window [{p.min_range_m:g}, "
                f"{p.max_range_m:g}] m (slant ranges {ranges} m); 3 are needed")

    def fill(self, i: int, msg: sensors_pb2.Dvl) -> sensors_pb2.Dvl:
        """Write sample i into a moonpool.v1.Dvl (beams, validity, truth)."""
        msg.track = int(self.track[i])
        tv = self.true_velocity_mps[i]
        msg.true_velocity_mps.x, msg.true_velocity_mps.y, msg.true_velocity_mps.z = map(float, tv)
        msg.true_altitude_m = float(self.true_altitude_m[i])
        nb = self.beam_reason.shape[1]
        for j in range(nb):
            beam = msg.beams.add()
            beam.true_velocity_mps = float(self.true_beam_velocity_mps[i, j])
            beam.true_range_m = float(self.true_beam_range_m[i, j])
            r = int(self.beam_reason[i, j])
            if r == VALID:
                set_valid(beam.validity)
                beam.velocity_mps = float(self.beam_velocity_mps[i, j])
                if np.isfinite(self.beam_range_m[i, j]):
                    beam.range_m = float(self.beam_range_m[i, j])
            elif r == DROPOUT:
                refuse(beam.validity, r, "beam dropped out")
            elif np.isfinite(self.true_beam_range_m[i, j]):
                refuse(beam.validity, r, f"slant range {self.true_beam_range_m[i, j]:.2f} m outside "
                                         f"[{self.params.min_range_m:g}, {self.params.max_range_m:g}] m")
            else:
                refuse(beam.validity, NO_LOCK, "the beam does not meet the seabed")
        if self.reason[i] != VALID:
            refuse(msg.validity, int(self.reason[i]), self._detail(i))
            return msg
        set_valid(msg.validity)
        v = self.velocity_mps[i]
        msg.velocity_mps.x, msg.velocity_mps.y, msg.velocity_mps.z = map(float, v)
        msg.velocity_covariance.n = 3
        msg.velocity_covariance.values.extend(float(c) for c in self.covariance[i].ravel())
        msg.residual_mps = float(self.residual_mps[i])
        msg.altitude_m = float(self.altitude_m[i])
        return msg


def _draw(noise: KeyedNoise, first: int, n: int, channel: str, nb: int,
          uniform: bool = False) -> np.ndarray:
    """(n, nb) keyed draws, one channel per group of 4 beams."""
    cols = []
    for g in range(0, nb, 4):
        w = min(4, nb - g)
        ch = channel if g == 0 else f"{channel}/{g // 4}"
        cols.append(noise.uniform_range(first, n, ch, w) if uniform
                    else noise.normal_range(first, n, ch, w))
    return np.concatenate(cols, axis=1)


def _walk(noise: KeyedNoise, first: int, n: int, channel: str, nb: int, step_sigma: float,
          prev: np.ndarray | None) -> np.ndarray:
    """Random walk x_k = x_(k-1) + step_sigma z_k, x_0 = 0, for samples first..first+n-1,
    summed in sample order (so batches equal one-by-one stepping). ``prev``: x at
    sample first - 1 (None: recompute from sample 0)."""
    if step_sigma == 0:
        return np.zeros((n, nb))
    start = first if prev is not None else 0
    inc = step_sigma * _draw(noise, start, first + n - start, channel, nb)
    if start == 0:
        inc[0] = 0.0
    x0 = np.zeros((1, nb)) if prev is None else np.asarray(prev, dtype=float).reshape(1, nb)
    walk = np.cumsum(np.concatenate([x0, inc], axis=0), axis=0)[1:]
    return walk[first - start:]


class DvlModel:
    """Pure vectorised DVL of one instance (seed, name), sampled every dt_s seconds."""

    def __init__(self, params: DvlParams = DvlParams(), mount: Mount = Mount(),
                 seed: int = 0, name: str = "dvl", dt_s: float = 0.2, engine=None) -> None:
        params.check()
        if not dt_s > 0:
            raise ValueError("dt_s must be > 0")
        self.params, self.mount, self.dt_s = params, mount, float(dt_s)
        self.engine = engine
        """A ray engine (``cast(origins, directions, max_range_m) -> Hits``, e.g. a
        scene's): the beams are cast against it instead of the flat or gridded seabed."""
        self.noise = KeyedNoise(seed, name)
        self.B = params.beams
        self.nb = self.B.shape[0]
        if params.seabed_grid_depth_m:
            self._gn = np.asarray(params.seabed_grid_north_m, dtype=float)
            self._ge = np.asarray(params.seabed_grid_east_m, dtype=float)
            self._gd = np.asarray(params.seabed_grid_depth_m, dtype=float).reshape(
                len(self._gn), len(self._ge))
        else:
            self._gd = None

    # ------------------------------------------------------------------ seabed

    def seabed_depth(self, north, east) -> np.ndarray:
        """Seabed depth under (north, east), m (bilinear on the grid, or flat)."""
        north, east = np.asarray(north, dtype=float), np.asarray(east, dtype=float)
        if self._gd is None:
            return np.full(np.broadcast(north, east).shape, self.params.seabed_depth_m)
        gn, ge, gd = self._gn, self._ge, self._gd
        x = np.clip(north, gn[0], gn[-1])
        y = np.clip(east, ge[0], ge[-1])
        i = np.clip(np.searchsorted(gn, x, side="right") - 1, 0, len(gn) - 2)
        j = np.clip(np.searchsorted(ge, y, side="right") - 1, 0, len(ge) - 2)
        fx = (x - gn[i]) / (gn[i + 1] - gn[i])
        fy = (y - ge[j]) / (ge[j + 1] - ge[j])
        return ((1 - fx) * (1 - fy) * gd[i, j] + fx * (1 - fy) * gd[i + 1, j]
                + (1 - fx) * fy * gd[i, j + 1] + fx * fy * gd[i + 1, j + 1])

    def ray_range(self, origin: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Distance along unit rays (..., 3) NED from origins (..., 3) to the seabed; inf
        when the ray never meets it (pointing up, or the origin below the seabed). With
        an ``engine``: the first hit of the ray in the scene (inf: none at any range)."""
        origin = np.asarray(origin, dtype=float)
        direction = np.asarray(direction, dtype=float)
        shape = np.broadcast_shapes(origin.shape, direction.shape)[:-1]
        o = np.broadcast_to(origin, shape + (3,)).reshape(-1, 3)
        d = np.broadcast_to(direction, shape + (3,)).reshape(-1, 3)
        if self.engine is not None:
            return np.asarray(self.engine.cast(o, d, np.inf).distance_m, dtype=float).reshape(shape)
        if self._gd is None:
            h = self.params.seabed_depth_m - o[:, 2]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where((d[:, 2] > 0) & (h >= 0), h / d[:, 2], np.inf)
            return t.reshape(shape)
        out = np.empty(o.shape[0])
        for s in range(0, o.shape[0], 4096):
            out[s:s + 4096] = self._march(o[s:s + 4096], d[s:s + 4096])
        return out.reshape(shape)

    def _march(self, o: np.ndarray, d: np.ndarray) -> np.ndarray:
        """First crossing of the height field along each ray: march, then bisect."""
        spacing = min(np.min(np.diff(self._gn)), np.min(np.diff(self._ge)))
        t_max = 2.0 * self.params.max_range_m
        m = int(min(4000, max(64, math.ceil(t_max / (0.5 * spacing))))) + 1
        ts = np.linspace(0.0, t_max, m)

        def below(pt):  # > 0 once the point is at or under the seabed
            return pt[..., 2] - self.seabed_depth(pt[..., 0], pt[..., 1])

        f = below(o[:, None, :] + ts[None, :, None] * d[:, None, :])  # (r, m)
        hit = f >= 0
        first = np.argmax(hit, axis=1)
        ok = hit.any(axis=1) & (first > 0)  # origin under the seabed: no range
        lo = ts[np.maximum(first - 1, 0)]
        hi = ts[first]
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            under = below(o + mid[:, None] * d) >= 0
            hi = np.where(under, mid, hi)
            lo = np.where(under, lo, mid)
        return np.where(ok, 0.5 * (lo + hi), np.inf)

    # ----------------------------------------------------------------- measure

    def measure(self, truth: Truth, first: int = 0,
                state: DvlState | None = None) -> tuple[DvlBatch, DvlState]:
        """Samples first .. first+n-1 from n stacked truths (Truth arrays with axis 0 of
        length n). ``state``: the drift state returned by the previous call (None:
        computed from sample 0). The result equals n calls of one sample each."""
        p, B, nb = self.params, self.B, self.nb
        if state is not None and state.next_index != first:
            raise ValueError(f"state continues at sample {state.next_index}, asked {first}")
        pos = np.atleast_2d(np.asarray(truth.position_ned_m, dtype=float))
        n = pos.shape[0]
        R_wb = rot_from_quat(np.atleast_2d(truth.quaternion))
        R_bs = self.mount.R_bs
        r = self.mount.r
        v = np.atleast_2d(np.asarray(truth.velocity_body_mps, dtype=float))
        w = np.atleast_2d(np.asarray(truth.angular_velocity_body_radps, dtype=float))
        v_body = v + cross(w, r)  # velocity of the sensor point, body frame
        v_s = np.einsum("ji,nj->ni", R_bs, v_body)
        R_ws = np.einsum("nij,jk->nik", R_wb, R_bs)
        p_s = pos + np.einsum("nij,j->ni", R_wb, r)
        c_s = np.einsum("nji,j->ni", R_ws, np.asarray(p.current_ned_mps, dtype=float))

        b_ned = np.einsum("nij,kj->nki", R_ws, B)  # (n, nb, 3)
        t_true = self.ray_range(p_s[:, None, :], b_ned)  # (n, nb)
        t_alt = self.ray_range(p_s, R_ws[:, :, 2])  # (n,)
        in_range = (t_true >= p.min_range_m) & (t_true <= p.max_range_m)
        n_in = in_range.sum(axis=1)
        bottom = n_in >= 3
        water = ~bottom & p.water_track
        track = np.where(bottom, TRACK_BOTTOM, np.where(water, TRACK_WATER, TRACK_NONE))

        v_rel = np.where(water[:, None], v_s - c_s, v_s)
        u_true = np.einsum("kj,nj->nk", B, v_rel)

        dropped = _draw(self.noise, first, n, "dropout", nb, uniform=True) < p.dropout_probability
        usable = np.where(water[:, None], True, in_range)
        beam_reason = np.where(dropped, DROPOUT, VALID)
        beam_reason = np.where(usable, beam_reason,
                               np.where(np.isfinite(t_true), OUT_OF_RANGE, NO_LOCK))
        ok = beam_reason == VALID
        n_ok = ok.sum(axis=1)

        sq = math.sqrt(self.dt_s)
        scale = _walk(self.noise, first, n, "scale_walk", nb, p.scale_walk_per_sqrt_s * sq,
                      None if state is None else state.scale)
        bias = _walk(self.noise, first, n, "bias_walk", nb, p.bias_walk_mps_per_sqrt_s * sq,
                     None if state is None else state.bias)
        sigma = p.noise_k * np.abs(u_true) + p.noise_c_mps
        z = _draw(self.noise, first, n, "beam", nb)
        u_meas = (1.0 + p.scale_factor + scale) * u_true + bias + sigma * z
        rho = t_true + p.range_noise_m * _draw(self.noise, first, n, "range", nb)

        reason = np.where(n_ok >= 3, VALID,
                          np.where(bottom | water, DROPOUT,
                                   np.where(np.isfinite(t_true).any(axis=1), OUT_OF_RANGE, NO_LOCK)))
        solved = reason == VALID

        # Least squares over the valid beams (rows of invalid beams zeroed).
        H = B[None, :, :] * ok[:, :, None]  # (n, nb, 3)
        HtH = np.einsum("nki,nkj->nij", H, H)
        HtH[~solved] = np.eye(3)
        Hinv = np.linalg.inv(HtH)
        um = np.where(ok, u_meas, 0.0)
        vel = np.einsum("nij,nj->ni", Hinv, np.einsum("nki,nk->ni", H, um))
        res = np.where(ok, um - np.einsum("nkj,nj->nk", H, vel), 0.0)
        residual = np.sqrt((res ** 2).sum(axis=1) / np.maximum(n_ok, 1))
        S = np.einsum("nki,nk,nkj->nij", H, sigma ** 2, H)
        cov = np.einsum("nij,njk,nlk->nil", Hinv, S, Hinv)
        cov = 0.5 * (cov + np.swapaxes(cov, 1, 2))  # symmetric to the last bit

        # Altitude along z: plane z = alpha x + beta y + h through the valid hit points.
        alt = np.full(n, np.nan)
        fit = solved & bottom
        if fit.any():
            P = rho[:, :, None] * B[None, :, :]  # (n, nb, 3) hit points, sensor frame
            # (where, not a product: a beam that meets nothing has an infinite range)
            A = np.where(ok[:, :, None],
                         np.concatenate([P[:, :, :2], np.ones((n, nb, 1))], axis=2), 0.0)
            AtA = np.einsum("nki,nkj->nij", A, A)
            AtA[~fit] = np.eye(3)
            rhs = np.einsum("nki,nk->ni", A, np.where(ok, P[:, :, 2], 0.0))
            coef = np.linalg.solve(AtA, rhs[:, :, None])[:, :, 0]
            alt = np.where(fit, coef[:, 2], np.nan)

        nanv = np.full((n, 3), np.nan)
        batch = DvlBatch(
            index=np.arange(first, first + n), reason=reason, track=track,
            velocity_mps=np.where(solved[:, None], vel, nanv),
            covariance=np.where(solved[:, None, None], cov, np.nan),
            residual_mps=np.where(solved, residual, np.nan), altitude_m=alt,
            beam_reason=beam_reason, beam_velocity_mps=np.where(ok, u_meas, np.nan),
            beam_range_m=np.where(ok & bottom[:, None], rho, np.nan),
            true_beam_velocity_mps=u_true, true_beam_range_m=t_true, true_velocity_mps=v_rel,
            true_altitude_m=t_alt, scale=scale, bias_mps=bias, in_range=in_range,
            dropped=dropped, params=p)
        new_state = DvlState(first + n, scale[-1].copy() if n else np.zeros(nb),
                             bias[-1].copy() if n else np.zeros(nb))
        if n == 0 and state is not None:
            new_state = state
        return batch, new_state


def stack_truths(truths: list[Truth]) -> Truth:
    """n single-sample truths as one stacked Truth."""
    return Truth(*(np.stack([np.asarray(getattr(t, f)) for t in truths]) for f in (
        "position_ned_m", "quaternion", "velocity_body_mps", "angular_velocity_body_radps",
        "acceleration_body_mps2", "angular_acceleration_body_radps2", "water_density_kgpm3")))


class DvlSensor(SeesBodies, Component):
    """Janus DVL: per-beam along-beam velocities against a flat or gridded seabed or a
    scene (with other vehicles as ``bodies``) (bottom track) or the water (water
    track), noise, scale-factor and bias drift, dropout; least-squares sensor velocity
    with residual and covariance, and the altitude; refused with fewer than 3 valid
    beams."""

    inputs = (Port("state", vehicle_pb2.VehicleState, "true vehicle state"),)
    outputs = (Port("dvl", sensors_pb2.Dvl, "velocity, altitude and beams, sensor frame"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        scene: Path | None = param(None, "scene file (TOML) the beams are cast against; empty: "
                                         "the flat seabed or the height-field grid")
        bodies: dict = param({}, BODIES_DOC)
        beam_angle_deg: float = param(25.0, "beam angle from the sensor's down axis", unit="deg")
        beam_azimuths_deg: tuple[float, ...] = param((45.0, 135.0, 225.0, 315.0),
                                                     "beam azimuths about z from x", unit="deg")
        min_range_m: float = param(0.5, "shortest slant range of bottom lock", unit="m")
        max_range_m: float = param(100.0, "longest slant range of bottom lock", unit="m")
        seabed_depth_m: float = param(100.0, "depth of the flat seabed (NED z)", unit="m")
        seabed_grid_north_m: tuple[float, ...] = param(
            (), "height field north coordinates, increasing (empty: flat seabed)", unit="m")
        seabed_grid_east_m: tuple[float, ...] = param(
            (), "height field east coordinates, increasing", unit="m")
        seabed_grid_depth_m: tuple[float, ...] = param(
            (), "height field depths, row-major (north index first)", unit="m")
        water_track: bool = param(False, "track the water when out of bottom range")
        current_ned_mps: tuple[float, ...] = param((0.0, 0.0, 0.0), "water current, NED",
                                                   unit="m/s")
        noise_k: float = param(0.002, "beam noise per |along-beam velocity| (sigma = k|u| + c)")
        noise_c_mps: float = param(0.003, "beam noise floor c", unit="m/s")
        range_noise_m: float = param(0.02, "slant range noise", unit="m")
        scale_factor: float = param(0.0, "constant scale-factor error (fraction)")
        scale_walk_per_sqrt_s: float = param(0.0, "scale-factor random walk per beam",
                                             unit="1/sqrt(s)")
        bias_walk_mps_per_sqrt_s: float = param(1e-5, "beam bias random walk",
                                                unit="m/s/sqrt(s)")
        dropout_probability: float = param(0.0, "probability of losing a beam in a sample")
        mount_xyz_m: tuple[float, ...] = param((0.0, 0.0, 0.0), "lever arm, body frame (FRD)",
                                               unit="m")
        mount_rpy_rad: tuple[float, ...] = param((0.0, 0.0, 0.0),
                                                 "sensor axes relative to the body (ZYX)", unit="rad")
        latency_s: float = param(0.0, "delay between sampling and output", unit="s")

        def __post_init__(self) -> None:
            from .acoustic import check_scene_parameters

            check_scene_parameters(self)

    @classmethod
    def _dvl_params(cls, params: Parameters) -> DvlParams:
        """The model's parameters, checked, with the mount, the latency and the seabed."""
        names = [f for f in DvlParams.__dataclass_fields__]
        kw = {f: getattr(params, f) for f in names}
        kw["current_ned_mps"] = tuple(params.current_ned_mps)
        try:
            dvl_params = DvlParams(**kw)
            dvl_params.check()
            if len(params.mount_xyz_m) != 3 or len(params.mount_rpy_rad) != 3:
                raise ValueError("mount_xyz_m and mount_rpy_rad take 3 values each")
            if params.latency_s < 0:
                raise ValueError("latency_s must be >= 0")
        except ValueError as exc:
            raise ParameterError(str(exc), fix="correct the DVL parameters in the rig") from None
        if params.scene is not None and dvl_params.seabed_grid_depth_m:
            raise ParameterError("both `scene` and a seabed grid are given",
                                 fix="drop the seabed_grid_* parameters")
        return dvl_params

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """The DVL model's figures, the mount, the latency, one seabed (``_dvl_params``)."""
        cls._dvl_params(params)

    def configure(self, params: Parameters) -> None:
        self.dvl_params = self.checked(params, self._dvl_params)
        self.mount = Mount(tuple(params.mount_xyz_m), tuple(params.mount_rpy_rad))
        self.latency_ns = int(round(params.latency_s * 1e9))
        self.model: DvlModel | None = None
        self.engine = None
        if params.scene is not None:
            from .acoustic import load_scene

            scene = load_scene(str(params.scene), self.name)
            self.engine = scene.engine()
            self.configure_bodies(params, scene)

    def initialize(self, start_time_ns: int):
        self.k = 0
        self.state: DvlState | None = None
        self.model = None
        self.delay = Latency(self.latency_ns)
        return None

    def step(self, t_ns, dt_ns, inputs):
        k, self.k = self.k, self.k + 1
        if self.model is None:  # the drift needs the sample period: the schedule's period
            period = self.period_ns if self.period_ns > 0 else dt_ns
            self.model = DvlModel(self.dvl_params, self.mount, self.seed, self.name, period * 1e-9,
                                  self.engine)
        self.place_bodies(inputs)
        msg = sensors_pb2.Dvl(header=self.header(t_ns, self.name))
        state = inputs.get("state")
        if state is None:
            refuse(msg.validity, common_pb2.REFUSAL_REASON_NOT_READY, "no vehicle state received yet")
            # keep the drift in step with the sample index
            batch, self.state = self.model.measure(_rest_truth(), k, self.state)
        else:
            batch, self.state = self.model.measure(stack_truths([truth_from_state(state)]), k,
                                                   self.state)
            batch.fill(0, msg)
        self.delay.push(t_ns, msg)
        ready = self.delay.pop_ready(t_ns)
        return {"dvl": ready[-1]} if ready else None


def _rest_truth() -> Truth:
    z3 = np.zeros((1, 3))
    return Truth(z3, np.array([[1.0, 0.0, 0.0, 0.0]]), z3, z3, z3, z3, np.zeros(1))
