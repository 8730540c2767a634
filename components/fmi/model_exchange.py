"""Model exchange: moonpool integrates the FMU's continuous states.

A fixed-step classical RK4 (``step_size``, or ``substeps`` per communication step;
the inputs held over the step), following the FMI event protocol: event iteration
after initialization, ``completedIntegratorStep`` after every sub-step, time events (a
sub-step ends exactly at the event time) and step events handled; a state event (an
event indicator changing sign) fails the step with a clear error, as does a request
to terminate.

The state, stage, k1..k4 and event-indicator buffers are numpy arrays allocated once
at :meth:`ModelExchange.start`, passed to the FMI functions by pointers taken once.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

from ..sdk.errors import StepFailed
from .instance import FmuInstance


class ModelExchange:
    """The :class:`~.stepper.Stepper` of a model-exchange FMU: RK4 sub-steps no longer
    than ``step_size`` (s), or ``substeps`` of them when ``step_size`` is 0."""

    def __init__(self, fmu: FmuInstance, step_size: float, substeps: int) -> None:
        self.fmu = fmu
        self._handle = fmu.handle
        self.step_size = step_size
        self.substeps = substeps

    def start(self, t0: float) -> None:
        """After exitInitializationMode (event mode): buffers, event iteration, continuous mode."""
        import numpy as np

        fmu = self.fmu
        md, v3 = fmu.model.md, fmu.v3
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
        self._set_time = fmu.raw(f"{p}SetTime")
        self._set_x = fmu.raw(f"{p}SetContinuousStates")
        self._get_x = fmu.raw(f"{p}GetContinuousStates")
        self._get_dx = fmu.raw(f"{p}GetContinuousStateDerivatives" if v3 else
                               f"{p}GetDerivatives")
        self._get_z = fmu.raw(f"{p}GetEventIndicators")
        self._completed = fmu.raw(f"{p}CompletedIntegratorStep")
        flag = ctypes.c_bool if v3 else ctypes.c_int
        self._me_flags = (flag(), flag())
        self._me_flag_refs = tuple(ctypes.byref(f) for f in self._me_flags)
        self._next_event = float("inf")
        self._event_iteration(t0, enter=False)

    def _me_call(self, fn: Any, name: str, *args: Any) -> None:
        st = fn(self._handle, *args)
        if st > 1:
            self.fmu.status_failed(name, st, "model-exchange integration")

    def _event_iteration(self, t: float, *, enter: bool = True) -> None:
        """Event mode at t: update the discrete states until settled, back to continuous mode."""
        fmu = self.fmu
        inst, v3 = fmu.instance, fmu.v3
        p = "fmi3" if v3 else "fmi2"
        fmu.time = t
        if enter:
            fmu.call(StepFailed, f"{p}EnterEventMode", inst.enterEventMode)
        update = inst.updateDiscreteStates if v3 else inst.newDiscreteStates
        name = "fmi3UpdateDiscreteStates" if v3 else "fmi2NewDiscreteStates"
        for _ in range(1000):
            needed, terminate, _, _, next_defined, next_time = fmu.call(StepFailed, name, update)
            if terminate:
                raise fmu.terminated(name, t)
            if not needed:
                break
        else:
            raise StepFailed(f"FMU '{fmu.name}': the event iteration at t={t:.9g} s did "
                             f"not settle after 1000 calls of {name}{fmu.log_text()}",
                             fix="check the FMU's discrete equations")
        self._next_event = float(next_time) if next_defined else float("inf")
        fmu.call(StepFailed, f"{p}EnterContinuousTimeMode", inst.enterContinuousTimeMode)
        if self._nx:  # the event may have re-initialized the states
            self._me_call(self._get_x, f"{p}GetContinuousStates", self._xp[0], self._nx)
        if self._nz:
            self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
            self._zpos[:] = self._z > 0

    def step(self, t_ns: int, dt_ns: int) -> None:
        """RK4 over [t, t + dt] in equal sub-steps; a time event ends a sub-step early."""
        t, dt = t_ns * 1e-9, dt_ns * 1e-9
        n = (max(1, math.ceil(dt / self.step_size - 1e-9)) if self.step_size > 0
             else self.substeps)
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

        v3, nx = self.fmu.v3, self._nx
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
        fmu = self.fmu
        v3 = fmu.v3
        p = "fmi3" if v3 else "fmi2"
        fmu.time = t
        self._me_call(self._completed, f"{p}CompletedIntegratorStep", True if v3 else 1,
                      *self._me_flag_refs)
        enter, terminate = (bool(f.value) for f in self._me_flags)
        if terminate:
            raise fmu.terminated(f"{p}CompletedIntegratorStep", t)
        if self._nz:
            self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
            now = self._z > 0
            crossed = (now != self._zpos)[: self._nz]
            if crossed.any():
                i = int(crossed.argmax())
                raise StepFailed(
                    f"FMU '{fmu.name}': state event at t={t:.9g} s (event indicator "
                    f"{i} changed sign); moonpool's model-exchange integrator (fixed-step "
                    f"RK4) does not locate or handle state events{fmu.log_text()}",
                    fix="use the FMU's co-simulation interface (fmi_type = \"cs\"), or a "
                    "model-exchange FMU without state events",
                )
        return enter
