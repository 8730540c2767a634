"""rigs/pool.toml: station keeping closed through the overhead camera, the AprilTag
localizer and the EKF (the controller never sees the true state).

A short version of the default rig: one setpoint off the launch point, a quarter turn,
scored over its late hold. The localizer and filter errors are checked against the
truth the recording carries beside them.
"""

from __future__ import annotations

import json

import pytest
from conftest import RIGS, moonpool

pytestmark = pytest.mark.slow


def test_pool_rig_holds_a_setpoint_through_the_camera(tmp_path, fmus):
    out = tmp_path / "out"
    proc = moonpool("run", str(RIGS / "pool.toml"), "--out", str(out), "--quiet", "--until", "30",
                    "--set", "components.t1.parameters.setpoints=[[0.4, 0.3, 1.0, 90.0]]",
                    "--set", "components.t1.parameters.trial_s=30",
                    "--set", "components.t1.parameters.window_start_s=20",
                    "--set", "components.t1.parameters.window_end_s=30", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    s = json.loads((out / "summary.json").read_text())
    t1, loc, ekf = s["metrics"]["t1"], s["metrics"]["localizer"], s["metrics"]["ekf"]
    print(t1["per_trial"], loc, ekf)
    assert t1["success"] == 1 and t1["trials"] == 1
    assert t1["position_rmse_m"] < 0.01 and t1["yaw_rmse_deg"] < 1.0
    # every frame gave a valid measurement, a few mm from the truth
    assert loc["images"] == 900 and loc["valid"] == 900
    assert loc["horizontal_rmse_m"] < 0.005
    # the filter used them (stamped 40 ms late: applied at their image times)
    assert ekf["applied"]["pose"] >= 890 and ekf["rejected"]["pose"] == 0
    # the pixels were left out of the recording (run.record_exclude) but the rest is there
    assert (out / "recording.mcap").stat().st_size < 50_000_000
