"""The ``[[scenario]]`` array: timed changes of tunable parameters and inputs.

Each entry: ``at`` (a duration), ``set`` (``COMPONENT.PARAMETER`` or
``COMPONENT.PORT:FIELD``), ``value``; a ramp adds ``end`` and ``from``. At the file
level (:func:`scenarios`) the syntax, the times and the component are checked; with
the classes loaded (:func:`check_targets`, called by :mod:`.deep`) that the parameter
is tunable, or that the port is an input and the field a number of its message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from ..rig import Rig, ScenarioEvent
from . import values
from .connections_section import array_of_tables, unknown_component
from .report import Report, did_you_mean, kind_of
from .vocabulary import SCENARIO

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PARAMETER_RE = re.compile(rf"^(?P<component>[^.:]+)\.(?P<parameter>{_NAME})$")
_INPUT_RE = re.compile(rf"^(?P<component>[^.:]+)\.(?P<port>[^.:]+):(?P<field>{_NAME}(?:\.{_NAME})*)$")
EXAMPLE = 'at = "5s", set = "vehicle.D2_u", value = 120.0'
TOPIC = "/scenario/set"
"""Where the run records each change applied (moonpool.v1.Signals)."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def scenarios(report: Report, value: Any, names: Sequence[str]) -> tuple[list[ScenarioEvent], list[str]]:
    """Valid [[scenario]] entries and the file key (``scenario[i]``) of each."""
    out: list[ScenarioEvent] = []
    keys: list[str] = []
    for i, spec in enumerate(array_of_tables(report, "scenario", value, EXAMPLE)):
        key = f"scenario[{i}]"
        if not isinstance(spec, dict):
            report.add(key, f"expected a table ({EXAMPLE}), got {kind_of(spec)}")
            continue
        values.check_keys(report, key, spec, SCENARIO.names, f"{SCENARIO.title} #{i}")
        ok = True
        for k in ("at", "set", "value"):
            if k not in spec:
                report.add(f"{key}.{k}", f"missing: a scenario entry needs at, set and value ({EXAMPLE})")
                ok = False
        at = values.duration(report, f"{key}.at", spec["at"], positive=False) if "at" in spec else None
        target = _target(report, f"{key}.set", spec.get("set"), names) if "set" in spec else None
        v = spec.get("value")
        if "value" in spec and not (_number(v) or isinstance(v, bool)):
            report.add(f"{key}.value", f"expected a number or true/false, got {kind_of(v)} {v!r}")
            ok = False
        end = start = None
        if "end" in spec or "from" in spec:
            if "end" not in spec or "from" not in spec:
                report.add(key, "a ramp needs both end and from (from = value at 'at', "
                           "value = value at 'end'); remove both for a step change")
                ok = False
            else:
                end = values.duration(report, f"{key}.end", spec["end"], positive=False)
                start = spec["from"]
                if not _number(start):
                    report.add(f"{key}.from", f"expected a number, got {kind_of(start)} {start!r}")
                    ok = False
                if "value" in spec and not _number(v):
                    report.add(f"{key}.value", "a ramp's value must be a number")
                    ok = False
                if end is None:
                    ok = False
                elif at is not None and end <= at:
                    report.add(f"{key}.end", f"must be after at ({spec['at']!r}); a ramp takes time")
                    ok = False
        if ok and at is not None and target is not None:
            component, parameter, port, field = target
            out.append(ScenarioEvent(at, component, parameter, port, field, v, end,
                                     float(start) if start is not None else None))
            keys.append(key)
    return out, keys


