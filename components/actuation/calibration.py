"""Fit the thrust-curve coefficients of each thruster from bollard-pull measurements
(``moonpool calibrate thrusters``; docs/calibration-hydro.md (thrusters)).

Call order::

    read_bollard(path) -> list[Sample]           one CSV (format below), checked
    fit_side(thruster, side, samples) -> SideFit least_squares of T − c·ω|ω|, σ, RMS
    calibrate(paths, profile, partial) -> Result read, group by thruster, fit both sides
    format_report(result) -> str                 the coefficient table and notes
    write_profile(result, profile_text, sources) -> str
        the profile's own text with c_forward / c_reverse replaced (or added) in each
        measured [[thrusters]] table; nothing else changed

Model (components/actuation/thrusters.py, docs/actuation.md)::

    T(ω) = c_forward · ω|ω|   for ω ≥ 0
    T(ω) = c_reverse · ω|ω|   for ω < 0        (c_reverse > 0, so T < 0)

Each side is fitted on its own samples with ``scipy.optimize.least_squares`` (c ≥ 0);
its standard uncertainty is √(s² (JᵀJ)⁻¹), s² = Σr² / (n − 1), and the RMS residual
√(Σr² / n) is reported. A zero speed belongs to the forward side (T = 0 there): it
carries no information on c but counts in the residual.

Bollard CSV: ``#`` comment lines and blank lines skipped; a header row with
``speed_radps`` (shaft speed, rad/s, signed: negative = reverse) and ``thrust_n``
(measured thrust along the thruster's axis, N, signed: negative = pulling backwards),
and ``thruster`` (its name in the profile) — or no ``thruster`` column, and then the
file's stem names the thruster (``t3.csv``). Other columns are ignored.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from ..sdk import tomlfile
from ..sdk.errors import FitFailed, ParameterError
from .geometry import thrusters_from_profile
from .thrusters import DEFAULT_MAX_SPEED_RADPS

SIDES = ("forward", "reverse")
MAX_RELATIVE_SIGMA = 0.5
"""A side whose 1σ exceeds this fraction of its coefficient is not determined (exit 1)."""


MIN_WEIGHTED = 10
"""With at least this many samples a side is fitted twice: the second time weighted by
the noise model estimated from the first fit's residuals (``_noise_model``)."""


def _noise_model(thrust: np.ndarray, abs_resid: np.ndarray) -> np.ndarray:
    """σ_i ∝ a + b·|T_i| (a load cell: an offset plus a fraction of the reading), a and
    b ≥ 0 from a least-squares line through the absolute residuals; a is kept above
    1e-3 of the largest thrust so that no sample gets an unbounded weight."""
    design = np.column_stack([np.ones_like(thrust), thrust])
    ab = least_squares(lambda p: design @ p - abs_resid, [float(np.mean(abs_resid)), 0.0],
                       bounds=([0.0, 0.0], [np.inf, np.inf])).x
    floor = 1e-3 * max(float(np.max(thrust)), 1e-12)
    return np.maximum(ab[0], floor) + ab[1] * thrust



@dataclass(frozen=True)
class Sample:
    """One bollard-pull measurement."""

    thruster: str
    speed_radps: float
    thrust_n: float
    path: str
    """The CSV it came from."""


@dataclass(frozen=True)
class SideFit:
    """One side of one thruster's curve."""

    thruster: str
    side: str
    """'forward' or 'reverse'."""
    coefficient: float
    """c_forward or c_reverse, N/(rad/s)²."""
    sigma: float
    """Its standard uncertainty, N/(rad/s)²."""
    rms_n: float
    """RMS residual of the fit, N."""
    samples: int
    profile_value: float | None
    """The profile's coefficient before the fit (None: the key was absent)."""
    files: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    """Every fitted side; the notes the report prints under the table."""

    fits: tuple[SideFit, ...]
    kept: tuple[str, ...]
    """Thrusters (or 'name side') not measured: their coefficients kept from the profile."""
    notes: tuple[str, ...]


