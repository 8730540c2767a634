"""The checks that need the component classes: entries, parameters, ports, fields.

:func:`deep_check` loads each component's class (``entry``; a replay's outputs come
from its recording), builds its Parameters from the rig's values (so the class's own
checks run), computes its ports for them (``Component.ports_for``: an FMU's come
from its model description), then checks every connection (the ports exist in the
right direction and carry the same message type), plot series and
``run.record_exclude`` against them. A remote component whose entry cannot be
loaded here is skipped: its code may exist only where it is served. A
``run = "command"`` component is started (:func:`_described`), asked Describe and
stopped: its parameters, ports and plotted fields are checked against the answer.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from moonpool.components.sdk.component import Component, Port
from moonpool.components.sdk.errors import (
    EntryError,
    MoonpoolError,
    ParameterError,
    PortError,
    Problem,
)
from moonpool.components.sdk.scene import read_scene_file
from moonpool.components.sdk.loading import load_entry
from moonpool.components.sdk.wire import coerce_parameter
from moonpool.v1 import lifecycle_pb2 as lc

from ..rig import ComponentConfig, ConnectionConfig, PlotSpec, Rig
from .connections_section import inputs_connected_twice
from .fields import field_problem
from .report import Report, did_you_mean
from .scenario_section import check_targets


def deep_check(
    rig: Rig,
    report: Report,
    connection_keys: Sequence[str] | None = None,
    plot_keys: Sequence[str] | None = None,
    scenario_keys: Sequence[str] | None = None,
) -> list[Problem]:
    """Problems found with the component classes loaded; appended to ``report``."""
    if scenario_keys is None:
        scenario_keys = [f"scenario[{i}]" for i in range(len(rig.scenarios))]
    if connection_keys is None:
        connection_keys = [f"connections[{i}]" for i in range(len(rig.connections))]
    if plot_keys is None:
        plot_keys = [f"plots[{i}]" for i in range(len(rig.plots))]
    start = len(report.problems)
    classes = _load_classes(rig, report)
    tunable: dict[str, tuple[str, ...]] = {}
    scenario_targets = {ev.component for ev in rig.scenarios if ev.parameter}
    for comp in rig.components:
        if comp.placement == "command" and comp.command:
            loaded = _described(rig, comp, report)
            if loaded is not None:
                classes[comp.name] = loaded
            continue
        if comp.name in classes and comp.placement != "replay":
            params = _check_parameters(report, comp, classes[comp.name].cls)
            if comp.name in scenario_targets and params is not None:
                tunable[comp.name] = _tunable(report, comp, classes[comp.name].cls, params)
            if params is not None and comp.placement != "remote":
                params = _component_checks(report, comp, classes[comp.name].cls, params)
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
    inputs_connected_twice(report, rig.connections, connection_keys)
    for plot, key in zip(rig.plots, plot_keys):
        _check_plot(report, plot, key, classes)
    check_targets(report, rig, scenario_keys, classes, tunable)
    for i, ref in enumerate(rig.run.record_exclude):
        component, _, port = ref.partition(".")
        if component in classes:
            _find_port(report, f"run.record_exclude[{i}]", component, port, classes[component],
                       "output", "name an output")
        for j, plot in enumerate(rig.plots):
            for k, series in enumerate(plot.series):
                from .. import plotexpr

                if any(leaf.partition(":")[0] == ref
                       for leaf in plotexpr.leaves(plotexpr.parse(series))):
                    report.add(f"plots[{j}].series[{k}]", f"{ref} is in run.record_exclude, so the "
                               "recording has nothing to plot; remove one of them")
    if rig.run.view_scene is not None:
        try:  # read by the reader registered for its format (sdk/scene.py)
            read_scene_file(rig.run.view_scene)
        except MoonpoolError as exc:
            report.add("run.view_scene", str(exc))
        except Exception as exc:  # noqa: BLE001 - a reader's own failure, named
            report.add("run.view_scene", f"the scene file cannot be read: "
                       f"{type(exc).__name__}: {exc}; correct it (docs/world.md)")
    return report.problems[start:]


@dataclass(frozen=True)
class _Loaded:
    """A component's class and the entry it was loaded from (for messages)."""

    entry: str
    cls: type[Component]
    inputs: tuple[Port, ...] = ()
    outputs: tuple[Port, ...] = ()


