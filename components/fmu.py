"""FmuComponent: hosts any FMI 2.0 / 3.0 FMU as a moonpool component, with no code.

Registered as the short name ``fmu``. The rig maps FMU variables to message fields::

    [components.vehicle]
    entry = "fmu"
    period = "10ms"
    profile = "../fmus/hydrodynamics/profiles/bluerov2_heavy.toml"   # optional
    [components.vehicle.parameters]
    fmu = "../fmus/build/hydrodynamics-fmi3.fmu"      # relative to the rig's folder
    inputs.wrench = { type = "moonpool.v1.Wrench", fields = { "force_n.x" = "tau_X" } }
    outputs.state = { type = "moonpool.v1.VehicleState", fields = { "position_ned_m.x" = "n" } }
    start_values = { init_d = 2.0 }

Each port of ``inputs`` / ``outputs`` becomes a port of the component
(:meth:`FmuComponent.ports_for`), so ``moonpool check`` opens the FMU and checks the
mapping against its model description without running anything.

- ``fields`` maps a message field path (dots into nested messages, e.g.
  ``force_n.x``; the field must be a number or a boolean) to an FMU variable. For
  ``moonpool.v1.Signals`` the keys are signal names instead.
- Inputs: the mapped variable must have causality ``input`` (or be a tunable
  parameter). The latest message is held; a signal absent from a Signals message
  keeps its previous value.
- Outputs are read after each ``doStep`` and stamped ``t + dt`` (the state the FMU
  has reached); the initial outputs are stamped with the start time.
- Start values: the ``parameters`` table of ``profile`` (the content of a profile
  file, given by the rig's ``profile`` key), then ``start_values`` (which win).

Co-simulation FMUs are stepped with ``doStep``; one that cannot handle a variable
communication step size gets a constant step (a step that is a whole multiple of the
first one is subdivided; any other is refused). Model-exchange FMUs are integrated
with a fixed-step RK4 (``step_size`` or ``substeps`` per communication step, inputs held
over the step) following the FMI event protocol: event iteration after initialization,
``completedIntegratorStep`` after every sub-step, time events (a sub-step ends exactly at
the event time) and step events handled; a state event (an event indicator changing
sign) fails the step with a clear error, as does a request to terminate.

The per-step work is compiled at configure (see "compiled I/O" below): inputs are set
only when their values changed, outputs are read with one FMI call per variable type.

FMI failures (an FMI status of discard or worse) become StepFailed / ParameterError
naming the FMU file, the FMI function and the FMU's last log messages.
"""

from __future__ import annotations

import ctypes
import difflib
import itertools
import math
import shutil
import tempfile
import weakref
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from .sdk import wire
from .sdk.component import Component, Port, param
from .sdk.errors import ParameterError, PortError, StepFailed

_FLOAT_TYPES = ("Real", "Float64", "Float32")
_INT_TYPES = ("Integer", "Enumeration", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
              "Int64", "UInt64")
_NUMERIC_CPP = {
    FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT,
    FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
    FieldDescriptor.CPPTYPE_BOOL,
}
_FLOAT_CPP = (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT)
SIGNALS = "moonpool.v1.Signals"
FMI_TYPES = ("auto", "cs", "me")


@dataclass(frozen=True, kw_only=True)
class FmuParameters:
    fmu: Path = param(doc="the .fmu file (FMI 2.0 or 3.0), relative to the rig file's folder")
    inputs: dict[str, Any] = param(
        {}, "input ports: PORT = {type = MESSAGE TYPE, fields = {FIELD PATH or SIGNAL = VARIABLE}}"
    )
    outputs: dict[str, Any] = param(
        {}, "output ports: PORT = {type = MESSAGE TYPE, fields = {FIELD PATH or SIGNAL = VARIABLE}}"
    )
    start_values: dict[str, Any] = param({}, "VARIABLE = value, set before initialization")
    profile: dict[str, Any] = param(
        {}, "a profile file's content (the rig's profile key); its [parameters] are start values"
    )
    fmi_type: str = param("auto", "auto (co-simulation if the FMU has it), cs or me")
    step_size: float = param(
        0.001, "model exchange: largest RK4 step; each communication step is divided into "
        "equal sub-steps no longer than this (0: use substeps)", unit="s"
    )
    substeps: int = param(1, "model exchange with step_size = 0: RK4 steps per communication step")
    log_fmu: bool = param(False, "turn the FMU's debug logging on (its messages go to the log)")

    def __post_init__(self) -> None:
        if self.fmi_type not in FMI_TYPES:
            raise ParameterError(f"fmi_type '{self.fmi_type}' is not one of {', '.join(FMI_TYPES)}")
        if self.substeps < 1:
            raise ParameterError(f"substeps must be >= 1, got {self.substeps}")
        if not self.step_size >= 0:
            raise ParameterError(f"step_size must be >= 0 s, got {self.step_size}")


# ----------------------------------------------------------------- static plan


@dataclass(frozen=True)
class _Var:
    name: str
    vr: int
    type: str
    causality: str
    variability: str


