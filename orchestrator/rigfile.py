"""Rig files: TOML -> :class:`~moonpool.orchestrator.rig.Rig`, with every problem reported.

This is the only module of moonpool that parses TOML. docs/rigs.md is the reference
of the format. Three entry points:

- :func:`load_rig` reads, applies ``--set`` overrides and the command-line options,
  and checks everything that needs no component code (types, names, durations,
  references between tables). It raises :class:`RigFileError` when the file cannot
  be read or is not TOML, and :class:`RigValidationError` listing *every* problem.
- :func:`check_rig` loads the component classes and checks what needs them: ports
  and their message types, parameters, plotted fields.
- :func:`load_and_check` does both and reports the union of their problems at once
  (what ``moonpool check`` shows).

Every :class:`Problem` names the file, the dotted key (``components.pid.period``,
``connections[2].to``; arrays count from 0), the line (best effort, 0 if unknown)
and a message that says what is wrong and how to fix it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import tomllib
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from moonpool.components.sdk.component import Component, Port
from moonpool.components.sdk.errors import (
    EntryError,
    KeyFileError,
    ParameterError,
    PortError,
    Problem,
    RigFileError,
    RigValidationError,
)
from moonpool.components.sdk.loading import load_entry
from moonpool.components.sdk.security import leaves_loopback, read_key_pair, read_public_key
from moonpool.components.sdk.wire import coerce_parameter

from .rig import (
    ComponentConfig,
    ConnectionConfig,
    PlotSpec,
    Rig,
    RunConfig,
    Schedule,
)
from .realtime import OVERRUN_POLICIES
from .timeparse import DurationError, parse_duration_ns

__all__ = ["apply_overrides", "check_rig", "load_and_check", "load_rig"]

# ------------------------------------------------------------------ vocabulary

TOP_KEYS = ("name", "description", "run", "components", "connections", "plots")
RUN_KEYS = (
    "until",
    "seed",
    "algorithm",
    "order",
    "heartbeat_interval",
    "peer_timeout",
    "record",
    "record_exclude",
    "foxglove_images",
    "plots",
    "realtime",
    "overrun",
    "realtime_priority",
    "safe_stop",
)
COMPONENT_KEYS = (
    "entry",
    "run",
    "endpoint",
    "group",
    "rate_hz",
    "period",
    "offset",
    "step_timeout",
    "setup_timeout",
    "parameters",
    "profile",
    "recording",
    "source",
    "server_key",
    "client_key",
    "insecure",
)
CONNECTION_KEYS = ("from", "to", "delay")
PLOT_KEYS = ("title", "series", "ylabel")

ALGORITHMS = ("jacobi", "gauss-seidel")
PLACEMENTS = ("inproc", "process", "remote", "replay")
MODES = ("inproc", "process")

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
"""Component instance names."""
ENDPOINT_RE = re.compile(
    r"^(?:tcp://(?:\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>\d+)|ipc://\S+|inproc://\S+)$"
)
"""ZeroMQ endpoints a component can be reached at (tcp needs HOST:PORT)."""
_FIELD_SEGMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\s]+\])?"
FIELD_RE = re.compile(rf"^{_FIELD_SEGMENT}(?:\.{_FIELD_SEGMENT})*$")
"""A field path as the plots name it: ``position_ned_m.z``, ``force_n[0]``,
``signals[depth].value`` (orchestrator/plots.py)."""

SEED_LIMIT = 2**64
MAX_RATE_HZ = 1_000_000_000

_RUN_DEFAULTS = RunConfig(until_ns=0)
_COMPONENT_DEFAULTS = ComponentConfig(
    name="_", entry="", placement="inproc", schedule=Schedule(Fraction(1))
)
_PLACEHOLDER_SCHEDULE = Schedule(Fraction(1))


# ------------------------------------------------------------------ public API


def load_rig(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    until_s: float | None = None,
    seed: int | None = None,
    mode: str | None = None,
    realtime: float | None = None,
) -> Rig:
    """Read and validate the rig file ``path`` (without importing any component).

    ``overrides`` are ``--set key.path=value`` texts; ``until_s``, ``seed``,
    ``mode`` (``inproc`` or ``process``, for every component) and ``realtime`` (a
    real-time factor) replace what the file says. Raises RigFileError or
    RigValidationError (all problems at once).
    """
    parsed = _parse(path, overrides, until_s=until_s, seed=seed, mode=mode, realtime=realtime)
    if parsed.problems:
        raise RigValidationError(parsed.problems)
    return parsed.rig


def check_rig(rig: Rig) -> list[Problem]:
    """The problems that need the component classes: entries, ports, types, parameters.

    A remote component whose entry cannot be loaded here is skipped (its code may
    exist only on the machine that serves it).
    """
    return _deep_check(rig, _Report(str(rig.path), rig.source_text))


def load_and_check(path: str | Path, overrides: Sequence[str] = (), **kw: Any) -> Rig:
    """:func:`load_rig` then :func:`check_rig`; one RigValidationError with all problems.

    Keyword arguments are those of :func:`load_rig` (``until_s``, ``seed``, ``mode``,
    ``realtime``).
    """
    parsed = _parse(path, overrides, **kw)
    report = _Report(str(path), parsed.rig.source_text, parsed.report.overridden)
    deep = _deep_check(parsed.rig, report, parsed.connection_keys, parsed.plot_keys)
    problems = _unique([*parsed.problems, *deep])
    if problems:
        raise RigValidationError(problems)
    return parsed.rig


def apply_overrides(data: dict, overrides: Sequence[str], file: str) -> list[Problem]:
    """Apply ``key.path=value`` texts to the parsed rig ``data`` in place.

    The value is read as a TOML value (``3``, ``1.5``, ``true``, ``[1, 2]``,
    ``"text"``, ``{a = 1}``) and, if it is not one, taken as a plain string
    (``20s``, ``quickstart.vehicle``). Missing tables along the path are created;
    ``connections[1].delay`` addresses an element of an array of tables.
    Returns one Problem per override that cannot be applied.
    """
    return _apply_overrides(data, overrides, file)[0]


# ------------------------------------------------------------------ reporting


@dataclass
class _Report:
    """Collects problems of one rig file and finds the line of each key."""

    file: str
    text: str
    overridden: dict[str, str] = field(default_factory=dict)
    """Dotted key -> the ``--set`` text that gave it its value."""
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = _line_index(self.text)

    def add(self, key: str, message: str) -> None:
        """Record a problem at ``key`` (the line is looked up in the text)."""
        note = self._override_note(key)
        self.problems.append(Problem(self.file, key, message + note, self.line_of(key)))

    def line_of(self, key: str) -> int:
        """1-based line of ``key``, else of its closest enclosing table; 0 if none."""
        while key:
            if key in self.lines:
                return self.lines[key]
            key = _parent_key(key)
        return 0

    def _override_note(self, key: str) -> str:
        for set_key, text in self.overridden.items():
            if key == set_key or key.startswith(set_key + ".") or key.startswith(set_key + "["):
                return f" (value from --set {text})"
        return ""


def _parent_key(key: str) -> str:
    """``a.b[2].c`` -> ``a.b[2]`` -> ``a.b`` -> ``a`` -> ``''``."""
    if key.endswith("]"):
        return key[: key.rindex("[")]
    cut = key.rfind(".")
    return key[:cut] if cut > 0 else ""


def _unique(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in order, each once (load and check may find the same one)."""
    seen: set[Problem] = set()
    out = []
    for p in problems:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def _did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or ``''``."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _a(value: Any) -> str:
    """What kind of TOML value ``value`` is, for messages ("a string", "an array")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


# ------------------------------------------------------------------ line index

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'"
_KEY_PART = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_KEY_LINE = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=(?P<rest>.*)$")
_TABLE_LINE = re.compile(rf"^\s*\[\s*(?P<key>{_DOTTED})\s*\]\s*(?:#.*)?$")
_ARRAY_LINE = re.compile(rf"^\s*\[\[\s*(?P<key>{_DOTTED})\s*\]\]\s*(?:#.*)?$")
_PART = re.compile(_KEY_PART)


def _key_parts(dotted: str) -> list[str]:
    """``components."my pid".period`` -> ``['components', 'my pid', 'period']``."""
    parts = []
    for m in _PART.finditer(dotted):
        token = m.group(0)
        if token[0] in "\"'":
            token = token[1:-1]
        parts.append(token)
    return parts


def _line_index(text: str) -> dict[str, int]:
    """Dotted key (``connections[1].to``) -> 1-based line where it is written.

    A best-effort scan, not a parser: it follows table and array-of-tables headers
    and ``key =`` lines, skipping comments and multi-line strings. Every enclosing
    table of a key is indexed too (at its first appearance).
    """
    index: dict[str, int] = {}
    arrays: dict[str, int] = {}  # array-of-tables key -> elements seen so far
    table: list[str] = []
    in_string: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        if m := _ARRAY_LINE.match(line):
            parts = _key_parts(m["key"])
            parent = _render(parts[:-1], arrays)
            base = f"{parent}.{parts[-1]}" if parent else parts[-1]
            arrays[base] = arrays.get(base, 0) + 1
            table = [f"{base}[{arrays[base] - 1}]"]
            _index_key(index, table, lineno)
        elif m := _TABLE_LINE.match(line):
            table = [_render(_key_parts(m["key"]), arrays)]
            _index_key(index, table, lineno)
        elif m := _KEY_LINE.match(line):
            _index_key(index, [*table, *_key_parts(m["key"])], lineno)
            in_string = _opens_multiline_string(m["rest"])
    return index


def _render(parts: list[str], arrays: Mapping[str, int]) -> str:
    """Join key parts, adding ``[i]`` after a part that names an array of tables
    (TOML's ``[connections.x]`` belongs to the last ``[[connections]]``)."""
    out = ""
    for part in parts:
        out = f"{out}.{part}" if out else part
        if out in arrays:
            out = f"{out}[{arrays[out] - 1}]"
    return out


def _index_key(index: dict[str, int], parts: list[str], lineno: int) -> None:
    key = ".".join(parts)
    while key:
        index.setdefault(key, lineno)
        key = _parent_key(key)


def _opens_multiline_string(rest: str) -> str | None:
    for quote in ('"""', "'''"):
        if rest.count(quote) % 2 == 1:
            return quote
    return None



# ------------------------------------------------------------------ overrides

_SEGMENT = rf"{_KEY_PART}(?:\[\d+\])*"
_OVERRIDE_KEY = re.compile(rf"^{_SEGMENT}(?:\.{_SEGMENT})*$")
_SEGMENT_PART = re.compile(rf"(?P<name>{_KEY_PART})|\[(?P<index>\d+)\]")

PathStep = str | int
"""A step of an override path: a table key or an array index."""


def _apply_overrides(
    data: dict, overrides: Sequence[str], file: str
) -> tuple[list[Problem], dict[str, str]]:
    """Apply ``--set`` texts; (problems, dotted key -> text of each applied override)."""
    problems: list[Problem] = []
    applied: dict[str, str] = {}
    for text in overrides:
        key_text, sep, value_text = text.partition("=")
        key_text = key_text.strip()
        if not sep or not key_text:
            problems.append(
                Problem(
                    file,
                    f"--set {text}",
                    f"'{text}' is not KEY=VALUE; write e.g. --set run.seed=3 "
                    "or --set components.pid.parameters.kp=2.5",
                )
            )
            continue
        if not _OVERRIDE_KEY.match(key_text):
            problems.append(
                Problem(
                    file,
                    f"--set {key_text}",
                    f"'{key_text}' is not a dotted key; write e.g. run.until or "
                    "connections[0].delay (letters, digits, '_' and '-' between dots)",
                )
            )
            continue
        path = _override_path(key_text)
        error = _set_path(data, path, _override_value(value_text))
        if error:
            problems.append(Problem(file, f"--set {key_text}", error))
        else:
            applied[_render_path(path)] = text
    return problems, applied


def _override_path(key_text: str) -> list[PathStep]:
    """``connections[1].delay`` -> ``['connections', 1, 'delay']``."""
    path: list[PathStep] = []
    for m in _SEGMENT_PART.finditer(key_text):
        if m["index"] is not None:
            path.append(int(m["index"]))
        else:
            path.extend(_key_parts(m["name"]))
    return path


def _render_path(path: Sequence[PathStep]) -> str:
    """``['connections', 1, 'delay']`` -> ``connections[1].delay``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out = f"{out}.{step}" if out else step
    return out


def _override_value(text: str) -> Any:
    """A TOML value if ``text`` is one (``3``, ``[1, 2]``, ``"x"``), else the text itself."""
    text = text.strip()
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def _set_path(data: dict, path: Sequence[PathStep], value: Any) -> str | None:
    """Set ``data[path] = value``, creating missing tables; an error message or None."""
    node: Any = data
    for depth, step in enumerate(path):
        here = _render_path(path[:depth]) or "the top level"
        last = depth == len(path) - 1
        if isinstance(step, int):
            if not isinstance(node, list):
                return f"{here} is {_a(node)}, not an array; remove [{step}] from the key"
            if step >= len(node):
                return (
                    f"{here} has {len(node)} element(s), so [{step}] does not exist; "
                    f"use an index from 0 to {len(node) - 1}"
                )
        elif not isinstance(node, dict):
            return f"{here} is {_a(node)}, not a table, so it has no key '{step}'"
        elif not last and step not in node:
            if isinstance(path[depth + 1], int):
                return f"{_render_path(path[: depth + 1])} does not exist, so it has no elements"
            node[step] = {}
        if last:
            node[step] = value
            return None
        node = node[step]
    return None  # pragma: no cover - path is never empty


def _overrides_note(
    overrides: Sequence[str], until_s: Any, seed: Any, mode: Any, realtime: Any = None
) -> str:
    """A TOML comment block listing the command-line changes (appended to source_text)."""
    items = [f"--set {o}" for o in overrides]
    options = (("until", until_s), ("seed", seed), ("mode", mode), ("realtime", realtime))
    items += [f"--{k} {v}" for k, v in options if v is not None]
    if not items:
        return ""
    lines = "".join(f"# {item}".replace("\n", "\\n") + "\n" for item in items)
    return f"\n# --- command-line overrides applied to this rig ---\n{lines}"


# ------------------------------------------------------------------ reading


def _read(path: str | Path) -> str:
    """The rig file's text; RigFileError if it cannot be read."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RigFileError(
            f"rig file '{path}' does not exist",
            fix="check the path (a relative path is taken from the current folder)",
        ) from exc
    except IsADirectoryError as exc:
        raise RigFileError(
            f"'{path}' is a folder, not a rig file", fix="give the path of a .toml rig file"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RigFileError(
            f"cannot read rig file '{path}': {exc}",
            fix="check the file's permissions and that it is UTF-8 text",
        ) from exc


def _toml(text: str, file: str) -> dict[str, Any]:
    """Parse TOML; RigFileError with the file and line of the syntax error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        where = f"{file}:{m[1]}" if m else file
        raise RigFileError(
            f"{where}: not valid TOML: {exc}",
            fix="correct the syntax at that line (docs/rigs.md shows a complete rig)",
        ) from exc


# ------------------------------------------------------------------ parsing


@dataclass
class _Parsed:
    """What :func:`_parse` found: a rig (with placeholders where values are bad),
    the problems, and the file key of each connection and plot kept in the rig."""

    rig: Rig
    report: _Report
    connection_keys: tuple[str, ...]
    plot_keys: tuple[str, ...]

    @property
    def problems(self) -> list[Problem]:
        return self.report.problems


def _parse(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    until_s: float | None = None,
    seed: int | None = None,
    mode: str | None = None,
    realtime: float | None = None,
) -> _Parsed:
    """Read, override and validate; never raises RigValidationError itself."""
    file = str(path)
    text = _read(path)
    data = _toml(text, file)
    set_problems, applied = _apply_overrides(data, overrides, file)
    report = _Report(file, text, applied)
    report.problems.extend(set_problems)

    _check_keys(report, "", data, TOP_KEYS, "the top level")
    name = _string(report, "name", data.get("name", Path(path).stem), required=True)
    description = _string(report, "description", data.get("description", ""))
    declared = _component_names(data.get("components"))
    run = _run_config(report, data.get("run"), declared, until_s, seed, realtime)
    components = _components(report, data.get("components"), Path(path).resolve().parent, mode)
    connections, connection_keys = _connections(report, data.get("connections"), declared)
    plots, plot_keys = _plots(report, data.get("plots"), declared)
    _inputs_connected_twice(report, connections, connection_keys)

    rig = Rig(
        path=Path(path),
        name=name or Path(path).stem,
        run=run,
        components=tuple(components),
        connections=tuple(connections),
        plots=tuple(plots),
        description=description or "",
        source_text=text + _overrides_note(overrides, until_s, seed, mode, realtime),
    )
    return _Parsed(rig, report, tuple(connection_keys), tuple(plot_keys))


def _component_names(table: Any) -> list[str]:
    """Names declared under [components] (valid or not), for reference checks."""
    return list(table) if isinstance(table, dict) else []


# ---------------------------------------------------------- typed values


def _check_keys(
    report: _Report, prefix: str, table: Mapping[str, Any], allowed: Sequence[str], where: str
) -> None:
    """One problem per key of ``table`` not in ``allowed``, with a suggestion."""
    for key in table:
        if key not in allowed:
            report.add(
                f"{prefix}.{key}" if prefix else key,
                f"unknown key '{key}' in {where}{_did_you_mean(key, allowed)}; "
                f"remove it or correct the spelling (allowed: {', '.join(allowed)})",
            )


def _string(report: _Report, key: str, value: Any, *, required: bool = False) -> str | None:
    """A string value, or None (with a problem) if it is not one."""
    if not isinstance(value, str):
        report.add(key, f"expected a string, got {_a(value)} {value!r}; put the text in quotes")
        return None
    if required and not value.strip():
        report.add(key, "must not be empty; write some text or remove the key")
        return None
    return value


def _bool(report: _Report, key: str, value: Any) -> bool | None:
    if not isinstance(value, bool):
        report.add(key, f"expected true or false, got {_a(value)} {value!r}")
        return None
    return value


def _choice(report: _Report, key: str, value: Any, options: Sequence[str]) -> str | None:
    """One of ``options`` (a string), or None with a problem."""
    allowed = " or ".join(f'"{o}"' for o in options)
    if not isinstance(value, str):
        report.add(key, f"expected one of {allowed}, got {_a(value)} {value!r}")
        return None
    if value not in options:
        report.add(key, f"'{value}' is not one of {allowed}{_did_you_mean(value, options)}")
        return None
    return value


def _duration(report: _Report, key: str, value: Any, *, positive: bool) -> int | None:
    """A duration in ns (see timeparse), or None with a problem."""
    try:
        ns = parse_duration_ns(value, key=key)
    except DurationError as exc:
        report.add(key, exc.reason)
        return None
    if positive and ns == 0:
        report.add(key, f"must be longer than zero, got {value!r}; give a positive duration")
        return None
    return ns


def _seed(report: _Report, key: str, value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        report.add(key, f"expected an integer seed >= 0, got {_a(value)} {value!r}")
        return None
    if not 0 <= value < SEED_LIMIT:
        report.add(key, f"seed {value} is out of range; use an integer from 0 to 2**64 - 1")
        return None
    return value


def _rate(report: _Report, key: str, value: Any) -> Fraction | None:
    """An exact rate (Fraction of the decimal written), or None with a problem."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        report.add(
            key,
            f"expected a number of Hz like 100 or 29.97, got {_a(value)} {value!r}"
            + ('; for a duration use period = "10ms"' if isinstance(value, str) else ""),
        )
        return None
    if not math.isfinite(value) or value <= 0:
        report.add(key, f"must be a finite number above 0 Hz, got {value!r}")
        return None
    rate = Fraction(Decimal(str(value)))
    if rate > MAX_RATE_HZ:
        report.add(key, f"{value} Hz would step less than 1 ns apart; use at most 1e9 Hz")
        return None
    return rate


