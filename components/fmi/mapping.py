"""The rig's mapping of message fields to FMU variables: checked, then compiled.

:func:`plan` reads the model description and checks the whole mapping of the rig's
``inputs`` / ``outputs`` / ``start_values`` / ``profile`` against it (no binary
loaded): each port becomes a :class:`~moonpool.components.sdk.component.Port`, each
``fields`` entry a :class:`Binding` of a message field path (or signal name) to a
variable.

:func:`compile_inputs` and :func:`compile_outputs` turn the plan into the per-step
work, once, at configure ("compiled I/O"): value references and value buffers are
ctypes arrays built once, the FMI functions are called directly (one call per
variable type and direction, status checked inline), and the message fields are read
and written by Python code generated for the mapping (plain attribute access, no
getattr chains or descriptor lookups per step). Inputs are set only when their values
changed.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from ..sdk import wire
from ..sdk.component import Port
from ..sdk.errors import ParameterError, PortError, StepFailed
from .instance import FmuInstance
from .model import (
    FLOAT_TYPES,
    INT_TYPES,
    Model,
    Variable,
    ctype,
    did_you_mean,
    fail,
    function_suffix,
    read_model,
)
from .parameters import FmuParameters

_NUMERIC_CPP = {
    FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT,
    FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
    FieldDescriptor.CPPTYPE_BOOL,
}
_FLOAT_CPP = (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT)
SIGNALS = "moonpool.v1.Signals"


# ----------------------------------------------------------------- static plan


@dataclass(frozen=True)
class Binding:
    """One mapped value: a message field path (or signal name) <-> an FMU variable."""

    key: str
    path: tuple[str, ...]
    var: Variable


@dataclass(frozen=True)
class PortPlan:
    port: Port
    signals: bool
    """The port carries moonpool.v1.Signals: the keys are signal names."""
    bindings: tuple[Binding, ...]


@dataclass(frozen=True)
class Plan:
    """The model and the checked mapping: what configure builds the component from."""

    model: Model
    inputs: tuple[PortPlan, ...]
    outputs: tuple[PortPlan, ...]
    start: tuple[tuple[Variable, Any], ...]
    """(variable, value): the profile's parameters, then start_values (which win)."""


log = logging.getLogger("moonpool.fmi")

QUATERNION = "moonpool.v1.Quaternion"
_warned: set[tuple[str, str, str]] = set()


def plan(p: FmuParameters) -> Plan:
    """Open the FMU's model description and check the whole mapping (no binary loaded)."""
    fmu = Path(p.fmu)
    model = read_model(fmu, p.fmi_type)
    inputs = tuple(_port_plans(fmu, p.inputs, "inputs", model.variables))
    outputs = tuple(_port_plans(fmu, p.outputs, "outputs", model.variables))
    start = _start_values(fmu, p, model)
    for pp in outputs:
        for problem in unset_required_fields(pp):
            if (str(fmu), pp.port.name, problem) not in _warned:  # once per process
                _warned.add((str(fmu), pp.port.name, problem))
                log.warning("FMU %s: outputs.%s: %s", fmu.name, pp.port.name, problem)
    return Plan(model, inputs, outputs, start)


def unset_required_fields(pp: PortPlan) -> list[str]:
    """What an output mapping leaves at a default that is not a valid value: a
    ``Quaternion`` field none or only some of whose w, x, y, z are mapped stays
    (0, 0, 0, 0) or a non-unit quaternion — not a rotation — in every message."""
    if pp.signals:
        return []
    mapped = {b.path for b in pp.bindings}
    out = []

    def walk(desc: Any, prefix: tuple[str, ...]) -> None:
        for fd in desc.fields:
            if fd.cpp_type != FieldDescriptor.CPPTYPE_MESSAGE or fd.is_repeated:
                continue
            path = (*prefix, fd.name)
            if fd.message_type.full_name == QUATERNION:
                have = [c for c in "wxyz" if (*path, c) in mapped]
                if len(have) < 4:
                    dotted = ".".join(path)
                    unset = ", ".join(f"{dotted}.{c}" for c in "wxyz" if c not in have)
                    out.append(f"{dotted} is {'only partly' if have else 'not'} mapped: "
                               f"{unset} stay 0 in every message, which is not a rotation "
                               f"(consumers reading {dotted} get garbage); map all of "
                               f"{dotted}.w/x/y/z to the FMU's quaternion, or publish a type without "
                               "one (moonpool.v1.Signals) if the model has no attitude "
                               "(docs/messages.md)")
            elif fd.message_type.full_name != "moonpool.v1.Header":
                walk(fd.message_type, path)

    walk(pp.port.type.DESCRIPTOR, ())
    return out


