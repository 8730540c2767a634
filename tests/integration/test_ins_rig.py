"""rigs/ins.toml (the INS, docs/navigation.md) in real processes: a few seconds run in
``inproc`` and ``process`` mode give the same digest; the INS publishes valid
estimates beside the truth and reports its metrics."""

from __future__ import annotations

import json

import pytest

from conftest import RIGS, moonpool

pytestmark = pytest.mark.slow


def _run(tmp_path, name, *args):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "ins.toml"), "--out", str(out), "--until", "4", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


def test_ins_rig_same_digest_inproc_and_process(tmp_path):
    a, out = _run(tmp_path, "a", "--mode", "inproc")
    b, _ = _run(tmp_path, "b", "--mode", "process")
    assert a["status"] == b["status"] == "ok"
    assert a["digest"] == b["digest"]
    m = a["metrics"]["ins"]
    assert m["imu_refused"] == 0 and m["dvl_refused"] == 0 and m["pressure_refused"] == 0
    # 40 samples each in 4 s; the first two come during the 0.2 s alignment.
    assert m["dvl_applied"] >= 37 and m["pressure_applied"] >= 37
    assert m["final_horizontal_error_m"] < 0.5
    assert {p.stem for p in (out / "plots").glob("*.png")} >= {"ins-vs-truth-north-and-east",
                                                               "ins-vs-truth-depth"}
