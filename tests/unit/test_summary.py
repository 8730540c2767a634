"""summary.json and the end-of-run table (orchestrator/summary.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from moonpool.orchestrator.summary import format_table, step_stats_us, write_summary


def _summary(**changes: object) -> dict:
    s = {
        "status": "ok",
        "error": None,
        "sim_time_s": 10.0,
        "wall_time_s": 2.5,
        "real_time_factor": 4.0,
        "ticks": 1000,
        "digest": "0123456789abcdef" + "f" * 48,
        "components": {
            "vehicle": {"steps": 1000, "p50_us": 12.5, "p99_us": 40.25, "max_us": 120.0,
                        "placement": "inprocess"},
            "pressure_sensor": {"steps": 500, "p50_us": 3.0, "p99_us": 9.0, "max_us": 11.0,
                                "placement": "tcp://pool-pi:5555"},
        },
        "metrics": {"depth_pid": {"rmse_m": 0.0123456789, "settled": True}},
    }
    s.update(changes)
    return s


def test_step_stats() -> None:
    assert step_stats_us([]) == {"p50_us": 0.0, "p99_us": 0.0, "max_us": 0.0}
    stats = step_stats_us(np.arange(1, 101, dtype=np.int64) * 1000)  # 1..100 µs
    assert stats["p50_us"] == pytest.approx(50.5)
    assert stats["p99_us"] == pytest.approx(99.01)
    assert stats["max_us"] == 100.0
    assert all(type(v) is float for v in stats.values())
    assert step_stats_us([2500]) == {"p50_us": 2.5, "p99_us": 2.5, "max_us": 2.5}


def test_write_summary(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    s = _summary(real_time_factor=float("inf"))
    s["metrics"]["ekf"] = {"nees": float("nan"), "count": np.int64(3), "rms": np.float32(0.5),
                           "xy": (1.0, np.float64(-np.inf))}
    write_summary(path, s)
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    assert text.startswith('{\n  "status": "ok",')  # indent 2, insertion order
    data = json.loads(text)
    assert list(data) == list(s)
    assert data["real_time_factor"] is None
    assert data["metrics"]["ekf"] == {"nees": None, "count": 3, "rms": 0.5, "xy": [1.0, None]}
    assert list(data["components"]) == ["vehicle", "pressure_sensor"]
    assert not (tmp_path / "summary.json.tmp").exists()


def test_table_ok() -> None:
    table = format_table(_summary())
    lines = table.splitlines()
    head = lines[0]
    for part in ("ok", "10.000 s", "2.500 s", "4.00x", "1000", "0123456789abcdef"):
        assert part in head
    assert "0123456789abcdeff" not in head  # digest cut to 16 hex
    assert "vehicle" in table and "pressure_sensor" in table
    assert "tcp://pool-pi:5555" in table
    header = next(line for line in lines if line.startswith("component"))
    assert "where" in header and "p99 µs" in header
    # Columns line up: every row's "steps" cell ends where the header's does.
    end = header.index("steps") + len("steps")
    rows = [line for line in lines if line.startswith(("vehicle", "pressure_sensor"))]
    assert [r[:end].rstrip()[-4:] for r in rows] == ["1000", " 500"]
    assert "depth_pid.rmse_m = 0.0123457" in table
    assert "depth_pid.settled = true" in table
    assert "error" not in table


def test_table_failed_shows_error() -> None:
    table = format_table(_summary(status="failed", error="component 'pid': step timed out",
                                  real_time_factor=None, components={}, metrics={}))
    assert table.splitlines()[0].startswith("run failed")
    assert "RTF -" in table
    assert table.splitlines()[-1] == "error: component 'pid': step timed out"


def test_table_tolerates_missing_values() -> None:
    table = format_table({"status": "failed", "components": {"x": {}}})
    assert "x" in table and "error: unknown error" in table
