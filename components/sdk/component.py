"""The base class every moonpool component derives from.

Call order (one execution), the same in-process, in a child process or on another
host; a ``ComponentHost`` (``host.py``) enforces it::

    describe()                          any time: ports and parameters (after configure,
                                        the ports of this instance; see ``ports_for``)
    check_parameters(params)            classmethod, just before configure, and alone in
                                        ``moonpool check``: what can be checked without
                                        starting anything (ranges, choices, files that
                                        must exist; of a device, that its path exists)
    static_scene(params)                classmethod, only for a viewer (``--live``): the
                                        static world the component knows (``scene.py``)
    configure(params)                   once: params is the validated Parameters instance
    initialize(start_time_ns)           once: may return initial outputs (valid at start);
                                        with ``initial_inputs = True``:
                                        initialize(start_time_ns, inputs)
    set_parameter(name, value)          between steps, only for ``tunable`` parameters
                                        (a rig's [[scenario]]); before the step it affects
    step(t_ns, dt_ns, inputs)           repeatedly, t strictly increasing: advance t -> t+dt
    terminate()                         once, also after a failure: may return metrics

A component that reaches the end of what it can simulate (an FMU that requests
termination) calls ``self.finish(reason)`` inside ``step`` and returns that step's
outputs as usual: they are recorded, and the orchestrator ends the run cleanly after
that instant (status "terminated", exit 0; StepResult.finished on the wire).

``terminate`` may come straight after ``configure``, with no ``initialize``: when the
run fails before this component was initialised (another component's initialize
raised, a device did not answer). It must then release what ``configure`` acquired
and not reach for state that ``initialize`` builds; the host ignores the metrics
(and any error) of a component that was never initialised, and never calls
``terminate`` on one that was not configured (``host.py``).

Before ``configure`` is called the host sets ``self.name`` (instance name from the
rig), ``self.seed`` (execution seed) and ``self.period_ns``.

A component declares:

- ``inputs`` / ``outputs``: tuples of :class:`Port` (name, protobuf message class).
  Ports that depend on the parameters (an FMU's ports come from its mapping in the
  rig) are computed by the classmethod :meth:`Component.ports_for`, which the host
  calls with the validated parameters just before ``configure`` (and ``moonpool
  check`` calls without running anything); ``configure`` may also set
  ``self.inputs`` / ``self.outputs`` itself.
- ``Parameters``: a frozen dataclass whose fields are the parameters; declare each
  with :func:`param` to give it a description and a unit. Use
  ``@dataclass(frozen=True, kw_only=True)`` so required and optional parameters
  can come in any order.

``step`` receives ``inputs``, a mapping port name -> latest message (absent until a
first message arrives), or -> list of messages for ``queued`` ports, and returns a
mapping port name -> message (or :class:`Attached` for bulk data such as images).
Returned messages are serialized when ``step`` returns; each consumer receives its
own decoded copy. Fill ``header.sim_time_ns``
with the time the content describes (``self.header(t)`` helps); the host fills
``header.source`` and ``header.seq``.

Time is integer nanoseconds (``t_ns``, ``dt_ns``); convert to seconds only at the
boundary of numeric code (``dt_ns * 1e-9``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from google.protobuf.message import Message

from moonpool.v1 import common_pb2

from .errors import ComponentError
from .scene import SceneFile, ScenePart


@dataclass(frozen=True)
class Port:
    """A typed input or output port."""

    name: str
    """Port name, unique among the component's inputs (or outputs)."""
    type: type[Message]
    """Protobuf message class carried by the port (e.g. ``vehicle_pb2.VehicleState``)."""
    description: str = ""
    """One line for ``moonpool describe`` and the docs."""
    queued: bool = False
    """Inputs only: deliver every message since the last step (a list) instead of the latest."""
    attachment: bool = False
    """Messages on this port may carry bulk data (image pixels) beside them: an output
    may return :class:`Attached`, an input receives it. An attachment on a port without
    it is refused (an input: INVALID_INPUT; an output: the component fails)."""

    @property
    def type_name(self) -> str:
        return self.type.DESCRIPTOR.full_name


@dataclass(frozen=True)
class Attached:
    """An output message with a bulk attachment (e.g. image pixels) sent as a raw frame."""

    message: Message
    """The small protobuf header (e.g. ``ImageHeader``)."""
    data: bytes | bytearray | memoryview
    """The bulk bytes; any object supporting the buffer protocol (a numpy array too)."""


