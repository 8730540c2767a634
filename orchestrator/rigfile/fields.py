"""Plotted fields: whether ``FIELD`` of a ``COMPONENT.PORT:FIELD`` series is a number.

Paths follow orchestrator/plots.py: dots into messages (``position_ned_m.z``),
``[i]`` into repeated fields (``force_n[0]``), ``[name]`` into repeated messages
that have a string field ``name`` (``signals[depth].value``). Checked against the
port's protobuf descriptor.
"""

from __future__ import annotations

import re

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from .report import did_you_mean


_NOT_NUMBERS = (FieldDescriptor.CPPTYPE_STRING,)
_SEGMENT_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>[^\]]+)\])?$")
# One path segment, a key in brackets included (a signal may be named "left.traction_n").
_PATH_PART_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?")


def field_problem(desc: Descriptor, path: str) -> str | None:
    """Why ``path`` is not a plottable number of messages ``desc``, or None.

    Paths follow orchestrator/plots.py: dots into messages, ``[i]`` into repeated
    fields, ``[name]`` into repeated messages that have a string field ``name``.
    """
    parts = _PATH_PART_RE.findall(path)
    for i, segment in enumerate(parts):
        m = _SEGMENT_RE.match(segment)
        assert m is not None  # FIELD_RE checked the syntax
        name, index = m["name"], m["index"]
        here = ".".join(parts[: i + 1])
        f = desc.fields_by_name.get(name)
        if f is None:
            fields = list(desc.fields_by_name)
            return (
                f"{desc.full_name} has no field '{name}'{did_you_mean(name, fields)}; "
                f"its fields: {', '.join(fields)}"
            )
        problem = _index_problem(f, here, index)
        if problem:
            return problem
        last = i == len(parts) - 1
        if f.message_type is not None:
            if last:
                sub = list(f.message_type.fields_by_name)
                return (
                    f"'{here}' is a {f.message_type.full_name} message, not a number; "
                    f"plot one of its fields, e.g. '{here}.{sub[0] if sub else '...'}'"
                )
            desc = f.message_type
        elif not last:
            return f"'{here}' is a single value and has no field '{parts[i + 1]}'"
        elif f.cpp_type in _NOT_NUMBERS:
            return f"'{here}' is text, not a number; plot a numeric, boolean or enum field"
    return None


def _index_problem(f: FieldDescriptor, here: str, index: str | None) -> str | None:
    """Whether ``[index]`` fits field ``f`` (required on repeated fields, only there)."""
    if not f.is_repeated:
        return f"'{here}' is not a repeated field; remove [{index}]" if index is not None else None
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        return f"'{here}' is a map; maps are not plotted"
    if index is None:
        return f"'{here}' is a repeated field; pick an element, e.g. '{here}[0]'"
    named = f.message_type is not None and "name" in f.message_type.fields_by_name
    if index.isdigit() or named:
        return None
    return f"'{here}' is indexed by element number; write e.g. '{f.name}[0]', not [{index}]"
