"""``moonpool sweep``: the command line of sweeps (docs/sweeps.md).

    moonpool sweep RIG [--grid K=v1,v2,...]... [--random K=dist(...)]... [--seeds N]
                       [--samples M] [--lhs] [--sweep-seed S] [--set K=V]... [--until S]
                       [--mode inproc|process] [--scheduler tcp://host:8786] [--workers K]
                       [--out DIR] [--keep summaries|all] [--retry-failed] [--dry-run] [--quiet]
    moonpool sweep SWEEP.toml [--scheduler ...] [--workers K] [--out DIR] [--keep ...]
    moonpool sweep report DIR [--metric NAME]...

Call order: ``add_arguments(parser)`` when the CLI is built, ``main(args)`` to run.
Exit codes: 0 every case ok, 1 some case failed (each recorded with its error),
2 bad input (nothing written), 130 interrupted (what finished is recorded; re-run
the same command to resume).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from moonpool.components.sdk import tomlfile
from moonpool.components.sdk.errors import RigError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="a rig file, a sweep file (with a [sweep] table), or 'report'")
    p.add_argument("dir", nargs="?", type=Path, help="(report) the sweep folder")
    p.add_argument("--grid", action="append", default=[], metavar="K=v1,v2",
                   help="a grid key and its values (repeatable; the product is swept)")
    p.add_argument("--random", action="append", default=[], metavar="K=DIST",
                   help="a random key: uniform(a,b), normal(mu,sigma), loguniform(a,b), "
                   "choice(v1,v2,...) (repeatable)")
    p.add_argument("--samples", type=int, default=1, metavar="M",
                   help="draws of the random keys per grid point (default 1)")
    p.add_argument("--lhs", action="store_true",
                   help="draw the random keys as a Latin hypercube (scipy.stats.qmc)")
    p.add_argument("--seeds", type=int, default=1, metavar="N",
                   help="runs per point, each with its own seed (default 1)")
    p.add_argument("--sweep-seed", type=int, default=0, metavar="S",
                   help="the sweep seed: case seeds and draws derive from it (default 0)")
    p.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                   help="a rig key set in every case (repeatable)")
    p.add_argument("--until", type=float, metavar="S", help="simulated seconds of every run")
    p.add_argument("--mode", choices=["inproc", "process"], help="placement of every component")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="a running Dask scheduler (tcp://host:8786); default: a local cluster")
    p.add_argument("--workers", type=int, metavar="K",
                   help="worker processes of the local cluster (default: the cores)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="sweep folder (default runs/sweep-NAME); the same folder resumes")
    p.add_argument("--keep", choices=["summaries", "all"], default="summaries",
                   help="keep only each run's summary (default) or its whole folder")
    p.add_argument("--retry-failed", action="store_true",
                   help="when resuming, run the failed cases again")
    p.add_argument("--metric", action="append", default=[], metavar="NAME",
                   help="(report) the metric columns to plot and rank by (default: all)")
    p.add_argument("--dry-run", action="store_true",
                   help="check every case's rig and list the cases; run and write nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


class SweepProgress:
    """One line on stderr: ``[####----] 12/40 cases  1 failed  elapsed 30 s  ETA 70 s``.
    The ETA is the time per case run now times the cases left."""

    def __init__(self, stream=sys.stderr) -> None:
        self.stream = stream
        self.t0 = time.perf_counter()
        self.first: int | None = None
        self.shown = False

    def __call__(self, done: int, total: int, failed: int) -> None:
        if self.first is None:
            self.first = done
        wall = time.perf_counter() - self.t0
        ran = done - self.first
        eta = f"{wall / ran * (total - done):5.0f} s" if ran else "    ? s"
        width = 30
        n = int(width * done / total) if total else width
        self.stream.write(f"\r[{'#' * n}{'-' * (width - n)}] {done}/{total} cases  "
                          f"{failed} failed  elapsed {wall:5.0f} s  ETA {eta}")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _is_sweep_file(path: Path) -> bool:
    try:
        return "sweep" in tomlfile.loads(path.read_text())
    except (OSError, tomlfile.TOMLDecodeError, UnicodeDecodeError):
        return False


def main(args: argparse.Namespace) -> int:
    if args.target == "report":
        return _report(args)
    from .design import SweepError, spec_from_args, spec_from_file
    from .results import succeeded
    from .runner import run_sweep

    target = Path(args.target)
    try:
        if args.dir is not None:
            raise SweepError(f"unexpected argument {args.dir} after {target}",
                             fix="moonpool sweep RIG|SWEEP.toml [options], or moonpool sweep report DIR")
        if _is_sweep_file(target):
            given = [f for f, v in (("--grid", args.grid), ("--random", args.random),
                                    ("--set", args.overrides), ("--until", args.until),
                                    ("--mode", args.mode)) if v]
            given += [f for f, v in (("--seeds", args.seeds != 1), ("--samples", args.samples != 1),
                                     ("--lhs", args.lhs), ("--sweep-seed", args.sweep_seed != 0)) if v]
            if given:
                raise SweepError(f"{target} is a sweep file; {', '.join(given)} cannot be "
                                 "combined with it", fix="write them in its [sweep] table")
            spec = spec_from_file(target)
        else:
            spec = spec_from_args(target, grid=args.grid, random=args.random,
                                  samples=args.samples, sampling="lhs" if args.lhs else "random",
                                  seeds=args.seeds, seed=args.sweep_seed, fixed=args.overrides,
                                  until_s=args.until, mode=args.mode)
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers {args.workers}: needs at least 1", fix="--workers 2")
        if args.workers is not None and args.scheduler:
            raise SweepError("--workers sizes the local cluster; a --scheduler has its own workers",
                             fix="give one of them")
        out = args.out or Path("runs") / f"sweep-{target.stem}"
        if args.dry_run:
            from .design import make_cases, value_text
            from .runner import validate

            cases = make_cases(spec)
            validate(spec, cases)
            for c in cases:
                print(f"{c.name}  point {c.point}  seed {c.seed:10d}  "
                      + "  ".join(f"{k}={value_text(v)}" for k, v in c.values))
            print(f"{len(cases)} cases ok ({spec.rig}); nothing run", file=sys.stderr)
            return EXIT_OK
        show = not args.quiet and sys.stderr.isatty()
        progress = SweepProgress() if show else None
        if not args.quiet:
            where = args.scheduler or f"a local cluster of {args.workers or 'all cores'} workers"
            print(f"sweep {spec.source if spec.source != 'command line' else target} -> {out} "
                  f"on {where}", file=sys.stderr)
        try:
            result = run_sweep(spec, out, scheduler=args.scheduler, workers=args.workers,
                               keep=args.keep, retry_failed=args.retry_failed, progress=progress)
        finally:
            if progress is not None:
                progress.done()
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted: the finished cases are recorded; run the same command again "
              "to run the others", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        print(f"{result.total} cases: {result.ran} run now, {result.skipped} recorded before, "
              f"{result.failed} failed; {result.wall_s:.1f} s\n"
              f"results: {out / 'results.parquet'}, {out / 'results.csv'}  "
              f"(moonpool sweep report {out})")
    for row in result.rows:
        if not succeeded(row):
            print(f"case {row['case']} failed: {row.get('error')}", file=sys.stderr)
    return EXIT_OK if result.failed == 0 else EXIT_FAILED


def _report(args: argparse.Namespace) -> int:
    from .design import SweepError
    from .report import make_report

    try:
        if args.dir is None:
            raise SweepError("moonpool sweep report needs the sweep folder",
                             fix="moonpool sweep report DIR")
        path = make_report(args.dir, metrics=args.metric)
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"report: {path}")
    return EXIT_OK
