"""The ``[run]`` table, with the ``--until``, ``--seed`` and ``--realtime`` options.

How long to simulate, the seed, the master algorithm and its order, heartbeats,
recording, plots and real-time pacing (docs/rigs.md, ``[run]``). Keys and defaults
come from :data:`.vocabulary.RUN`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from moonpool.components.sdk.wire import DEFAULT_MAX_PEER_TIMEOUT_NS

from ..rig import RunConfig
from . import values
from .report import Report, did_you_mean, kind_of
from .vocabulary import ALGORITHMS, OVERRUN_POLICIES, RUN

_DEFAULTS = RunConfig(until_ns=0)
MAX_SPIN_NS = 10_000_000
"""The longest ``run.realtime_spin``: 10 ms."""


def run_config(
    report: Report,
    table: Any,
    names: Sequence[str],
    until_s: Any,
    seed_arg: Any,
    realtime_arg: Any = None,
    base_dir: Path | None = None,
) -> RunConfig:
    """The [run] table with the --until/--seed/--realtime overrides (placeholders where bad)."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        report.add(
            "run", f"expected a [run] table, got {kind_of(table)}; write it as a [run] section"
        )
        table = {}
    values.check_keys(report, "run", table, RUN.names, RUN.title)
    d = _DEFAULTS

    def get(key: str) -> Any:
        return RUN.value(table, key)

    until_ns = _until(report, table, until_s)
    seed = values.seed(report, "run.seed", get("seed"))
    if seed_arg is not None:
        seed = values.seed(report, "--seed", seed_arg)
    algorithm = values.choice(report, "run.algorithm", get("algorithm"), ALGORITHMS)
    order = _order(report, table, algorithm, names)
    heartbeat = values.duration(
        report, "run.heartbeat_interval", get("heartbeat_interval"), positive=True
    )
    peer_timeout = values.duration(report, "run.peer_timeout", get("peer_timeout"), positive=True)
    if heartbeat and peer_timeout and peer_timeout <= heartbeat:
        report.add(
            "run.peer_timeout",
            f"must be longer than heartbeat_interval ({heartbeat} ns), or peers time out "
            "between two heartbeats; raise it (e.g. 10 x the interval)",
        )
    if peer_timeout and peer_timeout > DEFAULT_MAX_PEER_TIMEOUT_NS:
        report.add(
            "run.peer_timeout",
            f"is {peer_timeout * 1e-9:g} s, more than the {DEFAULT_MAX_PEER_TIMEOUT_NS // 10**9} s "
            "a component accepts (a session must expire once its orchestrator is gone); "
            "give at most that",
        )
    max_message = get("max_message_bytes")
    if isinstance(max_message, bool) or not isinstance(max_message, int) \
            or not 1024 <= max_message <= 2**31 - 1:
        report.add("run.max_message_bytes",
                   f"expected a whole number of bytes from 1024 to {2**31 - 1}, got "
                   f"{kind_of(max_message)} {max_message!r}")
        max_message = d.max_message_bytes
    record = values.boolean(report, "run.record", get("record"))
    exclude = _record_exclude(report, get("record_exclude"), names)
    foxglove_images = values.boolean(report, "run.foxglove_images", get("foxglove_images"))
    plots = values.boolean(report, "run.plots", get("plots"))
    view_scene = _view_scene(report, get("view_scene"), base_dir or Path("."))
    realtime = values.factor(report, "run.realtime", get("realtime"))
    if realtime_arg is not None:
        realtime = values.factor(report, "--realtime", realtime_arg)
    overrun = values.choice(report, "run.overrun", get("overrun"), OVERRUN_POLICIES)
    priority = get("realtime_priority")
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 99:
        report.add(
            "run.realtime_priority",
            f"expected 0 (normal scheduling) or a SCHED_FIFO priority from 1 to 99, got "
            f"{kind_of(priority)} {priority!r}",
        )
        priority = d.realtime_priority
    tolerance = get("realtime_tolerance")
    tolerance_ns = (None if tolerance == "period" else
                    values.duration(report, "run.realtime_tolerance", tolerance, positive=True))
    strict = values.boolean(report, "run.realtime_strict", get("realtime_strict"))
    spin_ns = values.duration(report, "run.realtime_spin", get("realtime_spin"), positive=False)
    if spin_ns is not None and spin_ns > MAX_SPIN_NS:
        report.add("run.realtime_spin", f"at most 10 ms, got {get('realtime_spin')!r}: the "
                   "pacer would busy-wait most of a tick; give e.g. \"1ms\"")
        spin_ns = None
    safe_stop = _safe_stop(report, get("safe_stop"), names)
    return RunConfig(
        until_ns=until_ns or 0,  # 0: set up and initialise, step nothing
        seed=d.seed if seed is None else seed,
        algorithm=algorithm or d.algorithm,  # type: ignore[arg-type]
        order=order,
        heartbeat_interval_ns=heartbeat or d.heartbeat_interval_ns,
        peer_timeout_ns=d.peer_timeout_ns if peer_timeout is None else peer_timeout,
        max_message_bytes=max_message,
        record=d.record if record is None else record,
        record_exclude=exclude,
        foxglove_images=d.foxglove_images if foxglove_images is None else foxglove_images,
        view_scene=view_scene,
        plots=d.plots if plots is None else plots,
        realtime=realtime,
        overrun=overrun or d.overrun,  # type: ignore[arg-type]
        realtime_tolerance_ns=tolerance_ns,
        realtime_strict=bool(strict),
        realtime_priority=priority,
        realtime_spin_ns=d.realtime_spin_ns if spin_ns is None else spin_ns,
        safe_stop=safe_stop,
    )


