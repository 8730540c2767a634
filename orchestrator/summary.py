"""``summary.json`` and the table printed at the end of a run.

The summary is a plain dict, in this order::

    status            "ok" | "failed"
    error             str | None          (what failed, with its fix)
    sim_time_s        simulated time, s
    wall_time_s       wall-clock time of the stepping, s
    real_time_factor  sim_time_s / wall_time_s
    ticks             distinct instants the execution stepped
    digest            sha256 hex of the message stream (recording.Digest)
    realtime          None, or in real-time mode {factor, overrun_policy, ticks,
                      lateness_p50_us, lateness_p99_us, lateness_max_us, overruns, ...}
                      (orchestrator/realtime.py, Pacer.summary)
    components        {name: {steps, p50_us, p99_us, max_us, placement, ...}}: step
                      times (in-process: the call; else the round trip), and for
                      components that report their own (StepResult.compute_ns: process,
                      remote, group members) compute_p50_us, compute_p99_us,
                      compute_max_us
    metrics           {name: {key: value}}  (what each component reported at terminate)
    provenance        moonpool version, git commit (from a checkout), the rig's sha256,
                      Python and dependency versions (:func:`provenance`)

JSON has no NaN or infinity: they are written as ``null``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _jsonable(value: Any) -> Any:
    """A JSON-ready copy: NaN/inf -> None, numpy -> Python, tuples -> lists, paths -> str."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, Path):
        return str(value)
    return value


def write_summary(path: Path, summary: Mapping[str, Any]) -> None:
    """Write ``summary`` as JSON (indent 2, keys in insertion order, NaN/inf as null).

    The file is replaced atomically: a reader sees the old file or the new one.
    """
    path = Path(path)
    text = json.dumps(_jsonable(summary), indent=2, allow_nan=False, ensure_ascii=False)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


PROVENANCE_PACKAGES = ("numpy", "scipy", "protobuf", "pyzmq", "mcap", "fmpy", "matplotlib")
"""The dependencies whose versions summary.json records (they can change the numbers)."""


def provenance(rig_path: Path, rig_text: str) -> dict[str, Any]:
    """What produced a run: moonpool's version, the git commit (and whether the
    checkout had changes) when moonpool runs from a checkout, the rig file's sha256
    (as on disk) and that of the text run (after --set overrides), Python and the
    versions of :data:`PROVENANCE_PACKAGES`."""
    import hashlib
    import platform
    import subprocess
    from importlib import metadata

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    out: dict[str, Any] = {"moonpool": version("moonpool")}
    checkout = Path(__file__).resolve().parent.parent
    git = {}
    if (checkout / ".git").exists():
        try:
            def run(*args: str) -> str:
                return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                                      text=True, timeout=5, check=True).stdout.strip()
            git = {"commit": run("rev-parse", "HEAD"),
                   "dirty": bool(run("status", "--porcelain", "--untracked-files=no"))}
        except (OSError, subprocess.SubprocessError):
            git = {}
    out["git"] = git or None
    try:
        file_hash = hashlib.sha256(Path(rig_path).read_bytes()).hexdigest()
    except OSError:
        file_hash = None
    out["rig_file_sha256"] = file_hash
    out["rig_text_sha256"] = hashlib.sha256(rig_text.encode()).hexdigest()
    out["python"] = platform.python_version()
    out["packages"] = {name: version(name) for name in PROVENANCE_PACKAGES}
    return out


def step_stats_us(durations_ns: Sequence[int] | np.ndarray) -> dict[str, float]:
    """Median, 99th percentile and maximum of step durations, in µs (0.0 when empty)."""
    d = np.asarray(durations_ns, dtype=np.float64).ravel()
    if d.size == 0:
        return {"p50_us": 0.0, "p99_us": 0.0, "max_us": 0.0}
    p50, p99 = np.percentile(d, [50.0, 99.0])
    return {
        "p50_us": float(p50) / 1e3,
        "p99_us": float(p99) / 1e3,
        "max_us": float(d.max()) / 1e3,
    }


# -------------------------------------------------------------------- table


