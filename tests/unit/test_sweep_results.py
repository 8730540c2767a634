"""A sweep counts a run a component ended well (status "terminated": a mission that
completed, `Component.finish`) as a success, like one that ran to its end; only a
failed run is a failure — in the row test, the report's success rate and its list of
failed runs."""

from __future__ import annotations

from moonpool.orchestrator.sweep.report import make_report
from moonpool.orchestrator.sweep.results import succeeded, write_tables


def _row(case, status, error=None):
    return {"case": case, "point": case, "replicate": 0, "seed": case, "status": status,
            "error": error, "failed_component": None, "wall_time_s": 1.0, "sim_time_s": 1.0,
            "digest": "x", "worker": "w", "param.k": float(case),
            "metrics.mission.total_mission_time_s": 100.0 + case}


def test_terminated_runs_succeed(tmp_path):
    assert succeeded({"status": "ok"}) and succeeded({"status": "terminated"})
    assert not succeeded({"status": "failed"}) and not succeeded({})
    rows = [_row(0, "terminated"), _row(1, "ok"), _row(2, "failed", "mission: aborted"),
            _row(3, "terminated")]
    write_tables(tmp_path, rows)
    text = make_report(tmp_path).read_text()
    assert "4 runs, 3 ok, 1 failed (75 % success)" in text
    failed = text[text.index("## Failed runs"):]
    assert "mission: aborted" in failed and "| 0 |" not in failed and "| 3 |" not in failed