def _view_scene(report: Report, value: Any, base_dir: Path) -> Path | None:
    """run.view_scene: "" (none) or the path of an existing file, relative to the rig's
    folder (its content is checked with the classes: ``deep.py``)."""
    if value == "":
        return None
    if not isinstance(value, str):
        report.add("run.view_scene", f"expected the path of a scene file (a string), got "
                   f"{kind_of(value)} {value!r}; e.g. view_scene = \"../scenes/pool/scene.toml\"")
        return None
    path = Path(value).expanduser()
    path = (path if path.is_absolute() else base_dir / path).resolve()
    if not path.is_file():
        report.add("run.view_scene", f"scene file '{value}' does not exist ({path}); give "
                   "the path of a scene file, relative to the rig file's folder")
        return None
    return path


def _safe_stop(report: Report, value: Any, names: Sequence[str]) -> tuple[str, ...]:
    """run.safe_stop: components terminated first (in this order) when a run fails."""
    key = "run.safe_stop"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        report.add(key, f'expected a list of component names, got {value!r}; '
                   'e.g. safe_stop = ["mcu"]')
        return ()
    out: list[str] = []
    for i, name in enumerate(value):
        if name not in names:
            report.add(f"{key}[{i}]", f"no component named '{name}'{did_you_mean(name, names)}")
        elif name in out:
            report.add(f"{key}[{i}]", f"lists '{name}' twice; name each component once")
        else:
            out.append(name)
    return tuple(out)


def _record_exclude(report: Report, value: Any, names: Sequence[str]) -> tuple[str, ...]:
    """run.record_exclude: a list of COMPONENT.PORT outputs of known components."""
    key = "run.record_exclude"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        report.add(key, f'expected a list of "COMPONENT.PORT" outputs, got {value!r}; '
                   'e.g. record_exclude = ["camera.image"]')
        return ()
    out = []
    for i, ref in enumerate(value):
        component, dot, port = ref.partition(".")
        if not dot or not component or not port or "." in port:
            report.add(f"{key}[{i}]", f"{ref!r} is not COMPONENT.PORT; e.g. \"camera.image\"")
        elif component not in names:
            report.add(f"{key}[{i}]",
                       f"no component named '{component}'{did_you_mean(component, names)}")
        else:
            out.append(ref)
    return tuple(out)


def _until(report: Report, table: Mapping[str, Any], until_s: Any) -> int | None:
    """run.until, or --until when given (which wins); a problem if neither is given."""
    until = None
    if "until" in table:
        until = values.duration(report, "run.until", table["until"], positive=False)
    if until_s is not None:
        return values.duration(report, "--until", until_s, positive=False)
    if "until" not in table:
        report.add(
            "run.until",
            'missing: say how long to simulate with until = "20s" under [run], '
            "or pass --until SECONDS",
        )
    return until


def _order(
    report: Report, table: Mapping[str, Any], algorithm: str | None, names: Sequence[str]
) -> tuple[str, ...]:
    """run.order: every component exactly once, and only with Gauss-Seidel.
    An empty array means "not given" (rig order), so ``--set run.order=[]`` clears it."""
    if "order" not in table or table["order"] == []:
        return ()
    order = table["order"]
    if algorithm == "jacobi":
        report.add(
            "run.order",
            "is only used by algorithm = \"gauss-seidel\" (Jacobi steps everything at once); "
            "remove it or set algorithm = \"gauss-seidel\"",
        )
    if not isinstance(order, list) or not all(isinstance(n, str) for n in order):
        report.add("run.order", f"expected an array of component names, got {order!r}")
        return ()
    ok = True
    for n in order:
        if n not in names:
            ok = False
            report.add(
                "run.order",
                f"no component named '{n}'{did_you_mean(n, names)}; "
                f"list the names of [components] tables ({', '.join(names) or 'none'})",
            )
    twice = sorted({n for n in order if order.count(n) > 1})
    if twice:
        ok = False
        report.add(
            "run.order", f"lists {', '.join(twice)} more than once; name each component once"
        )
    missing = [n for n in names if n not in order]
    if missing:
        ok = False
        report.add("run.order", f"does not list {', '.join(missing)}; name every component once")
    return tuple(order) if ok else ()
