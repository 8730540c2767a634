"""The terramechanics component: Bekker–Wong soil forces on a seabed vehicle.

``Terramechanics`` (short name ``terramechanics.crawler``) reads the vehicle state
(from the hydrodynamics FMU), computes the soil stresses under every track and
wheel of the vehicle profile, and outputs their sum as a body wrench about CO (for
the FMU's ``ext_X … ext_N``) plus named diagnostics per track or wheel (traction,
compaction resistance, lateral resistance, normal load, sinkage, slip).

Geometry and inertia come from the vehicle profile (the rig's ``profile`` key, the
same file the FMU gets): its ``[parameters]`` (mass, inertia, centre of gravity,
added mass, as the FMU reads them) and its ``[[tracks]]`` / ``[[wheels]]`` tables.

Coupling (docs/terramechanics.md, "Stiffness and coupling"). The soil forces are
stiff: a track's traction changes by ~10⁶ N per m/s of speed on sand, its normal
force by ~10⁶ N per m of sinkage. Held constant over a 10 ms step and computed from
the state at the start of the step (explicit coupling), they make the vehicle's
velocity oscillate and diverge. With ``coupling = "implicit"`` (default) each step
solves for the body velocity ν⁺ at the end of the step, backward Euler::

    M (ν⁺ − ν) / dt = τ_other + τ_soil(η⁺(ν⁺), ν⁺),     η⁺ = η + dt · J(η) ν⁺

by Newton's method, with M = M_RB + M_A built from the profile exactly as the FMU
builds it and τ_other = M ν̇ − τ_soil,prev (the vehicle's other forces, inferred from
the acceleration the FMU reports with the soil wrench it was given). It outputs
τ_soil(η⁺, ν⁺). At a steady state (ν̇ = 0) this is exactly the soil wrench at the
current state; in transients it is first-order accurate and stable for any soil
stiffness. Use Gauss-Seidel with this component stepped just before the vehicle
(``rigs/crawler.toml``), so the FMU applies the wrench over the step it was
computed for.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from moonpool.v1 import signals_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import cross, skew
from . import bekker
from .bekker import Soil, slip_ratio
from .soils import PRESETS, soil_from

COUPLINGS = ("implicit", "explicit")

# FMU parameter defaults (docs/hydrodynamics.md) used when a profile leaves them out.
_FMU_DEFAULTS = {
    "Ixy": 0.0, "Ixz": 0.0, "Iyz": 0.0, "x_g": 0.0, "y_g": 0.0, "z_g": 0.0,
    "rho_surface": 1000.0, "g": 9.81, "pycnocline_depth": 500.0, "pycnocline_width": 1000.0,
    "pycnocline_delta_rho": 0.0,
}
_REQUIRED_INERTIA = ("mass", "Ixx", "Iyy", "Izz", "A_u", "A_v", "A_w", "A_p", "A_q", "A_r")


def mass_matrix(p: Mapping[str, float]) -> np.ndarray:
    """M = M_RB + M_A about CO (Fossen eq. 3.44), as the hydrodynamics FMU builds it."""
    m = float(p["mass"])
    r_g = np.array([p["x_g"], p["y_g"], p["z_g"]], dtype=float)
    I_g = np.array([[p["Ixx"], -p["Ixy"], -p["Ixz"]],
                    [-p["Ixy"], p["Iyy"], -p["Iyz"]],
                    [-p["Ixz"], -p["Iyz"], p["Izz"]]], dtype=float)
    S = skew(r_g)
    M = np.zeros((6, 6))
    M[:3, :3] = m * np.eye(3)
    M[:3, 3:] = -m * S
    M[3:, :3] = m * S
    M[3:, 3:] = I_g - m * S @ S
    M += np.diag([p[f"A_{c}"] for c in "uvwpqr"])
    return M


def _third_row(q: np.ndarray) -> np.ndarray:
    """Third row of R(q) (body -> NED): the depth component of a body vector."""
    w, x, y, z = q
    return np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])


def _advance(q: np.ndarray, omega: np.ndarray, dt: float) -> np.ndarray:
    """q ⊗ exp(ω dt / 2): the attitude after rotating at body rate ω for dt."""
    angle = float(np.linalg.norm(omega)) * dt
    if angle < 1e-14:
        return q
    axis = omega / np.linalg.norm(omega)
    h = 0.5 * angle
    dq = np.array([math.cos(h), *(math.sin(h) * axis)])
    w1, x1, y1, z1 = q
    w2, x2, y2, z2 = dq
    out = np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])
    return out / np.linalg.norm(out)


# ------------------------------------------------------------- running gear


@dataclass(frozen=True)
class RunningGear:
    """The tracks and wheels of a profile, as arrays (body FRD, metres)."""

    track_names: tuple[str, ...]
    track_pos: np.ndarray      # (T, 3) centre of the contact patch (ground plane of the track)
    track_l: np.ndarray        # (T,) contact length
    track_b: np.ndarray        # (T,) width
    wheel_names: tuple[str, ...]
    wheel_pos: np.ndarray      # (W, 3) wheel centre
    wheel_r: np.ndarray        # (W,) radius
    wheel_b: np.ndarray        # (W,) width

    @property
    def names(self) -> tuple[str, ...]:
        return self.track_names + self.wheel_names


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"{where} must be a finite number, got {value!r}",
                             fix=f"correct {where} in the vehicle profile")
    return float(value)


def running_gear(profile: Mapping[str, Any]) -> RunningGear:
    """Read ``[[tracks]]`` (name, position_m, length_m, width_m) and ``[[wheels]]``
    (name, position_m, radius_m, width_m) from a profile; refuse bad values by name."""
    names: list[str] = []
    tracks, wheels = profile.get("tracks", []), profile.get("wheels", [])
    if not isinstance(tracks, list) or not isinstance(wheels, list):
        raise ParameterError("profile: tracks and wheels must be arrays of tables ([[tracks]])",
                             fix="write [[tracks]] / [[wheels]] tables in the vehicle profile")
    if not tracks and not wheels:
        raise ParameterError("profile has no [[tracks]] and no [[wheels]]: nothing touches the soil",
                             fix="add [[tracks]] (name, position_m, length_m, width_m) or "
                                 "[[wheels]] (name, position_m, radius_m, width_m) to the profile")
    out: dict[str, list] = {"tp": [], "tl": [], "tb": [], "wp": [], "wr": [], "wb": []}
    for kind, items, size_key in (("tracks", tracks, "length_m"), ("wheels", wheels, "radius_m")):
        for k, item in enumerate(items):
            where = f"profile {kind}[{k}]"
            if not isinstance(item, Mapping):
                raise ParameterError(f"{where} must be a table", fix=f"write [[{kind}]] tables")
            allowed = {"name", "position_m", size_key, "width_m"}
            extra = sorted(set(item) - allowed)
            if extra:
                raise ParameterError(f"{where}: unknown key(s) {', '.join(extra)}",
                                     fix=f"use only {', '.join(sorted(allowed))}")
            name = item.get("name", f"{kind[:-1]}{k}")
            if not isinstance(name, str) or not name or name in names:
                raise ParameterError(f"{where}.name must be a unique non-empty string, got {name!r}",
                                     fix="give every track and wheel its own name")
            names.append(name)
            pos = item.get("position_m")
            if not isinstance(pos, (list, tuple)) or len(pos) != 3:
                raise ParameterError(f"{where}.position_m must be [x, y, z] in metres, got {pos!r}",
                                     fix="give the position in body FRD metres")
            pos = [_number(f"{where}.position_m", v) for v in pos]
            for key in (size_key, "width_m"):
                if key not in item:
                    raise ParameterError(f"{where}: missing {key}", fix=f"add {key} (metres)")
                value = _number(f"{where}.{key}", item[key])
                if not value > 0:
                    raise ParameterError(f"{where}.{key} = {value!r} is not allowed; it must be > 0 m",
                                         fix=f"give {key} a positive value in metres")
            if kind == "tracks":
                out["tp"].append(pos)
                out["tl"].append(float(item["length_m"]))
                out["tb"].append(float(item["width_m"]))
            else:
                out["wp"].append(pos)
                out["wr"].append(float(item["radius_m"]))
                out["wb"].append(float(item["width_m"]))
    return RunningGear(
        track_names=tuple(names[: len(tracks)]),
        track_pos=np.array(out["tp"], dtype=float).reshape(-1, 3),
        track_l=np.array(out["tl"], dtype=float),
        track_b=np.array(out["tb"], dtype=float),
        wheel_names=tuple(names[len(tracks):]),
        wheel_pos=np.array(out["wp"], dtype=float).reshape(-1, 3),
        wheel_r=np.array(out["wr"], dtype=float),
        wheel_b=np.array(out["wb"], dtype=float),
    )


def vehicle_parameters(profile: Mapping[str, Any]) -> dict[str, float]:
    """The profile's [parameters] with the FMU defaults for what it leaves out."""
    params = profile.get("parameters", {})
    if not isinstance(params, Mapping):
        raise ParameterError("profile [parameters] must be a table", fix="fix the vehicle profile")
    missing = [k for k in _REQUIRED_INERTIA if k not in params]
    if missing:
        raise ParameterError(
            f"profile [parameters] lacks {', '.join(missing)}: the component needs the vehicle's "
            "inertia (the same values the FMU gets)",
            fix="give the rig's profile key the vehicle profile the FMU uses",
        )
    out = dict(_FMU_DEFAULTS)
    for k, v in params.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(v)
    if not out["mass"] > 0:
        raise ParameterError(f"profile mass = {out['mass']!r} must be > 0 kg", fix="fix the profile")
    return out