def read_bollard(path: Path | str) -> list[Sample]:
    """The samples of one bollard CSV (format in the module docstring). ParameterError
    naming the file, the row or column, and the fix, on anything else."""
    path = Path(path)

    def bad(msg: str, fix: str):
        raise ParameterError(f"{path}: {msg}", fix=fix)

    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = [(i + 1, ln) for i, ln in enumerate(f.read().splitlines())
                     if ln.strip() and not ln.lstrip().startswith("#")]
    except (OSError, UnicodeDecodeError) as exc:
        bad(f"cannot read the bollard-pull file ({getattr(exc, 'strerror', None) or exc})",
            "give an existing CSV file (docs/calibration-hydro.md (thrusters))")
    if not lines:
        bad("no header and no samples", "write a header 'thruster,speed_radps,thrust_n' "
            "and one row per measurement")
    rows = list(csv.reader(ln for _, ln in lines))
    head = [h.strip() for h in rows[0]]
    missing = [c for c in ("speed_radps", "thrust_n") if c not in head]
    if missing:
        bad(f"no column {', '.join(repr(c) for c in missing)} in the header {head}",
            "name the columns thruster, speed_radps (rad/s, signed) and thrust_n (N, signed)")
    if len(rows) < 2:
        bad("a header but no samples", "add one row per measurement")
    col = {h: i for i, h in enumerate(head)}
    out = []
    for (line, _), r in zip(lines[1:], rows[1:]):
        if len(r) != len(head):
            bad(f"line {line} has {len(r)} values for {len(head)} columns", "fix the row")
        try:
            w, t = float(r[col["speed_radps"]]), float(r[col["thrust_n"]])
        except ValueError as exc:
            bad(f"line {line}: a value is not a number ({exc})",
                "write plain numbers in speed_radps and thrust_n")
        if not (math.isfinite(w) and math.isfinite(t)):
            bad(f"line {line}: non-finite value (speed {w}, thrust {t})",
                "remove the NaN/inf rows")
        name = r[col["thruster"]].strip() if "thruster" in col else path.stem
        if not name:
            bad(f"line {line}: empty thruster name", "give the thruster's profile name")
        out.append(Sample(name, w, t, str(path)))
    return out


def fit_side(thruster: str, side: str, samples: list[Sample],
             profile_value: float | None = None) -> SideFit:
    """Least squares of T − c·ω|ω| over one side's samples, c ≥ 0. FitFailed (naming
    the thruster, the side and the files) if it does not converge, ends at c = 0 (the
    thrust does not grow with the speed in that direction) or is not determined."""
    w = np.array([s.speed_radps for s in samples])
    t = np.array([s.thrust_n for s in samples])
    x = w * np.abs(w)
    n = len(t)
    files = tuple(dict.fromkeys(s.path for s in samples))
    named = f"thruster '{thruster}' {side} ({', '.join(files)})"
    # work in c / scale so the parameter is of order 1 (c is ~1e-4 N/(rad/s)²)
    scale = float(np.sum(np.abs(t)) / np.sum(np.abs(x))) if np.any(x) else 1.0
    scale = scale if scale > 0 else 1.0
    weight = np.ones_like(t)
    for _ in range(2 if n >= MIN_WEIGHTED else 1):
        res = least_squares(lambda p: (p[0] * scale * x - t) * weight, [1.0],
                            bounds=([0.0], [np.inf]), method="trf")
        if not res.success or not np.all(np.isfinite(res.x)):
            raise FitFailed(f"{named}: the fit did not converge ({res.message})",
                            fix="check the samples (speed in rad/s, thrust in N)")
        weight = 1.0 / _noise_model(np.abs(res.x[0] * scale * x), np.abs(res.fun / weight))
    c = float(res.x[0]) * scale
    resid = c * x - t
    jac = res.jac / scale  # d (weighted residual) / d c
    jtj = float((jac.T @ jac)[0, 0])
    s2 = float(np.sum(res.fun ** 2)) / max(n - 1, 1)
    sigma = math.sqrt(s2 / jtj) if jtj > 0 else math.inf
    sign = "positive" if side == "forward" else "negative"
    if c <= 1e-9 * scale or res.active_mask[0] != 0:
        raise FitFailed(f"{named}: the fit ends at c_{side} = 0: the thrust does not grow "
                        f"with the {side} speed", fix=f"check the signs: a {side} speed "
                        f"must give a {sign} thrust (flip the load cell's sign if it is "
                        "the other way)")
    if not sigma < MAX_RELATIVE_SIGMA * c:
        raise FitFailed(f"{named}: c_{side} = {c:.4g} ± {sigma:.2g} is not determined by "
                        f"the samples", fix=f"measure at several {side} speeds up to "
                        "the full one")
    return SideFit(thruster, side, c, sigma, float(np.sqrt(np.mean(resid ** 2))), n,
                   profile_value, files)


