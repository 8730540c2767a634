"""One loaded FMU instance: unzip, instantiate, initialize, call, log, release.

:class:`FmuInstance` owns what every way of stepping shares: fmpy's instance and the
raw C functions behind it (:meth:`FmuInstance.raw`), the FMU's current time ``time``
(s, for error messages), its last log messages, the translation of FMI failures into
StepFailed / ParameterError naming the FMU file, the FMI function and the FMU's log
(:meth:`FmuInstance.call`, :meth:`FmuInstance.status_failed`), and setting variables
by name (start values, Signals inputs).
"""

from __future__ import annotations

import ctypes
import itertools
import shutil
import tempfile
import weakref
from typing import Any

from ..sdk.errors import ParameterError, StepFailed
from .model import FLOAT_TYPES, INT_TYPES, Model, Variable, status_label

# ----------------------------------------------------------------- FMI 2 logging
#
# fmpy's logger proxy (fmpy.logging.addLoggerProxy, which formats the printf-style
# arguments FMI 2 loggers receive) keeps ONE process-wide Python logger: the last one
# given to it. So every FMI 2 instance in the process (ours and fmpy's defaults) gets
# the same module-level logger, which routes a message by the callbacks'
# componentEnvironment to the instance that owns the FMU, and anything else to
# fmpy's default printer. It lives as long as the process: no dangling callback.

_LOG2_IDS = itertools.count(1)
_LOG2_TARGETS: dict[int, Any] = {}
_LOG2_FN: list[Any] = []


def _route_fmi2_log(env: Any, instance: Any, status: int, category: Any, message: Any) -> None:
    ref = _LOG2_TARGETS.get(env or 0)
    owner = ref() if ref is not None else None
    if owner is not None:
        owner.remember(status, message)
        return
    from fmpy.fmi1 import printLogMessage

    printLogMessage(env, instance, status, category, message)


def _fmi2_logger() -> Any:
    if not _LOG2_FN:
        from fmpy.fmi2 import fmi2CallbackLoggerTYPE

        _LOG2_FN.append(fmi2CallbackLoggerTYPE(_route_fmi2_log))
    return _LOG2_FN[0]


# ----------------------------------------------------------------- instance


class FmuTerminated(Exception):
    """The FMU asked to terminate the simulation (terminateSimulation, FMI 3
    terminateRequested, FMI 2 fmi2Discard with fmi2Terminated); not an error by itself:
    FmuComponent.step turns it into the end of the run."""

    def __init__(self, message: str, t: float) -> None:
        super().__init__(message)
        self.message = message
        self.t = t
        """The FMU's time when it asked, s."""


