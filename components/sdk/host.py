"""ComponentHost: runs one component through its lifecycle, the same way whether
the orchestrator calls it in-process or the serve loop calls it from the wire.

Call order (enforced; anything else raises LifecycleError)::

    describe()                       any time; after configure it describes the
                                     instance's ports (Component.ports_for)
    configure(Configure)             CREATED -> CONFIGURED (Parameters built, then the
                                     class's check_parameters, ports_for, configure)
    initialize(start_time_ns)        CONFIGURED -> INITIALIZED; returns initial outputs
    step(t_ns, dt_ns, inputs[, parameters])
                                     INITIALIZED, t increasing; returns outputs; the
                                     tunable ``parameters`` (name, value) are set first
    terminate()                      any state -> TERMINATED (idempotent); returns metrics

terminate() reaches the component only once it was configured: never configured, the
object is not called at all; configured but never initialised (a run that failed
before this component's initialize) or failed, its terminate runs so it can release
what configure acquired (a device, an FMU instance), but its metrics and any error
it raises are ignored. Only after initialize do its metrics count and does an error
in its terminate fail the run. A component's terminate should therefore not assume
that initialize ran (``Component.terminate``).

A component that raises moves the host to FAILED: only describe and terminate are
then accepted. Outputs are checked against the declared ports and stamped: the
host sets ``header.source`` to the instance name and ``header.seq`` to a per-port
counter, so sequence numbers are identical in every process layout.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError, Message

from moonpool.v1 import lifecycle_pb2 as lc

_log = logging.getLogger("moonpool.host")

from . import wire
from .component import Attached, Component
from .confine import Confinement
from .errors import (
    ComponentError,
    LifecycleError,
    ParameterError,
    PortError,
    ProtocolError,
    StepFailed,
)

CREATED = lc.COMPONENT_STATE_CREATED
CONFIGURED = lc.COMPONENT_STATE_CONFIGURED
INITIALIZED = lc.COMPONENT_STATE_INITIALIZED
TERMINATED = lc.COMPONENT_STATE_TERMINATED
FAILED = lc.COMPONENT_STATE_FAILED

_STATE_NAMES = {
    CREATED: "created",
    CONFIGURED: "configured",
    INITIALIZED: "initialized",
    TERMINATED: "terminated",
    FAILED: "failed",
}


class Output:
    """One produced message: port, the message, its serialization, optional attachment."""

    __slots__ = ("port", "type_name", "message", "payload", "attachment")

    def __init__(self, port: str, type_name: str, message: Message, payload: bytes,
                 attachment: Any = None) -> None:
        self.port = port
        self.type_name = type_name
        self.message = message
        self.payload = payload
        self.attachment = attachment


class ComponentHost:
    """Hosts one component instance (see the module docstring)."""

    output_type: Any = Output
    """What ``initialize`` and ``step`` return per message: called as
    ``output_type(port, type_name, message, payload, attachment)`` (an in-process
    orchestrator makes its own sample objects here, one object per message)."""

    def __init__(self, component: Component, base_dir: str | Path | None = None,
                 confinement: Confinement | None = None) -> None:
        """``base_dir``: the folder relative ``Path`` parameters are taken from (the
        rig file's folder); None: the current folder. ``confinement``: a served
        component's (``moonpool serve``): path parameters must stay inside its folder
        and devices be allowed ones (confine.py); it replaces ``base_dir``."""
        self.confinement = confinement
        if not isinstance(component, Component):
            raise TypeError(f"{component!r} is not a moonpool Component")
        self.component = component
        self.base_dir = base_dir
        cls = type(component)
        self._set_ports(cls.inputs, cls.outputs, cls.kind())
        self._configured_ports = False
        self.state = CREATED
        self.name = cls.kind()
        self._last_end_ns: int | None = None
        self.metrics: dict[str, float] = {}
        self.tunable: tuple[str, ...] = ()
        """The instance's tunable parameters (Component.tunable_for), once configured."""

    # -- lifecycle -------------------------------------------------------------

    @property
    def inputs(self) -> tuple:
        """The input ports (the instance's, once configured)."""
        return tuple(self._inputs.values())

    @property
    def outputs(self) -> tuple:
        """The output ports (the instance's, once configured)."""
        return tuple(self._outputs.values())

    def describe(self) -> lc.Description:
        if not self._configured_ports:
            return wire.describe_class(type(self.component))
        desc = wire.describe_class(type(self.component), self.inputs, self.outputs)
        desc.tunable_parameters.extend(self.tunable)
        return desc

    def configure(self, msg: lc.Configure) -> None:
        self._require(CREATED, "configure")
        name = msg.instance_name or self.name
        cls = type(self.component)
        given = {p.name: wire.from_parameter_value(p.value) for p in msg.parameters}
        params = wire.build_parameters(cls.Parameters, given, component=name,
                                       base_dir=self.base_dir, confinement=self.confinement)
        self.name = name
        self.component.name = name
        self.component.seed = int(msg.seed)
        self.component.period_ns = int(msg.period_ns)
        # Ports that depend on the parameters: the class hook first, then whatever
        # configure sets on the instance.
        self._call("configure", cls.check_parameters, params)
        inputs, outputs = self._call("configure", cls.ports_for, params)
        self.tunable = tuple(self._call("configure", cls.tunable_for, params))
        self.component.inputs = tuple(inputs)
        self.component.outputs = tuple(outputs)
        self._call("configure", self.component.configure, params)
        try:
            self._set_ports(self.component.inputs, self.component.outputs, name)
        except PortError:
            self.state = FAILED
            raise
        self._configured_ports = True
        self.state = CONFIGURED

    def initialize(self, start_time_ns: int, inputs: Mapping[str, Any] | None = None
                   ) -> list[Output]:
        """``inputs`` (decoded, as for step) go to a component with ``initial_inputs``."""
        self._require(CONFIGURED, "initialize")
        if getattr(self.component, "initial_inputs", False):
            result = self._call("initialize", self.component.initialize, int(start_time_ns),
                                dict(inputs or {}))
        else:
            result = self._call("initialize", self.component.initialize, int(start_time_ns))
        outputs = self._collect(result, "initialize")
        self.state = INITIALIZED
        self._last_end_ns = int(start_time_ns)
        return outputs

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any],
             parameters: Sequence[tuple[str, Any]] = ()) -> list[Output]:
        if self.state != INITIALIZED:
            self._require(INITIALIZED, "step")
        if parameters:
            self.set_parameters(parameters, t_ns)
        if dt_ns <= 0:
            raise LifecycleError(
                f"step size must be positive, got {dt_ns} ns", component=self.name,
                fix="this is an orchestrator bug; report it",
            )
        if self._last_end_ns is not None and t_ns < self._last_end_ns:
            raise LifecycleError(
                f"step at t={t_ns} ns goes back in time (last step ended at {self._last_end_ns} ns)",
                component=self.name,
                fix="steps must be given in increasing time",
            )
        try:  # not through _call: one call less per step
            result = self.component.step(t_ns, dt_ns, inputs)
        except Exception as exc:
            err = self._failure("step", exc)
            if err is exc:
                raise
            raise err from exc
        outputs = self._collect(result, "step")
        self._last_end_ns = t_ns + dt_ns
        return outputs

    def set_parameters(self, parameters: Sequence[tuple[str, Any]], t_ns: int) -> None:
        """Set tunable parameters before the step at ``t_ns``; ParameterError naming the
        parameter if it is not tunable (the component is then FAILED)."""
        if len(parameters) > max(len(self.tunable), 1):
            self.state = FAILED
            raise ParameterError(
                f"{len(parameters)} parameter changes in one step, for "
                f"{len(self.tunable)} tunable parameter(s)", component=self.name,
                fix="change each tunable parameter at most once per step")
        for name, value in parameters:
            if name not in self.tunable:
                self.state = FAILED
                raise ParameterError(
                    f"parameter '{name}' is not tunable (tunable: "
                    f"{', '.join(self.tunable) or 'none'})", component=self.name,
                    fix="change only tunable parameters during a run (a rig's [[scenario]])")
            self._call(f"set_parameter({name}) at t={t_ns} ns", self.component.set_parameter,
                       name, value)

    def terminate(self) -> dict[str, float]:
        if self.state == TERMINATED:
            return self.metrics
        state, self.state = self.state, TERMINATED
        if state == CREATED:
            # Never configured: the object has no parameters, nothing was acquired;
            # calling into it would reach half-built state.
            return {}
        if state != INITIALIZED:
            # Configured but never initialised (the run failed before this component's
            # initialize) or failed: the component may release what it acquired, but
            # there was no run to report on, so its metrics are ignored, and so is an
            # error from it (it would only hide the failure that stopped the run).
            try:
                self.component.terminate()
            except Exception as exc:  # noqa: BLE001 - terminate must not mask the failure
                _log.debug("%s: terminate after %s raised %r (ignored)", self.name,
                           _STATE_NAMES.get(state, state), exc)
            return {}
        result = self._call("terminate", self.component.terminate)
        self.metrics = _check_metrics(result, self.name)
        return self.metrics

    # -- wire-level inputs -----------------------------------------------------

    def decode_inputs(self, values: list[lc.PortValue], attachments: list[Any]) -> dict[str, Any]:
        """PortValues from a Step request -> the ``inputs`` mapping given to ``step``."""
        if len(values) > wire.MAX_PORT_VALUES:
            raise PortError(
                f"{len(values)} input values in one request, more than {wire.MAX_PORT_VALUES}",
                component=self.name,
                fix="deliver fewer messages per step (a faster consumer, or a slower source "
                    "into a queued input)")
        queues = self._queued_inputs
        inputs: dict[str, Any] = {name: [] for name in queues} if queues else {}
        table = self._input_table
        for pv in values:
            name = pv.port
            port = table.get(name)
            if port is None:
                raise PortError(
                    f"input for unknown port '{name}'", component=self.name,
                    fix=f"inputs are {sorted(self._inputs)}",
                )
            cls, type_name, queued, attached = port
            if pv.type != type_name:
                raise PortError(
                    f"input '{name}' expects {type_name}, got {pv.type}",
                    component=self.name, fix="connect an output of the same type",
                )
            try:
                msg = cls.FromString(pv.payload)  # (one C call: a new message, parsed)
            except (DecodeError, RuntimeError, ValueError) as exc:
                raise PortError(f"input '{name}': payload is not a valid {type_name}: {exc}",
                                component=self.name,
                                fix=f"send {type_name} serialized by protobuf") from exc
            index = pv.attachment
            if index:
                if not attached:
                    raise PortError(
                        f"input '{name}' does not take attachments, but one came with it",
                        component=self.name,
                        fix="send the message without an attachment, or connect an output "
                            "that carries none (a port takes attachments when its "
                            "Description says attachment = true)")
                if index > len(attachments):
                    raise PortError(
                        f"input '{name}' refers to attachment frame {index} "
                        f"but only {len(attachments)} were sent", component=self.name,
                        fix="number attachments from 1 among the frames after the envelope, "
                            "one frame per referring PortValue (docs/protocol.md §2)",
                    )
                msg = Attached(msg, attachments[index - 1])
            if queued:
                inputs[name].append(msg)
            else:
                inputs[name] = msg
        return inputs

    # -- internals -------------------------------------------------------------

    def _set_ports(self, inputs: Any, outputs: Any, who: str) -> None:
        inputs, outputs = tuple(inputs), tuple(outputs)
        wire.check_unique_ports(inputs, "input", who)
        wire.check_unique_ports(outputs, "output", who)
        self._inputs = {p.name: p for p in inputs}
        self._outputs = {p.name: p for p in outputs}
        self._seq: dict[str, int] = {p.name: 0 for p in outputs}
        # For the hot path (decode_inputs, the serve loop's encoding): per input
        # (class, type name, queued); per output its PortValue's constant fields.
        self._input_table = {p.name: (p.type, p.type_name, p.queued, p.attachment)
                             for p in inputs}
        self._queued_inputs = tuple(p.name for p in inputs if p.queued)
        self.queued_input_names = frozenset(self._queued_inputs)
        """The queued inputs' names (a process group's local routes, localroutes.py)."""
        self.port_value_prefixes = {p.name: wire.port_value_prefix(p.name, p.type_name)
                                    for p in outputs}
        # (name, class, type name, has a header, carries attachments, serializes
        # deterministically only when it can hold a map) per output, for the hot path.
        self._output_table = [
            (p.name, p.type, p.type_name, "header" in p.type.DESCRIPTOR.fields_by_name,
             p.attachment, wire.has_map_fields(p.type.DESCRIPTOR))
            for p in outputs
        ]

    def require(self, state: int, call: str) -> None:
        """Raise LifecycleError unless the host is in ``state`` (for ``call``)."""
        self._require(state, call)

    def _require(self, state: int, call: str) -> None:
        if self.state != state:
            raise LifecycleError(
                f"{call} called while {_STATE_NAMES.get(self.state, self.state)}; "
                f"it needs state {_STATE_NAMES[state]}",
                component=self.name,
                fix="follow the call order describe -> configure -> initialize -> step* -> terminate",
            )

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            err = self._failure(what, exc)
            if err is exc:
                raise
            raise err from exc

    def _failure(self, what: str, exc: Exception) -> ComponentError:
        """The component raised ``exc`` in ``what``: the host has failed; a ComponentError
        is kept (naming the component), anything else becomes StepFailed."""
        self.state = FAILED
        if isinstance(exc, ComponentError):
            exc.component = exc.component or self.name
            return exc
        return StepFailed(
            f"{what} raised {type(exc).__name__}: {exc}",
            component=self.name,
            fix="see the traceback in the component's log; this is a bug in the component "
            "or a bad parameter",
        )

    def _collect(self, result: Any, what: str) -> list[Output]:
        if result is None:
            return []
        if type(result) is not dict and not isinstance(result, Mapping):
            self.state = FAILED
            raise PortError(
                f"{what} returned {type(result).__name__}, expected a mapping port -> message",
                component=self.name,
                fix=f"return a dict {{output port name: message}} from {what}",
            )
        outputs = []
        seq = self._seq
        make = self.output_type
        found = 0
        # Declared order, so recordings and digests do not depend on dict order.
        for name, cls, type_name, has_header, attached, maps in self._output_table:
            value = result.get(name)
            if value is None:
                if name in result:
                    found += 1
                continue
            found += 1
            attachment = None
            if type(value) is not cls:
                if isinstance(value, Attached):
                    if not attached:
                        self.state = FAILED
                        raise PortError(
                            f"output '{name}' returned an attachment, but the port does not "
                            "carry them", component=self.name,
                            fix=f"declare Port('{name}', ..., attachment=True), or return "
                                "the message alone")
                    value, attachment = value.message, value.data
                if not isinstance(value, cls):
                    self.state = FAILED
                    raise PortError(
                        f"output '{name}' must be {type_name}, got {type(value).__name__}",
                        component=self.name,
                        fix=f"return a {type_name} (or Attached of one) for '{name}'",
                    )
            if has_header:
                header = value.header
                header.source = self.name
                header.seq = seq[name]
            seq[name] += 1
            outputs.append(make(name, type_name, value,
                                value.SerializeToString(deterministic=True) if maps
                                else value.SerializeToString(), attachment))
        if found != len(result):
            unknown = set(result) - set(self._outputs)
            self.state = FAILED
            raise PortError(
                f"{what} returned unknown output port(s) {sorted(map(str, unknown))}",
                component=self.name, fix=f"outputs are {sorted(self._outputs)}",
            )
        return outputs


