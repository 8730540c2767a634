"""run.record_exclude: an output left out of the recording is still delivered and hashed."""

from __future__ import annotations

import json

from conftest import RIGS, moonpool

from moonpool.orchestrator.recording import read_recording


def test_excluded_output_is_not_written_but_the_digest_is_unchanged(tmp_path):
    runs = {}
    for label, extra in (("all", []), ("exclude", ["--set", 'run.record_exclude=["pid.wrench"]'])):
        out = tmp_path / label
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "3", "--out", str(out), "--quiet",
                        "--set", "plots=[]", *extra)
        assert proc.returncode == 0, proc.stderr
        topics = {m.topic for m in read_recording(out / "recording.mcap")}
        runs[label] = (json.loads((out / "summary.json").read_text())["digest"], topics)
    assert runs["all"][0] == runs["exclude"][0]
    assert "/pid/wrench" in runs["all"][1] and "/pid/wrench" not in runs["exclude"][1]
    assert runs["all"][1] - {"/pid/wrench"} == runs["exclude"][1]


def test_plotting_an_excluded_output_is_a_problem():
    proc = moonpool("check", str(RIGS / "quickstart.toml"), "--set", 'run.record_exclude=["sensor.pressure"]')
    assert proc.returncode == 2
    assert "sensor.pressure is in run.record_exclude" in proc.stderr + proc.stdout