class FmuInstance:
    """An FMU of ``model`` unzipped into a temporary folder and instantiated
    (:meth:`open`) for the interface ``model.kind``; :meth:`release` frees it."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = model.path.name
        self.v3 = model.version == 3
        self.log: list[str] = []
        """The FMU's last 5 log messages, ``[status] text``."""
        self.time = 0.0
        """The FMU's time, s (as far as moonpool has stepped it; for error messages)."""
        self.instance: Any = None
        self.handle: Any = None
        self._dir: str | None = None
        self._log2_env: int | None = None

    # -- lifecycle

    def open(self, instance_name: str, logging_on: bool) -> None:
        """Unzip and instantiate (ParameterError when either fails)."""
        import fmpy

        model = self.model
        self._dir = tempfile.mkdtemp(prefix="moonpool-fmu-")
        try:
            fmpy.extract(str(model.path), self._dir)
        except Exception as exc:  # noqa: BLE001
            raise self.error(ParameterError, "cannot unzip the FMU", exc,
                             "check the file; re-export it") from exc
        self.instance = self.call(ParameterError, "instantiate", self._instantiate,
                                  instance_name, logging_on)
        self.handle = self.instance.component

    def attributes(self) -> Any:
        """The model description's CoSimulation or ModelExchange element."""
        md = self.model.md
        return md.coSimulation if self.model.kind == "cs" else md.modelExchange

    def _instantiate(self, instance_name: str, logging_on: bool) -> Any:
        model = self.model
        kw = dict(guid=model.md.guid, unzipDirectory=self._dir,
                  modelIdentifier=self.attributes().modelIdentifier, instanceName=instance_name)
        if self.v3:
            from fmpy.fmi3 import FMU3Model, FMU3Slave

            inst = (FMU3Slave if model.kind == "cs" else FMU3Model)(**kw)
            inst.instantiate(loggingOn=logging_on, logMessage=self._log3)
        else:
            from fmpy.fmi2 import FMU2Model, FMU2Slave

            inst = (FMU2Slave if model.kind == "cs" else FMU2Model)(**kw)
            inst.instantiate(loggingOn=logging_on, callbacks=self._callbacks2())
        return inst

    def initialize(self, t0: float, in_initialization_mode: Any = None) -> None:
        """Initialization mode at t0 (s) and out of it: the FMU is then in step mode
        (co-simulation) or event mode (model exchange). ``in_initialization_mode()``,
        if given, is called in initialization mode (moonpool sets the inputs at t0 there)."""
        inst = self.instance
        self.time = t0
        if not self.v3:
            self.call(StepFailed, "fmi2SetupExperiment", inst.setupExperiment, None, t0)
            self.call(StepFailed, "fmi2EnterInitializationMode", inst.enterInitializationMode)
            if in_initialization_mode is not None:
                in_initialization_mode()
            self.call(StepFailed, "fmi2ExitInitializationMode", inst.exitInitializationMode)
        else:
            self.call(StepFailed, "fmi3EnterInitializationMode", inst.enterInitializationMode,
                      None, t0)
            if in_initialization_mode is not None:
                in_initialization_mode()
            self.call(StepFailed, "fmi3ExitInitializationMode", inst.exitInitializationMode)

    def release(self) -> None:
        """Terminate and free the instance, remove the folder; never raises."""
        inst, self.instance = self.instance, None
        try:
            if inst is not None:
                try:
                    inst.terminate()
                finally:
                    inst.freeInstance()
        except Exception:  # noqa: BLE001 - releasing: the run's outcome is already known
            pass
        finally:
            _LOG2_TARGETS.pop(self._log2_env, None)
            if self._dir:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    # -- logging

    def _log3(self, env: Any, status: int, category: Any, message: Any) -> None:
        self.remember(status, message)

    def remember(self, status: int, message: Any) -> None:
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        self.log.append(f"[{status_label(status)}] {text}")
        del self.log[:-5]

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
        cb.componentEnvironment = env  # routes the FMU's messages back to this instance
        try:
            from fmpy.logging import addLoggerProxy

            addLoggerProxy(ctypes.byref(cb))  # formats the printf-style arguments
        except Exception:  # noqa: BLE001 - unformatted messages are still useful
            pass
        self._cb2 = cb  # keep alive as long as the instance
        return cb

    def log_text(self) -> str:
        return f"; FMU log: {' | '.join(self.log)}" if self.log else ""

    # -- calls

    def raw(self, name: str) -> Any:
        """The FMI C function as loaded by fmpy (argtypes set), without fmpy's wrapper."""
        inst = self.instance
        fn = getattr(inst, "_functions", {}).get(name)
        return fn if fn is not None else getattr(inst.dll, name)

    def status_failed(self, function: str, status: int, during: str) -> None:
        """Raise StepFailed for a raw FMI call that returned discard or worse."""
        raise StepFailed(
            f"FMU '{self.name}': {function} returned {status_label(status)} "
            f"(during {during}, t={self.time:.9g} s){self.log_text()}",
            fix="see the FMU's log above; check its inputs and parameters",
        )

    def terminated(self, function: str, t: float) -> FmuTerminated:
        """What the steppers raise for an FMU that asks to terminate the simulation at
        t (s); the component ends the run cleanly (or fails it, terminate_is_error)."""
        return FmuTerminated(
            f"FMU '{self.name}' requested termination at t={t:.9g} s ({function})"
            f"{self.log_text()}", t)

    def error(self, kind: type, what: str, exc: BaseException, fix: str) -> Exception:
        return kind(f"FMU '{self.name}': {what}: {exc}{self.log_text()}", fix=fix)

    def call(self, kind: type, function: str, fn: Any, *args: Any) -> Any:
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
                message = (f"FMU '{self.name}': {exc.function} returned {label} "
                           f"(during {function}, t={self.time:.9g} s){self.log_text()}")
                fix = ("check the FMU's parameters and start values" if kind is ParameterError
                       else "see the FMU's log above; check its inputs and parameters")
                raise kind(message, fix=fix) from exc
            raise self.error(kind, f"{function} failed", exc,
                             "check the FMU (fmpy validate FILE) and its parameters") from exc

    # -- variable access (by fmpy's API; the per-step I/O is compiled, see mapping.py)

    def set(self, variables: list[Variable], values: list[Any]) -> None:
        inst, v3 = self.instance, self.v3
        by_type: dict[str, tuple[list[int], list[Any]]] = {}
        for var, value in zip(variables, values):
            vrs, vals = by_type.setdefault(var.type, ([], []))
            vrs.append(var.vr)
            vals.append(value)
        for typ, (vrs, vals) in by_type.items():
            if typ in FLOAT_TYPES:
                (getattr(inst, f"set{typ}") if v3 else inst.setReal)(vrs, [float(v) for v in vals])
            elif typ in INT_TYPES:
                name = typ if v3 and typ != "Enumeration" else ("Int64" if v3 else "Integer")
                (getattr(inst, f"set{name}") if v3 else inst.setInteger)(
                    vrs, [int(round(v)) for v in vals])
            elif typ == "Boolean":
                inst.setBoolean(vrs, [bool(v) for v in vals])
            elif typ == "String":
                inst.setString(vrs, [str(v) for v in vals])
