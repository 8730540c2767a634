"""Stationary DVL over 3 hours (like seed 000, Fig. 4): zero-velocity time series
(left) and dead-reckoning drift from integrating the measured velocity (right).

Run from the repository root: ``.venv/bin/python docs/figures/dvl_drift.py``; writes
docs/img/dvl_drift.png.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from moonpool.components.sensors.common import Truth  # noqa: E402
from moonpool.components.sensors.dvl import DvlModel, DvlParams  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "img" / "dvl_drift.png"
RATE_HZ, HOURS, REPS = 5.0, 3.0, 20
PARAMS = DvlParams(noise_k=0.002, noise_c_mps=0.003, bias_walk_mps_per_sqrt_s=1e-5)


def main() -> None:
    dt = 1.0 / RATE_HZ
    n = int(HOURS * 3600 * RATE_HZ)
    z = np.zeros((n, 3))
    pos = z.copy()
    pos[:, 2] = 80.0  # 20 m above a flat seabed at 100 m
    truth = Truth(pos, np.tile([1.0, 0, 0, 0], (n, 1)), z, z, z, z, np.zeros(n))
    t_h = np.arange(n) * dt / 3600
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    finals = []
    for r in range(REPS):
        b, _ = DvlModel(PARAMS, seed=0, name=f"dvl{r}", dt_s=dt).measure(truth)
        v = b.velocity_mps
        drift = np.cumsum(v * dt, axis=0)
        finals.append(np.hypot(drift[-1, 0], drift[-1, 1]))
        if r == 0:
            w = int(60 * RATE_HZ)  # 1-minute means show the bias walk under the noise
            for i, lab in enumerate("xyz"):
                ax1.plot(t_h, v[:, i] * 100, lw=0.2, alpha=0.25, color=f"C{i}")
                mean = np.convolve(v[:, i], np.ones(w) / w, mode="valid") * 100
                ax1.plot(t_h[w - 1:], mean, lw=1.2, color=f"C{i}", label=f"$v_{lab}$, 1-min mean")
            ax2.plot(drift[:, 0], drift[:, 1], color="C3", lw=1.2, label="run 0", zorder=3)
        else:
            ax2.plot(drift[:, 0], drift[:, 1], color="0.6", lw=0.6)
    a = math.radians(PARAMS.beam_angle_deg)
    sx = PARAMS.noise_c_mps / (math.sqrt(2) * math.sin(a))
    ax1.axhline(0, color="k", lw=0.5)
    ax1.set(xlabel="time [h]", ylabel="measured velocity [cm/s]",
            title=f"Stationary DVL, {RATE_HZ:g} Hz, {HOURS:g} h "
                  f"(white $\\sigma_x$ = {sx * 100:.2f} cm/s + bias walk)")
    ax1.legend(loc="upper left", markerscale=10)
    # 1-sigma envelope of the horizontal drift from the bias walk: sigma_w t^1.5 / sqrt(3)
    T = HOURS * 3600
    sw = PARAMS.bias_walk_mps_per_sqrt_s / (math.sqrt(2) * math.sin(a))
    rad = sw * T ** 1.5 / math.sqrt(3)
    th = np.linspace(0, 2 * np.pi, 200)
    ax2.plot(rad * np.cos(th), rad * np.sin(th), "k--", lw=0.8, label="1σ per axis after 3 h")
    ax2.plot(0, 0, "k+", ms=10)
    ax2.set(xlabel="north drift [m]", ylabel="east drift [m]", aspect="equal",
            title=f"Dead-reckoning drift, {REPS} runs (median {np.median(finals):.1f} m after 3 h)")
    ax2.legend(loc="upper left")
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=120)
    print(f"wrote {OUT.name}: horizontal drift after {HOURS:g} h, median {np.median(finals):.2f} m, "
          f"1-sigma/axis theory {rad:.2f} m")


if __name__ == "__main__":
    main()
