"""Signal sources: step, ramp, sine, chirp and CSV / recording playback on any numeric field.

``SignalSource`` (short name ``sources.signal``) outputs one message of the type the
rig names (``type = "moonpool.v1.Wrench"``) on one port (``port``, default ``out``)
each step; every entry of ``fields`` drives one numeric field of it, named by its
path (``"force_n.x"``), with one signal. Fields not named stay zero; a ``header``
field of type ``moonpool.v1.Header`` is stamped (``sim_time_ns = t``, ``frame_id``).

Call order: ``Parameters(...)`` (validates everything and lists every problem at
once), ``configure`` (builds one function t_ns -> value per field), ``step(t)``
(evaluates them at the step's start time ``t``, exact integer ns).

Signals (``x(t)``; times are seconds or duration strings such as ``"250ms"``, turned
into exact integer nanoseconds; ``τ`` is the time since ``start`` in s):

=================== ===============================================================
``constant``        ``x = value``
``step``            ``x = initial`` for ``t < at``, ``final`` from ``t >= at`` on
``ramp``            ``initial`` until ``start``, linear to ``final`` at ``end``, then ``final``
``sine``            ``x = offset + amplitude · sin(2π f τ + phase_rad)`` from ``start``
                    on (``offset`` before)
``chirp``           ``x = offset + amplitude · sin(φ(τ) + phase_rad)`` for
                    ``0 <= τ < duration`` (``offset`` outside); ``method = "linear"``:
                    ``f(τ) = f0 + (f1 − f0) τ / T``, ``φ = 2π (f0 τ + (f1 − f0) τ² / 2T)``;
                    ``"logarithmic"`` (exponential sweep): ``f(τ) = f0 k^(τ/T)``,
                    ``k = f1 / f0``, ``φ = 2π f0 T (k^(τ/T) − 1) / ln k``
``csv``             column ``column`` of the source's ``csv`` file against its
                    ``time_column`` (s), ``interpolation = "hold"`` (latest row at or
                    before t) or ``"linear"``; the first row's value before it, the
                    last after; ``x = offset + scale · value``
``recording``       field ``field`` of the messages on ``topic`` of the source's
                    ``recording`` (a moonpool MCAP), by log time, held; ``scale``,
                    ``offset`` as for csv
=================== ===============================================================

An integer field gets ``round(x)`` (refused at the step if out of the field's range),
a boolean ``x >= 0.5``.
"""

from __future__ import annotations

import csv
import difflib
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from ..sdk import wire
from ..sdk.component import Component, Port, param
from ..sdk.errors import MoonpoolError, ParameterError, StepFailed

KINDS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    # kind: (required keys, optional keys with defaults)
    "constant": (("value",), {}),
    "step": (("at", "final"), {"initial": 0.0}),
    "ramp": (("start", "end", "final"), {"initial": 0.0}),
    "sine": (("amplitude", "frequency_hz"), {"phase_rad": 0.0, "offset": 0.0, "start": 0.0}),
    "chirp": (("amplitude", "f0_hz", "f1_hz", "duration"),
              {"method": "linear", "phase_rad": 0.0, "offset": 0.0, "start": 0.0}),
    "csv": (("column",), {"interpolation": "hold", "scale": 1.0, "offset": 0.0}),
    "recording": (("topic", "field"), {"scale": 1.0, "offset": 0.0}),
}
"""Every signal kind: its required keys and its optional keys with their defaults."""

TIME_KEYS = ("at", "start", "end", "duration")
"""Keys that are times (seconds or duration strings -> exact ns)."""

_NUMERIC = {
    FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT,
    FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
    FieldDescriptor.CPPTYPE_BOOL,
}
_INT_RANGE = {
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
}
_DURATION = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(ns|us|µs|ms|s|min)\s*$")
_UNIT_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9}
EXAMPLE = ('fields = { "force_n.x" = { kind = "step", at = 1.0, final = 40.0 }, '
           '"torque_nm.z" = { kind = "sine", amplitude = 2.0, frequency_hz = 0.5 } }')


