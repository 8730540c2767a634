"""`moonpool conformance ENDPOINT` (orchestrator/conformance.py).

- The SDK's serve loop passes every check, in-process (a thread) and through the CLI
  against `moonpool serve` of a few shipped components; every registered component
  passes the cheap (session-free) checks.
- The C component of tests/support/c_component/ passes every check.
- Each check the suite can report fails against a server broken in exactly that way
  (tests/support/broken_servers.py), so none of them passes vacuously.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import zmq
from broken_servers import BREAKS, Serving
from conftest import ROOT, SUPPORT, c_compiler, moonpool
from moonpool.orchestrator.conformance import run_suite

PARAMS = {"gain": 2.0}


@pytest.fixture
def sock_dir():
    with tempfile.TemporaryDirectory(prefix="mp-cf-") as d:  # short: ipc paths are limited
        yield Path(d)


def _names(results) -> list[str]:
    return [r.name for r in results]


def test_the_sdk_passes_every_check(sock_dir):
    serving = Serving(None, f"ipc://{sock_dir}/ok.sock")
    try:
        results = run_suite(f"ipc://{sock_dir}/ok.sock", PARAMS, timeout_s=2.0,
                            peer_timeout_s=0.2)
    finally:
        serving.stop()
    assert [r for r in results if not r.ok] == []
    # Every check the suite has is in the table (and has a broken server below).
    assert _names(results) == list(BREAKS)


@pytest.mark.parametrize("broken", list(BREAKS))
def test_each_check_fails_against_a_server_broken_that_way(sock_dir, broken):
    endpoint = f"ipc://{sock_dir}/b.sock"
    serving = Serving(broken, endpoint)
    try:
        results = run_suite(endpoint, PARAMS, timeout_s=0.5,
                            peer_timeout_s=0.2 if broken == "peer-timeout" else 0)
    finally:
        serving.stop()
    by_name = {r.name: r for r in results}
    assert broken in by_name, _names(results)
    assert not by_name[broken].ok, by_name[broken]


def test_nothing_served_passes_nothing(sock_dir):
    # The checks over all replies used to pass with no reply at all ("2 of 3 checks
    # passed" against an endpoint nobody serves).
    endpoint = f"ipc://{sock_dir}/nobody.sock"
    results = run_suite(endpoint, PARAMS, timeout_s=0.3, peer_timeout_s=0)
    assert results and not any(r.ok for r in results), results
    got = {r.name: r.got for r in results}
    assert got["errors-have-fix"] == "no Error reply to check"
    assert got["replies-version-1"] == "no reply to check"
    out = moonpool("conformance", endpoint, "--timeout", "0.3", timeout=60)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "0 of 3 checks passed" in out.stdout
    assert f"nothing answered at {endpoint} within 0.3 s" in out.stderr
    assert "moonpool serve ENTRY --bind" in out.stderr


def _serve(entry: str, endpoint: str, log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "moonpool.orchestrator.cli", "serve",
                                 entry, "--bind", endpoint], cwd=ROOT, stdout=f, stderr=f)
    for _ in range(200):
        if "serving" in log.read_text() or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, log.read_text()
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("entry, params", [
    ("quickstart.pressure", []),
    ("quickstart.depth_pid", []),
    ("sensors.imu", []),
])
def test_moonpool_serve_passes_through_the_cli(sock_dir, tmp_path, entry, params):
    endpoint = f"ipc://{sock_dir}/s.sock"
    proc = _serve(entry, endpoint, tmp_path / "serve.log")
    try:
        out = moonpool("conformance", endpoint, *params, timeout=60)
    finally:
        _stop(proc)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout and "checks passed" in out.stdout


@pytest.mark.slow
def test_every_registered_component_passes_the_cheap_checks(sock_dir, tmp_path):
    # What `moonpool describe --list` prints: every registered name.
    from moonpool.components.sdk.loading import registered

    entries = sorted(registered())
    assert len(entries) > 5, entries
    from moonpool.components.sdk.loading import load_entry
    from moonpool.components.sdk.serve import Server

    failures = {}
    for i, entry in enumerate(entries):
        ctx = zmq.Context()
        endpoint = f"ipc://{sock_dir}/{i}.sock"
        server = Server(load_entry(entry), endpoint, context=ctx)
        import threading

        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            results = run_suite(endpoint, cheap=True, timeout_s=5.0)
        finally:
            server.stop()
            thread.join(5)
            ctx.destroy(linger=0)
        bad = [r for r in results if not r.ok]
        if bad:
            failures[entry] = bad
    assert failures == {}


@pytest.mark.slow
def test_the_c_component_passes_every_check(sock_dir, tmp_path):
    cc = c_compiler()
    libdir = Path(zmq.__file__).resolve().parent.parent / "pyzmq.libs"
    lib = sorted(libdir.glob("libzmq*.so*"))[0]
    binary = tmp_path / "scaler"
    build = subprocess.run([cc, "-std=c11", "-O2", "-ffp-contract=off", "-o", str(binary),
                            str(SUPPORT / "c_component" / "scaler.c"), str(lib),
                            f"-Wl,-rpath,{lib.parent}", "-lm"],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    endpoint = f"ipc://{sock_dir}/c.sock"
    with open(tmp_path / "c.log", "w") as log:
        proc = subprocess.Popen([str(binary), endpoint], stdout=log, stderr=log)
    try:
        time.sleep(0.3)
        out = moonpool("conformance", endpoint, "--set", "gain=2", timeout=60)
    finally:
        _stop(proc)
    assert out.returncode == 0, out.stdout + (tmp_path / "c.log").read_text()[-2000:]
