"""The moonpool component SDK: the small thing a component author programs against.

Everything here is about *being a component*, nothing about any particular model;
the orchestrator imports only this package (and ``moonpool.v1``) from
``moonpool.components``, and the SDK never imports a domain package. Modules, in
the order a newcomer reads them:

- ``component.py``  ``Component``, ``Port``, ``param``, ``Attached``: the base class and
                    its call order (describe → configure → initialize → step … → terminate)
- ``errors.py``     the one exception tree of moonpool (drawn in its docstring)
- ``noise.py``      ``KeyedNoise``: draws keyed by (seed, component, channel, sample index)
- ``frames.py``     rotations and frames: quaternions, ZYX Euler angles, skew/cross,
                    the NED/FRD conventions
- ``host.py``       ``ComponentHost``: lifecycle checks and output stamping, shared by the
                    in-process adapter and the serve loop
- ``wire.py``       type registry, deterministic serialization, parameters on the wire
- ``serve.py``      the ROUTER loop serving components (``moonpool serve``; its command
                    line in ``serve_cli.py``)
- ``confine.py``    where a served component's path and device parameters may point
- ``security.py``   CURVE keys, the server's allow-list, the client's socket setup
- ``lograte.py``    rate-limited log lines about what peers do
- ``loading.py``    ENTRY → class (short names, ``module:Class``, ``file.py:Class``)
- ``commands.py``   subcommands of ``moonpool`` that component packages register
- ``tomlfile.py``   TOML parsing (rig files, profiles, scene files): moonpool's one
                    importer of ``tomllib``

A component needs only the first three (re-exported here and in
``moonpool.components``)::

    from moonpool.components.sdk import Component, Port, param
"""

from .component import Attached, Component, NoParameters, Port, param
from .errors import ComponentError, ParameterError, PortError, StepFailed
from .noise import KeyedNoise

__all__ = [
    "Attached",
    "Component",
    "ComponentError",
    "KeyedNoise",
    "NoParameters",
    "ParameterError",
    "Port",
    "PortError",
    "StepFailed",
    "param",
]