def _did_you_mean(word: str, options: Any) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def time_ns(value: Any) -> int:
    """Seconds (a number, read as a decimal) or a duration string -> exact integer ns.

    Raises ValueError with the accepted forms."""
    if _is_number(value):
        number, scale = Decimal(str(value)), 10**9
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        number, scale = Decimal(m[1]), _UNIT_NS[m[2]]
    else:
        raise ValueError(f"{value!r} is not a time: give seconds (1.5) or a duration ('250ms')")
    ns = number * scale
    if ns != ns.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of nanoseconds")
    return int(ns)


def field_path(cls: Any, path: str) -> tuple[tuple[str, ...], int | None, str]:
    """(parts, cpp type, problem) of a numeric field path of message class ``cls``;
    problem is "" when the path names a singular numeric field."""
    desc = cls.DESCRIPTOR
    parts = tuple(str(path).split("."))
    for i, part in enumerate(parts):
        f = desc.fields_by_name.get(part)
        if f is None:
            return parts, None, (f"{desc.full_name} has no field '{part}'"
                                 f"{_did_you_mean(part, desc.fields_by_name)}; its fields: "
                                 f"{', '.join(desc.fields_by_name)}")
        if f.is_repeated:
            return parts, None, f"'{path}' goes through the repeated field '{part}'"
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                sub = ", ".join(f"{path}.{n}" for n in f.message_type.fields_by_name)
                return parts, None, f"'{path}' is a {f.message_type.full_name} message, not a number; name its fields: {sub}"
            desc = f.message_type
        elif not last:
            return parts, None, f"'{'.'.join(parts[:i + 1])}' is a number and has no field '{parts[i + 1]}'"
        elif f.cpp_type not in _NUMERIC:
            kind = {FieldDescriptor.CPPTYPE_STRING: "string or bytes",
                    FieldDescriptor.CPPTYPE_ENUM: "enum"}.get(f.cpp_type, "non-numeric")
            return parts, None, f"'{path}' is a {kind} field, not a number"
    return parts, f.cpp_type, ""


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a CSV file; MoonpoolError if unreadable or empty."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            table = [row for row in csv.reader(f) if row and any(c.strip() for c in row)]
    except OSError as exc:
        raise MoonpoolError(f"cannot read the csv file {path}: {exc.strerror}",
                            fix="set csv to an existing file, relative to the rig file's folder") from exc
    if len(table) < 2:
        raise MoonpoolError(f"the csv file {path} has no header row and data rows",
                            fix="write a header row (e.g. t_s,x) then one row per time")
    return [c.strip() for c in table[0]], table[1:]


def _csv_columns(path: Path, time_column: str) -> tuple[list[int], dict[str, list[float]], list[str]]:
    """(times ns, column -> values, problems) of a CSV file."""
    header, rows = read_csv(path)
    problems: list[str] = []
    if time_column not in header:
        return [], {}, [f"csv {path}: no time column '{time_column}'{_did_you_mean(time_column, header)}; "
                        f"its columns: {', '.join(header)} (set time_column)"]
    ti = header.index(time_column)
    times: list[int] = []
    cols: dict[str, list[float]] = {h: [] for h in header if h != time_column}
    for n, row in enumerate(rows, start=2):
        if len(row) != len(header):
            problems.append(f"csv {path} line {n}: {len(row)} values for {len(header)} columns")
            continue
        try:
            t = time_ns(_decimal_s(row[ti]))
            values = {h: float(cell) for h, cell in zip(header, row) if h != time_column}
        except (ValueError, InvalidOperation):
            problems.append(f"csv {path} line {n}: not all values are numbers: {','.join(row)}")
            continue
        times.append(t)
        for h, v in values.items():
            cols[h].append(v)
    if not problems and any(b <= a for a, b in zip(times, times[1:])):
        problems.append(f"csv {path}: the times in '{time_column}' must increase strictly")
    return times, cols, problems


def _decimal_s(text: str) -> str:
    """A CSV time cell as a duration string in seconds (read exactly as a decimal)."""
    Decimal(text.strip())  # raises InvalidOperation if not a number
    return f"{text.strip()}s"


