"""Running a sweep's cases as Dask tasks.

Call order::

    spec = design.spec_from_file(...) / design.spec_from_args(...)
    result = run_sweep(spec, out, scheduler=None | "tcp://host:8786", workers=K,
                       keep="summaries" | "all", progress=callable)
        1. make_cases(spec); validate every case's rig (load_rig per case, the full
           load_and_check per point) -- any problem: SweepError / RigValidationError,
           nothing written
        2. connect: a LocalCluster of K worker processes (1 thread each), or the
           scheduler at ``scheduler`` (unreachable: SweepError, nothing written)
        3. out/sweep.json (the sweep's identity; another sweep's folder: SweepError)
        4. skip the cases recorded in out/cases/ (resume); submit the others, one
           Dask task each: run_case() in a worker process = load_and_check + run_rig
        5. as each finishes: out/cases/NAME.json (row + summary), the progress bar;
           results.parquet / results.csv rewritten every few seconds and at the end

A case whose run fails (status failed), whose rig raises, or whose worker dies is
recorded with its error and the sweep goes on. With ``keep="summaries"`` a run goes
to a temporary folder on the worker (recording and plots off: the digest is the
same) and only its summary travels back; with ``keep="all"`` each run's folder is
``out/runs/NAME/`` (on a cluster of several machines ``out`` must then be a shared
folder).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moonpool.components.sdk.errors import MoonpoolError, RigValidationError

from .design import KEEP, Case, SweepError, SweepSpec, make_cases
from .results import atomic_write, make_row, read_case, succeeded, write_case, write_tables

log = logging.getLogger("moonpool.sweep")

# summary keys that travel back from a worker (not the per-component step times)
_SUMMARY_KEYS = ("status", "error", "failed_component", "rig", "seed", "sim_time_s",
                 "wall_time_s", "ticks", "messages", "metrics", "digest")
_SUMMARIES_ONLY = ("run.record=false", "run.plots=false")


@dataclass(frozen=True)
class SweepResult:
    """What run_sweep did."""

    out: Path
    """The sweep folder."""
    total: int
    """Cases in the sweep."""
    skipped: int
    """Cases already recorded by an earlier run of the same sweep (resume)."""
    ran: int
    """Cases run now."""
    failed: int
    """Rows whose status is not ok (all of them, also earlier ones)."""
    wall_s: float
    """Wall time of this call."""
    rows: tuple[dict[str, Any], ...]
    """Every row, in case order."""


def run_case(rig_path: str, overrides: list[str], seed: int, until_s: float | None,
             mode: str | None, run_dir: str | None) -> dict[str, Any]:
    """One case in a worker: the rig with its overrides and seed, run by run_rig.

    ``run_dir`` None: a temporary folder, removed afterwards. Never raises for a run
    that fails or a rig that cannot be loaded: the summary says it."""
    from ..rigfile import load_and_check
    from ..run import run_rig

    t0 = time.perf_counter()
    tmp = None
    try:
        if run_dir is None:
            tmp = tempfile.mkdtemp(prefix="moonpool-case-")
            out = Path(tmp)
        else:
            out = Path(run_dir)
            shutil.rmtree(out, ignore_errors=True)
        try:
            rig = load_and_check(rig_path, overrides, seed=seed, until_s=until_s, mode=mode)
            summary = run_rig(rig, out).summary
        except MoonpoolError as exc:
            summary = {"status": "failed", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - a sweep records every failure
            summary = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    summary = {k: summary.get(k) for k in _SUMMARY_KEYS}
    summary["case_wall_time_s"] = time.perf_counter() - t0
    try:
        from distributed import get_worker

        summary["worker"] = str(get_worker().name)
    except (ImportError, ValueError):  # not in a Dask worker
        summary["worker"] = None
    return summary


def validate(spec: SweepSpec, cases: list[Case]) -> None:
    """Every case's rig loads: the file and the overrides of every case (load_rig),
    and the components' parameters once per point (load_and_check). Raises
    SweepError (no cases) or RigValidationError (all problems at once)."""
    from ..rigfile import load_and_check, load_rig

    if not cases:
        raise SweepError(f"{spec.source}: the sweep makes no runs", fix="give grid values or seeds")
    extra = list(_SUMMARIES_ONLY)
    problems, seen_points = [], set()
    for case in cases:
        kw = dict(seed=case.seed, until_s=spec.until_s, mode=spec.mode)
        try:
            if case.point in seen_points:
                load_rig(spec.rig, case.overrides(spec) + extra, **kw)
            else:
                seen_points.add(case.point)
                load_and_check(spec.rig, case.overrides(spec) + extra, **kw)
        except RigValidationError as exc:
            for p in exc.problems:
                if p not in problems:
                    problems.append(p)
    if problems:
        raise RigValidationError(problems)


def connect(scheduler: str | None, workers: int | None, timeout_s: float = 5.0):
    """A dask.distributed Client: to ``scheduler``, or to a new LocalCluster of
    ``workers`` processes (default: the machine's cores), 1 thread each."""
    import dask
    from distributed import Client, LocalCluster

    dask.config.set({"distributed.worker.daemon": False,  # process components spawn children
                     "logging.distributed": "error"})
    if scheduler:
        try:
            return Client(scheduler, timeout=f"{timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                             fix="start it (dask scheduler) and its workers (dask worker "
                             f"{scheduler}), or leave out --scheduler for a local cluster"
                             ) from exc
    import os

    import warnings

    n = workers or os.cpu_count() or 1
    # Without a dashboard the scheduler's HTTP server still wants port 8787 and says so.
    warnings.filterwarnings("ignore", message="Port .* is already in use")
    _quiet_distributed()
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.CRITICAL)
    return Client(cluster, set_as_default=False)


def _quiet_distributed() -> None:
    """Dask's own INFO lines (connections opened and closed) are not ours to show."""
    for name in ["distributed", *[n for n in logging.root.manager.loggerDict
                                  if n.startswith("distributed.")]]:
        logging.getLogger(name).setLevel(logging.ERROR)


def _close(client: Any, local: bool) -> None:
    """Close our client; a LocalCluster we started goes with it (workers first)."""
    cluster = client.cluster if local else None
    if cluster is not None:
        # Quietly: workers closing while the scheduler goes log connection errors.
        _quiet_distributed()
        logging.getLogger("tornado").setLevel(logging.CRITICAL)
    if cluster is not None:
        cluster.close()  # workers, then the scheduler
    client.close()


def _identity_file(out: Path, spec: SweepSpec, keep: str) -> None:
    ident = {**spec.identity(), "rig_sha256": hashlib.sha256(spec.rig.read_bytes()).hexdigest()}
    path = out / "sweep.json"
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = None
        if old != ident:
            raise SweepError(f"{out} holds another sweep (its sweep.json differs from this "
                             "one: rig, keys, values, seeds or the rig file changed)",
                             fix="give another --out, or remove that folder to start over")
        return
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(ident, indent=1) + "\n").encode())