def calibrate(paths: list[Path], profile: dict, partial: bool = False,
              progress: Callable[[str], None] | None = None) -> Result:
    """Read the files, group the samples by thruster and fit each side. Refused
    (ParameterError): no file, a thruster the profile does not have, a measured
    thruster without forward (ω > 0) or reverse (ω < 0) samples — unless ``partial``:
    then that side's coefficient is kept from the profile and a note says so."""
    if not paths:
        raise ParameterError("no bollard-pull file given",
                             fix="give one or more CSVs (thruster, speed_radps, thrust_n)")
    specs = thrusters_from_profile(profile)
    names = [s.name for s in specs]
    samples = [s for p in paths for s in read_bollard(p)]
    for s in samples:
        if s.thruster not in names:
            raise ParameterError(
                f"{s.path}: thruster '{s.thruster}' is not in the profile (it has "
                f"{', '.join(names)})", fix="name the thruster as the profile's "
                "[[thrusters]] name does (column thruster, or the file's stem)")
    fits, kept, notes = [], [], []
    for spec in specs:
        mine = [s for s in samples if s.thruster == spec.name]
        if not mine:
            kept.append(spec.name)
            continue
        for side in SIDES:
            part = [s for s in mine if (s.speed_radps >= 0 if side == "forward"
                                        else s.speed_radps < 0)]
            old = spec.c_forward if side == "forward" else spec.c_reverse
            if not any(s.speed_radps != 0 for s in part):
                files = ", ".join(dict.fromkeys(s.path for s in mine))
                sign = "positive" if side == "forward" else "negative"
                if not partial:
                    raise ParameterError(
                        f"{files}: thruster '{spec.name}' has no {side} samples ({sign} "
                        f"speed_radps), so c_{side} cannot be fitted",
                        fix=f"add {side} measurements of '{spec.name}', or pass --partial "
                            f"to keep its c_{side} from the profile")
                kept.append(f"{spec.name} {side}")
                notes.append(f"thruster '{spec.name}': no {side} samples, c_{side} kept "
                             f"from the profile ({old if old is not None else 'default'})")
                continue
            if progress:
                progress(f"fitting {spec.name} {side} on {len(part)} samples")
            fit = fit_side(spec.name, side, part, old)
            fits.append(fit)
            limit = spec.max_forward_n if side == "forward" else spec.max_reverse_n
            w_max = spec.max_speed_radps or DEFAULT_MAX_SPEED_RADPS
            top = fit.coefficient * w_max ** 2
            if limit > 0 and top < limit:
                notes.append(
                    f"thruster '{spec.name}': the fitted {side} curve reaches {top:.4g} N "
                    f"at max_speed_radps = {w_max:.4g}, below max_{side}_n = {limit:.4g} N: "
                    f"the Thrusters component refuses that (fix: lower max_{side}_n to "
                    f"{math.floor(top * 100) / 100} or raise max_speed_radps in the "
                    "written profile)")
    if not fits:
        raise ParameterError("no side of any thruster could be fitted",
                             fix="give bollard-pull samples at non-zero speeds")
    return Result(tuple(fits), tuple(kept), tuple(notes))