@dataclass(frozen=True, kw_only=True)
class SignalParameters:
    """The ``sources.signal`` parameters (the rig's ``[components.X.parameters]``)."""

    type: str = param(doc="message type of the output, e.g. moonpool.v1.Wrench")
    """Fully qualified protobuf message type of the output port."""
    fields: dict[str, Any] = param(
        {}, 'FIELD PATH = {kind = "step"|"ramp"|"sine"|"chirp"|"csv"|"recording"|"constant", ...}')
    """Field path -> signal table (kind and its keys, see the module docstring)."""
    port: str = param("out", "name of the output port")
    """Name of the output port (connections say ``NAME.PORT``)."""
    frame_id: str = param("", "frame_id of the output header (if the message has a header)")
    """``header.frame_id`` of every output message."""
    csv: Path | None = param(None, "CSV file for the csv signals (header row; relative to the rig)")
    """CSV file the ``csv`` signals read their columns from."""
    time_column: str = param("t_s", "the csv file's time column, in seconds")
    """Name of the csv time column (seconds, strictly increasing)."""
    recording: Path | None = param(None, "moonpool recording (.mcap) for the recording signals")
    """MCAP recording the ``recording`` signals play back."""

    def __post_init__(self) -> None:
        problems = validate(self)
        if problems:
            raise ParameterError(
                f"{len(problems)} problem(s) in the signal source's parameters:\n  - "
                + "\n  - ".join(problems), fix="e.g. " + EXAMPLE)


def validate(p: SignalParameters) -> list[str]:
    """Every problem of the parameters (empty list if none), without reading recordings."""
    problems: list[str] = []
    try:
        cls = wire.message_class(str(p.type))
    except MoonpoolError:
        return [f"type: unknown message type '{p.type}' (use a full name such as moonpool.v1.Wrench)"]
    if not isinstance(p.fields, Mapping) or not p.fields:
        return ["fields: give at least one FIELD PATH = { kind = ... } entry"]
    csv_cols: dict[str, list[float]] | None = None
    for path, spec in p.fields.items():
        where = f"fields.'{path}'"
        _, cpp, problem = field_path(cls, path)
        if problem:
            problems.append(f"{where}: {problem}")
        if not isinstance(spec, Mapping):
            problems.append(f"{where}: must be a table {{ kind = ..., ... }}, got {spec!r}")
            continue
        kind = spec.get("kind")
        if kind not in KINDS:
            problems.append(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}"
                            f"{_did_you_mean(str(kind), KINDS)}")
            continue
        required, optional = KINDS[kind]
        for key in spec:
            if key != "kind" and key not in required and key not in optional:
                problems.append(f"{where}: unknown key '{key}' for kind {kind}"
                                f"{_did_you_mean(key, (*required, *optional))}; keys: "
                                f"{', '.join((*required, *optional))}")
        for key in required:
            if key not in spec:
                problems.append(f"{where}: kind {kind} needs '{key}'")
        for key, value in spec.items():
            if key in TIME_KEYS:
                try:
                    time_ns(value)
                except ValueError as exc:
                    problems.append(f"{where}.{key}: {exc}")
            elif key in ("kind", "method", "interpolation", "column", "topic", "field"):
                if not isinstance(value, str):
                    problems.append(f"{where}.{key}: must be a string, got {value!r}")
            elif not _is_number(value):
                problems.append(f"{where}.{key}: must be a finite number, got {value!r}")
        if kind == "ramp" and all(k in spec for k in ("start", "end")):
            try:
                if time_ns(spec["end"]) <= time_ns(spec["start"]):
                    problems.append(f"{where}: end must be after start")
            except ValueError:
                pass
        if kind == "chirp":
            method = spec.get("method", "linear")
            if method not in ("linear", "logarithmic"):
                problems.append(f"{where}.method: {method!r} is not linear or logarithmic")
            f0, f1 = spec.get("f0_hz", 1.0), spec.get("f1_hz", 1.0)
            if method == "logarithmic" and _is_number(f0) and _is_number(f1) and (
                    f0 <= 0 or f1 <= 0 or f0 == f1):
                problems.append(f"{where}: a logarithmic chirp needs f0_hz > 0, f1_hz > 0 and f0_hz != f1_hz")
            try:
                if time_ns(spec.get("duration", 1)) == 0:
                    problems.append(f"{where}.duration: must be > 0")
            except ValueError:
                pass
        if kind == "csv":
            if spec.get("interpolation", "hold") not in ("hold", "linear"):
                problems.append(f"{where}.interpolation: {spec['interpolation']!r} is not hold or linear")
            if p.csv is None:
                problems.append(f"{where}: kind csv needs the source's csv parameter (a file)")
            else:
                if csv_cols is None:
                    try:
                        _, csv_cols, csv_problems = _csv_columns(Path(p.csv), p.time_column)
                    except MoonpoolError as exc:
                        csv_cols, csv_problems = {}, [str(exc)]
                    problems += csv_problems
                col = spec.get("column")
                if csv_cols and col not in csv_cols:
                    problems.append(f"{where}.column: no column {col!r} in {p.csv}"
                                    f"{_did_you_mean(str(col), csv_cols)}; its columns: {', '.join(csv_cols)}")
        if kind == "recording":
            if p.recording is None:
                problems.append(f"{where}: kind recording needs the source's recording parameter (a .mcap)")
            elif not Path(p.recording).is_file():
                problems.append(f"recording: no file {p.recording} (give a run's recording.mcap)")
        if cpp == FieldDescriptor.CPPTYPE_BOOL and kind in ("sine", "chirp"):
            problems.append(f"{where}: a boolean field takes constant, step, csv or recording signals")
    return problems