def _port_plans(fmu: Path, spec: Any, what: str,
                variables: Mapping[str, Variable]) -> list[PortPlan]:
    example = ('{ type = "moonpool.v1.Wrench", fields = { "force_n.x" = "tau_X" } }'
               if what == "inputs" else
               '{ type = "moonpool.v1.VehicleState", fields = { "position_ned_m.x" = "n" } }')
    if not isinstance(spec, Mapping):
        raise fail(fmu, f"parameter {what} must be a table PORT = {example}",
                   f"write {what}.PORT = {example}")
    plans = []
    for port_name, port_spec in spec.items():
        where = f"{what}.{port_name}"
        if not isinstance(port_spec, Mapping) or set(port_spec) - {"type", "fields", "description"}:
            raise fail(fmu, f"{where} must be a table with type and fields",
                       f"write {where} = {example}")
        type_name = port_spec.get("type")
        if not isinstance(type_name, str):
            raise fail(fmu, f"{where}.type is missing", f"write {where} = {example}")
        try:
            cls = wire.message_class(type_name)
        except PortError as exc:
            raise fail(fmu, f"{where}.type: {exc.message}", exc.fix) from exc
        fields = port_spec.get("fields")
        if not isinstance(fields, Mapping) or not fields:
            raise fail(fmu, f"{where}.fields must be a non-empty table FIELD = VARIABLE",
                       f"write {where} = {example}")
        signals = type_name == SIGNALS
        bindings = []
        for key, var_name in fields.items():
            path = () if signals else _field_path(fmu, f"{where}.fields", cls, key)
            var = _variable(fmu, f"{where}.fields.{key}", var_name, variables)
            if what == "inputs" and not (
                var.causality == "input"
                or (var.causality == "parameter" and var.variability == "tunable")
            ):
                raise fail(fmu, f"{where}.fields.{key}: variable '{var.name}' has causality "
                           f"'{var.causality}', so it cannot be set from an input",
                           "map inputs to variables of causality input (or tunable parameters); "
                           "map outputs under outputs")
            if var.size != 1:
                n = "a number of values set by a structural parameter" if var.size < 0 \
                    else f"{var.size} values"
                raise fail(fmu, f"{where}.fields.{key}: variable '{var.name}' is an FMI 3 array "
                           f"({n}); moonpool maps scalar variables to message fields only",
                           "map scalar variables (or wrap the FMU so that it exposes the "
                           "array's elements as scalars)")
            if var.type not in (*FLOAT_TYPES, *INT_TYPES, "Boolean"):
                raise fail(fmu, f"{where}.fields.{key}: variable '{var.name}' is {var.type}, "
                           "not a number or boolean", "map numeric variables only")
            bindings.append(Binding(str(key), path, var))
        desc = port_spec.get("description") or (
            f"FMU {'inputs' if what == 'inputs' else 'outputs'} "
            + ", ".join(b.var.name for b in bindings))
        plans.append(PortPlan(Port(str(port_name), cls, str(desc)), signals, tuple(bindings)))
    return plans


def _field_path(fmu: Path, where: str, cls: Any, key: Any) -> tuple[str, ...]:
    desc = cls.DESCRIPTOR
    parts = str(key).split(".")
    for i, part in enumerate(parts):
        f = desc.fields_by_name.get(part)
        if f is None:
            raise fail(fmu, f"{where}: {desc.full_name} has no field '{part}'"
                       f"{did_you_mean(part, desc.fields_by_name)} (in '{key}')",
                       f"its fields: {', '.join(desc.fields_by_name)}")
        if f.is_repeated:
            raise fail(fmu, f"{where}: '{key}' goes through the repeated field '{part}'",
                       "map singular fields (use moonpool.v1.Signals for named values)")
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                raise fail(fmu, f"{where}: '{key}' is a {f.message_type.full_name} message, "
                           "not a number", f"map its fields, e.g. '{key}."
                           f"{next(iter(f.message_type.fields_by_name), 'x')}'")
            desc = f.message_type
        elif not last:
            raise fail(fmu, f"{where}: '{'.'.join(parts[: i + 1])}' is a number and has no "
                       f"field '{parts[i + 1]}'", "check the field path")
        elif f.cpp_type not in _NUMERIC_CPP:
            raise fail(fmu, f"{where}: '{key}' is not a number or boolean", "map numeric fields")
    return tuple(parts)


