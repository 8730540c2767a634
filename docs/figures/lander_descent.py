"""Seed 000, Fig. 7: the lander's free fall to 3,000 m with and without lift and Magnus
(rigs/lander_descent.toml). Runs the rig (or reads a recording of it given as the first
argument), writes docs/img/lander_descent.png (top-down trajectories; yaw against depth)
and prints the Markdown table of docs/hydrodynamics.md.

Run: python docs/figures/lander_descent.py [RECORDING.mcap]"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from moonpool.orchestrator.recording import decode_recorded, read_recording  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "img" / "lander_descent.png"
DEPTH = 3000.0
LABELS = {"lifted": "with lift and Magnus", "plain": "without"}


def tracks(recording: Path) -> dict[str, np.ndarray]:
    """Per vehicle rows (t s, n, e, d m, yaw rad, r rad/s) up to DEPTH."""
    rows: dict[str, list] = {k: [] for k in LABELS}
    for m in read_recording(recording):
        name = m.topic.strip("/").split("/")[0]
        if name in rows and m.topic.endswith("/state"):
            s = decode_recorded(m)
            rows[name].append((m.log_time_ns * 1e-9, s.position_ned_m.x, s.position_ned_m.y,
                               s.position_ned_m.z, s.yaw_rad, s.angular_velocity_body_radps.z))
    out = {}
    for k, r in rows.items():
        a = np.array(r)
        stop = np.argmax(a[:, 3] >= DEPTH) if np.any(a[:, 3] >= DEPTH) else len(a) - 1
        out[k] = a[: stop + 1]
    return out


def table(tr: dict[str, np.ndarray]) -> str:
    lines = ["| lander | time to 3,000 m | mean descent | drift north | drift east | "
             "horizontal drift | turns | yaw rate at 3,000 m |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k, a in tr.items():
        t, n, e, d = a[-1, :4]
        turns = np.sum(np.abs(np.diff(np.unwrap(a[:, 4])))) / (2 * math.pi)
        lines.append(f"| {LABELS[k]} | {t:,.0f} s | {d / t:.3f} m/s | {n:+.1f} m | {e:+.1f} m | "
                     f"{math.hypot(n, e):.1f} m | {turns:.1f} | {a[-1, 5]:+.3f} rad/s |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1:
        rec = Path(sys.argv[1])
    else:
        tmp = Path(tempfile.mkdtemp())
        subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run",
                        str(ROOT / "rigs" / "lander_descent.toml"), "--out", str(tmp), "--quiet"],
                       check=True)
        rec = tmp / "recording.mcap"
    tr = tracks(rec)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.5))
    for k, a in tr.items():
        ax1.plot(a[:, 2], a[:, 1], label=LABELS[k])
        ax2.plot(np.degrees(np.unwrap(a[:, 4])), a[:, 3], label=LABELS[k])
    ax1.set_xlabel("east (m)")
    ax1.set_ylabel("north (m)")
    ax1.set_title("Top-down trajectory to 3,000 m")
    ax1.axis("equal")
    ax2.invert_yaxis()
    ax2.set_xlabel("yaw (deg, unwrapped)")
    ax2.set_ylabel("depth (m)")
    ax2.set_title("Yaw against depth")
    for ax in (ax1, ax2):
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110)
    print(table(tr))


if __name__ == "__main__":
    main()
