"""Run the T1 / T2 task rigs with each controller and print the tables of docs/tasks.md.

    .venv/bin/python scripts/task_table.py [--out runs/tasks] [--only t1|t2]
                                           [--feedback truth|localizer]

``--feedback truth`` (default) runs rigs/pool_t1.toml and rigs/pool_t2.toml (the
controller sees the true state); ``--feedback localizer`` runs rigs/pool.toml and
rigs/pool_t2_localized.toml (camera -> localizer -> EKF -> controller).

Every row is one `moonpool run` (a real run, recorded in OUT/<name>/); the figures are
read back from its summary.json. Nothing here is tuned or edited by hand.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTROLLERS = {
    "PID": ["--set", "components.controller.entry=control.pid", "--set", "components.controller.rate_hz=50"],
    "NMPC": ["--set", "components.controller.entry=control.nmpc", "--set", "components.controller.rate_hz=10"],
}
TRAJECTORIES = ("straight", "broken", "ellipse", "lemniscate")


def run(rig: Path, out: Path, extra: list[str]) -> dict:
    moonpool = Path(sys.executable).with_name("moonpool")
    t0 = time.monotonic()
    proc = subprocess.run([str(moonpool), "run", str(rig), "--out", str(out), "--quiet", *extra],
                          capture_output=True, text=True)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"run failed ({proc.returncode}): {rig} {' '.join(extra)}")
    print(f"  {out.name}: {time.monotonic() - t0:.0f} s wall", file=sys.stderr)
    return summary


def fmt(v, digits=3) -> str:
    return "–" if v is None else f"{v:.{digits}f}" if abs(v) >= 10 ** -digits else f"{v:.1e}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "tasks")
    ap.add_argument("--feedback", choices=("truth", "localizer"), default="truth")
    ap.add_argument("--only", choices=("t1", "t2"))
    ap.add_argument("--controllers", default="PID,NMPC", help="comma-separated subset of PID,NMPC")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra override for every run (e.g. run.seed=3)")
    args = ap.parse_args()
    extra = [a for kv in args.set for a in ("--set", kv)]
    rigs = ROOT / "rigs"
    args.rig_t1, args.rig_t2 = ((rigs / "pool_t1.toml", rigs / "pool_t2.toml") if args.feedback == "truth"
                                else (rigs / "pool.toml", rigs / "pool_t2_localized.toml"))
    tag = "" if args.feedback == "truth" else "-localizer"
    controllers = {k: v for k, v in CONTROLLERS.items() if k in args.controllers.split(",")}
    if args.only in (None, "t1"):
        print(f"T1 — {args.rig_t1.name}\n")
        print("| controller | 3-D position RMSE [m] | yaw RMSE [deg] | success |")
        print("| --- | --- | --- | --- |")
        for name, sets in controllers.items():
            m = run(args.rig_t1, args.out / f"t1-{name.lower()}{tag}", sets + extra)["metrics"]["t1"]
            print(f"| {name} | {fmt(m['position_rmse_m'])} | {fmt(m['yaw_rmse_deg'], 2)} "
                  f"| {m['success']} / {m['trials']} |", flush=True)
        print()
    if args.only in (None, "t2"):
        print(f"T2 — {args.rig_t2.name}\n")
        print("| controller | trajectory | horizontal RMSE [m] | vertical RMSE [m] | 3-D P95 [m] |")
        print("| --- | --- | --- | --- | --- |")
        for name, sets in controllers.items():
            for traj in TRAJECTORIES:
                s = run(args.rig_t2, args.out / f"t2-{name.lower()}-{traj}{tag}",
                        sets + ["--set", f"components.t2.parameters.trajectory={traj}"] + extra)
                m = s["metrics"]["t2"]
                note = "" if m.get("complete") else " (incomplete)"
                print(f"| {name} | {traj}{note} | {fmt(m['horizontal_rmse_m'])} | "
                      f"{fmt(m['vertical_rmse_m'])} | {fmt(m['p95_3d_m'])} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
