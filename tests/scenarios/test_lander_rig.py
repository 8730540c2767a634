"""rigs/lander_descent.toml (seed 000, Fig. 7), its first 30 s: both landers (mesh
backend; one with fin lift and Magnus, one without) sink at the speed where their
weight, buoyancy and drag balance, spin from their twisted fins, drift with the current,
and the lift/Magnus one moves differently. The full descent to 3,000 m is the figure of
docs/hydrodynamics.md (docs/figures/lander_descent.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import RIGS

from moonpool.orchestrator.recording import decode_recorded, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow


def test_lander_descent_first_30_s(tmp_path):
    rig = load_and_check(RIGS / "lander_descent.toml", until_s=30.0)
    result = run_rig(rig, tmp_path / "out")
    assert result.ok, result.summary["error"]
    last = {}
    for m in read_recording(tmp_path / "out" / "recording.mcap"):
        last[m.topic] = decode_recorded(m)
    states = {k: last[f"/{k}/state"] for k in ("lifted", "plain")}
    for name, s in states.items():
        assert 15.0 < s.position_ned_m.z < 30.0, (name, s.position_ned_m.z)  # ~0.8 m/s
        assert 0.5 < s.linear_velocity_body_mps.z < 1.2, name  # body z stays near vertical
        assert abs(s.angular_velocity_body_radps.z) > 0.1, name  # the fins spin it
        assert s.position_ned_m.y > 0.5, name  # carried east by the current
    a, b = (np.array([s.position_ned_m.x, s.position_ned_m.y, s.yaw_rad]) for s in states.values())
    assert np.max(np.abs(a - b)) > 0.1  # lift and Magnus change the motion
