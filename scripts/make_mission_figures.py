#!/usr/bin/env python3
"""Writes the figures of docs/missions.md: one run of rigs/hadal_short.toml (seed 0) with
its plots, four of which are copied to docs/img/: the 3-D trajectory (INS, truth, the
mission's setpoints), the INS error north/east/down, the arm's joints and the suction.

    python scripts/make_mission_figures.py
    python scripts/make_mission_figures.py --dive RUN   # RUN: a finished run of rigs/hadal.toml

With ``--dive`` it copies the whole dive's trajectory and INS error plots from RUN/plots
to docs/img/dive_*.png instead (the dive takes about an hour; it is not re-run here).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {
    "trajectory-ins-truth-and-the-mission-s-setpoints.png": "mission_trajectory.png",
    "ins-error-north-east-down.png": "mission_ins_error.png",
    "arm-joints.png": "mission_arm_joints.png",
    "suction-pump-attached-events.png": "mission_suction.png",
}


DIVE = {
    "trajectory-ins-truth-and-the-mission-s-setpoints.png": "dive_trajectory.png",
    "ins-error-north-east-down.png": "dive_ins_error.png",
}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--dive":
        plots = Path(sys.argv[2]) / "plots"
        for src, dst in DIVE.items():
            if not (plots / src).is_file():
                sys.exit(f"error: {plots / src} does not exist; give the folder of a finished "
                         "run of rigs/hadal.toml (moonpool run rigs/hadal.toml --out RUN)")
            shutil.copyfile(plots / src, ROOT / "docs/img" / dst)
            print(f"wrote docs/img/{dst}")
        return
    if len(sys.argv) != 1:
        sys.exit("usage: python scripts/make_mission_figures.py [--dive RUN]")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run"
        subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run",
                        str(ROOT / "rigs/hadal_short.toml"), "--out", str(out), "--quiet"],
                       check=True, cwd=ROOT)
        for src, dst in FIGURES.items():
            shutil.copyfile(out / "plots" / src, ROOT / "docs/img" / dst)
            print(f"wrote docs/img/{dst}")


if __name__ == "__main__":
    main()
