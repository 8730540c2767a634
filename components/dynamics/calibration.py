"""Fit the hydrodynamics FMU's Fossen parameters per axis from single-axis trials
(FinsSim's calibration; docs/calibration-hydro.md).

Call order::

    read_trial(path) -> Trial                  one CSV (format below), checked
    fit_axis(axis, trials, rigid, ...) -> AxisFit
        least_squares over (A, D1, D2[, b], v0 per trial) of the replay error (output error)
    replay(axis, params, trial) -> velocity    the model driven by the trial's thrust
    nrmse(measured, replayed)                  RMSE / (max − min) of the measured
    calibrate(paths, profile, holdout) -> Result   read, then fit_trials: every axis found

Model of one axis i (decoupled; u, v, w, p, q, r), the calibrated Fossen backend's
diagonal terms with everything else held at zero::

    (M_RB,ii + A_i) ν̇_i = τ_i − D1_i ν_i − D2_i |ν_i| ν_i + b_i

M_RB,ii is the profile's rigid-body term (mass, or Ixx/Iyy/Izz + m (r_g terms)); b_i a
constant (heave, z down: the net weight W − B; 0 for the other axes). Each trial's
initial velocity is fitted with them. The
replay integrates it with RK4 at the trial's sample instants, the thrust held between
samples, from that initial velocity (a held-out trial: from its first measured value).
Parameters are fitted with
``scipy.optimize.least_squares`` (trust-region reflective, A, D1, D2 ≥ 0); their
1σ uncertainties are √diag(s² (JᵀJ)⁻¹), s² the residual variance.

Trial CSV: a header row, then one row per sample; columns ``t`` (s, increasing), the
excited axis's thrust ``tau_X`` / ``tau_Y`` / ``tau_Z`` (N) or ``tau_K`` / ``tau_M`` /
``tau_N`` (N·m) and its measured velocity ``u`` / ``v`` / ``w`` (m/s) or ``p`` / ``q`` /
``r`` (rad/s); other columns are ignored. One trial excites one axis (the first thrust
column that is not all zero).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from ..sdk import tomlfile
from ..sdk.errors import FitFailed, MoonpoolError, ParameterError

AXES = ("u", "v", "w", "p", "q", "r")
THRUST = dict(zip(AXES, ("tau_X", "tau_Y", "tau_Z", "tau_K", "tau_M", "tau_N")))



@dataclass(frozen=True)
class Trial:
    """One single-axis trial."""

    path: Path
    """The CSV file it was read from."""
    axis: str
    """The excited axis (u … r)."""
    t: np.ndarray
    """Sample instants, s."""
    tau: np.ndarray
    """Thrust on the axis at each sample, N or N·m."""
    vel: np.ndarray
    """Measured velocity of the axis, m/s or rad/s."""


@dataclass(frozen=True)
class AxisFit:
    """The fitted coefficients of one axis and their 1σ uncertainties."""

    axis: str
    """u … r."""
    added_mass: float
    """A_i (positive magnitude), kg or kg·m²."""
    d1: float
    """D1_i, linear damping."""
    d2: float
    """D2_i, quadratic damping."""
    bias: float
    """b_i, constant force (heave: B − W), N or N·m."""
    sigma: dict[str, float] = field(default_factory=dict)
    """1σ of each coefficient (keys A, D1, D2, b)."""
    train: tuple[str, ...] = ()
    """Trials fitted on."""
    nrmse_train: float = math.nan
    """Replay NRMSE on the fitting trials."""
    nrmse_holdout: dict[str, float] = field(default_factory=dict)
    """Replay NRMSE on each held-out trial."""


WRENCH_TOPIC = "/thrust/wrench"
"""Default topic of the applied wrench (moonpool.v1.Wrench) in an MCAP trial: the
output of rigs/hydro_fmu.toml's source; give the allocator's or thrusters' output for a
vehicle driven by thrusters."""
STATE_TOPIC = "/vehicle/state"
"""Default topic of the body velocities (moonpool.v1.VehicleState) in an MCAP trial."""
WRENCH_FIELDS = dict(zip(AXES, ("force_n.x", "force_n.y", "force_n.z", "torque_nm.x",
                                "torque_nm.y", "torque_nm.z")))
VELOCITY_FIELDS = dict(zip(AXES, ("linear_velocity_body_mps.x", "linear_velocity_body_mps.y",
                                  "linear_velocity_body_mps.z", "angular_velocity_body_radps.x",
                                  "angular_velocity_body_radps.y",
                                  "angular_velocity_body_radps.z")))


def read_mcap_trial(path: Path | str, wrench_topic: str = WRENCH_TOPIC,
                    state_topic: str = STATE_TOPIC) -> Trial:
    """One trial from a moonpool recording: t = the state messages' log times (s, from
    the first), the velocity of the excited axis from ``state_topic``, and the thrust
    the wrench on ``wrench_topic`` held at each state instant (the last wrench logged at
    or before it; 0 before the first). The excited axis is the first wrench component
    that is not all zero. ParameterError naming the file, the topic and the fix."""
    from ..sources.signal import recorded_field

    path = Path(path)
    try:
        wrench = {a: recorded_field(path, wrench_topic, WRENCH_FIELDS[a]) for a in AXES}
        st, _ = recorded_field(path, state_topic, VELOCITY_FIELDS["u"])
    except MoonpoolError as exc:
        raise ParameterError(exc.message,
                             fix=f"{exc.fix}; name the topics with --wrench-topic "
                                 "(moonpool.v1.Wrench) and --state-topic "
                                 "(moonpool.v1.VehicleState)") from None
    excited = [a for a in AXES if np.any(np.asarray(wrench[a][1]) != 0)]
    if not excited:
        raise ParameterError(f"{path}: the wrench on {wrench_topic} is zero throughout: "
                             "the trial excites no axis",
                             fix="give the topic of the applied wrench (--wrench-topic)")
    axis = excited[0]
    vt, vel = recorded_field(path, state_topic, VELOCITY_FIELDS[axis])
    wt, tau = (np.asarray(x, dtype=float) for x in wrench[axis])
    t_ns, vel = np.asarray(vt, dtype=np.int64), np.asarray(vel, dtype=float)
    last = np.append(np.diff(t_ns) != 0, True)  # at a repeated instant (Initialize's
    t_ns, vel = t_ns[last], vel[last]           # message, then step 0's) the last one
    k = np.searchsorted(np.asarray(wt, dtype=np.int64), t_ns, side="right") - 1
    held = np.where(k >= 0, tau[np.maximum(k, 0)], 0.0)
    t = (t_ns - t_ns[0]) * 1e-9
    if len(t) < 3 or not np.all(np.diff(t) > 0):
        raise ParameterError(f"{path}: {state_topic} needs at least three messages at "
                             "increasing times", fix="record a longer trial")
    return Trial(path, axis, t, held, vel)


def read_trial(path: Path | str, wrench_topic: str = WRENCH_TOPIC,
               state_topic: str = STATE_TOPIC) -> Trial:
    """One trial: a moonpool recording (``.mcap``, ``read_mcap_trial``) or a CSV (format
    in the module docstring). ParameterError naming the file, the column or row, and
    the fix, on anything else."""
    path = Path(path)
    if path.suffix.lower() == ".mcap":
        return read_mcap_trial(path, wrench_topic, state_topic)

    def bad(msg: str, fix: str):
        raise ParameterError(f"{path}: {msg}", fix=fix)

    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        bad(f"cannot read the trial ({exc.strerror})", "give an existing CSV file")
    if len(rows) < 3:
        bad("needs a header and at least two rows", "record a longer trial")
    head = [h.strip() for h in rows[0]]
    try:
        data = np.array([[float(x) for x in r] for r in rows[1:] if r], dtype=float)
    except ValueError as exc:
        bad(f"a value is not a number ({exc})", "write plain numbers in every column")
    if data.ndim != 2 or data.shape[1] != len(head):
        bad("rows do not all have as many values as the header", "fix the CSV")
    if "t" not in head:
        bad("no column 't'", "add the sample time in seconds as column t")
    col = {h: data[:, i] for i, h in enumerate(head)}
    if not np.all(np.isfinite(data)):
        bad("non-finite values", "remove NaN/inf rows")
    if not np.all(np.diff(col["t"]) > 0):
        bad("column t is not strictly increasing", "sort the rows by time")
    excited = [a for a in AXES if THRUST[a] in col and np.any(col[THRUST[a]] != 0)]
    if not excited:
        bad("no thrust column with a non-zero value (tau_X … tau_N): the trial excites "
            "no axis", "give the thrust of the excited axis")
    axis = excited[0]
    if axis not in col:
        bad(f"thrust {THRUST[axis]} but no measured velocity column '{axis}'",
            f"add the measured {axis} as column {axis}")
    return Trial(path, axis, col["t"], col[THRUST[axis]], col[axis])


def replay(axis: str, rigid: float, a: float, d1: float, d2: float, b: float,
           trial: Trial, v0: float | None = None) -> np.ndarray:
    """The model's velocity at the trial's instants, RK4 from ``v0`` (default: the first
    measured value), the thrust held over each interval."""
    m = rigid + a
    out = np.empty_like(trial.vel)
    x = float(trial.vel[0]) if v0 is None else float(v0)
    out[0] = x
    for k in range(len(trial.t) - 1):
        h, tau = trial.t[k + 1] - trial.t[k], trial.tau[k]

        def f(v):
            return (tau - d1 * v - d2 * abs(v) * v + b) / m
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out[k + 1] = x
    return out


def nrmse(measured: np.ndarray, replayed: np.ndarray) -> float:
    """RMSE of the replay normalised by the range of the measured signal (FinsSim)."""
    span = float(np.max(measured) - np.min(measured))
    return float(np.sqrt(np.mean((measured - replayed) ** 2)) / span) if span > 0 else math.inf


def fit_axis(axis: str, trials: list[Trial], rigid: float, fit_bias: bool,
             start: tuple[float, float, float]) -> AxisFit:
    """Least squares of the replay error over every trial of the axis; ``start`` is
    (A, D1, D2) to start from (the profile's). Each trial's initial velocity is fitted
    too (a nuisance parameter): replaying from the first *measured* value carries its
    noise into the whole transient, which the fit would otherwise absorb into A (for
    REMUS surge, whose time constant is 20 s at low speed, +25 % on A from 5 mm/s of
    noise on one sample)."""
    for tr in trials:
        if float(np.ptp(tr.vel)) <= 1e-9 * max(1.0, float(np.max(np.abs(tr.vel)))):
            raise ParameterError(
                f"{tr.path}: axis {axis} is not excited (its velocity does not change)",
                fix=f"give a step or a sinusoid of {THRUST[axis]} that moves the vehicle")
    nb = 4 if fit_bias else 3
    x0 = ([max(v, 1e-3) for v in start] + ([0.0] if fit_bias else [])
          + [float(tr.vel[0]) for tr in trials])
    lo = [0.0, 0.0, 0.0] + [-np.inf] * (nb - 3 + len(trials))
    scale = max(float(np.max(np.abs(np.concatenate([t.vel for t in trials])))), 1e-9)

    def residuals(z):
        b = z[3] if fit_bias else 0.0
        return np.concatenate([(replay(axis, rigid, z[0], z[1], z[2], b, tr, z[nb + i])
                                - tr.vel) / scale for i, tr in enumerate(trials)])
    res = least_squares(residuals, x0, bounds=(lo, np.inf), method="trf", x_scale="jac",
                        max_nfev=400)
    named = f"axis {axis} ({', '.join(str(t.path) for t in trials)})"
    if not res.success or not np.all(np.isfinite(res.x)):
        raise FitFailed(f"{named}: the fit did not converge ({res.message})",
                        fix="give trials with more excitation (steps to several speeds, "
                            "sinusoids) or a closer --profile to start from")
    a, d1, d2 = (float(v) for v in res.x[:3])
    b = float(res.x[3]) if fit_bias else 0.0
    dof = max(len(res.fun) - len(res.x), 1)
    s2 = float(np.sum(res.fun**2)) / dof
    try:
        cov = np.linalg.inv(res.jac.T @ res.jac) * s2
    except np.linalg.LinAlgError as exc:
        raise FitFailed(f"{named}: the coefficients are not determined by the trials",
                        fix="add a trial at another speed (D1 and D2 need two) and a "
                            "transient (A needs an acceleration)") from exc
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    sigma = {k: float(s) for k, s in zip(("A", "D1", "D2"), sd[:3])}
    if fit_bias:
        sigma["b"] = float(sd[3])
    if not (sigma["A"] < rigid + a and sigma["D2"] < 10 * max(d2, 1e-9)):
        raise FitFailed(f"{named}: the fit converged to an undetermined point "
                        f"(relative uncertainty above 1000 %)",
                        fix="give trials with steps to several speeds and a transient")
    v0 = res.x[nb:]
    train = [np.concatenate([tr.vel for tr in trials]),
             np.concatenate([replay(axis, rigid, a, d1, d2, b, tr, v)
                             for tr, v in zip(trials, v0)])]
    return AxisFit(axis, float(a), float(d1), float(d2), b, sigma,
                   tuple(str(t.path) for t in trials), nrmse(*train))


def rigid_terms(profile: dict) -> dict[str, float]:
    """M_RB's diagonal about CO from a profile's parameters (Fossen eq. 3.44)."""
    g = lambda k: float(profile.get(k, 0.0))  # noqa: E731
    m, x, y, z = g("mass"), g("x_g"), g("y_g"), g("z_g")
    return {"u": m, "v": m, "w": m, "p": g("Ixx") + m * (y * y + z * z),
            "q": g("Iyy") + m * (x * x + z * z), "r": g("Izz") + m * (x * x + y * y)}


@dataclass(frozen=True)
class Result:
    """Every fitted axis."""

    axes: dict[str, AxisFit]
    """By axis (u … r), in AXES order."""


def calibrate(paths: list[Path], profile: dict, holdout: int = 1,
              progress=None, wrench_topic: str = WRENCH_TOPIC,
              state_topic: str = STATE_TOPIC) -> Result:
    """Read the trials (CSV or MCAP; the topics for MCAP ones) and fit them
    (``fit_trials``)."""
    if not paths:
        raise ParameterError("no trial given", fix="give one CSV per single-axis trial")
    return fit_trials([read_trial(p, wrench_topic, state_topic) for p in paths], profile,
                      holdout, progress)


def fit_trials(trials: list[Trial], profile: dict, holdout: int = 1,
               progress=None) -> Result:
    """Group the trials by axis, hold out the last ``holdout`` trial(s) of each axis
    that has more than that many, fit each axis on the rest (heave with its constant
    net buoyancy) and replay the held-out ones."""
    rigid = rigid_terms(profile)
    out = {}
    for axis in AXES:
        mine = [t for t in trials if t.axis == axis]
        if not mine:
            continue
        keep = mine[:-holdout] if holdout and len(mine) > holdout else mine
        held = mine[len(keep):]
        start = tuple(float(profile.get(f"{k}_{axis}", 1.0)) or 1.0 for k in ("A", "D1", "D2"))
        if progress:
            progress(f"fitting {axis} on {len(keep)} trial(s)")
        fit = fit_axis(axis, keep, rigid[axis], axis == "w", start)
        scores = {str(t.path): nrmse(t.vel, replay(axis, rigid[axis], fit.added_mass, fit.d1,
                                                    fit.d2, fit.bias, t)) for t in held}
        out[axis] = AxisFit(**{**fit.__dict__, "nrmse_holdout": scores})
    if not out:
        raise ParameterError("no trial given", fix="give one CSV per single-axis trial")
    return Result(out)


def format_report(res: Result) -> str:
    """The coefficient table and the replay NRMSE table (FinsSim's form)."""
    lines = ["| axis | A | D1 | D2 | b | NRMSE fit | NRMSE held out |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for a, f in res.axes.items():
        held = ", ".join(f"{v:.3f}" for v in f.nrmse_holdout.values()) or "-"
        b = f"{f.bias:.3g} ± {f.sigma.get('b', 0):.2g}" if "b" in f.sigma else "-"
        lines.append(f"| {a} | {f.added_mass:.4g} ± {f.sigma['A']:.2g} | {f.d1:.4g} ± "
                     f"{f.sigma['D1']:.2g} | {f.d2:.4g} ± {f.sigma['D2']:.2g} | {b} | "
                     f"{f.nrmse_train:.3f} | {held} |")
    return "\n".join(lines)


def write_profile(res: Result, profile_text: str, name: str) -> str:
    """A profile TOML: the input profile's [parameters] with the fitted A_*, D1_*, D2_*
    replaced, and a comment naming the trials."""
    params = dict(tomlfile.loads(profile_text)["parameters"])
    for a, f in res.axes.items():
        params[f"A_{a}"], params[f"D1_{a}"], params[f"D2_{a}"] = f.added_mass, f.d1, f.d2
    lines = [f"# Fitted by moonpool calibrate hydro from {name}'s trials:"]
    lines += [f"#   {a}: {', '.join(f.train)}" for a, f in res.axes.items()]
    lines += [f'name = "{name} (fitted)"', "", "[parameters]"]
    for k, v in params.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, bool) else f"{k} = {str(v).lower()}")
    return "\n".join(lines) + "\n"