@dataclass(frozen=True)
class _Binding:
    """One mapped value: a message field path (or signal name) <-> an FMU variable."""

    key: str
    path: tuple[str, ...]
    var: _Var


@dataclass(frozen=True)
class _PortPlan:
    port: Port
    signals: bool
    bindings: tuple[_Binding, ...]


@dataclass(frozen=True)
class _Plan:
    path: Path
    md: Any
    version: int  # 2 or 3
    kind: str  # "cs" or "me"
    variables: dict[str, _Var]
    inputs: tuple[_PortPlan, ...]
    outputs: tuple[_PortPlan, ...]
    start: tuple[tuple[_Var, Any], ...]


def _fail(fmu: Path, problem: str, fix: str) -> ParameterError:
    return ParameterError(f"FMU '{fmu}': {problem}", fix=fix)


def _did_you_mean(word: str, options: Any) -> str:
    options = list(options)
    same = [o for o in options if o.lower() == word.lower()]  # only the case differs
    close = same or difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _binary_dirs(fmu: Path) -> tuple[set[str], bool]:
    with zipfile.ZipFile(fmu) as z:
        names = z.namelist()
    dirs = {n.split("/")[1] for n in names if n.startswith("binaries/") and n.count("/") >= 2
            and n.split("/")[1]}
    return dirs, any(n.startswith("sources/") for n in names)


def _model_description(fmu: Path) -> Any:
    from fmpy import read_model_description

    if not fmu.exists():
        raise _fail(fmu, "the file does not exist",
                    "give the .fmu path relative to the rig file's folder")
    if fmu.is_dir():
        raise _fail(fmu, "is a folder, not an .fmu file", "give the path of the .fmu file")
    if not zipfile.is_zipfile(fmu):
        raise _fail(fmu, "is not an FMU (not a zip archive)",
                    "give a .fmu file exported by an FMI tool")
    try:
        with zipfile.ZipFile(fmu) as z:
            if "modelDescription.xml" not in z.namelist():
                raise _fail(fmu, "has no modelDescription.xml (a zip, but not an FMU)",
                            "give a .fmu file exported by an FMI tool")
            import xml.etree.ElementTree as ET

            version = ET.fromstring(z.read("modelDescription.xml")).get("fmiVersion", "")
        if version.split(".")[0] not in ("2", "3"):
            raise _fail(fmu, f"FMI version {version or '(none)'} is not supported",
                        "moonpool hosts FMI 2.0 and 3.0 FMUs; re-export the model as FMI 2.0 "
                        "or 3.0")
        return read_model_description(str(fmu), validate=False)
    except ParameterError:
        raise
    except Exception as exc:  # fmpy / lxml: a broken model description
        raise _fail(fmu, f"cannot read its modelDescription.xml: {exc}",
                    "re-export the FMU; check it with `fmpy validate`") from exc


def _plan(p: FmuParameters) -> _Plan:
    """Open the FMU's model description and check the whole mapping (no binary loaded)."""
    import fmpy

    fmu = Path(p.fmu)
    md = _model_description(fmu)
    major = str(md.fmiVersion).split(".")[0]
    if major not in ("2", "3"):
        raise _fail(fmu, f"FMI version {md.fmiVersion} is not supported",
                    "moonpool hosts FMI 2.0 and 3.0 FMUs; re-export the model as FMI 2.0 or 3.0")
    version = int(major)
    kinds = [k for k, a in (("cs", md.coSimulation), ("me", md.modelExchange)) if a is not None]
    kind = p.fmi_type if p.fmi_type != "auto" else (kinds[0] if kinds else "")
    if kind not in kinds:
        what = {"cs": "co-simulation", "me": "model exchange"}
        has = " and ".join(what[k] for k in kinds) or "neither interface"
        raise _fail(fmu, f"fmi_type = \"{p.fmi_type}\" but the FMU implements {has}",
                    f"set fmi_type to {' or '.join(repr(k) for k in kinds) or 'auto'}"
                    if kinds else "re-export the FMU with co-simulation or model exchange")
    plat = fmpy.platform_tuple if version == 3 else fmpy.platform
    dirs, sources = _binary_dirs(fmu)
    if plat not in dirs:
        fix = (f"export the FMU for {plat}" + (", or compile its sources/ for this platform "
               "(fmpy.util.compile_platform_binary)" if sources else ""))
        raise _fail(fmu, f"has no binary for this platform ({plat}); it has "
                    f"{', '.join(sorted(dirs)) or 'no binaries'}", fix)
    variables = {v.name: _Var(v.name, v.valueReference, v.type, v.causality, v.variability)
                 for v in md.modelVariables}
    inputs = tuple(_port_plans(fmu, p.inputs, "inputs", variables))
    outputs = tuple(_port_plans(fmu, p.outputs, "outputs", variables))
    start = _start_values(fmu, p, variables)
    return _Plan(fmu, md, version, kind, variables, inputs, outputs, start)


