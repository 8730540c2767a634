"""The `moonpool` CLI end to end, in real processes: run outputs, determinism
across seeds and process layouts, `check`, `describe`, `serve`, exit codes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from conftest import RIGS, ROOT, moonpool
from moonpool.orchestrator.recording import digest_of_recording, read_recording

pytestmark = pytest.mark.slow


def _run(tmp_path, name, *args):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "quickstart.toml"), "--out", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


def test_quickstart_writes_recording_summary_and_plots(tmp_path):
    summary, out = _run(tmp_path, "a", "--seed", "3")
    assert summary["status"] == "ok" and summary["error"] is None
    assert summary["sim_time_s"] == pytest.approx(30.0)
    for key in ("wall_time_s", "real_time_factor", "ticks", "components", "metrics", "digest"):
        assert key in summary
    assert summary["components"]["vehicle"]["steps"] == 3000
    assert summary["components"]["sensor"]["steps"] == 1500
    for stats in summary["components"].values():
        assert 0 < stats["p50_us"] <= stats["p99_us"] <= stats["max_us"]
    # The depth loop works: tracking error after settling is small.
    assert summary["metrics"]["pid"]["depth_rmse_m"] < 0.3
    # The recording holds every message and reproduces the digest.
    msgs = list(read_recording(out / "recording.mcap"))
    assert len(msgs) == summary["messages"] == 3000 + 1 + 1500 + 2 * 1500
    assert digest_of_recording(out / "recording.mcap") == summary["digest"]
    # An independent decoder (Foxglove's mcap-protobuf-support) reads it from the
    # schemas stored in the file alone.
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(out / "recording.mcap", "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        decoded = list(reader.iter_decoded_messages(topics=["/vehicle/state"]))
    assert len(decoded) == 3001
    assert decoded[0][0].name == "moonpool.v1.VehicleState"
    assert decoded[-1][3].header.source == "vehicle"
    pngs = list((out / "plots").glob("*.png"))
    assert {p.stem for p in pngs} >= {"vehicle", "sensor", "pid", "depth"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_same_seed_same_digest_any_layout(tmp_path):
    a, _ = _run(tmp_path, "a", "--seed", "3", "--until", "10")
    b, _ = _run(tmp_path, "b", "--seed", "3", "--until", "10")
    c, _ = _run(tmp_path, "c", "--seed", "3", "--until", "10", "--mode", "inproc")
    d, out_d = _run(tmp_path, "d", "--seed", "3", "--until", "10", "--mode", "process")
    e, _ = _run(tmp_path, "e", "--seed", "4", "--until", "10")
    assert a["digest"] == b["digest"] == c["digest"] == d["digest"]
    assert e["digest"] != a["digest"]  # the seed reaches the noise
    # After a successful multi-process run, none of its component processes remain.
    endpoints = [log.read_text().split(" on ", 1)[1].split()[0]
                 for log in (out_d / "logs").glob("*.log")]
    assert len(endpoints) == 3
    assert not [pid for pid, cmd in _cmdlines() if any(ep in cmd for ep in endpoints)]


def _cmdlines():
    from pathlib import Path

    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                yield int(d.name), (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue


def test_jacobi_digest_is_layout_independent(tmp_path):
    args = ("--seed", "5", "--until", "5", "--set", "run.algorithm=jacobi", "--set", "run.order=[]")
    a, _ = _run(tmp_path, "a", *args, "--mode", "inproc")
    b, _ = _run(tmp_path, "b", *args, "--mode", "process")
    assert a["digest"] == b["digest"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_remote_component_served_by_moonpool_serve_gives_the_same_digest(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "serve", "quickstart.pressure",
         "--bind", f"tcp://127.0.0.1:{port}"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        local, _ = _run(tmp_path, "local", "--until", "5")
        remote, _ = _run(tmp_path, "remote", "--until", "5",
                         "--set", "components.sensor.run=remote",
                         "--set", f"components.sensor.endpoint=tcp://127.0.0.1:{port}")
        assert remote["components"]["sensor"]["placement"] == "remote"
        assert remote["digest"] == local["digest"]
        # `moonpool serve` hosts one run after another.
        again, _ = _run(tmp_path, "again", "--until", "5",
                        "--set", "components.sensor.run=remote",
                        "--set", f"components.sensor.endpoint=tcp://127.0.0.1:{port}")
        assert again["digest"] == local["digest"]
    finally:
        server.terminate()
        server.wait(10)


BAD_RIG = """\
[run]
until = "10 parsecs"

[components.vehicle]
entry = "quickstart.vehicle"
rate_hz = 100

[components.pid]
entry = "quickstart.depth_pid"
rate_hz = 50
[components.pid.parameters]
kp_gain = 3.0

[[connections]]
from = "pid.wrench"
to = "vehicel.wrench"
"""


def test_check_reports_every_problem_with_its_location(tmp_path):
    rig = tmp_path / "bad.toml"
    rig.write_text(BAD_RIG)
    proc = moonpool("check", str(rig))
    assert proc.returncode == 2
    err = proc.stderr
    assert "3 problems" in err, err
    assert f"{rig}:2: run.until" in err
    assert f"{rig}:12: components.pid.parameters.kp_gain" in err
    assert f"{rig}:16: connections[0].to" in err and "vehicel" in err


def test_check_ok_and_run_refuses_a_bad_rig(tmp_path):
    ok = moonpool("check", str(RIGS / "quickstart.toml"))
    assert ok.returncode == 0 and "ok" in ok.stdout
    rig = tmp_path / "bad.toml"
    rig.write_text(BAD_RIG)
    proc = moonpool("run", str(rig), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert not (tmp_path / "out").exists()


def test_bad_flags_and_missing_files_exit_2(tmp_path):
    assert moonpool("run", str(RIGS / "quickstart.toml"), "--mode", "cloud").returncode == 2
    assert moonpool("run", str(tmp_path / "nope.toml")).returncode == 2
    assert moonpool("frobnicate").returncode == 2
    proc = moonpool("run", str(RIGS / "quickstart.toml"), "--set", "run.until")
    assert proc.returncode == 2 and "run.until" in proc.stderr


def test_describe_lists_ports_and_parameters():
    proc = moonpool("describe", "quickstart.vehicle")
    assert proc.returncode == 0
    assert "wrench" in proc.stdout and "moonpool.v1.VehicleState" in proc.stdout
    assert "mass_kg" in proc.stdout and "[kg]" in proc.stdout
    listing = moonpool("describe", "--list")
    assert "quickstart.pressure" in listing.stdout
    bad = moonpool("describe", "no.such:Thing")
    assert bad.returncode == 2 and "cannot import" in bad.stderr


def test_check_warns_about_components_reached_without_keys(tmp_path):
    """`moonpool check` passes a rig whose network endpoint says insecure = true, but
    names the component loudly; with keys or on the loopback it says nothing."""
    rig = tmp_path / "rig.toml"
    body = """
[run]
until = 1
[components.far]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 1
{extra}
"""
    rig.write_text(body.format(endpoint="tcp://10.0.0.2:5555", extra="insecure = true"))
    proc = moonpool("check", str(rig))
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: INSECURE: far reached over the network" in proc.stderr
    rig.write_text(body.format(endpoint="tcp://127.0.0.1:5555", extra=""))
    proc = moonpool("check", str(rig))
    assert proc.returncode == 0, proc.stderr
    assert "INSECURE" not in proc.stderr
