"""Model exchange: moonpool integrates the FMU's continuous states.

Call order (component.py): ``ModelExchange(fmu, params)``; after
exitInitializationMode :meth:`ModelExchange.start` (event iteration, continuous-time
mode, the solver); per communication step the compiled inputs call
:meth:`ModelExchange.input_changed` when a value changed (a discrete input or a
tunable parameter first puts the FMU in event mode), then :meth:`ModelExchange.step`.

Two solvers (parameter ``solver``):

- ``cvode`` (default): the variable-step, variable-order BDF of SUNDIALS CVODE with a
  dense direct linear solver, through fmpy's bundled bindings
  (:class:`fmpy.sundials.CVodeSolver`, the solver ``fmpy.simulate_fmu`` uses),
  relative tolerance ``rtol``, absolute tolerance ``rtol`` times each state's nominal,
  largest step ``max_step``. State events are located by CVODE's root finding on the
  event indicators z_i(t, x) (a sign change of any z_i); the solver is re-initialised
  after every event and whenever an input changed (a step in u is a discontinuity of
  dx/dt = f(t, x, u)).
- ``rk4``: the classical fixed-step Runge-Kutta, sub-steps no longer than
  ``step_size`` (or ``substeps`` per communication step); a state event is located
  by bisection of the sub-step (re-integrating from its start) to 1e-12 s.

Both follow the FMI event protocol (FMI 2.0 and 3.0): time events (the integration
stops exactly at ``nextEventTime``), state events, step events
(``completedIntegratorStep`` asks for event mode), event iteration
(``fmi2NewDiscreteStates`` / ``fmi3UpdateDiscreteStates`` until no new discrete
states are needed), the states re-read after every event. An FMU that asks to
terminate raises :class:`~.instance.FmuTerminated`.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

from ..sdk.errors import StepFailed
from .instance import FmuInstance


class _HeldInputs:
    """fmpy's solver asks its input object for values at t: moonpool's inputs are held
    over the communication step (and set by the compiled I/O), so nothing to do."""

    @staticmethod
    def apply(*_a: Any, **_k: Any) -> None:
        return None


class ModelExchange:
    """The :class:`~.stepper.Stepper` of a model-exchange FMU (see the module's docstring)."""

    def __init__(self, fmu: FmuInstance, solver: str = "cvode", rtol: float = 1e-6,
                 max_step: float = 0.0, step_size: float = 0.001, substeps: int = 1) -> None:
        self.fmu = fmu
        self._handle = fmu.handle
        self.solver_name = solver
        self.rtol = rtol
        self.max_step = max_step
        self.step_size = step_size
        self.substeps = substeps
        self._in_event_mode = False
        self._inputs_changed = False
        self._initializing = True  # until start(): inputs go in initialization mode
        self._solver: Any = None
        self.events: list[tuple[float, str]] = []
        """(t, kind) of the last 100 events handled: "time", "state", "step", "input"."""

    # -- set up

    def start(self, t0: float) -> None:
        """After exitInitializationMode (event mode): buffers, event iteration, continuous mode."""
        import numpy as np

        fmu = self.fmu
        md, v3 = fmu.model.md, fmu.v3
        p = "fmi3" if v3 else "fmi2"
        nx, nz = int(md.numberOfContinuousStates or 0), int(md.numberOfEventIndicators or 0)
        self._nx, self._nz = nx, nz
        ptr = ctypes.POINTER(ctypes.c_double)
        # x, stage, k1..k4, x at the sub-step's start: allocated once, pointers taken once
        self._xa = [np.zeros(max(nx, 1)) for _ in range(7)]
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
        me = md.modelExchange
        self._needs_completed = bool(getattr(me, "needsCompletedIntegratorStep", False)) if v3 \
            else not bool(getattr(me, "completedIntegratorStepNotNeeded", False))
        flag = ctypes.c_bool if v3 else ctypes.c_int
        self._me_flags = (flag(), flag())
        self._me_flag_refs = tuple(ctypes.byref(f) for f in self._me_flags)
        self._next_event = float("inf")
        self._initializing = False
        self._event_iteration(t0, enter=False)
        if self.solver_name == "cvode" and (nx or nz):
            self._solver = self._make_cvode(t0)

    def _make_cvode(self, t0: float) -> Any:
        from fmpy.sundials import CVodeSolver

        inst, v3 = self.fmu.instance, self.fmu.v3
        return self.fmu.call(
            StepFailed, "CVODE set-up", CVodeSolver, self._nx, self._nz,
            inst.getContinuousStates, inst.setContinuousStates,
            inst.getContinuousStateDerivatives if v3 else inst.getDerivatives,
            inst.getEventIndicators, inst.getNominalsOfContinuousStates, inst.setTime,
            _HeldInputs(), t0, self.max_step if self.max_step > 0 else float("inf"), self.rtol,
            1_000_000)

    def _me_call(self, fn: Any, name: str, *args: Any) -> None:
        st = fn(self._handle, *args)
        if st > 1:
            self.fmu.status_failed(name, st, "model-exchange integration")

    def _note(self, t: float, kind: str) -> None:
        self.events.append((t, kind))
        del self.events[:-100]

    # -- FMU state

    def snapshot(self, t: float) -> tuple[float, float]:
        """Before the FMU state is taken at t: re-initialise the solver there (so that a
        run restored from this state repeats this one exactly); the bookkeeping to keep
        with the state: (t, next time event)."""
        self._reset(t)
        return (t, self._next_event)

    def restored(self, saved: tuple[float, float]) -> None:
        """After an FMU state was set: states and indicators re-read, solver restarted."""
        t, self._next_event = saved
        p = "fmi3" if self.fmu.v3 else "fmi2"
        self._in_event_mode = False
        self._inputs_changed = False
        if self._nx:
            self._me_call(self._get_x, f"{p}GetContinuousStates", self._xp[0], self._nx)
        if self._nz:
            self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
            self._zpos[:] = self._z > 0
        self._reset(t)

    # -- inputs

    def input_changed(self, discrete: bool) -> None:
        """Called by the compiled inputs before setting a changed value: a discrete input
        or a tunable parameter may only be set in event mode, so enter it (once)."""
        if self._initializing:
            return
        self._inputs_changed = True
        if discrete and not self._in_event_mode:
            p = "fmi3" if self.fmu.v3 else "fmi2"
            self.fmu.call(StepFailed, f"{p}EnterEventMode", self.fmu.instance.enterEventMode)
            self._in_event_mode = True

    # -- events

    def _event_iteration(self, t: float, *, enter: bool = True) -> None:
        """Event mode at t: update the discrete states until settled, back to continuous mode."""
        fmu = self.fmu
        inst, v3 = fmu.instance, fmu.v3
        p = "fmi3" if v3 else "fmi2"
        fmu.time = t
        if enter and not self._in_event_mode:
            fmu.call(StepFailed, f"{p}EnterEventMode", inst.enterEventMode)
        self._in_event_mode = False
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

    def _completed_step(self, t: float) -> bool:
        """completedIntegratorStep at t (if the FMU needs it); True if it asks for an event."""
        if not self._needs_completed:
            return False
        fmu = self.fmu
        p = "fmi3" if fmu.v3 else "fmi2"
        fmu.time = t
        self._me_call(self._completed, f"{p}CompletedIntegratorStep", True if fmu.v3 else 1,
                      *self._me_flag_refs)
        enter, terminate = (bool(f.value) for f in self._me_flags)
        if terminate:
            raise fmu.terminated(f"{p}CompletedIntegratorStep", t)
        return enter

    # -- stepping

    def step(self, t_ns: int, dt_ns: int) -> None:
        """Integrate over [t, t + dt] (s), handling every event on the way."""
        t, t_end = t_ns * 1e-9, (t_ns + dt_ns) * 1e-9
        if self._in_event_mode:  # discrete inputs were set at t: event iteration first
            self._note(t, "input")
            self._event_iteration(t)
            self._reset(t)
        elif self._inputs_changed:
            self._reset(t)
        self._inputs_changed = False
        if self.solver_name == "cvode":
            self._step_cvode(t, t_end)
        else:
            self._step_rk4(t, t_end, dt_ns * 1e-9)

    def _reset(self, t: float) -> None:
        if self._solver is not None:
            self.fmu.call(StepFailed, "CVODE re-initialisation", self._solver.reset, t)

    def _time_event_at(self, tt: float, target: float) -> tuple[float, bool]:
        """The end of the next integration piece from tt: target, or the time event first."""
        eps = 1e-12 * max(1.0, abs(target))
        if self._next_event < target - eps:
            return max(self._next_event, tt), True
        return target, self._next_event <= target + eps

    def _step_cvode(self, t: float, t_end: float) -> None:
        fmu = self.fmu
        p = "fmi3" if fmu.v3 else "fmi2"
        eps = 1e-12 * max(1.0, abs(t_end))
        tt = t
        while tt < t_end - eps:
            end, time_event = self._time_event_at(tt, t_end)
            state_event = False
            if self._solver is not None:
                fmu.time = tt
                try:
                    state_event, _roots, reached = self._solver.step(tt, end)
                except RuntimeError as exc:
                    raise fmu.error(StepFailed, f"CVODE failed at t={tt:.9g} s", exc,
                                    "lower rtol or max_step, or check the FMU's equations") \
                        from exc
                if state_event:
                    time_event = time_event and abs(reached - end) <= eps
                    end = reached
            self._me_call(self._set_time, f"{p}SetTime", end)
            step_event = self._completed_step(end)
            if state_event or time_event or step_event:
                self._note(end, "state" if state_event else "time" if time_event else "step")
                self._event_iteration(end)
                if self._next_event <= end + eps:  # an FMU that repeats its event time
                    self._next_event = float("inf")
                self._reset(end)
            tt = end

    def _step_rk4(self, t: float, t_end: float, dt: float) -> None:
        n = (max(1, math.ceil(dt / self.step_size - 1e-9)) if self.step_size > 0
             else self.substeps)
        h = dt / n
        tt = t
        for k in range(1, n + 1):
            target = t_end if k == n else t + k * h
            eps = 1e-12 * max(1.0, abs(target))
            while tt < target - eps * 0.5:
                end, time_event = self._time_event_at(tt, target)
                state_event = False
                if end > tt:
                    end, state_event = self._rk4_located(tt, end - tt)
                    if state_event:
                        time_event = False
                step_event = self._completed_step(end)
                if state_event or time_event or step_event:
                    self._note(end, "state" if state_event else "time" if time_event else "step")
                    self._event_iteration(end)
                    if self._next_event <= end + eps:
                        self._next_event = float("inf")
                tt = end

    def _rk4_located(self, t: float, h: float) -> tuple[float, bool]:
        """One RK4 step from t over h; if an event indicator changes sign on it, the step
        is cut at the crossing (bisection to 1e-12 s). Returns (end time, state event)."""
        if not self._nx:
            self._rk4(t, h)
            return t + h, False
        x, x0 = self._xa[0], self._xa[6]
        x0[:] = x
        self._rk4(t, h)
        if not self._nz or not self._crossed():
            return t + h, False
        lo, hi = 0.0, h
        while hi - lo > 1e-12:
            mid = 0.5 * (lo + hi)
            x[:] = x0
            self._rk4(t, mid)
            if self._crossed():
                hi = mid
            else:
                lo = mid
        x[:] = x0
        self._rk4(t, hi)
        return t + hi, True

    def _crossed(self) -> bool:
        p = "fmi3" if self.fmu.v3 else "fmi2"
        self._me_call(self._get_z, f"{p}GetEventIndicators", self._zp, self._nz)
        return bool(((self._z > 0) != self._zpos)[: self._nz].any())

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
        x, s, k1, k2, k3, k4 = self._xa[:6]
        xp, sp, k1p, k2p, k3p, k4p = self._xp[:6]
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
