"""The crawler rig (rigs/crawler.toml) like seed 000's Fig. 8, and drawbar pull
versus slip for the soil presets.

Run from the repository root: ``.venv/bin/python docs/figures/crawler.py``; runs the
rig (20 s, about 10 s of wall time; needs the FMUs: scripts/build-fmus.sh) and writes
docs/img/crawler_forces.png and docs/img/drawbar_pull.png.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from moonpool.components.terramechanics import bekker
from moonpool.components.terramechanics.soils import PRESETS
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from scipy.integrate import quad

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"


def _read(path: Path):
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    t, rows = [], []
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, _, m, msg in reader.iter_decoded_messages(topics=["/terra/diagnostics"]):
            t.append(m.log_time * 1e-9)
            rows.append({s.name: s.value for s in msg.signals})
    return np.array(t), {k: np.array([r[k] for r in rows]) for k in rows[0]}


def crawler_forces() -> None:
    rig = load_and_check(ROOT / "rigs" / "crawler.toml")
    with tempfile.TemporaryDirectory() as tmp:
        result = run_rig(rig, Path(tmp) / "out")
        assert result.ok, result.summary["error"]
        t, d = _read(Path(tmp) / "out" / "recording.mcap")
        static = result.summary["metrics"]["terra"]["static_sinkage_m"]
    fig, ax = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    a = ax[0, 0]
    a.plot(t, d["traction_n"], label="traction (both tracks)")
    a.plot(t, d["resistance_n"], label="resistance = compaction + other")
    a.plot(t, d["compaction_resistance_n"], "--", lw=1, label="compaction (Bekker)")
    a.plot(t, d["other_resistance_n"], ":", lw=1.2, label="other (hydrodynamic drag, pitch)")
    a.set(ylabel="force [N]", title="Longitudinal (X): traction vs resistance")
    a.legend(fontsize=8)
    a = ax[0, 1]
    a.plot(t, d["left_lateral_n"], label="left track")
    a.plot(t, d["right_lateral_n"], "--", label="right track")
    a.plot(t, d["lateral_n"], ":", label="sum")
    a.set(ylabel="force [N]", title="Lateral (Y): symmetric, straight driving")
    a.legend(fontsize=8)
    a = ax[1, 0]
    a.plot(t, d["left_sinkage_m"] * 100, label="left")
    a.plot(t, d["right_sinkage_m"] * 100, "--", label="right")
    a.axhline(static * 100, color="k", lw=0.6, ls=":", label=f"closed form {static * 100:.2f} cm")
    a.set(xlabel="time [s]", ylabel="sinkage [cm]", title="Sinkage (at the track centre)")
    a.legend(fontsize=8)
    a = ax[1, 1]
    a.plot(t, d["left_drive_speed_mps"], label="belt speed (command)")
    a.plot(t, d["speed_mps"], label="crawler speed u")
    a2 = a.twinx()
    a2.plot(t, d["left_slip"] * 100, color="C3", lw=0.8, label="slip")
    a2.set_ylabel("slip [%]", color="C3")
    a.set(xlabel="time [s]", ylabel="speed [m/s]", title="Speed and slip")
    a.legend(fontsize=8, loc="center right")
    fig.suptitle("rigs/crawler.toml: 2 t crawler on deep-sea clay, belts 0 → 0.5 m/s (2–4 s)")
    fig.tight_layout()
    fig.savefig(IMG / "crawler_forces.png", dpi=110)
    plt.close(fig)
    end = {k: v[-1] for k, v in d.items()}
    print(f"steady: u = {end['speed_mps']:.5f} m/s, slip = {end['left_slip']:.5f}, "
          f"traction = {end['traction_n']:.2f} N, resistance = {end['resistance_n']:.2f} N, "
          f"sinkage = {end['left_sinkage_m']:.5f} m (static {static:.5f} m)")


def drawbar_pull() -> None:
    b, l, W = 0.3, 1.5, 4537.0 / 2
    slips = np.linspace(-0.3, 1.0, 261)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, soil in enumerate(PRESETS.values()):
        z = bekker.static_sinkage_track(soil, W, b, l)
        dp = bekker.drawbar_pull_track(soil, W, b, l, slips)
        ax.plot(slips * 100, dp, color=f"C{k}", label=f"{soil.name} (z = {z * 100:.2f} cm)")
        k_eq = soil.k_c / b + soil.k_phi
        pts = np.array([-0.2, 0.02, 0.1, 0.3, 0.6, 1.0])
        ref = []
        tau_max = soil.c + k_eq * z ** soil.n * math.tan(soil.phi)
        for i in pts:  # independent integral of the shear stress along the contact
            def tau(x, i=i, tau_max=tau_max, K=soil.K):
                return tau_max * math.copysign(1 - math.exp(-abs(i) * x / K), i)
            ref.append(b * quad(tau, 0, l)[0] - b * k_eq * z ** (soil.n + 1) / (soil.n + 1))
        ax.plot(pts * 100, ref, "o", mfc="none", color=f"C{k}")
    ax.axhline(0, color="k", lw=0.5)
    ax.set(xlabel="slip i [%]", ylabel="drawbar pull per track [N]",
           title=f"Track {b} m x {l} m under {W:.0f} N: DP(i) = T(i) − R_c "
                 "(circles: scipy quad)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(IMG / "drawbar_pull.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    IMG.mkdir(parents=True, exist_ok=True)
    drawbar_pull()
    crawler_forces()