def _variable(fmu: Path, where: str, name: Any, variables: Mapping[str, Variable]) -> Variable:
    var = variables.get(name) if isinstance(name, str) else None
    if var is None:
        raise fail(fmu, f"{where}: no variable '{name}' in the FMU"
                   f"{did_you_mean(str(name), variables)}",
                   "use a variable of its modelDescription.xml (`fmpy info FILE` lists them)")
    return var


def _start_values(fmu: Path, p: FmuParameters, model: Model) -> tuple:
    variables = model.variables
    values: dict[str, Any] = {}
    profile = p.profile or {}
    if not isinstance(profile, Mapping):
        raise fail(fmu, "parameter profile must be a table", "use the rig's profile key")
    prof_params = profile.get("parameters", {})
    if not isinstance(prof_params, Mapping):
        raise fail(fmu, "the profile's [parameters] is not a table", "fix the profile file")
    sources = [("profile parameters", prof_params), ("start_values", p.start_values)]
    if p.water_column is not None:
        sources.insert(1, ("water_column", _water_table(fmu, p, sources)))
    for label, table in sources:
        if not isinstance(table, Mapping):
            raise fail(fmu, f"{label} must be a table VARIABLE = value", "write {init_d = 2.0}")
        for name, value in table.items():
            var = _variable(fmu, f"{label}.{name}", name, variables)
            if var.causality not in ("parameter", "input") or var.variability == "constant":
                raise fail(fmu, f"{label}.{name}: variable '{name}' has causality "
                           f"'{var.causality}' (variability '{var.variability}'); only "
                           "parameters and inputs take start values", f"remove {name}")
            if var.size != 1:
                raise fail(fmu, f"{label}.{name}: variable '{name}' is an FMI 3 array; start "
                           "values of arrays are not supported", f"remove {name}")
            if var.type == "Enumeration" and isinstance(value, str):  # by item name
                items = enumeration_items(model, var)
                if value not in items:
                    raise fail(fmu, f"{label}.{name} = {value!r} is not an item of its "
                               f"enumeration{did_you_mean(value, items)}",
                               f"use one of {', '.join(items) or '(none declared)'} or a value")
                value = items[value]
            ok = (isinstance(value, str) if var.type == "String" else
                  isinstance(value, bool) if var.type == "Boolean" else
                  isinstance(value, int) and not isinstance(value, bool) if var.type in INT_TYPES
                  else isinstance(value, (int, float)) and not isinstance(value, bool))
            if not ok:
                raise fail(fmu, f"{label}.{name} = {value!r} does not fit variable type "
                           f"{var.type}", f"give {name} a {var.type} value")
            if var.type in INT_TYPES:
                lo, hi = int_range(model.version, var.type)
                if not lo <= value <= hi:
                    raise fail(fmu, f"{label}.{name} = {value!r} is out of the range of "
                               f"{var.type} [{lo}, {hi}]", f"give {name} a value in [{lo}, {hi}]")
            values[name] = (var, value)
    return tuple(values.values())


WATER_KNOTS = 32
"""Knots of the hydrodynamics FMU's tabulated water column (fmus/build_fmus.py)."""


