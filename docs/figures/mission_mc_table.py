"""The Monte Carlo table of docs/missions.md from a sweep's folder:

    moonpool sweep sweeps/hadal_short_mc.toml --workers 2 --out runs/hadal_mc
    python docs/figures/mission_mc_table.py runs/hadal_mc

One row per case (its cases/case-NNNN.json: the row and the run's summary): where the
starfish was (the scene's (6, 3) m moved by the case's shifts), what it lay on (its
rest height above the terrain there: a rock when more than 5 cm), the current, the
mission's status or abort reason, and its metrics; then the success rate (status ok or
terminated, as `moonpool sweep` counts it) and the spread of the metrics over the
successful runs.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from moonpool.components.world.scene import Scene
from moonpool.orchestrator.sweep.results import succeeded

ROOT = Path(__file__).resolve().parents[2]
P = "param.components."


def main(folder: str) -> None:
    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml", movable=("starfish",))
    home = scene.movable["starfish"].position_ned_m
    cases = sorted(Path(folder, "cases").glob("case-*.json"))
    print("| case | starfish (n, e) m | on | current m/s → ° | result | detection s | "
          "INS drift at detection | grasp | delivered (error m) | mission s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ok, times, drifts, errors = 0, [], [], []
    for path in cases:
        case = json.loads(path.read_text())
        row, summary = case["row"], case["summary"]
        n = home[0] + row[P + "arm.parameters.target_shift_north_m"]
        e = home[1] + row[P + "arm.parameters.target_shift_east_m"]
        m = summary.get("metrics", {}).get("mission", {})
        good = succeeded(row)
        ok += good
        result = "succeeded" if good else f"**aborted** in {m.get('last_phase')}: {m.get('abort_reason')}"
        drift = m.get("ins_drift_at_detection_m")
        drift_s = "–" if drift is None else (f"{drift:.3f} m ({m['ins_drift_at_detection_percent']:.2f} %)")
        err = m.get("delivery_error_m")
        deliv = f"{m.get('object_delivered', 0):.0f}" + ("" if err is None else f" ({err:.2f})")
        det = m.get("detection_time_s")
        total = m.get("total_mission_time_s")
        rest = _rest_height(summary, scene, n, e)
        on = "rock" if rest is not None and rest > 0.05 else "seabed"
        cur = (f"{row[P + 'current.parameters.speed_mps']:.3f} → "
               f"{row[P + 'current.parameters.direction_deg']:.0f}")
        print(f"| {row['case']} | ({n:.2f}, {e:.2f}) | {on} | {cur} | {result} | "
              f"{'–' if det is None else f'{det:.1f}'} | {drift_s} | "
              f"{m.get('grasp_success', 0):.0f} | {deliv} | {'–' if total is None else f'{total:.1f}'} |")
        if good:
            times.append(total)
            drifts.append(drift)
            errors.append(err)
    print(f"\n{ok} of {len(cases)} succeeded ({100 * ok / max(len(cases), 1):.0f} %); over "
          f"those: mission {np.min(times):.1f}–{np.max(times):.1f} s (median "
          f"{np.median(times):.1f}), INS drift at detection {np.min(drifts):.3f}–"
          f"{np.max(drifts):.3f} m, delivery error {np.min(errors):.2f}–{np.max(errors):.2f} m")


def _rest_height(summary, scene, n, e) -> float | None:
    """How far above the terrain the starfish rested (from the arm's metrics: none; the
    scene: the surface under it, as the arm places it). None when unknown."""
    z_terrain = float(scene.seabed_depth(n, e))
    if not math.isfinite(z_terrain):
        return None
    engine = scene.engine()
    a = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    pts = np.array([[n, e]] + [[n + 0.1 * np.cos(t), e + 0.1 * np.sin(t)] for t in a])
    o = np.column_stack([pts, np.full(len(pts), z_terrain - 100.0)])
    hit = engine.cast(o, np.array([0.0, 0.0, 1.0]), 200.0)
    z = np.where(np.isfinite(hit.distance_m), hit.point_ned[:, 2], z_terrain).min()
    return z_terrain - float(z)


if __name__ == "__main__":
    main(sys.argv[1])
