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

Co-simulation FMUs are stepped with ``doStep`` (``cosimulation.py``); model-exchange
FMUs are integrated with CVODE or a fixed-step RK4 following the FMI event protocol
(``model_exchange.py``). The inputs visible at the start time are set in
initialization mode (``initial_inputs``); an FMU that asks to terminate ends the run
cleanly (``Component.finish``). FMU state: get/set/save/restore_state. The per-step work is compiled at configure
(``mapping.py``): inputs are set only when their values changed, outputs are read
with one FMI call per variable type.

FMI failures (an FMI status of discard or worse) become StepFailed / ParameterError
naming the FMU file, the FMI function and the FMU's last log messages.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sdk.component import Component, Port
from ..sdk.errors import ParameterError, PortError, StepFailed
from .cosimulation import CoSimulation
from .instance import FmuInstance, FmuTerminated
from .mapping import Plan, compile_inputs, compile_outputs, plan
from .model_exchange import ModelExchange
from .parameters import FmuParameters
from .stepper import Stepper


@dataclass(frozen=True)
class FmuState:
    """An FMU state taken by :meth:`FmuComponent.get_state`."""

    handle: Any
    """fmpy's fmi2FMUstate / fmi3FMUState pointer."""
    stepper: tuple[float, float]
    """(FMU time, s; model exchange: next time event, s) when it was taken."""


_STATE_HEADER = struct.Struct("<8sdd")
_STATE_MAGIC = b"mpfmust1"


def make_stepper(fmu: FmuInstance, params: FmuParameters) -> Stepper:
    """The way of stepping of the instance's interface (its model's ``kind``)."""
    if fmu.model.kind == "cs":
        return CoSimulation(fmu)
    return ModelExchange(fmu, params.solver, params.rtol, params.max_step, params.step_size,
                         params.substeps)


