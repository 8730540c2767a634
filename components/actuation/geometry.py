"""Thruster geometry from a vehicle profile: the thruster table and the configuration
matrix B (Fossen's thrust configuration matrix T).

A profile's ``[[thrusters]]`` tables (docs/actuation.md (profile format)) give, per
thruster, its position r_i (body FRD, m), its unit thrust axis d_i for a positive
command, its force limits and, optionally, its thrust curve and rotor dynamics. The
body wrench tau = [X Y Z K M N] of thrusts f (N) is

    tau = B f,        column i of B = [d_i ; r_i x d_i]          (6 x n)

Everything here is pure numpy; ``ParameterError`` names the thruster at fault.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..sdk.errors import ParameterError
from ..sdk.frames import cross

AXES = ("X", "Y", "Z", "K", "M", "N")
"""The body wrench axes in order: forces X Y Z (N), moments K M N (N·m), FRD."""
AXIS_NAMES = ("surge (X)", "sway (Y)", "heave (Z)", "roll (K)", "pitch (M)", "yaw (N)")

DIRECTION_TOL = 1e-6
"""A thrust axis must have |‖d‖ − 1| ≤ this (profiles give unit vectors)."""

REQUIRED_KEYS = ("name", "position", "direction", "max_forward_n", "max_reverse_n")
OPTIONAL_KEYS = ("c_forward", "c_reverse", "max_speed_radps", "time_constant_s")


@dataclass(frozen=True)
class ThrusterSpec:
    """One thruster as a profile describes it (SI units, body FRD)."""

    name: str
    position_m: tuple[float, float, float]
    """Lever arm r_i from the body origin, m."""
    direction: tuple[float, float, float]
    """Unit thrust axis d_i for a positive command."""
    max_forward_n: float
    """Largest thrust along +d_i, N (>= 0)."""
    max_reverse_n: float
    """Largest thrust along -d_i, N (>= 0; 0: the thruster only pushes forward)."""
    c_forward: float | None = None
    """Thrust curve coefficient for omega >= 0: T = c_forward·omega², N/(rad/s)²."""
    c_reverse: float | None = None
    """Thrust curve coefficient for omega < 0: T = −c_reverse·omega², N/(rad/s)²."""
    max_speed_radps: float | None = None
    """Shaft speed limit |omega| <= this, rad/s."""
    time_constant_s: float | None = None
    """First-order lag of the shaft speed, s (0: none)."""

    @property
    def f_min(self) -> float:
        return -self.max_reverse_n

    @property
    def f_max(self) -> float:
        return self.max_forward_n


def _number(t: str, key: str, value: Any, component: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(
            f"thruster '{t}': {key} must be a finite number, got {value!r}",
            component=component, fix=f"set {key} of thruster '{t}' in the profile's [[thrusters]]",
        )
    return float(value)


def _vector(t: str, key: str, value: Any, component: str) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ParameterError(
            f"thruster '{t}': {key} must be 3 numbers [x, y, z] (body FRD), got {value!r}",
            component=component, fix=f"set {key} of thruster '{t}' to [x, y, z]",
        )
    x, y, z = (_number(t, key, v, component) for v in value)
    return (x, y, z)


def thrusters_from_profile(profile: Any, component: str = "") -> tuple[ThrusterSpec, ...]:
    """The ``[[thrusters]]`` of a profile's content (a table), validated.

    Refused, naming the thruster: a missing or ill-typed key, a zero or non-unit
    direction, a negative limit, limits that leave no range (max_forward_n +
    max_reverse_n = 0), a non-positive curve coefficient or speed limit, a negative
    time constant, a duplicated name, a key that looks like a misspelt known key.
    """
    if not isinstance(profile, Mapping) or not profile:
        raise ParameterError(
            "no vehicle profile given: the thrusters' geometry comes from its [[thrusters]]",
            component=component,
            fix='add profile = "../fmus/hydrodynamics/profiles/bluerov2_heavy.toml" to the '
                "component in the rig",
        )
    tables = profile.get("thrusters")
    if not isinstance(tables, Sequence) or isinstance(tables, str) or not tables:
        raise ParameterError(
            "the profile has no [[thrusters]] tables",
            component=component, fix="describe each thruster in a [[thrusters]] table "
                                     "(docs/actuation.md (profile format))",
        )
    known = REQUIRED_KEYS + OPTIONAL_KEYS
    specs: list[ThrusterSpec] = []
    seen: set[str] = set()
    for i, table in enumerate(tables):
        label = f"#{i + 1}"
        if not isinstance(table, Mapping):
            raise ParameterError(f"thruster {label} is not a table", component=component,
                                 fix="each [[thrusters]] entry must be a TOML table")
        name = table.get("name", "")
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(f"thruster {label} has no name", component=component,
                                 fix='give it name = "t1" (names are unique)')
        t = name = name.strip()
        if name in seen:
            raise ParameterError(f"thruster name '{name}' is used twice", component=component,
                                 fix="give every thruster its own name")
        seen.add(name)
        for key in table:
            if key not in known:
                near = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
                if near:
                    raise ParameterError(
                        f"thruster '{t}': unknown key '{key}' (did you mean '{near[0]}'?)",
                        component=component, fix=f"rename it to {near[0]}",
                    )
        for key in REQUIRED_KEYS[1:]:
            if key not in table:
                raise ParameterError(f"thruster '{t}': missing {key}", component=component,
                                     fix=f"add {key} to thruster '{t}' in the profile")
        position = _vector(t, "position", table["position"], component)
        direction = _vector(t, "direction", table["direction"], component)
        norm = math.sqrt(sum(v * v for v in direction))
        if norm == 0.0:
            raise ParameterError(f"thruster '{t}': direction is the zero vector",
                                 component=component,
                                 fix="give the unit thrust axis for a positive command")
        if abs(norm - 1.0) > DIRECTION_TOL:
            raise ParameterError(
                f"thruster '{t}': direction {list(direction)} is not a unit vector "
                f"(norm {norm:.6g})",
                component=component, fix=f"divide it by its norm: "
                f"{[round(v / norm, 12) for v in direction]}",
            )
        direction = (direction[0] / norm, direction[1] / norm, direction[2] / norm)
        fwd = _number(t, "max_forward_n", table["max_forward_n"], component)
        rev = _number(t, "max_reverse_n", table["max_reverse_n"], component)
        if fwd < 0 or rev < 0:
            raise ParameterError(
                f"thruster '{t}': the limits [-max_reverse_n, max_forward_n] = [{-rev:g}, {fwd:g}] N "
                "exclude zero thrust (both limits are magnitudes and must be >= 0)",
                component=component, fix=f"give thruster '{t}' max_forward_n >= 0 and "
                                         "max_reverse_n >= 0 (positive magnitudes)",
            )
        if fwd + rev <= 0:
            raise ParameterError(
                f"thruster '{t}': max_forward_n = max_reverse_n = 0 leaves no thrust range",
                component=component, fix=f"give thruster '{t}' a positive limit (to leave a "
                                         "working thruster unused, list it in the allocator's "
                                         "disabled)",
            )
        extra: dict[str, float | None] = {}
        for key in OPTIONAL_KEYS:
            if key not in table:
                extra[key] = None
                continue
            v = _number(t, key, table[key], component)
            if key == "time_constant_s" and v < 0:
                raise ParameterError(f"thruster '{t}': time_constant_s must be >= 0, got {v:g}",
                                     component=component, fix="use 0 for no rotor lag")
            if key != "time_constant_s" and v <= 0:
                raise ParameterError(f"thruster '{t}': {key} must be > 0, got {v:g}",
                                     component=component, fix=f"give a positive {key}")
            extra[key] = v
        specs.append(ThrusterSpec(name, position, direction, fwd, rev, **extra))
    return tuple(specs)


def configuration_matrix(thrusters: Sequence[ThrusterSpec]) -> np.ndarray:
    """B (6 x n): column i = [d_i ; r_i x d_i]."""
    d = np.array([t.direction for t in thrusters], dtype=float).reshape(-1, 3)
    r = np.array([t.position_m for t in thrusters], dtype=float).reshape(-1, 3)
    return np.vstack([d.T, cross(r, d).T])


def _fmt_relation(r: np.ndarray, idx: Sequence[int], pivot: int) -> str:
    """``M = 0.085·X`` for the relation r·tau = 0 solved for axis idx[pivot]."""
    terms = ""
    for c, k in zip(-r / r[pivot], idx):
        if k == idx[pivot] or abs(c) <= 1e-9:
            continue
        mag = "" if abs(abs(c) - 1) < 1e-9 else f"{abs(c):.3g}·"
        if terms:
            terms += f" {'-' if c < 0 else '+'} {mag}{AXES[k]}"
        else:
            terms = f"{'-' if c < 0 else ''}{mag}{AXES[k]}"
    return f"{AXES[idx[pivot]]} = {terms or '0'}"


def _rank(M: np.ndarray, rtol: float) -> int:
    if M.size == 0:
        return 0
    s = np.linalg.svd(M, compute_uv=False)
    return int(np.sum(s > rtol * max(float(s.max()), 1.0)))


def _normalised_rows(B: np.ndarray, idx: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    Bs = np.asarray(B, dtype=float)[list(idx), :]
    norm = np.linalg.norm(Bs, axis=1) if Bs.size else np.zeros(len(idx))
    return Bs / np.where(norm > 0, norm, 1.0)[:, None], norm


def unproducible_axes(B: np.ndarray, axes: Sequence[int] = range(6),
                      rtol: float = 1e-9) -> list[str]:
    """Sentences naming the axes (among ``axes``) that B cannot produce on their own.

    Axis k is producible on its own iff e_k lies in the range of B (restricted to the
    rows ``axes``), i.e. is orthogonal to every relation r with rᵀB = 0 (the null
    space of Bᵀ). Axes no thruster acts on are named as such; the others that appear
    in a relation are named with the relations, solved for one axis each (reduced
    row echelon form, e.g. "M = 0.085·X": pitch always comes with surge). Rows are
    normalised first so the rank test does not depend on units. [] when B_S has full
    row rank.
    """
    idx = list(axes)
    Bn, norm = _normalised_rows(B, idx)
    absent = [j for j in range(len(idx)) if norm[j] == 0]
    present = [j for j in range(len(idx)) if norm[j] > 0]
    out: list[str] = []
    if absent:
        names = [AXIS_NAMES[idx[j]] for j in absent]
        text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        it = "it" if len(names) == 1 else "them"
        out.append(f"{text} cannot be produced by this thruster geometry (no thruster has "
                   f"a force along or a moment about {it})")
    if present:
        P = Bn[present]
        U = np.linalg.svd(P, full_matrices=True)[0]
        rank = _rank(P, rtol)
        N = U[:, rank:]  # orthonormal basis of the relations, normalised rows
        if N.shape[1]:
            pidx = [idx[j] for j in present]
            R = (N / norm[present][:, None]).T  # relations in physical units, r·tau = 0
            # reduced row echelon form, pivots taken from the last axis backwards
            R = R.copy()
            pivots = []
            row = 0
            for col in reversed(range(R.shape[1])):
                if row >= R.shape[0]:
                    break
                p = row + int(np.argmax(np.abs(R[row:, col])))
                if abs(R[p, col]) < 1e-9 * np.abs(R).max():
                    continue
                R[[row, p]] = R[[p, row]]
                R[row] /= R[row, col]
                for r2 in range(R.shape[0]):
                    if r2 != row:
                        R[r2] -= R[r2, col] * R[row]
                pivots.append(col)
                row += 1
            R[np.abs(R) < 1e-12] = 0.0
            coupled = [AXIS_NAMES[pidx[c]] for c in range(len(pidx)) if np.any(R[:, c] != 0)]
            text = coupled[0] if len(coupled) == 1 else ", ".join(coupled[:-1]) + " and " + coupled[-1]
            relations = "; ".join(_fmt_relation(R[i], pidx, c) for i, c in enumerate(pivots))
            out.append(f"{text} cannot be produced independently by this thruster geometry: "
                       f"every wrench it makes satisfies {relations}")
    return out


PRIORITY = (0, 1, 2, 5, 3, 4)
"""Axis order for suggesting a controllable subset: X Y Z N first (4-DOF), then K M."""


def producible_subset(B: np.ndarray, axes: Sequence[int] = range(6), rtol: float = 1e-9
                      ) -> list[int]:
    """A largest set of ``axes`` that B can produce independently (greedy in PRIORITY
    order: each axis is kept if it raises the rank)."""
    keep: list[int] = []
    for k in PRIORITY:
        if k not in axes:
            continue
        Bn, _ = _normalised_rows(B, keep + [k])
        if _rank(Bn, rtol) == len(keep) + 1:
            keep.append(k)
    return sorted(keep)
