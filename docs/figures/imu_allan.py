"""Allan deviation of a stationary simulated IMU (like seed 000, Fig. 3): 2 h at 100 Hz
of the MEMS preset, every axis, beside the theoretical curves of the MEMS and tactical
presets. Writes docs/img/imu_allan.png. Run: python docs/figures/imu_allan.py"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from moonpool.components.sensors.common import G  # noqa: E402
from moonpool.components.sensors.imu import (ImuModel, ImuModelParams,  # noqa: E402
                                              allan_deviation_model)

DT, N = 0.01, 720_000
OUT = Path(__file__).resolve().parents[1] / "img" / "imu_allan.png"


def adev(y, ms):
    th = np.concatenate([[0.0], np.cumsum(y)]) * DT
    L = len(th)
    return np.array([math.sqrt(np.sum((th[2 * m:] - 2 * th[m:L - m] + th[:L - 2 * m]) ** 2)
                               / (2 * (m * DT) ** 2 * (L - 2 * m))) for m in ms])


def main() -> None:
    mems, tac = ImuModelParams.mems(), ImuModelParams.tactical()
    out = ImuModel(mems, DT, 2024, "imu").run(np.tile([0, 0, -G], (N, 1)), np.zeros((N, 3)))
    ms = np.unique(np.round(np.logspace(0, math.log10(N // 9), 70)).astype(int))
    taus = ms * DT
    tt = np.logspace(-2, 4, 200)
    fig, axes = plt.subplots(2, 1, figsize=(7, 8), sharex=True)
    for ax, key, unit in ((axes[0], "gyro", "rad/s"), (axes[1], "accel", "m/s²")):
        for i, c in enumerate("xyz"):
            ax.loglog(taus, adev(out[key][:, i], ms), lw=1.2, label=f"MEMS simulated, {c}")
        for p, name, style in ((mems, "MEMS theory", "k--"), (tac, "tactical theory", "m-")):
            t = getattr(p, key)
            ax.loglog(tt, allan_deviation_model(tt, t.noise_density, t.gm_sigma,
                                                t.gm_band, t.random_walk),
                      style, lw=1, label=name)
            ax.axhline(0.664 * t.bias_instability, color=style[0], lw=0.5, ls=":")
        ax.set_ylabel(f"Allan deviation ({unit})")
        ax.set_title(f"{'Gyroscope' if key == 'gyro' else 'Accelerometer'}: 2 h at 100 Hz")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=7)
    axes[1].set_xlabel("averaging time τ (s)")
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110)
    print(OUT.name)


if __name__ == "__main__":
    main()