def _load_classes(rig: Rig, report: Report) -> dict[str, _Loaded]:
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
        if not comp.entry or comp.placement == "command":  # a command is asked (_described)
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


def _replay_ports(rig: Rig, comp: ComponentConfig, report: Report) -> _Loaded | None:
    """A replay's outputs, from its recording, and whether the recording fits its
    schedule. None when the recording cannot be read (reported by load_rig)."""
    from ..adapters.replay import ReplayError, first_misfit, inspect_recording
    from ..recording import recorded_class

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


# -- a run = "command" component: started and asked


_PYTHON_TYPES: dict[int, Any] = {
    lc.PARAMETER_TYPE_DOUBLE: float, lc.PARAMETER_TYPE_INT: int,
    lc.PARAMETER_TYPE_BOOL: bool, lc.PARAMETER_TYPE_STRING: str,
    lc.PARAMETER_TYPE_DOUBLE_ARRAY: list[float], lc.PARAMETER_TYPE_STRING_ARRAY: list[str],
}


def _described(rig: Rig, comp: ComponentConfig, report: Report) -> _Loaded | None:
    """Start the command, ask Describe, stop it; check the rig's parameters against the
    Description. Its ports (the default ones: Describe before Configure) for the
    connection and plot checks, or None (with a problem) when it cannot be asked."""
    import tempfile
    from pathlib import Path

    from moonpool.components.sdk.errors import MoonpoolError

    from ..adapters.command import CommandAdapter, command_values
    from ..recording import recorded_class

    key = f"components.{comp.name}"
    with tempfile.TemporaryDirectory(prefix="mp-check-") as tmp:
        log_path = Path(tmp) / "command.log"
        adapter = None
        try:
            adapter = CommandAdapter(
                comp.name, comp.command, f"ipc://{tmp}/c.sock", cwd=comp.cwd or comp.base_dir,
                env=dict(comp.env), values=command_values(comp, rig.run.seed),
                log_path=log_path, step_timeout_ns=comp.step_timeout_ns,
                setup_timeout_ns=comp.setup_timeout_ns,
                heartbeat_interval_ns=rig.run.heartbeat_interval_ns,
                peer_timeout_ns=rig.run.peer_timeout_ns,
            )
            adapter.wait_for_exit = False
            desc = adapter.describe()
        except MoonpoolError as exc:
            report.add(f"{key}.command", f"started to be asked Describe, it did not answer: "
                       f"{exc.message}" + (f"; {exc.fix}" if exc.fix else ""))
            return None
        finally:
            if adapter is not None:
                adapter.close()
    specs = {p.name: p for p in desc.parameters}
    pkey = f"{key}.parameters"
    label = f"command {comp.command[0]} ({desc.kind or 'no kind'})"
    known = ", ".join(specs) or "none"
    for name, value in comp.parameters.items():
        spec = specs.get(name)
        if spec is None:
            report.add(f"{pkey}.{name}", f"unknown parameter '{name}' of {label}"
                       f"{did_you_mean(name, specs)}; remove it or correct the spelling "
                       f"(known parameters: {known})")
            continue
        hint = _PYTHON_TYPES.get(spec.type, Any)
        try:
            coerce_parameter(name, hint, value, comp.base_dir)
        except ParameterError as exc:
            report.add(f"{pkey}.{name}", f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
    for name, spec in specs.items():
        if spec.required and name not in comp.parameters:
            about = ", ".join(x for x in (spec.description, spec.unit) if x)
            report.add(pkey, f"missing required parameter '{name}'"
                       + (f" ({about})" if about else "")
                       + f"; add {name} = ... under [{pkey}]")
    ports: list[tuple[Port, ...]] = []
    for specs_ in (desc.inputs, desc.outputs):
        found = []
        for p in specs_:
            try:
                cls = recorded_class(p.type, bytes(desc.extra_schemas))
            except PortError as exc:
                report.add(f"{key}.command", f"{label} describes port '{p.name}' of type "
                           f"{p.type!r}, which neither moonpool nor its extra_schemas define: "
                           f"{exc.message}")
                continue
            found.append(Port(p.name, cls, p.description, p.queued))
        ports.append(tuple(found))
    return _Loaded(label, Component, ports[0], ports[1])


# -- parameters


def _tunable(report: Report, comp: ComponentConfig, cls: type[Component],
             params: Any) -> tuple[str, ...]:
    """The component's tunable parameters (``Component.tunable_for``)."""
    try:
        return tuple(cls.tunable_for(params))
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        if comp.placement != "remote":
            report.add(f"components.{comp.name}", f"{comp.entry}.tunable_for failed: "
                       f"{type(exc).__name__}: {exc}")
        return ()


def _check_parameters(report: Report, comp: ComponentConfig, cls: type[Component]) -> Any:
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
                f"unknown parameter '{name}' of {comp.entry}{did_you_mean(name, fields)}; "
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


def _component_checks(report: Report, comp: ComponentConfig, cls: type[Component],
                      params: Any) -> Any:
    """The class's own ``check_parameters`` (ranges, choices, files, device paths),
    as its host runs it before configure; the Parameters, or None with a problem.
    Not for a remote component: its files and devices are where it is served."""
    key = f"components.{comp.name}.parameters"
    try:
        cls.check_parameters(params)
    except ParameterError as exc:
        report.add(key, f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
        return None
    except Exception as exc:  # noqa: BLE001 - a component's own bug, reported not raised
        report.add(key, f"{comp.entry}.check_parameters failed: {type(exc).__name__}: {exc}")
        return None
    return params


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


def _construct(report: Report, key: str, params_cls: type, values: Mapping[str, Any]) -> Any:
    """Build the Parameters instance, so its own checks (``__post_init__``) run too."""
    try:
        return params_cls(**values)
    except (TypeError, ValueError, ParameterError) as exc:
        message = exc.message if isinstance(exc, ParameterError) else str(exc)
        report.add(key, f"{message}; check the parameter values")
        return None


def _ports(
    report: Report, comp: ComponentConfig, loaded: _Loaded, params: Any
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
    report: Report,
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
    report: Report,
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
        hint = did_you_mean(port, names)
    report.add(
        key,
        f"component '{component}' ({loaded.entry}) has no {direction} port '{port}'{hint}; "
        f"its {direction}s: {', '.join(names) or 'none'}",
    )
    return None


def _check_plot(
    report: Report, plot: PlotSpec, key: str, classes: Mapping[str, _Loaded]
) -> None:
    """Each signal of each series names an output port and a numeric field of its
    message; one unit per axis (units read from the fields' names)."""
    from .. import plotexpr

    units: dict[int, dict[str, str]] = {0: {}, 1: {}, 2: {}}  # axis -> unit -> a signal
    for j, expression in enumerate(plot.series):
        axis = j % 2 if plot.kind == "xy" else (j % 3 if plot.kind == "xyz" else 1)
        for series in plotexpr.leaves(plotexpr.parse(expression)):
            unit = _unit_of(series.partition(":")[2])
            if unit:
                units[axis].setdefault(unit, series)
            _check_signal(report, key, j, series, classes, plot.kind == "waterfall")
    for axis, found in units.items():
        if len(found) > 1:
            which = "xyz"[axis]
            listed = ", ".join(f"{u} ({s})" for u, s in found.items())
            report.add(f"{key}.series", f"one {which} axis would carry {listed}: one unit per "
                       "axis; split them into separate [[plots]]")


_UNITS = ("m", "mps", "mps2", "rad", "radps", "radps2", "deg", "n", "nm", "pa", "s", "hz",
          "kgpm3", "degc")


def _unit_of(path: str) -> str:
    """The unit a field path names (``position_ned_m.z`` -> m, ``yaw_rad`` -> rad,
    ``signals[traction_n].value`` -> n), or ""."""
    import re

    words = re.split(r"[.\[\]]+", path)
    for word in reversed(words):
        suffix = word.rpartition("_")[2] if "_" in word else ""
        if suffix in _UNITS:
            return suffix
    return ""


def _check_signal(report: Report, key: str, j: int, series: str,
                  classes: Mapping[str, _Loaded], waterfall: bool = False) -> None:
    """One signal ``COMPONENT.PORT:FIELD``: an output port and a numeric field."""
    ref, _, path = series.partition(":")
    component, _, port_name = ref.partition(".")
    if component not in classes:
        return
    port = _find_port(
        report, f"{key}.series[{j}]", component, port_name, classes[component], "output",
        "plot the output it is connected from",
    )
    if port is None:
        return
    problem = field_problem(port.type.DESCRIPTOR, path, waterfall=waterfall)
    if problem:
        report.add(f"{key}.series[{j}]", f"{ref} carries {port.type_name}: {problem}")