def _target(report: Report, key: str, value: Any, names: Sequence[str]) -> tuple[str, str, str, str] | None:
    """(component, parameter, port, field) of a ``set`` value."""
    forms = ('COMPONENT.PARAMETER (a tunable parameter, e.g. "vehicle.D2_u") or '
             'COMPONENT.PORT:FIELD (an input field, e.g. "vehicle.wrench:force_n.x")')
    if not isinstance(value, str):
        report.add(key, f"expected {forms}, got {kind_of(value)}")
        return None
    m = _PARAMETER_RE.match(value)
    if m:
        parts = (m["component"], m["parameter"], "", "")
    else:
        m = _INPUT_RE.match(value)
        if not m:
            report.add(key, f"'{value}' is neither {forms}")
            return None
        parts = (m["component"], "", m["port"], m["field"])
    if parts[0] not in names:
        report.add(key, unknown_component(parts[0], names))
        return None
    return parts


def check_targets(report: Report, rig: Rig, keys: Sequence[str], loaded: Mapping[str, Any],
                  tunable: Mapping[str, tuple[str, ...]]) -> None:
    """With the classes loaded: each parameter is tunable, each input a numeric field
    of an ordinary input port. ``loaded``: component -> object with ``inputs`` (ports)
    and ``entry``; ``tunable``: component -> its tunable parameters."""
    if rig.scenarios and any(c.name == "scenario" for c in rig.components):
        report.add("components.scenario", f"the name 'scenario' is taken by the scenario's "
                   f"record ({TOPIC}); rename the component")
    for ev, key in zip(rig.scenarios, keys):
        comp = rig.component(ev.component)
        if comp.placement == "replay":
            report.add(f"{key}.set", f"'{ev.component}' is a replay: it takes no inputs and "
                       "no parameters; change the component it replays in its own run")
            continue
        if ev.component not in loaded:
            continue  # a remote component not loadable here: checked when the run starts
        if ev.parameter:
            names = tunable.get(ev.component)
            if names is not None and ev.parameter not in names:
                report.add(f"{key}.set", not_tunable(ev, loaded[ev.component].entry, names))
            continue
        ports = {p.name: p for p in loaded[ev.component].inputs}
        port = ports.get(ev.port)
        if port is None:
            report.add(f"{key}.set", f"component '{ev.component}' has no input port "
                       f"'{ev.port}'{did_you_mean(ev.port, ports)}; its inputs: "
                       f"{', '.join(ports) or 'none'}")
            continue
        problem = input_problem(port, ev.field, ev.end_ns is not None)
        if problem:
            report.add(f"{key}.set", f"{ev.component}.{ev.port} ({port.type_name}): {problem}")


def not_tunable(ev: ScenarioEvent, entry: str, names: Sequence[str]) -> str:
    return (f"parameter '{ev.parameter}' of '{ev.component}' ({entry}) is not tunable"
            f"{did_you_mean(ev.parameter, names)}; tunable: {', '.join(names) or 'none'} "
            "(change others in [components] before the run)")


def input_problem(port: Any, field: str, ramp: bool) -> str | None:
    """Why ``field`` of input ``port`` cannot be overridden by a scenario, or None."""
    if port.queued:
        return "a queued input; scenarios override ordinary (sample-and-hold) inputs only"
    desc = port.type.DESCRIPTOR
    parts = field.split(".")
    for i, part in enumerate(parts):
        f = desc.fields_by_name.get(part)
        if f is None:
            return (f"{desc.full_name} has no field '{part}'{did_you_mean(part, desc.fields_by_name)}; "
                    f"its fields: {', '.join(desc.fields_by_name)}")
        if f.is_repeated:
            return f"'{part}' is a repeated field; scenarios set singular numeric fields"
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                return f"'{field}' is a {f.message_type.full_name} message, not a number"
            desc = f.message_type
        elif not last:
            return f"'{part}' is a number and has no field '{parts[i + 1]}'"
        elif f.cpp_type in (FieldDescriptor.CPPTYPE_STRING, FieldDescriptor.CPPTYPE_ENUM):
            return f"'{field}' is not a number"
        elif ramp and f.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
            return f"'{field}' is a boolean; it cannot ramp"
    return None
