"""The 40-run T1 gains sweep on Dask, against the same cases run one by one.

``python benchmarks/sweep.py [--sweep sweeps/t1_gains.toml] [--workers 2] [--out DIR]
[--scheduler ADDR]``

1. ``moonpool sweep SWEEP --workers K`` (a LocalCluster of K worker processes, one
   thread each) into OUT/sweep; its wall time T_sweep.
2. every case again, one after another, each as its own ``moonpool run RIG --set …
   --seed S --until U`` process (what a user would type), into OUT/single/NAME;
   the sum of their wall times T_seq (process start included).
3. prints: rows present, digests equal per case, metrics equal per case (every
   ``metrics.*`` column against the run's summary.json), T_seq, T_sweep and the
   speed-up T_seq / T_sweep; "met" when every row is present and equal.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", type=Path, default=ROOT / "sweeps" / "t1_gains.toml")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--skip-single", action="store_true", help="only the sweep")
    args = ap.parse_args()
    from moonpool.orchestrator.sweep.design import make_cases, spec_from_file
    from moonpool.orchestrator.sweep.results import flatten, read_table

    out = args.out or Path(tempfile.mkdtemp(prefix="moonpool-sweep-bench-"))
    spec = spec_from_file(args.sweep)
    cases = make_cases(spec)
    moonpool = [sys.executable, "-m", "moonpool.orchestrator.cli"]
    where = ["--scheduler", args.scheduler] if args.scheduler else ["--workers", str(args.workers)]
    t0 = time.perf_counter()
    r = subprocess.run(moonpool + ["sweep", str(args.sweep), *where, "--out", str(out / "sweep"),
                                   "--quiet"], capture_output=True, text=True)
    t_sweep = time.perf_counter() - t0
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        return 1
    rows = read_table(out / "sweep").to_pylist()
    print(f"sweep: {len(rows)}/{len(cases)} rows in {t_sweep:.1f} s "
          f"({'scheduler ' + args.scheduler if args.scheduler else f'LocalCluster of {args.workers} workers'})")
    if args.skip_single:
        return 0 if len(rows) == len(cases) else 1
    t_seq, same_digest, same_metrics = 0.0, 0, 0
    for case, row in zip(cases, rows):
        argv = moonpool + ["run", str(spec.rig), "--seed", str(case.seed), "--quiet",
                           "--out", str(out / "single" / case.name), "--set", "run.plots=false"]
        if spec.until_s is not None:
            argv += ["--until", repr(spec.until_s)]
        for o in case.overrides(spec):
            argv += ["--set", o]
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        t_seq += time.perf_counter() - t0
        alone = json.loads((out / "single" / case.name / "summary.json").read_text())
        same_digest += row["digest"] == alone["digest"]
        flat = flatten("metrics", alone["metrics"], {})
        same_metrics += all(
            row.get(k) == v or (isinstance(v, float) and math.isnan(v))
            for k, v in flat.items())
    n = len(cases)
    print(f"one by one (moonpool run x {n}): {t_seq:.1f} s")
    print(f"digests equal: {same_digest}/{n}; metrics equal: {same_metrics}/{n}")
    print(f"speed-up T_seq / T_sweep = {t_seq / t_sweep:.2f} with {args.workers} workers")
    ok = len(rows) == n and same_digest == n and same_metrics == n
    print("met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
