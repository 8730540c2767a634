"""The tables of docs/calibration-hydro.md: ``moonpool calibrate hydro`` on trials
simulated by the hydrodynamics FMU (components/dynamics/trials.py: the design, the full
coupled model, the DVL's and the MEMS gyro's noise) for the BlueROV2 Heavy and REMUS 100
profiles.

1. One seed: the fitted coefficients ± 1σ beside the profile's, the replay NRMSE on the
   fitting and on the held-out trials (FinsSim's table).
2. Many seeds (the noise redrawn, the trajectories the same): per coefficient the mean
   error, the standard deviation, the worst error and the mean reported 1σ, so that the
   uncertainties the fit reports can be checked against the scatter they describe.
3. Identifiability of REMUS's surge added mass (0.84 kg beside 31 kg of hull): its
   reported 1σ (from the Jacobian, s² (JᵀJ)⁻¹) with the step trials only and with the
   4 s sinusoid added, and with no noise at all (the model error of the decoupled
   model on the coupled vehicle).

Run: python docs/figures/calibration_hydro.py [SEEDS]   (default 20; about 10 min)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from moonpool.components.dynamics import calibration as cal
from moonpool.components.dynamics import trials as tr
from moonpool.components.sdk import tomlfile

ROOT = Path(__file__).resolve().parents[2]
FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"
KEYS = (("A", "added_mass"), ("D1", "d1"), ("D2", "d2"))


def clean_trials(name: str):
    """Per axis: the design and the true velocity of each trial (noise-free)."""
    params = tomlfile.loads((PROFILES / f"{name}.toml").read_text())["parameters"]
    out = {}
    for axis, (level, sine) in tr.LEVELS[name].items():
        shapes = tr.design(level, sine)
        out[axis] = [(s, *tr.simulate(FMU, params, axis, s)) for s in shapes]
    return params, out


def noisy(axis: str, runs, seed: int, noise: bool = True) -> list[cal.Trial]:
    return [cal.Trial(Path(f"{axis}_{s.name}.csv"), axis, t, tau,
                      v + (tr.sensor_noise(axis, v, 1000 * seed + j) if noise else 0.0))
            for j, (s, t, tau, v) in enumerate(runs)]


def one_seed_table(name, params, clean, seed=0) -> str:
    trials = [t for axis, runs in clean.items() for t in noisy(axis, runs, seed)]
    res = cal.fit_trials(trials, params, holdout=2)
    lines = ["| axis | A | D1 | D2 | b | NRMSE fit | NRMSE held out (sine 8 s, step) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for axis, f in res.axes.items():
        cells = [f"{getattr(f, attr):.4g} ± {f.sigma[k]:.2g} ({params[f'{k}_{axis}']:g})"
                 for k, attr in KEYS]
        net = (params["mass"] - params["volume"] * params["rho_surface"]) * 9.81  # W - B
        b = f"{f.bias:.3g} ± {f.sigma['b']:.2g} ({net:.2g})" if "b" in f.sigma else "-"
        held = ", ".join(f"{v:.3f}" for v in f.nrmse_holdout.values())
        lines.append(f"| {axis} | {' | '.join(cells)} | {b} | {f.nrmse_train:.3f} | {held} |")
    return "\n".join(lines)


def seeds_table(name, params, clean, seeds) -> str:
    rigid = cal.rigid_terms(params)
    rows = {}
    for seed in range(seeds):
        for axis, runs in clean.items():
            fitted = [t for t, (s, *_) in zip(noisy(axis, runs, seed), runs) if not s.held_out]
            start = tuple(params[f"{k}_{axis}"] or 1.0 for k, _ in KEYS)
            f = cal.fit_axis(axis, fitted, rigid[axis], axis == "w", start)
            for k, attr in KEYS:
                rows.setdefault((axis, k), []).append((getattr(f, attr), f.sigma[k]))
    lines = ["| coefficient | profile | mean error | sd | worst | mean reported 1σ "
             f"| within tolerance ({seeds} seeds) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for (axis, k), vals in rows.items():
        v = np.array(vals)
        truth = params[f"{k}_{axis}"]
        tol = 0.10 if k == "A" else 0.05
        if truth:
            err = v[:, 0] / truth - 1
            worst = err[np.argmax(abs(err))]
            cells = (f"{err.mean():+.2%} | {v[:, 0].std() / truth:.2%} | {worst:+.2%} "
                     f"| {v[:, 1].mean() / truth:.2%}")
            ok = np.mean(abs(err) <= tol)
        else:  # a zero coefficient: against 5 % of the quadratic term at 0.6 m/s (1 rad/s)
            ref = 0.05 * params[f"D2_{axis}"] * (1.0 if axis == "r" else 0.6)
            cells = (f"{v[:, 0].mean():.3g} | {v[:, 0].std():.2g} | {v[:, 0].max():.3g} "
                     f"| {v[:, 1].mean():.2g}")
            ok = np.mean(np.abs(v[:, 0]) <= ref)
        lines.append(f"| {k}_{axis} | {truth:g} | {cells} | {ok:.0%} |")
    return "\n".join(lines)


def remus_surge_identifiability(params, clean) -> str:
    runs = clean["u"]
    rigid = cal.rigid_terms(params)["u"]
    start = tuple(params[f"{k}_u"] for k, _ in KEYS)
    lines = ["| REMUS surge trials | A fitted (0.839) | reported 1σ of A |", "| --- | --- | --- |"]
    steps = lambda s: s.name.startswith("step") and not s.held_out  # noqa: E731
    for label, keep, noise in (("steps only", steps, True),
                               ("steps + 4 s sinusoid", lambda s: not s.held_out, True),
                               ("steps + 4 s sinusoid, no noise", lambda s: not s.held_out, False)):
        fitted = [t for t, (s, *_) in zip(noisy("u", runs, 0, noise), runs) if keep(s)]
        f = cal.fit_axis("u", fitted, rigid, False, start)
        lines.append(f"| {label} | {f.added_mass:.4g} | {f.sigma['A']:.2g} "
                     f"({f.sigma['A'] / 0.839:.1%}) |")
    return "\n".join(lines)


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for name in ("bluerov2_heavy", "remus100"):
        params, clean = clean_trials(name)
        print(f"\n### {name}: one seed\n")
        print(one_seed_table(name, params, clean))
        print(f"\n### {name}: {seeds} seeds\n")
        print(seeds_table(name, params, clean, seeds))
        if name == "remus100":
            print("\n### REMUS surge added mass\n")
            print(remus_surge_identifiability(params, clean))


if __name__ == "__main__":
    main()