# ---------------------------------------------------------------- [run]


def _run_config(
    report: _Report,
    table: Any,
    names: Sequence[str],
    until_s: Any,
    seed_arg: Any,
    realtime_arg: Any = None,
) -> RunConfig:
    """The [run] table with the --until/--seed/--realtime overrides (placeholders where bad)."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        report.add("run", f"expected a [run] table, got {_a(table)}; write it as a [run] section")
        table = {}
    _check_keys(report, "run", table, RUN_KEYS, "[run]")
    d = _RUN_DEFAULTS
    until_ns = _until(report, table, until_s)
    seed = _seed(report, "run.seed", table.get("seed", d.seed))
    if seed_arg is not None:
        seed = _seed(report, "--seed", seed_arg)
    algorithm = _choice(report, "run.algorithm", table.get("algorithm", d.algorithm), ALGORITHMS)
    order = _order(report, table, algorithm, names)
    heartbeat = _duration(
        report, "run.heartbeat_interval", table.get("heartbeat_interval", "1s"), positive=True
    )
    peer_timeout = _duration(
        report, "run.peer_timeout", table.get("peer_timeout", "10s"), positive=False
    )
    if heartbeat and peer_timeout and peer_timeout <= heartbeat:
        report.add(
            "run.peer_timeout",
            f"must be longer than heartbeat_interval ({heartbeat} ns), or peers time out "
            "between two heartbeats; raise it (e.g. 10 x the interval) or use 0 to disable",
        )
    record = _bool(report, "run.record", table.get("record", d.record))
    exclude = _record_exclude(report, table.get("record_exclude", []), names)
    foxglove_images = _bool(report, "run.foxglove_images",
                            table.get("foxglove_images", d.foxglove_images))
    plots = _bool(report, "run.plots", table.get("plots", d.plots))
    realtime = _factor(report, "run.realtime", table.get("realtime", False))
    if realtime_arg is not None:
        realtime = _factor(report, "--realtime", realtime_arg)
    overrun = _choice(report, "run.overrun", table.get("overrun", d.overrun), OVERRUN_POLICIES)
    priority = table.get("realtime_priority", d.realtime_priority)
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 99:
        report.add(
            "run.realtime_priority",
            f"expected 0 (normal scheduling) or a SCHED_FIFO priority from 1 to 99, got "
            f"{_a(priority)} {priority!r}",
        )
        priority = d.realtime_priority
    safe_stop = _safe_stop(report, table.get("safe_stop", []), names)
    return RunConfig(
        until_ns=until_ns or 0,
        seed=d.seed if seed is None else seed,
        algorithm=algorithm or d.algorithm,  # type: ignore[arg-type]
        order=order,
        heartbeat_interval_ns=heartbeat or d.heartbeat_interval_ns,
        peer_timeout_ns=d.peer_timeout_ns if peer_timeout is None else peer_timeout,
        record=d.record if record is None else record,
        record_exclude=exclude,
        foxglove_images=d.foxglove_images if foxglove_images is None else foxglove_images,
        plots=d.plots if plots is None else plots,
        realtime=realtime,
        overrun=overrun or d.overrun,  # type: ignore[arg-type]
        realtime_priority=priority,
        safe_stop=safe_stop,
    )


def _safe_stop(report: _Report, value: Any, names: Sequence[str]) -> tuple[str, ...]:
    """run.safe_stop: components terminated first (in this order) when a run fails."""
    key = "run.safe_stop"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        report.add(key, f'expected a list of component names, got {value!r}; '
                   'e.g. safe_stop = ["mcu"]')
        return ()
    out: list[str] = []
    for i, name in enumerate(value):
        if name not in names:
            report.add(f"{key}[{i}]", f"no component named '{name}'{_did_you_mean(name, names)}")
        elif name in out:
            report.add(f"{key}[{i}]", f"lists '{name}' twice; name each component once")
        else:
            out.append(name)
    return tuple(out)


def _record_exclude(report: _Report, value: Any, names: Sequence[str]) -> tuple[str, ...]:
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
            report.add(f"{key}[{i}]", f"no component named '{component}'{_did_you_mean(component, names)}")
        else:
            out.append(ref)
    return tuple(out)


def _factor(report: _Report, key: str, value: Any) -> Fraction | None:
    """A real-time factor: a number > 0 (exact), true (1) or false (off: None)."""
    if value is False:
        return None
    if value is True:
        return Fraction(1)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        report.add(
            key,
            f"expected a real-time factor like 1 (real time) or 0.5 (half speed), or "
            f"true/false, got {_a(value)} {value!r}",
        )
        return None
    if not math.isfinite(value) or value <= 0:
        report.add(
            key,
            f"must be a finite number above 0, got {value!r}; 1 is real time, 0.5 half "
            "speed (use false to run as fast as possible)",
        )
        return None
    return Fraction(Decimal(str(value)))


def _until(report: _Report, table: Mapping[str, Any], until_s: Any) -> int | None:
    """run.until, or --until when given (which wins); a problem if neither is given."""
    until = None
    if "until" in table:
        until = _duration(report, "run.until", table["until"], positive=True)
    if until_s is not None:
        return _duration(report, "--until", until_s, positive=True)
    if "until" not in table:
        report.add(
            "run.until",
            'missing: say how long to simulate with until = "20s" under [run], '
            "or pass --until SECONDS",
        )
    return until


def _order(
    report: _Report, table: Mapping[str, Any], algorithm: str | None, names: Sequence[str]
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
                f"no component named '{n}'{_did_you_mean(n, names)}; "
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


# ---------------------------------------------------------------- [components]


def _components(
    report: _Report, table: Any, base_dir: Path, mode: str | None
) -> list[ComponentConfig]:
    """Every [components.NAME] table, in file order (validly named ones only)."""
    if mode is not None and mode not in MODES:
        report.add(
            "--mode",
            f"'{mode}' is not a mode; use --mode inproc or --mode process "
            "(or leave it out to run each component where the rig says)",
        )
        mode = None
    if table is None or table == {}:
        report.add(
            "components",
            "the rig has no components; add a [components.NAME] table with an entry "
            "and a rate_hz or period",
        )
        return []
    if not isinstance(table, dict):
        report.add("components", f"expected tables [components.NAME], got {_a(table)}")
        return []
    out = []
    for name, spec in table.items():
        key = f"components.{name}"
        valid_name = _component_name(report, key, name)
        if not isinstance(spec, dict):
            report.add(
                key,
                f"expected a table [components.{name}] with entry and rate_hz or period, "
                f"got {_a(spec)}",
            )
            continue
        component = _component(report, key, name, spec, base_dir, mode)
        if valid_name:
            out.append(component)
    return out


def _component_name(report: _Report, key: str, name: str) -> bool:
    if NAME_RE.match(name):
        return True
    report.add(
        key,
        f"'{name}' is not a valid component name; use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. depth_pid)",
    )
    return False


def _component(
    report: _Report, key: str, name: str, spec: Mapping[str, Any], base_dir: Path, mode: str | None
) -> ComponentConfig:
    """One component table (placeholders where a value is bad)."""
    d = _COMPONENT_DEFAULTS
    _check_keys(report, key, spec, COMPONENT_KEYS, f"[{key}]")
    placement = _choice(report, f"{key}.run", spec.get("run", "inproc"), PLACEMENTS) or "inproc"
    entry = _entry(report, key, spec, placement)
    endpoint = _endpoint(report, key, spec, placement)
    replay = _replay(report, key, name, spec, placement, base_dir)
    schedule = _schedule(report, key, spec, replay)
    step_timeout = _duration(
        report, f"{key}.step_timeout", spec.get("step_timeout", "2s"), positive=True
    )
    setup_timeout = _duration(
        report, f"{key}.setup_timeout", spec.get("setup_timeout", "30s"), positive=True
    )
    parameters = spec.get("parameters", {})
    if not isinstance(parameters, dict):
        report.add(
            f"{key}.parameters",
            f"expected a table [{key}.parameters] of name = value, got {_a(parameters)}",
        )
        parameters = {}
    group = _group(report, key, spec, placement)
    server_key, client_key, insecure = (
        _security(report, key, spec, placement, endpoint, base_dir) if mode is None
        else (None, None, False))  # --mode runs every component here: no connection to secure
    if "profile" in spec:
        parameters = _profile(report, f"{key}.profile", spec["profile"], base_dir, parameters)
    if mode is not None and placement != "replay":  # a replay stays one under --mode
        group = ""  # --mode: every component on its own (in-process, or one process each)
        if placement == "remote" and not entry:
            report.add(
                f"{key}.entry",
                f"--mode {mode} runs every component here, but remote component '{name}' has "
                "no entry; add entry = \"...\" naming its class, or run without --mode",
            )
        placement, endpoint = mode, ""
    return ComponentConfig(
        name=name,
        entry=entry,
        placement=placement,  # type: ignore[arg-type]
        schedule=schedule or _PLACEHOLDER_SCHEDULE,
        parameters=parameters,
        endpoint=endpoint,
        group=group,
        step_timeout_ns=step_timeout or d.step_timeout_ns,
        setup_timeout_ns=setup_timeout or d.setup_timeout_ns,
        base_dir=base_dir,
        recording=replay.path,
        source=replay.source if replay.source != name else "",
        server_key=server_key,
        client_key=client_key,
        insecure=insecure,
    )


@dataclass
class _ReplaySpec:
    """What the rig says about a replay (``recording``, ``source``) and what the
    recording says of the component (from its summary and metadata only)."""

    active: bool = False
    """The component is a replay."""
    path: Path | None = None
    source: str = ""
    readable: bool = False
    """The recording was read and holds the component (else a problem was reported)."""
    schedule: Schedule | None = None
    """The recorded schedule, when the recording states it."""


def _replay(
    report: _Report, key: str, name: str, spec: Mapping[str, Any], placement: str, base_dir: Path
) -> _ReplaySpec:
    """``recording`` and ``source`` of a ``run = "replay"`` component, checked against
    the recording (which must exist, be MCAP and hold the component's topics)."""
    from .adapters.replay import ReplayError, inspect_recording

    if placement != "replay":
        for k in ("recording", "source"):
            if k in spec:
                report.add(
                    f"{key}.{k}",
                    f'is only used with run = "replay" (this component runs "{placement}"); '
                    'remove it or set run = "replay"',
                )
        return _ReplaySpec()
    out = _ReplaySpec(active=True, source=name)
    if "source" in spec:
        source = spec["source"]
        if not isinstance(source, str) or not NAME_RE.match(source):
            report.add(
                f"{key}.source",
                f"expected the component's name in the recording (letters, digits, _ and -), "
                f"got {source!r}",
            )
            return out
        out.source = source
    if "recording" not in spec:
        report.add(
            f"{key}.recording",
            'missing: a run = "replay" component replays a recording; add recording = '
            '"runs/NAME/recording.mcap" (relative to the rig file\'s folder)',
        )
        return out
    value = spec["recording"]
    if not isinstance(value, str) or not value.strip():
        report.add(
            f"{key}.recording",
            f"expected the path of a run's recording.mcap, got {_a(value)} {value!r}",
        )
        return out
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    out.path = path
    if not path.is_file():
        report.add(
            f"{key}.recording",
            f"recording '{value}' does not exist"
            + (f" ({path})" if str(path) != value else "")
            + "; give the path of a run's recording.mcap, relative to the rig file's folder",
        )
        return out
    try:
        recorded = inspect_recording(path, out.source)
    except ReplayError as exc:
        where = f"{key}.source" if "source" in spec and "has no messages" in exc.message else (
            f"{key}.recording")
        report.add(where, f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
        return out
    if recorded.initialize_messages is None:
        report.add(
            f"{key}.recording",
            f"recording '{value}' does not say which messages Initialize published (no "
            "moonpool.initialize metadata: the recorded run failed during setup, or another "
            "program wrote it); record the run again with this version of moonpool",
        )
        return out
    out.readable = True
    out.schedule = recorded.schedule
    return out


def _security(
    report: _Report, key: str, spec: Mapping[str, Any], placement: str, endpoint: str,
    base_dir: Path,
) -> tuple[Path | None, Path | None, bool]:
    """server_key, client_key (paths of readable CURVE key files) and insecure.

    A remote tcp:// endpoint that leaves the loopback needs both keys, or an explicit
    ``insecure = true`` (docs/distributed.md)."""
    given = [k for k in ("server_key", "client_key", "insecure") if k in spec]
    if placement != "remote":
        for k in given:
            report.add(f"{key}.{k}", f'is only used with run = "remote" (this component runs '
                       f'"{placement}"); remove it or set run = "remote"')
        return None, None, False
    insecure = False
    if "insecure" in spec:
        insecure = bool(_bool(report, f"{key}.insecure", spec["insecure"]))
    paths: dict[str, Path | None] = {"server_key": None, "client_key": None}
    examples = {"server_key": '"keys/camera-pc.key" (the public key of the server)',
                "client_key": '"keys/orchestrator.key_secret" (this side\'s secret key)'}
    for k in paths:
        if k not in spec:
            continue
        value = spec[k]
        if not isinstance(value, str) or not value.strip():
            report.add(f"{key}.{k}", f"expected the path of a key file, e.g. {examples[k]}, "
                       f"got {_a(value)} {value!r}")
            continue
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        try:
            if k == "server_key":
                read_public_key(path)
            else:
                read_key_pair(path)
        except KeyFileError as exc:
            report.add(f"{key}.{k}", str(exc).replace(str(path), value))
            continue
        paths[k] = path
    has_keys = "server_key" in spec or "client_key" in spec
    if has_keys:
        for k in paths:
            if k not in spec:
                other = "client_key" if k == "server_key" else "server_key"
                report.add(f"{key}.{k}", f"missing: {other} is given, and CURVE needs both, "
                           f"e.g. {k} = {examples[k]}")
        if insecure:
            report.add(f"{key}.insecure", "contradicts server_key/client_key; remove insecure "
                       "(the keys make the connection secure) or the keys")
    elif endpoint and leaves_loopback(endpoint) and not insecure:
        report.add(
            f"{key}.endpoint",
            f"{endpoint} leaves this machine and the rig gives no keys: the connection would "
            "be neither authenticated nor encrypted; add server_key = "
            f"{examples['server_key']} and client_key = {examples['client_key']} "
            "(`moonpool keys generate NAME`, docs/distributed.md), or insecure = true on a "
            "trusted network",
        )
    return paths["server_key"], paths["client_key"], insecure


def _group(report: _Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The process group ('' when absent or bad)."""
    if "group" not in spec or placement == "replay":  # a replay ignores it (switching back)
        return ""
    group = spec["group"]
    if placement != "process":
        report.add(
            f"{key}.group",
            f'is only used with run = "process" (this component runs "{placement}"); '
            'remove it or set run = "process"',
        )
        return ""
    if not isinstance(group, str) or not NAME_RE.match(group):
        report.add(
            f"{key}.group",
            f"expected a group name like \"sensors\" (letters, digits, _ and -), got {group!r}",
        )
        return ""
    return group


def _profile(
    report: _Report, key: str, value: Any, base_dir: Path, parameters: dict[str, Any]
) -> dict[str, Any]:
    """``profile = "FILE.toml"``: the file's tables become the parameter ``profile``.

    A vehicle profile (fmus/hydrodynamics/profiles/) is TOML, and only this module
    parses TOML, so the rig loader reads it and hands the component its content as a
    table parameter named ``profile`` (components cannot read TOML themselves).
    """
    if not isinstance(value, str) or not value.strip():
        report.add(key, f"expected the path of a profile .toml file, got {_a(value)} {value!r}")
        return parameters
    if "profile" in parameters:
        report.add(
            key,
            "the profile key and parameters.profile both set the parameter 'profile'; "
            "remove one of them",
        )
        return parameters
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "does not exist" if isinstance(exc, FileNotFoundError) else f"cannot be read: {exc}"
        report.add(key, f"profile '{value}' {reason}; give a path relative to the rig file's folder")
        return parameters
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        report.add(key, f"profile '{value}' is not valid TOML: {exc}")
        return parameters
    return {**parameters, "profile": data}


def _entry(report: _Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The entry text ('' when absent or bad)."""
    forms = '"quickstart.vehicle", "package.module:Class" or "file.py:Class"'
    if "entry" not in spec:
        if placement not in ("remote", "replay"):
            report.add(
                f"{key}.entry",
                f"missing: say what to run, e.g. entry = {forms} "
                "(only a run = \"remote\" or \"replay\" component may leave it out)",
            )
        return ""
    entry = spec["entry"]
    if not isinstance(entry, str) or not entry.strip():
        report.add(f"{key}.entry", f"expected a non-empty string like {forms}, got {entry!r}")
        return ""
    return entry.strip()


def _endpoint(report: _Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The endpoint of a remote component ('' otherwise or when bad)."""
    forms = '"tcp://HOST:PORT", "ipc://PATH" or "inproc://NAME"'
    if "endpoint" not in spec:
        if placement == "remote":
            report.add(
                f"{key}.endpoint",
                f"missing: a run = \"remote\" component needs the endpoint it is served at, "
                f"e.g. endpoint = \"tcp://10.0.0.2:5555\" ({forms})",
            )
        return ""
    if placement == "replay":  # a replay ignores it (switching back is one edit)
        return ""
    endpoint = spec["endpoint"]
    if placement != "remote":
        report.add(
            f"{key}.endpoint",
            f'is only used with run = "remote" (this component runs "{placement}"); '
            'remove it or set run = "remote"',
        )
        return ""
    if not isinstance(endpoint, str) or not (m := ENDPOINT_RE.match(endpoint)):
        report.add(f"{key}.endpoint", f"{endpoint!r} is not a ZeroMQ endpoint; write {forms}")
        return ""
    if m["port"] is not None and not 0 < int(m["port"]) < 65536:
        report.add(f"{key}.endpoint", f"port {m['port']} is out of range; use 1 to 65535")
        return ""
    return endpoint


def _schedule(
    report: _Report, key: str, spec: Mapping[str, Any], replay: _ReplaySpec | None = None
) -> Schedule | None:
    """Schedule from exactly one of rate_hz / period, plus offset. A replay without
    either takes the recorded schedule (and offset, unless the rig gives one)."""
    offset = _duration(report, f"{key}.offset", spec.get("offset", 0), positive=False)
    has_rate, has_period = "rate_hz" in spec, "period" in spec
    if has_rate and has_period:
        report.add(
            f"{key}.period",
            "give either rate_hz or period, not both; remove one of them",
        )
        return None
    if not (has_rate or has_period) and replay is not None and replay.active:
        if replay.schedule is not None:
            if "offset" in spec and offset is not None:
                return Schedule(replay.schedule.rate_hz, offset)
            return replay.schedule
        if replay.readable:
            report.add(
                f"{key}.rate_hz",
                "missing: the recording does not say how often this component was stepped; "
                'give its rate_hz = 100 or period = "10ms"',
            )
        return None
    if not (has_rate or has_period):
        report.add(
            f"{key}.rate_hz",
            'missing: say how often to step it with rate_hz = 100 or period = "10ms"',
        )
        return None
    if has_rate:
        rate = _rate(report, f"{key}.rate_hz", spec["rate_hz"])
    else:
        period = _duration(report, f"{key}.period", spec["period"], positive=True)
        rate = Fraction(1_000_000_000, period) if period else None
    if rate is None or offset is None:
        return None
    return Schedule(rate_hz=rate, offset_ns=offset)


# ---------------------------------------------------------------- [[connections]]


def _array_of_tables(report: _Report, key: str, value: Any, example: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        report.add(key, f"expected an array of tables; write each entry as [[{key}]] ({example})")
        return []
    return value


def _connections(
    report: _Report, value: Any, names: Sequence[str]
) -> tuple[list[ConnectionConfig], list[str]]:
    """Valid [[connections]] and the file key (``connections[i]``) of each."""
    out: list[ConnectionConfig] = []
    keys: list[str] = []
    for i, spec in enumerate(_array_of_tables(report, "connections", value, "with from and to")):
        key = f"connections[{i}]"
        if not isinstance(spec, dict):
            report.add(key, f"expected a table with from and to, got {_a(spec)}")
            continue
        _check_keys(report, key, spec, CONNECTION_KEYS, f"[[connections]] #{i}")
        source = _port_ref(
            report, f"{key}.from", spec.get("from"), names, "output", "vehicle.state"
        )
        target = _port_ref(report, f"{key}.to", spec.get("to"), names, "input", "sensor.state")
        delay = _duration(report, f"{key}.delay", spec.get("delay", 0), positive=False)
        if source and target and delay is not None:
            out.append(ConnectionConfig(*source, *target, delay_ns=delay))
            keys.append(key)
    return out, keys


def _port_ref(
    report: _Report, key: str, value: Any, names: Sequence[str], direction: str, example: str
) -> tuple[str, str] | None:
    """``component.port`` -> (component, port), checking the component exists."""
    if value is None:
        report.add(key, f'missing: name the {direction} port as COMPONENT.PORT, e.g. "{example}"')
        return None
    if not isinstance(value, str):
        report.add(key, f'expected a string COMPONENT.PORT like "{example}", got {_a(value)}')
        return None
    component, dot, port = value.partition(".")
    if not dot or not component or not port or "." in port:
        report.add(
            key,
            f"'{value}' is not COMPONENT.PORT; write the component name, one dot and the "
            f'{direction} port name, e.g. "{example}"',
        )
        return None
    if component not in names:
        report.add(key, _unknown_component(component, names))
        return None
    return component, port


def _unknown_component(name: str, names: Sequence[str]) -> str:
    return (
        f"no component named '{name}'{_did_you_mean(name, names)}; "
        f"use one of the [components] tables ({', '.join(names) or 'none defined'})"
    )


def _inputs_connected_twice(
    report: _Report, connections: Sequence[ConnectionConfig], keys: Sequence[str]
) -> None:
    """An input port takes one connection: one problem per extra connection."""
    first: dict[tuple[str, str], str] = {}
    for conn, key in zip(connections, keys):
        target = (conn.target, conn.target_port)
        if target in first:
            report.add(
                f"{key}.to",
                f"input {conn.target}.{conn.target_port} is already connected by {first[target]}; "
                "an input port takes one connection: remove one of them",
            )
        else:
            first[target] = key


# ---------------------------------------------------------------- [[plots]]


def _plots(
    report: _Report, value: Any, names: Sequence[str]
) -> tuple[list[PlotSpec], list[str]]:
    """Valid [[plots]] and the file key (``plots[i]``) of each."""
    out: list[PlotSpec] = []
    keys: list[str] = []
    for i, spec in enumerate(_array_of_tables(report, "plots", value, "with title and series")):
        key = f"plots[{i}]"
        if not isinstance(spec, dict):
            report.add(key, f"expected a table with title and series, got {_a(spec)}")
            continue
        _check_keys(report, key, spec, PLOT_KEYS, f"[[plots]] #{i}")
        title = None
        if "title" not in spec:
            report.add(f"{key}.title", 'missing: give the figure a title, e.g. title = "Depth"')
        else:
            title = _string(report, f"{key}.title", spec["title"], required=True)
        series = _series_list(report, f"{key}.series", spec.get("series"), names)
        ylabel = _string(report, f"{key}.ylabel", spec.get("ylabel", ""))
        if title and series and ylabel is not None:
            out.append(PlotSpec(title=title, series=tuple(series), ylabel=ylabel))
            keys.append(key)
    return out, keys


def _series_list(report: _Report, key: str, value: Any, names: Sequence[str]) -> list[str] | None:
    example = '["vehicle.state:position_ned_m.z"]'
    if value is None:
        report.add(key, f"missing: list the signals to draw, e.g. series = {example}")
        return None
    if not isinstance(value, list) or not value:
        report.add(
            key, f"expected a non-empty array of COMPONENT.PORT:FIELD strings like {example}"
        )
        return None
    ok = [_series(report, f"{key}[{j}]", s, names) for j, s in enumerate(value)]
    return list(value) if all(ok) else None


def _series(report: _Report, key: str, value: Any, names: Sequence[str]) -> bool:
    """Check one ``component.port:field.path`` (syntax and component)."""
    example = '"vehicle.state:position_ned_m.z"'
    if not isinstance(value, str):
        report.add(key, f"expected a string COMPONENT.PORT:FIELD like {example}, got {_a(value)}")
        return False
    ref, colon, path = value.partition(":")
    component, dot, port = ref.partition(".")
    if not (colon and dot and component and port and "." not in port and FIELD_RE.match(path)):
        report.add(
            key,
            f"'{value}' is not COMPONENT.PORT:FIELD; write the output port, a colon and the "
            f"message field path, e.g. {example}",
        )
        return False
    if component not in names:
        report.add(key, _unknown_component(component, names))
        return False
    return True


# ------------------------------------------------------------------ deep checks


def _deep_check(
    rig: Rig,
    report: _Report,
    connection_keys: Sequence[str] | None = None,
    plot_keys: Sequence[str] | None = None,
) -> list[Problem]:
    """Problems found with the component classes loaded; appended to ``report``."""
    if connection_keys is None:
        connection_keys = [f"connections[{i}]" for i in range(len(rig.connections))]
    if plot_keys is None:
        plot_keys = [f"plots[{i}]" for i in range(len(rig.plots))]
    start = len(report.problems)
    classes = _load_classes(rig, report)
    for comp in rig.components:
        if comp.name in classes and comp.placement != "replay":
            params = _check_parameters(report, comp, classes[comp.name].cls)
            ports = _ports(report, comp, classes[comp.name], params)
            if ports is None:
                del classes[comp.name]  # its ports are unknown: skip checks that need them
            else:
                classes[comp.name] = dataclasses.replace(
                    classes[comp.name], inputs=ports[0], outputs=ports[1]
                )
    replays = {c.name for c in rig.components if c.placement == "replay"}
    for conn, key in zip(rig.connections, connection_keys):
        # A replay has no inputs: connections into it are not wired (adapters/replay.py).
        _check_connection(report, conn, key, classes, unwired=conn.target in replays)
    _inputs_connected_twice(report, rig.connections, connection_keys)
    for plot, key in zip(rig.plots, plot_keys):
        _check_plot(report, plot, key, classes)
    for i, ref in enumerate(rig.run.record_exclude):
        component, _, port = ref.partition(".")
        if component in classes:
            _find_port(report, f"run.record_exclude[{i}]", component, port, classes[component],
                       "output", "name an output")
        for j, plot in enumerate(rig.plots):
            for k, series in enumerate(plot.series):
                if series.partition(":")[0] == ref:
                    report.add(f"plots[{j}].series[{k}]", f"{ref} is in run.record_exclude, so the "
                               "recording has nothing to plot; remove one of them")
    return report.problems[start:]


@dataclass(frozen=True)
class _Loaded:
    """A component's class and the entry it was loaded from (for messages)."""

    entry: str
    cls: type[Component]
    inputs: tuple[Port, ...] = ()
    outputs: tuple[Port, ...] = ()


def _load_classes(rig: Rig, report: _Report) -> dict[str, _Loaded]:
    """Component name -> loaded class, for every component whose entry loads.

    A local component that cannot be loaded is a problem; a remote one is skipped.
    """
    classes: dict[str, _Loaded] = {}
    for comp in rig.components:
        if comp.placement == "replay":
            loaded = _replay_ports(rig, comp, report)
            if loaded is not None:
                classes[comp.name] = loaded
            continue
        if not comp.entry:
            continue
        try:
            cls = load_entry(comp.entry, base_dir=comp.base_dir)
            classes[comp.name] = _Loaded(comp.entry, cls, tuple(cls.inputs), tuple(cls.outputs))
        except Exception as exc:  # EntryError, or anything a module raises on getattr
            if comp.placement == "remote":
                continue
            if isinstance(exc, EntryError):
                message = f"{exc.message}; {exc.fix}" if exc.fix else exc.message
            else:
                message = f"cannot load '{comp.entry}': {type(exc).__name__}: {exc}"
            report.add(f"components.{comp.name}.entry", message)
    return classes


def _replay_ports(rig: Rig, comp: ComponentConfig, report: _Report) -> _Loaded | None:
    """A replay's outputs, from its recording, and whether the recording fits its
    schedule. None when the recording cannot be read (reported by load_rig)."""
    from .adapters.replay import ReplayError, first_misfit, inspect_recording
    from .recording import recorded_class

    if comp.recording is None:
        return None
    key = f"components.{comp.name}"
    try:
        recorded = inspect_recording(comp.recording, comp.recorded_name)
    except ReplayError:
        return None
    outputs = []
    for port, type_name in recorded.ports.items():
        try:
            cls = recorded_class(type_name, recorded.schemas.get(type_name, b""))
        except PortError as exc:
            report.add(f"{key}.recording", f"cannot read the type of /{recorded.source}/{port} "
                       f"({type_name or 'no schema'}): {exc.message}")
            continue
        outputs.append(Port(port, cls))
    if recorded.schedule != comp.schedule:
        bad = first_misfit(recorded, comp.schedule, rig.run.until_ns)
        if bad is not None:
            was = recorded.schedule
            said = (f"it was recorded at {float(was.rate_hz):g} Hz, offset {was.offset_ns} ns"
                    if was is not None else "the recording does not say its schedule")
            where = f"{key}.period" if f"{key}.period" in report.lines else f"{key}.rate_hz"
            report.add(
                where,
                f"the replay, stepped at {float(comp.schedule.rate_hz):g} Hz (offset "
                f"{comp.schedule.offset_ns} ns), cannot publish the "
                f"message recorded on {bad.topic} at t={bad.log_time_ns} ns at its time "
                f"({said}); step it at the recorded rate and offset, or leave rate_hz, "
                "period and offset out to use the recorded schedule",
            )
    label = f"replay of '{recorded.source}' from {comp.recording.name}"
    if recorded.not_recorded:
        label += (f"; left out of that recording by run.record_exclude, so not replayable: "
                  f"{', '.join(recorded.not_recorded)}")
    return _Loaded(label, Component, (), tuple(outputs))


# -- parameters


def _check_parameters(report: _Report, comp: ComponentConfig, cls: type[Component]) -> Any:
    """Each given parameter known and of the declared type; each required one given.
    Returns the Parameters instance, or None when there was a problem."""
    key = f"components.{comp.name}.parameters"
    params_cls = cls.Parameters
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    types = _type_hints(params_cls)
    known = ", ".join(fields) or "none"
    values: dict[str, Any] = {}
    ok = True
    for name in comp.parameters:
        if name not in fields:
            ok = False
            report.add(
                f"{key}.{name}",
                f"unknown parameter '{name}' of {comp.entry}{_did_you_mean(name, fields)}; "
                f"remove it or correct the spelling (known parameters: {known})",
            )
    for name, f in fields.items():
        if name in comp.parameters:
            try:
                values[name] = coerce_parameter(
                    name, types.get(name, Any), comp.parameters[name], comp.base_dir
                )
            except ParameterError as exc:
                ok = False
                report.add(f"{key}.{name}", f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            ok = False
            report.add(key, _missing_parameter(comp.name, f))
    if ok:
        return _construct(report, key, params_cls, values)
    return None


def _type_hints(params_cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(params_cls)
    except Exception:  # unresolvable annotations: accept any value
        return {}


def _missing_parameter(component: str, f: dataclasses.Field) -> str:
    doc = f.metadata.get("doc", "")
    unit = f.metadata.get("unit", "")
    about = f" ({doc}{', ' if doc and unit else ''}{unit})" if doc or unit else ""
    return (
        f"missing required parameter '{f.name}'{about}; "
        f"add {f.name} = ... under [components.{component}.parameters]"
    )


def _construct(report: _Report, key: str, params_cls: type, values: Mapping[str, Any]) -> Any:
    """Build the Parameters instance, so its own checks (``__post_init__``) run too."""
    try:
        return params_cls(**values)
    except (TypeError, ValueError, ParameterError) as exc:
        message = exc.message if isinstance(exc, ParameterError) else str(exc)
        report.add(key, f"{message}; check the parameter values")
        return None


def _ports(
    report: _Report, comp: ComponentConfig, loaded: _Loaded, params: Any
) -> tuple[tuple[Port, ...], tuple[Port, ...]] | None:
    """The component's ports for its parameters (``Component.ports_for``), or None.

    None when the parameters are bad (already reported) or ``ports_for`` refuses
    them (reported here, except for a remote component, whose files may exist only
    where it is served).
    """
    cls = loaded.cls
    if cls.ports_for.__func__ is Component.ports_for.__func__:  # type: ignore[attr-defined]
        return tuple(cls.inputs), tuple(cls.outputs)
    if params is None:
        return None
    key = f"components.{comp.name}.parameters"
    try:
        inputs, outputs = cls.ports_for(params)
    except ParameterError as exc:
        if comp.placement != "remote":
            report.add(key, f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
        return None
    except Exception as exc:  # noqa: BLE001 - a component's own bug, reported not raised
        if comp.placement != "remote":
            report.add(key, f"{comp.entry}.ports_for failed: {type(exc).__name__}: {exc}")
        return None
    return tuple(inputs), tuple(outputs)


# -- connections and plots


def _check_connection(
    report: _Report,
    conn: ConnectionConfig,
    key: str,
    classes: Mapping[str, _Loaded],
    unwired: bool = False,
) -> None:
    """Ports exist in the right direction and carry the same message type. ``unwired``:
    the target is a replay (no inputs), so only the source is checked."""
    out = in_ = None
    wrong_way = "connections go from an output to an input"
    if conn.source in classes:
        out = _find_port(
            report, f"{key}.from", conn.source, conn.source_port, classes[conn.source], "output",
            wrong_way,
        )
    if conn.target in classes and not unwired:
        in_ = _find_port(
            report, f"{key}.to", conn.target, conn.target_port, classes[conn.target], "input",
            wrong_way,
        )
    if out and in_ and out.type_name != in_.type_name:
        report.add(
            key,
            f"{conn.source}.{conn.source_port} sends {out.type_name} but "
            f"{conn.target}.{conn.target_port} takes {in_.type_name}; connect ports of the "
            "same message type (or put a converting component between them)",
        )


def _find_port(
    report: _Report,
    key: str,
    component: str,
    port: str,
    loaded: _Loaded,
    direction: str,
    wrong_way: str,
) -> Port | None:
    """The ``direction`` port named ``port`` of a component, or None with a problem.

    ``wrong_way`` is the advice given when ``port`` exists in the other direction.
    """
    ports = loaded.outputs if direction == "output" else loaded.inputs
    for p in ports:
        if p.name == port:
            return p
    other, other_dir = (
        (loaded.inputs, "input") if direction == "output" else (loaded.outputs, "output")
    )
    names = [p.name for p in ports]
    if port in [p.name for p in other]:
        hint = f"; '{port}' is an {other_dir} port ({wrong_way})"
    else:
        hint = _did_you_mean(port, names)
    report.add(
        key,
        f"component '{component}' ({loaded.entry}) has no {direction} port '{port}'{hint}; "
        f"its {direction}s: {', '.join(names) or 'none'}",
    )
    return None


def _check_plot(
    report: _Report, plot: PlotSpec, key: str, classes: Mapping[str, _Loaded]
) -> None:
    """Each series names an output port and a numeric field of its message."""
    for j, series in enumerate(plot.series):
        ref, _, path = series.partition(":")
        component, _, port_name = ref.partition(".")
        if component not in classes:
            continue
        port = _find_port(
            report, f"{key}.series[{j}]", component, port_name, classes[component], "output",
            "plot the output it is connected from",
        )
        if port is None:
            continue
        problem = _field_problem(port.type.DESCRIPTOR, path)
        if problem:
            report.add(f"{key}.series[{j}]", f"{ref} carries {port.type_name}: {problem}")


_NOT_NUMBERS = (FieldDescriptor.CPPTYPE_STRING,)
_SEGMENT_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>[^\]]+)\])?$")
# One path segment, a key in brackets included (a signal may be named "left.traction_n").
_PATH_PART_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?")


def _field_problem(desc: Descriptor, path: str) -> str | None:
    """Why ``path`` is not a plottable number of messages ``desc``, or None.

    Paths follow orchestrator/plots.py: dots into messages, ``[i]`` into repeated
    fields, ``[name]`` into repeated messages that have a string field ``name``.
    """
    parts = _PATH_PART_RE.findall(path)
    for i, segment in enumerate(parts):
        m = _SEGMENT_RE.match(segment)
        assert m is not None  # FIELD_RE checked the syntax
        name, index = m["name"], m["index"]
        here = ".".join(parts[: i + 1])
        f = desc.fields_by_name.get(name)
        if f is None:
            fields = list(desc.fields_by_name)
            return (
                f"{desc.full_name} has no field '{name}'{_did_you_mean(name, fields)}; "
                f"its fields: {', '.join(fields)}"
            )
        problem = _index_problem(f, here, index)
        if problem:
            return problem
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                sub = list(f.message_type.fields_by_name)
                return (
                    f"'{here}' is a {f.message_type.full_name} message, not a number; "
                    f"plot one of its fields, e.g. '{here}.{sub[0] if sub else '...'}'"
                )
            desc = f.message_type
        elif not last:
            return f"'{here}' is a single value and has no field '{parts[i + 1]}'"
        elif f.cpp_type in _NOT_NUMBERS:
            return f"'{here}' is text, not a number; plot a numeric, boolean or enum field"
    return None


def _index_problem(f: FieldDescriptor, here: str, index: str | None) -> str | None:
    """Whether ``[index]`` fits field ``f`` (required on repeated fields, only there)."""
    if not f.is_repeated:
        return f"'{here}' is not a repeated field; remove [{index}]" if index is not None else None
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        return f"'{here}' is a map; maps are not plotted"
    if index is None:
        return f"'{here}' is a repeated field; pick an element, e.g. '{here}[0]'"
    named = f.message_type is not None and "name" in f.message_type.fields_by_name
    if index.isdigit() or named:
        return None
    return f"'{here}' is indexed by element number; write e.g. '{f.name}[0]', not [{index}]"
