"""moonpool's components: the SDK (``sdk/``) and the models moonpool ships.

``sdk/`` is the small framework every component and the orchestrator program
against; the domain packages beside it (``sensors/``, ``actuation/``, ``control/``,
``localization/``, ``terramechanics/``, ``tasks/``, ``bridges/``, ``fmi/``,
``sources/``) are components built on it and never import the orchestrator.
The SDK's main names are re-exported here for component authors.

A component is a class with typed ports and parameters; the same class runs
in-process, in a child process, or on another host (``moonpool serve``)::

    from moonpool.components import Component, Port, param
    from moonpool.v1 import vehicle_pb2

    class Thruster(Component):
        inputs = (Port("command", vehicle_pb2.ThrusterCommand),)
        outputs = (Port("wrench", vehicle_pb2.Wrench),)

        @dataclass(frozen=True)
        class Parameters:
            gain: float = param(1.0, "force per unit command", unit="N")

        def step(self, t_ns, dt_ns, inputs): ...

See ``sdk/component.py`` for the call order and docs/components.md for a walk-through.
"""

from .sdk import *  # noqa: F403  (the SDK's main names, for component authors)
from .sdk import __all__  # noqa: F401
