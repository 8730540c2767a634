"""A sweep against a real Dask cluster on separate hosts: `dask scheduler` in network
namespace a, one `dask worker` in each of b and c (tests/support/netns.py), the
sweep's client in a. Its results table equals the same sweep's on a LocalCluster
(every case: status, seed, digest, metrics). Skipped, with the reason, where
namespaces cannot be made (not root)."""

from __future__ import annotations

import sys

import pytest

import netns
from conftest import ROOT

pytestmark = pytest.mark.slow

PY = sys.executable
SWEEP = ["sweep", str(ROOT / "rigs" / "pool_t1.toml"), "--grid",
         "components.controller.parameters.kp=[60.0, 60.0, 80.0, 3.0],[120.0, 120.0, 160.0, 6.0]",
         "--seeds", "2", "--until", "2", "--set", "components.t1.parameters.count=1", "--quiet"]


@pytest.fixture(scope="module")
def hosts():
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"network namespaces cannot be made here: {reason}")
    with netns.Hosts(["b", "c"]) as h:
        yield h


def test_sweep_on_scheduler_and_two_workers_in_other_namespaces(hosts, tmp_path):
    from moonpool.orchestrator.sweep.results import read_table

    logs = tmp_path / "logs"
    logs.mkdir()
    port = 8786
    sched_log = open(logs / "scheduler.log", "w")
    hosts.popen("a", [PY, "-m", "distributed.cli.dask_scheduler", "--host", "0.0.0.0",
                      "--port", str(port), "--no-dashboard"], stdout=sched_log,
                stderr=sched_log)
    netns.wait_for_line(logs / "scheduler.log", "Scheduler at", 60)
    for host in ("b", "c"):
        log = open(logs / f"worker-{host}.log", "w")
        hosts.popen(host, [PY, "-m", "distributed.cli.dask_worker",
                           f"tcp://{hosts.hub_addr(host)}:{port}", "--host", hosts.addr(host),
                           "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                           "--name", f"worker-{host}"], stdout=log, stderr=log, cwd=tmp_path)
    for host in ("b", "c"):
        netns.wait_for_line(logs / f"worker-{host}.log", "Registered to", 60)
    remote = hosts.run("a", [PY, "-m", "moonpool.orchestrator.cli", *SWEEP, "--scheduler",
                             f"tcp://{hosts.hub_addr('b')}:{port}", "--out", str(tmp_path / "far")],
                       capture_output=True, text=True, timeout=600)
    assert remote.returncode == 0, remote.stderr
    import subprocess

    local = subprocess.run([PY, "-m", "moonpool.orchestrator.cli", *SWEEP, "--workers", "2",
                            "--out", str(tmp_path / "local")], capture_output=True, text=True,
                           timeout=600)
    assert local.returncode == 0, local.stderr
    far, near = read_table(tmp_path / "far").to_pylist(), read_table(tmp_path / "local").to_pylist()
    assert len(far) == len(near) == 4
    drop = {"wall_time_s", "worker"}
    for a, b in zip(far, near):
        assert {k: v for k, v in a.items() if k not in drop} == \
               {k: v for k, v in b.items() if k not in drop}
    # the cases ran on the workers in b and c, not in a
    assert {r["worker"] for r in far} <= {"worker-b", "worker-c"}
    assert len({r["worker"] for r in near}) >= 1 and None not in {r["worker"] for r in far}
