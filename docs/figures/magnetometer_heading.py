"""Figures of docs/sensors.md (magnetometer) (like seed 000, Fig. 5).

1. docs/img/mag_tumble.png: the field measured while the vehicle tumbles through many
   attitudes (an ellipsoid off centre: hard and soft iron) and the same samples after
   the ellipsoid-fit calibration (a sphere of radius |B| about the origin).
2. docs/img/mag_heading.png: magnetometer-only heading of a level vehicle turning
   through 360° at 45° N, without and with calibration: heading estimates (left) and
   heading error (right).

    .venv/bin/python docs/figures/magnetometer_heading.py
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.linalg import sqrtm  # noqa: E402

from moonpool.components.sdk.noise import KeyedNoise  # noqa: E402
from moonpool.components.sdk.frames import quat_from_euler  # noqa: E402
from moonpool.components.sensors.magnetometer import (MagnetometerModel,  # noqa: E402
                                                       magnetometer_measure)

IMG = Path(__file__).resolve().parents[1] / "img"

MODEL = MagnetometerModel(
    origin_latitude_deg=45.0, origin_longitude_deg=0.0, date_decimal_year=2025.0,
    hard_iron_nt=(2500.0, -1200.0, 800.0),
    soft_iron=(1.08, 0.04, -0.03, 0.04, 0.95, 0.06, -0.03, 0.06, 1.03), noise_nt=100.0)


def fit_ellipsoid(m):
    """Centre h and shape M, (x − h)ᵀ M (x − h) = 1, by total least squares on a general
    quadric."""
    x, y, z = m.T
    D = np.stack([x * x, y * y, z * z, 2 * x * y, 2 * x * z, 2 * y * z, 2 * x, 2 * y, 2 * z,
                  np.ones_like(x)], axis=1)
    scale = np.abs(D).max(axis=0)
    v = np.linalg.svd(D / scale, full_matrices=False)[2][-1] / scale
    A = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
    h = -np.linalg.solve(A, v[6:9])
    return h, A / (h @ A @ h - v[9])


def main() -> None:
    IMG.mkdir(exist_ok=True)
    # --- calibration from a tumble
    yaw, pitch, roll = np.meshgrid(np.radians(np.arange(0, 360, 15)),
                                   np.radians(np.arange(-80, 81, 20)),
                                   np.radians(np.arange(-180, 180, 30)), indexing="ij")
    q = np.array([quat_from_euler(r, p, y) for r, p, y in zip(roll.ravel(), pitch.ravel(),
                                                                yaw.ravel())])
    n = len(q)
    tumble = magnetometer_measure(MODEL, KeyedNoise(0, "mag"), 0, np.zeros(n), np.zeros((n, 3)), q)
    b0 = float(np.linalg.norm(tumble.earth_field_ned_nt[0]))  # from the field model
    h, M = fit_ellipsoid(tumble.field_nt)
    S_fit = np.real(sqrtm(np.linalg.inv(M))) / b0  # symmetric representative of S
    corrected = np.linalg.solve(S_fit, (tumble.field_nt - h).T).T

    fig = plt.figure(figsize=(10, 4.5))
    for i, (data, title) in enumerate(((tumble.field_nt, "measured (hard + soft iron)"),
                                       (corrected, "after ellipsoid-fit calibration"))):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.scatter(*(data / 1000).T, s=2, c=data[:, 2], cmap="viridis")
        ax.set_title(title)
        ax.set_xlabel("x [µT]"), ax.set_ylabel("y [µT]"), ax.set_zlabel("z [µT]")
        lim = 60
        ax.set_xlim(-lim, lim), ax.set_ylim(-lim, lim), ax.set_zlim(-lim, lim)
        ax.set_box_aspect((1, 1, 1))
    fig.suptitle(f"Field during a tumble through {n} attitudes at 45° N (IGRF-14 dipole, 2025)")
    fig.tight_layout()
    fig.savefig(IMG / "mag_tumble.png", dpi=110)
    plt.close(fig)

    # --- heading while turning through 360°
    psi = np.radians(np.arange(0.0, 360.0, 0.5))
    q = np.array([quat_from_euler(0.0, 0.0, y) for y in psi])
    n = len(psi)
    turn = magnetometer_measure(MODEL, KeyedNoise(0, "mag"), 10_000, np.zeros(n), np.zeros((n, 3)), q)
    b_ned = turn.earth_field_ned_nt[0]
    decl = math.atan2(b_ned[1], b_ned[0])

    def heading(m):
        return np.arctan2(-m[:, 1], m[:, 0]) + decl

    estimates = {"uncalibrated": heading(turn.field_nt),
                 "calibrated": heading(np.linalg.solve(S_fit, (turn.field_nt - h).T).T),
                 "noise-free, undistorted": heading(turn.true_field_nt)}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    deg = np.degrees(psi)
    a1.plot(deg, deg, "k--", lw=1, label="true")
    for label, est in estimates.items():
        e = np.degrees((est - psi + np.pi) % (2 * np.pi) - np.pi)
        a1.plot(deg, np.degrees(est) % 360, ".", ms=2, label=label)
        a2.plot(deg, e, lw=1, label=f"{label} (RMS {np.sqrt(np.mean(e ** 2)):.2f}°)")
    a1.set_xlabel("true heading [deg]"), a1.set_ylabel("estimated heading [deg]")
    a1.set_title("Heading estimates"), a1.legend(fontsize=8)
    a2.set_xlabel("true heading [deg]"), a2.set_ylabel("heading error [deg]")
    a2.set_title("Heading error"), a2.legend(fontsize=8), a2.grid(alpha=0.3)
    fig.suptitle("Magnetometer-only heading at 45° N, level vehicle turning through 360°")
    fig.tight_layout()
    fig.savefig(IMG / "mag_heading.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
