"""A sweep on a Dask cluster of separate hosts (network namespaces), against the
same sweep's table from a LocalCluster.

``sudo .venv/bin/python benchmarks/sweep_hosts.py --compare DIR [--sweep sweeps/t1_gains.toml]``

Hosts (tests/support/netns.py): `dask scheduler` in namespace a, one `dask worker`
(1 process, 1 thread) in each of b and c, the sweep's client (`moonpool sweep SWEEP
--scheduler tcp://…`) in a. Prints its wall time, the rows per worker, and whether
every row equals the row of the same case in DIR/results.parquet (a LocalCluster run
of the same sweep, e.g. from benchmarks/sweep.py) in every column but the wall time
and the worker's name: "met" when all do. Needs root (namespaces, veth pairs).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", type=Path, default=ROOT / "sweeps" / "t1_gains.toml")
    ap.add_argument("--compare", type=Path, required=True, help="a LocalCluster sweep folder")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import netns

    from moonpool.orchestrator.sweep.results import read_table

    reason = netns.unavailable()
    if reason:
        print(f"cannot make namespaces: {reason}")
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="moonpool-sweep-hosts-"))
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    py, port = sys.executable, 8786
    with netns.Hosts(["b", "c"]) as hosts:
        with open(logs / "scheduler.log", "w") as f:
            hosts.popen("a", [py, "-m", "distributed.cli.dask_scheduler", "--host", "0.0.0.0",
                              "--port", str(port), "--no-dashboard"], stdout=f, stderr=f)
        netns.wait_for_line(logs / "scheduler.log", "Scheduler at", 60)
        for host in ("b", "c"):
            with open(logs / f"worker-{host}.log", "w") as f:
                hosts.popen(host, [py, "-m", "distributed.cli.dask_worker",
                                   f"tcp://{hosts.hub_addr(host)}:{port}", "--host",
                                   hosts.addr(host), "--nworkers", "1", "--nthreads", "1",
                                   "--no-dashboard", "--name", f"worker-{host}"],
                            stdout=f, stderr=f)
        for host in ("b", "c"):
            netns.wait_for_line(logs / f"worker-{host}.log", "Registered to", 60)
        t0 = time.perf_counter()
        r = hosts.run("a", [py, "-m", "moonpool.orchestrator.cli", "sweep", str(args.sweep),
                            "--scheduler", f"tcp://{hosts.hub_addr('b')}:{port}",
                            "--out", str(out / "sweep"), "--quiet"],
                      capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        return 1
    far = read_table(out / "sweep").to_pylist()
    near = read_table(args.compare).to_pylist()
    drop = {"wall_time_s", "worker"}
    same = sum({k: v for k, v in a.items() if k not in drop} ==
               {k: v for k, v in b.items() if k not in drop} for a, b in zip(far, near))
    print(f"sweep on scheduler (ns a) + workers (ns b, c): {len(far)} rows in {wall:.1f} s; "
          f"rows per worker {dict(Counter(r['worker'] for r in far))}")
    print(f"rows equal to the LocalCluster table {args.compare}: {same}/{len(near)}")
    ok = len(far) == len(near) == same
    print("met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