# ------------------------------------------------------------------ signals


def _held(times: list[int], values: list[float], linear: bool) -> Callable[[int], float]:
    """Piecewise signal through (times ns, values): hold or linear, clamped at the ends."""
    def f(t: int) -> float:
        i = bisect_right(times, t)
        if i == 0:
            return values[0]
        if i == len(times) or not linear:
            return values[i - 1]
        t0, t1 = times[i - 1], times[i]
        return values[i - 1] + (values[i] - values[i - 1]) * ((t - t0) / (t1 - t0))
    return f


def make_signal(spec: Mapping[str, Any], p: SignalParameters,
                csv_cols: Callable[[], tuple[list[int], dict[str, list[float]]]],
                recording: Callable[[str, str], tuple[list[int], list[float]]]) -> Callable[[int], float]:
    """The function t_ns -> value of one validated signal table."""
    kind = spec["kind"]
    required, optional = KINDS[kind]
    s = {**optional, **spec}
    ns = {k: time_ns(s[k]) for k in TIME_KEYS if k in s}
    if kind == "constant":
        v = float(s["value"])
        return lambda t: v
    if kind == "step":
        at, a, b = ns["at"], float(s["initial"]), float(s["final"])
        return lambda t: b if t >= at else a
    if kind == "ramp":
        t0, t1, a, b = ns["start"], ns["end"], float(s["initial"]), float(s["final"])
        return _held([t0, t1], [a, b], linear=True)
    if kind == "sine":
        t0, amp, w = ns["start"], float(s["amplitude"]), 2 * math.pi * float(s["frequency_hz"])
        off, ph = float(s["offset"]), float(s["phase_rad"])
        return lambda t: off + amp * math.sin(w * ((t - t0) * 1e-9) + ph) if t >= t0 else off
    if kind == "chirp":
        t0, dur = ns["start"], ns["duration"]
        amp, off, ph = float(s["amplitude"]), float(s["offset"]), float(s["phase_rad"])
        f0, f1, T = float(s["f0_hz"]), float(s["f1_hz"]), dur * 1e-9
        if s["method"] == "linear":
            def phase(tau: float) -> float:
                return 2 * math.pi * (f0 * tau + (f1 - f0) * tau * tau / (2 * T))
        else:
            k = f1 / f0
            def phase(tau: float) -> float:
                return 2 * math.pi * f0 * T * (k ** (tau / T) - 1) / math.log(k)
        return lambda t: off + amp * math.sin(phase((t - t0) * 1e-9) + ph) if 0 <= t - t0 < dur else off
    scale, off = float(s["scale"]), float(s["offset"])
    if kind == "csv":
        times, cols = csv_cols()
        g = _held(times, cols[s["column"]], linear=s["interpolation"] == "linear")
    else:
        times, values = recording(s["topic"], s["field"])
        g = _held(times, values, linear=False)
    return lambda t: off + scale * g(t)


