"""``moonpool sweep report DIR``: plots and a Markdown report of a sweep's results.

Call order::

    path = make_report(out, metrics=())    reads out/results.parquet, writes
                                           out/report/*.png and out/report/report.md

For each metric column (numeric ``metrics.…``, default: every one that varies) and
each swept parameter: a scatter of the metric against the parameter (numeric
parameters with more than four values) or a box plot per value; the success rate
(status ok) per parameter value; a table of the points ranked by the mean of the
first metric over their seeds (lowest first; ``--metric`` chooses it).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .design import SweepError
from .results import atomic_write, succeeded

MAX_METRICS = 12


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:80]


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def make_report(out: str | Path, metrics: Sequence[str] = ()) -> Path:
    """Write ``out/report/report.md`` and its figures; returns the report's path."""
    out = Path(out)
    path = out / "results.parquet"
    if not path.is_file():
        raise SweepError(f"{out}: no results.parquet (not a sweep folder, or no case finished)",
                         fix="give the --out folder of a sweep")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    columns = list(rows[0]) if rows else []
    params = [c for c in columns if c.startswith("param.")]
    numeric_metrics = [c for c in columns if c.startswith("metrics.")
                       and _numeric([r[c] for r in rows])
                       and any(r[c] is not None for r in rows)]
    if metrics:
        chosen = []
        for m in metrics:
            name = m if m.startswith("metrics.") else f"metrics.{m}"
            if name not in numeric_metrics:
                raise SweepError(f"{out}: no numeric metric column {name!r}",
                                 fix=f"use one of {numeric_metrics[:20]}")
            chosen.append(name)
    else:
        chosen = [m for m in numeric_metrics
                  if len({r[m] for r in rows if r[m] is not None}) > 1][:MAX_METRICS]
    figdir = out / "report"
    figdir.mkdir(parents=True, exist_ok=True)
    ok = [r for r in rows if succeeded(r)]
    lines = [f"# Sweep report: {out.name}", "",
             f"{len(rows)} runs, {len(ok)} ok, {len(rows) - len(ok)} failed "
             f"({100 * len(ok) / max(len(rows), 1):.0f} % success); "
             f"{len({r['point'] for r in rows})} points; swept: "
             + (", ".join(f"`{p[6:]}`" for p in params) or "seeds only"), ""]
    # success rate per parameter value
    if params:
        lines += ["## Success rate", "", "| parameter | value | runs | ok |", "| --- | --- | --- | --- |"]
        for p in params:
            by: dict[Any, list[bool]] = defaultdict(list)
            for r in rows:
                by[r[p]].append(succeeded(r))
            for v in sorted(by, key=lambda x: (str(type(x)), x)):
                lines.append(f"| `{p[6:]}` | {_fmt(v)} | {len(by[v])} | "
                             f"{100 * sum(by[v]) / len(by[v]):.0f} % |")
        lines.append("")
    # figures: each metric against each parameter
    if chosen and params:
        lines += ["## Metrics against parameters", ""]
    for m in chosen:
        for p in params:
            values = [r[p] for r in ok if r[m] is not None]
            ys = [r[m] for r in ok if r[m] is not None]
            if not ys:
                continue
            fig, ax = plt.subplots(figsize=(6, 4))
            distinct = sorted(set(values), key=lambda x: (str(type(x)), x))
            if _numeric(values) and len(distinct) > 4:
                ax.scatter(values, ys, s=12)
            else:
                groups = [[y for x, y in zip(values, ys) if x == d] for d in distinct]
                ax.boxplot(groups)
                ax.set_xticks(range(1, len(distinct) + 1), [_fmt(d)[:18] for d in distinct],
                              rotation=20, fontsize=7)
            ax.set_xlabel(p[6:])
            ax.set_ylabel(m[8:])
            ax.grid(alpha=0.3)
            fig.tight_layout()
            name = f"{_slug(m[8:])}__{_slug(p[6:])}.png"
            fig.savefig(figdir / name, dpi=90)
            plt.close(fig)
            lines += [f"![{m[8:]} vs {p[6:]}]({name})", ""]
    # ranked table of the points
    if chosen:
        key = chosen[0]
        points: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            points[r["point"]].append(r)

        def mean(rs: list[dict[str, Any]], col: str) -> float:
            xs = [r[col] for r in rs if succeeded(r) and r[col] is not None]
            return sum(xs) / len(xs) if xs else math.nan

        ranked = sorted(points.items(), key=lambda kv: (math.isnan(mean(kv[1], key)),
                                                         mean(kv[1], key)))
        lines += [f"## Points ranked by mean `{key[8:]}` (lowest first)", "",
                  "| rank | point | " + " | ".join(f"`{p[6:]}`" for p in params)
                  + " | runs ok | " + " | ".join(f"mean `{m[8:]}`" for m in chosen[:4]) + " |",
                  "| --- " * (3 + len(params) + len(chosen[:4])) + "|"]
        for rank, (pt, rs) in enumerate(ranked, 1):
            lines.append(f"| {rank} | {pt} | " + " | ".join(_fmt(rs[0][p]) for p in params)
                         + f" | {sum(succeeded(r) for r in rs)}/{len(rs)} | "
                         + " | ".join(_fmt(mean(rs, m)) for m in chosen[:4]) + " |")
        lines.append("")
    failed = [r for r in rows if not succeeded(r)]
    if failed:
        lines += ["## Failed runs", "", "| case | seed | error |", "| --- | --- | --- |"]
        lines += [f"| {r['case']} | {r['seed']} | {str(r['error']).replace('|', '/')[:300]} |"
                  for r in failed]
        lines.append("")
    report = figdir / "report.md"
    atomic_write(report, "\n".join(lines).encode())
    return report
