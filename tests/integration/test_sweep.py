"""Sweeps on a real Dask LocalCluster (worker processes) over real rigs.

- every case's row carries the digest and metrics of the same case run alone
- a sweep killed half-way (SIGKILL to the whole process group) and run again runs
  only the missing cases
- bad input (unknown key, empty grid, unreachable scheduler): exit 2, nothing written
- a failing case is recorded with its error; the others run
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.orchestrator.sweep.design import make_cases, spec_from_args
from moonpool.orchestrator.sweep.report import make_report
from moonpool.orchestrator.sweep.results import flatten, read_table
from moonpool.orchestrator.sweep.runner import run_sweep

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
T1 = ROOT / "rigs" / "pool_t1.toml"
MOONPOOL = [sys.executable, "-m", "moonpool.orchestrator.cli"]


@pytest.fixture(scope="module")
def client():
    from moonpool.orchestrator.sweep.runner import _close, connect

    c = connect(None, 2)
    yield c
    _close(c, local=True)


def small_spec(**kw):
    args = dict(grid=["components.controller.parameters.kp=[60.0, 60.0, 80.0, 3.0],"
                      "[120.0, 120.0, 160.0, 6.0]"],
                seeds=2, until_s=2.0, fixed=["components.t1.parameters.count=1"])
    args.update(kw)
    return spec_from_args(T1, **args)


def test_rows_equal_the_cases_run_one_by_one(client, tmp_path):
    spec = small_spec()
    result = run_sweep(spec, tmp_path / "sw", client=client)
    assert (result.total, result.ran, result.skipped, result.failed) == (4, 4, 0, 0)
    rows = read_table(tmp_path / "sw").to_pylist()
    assert [r["case"] for r in rows] == [0, 1, 2, 3]
    for case, row in zip(make_cases(spec), rows):
        rig = load_and_check(T1, case.overrides(spec) + ["run.plots=false"], seed=case.seed,
                             until_s=spec.until_s)
        alone = run_rig(rig, tmp_path / case.name).summary  # as `moonpool run` does
        assert row["status"] == "ok" and row["seed"] == case.seed
        assert row["digest"] == alone["digest"]
        metrics = flatten("metrics", alone["metrics"], {})
        assert metrics and {k: row[k] for k in metrics} == metrics
    # The gains change the stream; the seed does not in this noise-free rig.
    assert rows[0]["digest"] == rows[1]["digest"] != rows[2]["digest"] == rows[3]["digest"]
    csv = (tmp_path / "sw" / "results.csv").read_text().splitlines()
    assert len(csv) == 5 and csv[0].startswith('"case","point"')
    report = make_report(tmp_path / "sw")
    assert "4 runs, 4 ok" in report.read_text()
    assert list(report.parent.glob("*.png"))
    again = run_sweep(spec, tmp_path / "sw", client=client)  # resumed: nothing to do
    assert (again.ran, again.skipped) == (0, 4)


def _quickstart_with_fault(tmp_path: Path, kind: str, extra: str = "") -> Path:
    """The quickstart rig plus a component ``fault`` (tests/support/faulty.py: ``kind``)
    at 10 Hz, misbehaving at step ``at_step`` (1000: not in a short run)."""
    rig = tmp_path / "fault.toml"
    rig.write_text((ROOT / "rigs" / "quickstart.toml").read_text()
                   .replace('order = ["sensor", "pid", "vehicle"]',
                            'order = ["sensor", "pid", "vehicle", "fault"]')
                   + f'\n[components.fault]\nentry = "faulty:{kind}"\nrate_hz = 10\n{extra}'
                   + '[components.fault.parameters]\nat_step = 1000\n')
    return rig


def test_a_failing_case_is_recorded_and_the_others_run(client, tmp_path):
    # A component that raises at a step the grid chooses: the rig checks (parameters
    # the check refuses stop the whole sweep before it starts, see validate), the run
    # fails at that step, the sweep goes on and records it.
    rig = _quickstart_with_fault(tmp_path, "Raises")
    spec = spec_from_args(rig, until_s=1.0,
                          grid=["components.fault.parameters.at_step=1000,3"],
                          fixed=["run.plots=false"])
    result = run_sweep(spec, tmp_path / "sw", client=client, keep="all")
    assert [r["status"] for r in result.rows] == ["ok", "failed"]
    assert result.failed == 1
    assert "deliberate failure for the test" in result.rows[1]["error"]
    assert (tmp_path / "sw" / "runs" / "case-0000" / "recording.mcap").is_file()
    assert read_table(tmp_path / "sw").column("status").to_pylist() == ["ok", "failed"]


def test_an_in_process_step_that_loops_fails_its_case_at_its_timeout(client, tmp_path):
    # A Dask worker runs its case on a thread that is not the main one: the step
    # watchdog's SIGALRM cannot reach it, and an in-process step that looped went on
    # until it returned (30 s here, for ever in real life) and the case was "ok". The
    # thread's own watchdog interrupts it at its step timeout. (faulty:Spins loops in
    # Python on the CPU clock: no system call to cut short.)
    rig = _quickstart_with_fault(tmp_path, "Spins", 'step_timeout = "0.3s"\n')
    spec = spec_from_args(rig, until_s=1.0, mode="inproc",
                          grid=["components.fault.parameters.at_step=1000,3"],
                          fixed=["run.plots=false", "components.fault.parameters.spin_s=30.0"])
    result = run_sweep(spec, tmp_path / "sw", client=client)
    assert [r["status"] for r in result.rows] == ["ok", "failed"], result.rows
    assert "did not return within 0.3 s" in result.rows[1]["error"]
    assert result.rows[1]["failed_component"] == "fault"


def test_a_parameter_the_check_refuses_stops_the_sweep_before_it_starts(client, tmp_path):
    # A negative sensor noise: the pressure sensor's own parameter check refuses it at
    # validation, naming the rig line; nothing is written.
    spec = spec_from_args(ROOT / "rigs" / "quickstart.toml", until_s=1.0,
                          grid=["components.sensor.parameters.noise_pa=10.0,-1.0"],
                          fixed=["run.plots=false"])
    with pytest.raises(RigValidationError) as err:
        run_sweep(spec, tmp_path / "sw", client=client, keep="all")
    assert "noise_pa and resolution_pa must be >= 0" in str(err.value)
    assert not (tmp_path / "sw").exists()


def test_killed_half_way_the_rerun_runs_only_the_missing_cases(tmp_path):
    out = tmp_path / "sw"
    argv = MOONPOOL + ["sweep", str(T1), "--grid", "components.vehicle.parameters.start_values.current_n=0.0,0.02,0.04",
                       "--seeds", "2", "--until", "4", "--set", "components.t1.parameters.count=1",
                       "--workers", "1", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while len(list((out / "cases").glob("*.json"))) < 2:
        assert proc.poll() is None, proc.stdout.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)  # the workers die with their nanny and the session
    done = {p.name: p.stat().st_mtime_ns for p in (out / "cases").glob("*.json")}
    assert 2 <= len(done) < 6, "killed too late to test a resume"
    r = subprocess.run(argv[:-1], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"{6 - len(done)} run now, {len(done)} recorded before" in r.stdout
    after = {p.name: p.stat().st_mtime_ns for p in (out / "cases").glob("*.json")}
    assert len(after) == 6
    assert all(after[name] == mtime for name, mtime in done.items())
    assert read_table(out).num_rows == 6


@pytest.mark.parametrize("extra, expect", [
    (["--grid", "components.controller.parameters.kpp=1,2"], "unknown parameter 'kpp'"),
    (["--grid", "components.controller.parameters.kp="], "has no values"),
    (["--random", "components.vehicle.parameters.x=uniform(2, 1)"], "needs a < b"),
    (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, extra, expect):
    out = tmp_path / "sw"
    r = subprocess.run(MOONPOOL + ["sweep", str(T1), "--until", "1", "--out", str(out), *extra],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert expect in r.stderr
    assert not out.exists()


def test_a_folder_of_another_sweep_is_refused_untouched(client, tmp_path):
    out = tmp_path / "sw"
    run_sweep(small_spec(seeds=1, until_s=0.5), out, client=client)
    before = (out / "sweep.json").read_text()
    r = subprocess.run(MOONPOOL + ["sweep", str(T1), "--until", "0.7", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "holds another sweep" in r.stderr
    assert (out / "sweep.json").read_text() == before
    assert json.loads(before)["until_s"] == 0.5