def recorded_field(path: Path, topic: str, field: str) -> tuple[list[int], list[float]]:
    """(log times ns, values) of a numeric field of the messages on ``topic`` of a
    moonpool recording; MoonpoolError naming the topic or field if absent."""
    from mcap.reader import make_reader

    times: list[int] = []
    values: list[float] = []
    topics: set[str] = set()
    parts: tuple[str, ...] | None = None
    try:
        with open(path, "rb") as f:
            reader = make_reader(f)
            for schema, channel, message in reader.iter_messages():
                topics.add(channel.topic)
                if channel.topic != topic or schema is None:
                    continue
                cls = wire.message_class(schema.name)
                if parts is None:
                    parts, _, problem = field_path(cls, field)
                    if problem:
                        raise MoonpoolError(f"recording {path}, topic {topic}: {problem}",
                                            fix="name a numeric field of the topic's messages")
                msg = cls.FromString(message.data)
                for part in parts:
                    msg = getattr(msg, part)
                times.append(message.log_time)
                values.append(float(msg))
    except OSError as exc:
        raise MoonpoolError(f"cannot read the recording {path}: {exc}",
                            fix="give a run's recording.mcap") from exc
    if not times:
        raise MoonpoolError(f"recording {path} has no messages on topic '{topic}'"
                            f"{_did_you_mean(topic, topics)}",
                            fix=f"use one of its topics: {', '.join(sorted(topics))}")
    return times, values


class SignalSource(Component):
    """Test signals (step, ramp, sine, chirp, CSV / recording playback) on numeric fields."""

    Parameters = SignalParameters

    @classmethod
    def ports_for(cls, params: SignalParameters) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
        msg_cls = wire.message_class(params.type)
        kinds = sorted({str(s.get("kind")) for s in params.fields.values()})
        return (), (Port(params.port, msg_cls, f"signals ({', '.join(kinds)}) on "
                         f"{', '.join(params.fields)}"),)

    def configure(self, params: SignalParameters) -> None:
        self.params = params
        self.outputs = self.ports_for(params)[1]
        self._cls = wire.message_class(params.type)
        self._stamp = ("header" in self._cls.DESCRIPTOR.fields_by_name and
                       self._cls.DESCRIPTOR.fields_by_name["header"].message_type is not None and
                       self._cls.DESCRIPTOR.fields_by_name["header"].message_type.full_name
                       == "moonpool.v1.Header")
        cache: dict[str, Any] = {}

        def csv_cols() -> tuple[list[int], dict[str, list[float]]]:
            if "csv" not in cache:
                times, cols, _ = _csv_columns(Path(params.csv), params.time_column)
                cache["csv"] = (times, cols)
            return cache["csv"]

        def recording(topic: str, field: str) -> tuple[list[int], list[float]]:
            try:
                return recorded_field(Path(params.recording), topic, field)
            except MoonpoolError as exc:
                raise ParameterError(exc.message, fix=exc.fix) from exc

        self._fields = []
        for path, spec in params.fields.items():
            parts, cpp, _ = field_path(self._cls, path)
            self._fields.append((path, parts[:-1], parts[-1], cpp,
                                 make_signal(spec, params, csv_cols, recording)))

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        msg = self._cls()
        if self._stamp:
            msg.header.CopyFrom(self.header(t_ns, self.params.frame_id))
        for path, prefix, leaf, cpp, f in self._fields:
            target = msg
            for part in prefix:
                target = getattr(target, part)
            x = f(t_ns)
            if cpp == FieldDescriptor.CPPTYPE_BOOL:
                setattr(target, leaf, x >= 0.5)
            elif cpp in _INT_RANGE:
                lo, hi = _INT_RANGE[cpp]
                v = round(x) if math.isfinite(x) else None
                if v is None or not lo <= v <= hi:
                    raise StepFailed(f"signal for '{path}' = {x} at t = {t_ns} ns is outside "
                                     f"the field's range [{lo}, {hi}]",
                                     fix="scale or offset the signal into the field's range")
                setattr(target, leaf, v)
            else:
                setattr(target, leaf, x)
        return {self.params.port: msg}