def _num(value: Any, fmt: str) -> str:
    """A number for the table: "-" when missing or not finite; fmt "d" rounds."""
    if value is None or isinstance(value, str):
        return value or "-"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return "-"
    return str(round(v)) if fmt == "d" else format(v, fmt)


def _value(value: Any) -> str:
    """A metric value as a person reads it."""
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, Mapping):
        if not value and prefix:
            out.append((prefix, "{}"))
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out.append((prefix, _value(value)))


def format_table(summary: Mapping[str, Any], *, with_error: bool = True) -> str:
    """The report printed at the end of a run (plain text, no trailing newline).

    After a failure the digest is left out (it is that of a stream cut short; the
    summary keeps it); ``with_error=False`` leaves the error line to the caller."""
    status = summary.get("status", "?")
    digest = summary.get("digest") or ""
    rtf = summary.get("real_time_factor")
    head = [
        f"run {status}",
        f"sim {_num(summary.get('sim_time_s'), '.3f')} s",
        f"wall {_num(summary.get('wall_time_s'), '.3f')} s",
        f"RTF {_num(rtf, '.2f')}" + ("x" if _num(rtf, ".2f") != "-" else ""),
        f"ticks {_num(summary.get('ticks'), 'd')}",
    ]
    if status == "ok":
        head.append(f"digest {digest[:16] or '-'}")
    lines = ["  ".join(head)]
    rt = summary.get("realtime")
    if rt:
        lines.append(
            f"real time x{_num(rt.get('factor'), 'g')}: lateness p50 "
            f"{_num(rt.get('lateness_p50_us'), '.1f')} µs  p99 {_num(rt.get('lateness_p99_us'), '.1f')} µs"
            f"  max {_num(rt.get('lateness_max_us'), '.1f')} µs  overruns "
            f"{_num(rt.get('overruns'), 'd')} ({rt.get('overrun_policy', '?')})"
            + (f"  re-anchored {rt['reanchors']}x" if rt.get("reanchors") else "")
            + (f"  verdict {rt['verdict']} (tolerance {_num(rt.get('tolerance_us'), 'g')} µs)"
               if rt.get("verdict") else "")
        )

    components: Mapping[str, Any] = summary.get("components") or {}
    if components:
        header = ("component", "where", "steps", "p50 µs", "p99 µs", "max µs")
        rows = [
            (
                str(name),
                str(c.get("placement") or "-"),
                _num(c.get("steps"), "d"),
                _num(c.get("p50_us"), ".1f"),
                _num(c.get("p99_us"), ".1f"),
                _num(c.get("max_us"), ".1f"),
            )
            for name, c in components.items()
        ]
        if any("compute_p50_us" in c for c in components.values()):
            # A process's own step time beside the round trip (a group member's round
            # trip is its whole batch's).
            header += ("own p50 µs",)
            rows = [(*r, _num(c.get("compute_p50_us"), ".1f"))
                    for r, c in zip(rows, components.values())]
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

        def line(cells: Sequence[str]) -> str:
            left = [cells[i].ljust(widths[i]) for i in range(2)]
            right = [cells[i].rjust(widths[i]) for i in range(2, len(cells))]
            return "  ".join(left + right).rstrip()

        lines += ["", line(header), line(["-" * w for w in widths])]
        lines += [line(r) for r in rows]

    metrics: list[tuple[str, str]] = []
    _flatten("", summary.get("metrics") or {}, metrics)
    if metrics:
        lines += ["", "metrics:"]
        lines += [f"  {name} = {value}" for name, value in metrics]

    if summary.get("insecure"):
        lines += ["", "INSECURE: no authentication or encryption for "
                  + ", ".join(summary["insecure"]) + " (insecure = true in the rig)"]
    term = summary.get("terminated")
    if status == "terminated" and term:
        lines += ["", f"terminated by {term['component']} at t = {term['time_s']:g} s: "
                  f"{term['reason']}"]
    elif with_error and (status != "ok" or summary.get("error")):
        lines += ["", f"error: {summary.get('error') or 'unknown error'}"]
    return "\n".join(lines)