def _water_table(fmu: Path, p: FmuParameters, sources) -> dict[str, Any]:
    """Start values of the FMU's tabulated water column from the scene file's water
    (``WaterColumn.density_knots``: in-situ density by TEOS-10, 32 knots to 11,000 m)."""
    from ..world.scenefile import read_scene_file

    for label, table in sources:
        clash = sorted(n for n in (table if isinstance(table, Mapping) else {})
                       if n == "water_points" or n.startswith(("water_depth_", "water_rho_")))
        if clash:
            raise fail(fmu, f"water_column is given and {label} sets {', '.join(clash)} too "
                       "(two water columns)", f"drop {clash[0]} (the scene's water is used) "
                       "or drop water_column")
    try:
        spec = read_scene_file(p.water_column)
    except ParameterError as exc:
        raise fail(fmu, f"water_column: {exc}", "give a good scene file "
                   "(docs/world.md)") from None
    depths, rho = spec.water.density_knots(WATER_KNOTS)
    values: dict[str, Any] = {"water_points": len(depths)}
    for k, (d, r) in enumerate(zip(depths, rho)):
        values[f"water_depth_{k}"] = float(d)
        values[f"water_rho_{k}"] = float(r)
    return values


# ----------------------------------------------------------------- compiled I/O


class _Gen:
    """A tiny code generator: names bound to objects, lines of source."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {}
        self.lines: list[str] = []
        self._n = 0

    def bind(self, obj: Any, prefix: str = "k") -> str:
        self._n += 1
        name = f"{prefix}{self._n}"
        self.ns[name] = obj
        return name

    def local(self, prefix: str = "v") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def compile(self, name: str, args: str) -> Any:
        src = "\n".join([f"def {name}({args}):", *(self.lines or ["    pass"])])
        exec(compile(src, f"<moonpool.fmu {name}>", "exec"), self.ns)  # noqa: S102 - our own code
        fn = self.ns[name]
        fn.source = src  # for debugging
        return fn


def _field_kind(cls: Any, path: tuple[str, ...]) -> int:
    desc = cls.DESCRIPTOR
    for part in path[:-1]:
        desc = desc.fields_by_name[part].message_type
    return desc.fields_by_name[path[-1]].cpp_type


def _prefix_locals(g: _Gen, root: str, paths: Any, indent: int) -> dict[tuple[str, ...], str]:
    """Emit ``s = root.a`` / ``s2 = s.b`` once per nested message on the paths."""
    names: dict[tuple[str, ...], str] = {(): root}
    for path in paths:
        for i in range(1, len(path)):
            pre = path[:i]
            if pre not in names:
                names[pre] = g.local("s")
                g.emit(f"{names[pre]} = {names[pre[:-1]]}.{pre[-1]}", indent)
    return names


def _ref(names: dict[tuple[str, ...], str], path: tuple[str, ...]) -> str:
    return f"{names[path[:-1]]}.{path[-1]}"


def compile_outputs(plan: Plan, fmu: FmuInstance) -> Callable[[int], dict[str, Any]]:
    """``read_outputs(stamp)``: one get call per variable type, then fresh messages of
    the output ports filled in (headers stamped ``stamp``, ns), by port name."""
    version, v3 = plan.model.version, fmu.v3
    prefix = "fmi3" if v3 else "fmi2"
    g = _Gen()
    g.ns.update(I=fmu.handle, FAIL=fmu.status_failed)
    out_vars = {b.var.name: b.var for pp in plan.outputs for b in pp.bindings}
    groups: dict[str, list[Variable]] = {}
    for var in out_vars.values():
        groups.setdefault(function_suffix(version, var.type), []).append(var)
    where: dict[str, tuple[str, int, str]] = {}  # var name -> (list local, index, type)
    for typ, variables in groups.items():
        n, fname = len(variables), f"{prefix}Get{typ}"
        vrs = g.bind((ctypes.c_uint32 * n)(*(v.vr for v in variables)), "VR")
        buf = g.bind((ctype(version, variables[0].type) * n)(), "A")
        fn = g.bind(fmu.raw(fname), "G")
        g.emit(f"st = {fn}(I, {vrs}, {n}, {buf}" + (f", {n})" if v3 else ")"))
        g.emit(f"if st > 1: FAIL({fname!r}, st, 'reading the outputs')")
        values = g.local("a")
        g.emit(f"{values} = {buf}[:]")
        for i, v in enumerate(variables):
            where[v.name] = (values, i, v.type)
    results = []
    for pp in plan.outputs:
        msg = g.local("m")
        g.emit(f"{msg} = {g.bind(pp.port.type, 'C')}()")
        if pp.signals:
            add = g.local("add")
            g.emit(f"{add} = {msg}.signals.add")
            for b in pp.bindings:
                values, i, typ = where[b.var.name]
                g.emit(f"{add}(name={g.bind(b.key, 'N')}, value=float({values}[{i}]))")
        else:
            names = _prefix_locals(g, msg, [b.path for b in pp.bindings], 1)
            for b in pp.bindings:
                values, i, typ = where[b.var.name]
                expr = f"{values}[{i}]"
                kind = _field_kind(pp.port.type, b.path)
                if kind == FieldDescriptor.CPPTYPE_BOOL:
                    expr = f"bool({expr})"
                elif kind not in _FLOAT_CPP:
                    expr = f"int(round({expr}))" if typ in FLOAT_TYPES else f"int({expr})"
                elif typ == "Boolean":
                    expr = f"float({expr})"
                g.emit(f"{_ref(names, b.path)} = {expr}")
        if "header" in pp.port.type.DESCRIPTOR.fields_by_name:
            g.emit(f"{msg}.header.sim_time_ns = stamp")
        results.append(f"{g.bind(pp.port.name, 'P')}: {msg}")
    g.emit("return {" + ", ".join(results) + "}")
    return g.compile("read_outputs", "stamp")


_INT_RANGE = {"Int8": (-2**7, 2**7 - 1), "UInt8": (0, 2**8 - 1), "Int16": (-2**15, 2**15 - 1),
              "UInt16": (0, 2**16 - 1), "Int32": (-2**31, 2**31 - 1), "UInt32": (0, 2**32 - 1),
              "Int64": (-2**63, 2**63 - 1), "UInt64": (0, 2**64 - 1)}


def int_range(version: int, typ: str) -> tuple[int, int]:
    """The range of an FMI integer type (FMI 2 Integer and Enumeration: int32; FMI 3
    Enumeration: int64)."""
    if typ == "Enumeration":
        return _INT_RANGE["Int64" if version == 3 else "Int32"]
    return _INT_RANGE.get(typ, _INT_RANGE["Int32"])


def converter(fmu_name: str, version: int, var: Variable, where: str,
              items: Mapping[str, int] | None = None) -> Callable[[Any], Any]:
    """The checked conversion of a message value to an integer, boolean or enumeration
    variable: PortError naming the FMU, the field, the variable, the value and what it
    accepts when it does not fit (no silent wrap-around, no truthiness)."""
    def refuse(value: Any, accepts: str) -> PortError:
        return PortError(f"FMU '{fmu_name}': {where} = {value!r} does not fit variable "
                         f"'{var.name}' ({var.type}): {accepts}",
                         fix=f"send values {accepts.removeprefix('it accepts ')}")
    if var.type == "Boolean":
        def to_bool(value: Any) -> bool:
            if value == 0 or value == 1:
                return bool(value)
            raise refuse(value, "it accepts 0 / false or 1 / true only")
        return to_bool
    lo, hi = int_range(version, var.type)
    if var.type == "Enumeration" and items:
        allowed = frozenset(items.values())
        names = ", ".join(f"{n} = {v}" for n, v in items.items())

        def to_enum(value: Any) -> int:
            if isinstance(value, float) and not value.is_integer() or int(value) not in allowed:
                raise refuse(value, f"it accepts the values of its items ({names})")
            return int(value)
        return to_enum

    def to_int(value: Any) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise refuse(value, f"it accepts whole numbers in [{lo}, {hi}]")
        v = int(value)
        if not lo <= v <= hi:
            raise refuse(value, f"it accepts whole numbers in [{lo}, {hi}]")
        return v
    return to_int


def enumeration_items(model: Model, var: Variable) -> dict[str, int]:
    """An enumeration variable's items, name -> value ({} if the FMU does not say)."""
    for v in model.md.modelVariables:
        if v.name == var.name:
            dt = getattr(v, "declaredType", None)
            return {i.name: int(i.value) for i in getattr(dt, "items", None) or []}
    return {}


