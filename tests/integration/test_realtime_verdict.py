"""The real-time verdict (issue 22): a rig that cannot keep up — a component whose
every step sleeps longer than its slot at a high real-time factor — ends with
``realtime.verdict`` "missed" and a loud last line; ``--strict-realtime`` (or
``run.realtime_strict``, which the HIL rigs set) makes it exit 1. A rig with slack
ends "met"."""

from __future__ import annotations

import json
import textwrap

from conftest import RIGS, moonpool

from moonpool.orchestrator.rigfile import load_rig

# 20 Hz at real-time factor 4: a 12.5 ms slot; every step sleeps 20 ms.
BEHIND = """
[run]
until = "0.5s"
realtime = 4
plots = false

[components.counter]
entry = "faulty:Slow"
rate_hz = 20
[components.counter.parameters]
at_step = 0
sleep_s = 0.02
"""


def _rig(tmp_path, text=BEHIND):
    path = tmp_path / "behind.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_rig_that_cannot_keep_up_is_missed_with_a_loud_last_line(tmp_path):
    out = tmp_path / "out"
    proc = moonpool("run", str(_rig(tmp_path)), "--out", str(out))
    assert proc.returncode == 0, proc.stderr  # not strict: a verdict, not a failure
    rt = json.loads((out / "summary.json").read_text())["realtime"]
    assert rt["verdict"] == "missed"
    assert rt["tolerance_us"] == 12_500.0  # one period at the factor (the default)
    assert rt["ticks_over_tolerance"] >= 5
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("REAL TIME MISSED:"), proc.stderr
    assert "verdict missed" in proc.stdout


def test_strict_realtime_makes_a_missed_verdict_exit_1(tmp_path):
    out = tmp_path / "out"
    proc = moonpool("run", str(_rig(tmp_path)), "--out", str(out), "--strict-realtime",
                    "--quiet")
    assert proc.returncode == 1, proc.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["status"] == "failed" and s["realtime"]["verdict"] == "missed"
    assert s["realtime"]["strict"] is True
    assert "REAL TIME MISSED" in s["error"] and "realtime_strict" in s["error"]
    assert proc.stderr.count("REAL TIME MISSED") == 1  # said once


def test_a_rig_with_slack_is_met_and_the_tolerance_is_a_duration(tmp_path):
    out = tmp_path / "out"
    rig = _rig(tmp_path, BEHIND.replace("at_step = 0", "at_step = 1000"))
    proc = moonpool("run", str(rig), "--out", str(out), "--strict-realtime", "--quiet",
                    "--realtime", "1", "--set", 'run.realtime_tolerance="40ms"')
    assert proc.returncode == 0, proc.stderr
    rt = json.loads((out / "summary.json").read_text())["realtime"]
    assert rt["verdict"] == "met" and rt["tolerance_us"] == 40_000.0
    assert "REAL TIME MISSED" not in proc.stderr


def test_the_hil_rigs_are_strict_by_default():
    for name in ("pool_mcu", "pool_camera", "pool_hil"):  # (their devices need not exist)
        assert load_rig(RIGS / "hil" / f"{name}.toml").run.realtime_strict, name


def test_a_bad_tolerance_is_refused_at_check(tmp_path):
    proc = moonpool("check", str(_rig(tmp_path)), "--set", 'run.realtime_tolerance="fast"')
    assert proc.returncode == 2
    assert "run.realtime_tolerance" in proc.stderr
