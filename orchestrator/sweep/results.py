"""The results table of a sweep: one row per case, in Parquet (pyarrow) and CSV.

Call order::

    row = make_row(case, spec, summary, wall_s)     on the client, per finished case
    write_case(out, case, row, summary)             out/cases/NAME.json (the case is done)
    rows = read_cases(out)                          every finished case, in case order
    write_tables(out, rows)                         out/results.parquet, out/results.csv

Columns: ``case, point, replicate, seed, status, error, failed_component,
wall_time_s, sim_time_s, digest, worker`` (the Dask worker that ran it), then ``param.KEY`` for each swept key (arrays
and tables as their TOML text), then ``metrics.COMPONENT.NAME…`` for every metric
of summary.json, flattened with dots (lists as JSON text). Every file is written
to a temporary name and renamed: a reader, or a sweep killed at any moment, never
sees half a file.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .design import Case, SweepSpec, value_text

FIXED_COLUMNS = ("case", "point", "replicate", "seed", "status", "error", "failed_component",
                 "wall_time_s", "sim_time_s", "digest", "worker")


SUCCEEDED = ("ok", "terminated")
"""Run statuses that count as a success: ran to its end, or a component ended it well
(``Component.finish``: a mission that completed). Everything else failed."""


def succeeded(row: Mapping[str, Any]) -> bool:
    """Whether a case's row (or a summary) is a successful run."""
    return row.get("status") in SUCCEEDED


def flatten(prefix: str, value: Any, out: dict[str, Any]) -> dict[str, Any]:
    """``{"t1": {"rmse": 1}}`` -> ``{"metrics.t1.rmse": 1}`` (lists as JSON text)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = json.dumps(value)
    else:
        out[prefix] = value
    return out


def _cell(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return value_text(value)


def make_row(case: Case, summary: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    """The row of one finished case (``summary``: its summary.json, or a failure)."""
    row: dict[str, Any] = {
        "case": case.index, "point": case.point, "replicate": case.replicate,
        "seed": case.seed, "status": summary.get("status", "failed"),
        "error": summary.get("error"), "failed_component": summary.get("failed_component"),
        "wall_time_s": wall_s, "sim_time_s": summary.get("sim_time_s"),
        "digest": summary.get("digest"), "worker": summary.get("worker"),
    }
    for key, value in case.values:
        row[f"param.{key}"] = _cell(value)
    flatten("metrics", summary.get("metrics") or {}, row)
    return row


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_case(out: Path, case: Case, row: Mapping[str, Any], summary: Mapping[str, Any]) -> Path:
    """Record a finished case: ``out/cases/NAME.json`` = {row, summary}."""
    path = out / "cases" / f"{case.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"row": row, "summary": summary}, indent=1, default=str,
                      allow_nan=True)
    atomic_write(path, text.encode())
    return path


def read_case(out: Path, case: Case) -> dict[str, Any] | None:
    """The row of a case recorded earlier, or None (not run, or unreadable)."""
    path = out / "cases" / f"{case.name}.json"
    try:
        return json.loads(path.read_text())["row"]
    except (OSError, ValueError, KeyError):
        return None


def _column_type(values: list[Any]):
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_(), values
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64(), values
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64(), [None if v is None else float(v) for v in values]
    return pa.string(), [None if v is None else v if isinstance(v, str) else json.dumps(v)
                         for v in values]


def table(rows: list[Mapping[str, Any]], spec: SweepSpec | None = None):
    """The pyarrow Table of ``rows`` (columns as in the module docstring)."""
    import pyarrow as pa

    columns: list[str] = list(FIXED_COLUMNS)
    if spec is not None:
        columns += [f"param.{k}" for k in spec.keys()]
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    arrays, fields = [], []
    for name in columns:
        typ, values = _column_type([r.get(name) for r in rows])
        values = [None if isinstance(v, float) and math.isnan(v) else v for v in values]
        arrays.append(pa.array(values, type=typ))
        fields.append(pa.field(name, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write_tables(out: Path, rows: list[Mapping[str, Any]], spec: SweepSpec | None = None) -> tuple[Path, Path]:
    """``out/results.parquet`` and ``out/results.csv``, each replaced atomically."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    t = table(rows, spec)
    parquet, csv = out / "results.parquet", out / "results.csv"
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink)
    atomic_write(parquet, sink.getvalue().to_pybytes())
    sink = pa.BufferOutputStream()
    pacsv.write_csv(t, sink)
    atomic_write(csv, sink.getvalue().to_pybytes())
    return parquet, csv


def read_table(out: Path):
    """``out/results.parquet`` as a pyarrow Table."""
    import pyarrow.parquet as pq

    return pq.read_table(Path(out) / "results.parquet")