def run_sweep(spec: SweepSpec, out: Path, *, scheduler: str | None = None,
              workers: int | None = None, keep: str = "summaries", retry_failed: bool = False,
              progress: Callable[[int, int, int], None] | None = None,
              client: Any = None, table_interval_s: float = 5.0) -> SweepResult:
    """Run the sweep (see the module docstring). ``progress(done, total, failed)``
    after each case. ``client``: an existing dask Client to use (not closed)."""
    if keep not in KEEP:
        raise SweepError(f"--keep {keep!r} is not one of {KEEP}", fix="--keep summaries or all")
    out = Path(out)
    t0 = time.perf_counter()
    cases = make_cases(spec)
    validate(spec, cases)
    # Before anything is written: the folder must be this sweep's (or new).
    if (out / "sweep.json").exists():
        _identity_file(out, spec, keep)
    own_client = client is None
    if own_client:
        client = connect(scheduler, workers)
    try:
        _identity_file(out, spec, keep)
        rows: dict[int, dict[str, Any]] = {}
        todo = []
        for case in cases:
            row = read_case(out, case)
            if row is not None and (succeeded(row) or not retry_failed):
                rows[case.index] = row
            else:
                todo.append(case)
        skipped = len(rows)
        failed = sum(1 for r in rows.values() if not succeeded(r))
        total = len(cases)
        if progress is not None:
            progress(len(rows), total, failed)
        rig_path = str(spec.rig.resolve())
        extra = list(_SUMMARIES_ONLY) if keep == "summaries" else []
        futures = {}
        for case in todo:
            run_dir = str((out / "runs" / case.name).resolve()) if keep == "all" else None
            fut = client.submit(run_case, rig_path, case.overrides(spec) + extra, case.seed,
                                spec.until_s, spec.mode, run_dir, pure=False,
                                key=f"moonpool-{case.name}-{uuid.uuid4().hex[:12]}")
            futures[fut] = case
        from distributed import as_completed

        last_table = time.monotonic()
        try:
            with client.as_current():
                finished = as_completed(list(futures))
            for fut in finished:
                case = futures[fut]
                try:
                    summary = fut.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker fails only its case
                    summary = {"status": "failed", "error": f"worker: {type(exc).__name__}: {exc}"}
                row = make_row(case, summary, summary.get("case_wall_time_s") or 0.0)
                write_case(out, case, row, summary)
                rows[case.index] = row
                failed += not succeeded(row)
                if progress is not None:
                    progress(len(rows), total, failed)
                if time.monotonic() - last_table > table_interval_s:
                    write_tables(out, [rows[i] for i in sorted(rows)], spec)
                    last_table = time.monotonic()
        finally:
            for fut in futures:
                if not fut.done():
                    fut.cancel()
            if rows:
                write_tables(out, [rows[i] for i in sorted(rows)], spec)
    finally:
        if own_client:
            _close(client, local=scheduler is None)
    ordered = tuple(rows[i] for i in sorted(rows))
    return SweepResult(out, total, skipped, len(todo), failed, time.perf_counter() - t0, ordered)