def _port_plans(fmu: Path, spec: Any, what: str, variables: Mapping[str, _Var]) -> list[_PortPlan]:
    example = ('{ type = "moonpool.v1.Wrench", fields = { "force_n.x" = "tau_X" } }'
               if what == "inputs" else
               '{ type = "moonpool.v1.VehicleState", fields = { "position_ned_m.x" = "n" } }')
    if not isinstance(spec, Mapping):
        raise _fail(fmu, f"parameter {what} must be a table PORT = {example}",
                    f"write {what}.PORT = {example}")
    plans = []
    for port_name, port_spec in spec.items():
        where = f"{what}.{port_name}"
        if not isinstance(port_spec, Mapping) or set(port_spec) - {"type", "fields", "description"}:
            raise _fail(fmu, f"{where} must be a table with type and fields",
                        f"write {where} = {example}")
        type_name = port_spec.get("type")
        if not isinstance(type_name, str):
            raise _fail(fmu, f"{where}.type is missing", f"write {where} = {example}")
        try:
            cls = wire.message_class(type_name)
        except PortError as exc:
            raise _fail(fmu, f"{where}.type: {exc.message}", exc.fix) from exc
        fields = port_spec.get("fields")
        if not isinstance(fields, Mapping) or not fields:
            raise _fail(fmu, f"{where}.fields must be a non-empty table FIELD = VARIABLE",
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
                raise _fail(fmu, f"{where}.fields.{key}: variable '{var.name}' has causality "
                            f"'{var.causality}', so it cannot be set from an input",
                            "map inputs to variables of causality input (or tunable parameters); "
                            "map outputs under outputs")
            if var.type not in (*_FLOAT_TYPES, *_INT_TYPES, "Boolean"):
                raise _fail(fmu, f"{where}.fields.{key}: variable '{var.name}' is {var.type}, "
                            "not a number or boolean", "map numeric variables only")
            bindings.append(_Binding(str(key), path, var))
        desc = port_spec.get("description") or (
            f"FMU {'inputs' if what == 'inputs' else 'outputs'} "
            + ", ".join(b.var.name for b in bindings))
        plans.append(_PortPlan(Port(str(port_name), cls, str(desc)), signals, tuple(bindings)))
    return plans


def _field_path(fmu: Path, where: str, cls: Any, key: Any) -> tuple[str, ...]:
    desc = cls.DESCRIPTOR
    parts = str(key).split(".")
    for i, part in enumerate(parts):
        f = desc.fields_by_name.get(part)
        if f is None:
            raise _fail(fmu, f"{where}: {desc.full_name} has no field '{part}'"
                        f"{_did_you_mean(part, desc.fields_by_name)} (in '{key}')",
                        f"its fields: {', '.join(desc.fields_by_name)}")
        if f.is_repeated:
            raise _fail(fmu, f"{where}: '{key}' goes through the repeated field '{part}'",
                        "map singular fields (use moonpool.v1.Signals for named values)")
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                raise _fail(fmu, f"{where}: '{key}' is a {f.message_type.full_name} message, "
                            "not a number", f"map its fields, e.g. '{key}."
                            f"{next(iter(f.message_type.fields_by_name), 'x')}'")
            desc = f.message_type
        elif not last:
            raise _fail(fmu, f"{where}: '{'.'.join(parts[: i + 1])}' is a number and has no "
                        f"field '{parts[i + 1]}'", "check the field path")
        elif f.cpp_type not in _NUMERIC_CPP:
            raise _fail(fmu, f"{where}: '{key}' is not a number or boolean", "map numeric fields")
    return tuple(parts)


def _variable(fmu: Path, where: str, name: Any, variables: Mapping[str, _Var]) -> _Var:
    var = variables.get(name) if isinstance(name, str) else None
    if var is None:
        raise _fail(fmu, f"{where}: no variable '{name}' in the FMU"
                    f"{_did_you_mean(str(name), variables)}",
                    "use a variable of its modelDescription.xml (`fmpy info FILE` lists them)")
    return var


def _start_values(fmu: Path, p: FmuParameters, variables: Mapping[str, _Var]) -> tuple:
    values: dict[str, Any] = {}
    profile = p.profile or {}
    if not isinstance(profile, Mapping):
        raise _fail(fmu, "parameter profile must be a table", "use the rig's profile key")
    prof_params = profile.get("parameters", {})
    if not isinstance(prof_params, Mapping):
        raise _fail(fmu, "the profile's [parameters] is not a table", "fix the profile file")
    sources = [("profile parameters", prof_params), ("start_values", p.start_values)]
    for label, table in sources:
        if not isinstance(table, Mapping):
            raise _fail(fmu, f"{label} must be a table VARIABLE = value", "write {init_d = 2.0}")
        for name, value in table.items():
            var = _variable(fmu, f"{label}.{name}", name, variables)
            if var.causality not in ("parameter", "input") or var.variability == "constant":
                raise _fail(fmu, f"{label}.{name}: variable '{name}' has causality "
                            f"'{var.causality}' (variability '{var.variability}'); only "
                            "parameters and inputs take start values", f"remove {name}")
            ok = (isinstance(value, str) if var.type == "String" else
                  isinstance(value, bool) if var.type == "Boolean" else
                  isinstance(value, int) and not isinstance(value, bool) if var.type in _INT_TYPES
                  else isinstance(value, (int, float)) and not isinstance(value, bool))
            if not ok:
                raise _fail(fmu, f"{label}.{name} = {value!r} does not fit variable type "
                            f"{var.type}", f"give {name} a {var.type} value")
            values[name] = (var, value)
    return tuple(values.values())


# ----------------------------------------------------------------- compiled I/O
#
# The per-step work is compiled once at configure: value references and value
# buffers are ctypes arrays built once, the FMI functions are called directly (one
# call per variable type and direction, status checked inline), and the message
# fields are read and written by Python code generated for the mapping (plain
# attribute access, no getattr chains or descriptor lookups per step).

_C3 = {"Float64": ctypes.c_double, "Float32": ctypes.c_float, "Int8": ctypes.c_int8,
       "UInt8": ctypes.c_uint8, "Int16": ctypes.c_int16, "UInt16": ctypes.c_uint16,
       "Int32": ctypes.c_int32, "UInt32": ctypes.c_uint32, "Int64": ctypes.c_int64,
       "UInt64": ctypes.c_uint64, "Boolean": ctypes.c_bool, "Enumeration": ctypes.c_int64}
_C2 = {"Real": ctypes.c_double, "Integer": ctypes.c_int, "Enumeration": ctypes.c_int,
       "Boolean": ctypes.c_int}
_STATUS = ("ok", "warning", "discard", "error", "fatal", "pending")


def _status_label(status: int) -> str:
    return _STATUS[status] if 0 <= status < len(_STATUS) else str(status)


def _fmi_type(version: int, typ: str) -> str:
    """The FMI function suffix for a variable type (fmi3GetFloat64, fmi2GetInteger)."""
    if version == 3:
        return "Int64" if typ == "Enumeration" else typ
    return "Integer" if typ == "Enumeration" else typ


def _ctype(version: int, typ: str) -> Any:
    return (_C3 if version == 3 else _C2)[typ]


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


# ----------------------------------------------------------------- FMI 2 logging
#
# fmpy's logger proxy (fmpy.logging.addLoggerProxy, which formats the printf-style
# arguments FMI 2 loggers receive) keeps ONE process-wide Python logger: the last one
# given to it. So every FMI 2 instance in the process (ours and fmpy's defaults) gets
# the same module-level logger, which routes a message by the callbacks'
# componentEnvironment to the component that owns the FMU, and anything else to
# fmpy's default printer. It lives as long as the process: no dangling callback.

_LOG2_IDS = itertools.count(1)
_LOG2_TARGETS: dict[int, Any] = {}
_LOG2_FN: list[Any] = []


def _route_fmi2_log(env: Any, instance: Any, status: int, category: Any, message: Any) -> None:
    ref = _LOG2_TARGETS.get(env or 0)
    comp = ref() if ref is not None else None
    if comp is not None:
        comp._remember(status, message)
        return
    from fmpy.fmi1 import printLogMessage

    printLogMessage(env, instance, status, category, message)


def _fmi2_logger() -> Any:
    if not _LOG2_FN:
        from fmpy.fmi2 import fmi2CallbackLoggerTYPE

        _LOG2_FN.append(fmi2CallbackLoggerTYPE(_route_fmi2_log))
    return _LOG2_FN[0]


# ----------------------------------------------------------------- component


class FmuComponent(Component):
    """Any FMI 2.0 / 3.0 FMU, wired to messages by a mapping in the rig (no code)."""

    Parameters = FmuParameters

    @classmethod
    def ports_for(cls, params: FmuParameters) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
        plan = _plan(params)
        return (tuple(pp.port for pp in plan.inputs), tuple(pp.port for pp in plan.outputs))

    # -- lifecycle

    def configure(self, params: FmuParameters) -> None:
        import fmpy

        self.params = params
        self.plan = plan = _plan(params)
        self.fmu_name = plan.path.name
        self._log: list[str] = []
        self._instance = None
        self._time = 0.0
        self._dir = tempfile.mkdtemp(prefix="moonpool-fmu-")
        try:
            fmpy.extract(str(plan.path), self._dir)
        except Exception as exc:  # noqa: BLE001
            raise self._error(ParameterError, "cannot unzip the FMU", exc,
                              "check the file; re-export it") from exc
        md = plan.md
        attrs = md.coSimulation if plan.kind == "cs" else md.modelExchange
        self._variable_step = bool(getattr(attrs, "canHandleVariableCommunicationStepSize", True))
        self._fixed_dt_ns: int | None = None
        self._instance = self._fmi(ParameterError, "instantiate", self._instantiate, attrs)
        for var, value in plan.start:
            self._fmi(ParameterError, f"set start value of {var.name}", self._set, [var], [value])
        self._compile()

    def _instantiate(self, attrs: Any) -> Any:
        plan = self.plan
        md = plan.md
        kw = dict(guid=md.guid, unzipDirectory=self._dir, modelIdentifier=attrs.modelIdentifier,
                  instanceName=self.name or "fmu")
        if plan.version == 3:
            from fmpy.fmi3 import FMU3Model, FMU3Slave

            inst = (FMU3Slave if plan.kind == "cs" else FMU3Model)(**kw)
            inst.instantiate(loggingOn=self.params.log_fmu, logMessage=self._log3)
        else:
            from fmpy.fmi2 import FMU2Model, FMU2Slave

            inst = (FMU2Slave if plan.kind == "cs" else FMU2Model)(**kw)
            inst.instantiate(loggingOn=self.params.log_fmu, callbacks=self._callbacks2())
        return inst

    def _log3(self, env: Any, status: int, category: Any, message: Any) -> None:
        self._remember(status, message)

    def _remember(self, status: int, message: Any) -> None:
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        self._log.append(f"[{_status_label(status)}] {text}")
        del self._log[:-5]

    def _callbacks2(self) -> Any:
        from fmpy import calloc, free
        from fmpy.fmi2 import (
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
        )

        env = next(_LOG2_IDS)
        _LOG2_TARGETS[env] = weakref.ref(self)
        self._log2_env = env
        cb = fmi2CallbackFunctions()
        cb.logger = _fmi2_logger()
        cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        cb.componentEnvironment = env  # routes the FMU's messages back to this component
        try:
            from fmpy.logging import addLoggerProxy

            addLoggerProxy(ctypes.byref(cb))  # formats the printf-style arguments
        except Exception:  # noqa: BLE001 - unformatted messages are still useful
            pass
        self._cb2 = cb  # keep alive as long as the instance
        return cb

    def initialize(self, start_time_ns: int) -> Mapping[str, Any] | None:
        inst, t0 = self._instance, start_time_ns * 1e-9
        self._time = t0
        me = self.plan.kind == "me"
        if self.plan.version == 2:
            self._fmi(StepFailed, "fmi2SetupExperiment", inst.setupExperiment, None, t0)
            self._fmi(StepFailed, "fmi2EnterInitializationMode", inst.enterInitializationMode)
            self._fmi(StepFailed, "fmi2ExitInitializationMode", inst.exitInitializationMode)
        else:
            self._fmi(StepFailed, "fmi3EnterInitializationMode", inst.enterInitializationMode,
                      None, t0)
            self._fmi(StepFailed, "fmi3ExitInitializationMode", inst.exitInitializationMode)
        if me:  # now in event mode: settle the discrete states, then continuous-time mode
            self._me_start(t0)
        return self._read_outputs(start_time_ns)

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            self._apply_inputs(inputs)
            self._time = t_ns * 1e-9
            if self._cs:
                if self._variable_step:
                    self._do_step(self._time, dt_ns * 1e-9)
                else:
                    self._fixed_steps(t_ns, dt_ns)
            else:
                self._integrate(self._time, dt_ns * 1e-9)
            self._time = (t_ns + dt_ns) * 1e-9
            return self._read_outputs(t_ns + dt_ns)
        except (StepFailed, ParameterError):
            raise
        except Exception as exc:  # a message field that cannot hold a value, ...
            raise self._error(StepFailed, f"step at t={t_ns * 1e-9:.9g} s failed", exc,
                              "check the mapping's field types against the FMU's "
                              "variables") from exc

    def terminate(self) -> Mapping[str, float] | None:
        inst, self._instance = getattr(self, "_instance", None), None
        try:
            if inst is not None:
                try:
                    inst.terminate()
                finally:
                    inst.freeInstance()
        except Exception:  # noqa: BLE001 - releasing: the run's outcome is already known
            pass
        finally:
            _LOG2_TARGETS.pop(getattr(self, "_log2_env", None), None)
            if getattr(self, "_dir", None):
                shutil.rmtree(self._dir, ignore_errors=True)
        return None

    # -- compiled per-step I/O (see "compiled I/O" above)

    def _raw(self, name: str) -> Any:
        """The FMI C function as loaded by fmpy (argtypes set), without fmpy's wrapper."""
        inst = self._instance
        fn = getattr(inst, "_functions", {}).get(name)
        return fn if fn is not None else getattr(inst.dll, name)

    def _compile(self) -> None:
        plan, v3 = self.plan, self.plan.version == 3
        prefix = "fmi3" if v3 else "fmi2"
        self._handle = self._instance.component
        self._cs = plan.kind == "cs"
        self._signal_inputs = []

        # outputs: one get call per variable type; then fill fresh messages
        g = _Gen()
        g.ns.update(I=self._handle, FAIL=self._status_failed)
        out_vars = {b.var.name: b.var for pp in plan.outputs for b in pp.bindings}
        groups: dict[str, list[_Var]] = {}
        for var in out_vars.values():
            groups.setdefault(_fmi_type(plan.version, var.type), []).append(var)
        where: dict[str, tuple[str, int, str]] = {}  # var name -> (list local, index, type)
        for typ, variables in groups.items():
            n, fname = len(variables), f"{prefix}Get{typ}"
            vrs = g.bind((ctypes.c_uint32 * n)(*(v.vr for v in variables)), "VR")
            buf = g.bind((_ctype(plan.version, variables[0].type) * n)(), "A")
            fn = g.bind(self._raw(fname), "G")
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
                        expr = f"int(round({expr}))" if typ in _FLOAT_TYPES else f"int({expr})"
                    elif typ == "Boolean":
                        expr = f"float({expr})"
                    g.emit(f"{_ref(names, b.path)} = {expr}")
            if "header" in pp.port.type.DESCRIPTOR.fields_by_name:
                g.emit(f"{msg}.header.sim_time_ns = stamp")
            results.append(f"{g.bind(pp.port.name, 'P')}: {msg}")
        g.emit("return {" + ", ".join(results) + "}")
        self._read_outputs = g.compile("read_outputs", "stamp")

        # inputs: per port and variable type, set only when the values changed
        g = _Gen()
        g.ns.update(I=self._handle, FAIL=self._status_failed, SIGNALS=self._set_signals)
        g.emit("get = inputs.get")
        for pp in plan.inputs:
            if not pp.bindings:
                continue
            msg = g.local("m")
            g.emit(f"{msg} = get({g.bind(pp.port.name, 'P')})")
            g.emit(f"if {msg} is not None:")
            if pp.signals:
                index = {b.key: b.var for b in pp.bindings}
                g.emit(f"SIGNALS({msg}, {g.bind(index, 'X')}, {g.bind({}, 'L')})", 2)
                continue
            names = _prefix_locals(g, msg, [b.path for b in pp.bindings], 2)
            by_type: dict[str, list[_Binding]] = {}
            for b in pp.bindings:
                by_type.setdefault(_fmi_type(plan.version, b.var.type), []).append(b)
            for typ, bindings in by_type.items():
                n, fname = len(bindings), f"{prefix}Set{typ}"
                exprs = []
                for b in bindings:
                    ref = _ref(names, b.path)
                    exprs.append(ref if b.var.type in _FLOAT_TYPES else
                                 f"bool({ref})" if b.var.type == "Boolean" else
                                 f"int(round({ref}))")
                vrs = g.bind((ctypes.c_uint32 * n)(*(b.var.vr for b in bindings)), "VR")
                buf = g.bind((_ctype(plan.version, bindings[0].var.type) * n)(), "A")
                last = g.bind([None], "L")
                fn = g.bind(self._raw(fname), "S")
                t = g.local("t")
                g.emit(f"{t} = ({', '.join(exprs)},)", 2)
                g.emit(f"if {t} != {last}[0]:", 2)
                g.emit(f"{buf}[:] = {t}", 3)
                g.emit(f"st = {fn}(I, {vrs}, {n}, {buf}" + (f", {n})" if v3 else ")"), 3)
                g.emit(f"if st > 1: FAIL({fname!r}, st, 'setting the inputs')", 3)
                g.emit(f"{last}[0] = {t}", 3)
        self._apply_inputs = g.compile("apply_inputs", "inputs")

        # co-simulation step
        if self._cs:
            if v3:
                self._flags = [ctypes.c_bool() for _ in range(3)]
                self._last_time = ctypes.c_double()
                self._step_args = (*(ctypes.byref(f) for f in self._flags),
                                   ctypes.byref(self._last_time))
            self._do_step_fn = self._raw(f"{prefix}DoStep")

    def _set_signals(self, msg: Any, index: Mapping[str, _Var], last: dict[str, Any]) -> None:
        variables, values = [], []
        for s in msg.signals:
            var = index.get(s.name)
            if var is not None and last.get(s.name) != s.value:
                variables.append(var)
                values.append(s.value)
                last[s.name] = s.value
        if variables:
            self._fmi(StepFailed, "set inputs", self._set, variables, values)

    def _status_failed(self, function: str, status: int, during: str) -> None:
        raise StepFailed(
            f"FMU '{self.fmu_name}': {function} returned {_status_label(status)} "
            f"(during {during}, t={self._time:.9g} s){self._log_text()}",
            fix="see the FMU's log above; check its inputs and parameters",
        )

    # -- co-simulation

    def _do_step(self, t: float, dt: float) -> None:
        if self.plan.version == 3:
            st = self._do_step_fn(self._handle, t, dt, True, *self._step_args)
            if st > 1:
                self._status_failed("fmi3DoStep", st, "a step")
            if self._flags[1].value:
                raise StepFailed(
                    f"FMU '{self.fmu_name}': fmi3DoStep at t={t:.9g} s asked to terminate the "
                    f"simulation{self._log_text()}",
                    fix="see the FMU's documentation for when it stops",
                )
        else:
            st = self._do_step_fn(self._handle, t, dt, 1)
            if st > 1:
                self._status_failed("fmi2DoStep", st, "a step")

    def _fixed_steps(self, t_ns: int, dt_ns: int) -> None:
        """canHandleVariableCommunicationStepSize = false: whole multiples of the first step."""
        n = 1
        if self._fixed_dt_ns is None:
            self._fixed_dt_ns = dt_ns
        elif dt_ns != self._fixed_dt_ns:
            if dt_ns % self._fixed_dt_ns:
                raise StepFailed(
                    f"FMU '{self.fmu_name}' cannot handle a variable communication step "
                    f"size (canHandleVariableCommunicationStepSize = false): step of "
                    f"{dt_ns} ns after steps of {self._fixed_dt_ns} ns",
                    fix="step it at a constant rate (no offset changes), or at a rate whose "
                    "period is a whole multiple of its first step",
                )
            n = dt_ns // self._fixed_dt_ns
            dt_ns = self._fixed_dt_ns
        for k in range(n):
            self._time = (t_ns + k * dt_ns) * 1e-9
            self._do_step(self._time, dt_ns * 1e-9)

    # -- model exchange: fixed-step RK4 with the FMI event protocol

    def _me_start(self, t0: float) -> None:
        """After exitInitializationMode (event mode): buffers, event iteration, continuous mode."""
        import numpy as np

        md, v3 = self.plan.md, self.plan.version == 3
        p = "fmi3" if v3 else "fmi2"
        nx, nz = int(md.numberOfContinuousStates or 0), int(md.numberOfEventIndicators or 0)
        self._nx, self._nz = nx, nz
        ptr = ctypes.POINTER(ctypes.c_double)
        # x, stage, k1..k4, event indicators: allocated once, pointers taken once
        self._xa = [np.zeros(max(nx, 1)) for _ in range(6)]
        self._xp = [a.ctypes.data_as(ptr) for a in self._xa]
        self._z = np.zeros(max(nz, 1))
        self._zp = self._z.ctypes.data_as(ptr)
        self._zpos = np.zeros(max(nz, 1), dtype=bool)
        self._set_time = self._raw(f"{p}SetTime")
        self._set_x = self._raw(f"{p}SetContinuousStates")
        self._get_x = self._raw(f"{p}GetContinuousStates")
        self._get_dx = self._raw(f"{p}GetContinuousStateDerivatives" if v3 else
                                 f"{p}GetDerivatives")
        self._get_z = self._raw(f"{p}GetEventIndicators")
        self._completed = self._raw(f"{p}CompletedIntegratorStep")
        flag = ctypes.c_bool if v3 else ctypes.c_int
        self._me_flags = (flag(), flag())
        self._me_flag_refs = tuple(ctypes.byref(f) for f in self._me_flags)
        self._next_event = float("inf")
        self._event_iteration(t0, enter=False)

    def _me_call(self, fn: Any, name: str, *args: Any) -> None:
        st = fn(self._handle, *args)
        if st > 1:
            self._status_failed(name, st, "model-exchange integration")

    def _event_iteration(self, t: float, *, enter: bool = True) -> None:
        """Event mode at t: update the discrete states until settled, back to continuous mode."""
        inst, v3 = self._instance, self.plan.version == 3
        p = "fmi3" if v3 else "fmi2"
        self._time = t
        if enter:
            self._fmi(StepFailed, f"{p}EnterEventMode", inst.enterEventMode)
        update = inst.updateDiscreteStates if v3 else inst.newDiscreteStates
        name = "fmi3UpdateDiscreteStates" if v3 else "fmi2NewDiscreteStates"
        for _ in range(1000):
            needed, terminate, _, _, next_defined, next_time = self._fmi(StepFailed, name, update)
            if terminate:
                raise StepFailed(
                    f"FMU '{self.fmu_name}': {name} at t={t:.9g} s asked to terminate the "
                    f"simulation{self._log_text()}",
                    fix="see the FMU's documentation for when it stops",
                )
            if not needed:
                break
        else:
            raise StepFailed(f"FMU '{self.fmu_name}': the event iteration at t={t:.9g} s did "
                             f"not settle after 1000 calls of {name}{self._log_text()}",
                             fix="check the FMU's discrete equations")
        self._next_event = float(next_time) if next_defined else float("inf")
        self._fmi(StepFailed, f"{p}EnterContinuousTimeMode", inst.enterContinuousTimeMode)
        if self._nx:  # the event may have re-initialized the states
            self._me_call(self._get_x, f"{p}GetContinuousStates", self._xp[0], self._nx)
        if self._nz:
            self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
            self._zpos[:] = self._z > 0

    def _integrate(self, t: float, dt: float) -> None:
        """RK4 over [t, t + dt] in equal sub-steps; a time event ends a sub-step early."""
        p = self.params
        n = max(1, math.ceil(dt / p.step_size - 1e-9)) if p.step_size > 0 else p.substeps
        h = dt / n
        tt = t
        for k in range(1, n + 1):
            target = t + dt if k == n else t + k * h
            eps = 1e-12 * max(1.0, abs(target))
            while tt < target:
                end = target
                if self._next_event < target - eps:  # a time event inside this sub-step
                    end = max(self._next_event, tt)
                event = False
                if end > tt:
                    self._rk4(tt, end - tt)
                    event = self._completed_step(end)
                if event or end >= self._next_event - eps:
                    self._event_iteration(end)
                    if self._next_event <= end + eps:  # an FMU that repeats its event time
                        self._next_event = float("inf")
                tt = end

    def _rk4(self, t: float, h: float) -> None:
        """One classical RK4 step of the continuous states from t to t + h."""
        import numpy as np

        v3, nx = self.plan.version == 3, self._nx
        p = "fmi3" if v3 else "fmi2"
        call, settime, setx, getdx = self._me_call, self._set_time, self._set_x, self._get_dx
        if not nx:
            call(settime, f"{p}SetTime", t + h)
            return
        dname = f"{p}GetContinuousStateDerivatives" if v3 else f"{p}GetDerivatives"
        x, s, k1, k2, k3, k4 = self._xa
        xp, sp, k1p, k2p, k3p, k4p = self._xp
        call(settime, f"{p}SetTime", t)
        call(setx, f"{p}SetContinuousStates", xp, nx)
        call(getdx, dname, k1p, nx)
        np.multiply(k1, h / 2, out=s)
        s += x
        call(settime, f"{p}SetTime", t + h / 2)
        call(setx, f"{p}SetContinuousStates", sp, nx)
        call(getdx, dname, k2p, nx)
        np.multiply(k2, h / 2, out=s)
        s += x
        call(setx, f"{p}SetContinuousStates", sp, nx)
        call(getdx, dname, k3p, nx)
        np.multiply(k3, h, out=s)
        s += x
        call(settime, f"{p}SetTime", t + h)
        call(setx, f"{p}SetContinuousStates", sp, nx)
        call(getdx, dname, k4p, nx)
        k2 += k3
        k2 *= 2.0
        k1 += k2
        k1 += k4
        k1 *= h / 6
        x += k1
        call(setx, f"{p}SetContinuousStates", xp, nx)

    def _completed_step(self, t: float) -> bool:
        """completedIntegratorStep and the event indicators at t; True if an event is due."""
        v3 = self.plan.version == 3
        p = "fmi3" if v3 else "fmi2"
        self._time = t
        self._me_call(self._completed, f"{p}CompletedIntegratorStep", True if v3 else 1,
                      *self._me_flag_refs)
        enter, terminate = (bool(f.value) for f in self._me_flags)
        if terminate:
            raise StepFailed(
                f"FMU '{self.fmu_name}': {p}CompletedIntegratorStep at t={t:.9g} s asked to "
                f"terminate the simulation{self._log_text()}",
                fix="see the FMU's documentation for when it stops",
            )
        if self._nz:
            self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
            now = self._z > 0
            crossed = (now != self._zpos)[: self._nz]
            if crossed.any():
                i = int(crossed.argmax())
                raise StepFailed(
                    f"FMU '{self.fmu_name}': state event at t={t:.9g} s (event indicator "
                    f"{i} changed sign); moonpool's model-exchange integrator (fixed-step "
                    f"RK4) does not locate or handle state events{self._log_text()}",
                    fix="use the FMU's co-simulation interface (fmi_type = \"cs\"), or a "
                    "model-exchange FMU without state events",
                )
        return enter

    # -- variable access

    def _set(self, variables: list[_Var], values: list[Any]) -> None:
        inst, v3 = self._instance, self.plan.version == 3
        by_type: dict[str, tuple[list[int], list[Any]]] = {}
        for var, value in zip(variables, values):
            vrs, vals = by_type.setdefault(var.type, ([], []))
            vrs.append(var.vr)
            vals.append(value)
        for typ, (vrs, vals) in by_type.items():
            if typ in _FLOAT_TYPES:
                (getattr(inst, f"set{typ}") if v3 else inst.setReal)(vrs, [float(v) for v in vals])
            elif typ in _INT_TYPES:
                name = typ if v3 and typ != "Enumeration" else ("Int64" if v3 else "Integer")
                (getattr(inst, f"set{name}") if v3 else inst.setInteger)(
                    vrs, [int(round(v)) for v in vals])
            elif typ == "Boolean":
                inst.setBoolean(vrs, [bool(v) for v in vals])
            elif typ == "String":
                inst.setString(vrs, [str(v) for v in vals])

    # -- errors

    def _log_text(self) -> str:
        return f"; FMU log: {' | '.join(self._log)}" if self._log else ""

    def _error(self, kind: type, what: str, exc: BaseException, fix: str) -> Exception:
        return kind(f"FMU '{self.fmu_name}': {what}: {exc}{self._log_text()}", fix=fix)

    def _fmi(self, kind: type, function: str, fn: Any, *args: Any) -> Any:
        """Call into the FMU; translate fmpy's exceptions into ``kind`` (a ComponentError)."""
        try:
            return fn(*args)
        except (StepFailed, ParameterError):
            raise
        except Exception as exc:
            from fmpy.fmi1 import FMICallException

            if isinstance(exc, FMICallException):
                label = ["ok", "warning", "discard", "error", "fatal", "pending"][exc.status] \
                    if 0 <= exc.status < 6 else str(exc.status)
                message = (f"FMU '{self.fmu_name}': {exc.function} returned {label} "
                           f"(during {function}, t={self._time:.9g} s){self._log_text()}")
                fix = ("check the FMU's parameters and start values" if kind is ParameterError
                       else "see the FMU's log above; check its inputs and parameters")
                raise kind(message, fix=fix) from exc
            raise self._error(kind, f"{function} failed", exc,
                              "check the FMU (fmpy validate FILE) and its parameters") from exc