class FmuComponent(Component):
    """Any FMI 2.0 / 3.0 FMU, wired to messages by a mapping in the rig (no code)."""

    Parameters = FmuParameters

    @classmethod
    def ports_for(cls, params: FmuParameters) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
        p = plan(params)
        return (tuple(pp.port for pp in p.inputs), tuple(pp.port for pp in p.outputs))

    @classmethod
    def check_parameters(cls, params: FmuParameters) -> None:
        """A profile's ``[mesh]`` table names the hull files the FMU's mesh backend was
        built from (``files``, relative to the profile file): each must be a closed,
        outward-facing mesh (``dynamics.hull.read_hull``; docs/hydrodynamics.md, "Mesh
        backend"), or the run is refused here, as at the FMU's build."""
        mesh = (params.profile or {}).get("mesh")
        if mesh is None:
            return
        files = mesh.get("files") if isinstance(mesh, Mapping) else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ParameterError("profile: [mesh] files must be a list of mesh file paths",
                                 fix='write files = ["../meshes/HULL.obj"] (relative to the '
                                     'profile)')
        from ..dynamics.hull import read_hull

        base = Path(params.profile.get("file", ".")).parent
        for f in files:
            path = Path(f).expanduser()
            read_hull(path if path.is_absolute() else base / path)

    @classmethod
    def tunable_for(cls, params: FmuParameters) -> tuple[str, ...]:
        """The FMU's parameters of variability ``tunable`` (a [[scenario]] may set them)."""
        from .model import read_model

        model = read_model(Path(params.fmu), params.fmi_type)
        return tuple(v.name for v in model.variables.values()
                     if v.causality == "parameter" and v.variability == "tunable")

    def set_parameter(self, name: str, value: Any) -> None:
        """Set a tunable parameter between two steps (the next doStep uses it; in model
        exchange it is set in event mode, as FMI requires, and the event iteration runs
        at the start of the next step)."""
        var = self.plan.model.variables[name]
        if var.type == "Boolean" and not isinstance(value, bool):
            value = bool(value)
        if isinstance(self._stepper, ModelExchange):
            self._stepper.input_changed(True)
        self._fmu.call(StepFailed, f"set tunable parameter {name} = {value!r}", self._fmu.set,
                       [var], [value])

    # -- lifecycle

    def configure(self, params: FmuParameters) -> None:
        self.params = params
        self.plan: Plan = plan(params)
        self.fmu_name = self.plan.model.path.name
        self._fmu = fmu = FmuInstance(self.plan.model)
        fmu.open(self.name or "fmu", params.log_fmu)
        for var, value in self.plan.start:
            fmu.call(ParameterError, f"set start value of {var.name}", fmu.set, [var], [value])
        self._read_outputs = compile_outputs(self.plan, fmu)
        self._stepper = make_stepper(fmu, params)
        self._apply_inputs = compile_inputs(
            self.plan, fmu, self._stepper.input_changed
            if isinstance(self._stepper, ModelExchange) else None)
        self._advance = self._stepper.step

    initial_inputs = True  # the SDK passes the inputs visible at t0 to initialize

    def initialize(self, start_time_ns: int,
                   inputs: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
        """Start values are set (configure); here: initialization mode at t0, the inputs
        visible at t0 set in it, out of it, then the outputs at t0 (the FMI standard's
        order: a feedthrough's first output is its first input)."""
        t0 = start_time_ns * 1e-9
        self._fmu.initialize(t0, (lambda: self._apply_inputs(inputs)) if inputs else None)
        self._stepper.start(t0)  # model exchange: from event mode to continuous-time mode
        return self._read_outputs(start_time_ns)

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        fmu = self._fmu
        try:
            self._apply_inputs(inputs)
            fmu.time = t_ns * 1e-9
            self._advance(t_ns, dt_ns)
            fmu.time = (t_ns + dt_ns) * 1e-9
            return self._read_outputs(t_ns + dt_ns)
        except FmuTerminated as done:
            if self.params.terminate_is_error:
                raise StepFailed(done.message, fix="the FMU ended the simulation; set "
                                 "terminate_is_error = false to end the run cleanly "
                                 "instead") from None
            self.finish(done.message)  # the run ends cleanly after this step
            return self._read_outputs(t_ns + dt_ns)
        except (StepFailed, ParameterError, PortError):
            raise
        except Exception as exc:  # a message field that cannot hold a value, ...
            raise fmu.error(StepFailed, f"step at t={t_ns * 1e-9:.9g} s failed", exc,
                            "check the mapping's field types against the FMU's "
                            "variables") from exc

    # -- FMU state: checkpoints and forks (in-process use; not part of the protocol)
    #
    # Call order: initialize, steps, then get_state() any number of times between steps;
    # set_state(state) returns the FMU (and moonpool's stepper) to it; free_state when
    # done. save_state() / restore_state(data) do the same with bytes
    # (fmi2SerializeFMUstate / fmi3SerializeFMUState), which a fresh component with the
    # same parameters, initialized, can restore to fork a run.

    def _state_api(self) -> tuple[Any, ...]:
        fmu = self._fmu
        attrs = fmu.attributes()
        if not getattr(attrs, "canGetAndSetFMUstate", False):  # fmpy's name, FMI 2 and 3
            raise StepFailed(f"FMU '{fmu.name}' cannot get and set its state "
                             "(canGetAndSetFMUState = false)",
                             fix="checkpoint by re-running from the start instead")
        inst = fmu.instance
        if fmu.v3:
            return (inst.getFMUState, inst.setFMUState, inst.freeFMUState,
                    inst.serializeFMUState, inst.deserializeFMUState)
        return (inst.getFMUstate, inst.setFMUstate, inst.freeFMUstate,
                inst.serializeFMUstate, inst.deSerializeFMUstate)

    def get_state(self) -> FmuState:
        """The FMU's current state (fmi2GetFMUstate / fmi3GetFMUState) and moonpool's."""
        get = self._state_api()[0]
        fmu = self._fmu
        stepper = self._stepper.snapshot(fmu.time) if isinstance(self._stepper, ModelExchange) \
            else (fmu.time, 0.0)
        return FmuState(fmu.call(StepFailed, "get the FMU state", get), stepper)

    def set_state(self, state: FmuState) -> None:
        """Return the FMU to ``state`` (taken from this FMU by get_state / restore_state)."""
        set_ = self._state_api()[1]
        fmu = self._fmu
        fmu.call(StepFailed, "set the FMU state", set_, state.handle)
        fmu.time = state.stepper[0]
        if isinstance(self._stepper, ModelExchange):
            self._stepper.restored(state.stepper)
        self._apply_inputs.forget()

    def free_state(self, state: FmuState) -> None:
        self._fmu.call(StepFailed, "free the FMU state", self._state_api()[2], state.handle)

    def save_state(self) -> bytes:
        """The current state as bytes (the FMU's serialized state behind a small header)."""
        api = self._state_api()
        state = self.get_state()
        try:
            data = self._fmu.call(StepFailed, "serialize the FMU state", api[3], state.handle)
        finally:
            self.free_state(state)
        return _STATE_HEADER.pack(_STATE_MAGIC, *state.stepper) + bytes(data)

    def restore_state(self, data: bytes) -> None:
        """Return the FMU to a state saved by save_state (of an FMU of the same file)."""
        api = self._state_api()
        n = _STATE_HEADER.size
        if len(data) < n or _STATE_HEADER.unpack(data[:n])[0] != _STATE_MAGIC:
            raise StepFailed(f"FMU '{self._fmu.name}': not a state saved by moonpool's "
                             "fmu component", fix="give the bytes save_state returned")
        _magic, t, next_event = _STATE_HEADER.unpack(data[:n])
        handle = self._fmu.call(StepFailed, "deserialize the FMU state", api[4], data[n:])
        state = FmuState(handle, (t, next_event))
        try:
            self.set_state(state)
        finally:
            self.free_state(state)

    def terminate(self) -> Mapping[str, float] | None:
        fmu = getattr(self, "_fmu", None)
        if fmu is not None:
            fmu.release()
        return None
