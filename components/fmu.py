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
with a fixed-step RK4 (``step_size`` or ``substeps`` per communication step); events
are not handled (the FMU must not have event indicators or time events).

FMI failures (fmpy raises with the FMI status) become StepFailed / ParameterError
naming the FMU file, the FMI function and the FMU's last log messages.
"""

from __future__ import annotations

import ctypes
import difflib
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from . import wire
from .component import Component, Port, param
from .errors import ParameterError, PortError, StepFailed

_FLOAT_TYPES = ("Real", "Float64", "Float32")
_INT_TYPES = ("Integer", "Enumeration", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
              "Int64", "UInt64")
_NUMERIC_CPP = {
    FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT,
    FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
    FieldDescriptor.CPPTYPE_BOOL,
}
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
        0.0, "model exchange: RK4 step (0: communication step / substeps)", unit="s"
    )
    substeps: int = param(1, "model exchange: RK4 steps per communication step (if no step_size)")
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
    if kind == "me":
        raise _fail(fmu, "has only a model-exchange interface (or fmi_type = \"me\"), which "
                    "moonpool's fmu component does not integrate yet",
                    "use an FMU with co-simulation (most tools export both)")
    if kind == "me" and getattr(md, "numberOfEventIndicators", 0):  # pragma: no cover
        raise _fail(fmu, f"has {md.numberOfEventIndicators} event indicators; moonpool's "
                    "model-exchange integrator does not handle events",
                    "use the FMU's co-simulation interface or an FMU without events")
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
            raise _fail(fmu, f"{where} must be a table with type and fields", f"write {where} = {example}")
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
        self._in = [(pp, [(b.key, b.path, b.var) for b in pp.bindings]) for pp in plan.inputs]
        self._outs = [(pp, [b.var for b in pp.bindings]) for pp in plan.outputs]
        out_vars = {b.var.name: b.var for pp in plan.outputs for b in pp.bindings}
        self._read = list(out_vars.values())
        self._slot = {name: i for i, name in enumerate(out_vars)}
        self._time = 0.0

    def _instantiate(self, attrs: Any) -> Any:
        plan = self.plan
        md = plan.md
        kw = dict(guid=md.guid, unzipDirectory=self._dir, modelIdentifier=attrs.modelIdentifier,
                  instanceName=self.name or "fmu")
        if plan.version == 3:
            from fmpy.fmi3 import FMU3Model, FMU3Slave, fmi3LogMessageCallback  # noqa: F401

            inst = (FMU3Slave if plan.kind == "cs" else FMU3Model)(**kw)
            if plan.kind == "me":
                inst.instantiate(loggingOn=self.params.log_fmu, logMessage=self._log3)
            else:
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
        label = ["ok", "warning", "discard", "error", "fatal", "pending"][status] \
            if 0 <= status < 6 else str(status)
        self._log.append(f"[{label}] {text}")
        del self._log[:-5]

    def _callbacks2(self) -> Any:
        from fmpy import calloc, free
        from fmpy.fmi2 import (
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
            fmi2CallbackLoggerTYPE,
        )

        def logger(env: Any, instance: Any, status: int, category: Any, message: Any) -> None:
            self._remember(status, message)

        cb = fmi2CallbackFunctions()
        cb.logger = fmi2CallbackLoggerTYPE(logger)
        cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
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
        if self.plan.version == 2:
            self._fmi(StepFailed, "fmi2SetupExperiment", inst.setupExperiment, None, t0)
            self._fmi(StepFailed, "fmi2EnterInitializationMode", inst.enterInitializationMode)
            self._fmi(StepFailed, "fmi2ExitInitializationMode", inst.exitInitializationMode)
            if self.plan.kind == "me":
                self._fmi(StepFailed, "fmi2NewDiscreteStates", inst.newDiscreteStates)
                self._fmi(StepFailed, "fmi2EnterContinuousTimeMode", inst.enterContinuousTimeMode)
        else:
            self._fmi(StepFailed, "fmi3EnterInitializationMode", inst.enterInitializationMode,
                      None, t0)
            self._fmi(StepFailed, "fmi3ExitInitializationMode", inst.exitInitializationMode)
            if self.plan.kind == "me":
                self._fmi(StepFailed, "fmi3UpdateDiscreteStates", inst.updateDiscreteStates)
                self._fmi(StepFailed, "fmi3EnterContinuousTimeMode", inst.enterContinuousTimeMode)
        if self.plan.kind == "me":
            import numpy as np

            n = self.plan.md.numberOfContinuousStates
            self._x = np.zeros(n)
            self._dx = np.zeros(n)
        return self._outputs(start_time_ns)

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        for pp, bindings in self._in:
            msg = inputs.get(pp.port.name)
            if msg is None:
                continue
            if pp.signals:
                got = {s.name: s.value for s in msg.signals}
                pairs = [(var, got[key]) for key, _, var in bindings if key in got]
            else:
                pairs = []
                for _, path, var in bindings:
                    value = msg
                    for part in path:
                        value = getattr(value, part)
                    pairs.append((var, value))
            if pairs:
                self._fmi(StepFailed, "set inputs", self._set,
                          [v for v, _ in pairs], [x for _, x in pairs])
        t, dt = t_ns * 1e-9, dt_ns * 1e-9
        if self.plan.kind == "cs":
            self._do_step(t_ns, dt_ns)
        else:
            self._integrate(t, dt)
        self._time = t + dt
        return self._outputs(t_ns + dt_ns)

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
            if getattr(self, "_dir", None):
                shutil.rmtree(self._dir, ignore_errors=True)
        return None

    # -- stepping

    def _do_step(self, t_ns: int, dt_ns: int) -> None:
        inst = self._instance
        n = 1
        if not self._variable_step:
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
        fn = "fmi3DoStep" if self.plan.version == 3 else "fmi2DoStep"
        for k in range(n):
            t = (t_ns + k * dt_ns) * 1e-9
            result = self._fmi(StepFailed, fn, inst.doStep, t, dt_ns * 1e-9)
            if self.plan.version == 3 and result is not None and result[1]:
                raise StepFailed(
                    f"FMU '{self.fmu_name}': {fn} at t={t:.9g} s asked to terminate the "
                    f"simulation{self._log_text()}",
                    fix="see the FMU's documentation for when it stops",
                )

    def _integrate(self, t: float, dt: float) -> None:
        """Fixed-step RK4 of the continuous states over [t, t + dt]."""
        p = self.params
        n = max(1, int(round(dt / p.step_size))) if p.step_size > 0 else p.substeps
        h = dt / n
        inst, x = self._instance, self._x
        v3 = self.plan.version == 3
        get_x = inst.getContinuousStates
        set_x = inst.setContinuousStates
        deriv = inst.getContinuousStateDerivatives if v3 else inst.getDerivatives
        self._fmi(StepFailed, "getContinuousStates", get_x, x, len(x))

        def f(tt: float, xx: Any) -> Any:
            inst.setTime(tt)
            set_x(xx, len(xx))
            deriv(self._dx, len(self._dx))
            return self._dx.copy()

        def rk4() -> None:
            nonlocal x
            tt = t
            for _ in range(n):
                k1 = f(tt, x)
                k2 = f(tt + h / 2, x + h / 2 * k1)
                k3 = f(tt + h / 2, x + h / 2 * k2)
                k4 = f(tt + h, x + h * k3)
                x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                tt += h
            inst.setTime(t + dt)
            set_x(x, len(x))
            self._x = x

        self._fmi(StepFailed, "model-exchange RK4 step (fmiSetTime/SetContinuousStates/"
                  "GetDerivatives)", rk4)

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

    def _get(self) -> list[float]:
        inst, v3 = self._instance, self.plan.version == 3
        out = [0.0] * len(self._read)
        groups: dict[str, list[int]] = {}
        for i, var in enumerate(self._read):
            groups.setdefault(var.type, []).append(i)
        for typ, idx in groups.items():
            vrs = [self._read[i].vr for i in idx]
            if typ in _FLOAT_TYPES:
                vals = (getattr(inst, f"get{typ}") if v3 else inst.getReal)(vrs)
            elif typ in _INT_TYPES:
                name = typ if v3 and typ != "Enumeration" else ("Int64" if v3 else "Integer")
                vals = (getattr(inst, f"get{name}") if v3 else inst.getInteger)(vrs)
            else:
                vals = inst.getBoolean(vrs)
            for i, v in zip(idx, vals):
                out[i] = v
        return out

    def _outputs(self, stamp_ns: int) -> dict[str, Any]:
        if not self._read:
            return {}
        values = self._fmi(StepFailed, "get outputs", self._get)
        slot = self._slot
        result = {}
        for pp, variables in self._outs:
            msg = pp.port.type()
            if pp.signals:
                for b in pp.bindings:
                    msg.signals.add(name=b.key, value=float(values[slot[b.var.name]]))
            else:
                for b in pp.bindings:
                    target = msg
                    for part in b.path[:-1]:
                        target = getattr(target, part)
                    value = values[slot[b.var.name]]
                    field = target.DESCRIPTOR.fields_by_name[b.path[-1]]
                    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
                        value = bool(value)
                    elif field.cpp_type not in (FieldDescriptor.CPPTYPE_DOUBLE,
                                                FieldDescriptor.CPPTYPE_FLOAT):
                        value = int(round(value))
                    setattr(target, b.path[-1], value)
            if "header" in msg.DESCRIPTOR.fields_by_name:
                msg.header.sim_time_ns = stamp_ns
            result[pp.port.name] = msg
        return result

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