# ------------------------------------------------------------- the physics


@dataclass
class Contact:
    """One evaluation of the soil forces: the body wrench and per-element values."""

    wrench: np.ndarray                 # (6,) X Y Z K M N about CO, body FRD
    traction_n: np.ndarray             # per element (tracks then wheels)
    compaction_resistance_n: np.ndarray
    lateral_n: np.ndarray
    normal_n: np.ndarray
    sinkage_m: np.ndarray
    slip: np.ndarray
    ground_speed_mps: np.ndarray
    drive_speed_mps: np.ndarray
    contact_area_m2: float = 0.0


class SoilModel:
    """The soil forces on a vehicle's running gear for a given pose and velocity."""

    def __init__(self, soil: Soil, gear: RunningGear, seabed_depth_m: float, *,
                 damping: float = 0.0, v_floor: float = 1e-2,
                 nodes: int = bekker.DEFAULT_NODES) -> None:
        self.soil, self.gear, self.seabed = soil, gear, float(seabed_depth_m)
        self.damping, self.v_floor, self.nodes = float(damping), float(v_floor), int(nodes)
        g = gear
        half = np.zeros_like(g.track_pos)
        half[:, 0] = 0.5 * g.track_l
        self._front = g.track_pos + half          # (T, 3)
        self._rear = g.track_pos - half

    def evaluate(self, depth: float, q: np.ndarray, nu: np.ndarray,
                 drive: np.ndarray) -> Contact:
        """Soil wrench for CO at ``depth`` (m), attitude ``q`` (w, x, y, z), body velocity
        ``nu`` (u v w p q r) and belt/rim speeds ``drive`` (m/s, tracks then wheels)."""
        g, soil = self.gear, self.soil
        row = _third_row(q)
        v_lin, omega = nu[:3], nu[3:]
        nt = len(g.track_names)
        wrench = np.zeros(6)
        parts = []
        area = 0.0
        if nt:
            ends = np.stack([self._front, self._rear])                 # (2, T, 3)
            z_ends = depth + ends @ row - self.seabed                  # (2, T)
            v_ends = v_lin + cross(omega, ends)                     # (2, T, 3)
            zdot_ends = v_ends @ row
            v_centre = v_lin + cross(omega, g.track_pos)            # (T, 3)
            u = v_centre[:, 0]
            V = drive[:nt]
            ref = np.maximum(np.maximum(np.abs(V), np.abs(u)), self.v_floor)
            i = slip_ratio(V, u, self.v_floor)
            f = bekker.track_contact(
                soil, g.track_b, g.track_l, z_ends[0], z_ends[1], i,
                zdot_front=zdot_ends[0], zdot_rear=zdot_ends[1],
                lateral_front=v_ends[0, :, 1] / ref, lateral_rear=v_ends[1, :, 1] / ref,
                damping=self.damping, belt_backward=V < 0, travel_backward=u < 0,
                nodes=self.nodes,
            )
            # node positions (body) and forces
            x = g.track_pos[:, 0:1] + 0.5 * g.track_l[:, None] - f.s
            pts = np.empty(x.shape + (3,))
            pts[..., 0] = x
            pts[..., 1] = g.track_pos[:, 1:2]
            pts[..., 2] = g.track_pos[:, 2:3]
            force = np.stack([f.tau_x * f.weight, f.tau_y * f.weight, -f.sigma * f.weight], axis=-1)
            rc = f.compaction_resistance_n * (u / np.maximum(np.abs(u), self.v_floor))
            wrench[:3] += force.sum(axis=(0, 1))
            wrench[3:] += cross(pts, force).sum(axis=(0, 1))
            rc_force = np.zeros((nt, 3))
            rc_force[:, 0] = -rc
            wrench[0] -= rc.sum()
            wrench[3:] += cross(g.track_pos, rc_force).sum(axis=0)
            area += float(np.sum(np.where(f.sigma > 0, f.weight, 0.0)))
            parts.append((f.traction_n, np.abs(rc), f.lateral_n, f.normal_n,
                          f.sinkage_m, i, u, V))
        nw = len(g.wheel_names)
        if nw:
            z = depth + g.wheel_pos @ row + g.wheel_r - self.seabed
            v_c = v_lin + cross(omega, g.wheel_pos)
            u = v_c[:, 0]
            V = drive[nt:]
            ref = np.maximum(np.maximum(np.abs(V), np.abs(u)), self.v_floor)
            i = slip_ratio(V, u, self.v_floor)
            f = bekker.wheel_contact(soil, g.wheel_b, g.wheel_r, z, i, zdot=v_c @ row,
                                     lateral=v_c[:, 1] / ref, damping=self.damping,
                                     nodes=self.nodes)
            th = f.theta
            s, c = np.sin(th), np.cos(th)
            r = g.wheel_r[:, None]
            pts = np.empty(th.shape + (3,))
            pts[..., 0] = g.wheel_pos[:, 0:1] + r * s
            pts[..., 1] = g.wheel_pos[:, 1:2]
            pts[..., 2] = g.wheel_pos[:, 2:3] + r * c
            w = f.weight
            force = np.stack([(f.tau_x * c - f.sigma * s) * w, f.tau_y * w,
                              -(f.sigma * c + f.tau_x * s) * w], axis=-1)
            wrench[:3] += force.sum(axis=(0, 1))
            wrench[3:] += cross(pts, force).sum(axis=(0, 1))
            area += float(np.sum(np.where(f.sigma > 0, f.weight * c, 0.0)))
            parts.append((f.traction_n, f.compaction_resistance_n, f.lateral_n, f.normal_n,
                          f.sinkage_m, i, u, V))
        cols = [np.concatenate([p[k] for p in parts]) for k in range(8)]
        return Contact(wrench, *cols, contact_area_m2=area)

    def static_sinkage(self, weight_n: float) -> float:
        """Sinkage of the level vehicle at rest whose soil reaction equals ``weight_n``
        (bisection on the depth), m below the seabed of the lowest contact."""
        if weight_n <= 0:
            return 0.0
        q = np.array([1.0, 0.0, 0.0, 0.0])
        lowest = self._lowest_body_z()
        zero = np.zeros(6)
        drive = np.zeros(len(self.gear.names))

        def load(z: float) -> float:
            return -self.evaluate(self.seabed - lowest + z, q, zero, drive).wrench[2]

        lo, hi = 0.0, 1e-3
        while load(hi) < weight_n:
            lo, hi = hi, 2 * hi
            if hi > 100:
                raise ParameterError(
                    f"the soil cannot carry the vehicle's net weight {weight_n:.0f} N "
                    "(sinkage beyond 100 m)", fix="check the soil parameters and the profile")
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if load(mid) < weight_n else (lo, mid)
        return 0.5 * (lo + hi)

    def _lowest_body_z(self) -> float:
        """Body z of the lowest point that touches the soil (level vehicle), m."""
        zs = [float(np.max(self.gear.track_pos[:, 2]))] if len(self.gear.track_names) else []
        if len(self.gear.wheel_names):
            zs.append(float(np.max(self.gear.wheel_pos[:, 2] + self.gear.wheel_r)))
        return max(zs)


