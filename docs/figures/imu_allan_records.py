"""How long a record the IMU presets' bias instability needs, read per axis the textbook
way (docs/sensors.md (imu), "Reading B from a record"): for the MEMS and tactical
presets, gyro and accelerometer, SEEDS records × 3 axes of 1 to 64 days (DAYS), each
read with allantools' overlapping ADEV by ``read_floor`` (the estimator of
tests/scenarios/test_imu_allan_presets.py: the minimum of the curve over τ from 1 s to
record/FLOOR_SPAN). Records are sampled at dt = min(record/864,000, T_c/10): the Allan
deviation at τ ≥ dt does not depend on dt as long as the shortest Gauss–Markov process
of the band is sampled finely (a process of T ≲ dt sampled at points, not averaged,
adds its own bias: +2 % for the accelerometers at dt = 6.4 s). Prints, per preset, triad
and length, the mean error of B̂ = floor/0.664
against B, its standard deviation over the axes, and the share of axes within ±5 %; the
same for the 24 h records read over shorter and longer τ ranges; and for the 24 h records
the mean of the curves over all axes against the theory (no model bias) with their
scatter (the figure). Writes docs/img/imu_allan_records.png.

Run: python docs/figures/imu_allan_records.py [SEEDS]   (default 8; about 20 min)
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import allantools  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from moonpool.components.sensors.common import G  # noqa: E402
from moonpool.components.sensors.imu import (FLICKER_FACTOR, ImuModel,  # noqa: E402
                                              ImuModelParams, allan_deviation_model)

DAYS = {"gyro": (1, 4, 16, 64), "accel": (1, 4)}
SAMPLES = 864_000
FLOOR_SPAN = 1000
"""The floor is read over τ ≤ record/FLOOR_SPAN: there the overlapping estimate of a
flicker floor has about 1.25·FLOOR_SPAN equivalent degrees of freedom (±2 % at 1σ per τ);
beyond, fewer averages let the minimum of the noisy curve fall below the floor (read
over τ ≤ record/20, the tactical gyro's B̂ is 5 % low on average and scatters by ±8 %
per axis whatever the record's length)."""
OUT = Path(__file__).resolve().parents[1] / "img" / "imu_allan_records.png"
TRIADS = [(g, t) for g in ("mems", "tactical") for t in ("gyro", "accel")]


def oadev(y: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """allantools' overlapping ADEV at 90 log-spaced τ = m·dt, m ≤ len/5."""
    ms = np.unique(np.round(np.logspace(0, math.log10(len(y) // 5), 90)).astype(int))
    taus, adev, _, _ = allantools.oadev(y, rate=1.0 / dt, data_type="freq", taus=ms * dt)
    return np.asarray(taus), np.asarray(adev)


def read_floor(taus: np.ndarray, adev: np.ndarray, record_s: float) -> float:
    """The Allan floor read from one axis's curve: its minimum over τ ∈ [1 s,
    record/FLOOR_SPAN]."""
    sel = (taus >= 1.0 - 1e-9) & (taus <= record_s / FLOOR_SPAN)
    return float(np.min(adev[sel]))


def sample_period(record_s: float, cfg) -> float:
    """dt of a record (module docstring)."""
    return min(record_s / SAMPLES, cfg.bias_correlation_s / 10.0)


def stationary(grade: str, dt: float, n: int, seed: int) -> dict[str, np.ndarray]:
    """n level, still samples of a preset without quantization (which depends on the
    sample rate, unlike every other term: the Allan deviation at τ ≥ dt of white noise
    of density N, Gauss–Markov processes and random walk discretised exactly does not)."""
    p = getattr(ImuModelParams, grade)()
    p = replace(p, gyro=replace(p.gyro, lsb=0.0), accel=replace(p.accel, lsb=0.0))
    return ImuModel(p, dt, seed, "imu").run(np.tile([0.0, 0.0, -G], (n, 1)), np.zeros((n, 3)))


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    errors: dict[tuple[str, str, int], list[float]] = {}
    day_curves: dict[tuple[str, str], list[np.ndarray]] = {}
    taus_day = None
    for grade, triad in TRIADS:
        cfg = getattr(getattr(ImuModelParams, grade)(), triad)
        for days in DAYS[triad]:
            record = days * 86_400.0
            dt = sample_period(record, cfg)
            for s in range(seeds):
                out = stationary(grade, dt, round(record / dt), 7000 + s)
                for axis in range(3):
                    taus, adev = oadev(out[triad][:, axis], dt)
                    b = read_floor(taus, adev, record) / FLICKER_FACTOR
                    errors.setdefault((grade, triad, days), []).append(b / cfg.bias_instability - 1)
                    if days == 1:
                        taus_day = taus
                        day_curves.setdefault((grade, triad), []).append(
                            adev / (FLICKER_FACTOR * cfg.bias_instability))
            print(f"{grade} {triad} {days} d done", file=sys.stderr, flush=True)

    print("| preset, triad | record | mean error of B̂ | sd over axes "
          f"| within ±5 % ({3 * seeds} axes) |")
    print("| --- | --- | --- | --- | --- |")
    for grade, triad in TRIADS:
        for days in DAYS[triad]:
            e = np.array(errors[(grade, triad, days)])
            print(f"| {grade} {triad} | {days} d | {e.mean():+.1%} | {e.std():.1%} | "
                  f"{np.mean(np.abs(e) <= 0.05):.0%} |")

    print(f"\nThe 24 h records read over τ ∈ [1 s, day/k] ({3 * seeds} axes: mean error of B̂, sd, "
          "share within ±5 %):\n")
    spans = (20, 100, 300, FLOOR_SPAN)
    print("| preset, triad | " + " | ".join(f"τ ≤ day/{k}" for k in spans) + " |")
    print("| --- |" + " --- |" * len(spans))
    for grade, triad in TRIADS:
        curves = np.array(day_curves[(grade, triad)])
        cells = []
        for k in spans:
            sel = (taus_day >= 1.0 - 1e-9) & (taus_day <= 86_400.0 / k)
            e = curves[:, sel].min(axis=1) - 1.0
            cells.append(f"{e.mean():+.1%} ± {e.std():.1%} ({np.mean(np.abs(e) <= 0.05):.0%})")
        print(f"| {grade} {triad} | " + " | ".join(cells) + " |")

    fig, axes = plt.subplots(2, 4, figsize=(15, 7))
    for col, (grade, triad) in enumerate(TRIADS):
        cfg = getattr(getattr(ImuModelParams, grade)(), triad)
        F = FLICKER_FACTOR * cfg.bias_instability
        curves = np.array(day_curves[(grade, triad)])
        theory = allan_deviation_model(taus_day, cfg.noise_density, cfg.gm_sigma, cfg.gm_band,
                                       cfg.random_walk) / F
        ax = axes[0, col]
        ax.fill_between(taus_day, curves.mean(0) - curves.std(0), curves.mean(0) + curves.std(0),
                        color="C0", alpha=0.3, lw=0, label="mean ± 1 sd over axes")
        ax.loglog(taus_day, curves.mean(0), "C0", lw=1.2, label="mean of the curves")
        ax.loglog(taus_day, theory, "k--", lw=1, label="theory")
        ax.axhspan(0.95, 1.05, color="g", alpha=0.15, lw=0)
        ax.axvline(86_400.0 / FLOOR_SPAN, color="r", lw=0.8, ls=":", label=f"day/{FLOOR_SPAN}")
        ax.set_ylim(0.5, 5)
        ax.set_title(f"{grade} {triad}: 24 h, ADEV / (0.664 B)", fontsize=9)
        ax.set_xlabel("τ (s)")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=6)
        ax = axes[1, col]
        for k, days in enumerate(DAYS[triad]):
            e = np.array(errors[(grade, triad, days)])
            ax.plot(np.full(e.size, days) * np.exp(np.linspace(-0.15, 0.15, e.size)), 100 * e,
                    ".", color=f"C{k}", ms=4)
        ax.axhspan(-5, 5, color="g", alpha=0.15, lw=0)
        ax.set_xscale("log")
        ax.set_xticks(DAYS["gyro"], [str(d) for d in DAYS["gyro"]])
        ax.set_xlabel("record (days)")
        ax.set_ylabel("B̂/B − 1 per axis (%)")
        ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=100)
    print(OUT.name, file=sys.stderr)


if __name__ == "__main__":
    main()
