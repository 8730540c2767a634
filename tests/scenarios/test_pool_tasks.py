"""rigs/pool_t1.toml and rigs/pool_t2.toml: the whole control chain on the real FMU.

task → controller (PID or NMPC) → OSQP allocator → thrusters (curves, rotor lag) →
hydrodynamics FMU, in a current. Short versions of the runs docs/tasks.md tables
(scripts/task_table.py runs the full ones): the metrics land in summary.json under
metrics.t1 / metrics.t2 with the contract's keys, and the vehicle holds and follows.
"""

from __future__ import annotations

import json

import pytest
from conftest import RIGS, moonpool

pytestmark = pytest.mark.slow


def _run(tmp_path, rig, *sets):
    out = tmp_path / "out"
    args = ["run", str(RIGS / rig), "--out", str(out), "--quiet"]
    for s in sets:
        args += ["--set", s]
    proc = moonpool(*args, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


def test_t1_pid_holds_two_setpoints_against_the_current(tmp_path, fmus):
    s = _run(tmp_path, "pool_t1.toml", "components.t1.parameters.count=2", "run.until=120s")
    t1 = s["metrics"]["t1"]
    print({k: t1[k] for k in ("position_rmse_m", "yaw_rmse_deg", "success", "trials")})
    assert set(t1) >= {"position_rmse_m", "yaw_rmse_deg", "success", "trials"}
    assert t1["trials"] == 2 and t1["success"] == 2
    assert t1["position_rmse_m"] < 0.01 and t1["yaw_rmse_deg"] < 1.0
    # the current is felt: the PID integral carries the drag of 5 cm/s
    assert abs(s["metrics"]["controller"]["integral"]["x"]) > 0.05
    # the allocator never needed to saturate a thruster for these small moves
    assert s["metrics"]["allocator"]["saturated_steps"] == 0


def test_t2_nmpc_follows_the_straight_line(tmp_path, fmus):
    s = _run(tmp_path, "pool_t2.toml", "components.t2.parameters.trajectory=straight",
             "components.controller.entry=control.nmpc", "components.controller.rate_hz=10",
             "run.until=40s")
    t2 = s["metrics"]["t2"]
    print(t2)
    assert t2["complete"] and t2["trajectory"] == "straight"
    assert set(t2) >= {"horizontal_rmse_m", "vertical_rmse_m", "p95_3d_m"}
    assert t2["horizontal_rmse_m"] < 0.05 and t2["vertical_rmse_m"] < 0.05
    assert 0.0 < t2["p95_3d_m"] < 0.1
    assert s["metrics"]["controller"]["failures"] == 0


def test_t2_stops_short_is_flagged_incomplete(tmp_path, fmus):
    s = _run(tmp_path, "pool_t2.toml", "components.t2.parameters.trajectory=ellipse", "run.until=20s")
    assert s["metrics"]["t2"]["complete"] is False
