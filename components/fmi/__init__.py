"""The generic FMU component (short name ``fmu``): any FMI 2.0 / 3.0 FMU, no code.

Call order (the SDK calls the component; indented: what it calls in this package)::

    FmuComponent.ports_for(params)         moonpool check / describe: no binary loaded
      mapping.plan(params)                 FmuParameters -> Plan
        model.read_model(fmu, fmi_type)    modelDescription.xml: variables, interface,
                                           a binary for this platform
        (ports, bindings, start values)    the rig's mapping checked against it
    FmuComponent.configure(params)
      mapping.plan(params)                 as above
      FmuInstance(model).open(...)         unzip, instantiate (FMI 2 log routing)
      FmuInstance.set(start values)        profile [parameters], then start_values
      mapping.compile_outputs / _inputs    the per-step I/O, generated Python code
      make_stepper(fmu, params)            CoSimulation | ModelExchange (a Stepper)
    FmuComponent.initialize(t0, inputs)
      FmuInstance.initialize(t0, ...)      enter initialization mode, the inputs at t0
                                           set (compiled), exit initialization mode
      Stepper.start(t0)                    ME: event iteration, continuous-time mode
      read_outputs(t0)                     compiled
    FmuComponent.step(t, dt, inputs)       per step, nothing else:
      apply_inputs(inputs)                 compiled: set only values that changed
      Stepper.step(t, dt)                  CS: doStep (constant steps subdivided);
                                           ME: CVODE or RK4, time/state/step events
      (FMU asks to terminate)              self.finish(why): the run ends cleanly
      read_outputs(t + dt)                 compiled
    FmuComponent.terminate()
      FmuInstance.release()                terminate, free, remove the unzipped folder

Modules, one purpose each:

- ``parameters.py``: :class:`FmuParameters`, the rig's parameters;
- ``model.py``: the model description (:class:`~.model.Variable`, the interface, the
  platform's binary) and the FMI type tables (function suffix, C type, status names);
- ``mapping.py``: the mapping of message fields to variables, its checks, and the
  compiled get/set code;
- ``instance.py``: :class:`~.instance.FmuInstance`, one instantiated FMU: calls,
  error translation, the FMU's log, time;
- ``stepper.py``: the :class:`~.stepper.Stepper` interface (``start``, ``step``)
  shared by
- ``cosimulation.py``: :class:`~.cosimulation.CoSimulation` (``doStep``) and
- ``model_exchange.py``: :class:`~.model_exchange.ModelExchange` (CVODE or fixed-step
  RK4, with the FMI event protocol; discrete inputs set in event mode);
- ``component.py``: :class:`FmuComponent`, the SDK component tying them together (the
  rig's view of it is in its docstring and docs/third-party-fmus.md).

The mapping is compiled into Python code at configure; the per-step path is the
three calls above, with no lookups beyond them.
"""

from .component import FmuComponent
from .parameters import FmuParameters

__all__ = ["FmuComponent", "FmuParameters"]