def compile_inputs(plan: Plan, fmu: FmuInstance,
                   on_change: Callable[[bool], None] | None = None
                   ) -> Callable[[Mapping[str, Any]], None]:
    """``apply_inputs(inputs)``: per input port and variable type, one set call, made
    only when the values changed (a port without a message keeps its last values).
    Integer, boolean and enumeration values are range-checked (:func:`converter`).
    ``on_change(discrete)`` (model exchange) is called before a set call, with True when
    the variables are discrete inputs or tunable parameters (they need event mode)."""
    version, v3 = plan.model.version, fmu.v3
    prefix = "fmi3" if v3 else "fmi2"
    g = _Gen()
    g.ns.update(I=fmu.handle, FAIL=fmu.status_failed, F=fmu, SIGNALS=_set_signals,
                CH=on_change)
    g.emit("get = inputs.get")
    for pp in plan.inputs:
        if not pp.bindings:
            continue
        msg = g.local("m")
        g.emit(f"{msg} = get({g.bind(pp.port.name, 'P')})")
        g.emit(f"if {msg} is not None:")
        if pp.signals:
            index = {b.key: b.var for b in pp.bindings}
            conv = {b.key: converter(fmu.name, version, b.var, f"{pp.port.name}.{b.key}",
                                     enumeration_items(plan.model, b.var))
                    for b in pp.bindings if b.var.type not in FLOAT_TYPES}
            g.emit(f"SIGNALS(F, {msg}, {g.bind(index, 'X')}, {g.bind({}, 'L')}, "
                   f"{g.bind(conv, 'K')}, CH)", 2)
            continue
        names = _prefix_locals(g, msg, [b.path for b in pp.bindings], 2)
        by_type: dict[tuple[str, bool], list[Binding]] = {}
        for b in pp.bindings:
            key = (function_suffix(version, b.var.type), b.var.variability != "continuous")
            by_type.setdefault(key, []).append(b)
        for (typ, discrete), bindings in by_type.items():
            n, fname = len(bindings), f"{prefix}Set{typ}"
            exprs = []
            for b in bindings:
                ref = _ref(names, b.path)
                if b.var.type in FLOAT_TYPES:
                    exprs.append(ref)
                else:
                    c = converter(fmu.name, version, b.var, f"{pp.port.name}.{b.key}",
                                  enumeration_items(plan.model, b.var))
                    exprs.append(f"{g.bind(c, 'C')}({ref})")
            vrs = g.bind((ctypes.c_uint32 * n)(*(b.var.vr for b in bindings)), "VR")
            buf = g.bind((ctype(version, bindings[0].var.type) * n)(), "A")
            last = g.bind([None], "L")
            fn = g.bind(fmu.raw(fname), "S")
            t = g.local("t")
            g.emit(f"{t} = ({', '.join(exprs)},)", 2)
            g.emit(f"if {t} != {last}[0]:", 2)
            if on_change is not None:
                g.emit(f"CH({discrete})", 3)
            g.emit(f"{buf}[:] = {t}", 3)
            g.emit(f"st = {fn}(I, {vrs}, {n}, {buf}" + (f", {n})" if v3 else ")"), 3)
            g.emit(f"if st > 1: FAIL({fname!r}, st, 'setting the inputs')", 3)
            g.emit(f"{last}[0] = {t}", 3)
    fn = g.compile("apply_inputs", "inputs")
    caches = [v for k, v in g.ns.items() if k.startswith("L")]

    def forget() -> None:
        """Forget the values last set (after an FMU state was restored: set them all again)."""
        for c in caches:
            if isinstance(c, list):
                c[0] = None
            else:
                c.clear()
    fn.forget = forget
    return fn


def _set_signals(fmu: FmuInstance, msg: Any, index: Mapping[str, Variable],
                 last: dict[str, Any], conv: Mapping[str, Callable[[Any], Any]],
                 on_change: Callable[[bool], None] | None) -> None:
    """A Signals input: set the mapped signals whose values changed (by name)."""
    variables, values = [], []
    for s in msg.signals:
        var = index.get(s.name)
        if var is not None and last.get(s.name) != s.value:
            c = conv.get(s.name)
            variables.append(var)
            values.append(c(s.value) if c is not None else s.value)
    if variables:
        if on_change is not None:
            on_change(any(v.variability != "continuous" for v in variables))
        fmu.call(StepFailed, "set inputs", fmu.set, variables, values)
        for s in msg.signals:
            if s.name in index:
                last[s.name] = s.value