# ------------------------------------------------------------- the component


class Terramechanics(Component):
    """Bekker–Wong soil forces on the tracks and wheels of a seabed vehicle: body wrench
    for the hydrodynamics FMU's ext_* inputs, and per-track traction, compaction and
    lateral resistance, normal load, sinkage and slip.

    Pressure–sinkage p = (k_c/b + k_φ) z^n, shear strength τ_max = c + p tan φ developed
    by Janosi–Hanamoto 1 − exp(−j/K) with j = i·s along the contact, slip
    i = 1 − v/(r ω). Tracks and wheels (Wong–Reece) come from the vehicle profile
    ([[tracks]], [[wheels]]); the seabed is the plane at ``seabed_depth_m``. The belt
    or rim speeds follow ``drive_schedule`` (or the ``drive`` input, by name). See
    docs/terramechanics.md.
    """

    inputs = (
        Port("state", vehicle_pb2.VehicleState,
             "vehicle state incl. body accelerations (the FMU's n e d, q, u…r, du…dr)"),
        Port("drive", signals_pb2.Signals,
             "belt or rim speed per track/wheel, m/s, by name (overrides drive_schedule)"),
    )
    outputs = (
        Port("wrench", vehicle_pb2.Wrench,
             "soil wrench on the body about CO, N and N·m, body FRD (to the FMU's ext_*)"),
        Port("diagnostics", signals_pb2.Signals,
             "per track/wheel NAME_traction_n, _compaction_resistance_n, _lateral_n, "
             "_normal_load_n, _sinkage_m, _slip, …; totals traction_n, resistance_n, …"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        seabed_depth_m: float = param(doc="depth of the (flat, level) seabed surface, NED d",
                                      unit="m")
        profile: dict[str, Any] = param(
            {}, "vehicle profile (the rig's profile key): [parameters] as the FMU gets them "
                "(mass, inertia, added mass) and [[tracks]] / [[wheels]] geometry")
        soil: str = param("toyoura_sand", "soil preset: " + ", ".join(PRESETS) + ", or custom")
        soil_parameters: dict[str, Any] = param(
            {}, "overrides: c_pa, phi_deg, k_c [N/m^(n+1)], k_phi [N/m^(n+2)], n, K_m, K_y_m")
        drive_schedule: Any = param(
            [], "rows [t_s, V_1 … V_N]: belt/rim speed per track then wheel (profile order), "
                "m/s, linear between rows, held after the last; none: 0")
        damping_ratio: float = param(
            1.0, "damping of the vertical soil contact, as a fraction of critical for the heave "
                 "mode at the static sinkage (soil dissipation; 0: none)")
        coupling: str = param("implicit", "implicit (backward Euler on the step, stable) or "
                                          "explicit (forces from the state at the step start)")
        nodes: int = param(bekker.DEFAULT_NODES,
                           "Gauss–Legendre nodes per track (per half arc of a wheel)")
        slip_speed_floor_mps: float = param(
            0.01, "speed below which slip and the sign of travel are regularised", unit="m/s")
        newton_iterations: int = param(10, "largest number of Newton iterations per step")

    @classmethod
    def ports_for(cls, params: Parameters):
        # Validate what can be validated without running, so `moonpool check` refuses
        # bad soils and bad geometry too.
        cls._validate(params)
        return tuple(cls.inputs), tuple(cls.outputs)

    @staticmethod
    def _validate(p: Parameters) -> tuple[Soil, RunningGear, dict[str, float]]:
        if not math.isfinite(p.seabed_depth_m):
            raise ParameterError(f"seabed_depth_m = {p.seabed_depth_m!r} must be finite",
                                 fix="give the seabed depth in metres (NED d, positive down)")
        if p.coupling not in COUPLINGS:
            raise ParameterError(f"coupling = {p.coupling!r} is not one of {', '.join(COUPLINGS)}",
                                 fix='use coupling = "implicit"')
        if not (math.isfinite(p.damping_ratio) and p.damping_ratio >= 0):
            raise ParameterError(f"damping_ratio = {p.damping_ratio!r} must be >= 0",
                                 fix="use a value such as 0.3 (0: no damping)")
        if not 2 <= p.nodes <= 200:
            raise ParameterError(f"nodes = {p.nodes} must be in [2, 200]", fix="use e.g. 16")
        if not (math.isfinite(p.slip_speed_floor_mps) and p.slip_speed_floor_mps > 0):
            raise ParameterError(f"slip_speed_floor_mps = {p.slip_speed_floor_mps!r} must be > 0",
                                 fix="use e.g. 0.01 m/s")
        if p.newton_iterations < 1:
            raise ParameterError(f"newton_iterations = {p.newton_iterations} must be >= 1",
                                 fix="use e.g. 6")
        soil = soil_from(p.soil, p.soil_parameters)
        gear = running_gear(p.profile)
        vehicle = vehicle_parameters(p.profile)
        rows = p.drive_schedule
        n = len(gear.names)
        ok = isinstance(rows, (list, tuple)) and all(
            isinstance(r, (list, tuple)) and len(r) == n + 1
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) for v in r)
            for r in rows)
        if not ok:
            raise ParameterError(
                f"drive_schedule must be rows [t_s, {', '.join(gear.names)}] (m/s), got {rows!r}",
                fix=f"e.g. drive_schedule = [[0, {', '.join(['0'] * n)}], "
                    f"[2, {', '.join(['0.3'] * n)}]]")
        times = [float(r[0]) for r in rows]
        if any(b <= a for a, b in itertools.pairwise(times)):
            raise ParameterError("drive_schedule times must increase strictly",
                                 fix="sort the rows by time")
        return soil, gear, vehicle

    # -- lifecycle ---------------------------------------------------------------

    def configure(self, params: Parameters) -> None:
        self.params = params
        self.soil, self.gear, vehicle = self._validate(params)
        self.M = mass_matrix(vehicle)
        self.names = self.gear.names
        self._times = np.array([float(r[0]) for r in params.drive_schedule])
        self._speeds = np.array([[float(v) for v in r[1:]] for r in params.drive_schedule]
                                ).reshape(-1, len(self.names))
        self._override: dict[str, float] = {}
        # Net weight in water at the seabed (the FMU's density ramp, rigid hull).
        v = vehicle
        rho = v["rho_surface"]
        if v["pycnocline_delta_rho"]:   # the FMU's density ramp (docs/hydrodynamics.md)
            w, dc, d = v["pycnocline_width"], v["pycnocline_depth"], params.seabed_depth_m
            frac = float(d >= dc) if w <= 0 else min(max((d - (dc - w / 2)) / w, 0.0), 1.0)
            rho += v["pycnocline_delta_rho"] * frac
        self.net_weight_n = (v["mass"] - rho * v.get("volume", 0.0134)) * v["g"]
        base = SoilModel(self.soil, self.gear, params.seabed_depth_m,
                         v_floor=params.slip_speed_floor_mps, nodes=params.nodes)
        self.static_sinkage_m = base.static_sinkage(self.net_weight_n)
        damping = 0.0
        if self.net_weight_n > 0 and params.damping_ratio > 0:
            # Heave stiffness at the static sinkage, and the contact area there.
            q = np.array([1.0, 0.0, 0.0, 0.0])
            zero6, drive0 = np.zeros(6), np.zeros(len(self.names))
            d0 = params.seabed_depth_m - base._lowest_body_z() + self.static_sinkage_m
            h = max(1e-6, 1e-3 * self.static_sinkage_m)
            c0 = base.evaluate(d0, q, zero6, drive0)
            c1 = base.evaluate(d0 + h, q, zero6, drive0)
            stiffness = -(c1.wrench[2] - c0.wrench[2]) / h
            heave_mass = self.M[2, 2]
            if c0.contact_area_m2 > 0 and stiffness > 0:
                damping = (2 * params.damping_ratio * math.sqrt(stiffness * heave_mass)
                           / c0.contact_area_m2)
        self.damping_pa_s_per_m = damping
        self.model = SoilModel(self.soil, self.gear, params.seabed_depth_m, damping=damping,
                               v_floor=params.slip_speed_floor_mps, nodes=params.nodes)
        self._prev = np.zeros(6)           # the wrench the vehicle was last given
        self._J: np.ndarray | None = None  # Newton Jacobian, kept between steps
        self._J_dt = 0.0
        self._steps = 0
        self._max_iter = 0
        self._unconverged = 0

    def initialize(self, start_time_ns: int):
        self._prev = np.zeros(6)

    def drive_speeds(self, t_s: float) -> np.ndarray:
        """Belt/rim speeds at t_s (schedule, then the drive input's overrides), m/s."""
        n = len(self.names)
        if len(self._times) == 0 or t_s < self._times[0]:
            v = np.zeros(n)
        else:  # linear between rows, held after the last
            v = np.array([np.interp(t_s, self._times, self._speeds[:, k]) for k in range(n)])
        for k, name in enumerate(self.names):
            if name in self._override:
                v[k] = self._override[name]
        return v

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]):
        drive_msg = inputs.get("drive")
        if drive_msg is not None:
            for s in drive_msg.signals:
                if s.name in self.names:
                    self._override[s.name] = float(s.value)
        state = inputs.get("state")
        dt = dt_ns * 1e-9
        implicit = self.params.coupling == "implicit"
        drive = self.drive_speeds((t_ns + (dt_ns if implicit else 0)) * 1e-9)
        wrench_msg = vehicle_pb2.Wrench(header=self.header(t_ns, "body"))
        diag = signals_pb2.Signals(header=self.header(t_ns, "body"))
        if state is None:
            self._prev = np.zeros(6)
            return {"wrench": wrench_msg, "diagnostics": diag}
        depth = state.position_ned_m.z
        o = state.orientation
        q = np.array([o.w, o.x, o.y, o.z], dtype=float)
        nq = np.linalg.norm(q)
        q = q / nq if nq > 0 else np.array([1.0, 0.0, 0.0, 0.0])
        lv, av = state.linear_velocity_body_mps, state.angular_velocity_body_radps
        nu = np.array([lv.x, lv.y, lv.z, av.x, av.y, av.z], dtype=float)
        la, aa = state.linear_acceleration_body_mps2, state.angular_acceleration_body_radps2
        acc = np.array([la.x, la.y, la.z, aa.x, aa.y, aa.z], dtype=float)
        tau_other = self.M @ acc - self._prev
        if implicit:
            contact, iterations = self._solve(depth, q, nu, tau_other, drive, dt)
        else:
            contact, iterations = self.model.evaluate(depth, q, nu, drive), 0
        self._steps += 1
        self._max_iter = max(self._max_iter, iterations)
        w = contact.wrench
        self._prev = w.copy()
        wrench_msg.force_n.x, wrench_msg.force_n.y, wrench_msg.force_n.z = w[:3]
        wrench_msg.torque_nm.x, wrench_msg.torque_nm.y, wrench_msg.torque_nm.z = w[3:]
        self._fill(diag, contact, nu, tau_other, iterations)
        return {"wrench": wrench_msg, "diagnostics": diag}

    def _solve(self, depth: float, q: np.ndarray, nu: np.ndarray, tau_other: np.ndarray,
               drive: np.ndarray, dt: float) -> tuple[Contact, int]:
        """Backward Euler over the step for the soil wrench (module docstring).

        Simplified Newton: the Jacobian M/dt − ∂τ_soil/∂ν⁺ (forward differences) is kept
        from step to step and recomputed only when the iteration converges slowly, so a
        steady step costs two or three force evaluations."""
        M, model = self.M, self.model
        row = _third_row(q)
        M_dt = M / dt

        def at(x: np.ndarray) -> Contact:
            d_next = depth + dt * float(row @ x[:3])
            q_next = _advance(q, x[3:], dt)
            return model.evaluate(d_next, q_next, x, drive)

        def residual(x: np.ndarray, c: Contact) -> np.ndarray:
            return M_dt @ (x - nu) - tau_other - c.wrench

        def jacobian(x: np.ndarray, c: Contact) -> np.ndarray:
            J = M_dt.copy()
            for k in range(6):
                h = 1e-7 * max(1.0, abs(x[k]))
                xp = x.copy()
                xp[k] += h
                J[:, k] -= (at(xp).wrench - c.wrench) / h
            return J

        # predictor: the vehicle's own acceleration (an explicit step)
        x = nu + dt * np.linalg.solve(M, tau_other + self._prev)
        contact = at(x)
        r = residual(x, contact)
        J = jacobian(x, contact) if self._J is None or self._J_dt != dt else self._J
        iterations = 0
        converged = False
        norm = float(np.max(np.abs(r)))
        while iterations < self.params.newton_iterations:
            iterations += 1
            dx = np.linalg.solve(J, -r)
            # Backtracking: accept the largest step 1, 1/2, 1/4 ... that reduces the
            # residual (the soil forces saturate, so a full step can overshoot).
            alpha = 1.0
            while True:
                x_try = x + alpha * dx
                c_try = at(x_try)
                r_try = residual(x_try, c_try)
                norm_try = float(np.max(np.abs(r_try)))
                if norm_try < (1 - 1e-4 * alpha) * norm or alpha < 1e-3:
                    break
                alpha *= 0.5
            slow = alpha < 1.0 or norm_try > 0.25 * norm
            x, contact, r, norm = x_try, c_try, r_try, norm_try
            if np.max(np.abs(alpha * dx)) < 1e-8 or norm < 1e-6:
                converged = True
                break
            if slow:
                J = jacobian(x, contact)      # converging slowly: refresh the Jacobian
        if not converged:
            self._unconverged += 1
        self._J, self._J_dt = J, dt
        return contact, iterations

    def _fill(self, diag, c: Contact, nu: np.ndarray, tau_other: np.ndarray,
              iterations: int) -> None:
        add = diag.signals.add
        for k, name in enumerate(self.names):
            add(name=f"{name}_traction_n", value=float(c.traction_n[k]))
            add(name=f"{name}_compaction_resistance_n", value=float(c.compaction_resistance_n[k]))
            add(name=f"{name}_drawbar_pull_n",
                value=float(c.traction_n[k] - c.compaction_resistance_n[k]))
            add(name=f"{name}_lateral_n", value=float(c.lateral_n[k]))
            add(name=f"{name}_normal_load_n", value=float(c.normal_n[k]))
            add(name=f"{name}_sinkage_m", value=float(c.sinkage_m[k]))
            add(name=f"{name}_slip", value=float(c.slip[k]))
            add(name=f"{name}_drive_speed_mps", value=float(c.drive_speed_mps[k]))
            add(name=f"{name}_ground_speed_mps", value=float(c.ground_speed_mps[k]))
        traction = float(np.sum(c.traction_n))
        compaction = float(np.sum(c.compaction_resistance_n))
        other = float(-tau_other[0])
        add(name="traction_n", value=traction)
        add(name="compaction_resistance_n", value=compaction)
        add(name="other_resistance_n", value=other)
        add(name="resistance_n", value=compaction + other)
        add(name="drawbar_pull_n", value=traction - compaction)
        add(name="lateral_n", value=float(np.sum(c.lateral_n)))
        add(name="normal_load_n", value=float(np.sum(c.normal_n)))
        add(name="yaw_moment_nm", value=float(c.wrench[5]))
        add(name="speed_mps", value=float(nu[0]))
        add(name="newton_iterations", value=float(iterations))

    def terminate(self):
        return {
            "static_sinkage_m": self.static_sinkage_m,
            "net_weight_n": self.net_weight_n,
            "damping_pa_s_per_m": self.damping_pa_s_per_m,
            "steps": self._steps,
            "max_newton_iterations": self._max_iter,
            "unconverged_steps": self._unconverged,
        }