def format_report(res: Result) -> str:
    """The coefficient table (fitted ± 1σ, the profile's value, the change, the RMS
    residual), then the notes."""
    lines = ["| thruster | coefficient | fitted ± 1σ (N/(rad/s)²) | profile | change | "
             "samples | RMS residual (N) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for f in res.fits:
        old = f"{f.profile_value:.4e}" if f.profile_value is not None else "-"
        change = (f"{(f.coefficient / f.profile_value - 1) * 100:+.2f}%"
                  if f.profile_value else "-")
        lines.append(f"| {f.thruster} | c_{f.side} | {f.coefficient:.4e} ± {f.sigma:.1e} | "
                     f"{old} | {change} | {f.samples} | {f.rms_n:.3g} |")
    if res.kept:
        lines.append(f"kept from the profile (not measured): {', '.join(res.kept)}")
    lines += [f"note: {n}" for n in res.notes]
    return "\n".join(lines)


_TABLE = re.compile(r"^\s*\[\[\s*thrusters\s*\]\]\s*(#.*)?$")
_HEADER = re.compile(r"^\s*\[")
_NAME = re.compile(r"""^\s*name\s*=\s*(["'])(.*?)\1""")


def _key(k: str) -> re.Pattern:
    return re.compile(rf"^(\s*){k}\s*=")


def write_profile(res: Result, profile_text: str, sources: str) -> str:
    """The profile's own text with, in each fitted thruster's ``[[thrusters]]`` table,
    the ``c_forward`` / ``c_reverse`` line replaced (or added after the table's last
    key) by the fitted value with a comment giving its 1σ; a comment at the top names
    the bollard files. Everything else is left as it was. ParameterError if a fitted
    thruster's table cannot be found in the text (thrusters written as inline tables)."""
    values = {(f.thruster, f.side): f for f in res.fits}
    lines = profile_text.splitlines()
    # the [[thrusters]] tables: (first line, end line exclusive, name)
    tables, i = [], 0
    while i < len(lines):
        if _TABLE.match(lines[i]):
            j = i + 1
            while j < len(lines) and not _HEADER.match(lines[j]):
                j += 1
            name = next((m.group(2) for ln in lines[i + 1:j] if (m := _NAME.match(ln))), None)
            tables.append((i, j, name))
            i = j
        else:
            i += 1
    found = {t[2] for t in tables}
    for th in {f.thruster for f in res.fits} - found:
        raise ParameterError(f"thruster '{th}': no [[thrusters]] table with name = \"{th}\" "
                             "in the profile's text, so it cannot be edited",
                             fix="write each thruster as a [[thrusters]] table")
    edits: dict[int, str] = {}
    inserts: dict[int, list[str]] = {}
    for start, end, name in tables:
        for side in SIDES:
            f = values.get((name, side))
            if f is None:
                continue
            text = (f"c_{side} = {float(f'{f.coefficient:.6g}')!r}      # N/(rad/s)^2, "
                    f"fitted ± {f.sigma:.2g} (1 sigma), RMS residual {f.rms_n:.3g} N")
            at = next((k for k in range(start + 1, end) if _key(f"c_{side}").match(lines[k])),
                      None)
            if at is not None:
                edits[at] = _key(f"c_{side}").match(lines[at]).group(1) + text
            else:
                last = max(k for k in range(start, end)
                           if lines[k].strip() and not lines[k].lstrip().startswith("#"))
                inserts.setdefault(last, []).append(text)
    out = [f"# c_forward / c_reverse fitted by moonpool calibrate thrusters from {sources}"]
    for k, ln in enumerate(lines):
        out.append(edits.get(k, ln))
        out += inserts.get(k, [])
    text = "\n".join(out) + "\n"
    parsed = {t["name"]: t for t in tomlfile.loads(text).get("thrusters", [])}
    for (name, side), f in values.items():  # the edit did what it meant to
        assert math.isclose(parsed[name][f"c_{side}"], f.coefficient, rel_tol=1e-5), name
    return text
