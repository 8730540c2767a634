"""The progress bar and the end-of-run table (what a terminal user sees)."""

import io

from moonpool.orchestrator.cli import Progress
from moonpool.orchestrator.summary import format_table


def test_progress_bar_shows_fraction_time_and_clears():
    out = io.StringIO()
    p = Progress(10_000_000_000, stream=out)
    p(2_500_000_000)
    text = out.getvalue()
    assert "25.0%" in text and "t=    2.50 s" in text and "#######" in text
    p.done()
    assert out.getvalue().endswith("\r")


def test_table_lists_components_and_failure():
    summary = {
        "status": "failed", "error": "component 'bad': boom", "sim_time_s": 1.0,
        "wall_time_s": 0.5, "real_time_factor": 2.0, "ticks": 100, "digest": "ab" * 32,
        "components": {"bad": {"steps": 3, "p50_us": 1.0, "p99_us": 2.0, "max_us": 3.0,
                               "placement": "process"}},
        "metrics": {"pid": {"depth_rmse_m": 0.1}},
    }
    table = format_table(summary)
    assert "bad" in table and "process" in table and "boom" in table
    assert "pid.depth_rmse_m" in table
