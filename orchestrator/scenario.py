"""The scenario manipulator: a rig's ``[[scenario]]`` applied during the run.

Call order (by the execution, orchestrator/execution.py)::

    m = Manipulator(rig, descriptions, observer)   after Describe: checks each target
                                                   against what the component says
                                                   (tunable_parameters, input ports)
    m.tick(t, due, write)                          at each tick, before anything is
                                                   stepped: for each due component (in
                                                   rank order) the values its targets
                                                   hold at t; changed parameters go to
                                                   its adapter (sent with the step),
                                                   changes are published on /scenario/set
    inputs = m.override(slot_index, inputs)        when the component's inputs are
                                                   gathered: overridden fields replaced

Semantics (docs/rigs.md#scenario): a target holds the value of the latest entry whose
``at`` <= t (a ramp: ``from + (value − from)·(t − at)/(end − at)`` until ``end``, then
``value``); nothing before the first. A parameter is sent when its value changes; an
input field is replaced in every message delivered from ``at`` on (libcosim's
override). Each change is one ``moonpool.v1.Signals`` entry named after the target,
in a message at log time t, so the recording shows it and the digest covers it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import Problem, RigValidationError
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2

from .adapters.base import Sample
from .rig import Rig, ScenarioEvent
from .rigfile.scenario_section import TOPIC, input_problem

_INT = (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
        FieldDescriptor.CPPTYPE_ENUM)


class _Target:
    """One thing a scenario changes, with its entries in time order."""

    def __init__(self, events: list[ScenarioEvent]) -> None:
        self.events = sorted(events, key=lambda e: e.at_ns)  # stable: file order at equal at
        self.last: Any = None  # the value last applied

    def value(self, t: int) -> Any:
        current = None
        for ev in self.events:
            if ev.at_ns > t:
                break
            current = ev
        if current is None:
            return None
        if current.end_ns is None or t >= current.end_ns:
            return current.value
        frac = (t - current.at_ns) / (current.end_ns - current.at_ns)
        return current.start + (float(current.value) - current.start) * frac


class Manipulator:
    """Applies a rig's scenario (see the module docstring)."""

    def __init__(self, rig: Rig, descriptions: Mapping[str, lc.Description],
                 add_topic: Callable[[str, str], int], index: Mapping[str, int]) -> None:
        problems = []
        file = str(rig.path)
        grouped: dict[tuple[str, str, str, str], list[ScenarioEvent]] = {}
        for i, ev in enumerate(rig.scenarios):
            d = descriptions[ev.component]
            key = f"scenario[{i}].set"
            if ev.parameter:
                if ev.parameter not in d.tunable_parameters:
                    problems.append(Problem(file, key, (
                        f"parameter '{ev.parameter}' of '{ev.component}' ({d.kind or '?'}) is "
                        "not tunable; tunable: "
                        f"{', '.join(d.tunable_parameters) or 'none'}")))
                    continue
            else:
                port = next((p for p in d.inputs if p.name == ev.port), None)
                if port is None:
                    problems.append(Problem(file, key, (
                        f"'{ev.component}' has no input port '{ev.port}' (inputs: "
                        f"{', '.join(p.name for p in d.inputs) or 'none'})")))
                    continue
                problem = input_problem(_PortView(port), ev.field, ev.end_ns is not None)
                if problem:
                    problems.append(Problem(file, key, f"{ev.component}.{ev.port}: {problem}"))
                    continue
            grouped.setdefault((ev.component, ev.parameter, ev.port, ev.field), []).append(ev)
        if problems:
            raise RigValidationError(problems)
        # per slot index: [(target, (parameter, port, field parts))] in rig order
        self._targets: dict[int, list[tuple[str, _Target, str, str, tuple[str, ...]]]] = {}
        self._types: dict[tuple[int, str], str] = {}
        for (component, parameter, port, field), events in grouped.items():
            slot = index[component]
            self._targets.setdefault(slot, []).append(
                (events[0].target, _Target(events), parameter, port, tuple(field.split(".")) if field else ()))
            if port:
                ptype = next(p.type for p in descriptions[component].inputs if p.name == port)
                self._types[(slot, port)] = ptype
        # slot index -> port -> [(field parts, value)]: the overrides in force
        self._overrides: dict[int, dict[str, list[tuple[tuple[str, ...], Any]]]] = {}
        self.channel = add_topic(TOPIC, signals_pb2.Signals.DESCRIPTOR.full_name)
        self._seq = 0
        self.changes = 0

    def tick(self, t: int, due: Sequence[Any], write: Callable[..., None]) -> None:
        """The changes at ``t`` for the due slots (``.index``, ``.adapter``), in order."""
        changed: list[tuple[str, float]] = []
        for s in due:
            targets = self._targets.get(s.index)
            if not targets:
                continue
            params = []
            for name, target, parameter, port, parts in targets:
                v = target.value(t)
                if v is None or v == target.last:
                    continue
                target.last = v
                changed.append((name, float(v)))
                if parameter:
                    params.append((parameter, v))
                else:
                    ports = self._overrides.setdefault(s.index, {})
                    fields = [f for f in ports.get(port, []) if f[0] != parts]
                    ports[port] = [*fields, (parts, v)]
            if params:
                s.adapter.set_parameters(tuple(params))
        if changed:
            msg = signals_pb2.Signals()
            msg.header.sim_time_ns = t
            msg.header.source = "scenario"
            msg.header.seq = self._seq
            self._seq += 1
            for name, v in changed:
                msg.signals.add(name=name, value=v)
            self.changes += len(changed)
            write(self.channel, t, msg.SerializeToString(deterministic=True), None)

    def override(self, index: int, inputs: dict[str, Any]) -> dict[str, Any]:
        """``inputs`` (port -> Sample) with the overridden fields of slot ``index`` set."""
        ports = self._overrides.get(index)
        if not ports:
            return inputs
        for port, fields in ports.items():
            held = inputs.get(port)
            type_name = self._types[(index, port)]
            msg = wire.decode(type_name, held.payload) if held is not None else \
                wire.message_class(type_name)()
            for parts, v in fields:
                _set(msg, parts, v)
            inputs[port] = Sample(held.port if held is not None else port, type_name,
                                  msg.SerializeToString(deterministic=True),
                                  held.attachment if held is not None else None)
        return inputs


class _PortView:
    """A PortSpec seen as a Port (``queued``, ``type``, ``type_name``) for the checks."""

    def __init__(self, spec: lc.PortSpec) -> None:
        self.queued = spec.queued
        self.type = wire.message_class(spec.type)
        self.type_name = spec.type


def _set(msg: Any, parts: tuple[str, ...], v: Any) -> None:
    for part in parts[:-1]:
        msg = getattr(msg, part)
    f = msg.DESCRIPTOR.fields_by_name[parts[-1]]
    if f.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        setattr(msg, parts[-1], bool(v) if isinstance(v, bool) else float(v) >= 0.5)
    elif f.cpp_type in _INT:
        setattr(msg, parts[-1], int(round(float(v))))
    else:
        setattr(msg, parts[-1], float(v))
