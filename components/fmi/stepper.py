"""The stepping interface shared by co-simulation and model exchange.

A :class:`Stepper` advances an initialized :class:`~.instance.FmuInstance` over one
communication step; the inputs are already set (and held over the step) and the
outputs are read after it, both by the compiled I/O (``mapping.py``). Co-simulation
(``cosimulation.py``) lets the FMU's own solver do it (``doStep``); model exchange
(``model_exchange.py``) integrates the FMU's derivatives in moonpool. Another way of
stepping (a variable-step integrator, say) is one more class with these two methods,
chosen in :func:`~.component.make_stepper`.
"""

from __future__ import annotations

from typing import Protocol


class Stepper(Protocol):
    def start(self, t0: float) -> None:
        """After exitInitializationMode at t0 (s), before the first step (model
        exchange: the FMU is in event mode and must be brought to continuous-time mode)."""

    def step(self, t_ns: int, dt_ns: int) -> None:
        """Advance the FMU from t_ns to t_ns + dt_ns (ns); StepFailed when it cannot.
        Keeps the instance's ``time`` (s) at the time being computed."""
