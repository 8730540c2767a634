"""Co-simulation: the FMU steps itself (``fmi2DoStep`` / ``fmi3DoStep``).

An FMU that cannot handle a variable communication step size
(``canHandleVariableCommunicationStepSize = false``) gets a constant step: the first
step's size; a later step that is a whole multiple of it is subdivided, any other is
refused with StepFailed.
"""

from __future__ import annotations

import ctypes

from ..sdk.errors import StepFailed
from .instance import FmuInstance


class CoSimulation:
    """The :class:`~.stepper.Stepper` of a co-simulation FMU."""

    def __init__(self, fmu: FmuInstance) -> None:
        self.fmu = fmu
        attrs = fmu.attributes()
        self.variable_step = bool(getattr(attrs, "canHandleVariableCommunicationStepSize", True))
        """False: constant steps only (see the module's docstring)."""
        self._fixed_dt_ns: int | None = None
        self._handle = fmu.handle
        self._name = "fmi3DoStep" if fmu.v3 else "fmi2DoStep"
        self._do_step_fn = fmu.raw(self._name)
        # after t and dt: noSetFMUStatePriorToCurrentPoint, and in FMI 3 the flags
        # eventHandlingNeeded, terminateSimulation, earlyReturn and lastSuccessfulTime
        if fmu.v3:
            flags = [ctypes.c_bool() for _ in range(3)]
            self._last_time = ctypes.c_double()
            self._flags = flags
            self._step_args: tuple = (True, *(ctypes.byref(f) for f in flags),
                                      ctypes.byref(self._last_time))
            self._terminate: ctypes.c_bool | None = flags[1]
        else:
            self._step_args = (1,)
            self._terminate = None

    def start(self, t0: float) -> None:
        pass

    def step(self, t_ns: int, dt_ns: int) -> None:
        if self.variable_step:  # _do_step inlined: one Python call per step, not two
            t = t_ns * 1e-9
            st = self._do_step_fn(self._handle, t, dt_ns * 1e-9, *self._step_args)
            if st > 1:
                self._failed(st, t)
            if self._terminate is not None and self._terminate.value:
                raise self.fmu.terminated(self._name, self._last_time.value)
        else:
            self._fixed_steps(t_ns, dt_ns)

    def _do_step(self, t: float, dt: float) -> None:
        """One doStep from t over dt (s)."""
        st = self._do_step_fn(self._handle, t, dt, *self._step_args)
        if st > 1:
            self._failed(st, t)
        if self._terminate is not None and self._terminate.value:
            raise self.fmu.terminated(self._name, self._last_time.value)

    def _failed(self, status: int, t: float) -> None:
        """doStep returned discard or worse. FMI 2: discard with fmi2Terminated true is
        the FMU asking to terminate (fmi2GetBooleanStatus); else a failure with its log."""
        fmu = self.fmu
        if status == 2 and not fmu.v3:
            terminated, last = ctypes.c_int(0), ctypes.c_double(t)
            if fmu.raw("fmi2GetBooleanStatus")(self._handle, 3, ctypes.byref(terminated)) == 0 \
                    and terminated.value:  # 3 = fmi2Terminated
                fmu.raw("fmi2GetRealStatus")(self._handle, 2, ctypes.byref(last))  # 2 = last time
                raise fmu.terminated("fmi2DoStep returned discard, fmi2Terminated", last.value)
            raise StepFailed(
                f"FMU '{fmu.name}': fmi2DoStep returned discard at t={t:.9g} s (the FMU "
                f"could not complete the step and did not ask to terminate){fmu.log_text()}",
                fix="see the FMU's log above; check its inputs, parameters and step size")
        fmu.status_failed(self._name, status, "a step")

    def _fixed_steps(self, t_ns: int, dt_ns: int) -> None:
        """canHandleVariableCommunicationStepSize = false: whole multiples of the first step."""
        n = 1
        if self._fixed_dt_ns is None:
            self._fixed_dt_ns = dt_ns
        elif dt_ns != self._fixed_dt_ns:
            if dt_ns % self._fixed_dt_ns:
                raise StepFailed(
                    f"FMU '{self.fmu.name}' cannot handle a variable communication step "
                    f"size (canHandleVariableCommunicationStepSize = false): step of "
                    f"{dt_ns} ns after steps of {self._fixed_dt_ns} ns",
                    fix="step it at a constant rate (no offset changes), or at a rate whose "
                    "period is a whole multiple of its first step",
                )
            n = dt_ns // self._fixed_dt_ns
            dt_ns = self._fixed_dt_ns
        for k in range(n):
            self.fmu.time = (t_ns + k * dt_ns) * 1e-9
            self._do_step(self.fmu.time, dt_ns * 1e-9)
