"""NEES consistency and drift of the INS on the ten-minute rig (rigs/ins.toml), over
seeds: the rig as shipped and the variants that show what each part of the fix does
(docs/navigation.md).

    python benchmarks/ins_consistency.py [--seeds 8] [--until 600] [--workers 1]
                                         [--variants shipped,ekf,before,oc-only]

Variants (``--set`` on the rig's INS):

- ``shipped``: the rig (observability-constrained, noise from the IMU model, the
  initial heading known to 0.002 rad);
- ``ekf``: the same without the observability constraint;
- ``before``: the filter as it was (plain EKF, the explicit default noise, an initial
  heading σ of 0.02 rad): the 6.3 % of seed 0;
- ``oc-only``: ``before`` with the observability constraint.

Each seed is a full `moonpool run rigs/ins.toml --seed S --until T` (the HSV FMU, the
MEMS IMU, DVL and pressure models, the INS; only the INS output recorded). From the
recorded NavigationState messages, every 60 s:

- NEES of the position and velocity, ε = eᵀ P⁻¹ e with e = truth − estimate (6 dof,
  P the message's 6×6 covariance of [n e d vn ve vd]);
- NEES of the yaw, e_ψ² / σ_ψ² (1 dof, the message's ``yaw_variance_rad2``).

Averaged over the seeds they are compared with the two-sided 95 % χ² bounds of a
consistent filter, χ²(dof · runs) / runs. The drift is the run's
``drift_percent_of_distance`` metric (final horizontal error / distance travelled).
Prints Markdown tables; "met" when every checkpoint's average lies below the upper
bound (an overconfident filter exceeds it; a conservative one lies below the lower).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from scipy.stats import chi2

from moonpool.orchestrator.recording import decode_recorded, read_recording

ROOT = Path(__file__).resolve().parents[1]
EXCLUDE = '["vehicle.state", "imu.imu", "dvl.dvl", "pressure.pressure", "thrust.wrench"]'


OLD = ["imu_grade=\"\"", "initial_attitude_std_rad=[0.01, 0.01, 0.02]"]
VARIANTS = {
    "shipped": ("the rig as shipped: observability-constrained ESKF, noise from the IMU "
                "model", []),
    "ekf": ("plain EKF linearisation (observability_constrained = false), noise from the "
            "IMU model", ["observability_constrained=false"]),
    "before": ("the filter before: plain EKF, default noise, initial heading sigma 0.02 rad",
               ["observability_constrained=false", *OLD]),
    "oc-only": ("observability-constrained, default noise, initial heading sigma 0.02 rad",
                OLD),
}


def one_run(seed: int, until: float, variant: str, tmp: Path) -> dict:
    out = tmp / f"{variant}-{seed}"
    cmd = [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(ROOT / "rigs/ins.toml"),
           "--seed", str(seed), "--until", str(until), "--out", str(out), "--quiet",
           "--set", "run.plots=false", "--set", f"run.record_exclude={EXCLUDE}"]
    for kv in VARIANTS[variant][1]:
        cmd += ["--set", f"components.ins.parameters.{kv}"]
    subprocess.run(cmd, check=True, cwd=ROOT)
    summary = json.loads((out / "summary.json").read_text())
    rows = []
    for m in read_recording(out / "recording.mcap"):
        if m.topic != "/ins/navigation":
            continue
        x = decode_recorded(m)
        t = x.header.sim_time_ns
        if t == 0 or t % 60_000_000_000 or not x.validity.valid:
            continue
        e = np.array([x.true_position_ned_m.x - x.position_ned_m.x,
                      x.true_position_ned_m.y - x.position_ned_m.y,
                      x.true_position_ned_m.z - x.position_ned_m.z,
                      x.true_velocity_ned_mps.x - x.velocity_ned_mps.x,
                      x.true_velocity_ned_mps.y - x.velocity_ned_mps.y,
                      x.true_velocity_ned_mps.z - x.velocity_ned_mps.z])
        P = np.array(x.covariance.values).reshape(6, 6)
        e_yaw = math.remainder(x.true_yaw_rad - x.yaw_rad, 2 * math.pi)
        rows.append((t * 1e-9, float(e @ np.linalg.solve(P, e)), e_yaw**2 / x.yaw_variance_rad2))
    return {"seed": seed, "rows": np.array(rows), "metrics": summary["metrics"]["ins"]}


def table(runs: list[dict], label: str) -> bool:
    n = len(runs)
    A = np.stack([r["rows"] for r in runs])  # runs × checkpoints × (t, nees6, nees_yaw)
    lo6, hi6 = chi2.ppf([0.025, 0.975], 6 * n) / n
    lo1, hi1 = chi2.ppf([0.025, 0.975], n) / n
    print(f"\n{label}: {n} seeds; 95 % bounds of the average NEES: p,v [{lo6:.2f}, {hi6:.2f}], "
          f"yaw [{lo1:.2f}, {hi1:.2f}]\n")
    print("| t (s) | NEES p,v (6 dof) | NEES yaw (1 dof) |")
    print("| --- | --- | --- |")
    ok = True
    for k in range(A.shape[1]):
        m6, m1 = A[:, k, 1].mean(), A[:, k, 2].mean()
        ok &= bool(m6 < hi6 and m1 < hi1)
        print(f"| {A[0, k, 0]:.0f} | {m6:.2f} | {m1:.2f} |")
    drift = [r["metrics"]["drift_percent_of_distance"] for r in runs]
    err = [r["metrics"]["final_horizontal_error_m"] for r in runs]
    sig = [r["metrics"]["horizontal_sigma_m"] for r in runs]
    print(f"\ndrift % of distance per seed: {', '.join(f'{d:.2f}' for d in drift)} "
          f"(mean {np.mean(drift):.2f} %, max {np.max(drift):.2f} %); final horizontal error "
          f"{np.mean(err):.2f} m mean against the reported sigma {np.mean(sig):.2f} m; "
          f"distance {runs[0]['metrics']['distance_travelled_m']:.0f} m")
    print(f"no checkpoint average above the upper bound: {'met' if ok else 'not met'}")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--until", type=float, default=600.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help=f"comma-separated, of {', '.join(VARIANTS)}")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for variant in a.variants.split(","):
            with ThreadPoolExecutor(a.workers) as pool:
                runs = list(pool.map(lambda s: one_run(s, a.until, variant, tmp),
                                     range(a.seeds)))
            table(runs, f"{variant}: {VARIANTS[variant][0]}")


if __name__ == "__main__":
    main()
