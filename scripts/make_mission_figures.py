#!/usr/bin/env python3
"""Writes the figures of docs/missions.md: one run of rigs/hadal_short.toml (seed 0) with
its plots, four of which are copied to docs/img/: the 3-D trajectory (INS, truth, the
mission's setpoints), the INS error north/east/down, the arm's joints and the suction.

    python scripts/make_mission_figures.py
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


def main() -> None:
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