def _check_metrics(result: Any, name: str) -> dict[str, float]:
    if result is None:
        return {}
    if not isinstance(result, Mapping):
        raise StepFailed(f"terminate returned {type(result).__name__}, expected a mapping", component=name)
    try:
        text = json.dumps(dict(result), sort_keys=True, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise StepFailed(f"terminate returned metrics that are not JSON: {exc}", component=name) from exc
    out = json.loads(text)
    for k, v in list(out.items()):
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = None
    return out


METRICS_MAX_BYTES = 1_000_000
"""The largest ``Terminated.metrics_json`` the orchestrator accepts, bytes."""
METRICS_MAX_DEPTH = 32
"""The deepest nesting of objects and arrays it accepts in it."""


def metrics_from_json(text: str, component: str = "") -> dict[str, Any]:
    """A component's ``Terminated.metrics_json`` (untrusted: it comes from the peer) as a
    dict; anything else -- not JSON, not an object, over ``METRICS_MAX_BYTES`` or nested
    deeper than ``METRICS_MAX_DEPTH`` -- raises ProtocolError naming ``component``."""
    if not text:
        return {}

    def bad(why: str) -> ProtocolError:
        return ProtocolError(
            f"its Terminated.metrics_json {why}; its metrics are left out",
            component=component,
            fix="return a plain dict of numbers and strings from Component.metrics() "
                f"(a JSON object of at most {METRICS_MAX_BYTES} bytes, nested at most "
                f"{METRICS_MAX_DEPTH} deep)")

    if len(text) > METRICS_MAX_BYTES:
        raise bad(f"is {len(text)} characters long, more than {METRICS_MAX_BYTES}")
    # Depth first, without recursion (json.loads recurses: 5,000 levels crash it).
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > METRICS_MAX_DEPTH:
                    raise bad(f"is nested more than {METRICS_MAX_DEPTH} deep")
        elif ch in "]}":
            depth -= 1
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise bad(f"is not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise bad(f"is a JSON {type(value).__name__}, not an object")
    return value


__all__ = ["ComponentHost", "Output", "ParameterError"]