def param(default: Any = dataclasses.MISSING, doc: str = "", *, unit: str = "",
          device: bool = False) -> Any:
    """Declare a parameter field with its description and SI unit.

    ``x_m: float = param(0.0, "initial depth", unit="m")``; omit ``default`` for a
    required parameter. Lists are given as tuples (the dataclass is frozen).
    ``device=True``: the value names a device (a serial port, a camera, a pyserial URL);
    a served component may open only the devices its operator allows
    (``moonpool serve --device``; components/sdk/confine.py).
    """
    metadata = {"doc": doc, "unit": unit, **({"device": True} if device else {})}
    if isinstance(default, list):
        default = tuple(default)
    if isinstance(default, dict):  # a table: each instance gets its own copy
        table = dict(default)
        return dataclasses.field(default_factory=lambda: dict(table), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class NoParameters:
    """A component without parameters."""


class Component:
    """Base class of moonpool components (see the module docstring for the call order)."""

    inputs: ClassVar[tuple[Port, ...]] = ()
    """Input ports."""
    outputs: ClassVar[tuple[Port, ...]] = ()
    """Output ports."""
    Parameters: ClassVar[type] = NoParameters
    """Frozen dataclass of parameters."""
    tunable: ClassVar[tuple[str, ...]] = ()
    """Names of the parameters that may change between steps (a rig's ``[[scenario]]``
    sets them through :meth:`set_parameter`); see :meth:`tunable_for`."""

    # Set by the host before configure().
    name: str = ""
    seed: int = 0
    period_ns: int = 0
    finished: str = ""
    """Non-empty once the component ended the simulation (:meth:`finish`): why."""
    finished_failed: bool = False
    """True when :meth:`finish` ended the run as a failure (``failed=True``)."""
    initial_inputs: ClassVar[bool] = False
    """True: ``initialize(start_time_ns, inputs)`` receives the held inputs visible at
    the start time (the initial outputs of the components initialized before it, in rig
    order), e.g. an FMU applies them in initialization mode. A queued input's messages
    are not among them: they come in the first step."""

    @classmethod
    def ports_for(cls, params: Any) -> tuple[tuple[Port, ...], tuple[Port, ...]]:
        """The (inputs, outputs) of an instance configured with ``params``.

        Default: the class attributes. Override when the ports depend on the
        parameters; raise :class:`~moonpool.components.sdk.errors.ParameterError` for
        parameters that give no valid ports. Must not start anything: it runs in
        ``moonpool check`` too.
        """
        return tuple(cls.inputs), tuple(cls.outputs)

    @classmethod
    def tunable_for(cls, params: Any) -> tuple[str, ...]:
        """The tunable parameters of an instance configured with ``params``.

        Default: the class attribute ``tunable``. Override when they depend on the
        parameters (an FMU's tunable parameters come from its model description).
        Must not start anything: it runs in ``moonpool check`` too.
        """
        return tuple(cls.tunable)

    def set_parameter(self, name: str, value: Any) -> None:
        """Between two steps (after initialize): set the tunable parameter ``name``
        (one of :meth:`tunable_for`) to ``value``; the next step uses it."""
        raise NotImplementedError(f"{type(self).__name__} declares tunable parameters "
                                  "but does not implement set_parameter()")

    def configure(self, params: Any) -> None:
        """Take the validated parameters; allocate what the run needs."""
        self.params = params

    def initialize(self, start_time_ns: int) -> Mapping[str, Message | Attached] | None:
        """Set the initial state; optionally return outputs valid at ``start_time_ns``."""
        return None

    def step(
        self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]
    ) -> Mapping[str, Message | Attached] | None:
        """Advance from ``t_ns`` to ``t_ns + dt_ns``; return this step's outputs."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @classmethod
    def check_parameters(cls, params: Any) -> None:
        """Refuse bad parameters without starting anything: raise ``ParameterError``.

        Call order: after the Parameters instance is built (its types checked), before
        ``configure`` — by the host, and by ``moonpool check``, which calls nothing
        else of the component. Put here every check that needs no resource: ranges,
        choices (``trajectory = "elipse"``), files that must exist and parse (a setup
        file); a component that opens a device checks only that its path exists (the
        device may be busy or asleep at check time). ``configure`` may then assume
        them. The message names the parameter; the host and the check add the
        component's name.
        """
        return None

    def checked(self, params: Any, check: Any = None) -> Any:
        """``check(params)`` (default: ``check_parameters``) on behalf of this instance,
        its error naming the instance; returns what ``check`` returns. For ``configure``
        to start with, so that a component configured without a host (a script, a unit
        test) is checked the same way, and to get the values a check derives."""
        try:
            return (check or type(self).check_parameters)(params)
        except ComponentError as exc:
            exc.component = exc.component or getattr(self, "name", "")
            raise

    @classmethod
    def static_scene(cls, params: Any) -> Sequence[ScenePart | SceneFile]:
        """What this component knows of the static world, for viewers (``moonpool run
        --live`` draws it; ``sdk/scene.py``): triangle meshes fixed in the world or to
        a body whose VehicleState arrives on an input port, and scene files.

        Called with the validated Parameters, as ``check_parameters`` is, and only by a
        viewer: it must not start anything. Default: the scene file of a ``scene``
        parameter (a file path), if the component has one and it is set.
        """
        scene = getattr(params, "scene", None)
        return (SceneFile(scene),) if isinstance(scene, Path) else ()

    def terminate(self) -> Mapping[str, float] | None:
        """Release resources; optionally return the run's metrics (JSON-able numbers).

        Also called when ``initialize`` never ran (the module docstring): do not assume
        the state it builds."""
        return None

    # -- helpers ---------------------------------------------------------------

    def finish(self, reason: str, failed: bool = False) -> None:
        """Inside ``step``: this step is the last one; the run ends cleanly after it
        (``reason`` goes into the run's summary). The step's outputs are still returned.

        ``failed=True`` ends the run as a failure (status "failed", exit 1, ``reason`` as
        the error, this component as ``failed_component``) while everything else stays
        orderly: the outputs of this step are recorded and every component, this one
        included, is terminated normally and reports its metrics. For a component that
        decides the run has failed (a mission manager's safe abort), not one that broke."""
        self.finished = reason or "finished"
        self.finished_failed = bool(failed)

    def header(self, t_ns: int, frame_id: str = "") -> common_pb2.Header:
        """A header stamped ``t_ns`` (the host fills source and seq)."""
        return common_pb2.Header(sim_time_ns=int(t_ns), source=self.name, frame_id=frame_id)

    @classmethod
    def kind(cls) -> str:
        """``module:Class`` of this component."""
        return f"{cls.__module__}:{cls.__qualname__}"
