"""Wire helpers shared by the SDK and the orchestrator: message types, parameters,
descriptions and the framing of requests and replies (docs/protocol.md).

A message on a port travels as a ``PortValue``: its full type name, its
deterministic serialization, and optionally the index of a raw attachment frame.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

import moonpool.v1  # noqa: F401  (registers every moonpool.v1 type in the default pool)
from moonpool.v1 import lifecycle_pb2 as lc

from .component import Component, Port
from .confine import Confinement
from .errors import ParameterError, PortError, ProtocolError

PROTOCOL_VERSION = lc.PROTOCOL_VERSION_1

DEFAULT_MAX_MESSAGE_BYTES = 16 * 2**20
"""The largest frame (envelope or attachment), bytes, any moonpool socket accepts:
``ZMQ_MAXMSGSIZE`` on every socket, so a peer declaring a larger frame is disconnected by
libzmq before anything is allocated, authenticated or not (docs/protocol.md §2). 16 MiB
holds a 1920×1080 RGB8 image (6.2 MB) with room to spare; raise it (``run.max_message_bytes``,
``moonpool serve --max-message-bytes``) for larger images."""
MAX_MESSAGE_BYTES_LIMIT = 2**31 - 1
"""The upper bound of that option (a frame must fit libzmq's and protobuf's 2 GiB limits)."""

DEFAULT_MAX_PEER_TIMEOUT_NS = 300 * 10**9
"""The longest ``Configure.peer_timeout_ns`` a component accepts by default (5 min):
every session expires, at the latest this long after its peer fell silent, so nobody
can hold a component for good by configuring it and going away. ``0`` (unset) means
this limit; a negative value or one above it is refused with INVALID_PARAMETER
(docs/protocol.md §6). ``moonpool serve --max-peer-timeout`` changes it; a rig's
``run.peer_timeout`` may not exceed it."""
MAX_PEER_TIMEOUT_LIMIT_NS = 3600 * 10**9
"""The upper bound of ``--max-peer-timeout`` (1 h)."""

MAX_PORT_VALUES = 65_536
"""The most PortValues one Step (or Initialize) may carry: an ordinary input takes one,
a queued input every message since the previous step, so this bounds what decoding
one request can cost (refused with INVALID_INPUT above it; docs/protocol.md §2)."""
MAX_PARAMETERS = 1024
"""The most parameters one Configure (or one Step's tunable changes) may carry."""
MAX_PROBLEMS = 20
"""The most problems an Error lists (the rest are counted): an answer stays small
whatever a request holds."""

_CLASSES: dict[str, type[Message]] = {}


def register_type(cls: type[Message]) -> None:
    """Make a (third-party) message class known to :func:`message_class`."""
    _CLASSES[cls.DESCRIPTOR.full_name] = cls


def message_class(type_name: str) -> type[Message]:
    """The message class for a fully qualified type name, e.g. ``moonpool.v1.Wrench``."""
    cls = _CLASSES.get(type_name)
    if cls is not None:
        return cls
    from google.protobuf import descriptor_pool

    try:
        desc = descriptor_pool.Default().FindMessageTypeByName(type_name)
    except KeyError as exc:
        raise PortError(
            f"unknown message type '{type_name}'",
            fix="use a moonpool.v1 type, or import the module that defines it in the component",
        ) from exc
    cls = message_factory.GetMessageClass(desc)
    _CLASSES[type_name] = cls
    return cls


def serialize(msg: Message) -> bytes:
    """Deterministic serialization (used for everything that is hashed or compared)."""
    return msg.SerializeToString(deterministic=True)


def has_map_fields(descriptor: Descriptor) -> bool:
    """Whether messages of this type can hold a map field anywhere inside. Only maps
    are ordered differently by deterministic serialization (sorted by key), so a type
    without any serializes the same either way, and the faster plain call can be used
    (it skips the keyword argument: 0.30 against 0.45 µs for a small message)."""
    seen: set[str] = set()

    def walk(d: Descriptor) -> bool:
        if d.full_name in seen:
            return False
        seen.add(d.full_name)
        if d.GetOptions().map_entry:
            return True
        return any(f.message_type is not None and walk(f.message_type) for f in d.fields)

    return walk(descriptor)


def decode(type_name: str, payload: bytes) -> Message:
    """Parse a payload of a named type; raises PortError on garbage."""
    parse = message_class(type_name).FromString  # (one C call: a new message, parsed)
    try:
        return parse(payload)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise PortError(f"payload is not a valid {type_name}: {exc}",
                        fix=f"send {type_name} serialized by protobuf") from exc


def file_descriptor_set(descriptors: Iterable[Descriptor]) -> descriptor_pb2.FileDescriptorSet:
    """The FileDescriptorSet holding the given message types and all their imports,
    dependencies first (what MCAP's protobuf profile and Foxglove expect)."""
    fds = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()

    def add(fd: FileDescriptor) -> None:
        if fd.name in seen:
            return
        seen.add(fd.name)
        for dep in fd.dependencies:
            add(dep)
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        fds.file.append(proto)

    for d in descriptors:
        add(d.file)
    return fds


# ----------------------------------------------------------------- parameters

_SCALAR_TYPES = {
    float: lc.PARAMETER_TYPE_DOUBLE,
    int: lc.PARAMETER_TYPE_INT,
    bool: lc.PARAMETER_TYPE_BOOL,
    str: lc.PARAMETER_TYPE_STRING,
}


def _is_optional_path(annotation: Any) -> bool:
    """``Path | None``: a file path that may be left out (None, or "" in a rig)."""
    args = typing.get_args(annotation)
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and set(args) == {Path, type(None)}


def _parameter_type(annotation: Any) -> int:
    if annotation is Path or _is_optional_path(annotation):
        return lc.PARAMETER_TYPE_STRING
    if annotation in _SCALAR_TYPES:
        return _SCALAR_TYPES[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and args and args[0] in (float, int):
        return lc.PARAMETER_TYPE_DOUBLE_ARRAY
    if origin is tuple and args and args[0] is str:
        return lc.PARAMETER_TYPE_STRING_ARRAY
    return lc.PARAMETER_TYPE_JSON


def _field_types(params_cls: type) -> dict[str, Any]:
    return typing.get_type_hints(params_cls)


def to_parameter_value(value: Any) -> lc.ParameterValue:
    """Python/TOML value -> ParameterValue (bool before int: bool is an int)."""
    if isinstance(value, bool):
        return lc.ParameterValue(bool_value=value)
    if isinstance(value, int):
        return lc.ParameterValue(int_value=value)
    if isinstance(value, float):
        return lc.ParameterValue(double_value=value)
    if isinstance(value, str):
        return lc.ParameterValue(string_value=value)
    if isinstance(value, Path):
        return lc.ParameterValue(string_value=str(value))
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return lc.ParameterValue(double_array=lc.DoubleArray(values=[float(v) for v in value]))
        if value and all(isinstance(v, str) for v in value):
            return lc.ParameterValue(string_array=lc.StringArray(values=list(value)))
    return lc.ParameterValue(json_value=json.dumps(value, sort_keys=True, default=str))


def from_parameter_value(pv: lc.ParameterValue) -> Any:
    kind = pv.WhichOneof("kind")
    if kind is None:
        return None
    if kind == "double_array":
        return tuple(pv.double_array.values)
    if kind == "string_array":
        return tuple(pv.string_array.values)
    if kind == "json_value":
        return json.loads(pv.json_value)
    return getattr(pv, kind)


def coerce_parameter(
    name: str, annotation: Any, value: Any, base_dir: str | Path | None = None,
    confinement: Confinement | None = None, device: bool = False,
) -> Any:
    """Convert a raw value to the declared type of parameter ``name``, or raise
    ParameterError saying what was expected.

    A parameter annotated ``pathlib.Path`` is a file path: a relative path is taken
    from ``base_dir`` (the rig file's folder). ``Path | None`` is an optional file path:
    "" or None give None. With a ``confinement`` (a served component, ``moonpool
    serve``) the path must lie inside its folder, and a ``device`` parameter (declared
    ``param(..., device=True)``) must be a device it allows (components/sdk/confine.py).
    """
    if _is_optional_path(annotation):
        if value is None or value == "":
            return None
        annotation = Path
    if annotation is Path:
        if isinstance(value, Path):
            value = str(value)
        if not isinstance(value, str) or not value:
            raise ParameterError(
                f"parameter '{name}' expects a file path (a string), got {value!r}",
                fix=f"set {name} to a path, relative to the rig file's folder",
            )
        if confinement is not None:
            return confinement.path(name, value)
        path = Path(value).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        return path
    if device and confinement is not None and isinstance(value, str):
        return confinement.device(name, value)
    ptype = _parameter_type(annotation)
    bad = ParameterError(
        f"parameter '{name}' expects {_type_word(ptype)}, got {value!r}",
        fix=f"set {name} to {_type_word(ptype)} in the rig",
    )
    if ptype == lc.PARAMETER_TYPE_DOUBLE:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        v = float(value)
        if math.isnan(v):
            raise bad
        return v
    if ptype == lc.PARAMETER_TYPE_INT:
        if isinstance(value, bool):
            raise bad
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int):
            raise bad
        return value
    if ptype == lc.PARAMETER_TYPE_BOOL:
        if not isinstance(value, bool):
            raise bad
        return value
    if ptype == lc.PARAMETER_TYPE_STRING:
        if not isinstance(value, str):
            raise bad
        return value
    if ptype == lc.PARAMETER_TYPE_DOUBLE_ARRAY:
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            raise bad
        return tuple(float(v) for v in value)
    if ptype == lc.PARAMETER_TYPE_STRING_ARRAY:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise bad
        return tuple(value)
    return value


def _type_word(ptype: int) -> str:
    return {
        lc.PARAMETER_TYPE_DOUBLE: "a number",
        lc.PARAMETER_TYPE_INT: "an integer",
        lc.PARAMETER_TYPE_BOOL: "true or false",
        lc.PARAMETER_TYPE_STRING: "a string",
        lc.PARAMETER_TYPE_DOUBLE_ARRAY: "an array of numbers",
        lc.PARAMETER_TYPE_STRING_ARRAY: "an array of strings",
        lc.PARAMETER_TYPE_JSON: "a value",
    }.get(ptype, "a value")


def build_parameters(
    params_cls: type,
    given: Mapping[str, Any],
    component: str = "",
    base_dir: str | Path | None = None,
    confinement: Confinement | None = None,
) -> Any:
    """Validate ``given`` against the Parameters dataclass; report every problem at once.
    Relative ``Path`` parameters are taken from ``base_dir``; with a ``confinement``
    path and device parameters must stay within it (see coerce_parameter)."""
    if len(given) > MAX_PARAMETERS:
        raise ParameterError(
            f"{len(given)} parameters given, more than {MAX_PARAMETERS}",
            component=component, fix="give only the parameters the component declares")
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    types = _field_types(params_cls)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key in given:
        if key not in fields:
            near = _closest(key, fields)
            hint = f" (did you mean '{near}'?)" if near else ""
            problems.append(f"unknown parameter '{key}'{hint}")
    for name, f in fields.items():
        if name in given:
            try:
                values[name] = coerce_parameter(
                    name, types.get(name, Any), given[name], base_dir, confinement,
                    bool(f.metadata.get("device")))
            except ParameterError as exc:
                problems.append(exc.message)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            problems.append(f"missing required parameter '{name}'")
    if problems:
        known = ", ".join(fields) or "none"
        if len(problems) > MAX_PROBLEMS:
            problems[MAX_PROBLEMS:] = [f"and {len(problems) - MAX_PROBLEMS} more"]
        raise ParameterError(
            "; ".join(problems),
            component=component,
            fix=f"fix the component's [parameters] in the rig (known parameters: {known})",
        )
    try:
        return params_cls(**values)
    except (TypeError, ValueError) as exc:
        raise ParameterError(str(exc), component=component, fix="check the parameter values") from exc


def _closest(key: str, options: Iterable[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(key, list(options), n=1)
    return found[0] if found else None


# ---------------------------------------------------------------- description


def _port_spec(port: Port, direction: int) -> lc.PortSpec:
    return lc.PortSpec(
        name=port.name,
        direction=direction,
        type=port.type_name,
        queued=port.queued,
        description=port.description,
        attachment=port.attachment,
    )


def describe_class(
    cls: type[Component],
    inputs: Sequence[Port] | None = None,
    outputs: Sequence[Port] | None = None,
) -> lc.Description:
    """The Description of a component class (its ports and parameters); ``inputs`` /
    ``outputs`` replace the class's ports (a configured instance's ports)."""
    inputs = tuple(cls.inputs if inputs is None else inputs)
    outputs = tuple(cls.outputs if outputs is None else outputs)
    desc = lc.Description(
        kind=cls.kind(),
        description=" ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()),
        protocol_version=PROTOCOL_VERSION,
        initial_inputs=bool(getattr(cls, "initial_inputs", False)),
    )
    desc.inputs.extend(_port_spec(p, lc.PORT_DIRECTION_INPUT) for p in inputs)
    desc.outputs.extend(_port_spec(p, lc.PORT_DIRECTION_OUTPUT) for p in outputs)
    types = _field_types(cls.Parameters)
    for f in dataclasses.fields(cls.Parameters):
        spec = lc.ParameterSpec(
            name=f.name,
            type=_parameter_type(types.get(f.name, Any)),
            description=f.metadata.get("doc", ""),
            unit=f.metadata.get("unit", ""),
        )
        if f.default is not dataclasses.MISSING:
            spec.default_value.CopyFrom(to_parameter_value(f.default))
        elif f.default_factory is not dataclasses.MISSING:
            spec.default_value.CopyFrom(to_parameter_value(f.default_factory()))
        else:
            spec.required = True
        desc.parameters.append(spec)
    extra = [
        p.type.DESCRIPTOR
        for p in (*inputs, *outputs)
        if not p.type_name.startswith("moonpool.v1.")
    ]
    if extra:
        desc.extra_schemas = serialize(file_descriptor_set(extra))
    return desc


def check_unique_ports(ports: Sequence[Port], what: str, kind: str) -> None:
    names = [p.name for p in ports]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise PortError(f"{kind} declares {what} port(s) {sorted(dup)} twice",
                        fix="give every port of a direction its own name")


# -------------------------------------------------------------------- framing


def encode_request(req: lc.Request, attachments: Sequence[Any] = ()) -> list[Any]:
    """Frames of a request: [envelope, attachment...]."""
    return [serialize(req), *attachments]


def decode_envelope(frames: Sequence[bytes], cls: type[Message]) -> Message:
    """Parse frame 0 as ``cls`` (Request or Reply); ProtocolError on garbage."""
    if not frames:
        raise ProtocolError("empty message (no frames)",
                            fix="send the serialized envelope as frame 0 (docs/protocol.md §2)")
    msg = cls()
    try:
        msg.ParseFromString(bytes(frames[0]))
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ProtocolError(
            f"frame 0 is not a valid {cls.DESCRIPTOR.full_name}: {exc}",
            fix=f"send a serialized {cls.DESCRIPTOR.full_name} as frame 0, with a strict "
                "protobuf encoder (strings valid UTF-8; docs/protocol.md §2, §8)",
        ) from exc
    return msg


def json_dumps(value: Any) -> str:
    """Stable JSON text (sorted keys) for metrics and structured parameters."""
    return json.dumps(value, sort_keys=True, allow_nan=False, default=float)


# ------------------------------------------------------- hot-path encoding
#
# The Step / StepBatch requests and their results are built by hand in the
# protobuf wire format instead of through message objects: a component step in
# another process needs one of each per instant, and building them with the
# Python protobuf API (a wrapper object per nested message, a call per field)
# costs about 2 µs per member against about 0.6 µs here. The bytes are those
# of the deterministic serialization of the same message (fields in number
# order, default values omitted), so nothing on the wire changes; decoding
# stays with the protobuf library. tests/unit/test_wire_encoding.py checks
# both against the library.

# Every varint below 2**14 (one or two bytes), looked up instead of computed: nearly
# every length, and compute times up to 16 µs, fall here (a table of ~0.7 MB).
_VARINT_SMALL = [bytes((i,)) for i in range(128)] + [
    bytes(((i & 0x7F) | 0x80, i >> 7)) for i in range(128, 1 << 14)
]


# The low 14 bits of a larger number: two bytes, both with the continuation bit. Times
# in nanoseconds (a 1 ms step at t = 20 s is 2e10: five bytes) and request ids take
# two or three lookups instead of a loop over their 7-bit groups.
_VARINT_LOW14 = [bytes(((i & 0x7F) | 0x80, (i >> 7) | 0x80)) for i in range(1 << 14)]


def varint(n: int) -> bytes:
    """Base-128 varint of an integer field (int64 negatives as 10 bytes of two's complement)."""
    if 0 <= n < 16384:
        return _VARINT_SMALL[n]
    if n < 0:
        n += 1 << 64
    low, small = _VARINT_LOW14, _VARINT_SMALL
    out = low[n & 0x3FFF]
    n >>= 14
    while n >= 16384:
        out += low[n & 0x3FFF]
        n >>= 14
    return out + small[n]


def len_field(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field: ``tag`` (its key, already encoded), length, bytes."""
    return b"".join((tag, varint(len(data)), data))


def string_field(tag: bytes, text: str) -> bytes:
    """A string field, omitted when empty (proto3 default)."""
    return len_field(tag, text.encode("utf-8")) if text else b""


# Keys (field number << 3 | wire type) of the fields the hot path writes.
# Request/Reply: protocol_version (1) with its value, then the key of request_id (2).
K_REQUEST_HEAD = b"\x08" + varint(PROTOCOL_VERSION) + b"\x10"
K_INSTANCE = b"\x1a"  # Request.instance / Reply.instance (3)
K_STEP = b"\x6a"  # Request.step / Reply.step_result (13)
K_STEP_BATCH = b"\x82\x01"  # Request.step_batch (16)
K_STEP_BATCH_RESULT = b"\x8a\x01"  # Reply.step_batch_result (17)
K_ITEM = b"\x0a"  # StepBatch.steps, StepBatchResult.results, InstanceStep(Result).instance (1)
K_ITEM_BODY = b"\x12"  # InstanceStep.step / InstanceStepResult.result (2)
K_TIME = b"\x08"  # Step.time_ns / StepResult.time_ns (1)
K_STEP_NS = b"\x10"  # Step.step_ns (2)
K_INPUT = b"\x1a"  # Step.inputs (3)
K_PARAMETER = b"\x22"  # Step.parameters (4)
K_OUTPUT = b"\x12"  # StepResult.outputs (2)
K_COMPUTE = b"\x18"  # StepResult.compute_ns (3)
K_FINISHED = b"\x22"  # StepResult.finished (4)
K_FAILED = b"\x28"  # StepResult.failed (5)
K_PAYLOAD = b"\x1a"  # PortValue.payload (3)
K_ATTACHMENT = b"\x20"  # PortValue.attachment (4)


def port_value_prefix(port: str, type_name: str) -> bytes:
    """The constant part of a PortValue on one port: its ``port`` and ``type`` fields."""
    return string_field(b"\x0a", port) + string_field(b"\x12", type_name)


def port_value(prefix: bytes, payload: bytes, attachment: int = 0) -> bytes:
    """An encoded PortValue (``prefix`` from :func:`port_value_prefix`)."""
    parts = [prefix]
    if payload:
        parts += (K_PAYLOAD, varint(len(payload)), payload)
    if attachment:
        parts += (K_ATTACHMENT, varint(attachment))
    return b"".join(parts)


def request_head(request_id: int) -> bytes:
    """The first fields of a Request or Reply: protocol_version and request_id."""
    return K_REQUEST_HEAD + varint(request_id) if request_id else K_REQUEST_HEAD[:-1]
