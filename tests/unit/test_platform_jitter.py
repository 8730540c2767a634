"""benchmarks/platform_jitter.py: the probes run and the cyclictest output is read right
(nothing here asserts how punctual the machine is)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("platform_jitter", ROOT / "benchmarks" / "platform_jitter.py")
pj = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pj)


def test_the_pacer_probe_paces_every_tick(capsys):
    assert pj.main(["--seconds", "0.3", "--rate-hz", "100", "--priority", "0",
                    "--no-cyclictest", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    fig = out["probes"]["pacer"]
    assert fig["n"] == 30 and fig["scheduler"] == "normal"  # 31 ticks, the first anchors
    assert 0 <= fig["p50_us"] <= fig["p99_us"] <= fig["max_us"]
    assert fig["over_1ms"] <= fig["n"] and fig["steal_ms_per_s"] >= 0


def test_cyclictest_histogram_is_read(monkeypatch):
    canned = "\n".join([
        "# /dev/cpu_dma_latency set to 0us", "# Histogram",
        "000010 000005", "000011 000000", "000050 000004", "001200 000001",
        "# Total: 000000010", "# Min Latencies: 00010", "# Avg Latencies: 00030",
        "# Max Latencies: 04321", ""])
    seen = {}

    def fake_run(cmd, **kw):
        seen["cmd"] = cmd
        return subprocess.CompletedProcess(cmd, 0, canned, "")

    monkeypatch.setattr(pj.shutil, "which", lambda name: "/usr/bin/cyclictest")
    monkeypatch.setattr(pj.subprocess, "run", fake_run)
    fig = pj.cyclictest_probe(2, 100, 50)
    assert "-i" in seen["cmd"] and seen["cmd"][seen["cmd"].index("-i") + 1] == "10000"
    assert seen["cmd"][-2:] == ["-p", "50"]
    assert fig["n"] == 10 and fig["over_1ms"] == 1
    assert fig["p50_us"] == float(np.percentile([10] * 5 + [50] * 4 + [1200], 50))
    assert fig["max_us"] == 4321.0  # the summary line, beyond the histogram's last bin


def test_cyclictest_missing_or_failing(monkeypatch):
    monkeypatch.setattr(pj.shutil, "which", lambda name: None)
    assert pj.cyclictest_probe(1, 100, 0) is None
    monkeypatch.setattr(pj.shutil, "which", lambda name: "/usr/bin/cyclictest")
    monkeypatch.setattr(pj.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(
        cmd, 1, "", "Unable to change scheduling policy!"))
    assert "scheduling policy" in pj.cyclictest_probe(1, 100, 50)["error"]
