#!/usr/bin/env python3
"""Tick overhead of a chain over TCP (+ CURVE) across network namespaces vs ipc on one host.

    sudo .venv/bin/python benchmarks/tcp_overhead.py [--ticks 5000] [--chains 1,4] [--repeat 3]

The chain of benchmarks/chain.py (a counter, then relays) at a 1 ms period, Jacobi,
every component stepped at every tick, recording off. Placements:

- ``ipc``: each component a child process of the orchestrator on an ipc endpoint
  (``run = "process"``), the one-host baseline;
- ``tcp-lo``, ``tcp-lo+curve``: each served by ``moonpool serve`` on 127.0.0.1,
  without and with CURVE keys;
- ``netns``, ``netns+curve``: each served in network namespace b, the orchestrator in
  namespace a, over a veth pair (tests/support/netns.py), without (``insecure``) and
  with CURVE keys — components on another host, minus a physical network.

The orchestrator runs in a child process (in namespace a where it applies) that
records the wall-clock time at which the first component's output is published at
each tick (the observer is wrapped for that): the differences are the tick times,
setup excluded. Printed, over --repeat runs of each placement taken in turn (the
machine's load drifts): the median and range of the p50 and p99 µs per tick, and of
the p50 of the first component's step round trip (summary.json). All placements must
give the same digest.
Namespaces need root; without it only ipc and tcp-lo rows are measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "support"))

PERIOD_NS = 1_000_000


# -- the worker: one run, in this process ----------------------------------------------


def worker(spec: dict) -> dict:
    import numpy as np

    from moonpool.orchestrator import run as run_mod
    from moonpool.orchestrator.rig import (
        ComponentConfig,
        ConnectionConfig,
        Rig,
        RunConfig,
        Schedule,
    )

    sched = Schedule(Fraction(1_000_000_000, PERIOD_NS))
    comps, conns = [], []
    for i, ep in enumerate(spec["endpoints"]):
        cls = "Counter" if i == 0 else "Relay"
        keys = spec.get("keys")
        if ep:
            comps.append(ComponentConfig(
                f"c{i}", "", "remote", sched, endpoint=ep,
                server_key=Path(keys["server"]) if keys else None,
                client_key=Path(keys["client"]) if keys else None,
                insecure=not keys and not ep.startswith("tcp://127.")))
        else:
            comps.append(ComponentConfig(f"c{i}", f"chain:{cls}", "process", sched, base_dir=HERE))
        if i:
            conns.append(ConnectionConfig(f"c{i-1}", "out", f"c{i}", "in"))
    run = RunConfig(until_ns=spec["ticks"] * PERIOD_NS, algorithm="jacobi", record=False,
                    plots=False, peer_timeout_ns=30 * 10**9)
    rig = Rig(Path("chain.toml"), "chain", run, tuple(comps), tuple(conns))

    stamps: list[int] = []
    original = run_mod.RunObserver.write

    def write(self, index, log_time_ns, payload, attachment=None):
        if index == 0:
            stamps.append(time.perf_counter_ns())
        original(self, index, log_time_ns, payload, attachment)

    run_mod.RunObserver.write = write
    with tempfile.TemporaryDirectory() as out:
        result = run_mod.run_rig(rig, Path(out))
    s = result.summary
    if not result.ok:
        return {"error": s["error"]}
    ticks = np.diff(np.asarray(stamps[len(stamps) // 10:], dtype=np.int64)) / 1e3  # warm-up out
    c0 = s["components"]["c0"]
    return {"p50": float(np.percentile(ticks, 50)), "p99": float(np.percentile(ticks, 99)),
            "mean": float(ticks.mean()), "step_p50": c0["p50_us"], "step_p99": c0["p99_us"],
            "digest": s["digest"], "ticks": len(ticks)}


# -- the parent: servers, namespaces, one worker per row ----------------------------------


def _worker(spec: dict, prefix: list[str] = ()) -> dict:
    r = subprocess.run([*prefix, sys.executable, __file__, "--worker", json.dumps(spec)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"worker failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _serve(argv_prefix: list[str], n: int, addr: str, port0: int, keys: dict | None,
           logs: Path) -> tuple[list[subprocess.Popen], list[str]]:
    procs, eps = [], []
    for i in range(n):
        ep = f"tcp://{addr}:{port0 + i}"
        cls = "Counter" if i == 0 else "Relay"
        argv = [*argv_prefix, sys.executable, "-m", "moonpool.orchestrator.cli", "serve",
                f"chain.py:{cls}", "--bind", ep, "--base-dir", str(HERE)]
        argv += (["--key", keys["server_secret"], "--allow", keys["client_public"]] if keys
                 else ([] if addr.startswith("127.") else ["--insecure"]))
        log = open(logs / f"{addr}-{port0 + i}.log", "w")
        procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
        eps.append(ep)
    from netns import wait_for_line

    for i, p in enumerate(procs):
        wait_for_line(logs / f"{addr}-{port0 + i}.log", "serving ", 60, p)
    return procs, eps


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=5000)
    ap.add_argument("--chains", default="1,4", help="chain lengths, e.g. 1,2,4")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per placement, interleaved (the machine's load drifts)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0

    import netns
    from moonpool.components.sdk.security import generate_keys

    tmp = Path(tempfile.mkdtemp(prefix="moonpool-bench-"))
    generate_keys("server", tmp)
    generate_keys("orchestrator", tmp)
    server_keys = {"server_secret": str(tmp / "server.key_secret"),
                   "client_public": str(tmp / "orchestrator.key")}
    client_keys = {"server": str(tmp / "server.key"), "client": str(tmp / "orchestrator.key_secret")}
    reason = netns.unavailable()
    print(f"# tcp_overhead: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {args.ticks} ticks at 1 ms, Jacobi, recording off, "
          f"{args.repeat} interleaved runs per row: median (min-max)"
          + (f"; namespaces skipped: {reason}" if reason else ""))
    print(f"{'N':>2} {'placement':>12} {'p50 µs/tick':>18} {'p99 µs/tick':>20} "
          f"{'c0 step p50 µs':>18}  digest")
    digests: dict[int, set] = {}

    def fmt(values: list[float]) -> str:
        values = sorted(values)
        return f"{values[len(values) // 2]:.0f} ({values[0]:.0f}-{values[-1]:.0f})"

    for n in [int(x) for x in args.chains.split(",")]:
        hosts = None if reason else netns.Hosts(["b"])
        procs: list[subprocess.Popen] = []
        rows: dict[str, tuple[dict, list[str]]] = {"ipc": ({"endpoints": [""] * n}, [])}
        try:
            for label, keys, port in (("tcp-lo", None, 7100), ("tcp-lo+curve", server_keys, 7150)):
                p, eps = _serve([], n, "127.0.0.1", port, keys, tmp)
                procs += p
                rows[label] = ({"endpoints": eps, "keys": client_keys if keys else None}, [])
            if hosts is not None:
                for label, keys, port in (("netns", None, 7200), ("netns+curve", server_keys, 7250)):
                    p, eps = _serve(["ip", "netns", "exec", hosts.ns("b")], n, hosts.addr("b"),
                                    port, keys, tmp)
                    procs += p
                    rows[label] = ({"endpoints": eps, "keys": client_keys if keys else None},
                                   ["ip", "netns", "exec", hosts.ns("a")])
            results: dict[str, list[dict]] = {label: [] for label in rows}
            for _ in range(args.repeat):
                for label, (spec, prefix) in rows.items():
                    res = _worker({"ticks": args.ticks, **spec}, prefix)
                    if "error" in res:
                        raise SystemExit(f"{label}, N={n}: {res['error']}")
                    results[label].append(res)
                    digests.setdefault(n, set()).add(res["digest"])
            for label, runs in results.items():
                print(f"{n:>2} {label:>12} {fmt([r['p50'] for r in runs]):>18} "
                      f"{fmt([r['p99'] for r in runs]):>20} "
                      f"{fmt([r['step_p50'] for r in runs]):>18}  {runs[0]['digest'][:12]}",
                      flush=True)
        finally:
            _stop(procs)
            if hosts is not None:
                hosts.close()
    if any(len(d) != 1 for d in digests.values()):
        print("WARNING: placements gave different digests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
