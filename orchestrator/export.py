"""Tables from a recording: one per topic, for pandas, Arrow, CSV or Parquet.

Call order::

    columns = topic_columns(recording, topics=None)   {topic: {column: list}}, no dependency
    tables = read(recording, topics=None)             {topic: pyarrow.Table} (pyarrow)
    tables["/vehicle/state"].to_pandas()              a pandas DataFrame (pandas)
    export(recording, out_dir, fmt="csv"|"parquet", topics=None)  one file per topic

One row per message, in publication order. The first two columns are the time: the
message's log time (when it became visible, simulation time) as ``log_time_ns``
(int64, exact) and ``t_s`` (float seconds, for plotting). Then every field of the
message, flattened with its protobuf names:

- nested messages with dots: ``position_ned_m.x``, ``header.sim_time_ns``;
- repeated fields indexed from 0: ``force_n[0]``, ``thrusters[2].speed_radps``;
  repeated messages with a non-empty string field ``name`` are keyed by it:
  ``signals[depth].value`` (as in the plots);
- numbers and bools as they are; enums as their number; strings as text;
- ``bytes`` fields, maps and attachments (image pixels) are left out.

A field absent from some messages (a repeated element, a named signal that appears
later) is empty (None / NaN) in those rows. Topics are ``/component/port``; views
(``{topic}/foxglove``) are not read. A topic can be named ``/vehicle/state`` or
``vehicle.state``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from moonpool.components.sdk.errors import RigError

from .recording import decode_recorded, read_recording

FORMATS = ("csv", "parquet")
"""What :func:`export` writes."""

_SCALARS = {
    FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT,
    FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64,
    FieldDescriptor.CPPTYPE_BOOL, FieldDescriptor.CPPTYPE_ENUM,
    FieldDescriptor.CPPTYPE_STRING,
}


class ExportError(RigError):
    """Bad input to an export: an unknown topic or format, a missing extra (exit 2)."""


def flatten_fields(msg: Message, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(column name, value) of every field of ``msg`` (the module docstring's rules);
    fields left at their default in proto3 are included, so a column is present in
    every row of a type."""
    for fd in msg.DESCRIPTOR.fields:
        path = prefix + fd.name
        value = getattr(msg, fd.name)
        if fd.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
            if fd.is_repeated:
                if fd.message_type.GetOptions().map_entry:
                    continue
                name_fd = fd.message_type.fields_by_name.get("name")
                named = name_fd is not None and name_fd.cpp_type == FieldDescriptor.CPPTYPE_STRING
                for i, element in enumerate(value):
                    key = element.name if named and element.name else i
                    yield from flatten_fields(element, f"{path}[{key}].")
            else:
                yield from flatten_fields(value, path + ".")
            continue
        if fd.cpp_type not in _SCALARS or fd.type == FieldDescriptor.TYPE_BYTES:
            continue
        if fd.is_repeated:
            for i, v in enumerate(value):
                yield f"{path}[{i}]", v
        else:
            yield path, value


def topic_name(text: str) -> str:
    """``vehicle.state`` or ``/vehicle/state`` -> ``/vehicle/state``."""
    if text.startswith("/"):
        return text
    component, dot, port = text.partition(".")
    return f"/{component}/{port}" if dot else f"/{text}"


def topic_columns(recording: Path | str, topics: Iterable[str] | None = None
                  ) -> dict[str, dict[str, list[Any]]]:
    """{topic: {column: values}} for the recording's topics (all, or ``topics``), every
    column as long as the topic has messages (None where a message lacks the field).
    Raises ExportError for a topic the recording does not hold."""
    wanted = None if topics is None else [topic_name(t) for t in topics]
    rows: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for rec in read_recording(recording):
        if wanted is not None and rec.topic not in wanted:
            continue
        fields = dict(flatten_fields(decode_recorded(rec)))
        rows.setdefault(rec.topic, []).append((rec.log_time_ns, fields))
    if wanted is not None:
        missing = [t for t in wanted if t not in rows]
        if missing:
            from moonpool.orchestrator.recording import recording_info

            held = ", ".join(sorted(recording_info(recording).topics)) or "none"
            raise ExportError(f"{recording}: no messages on {', '.join(missing)}",
                              fix=f"name topics the recording holds: {held}")
    out: dict[str, dict[str, list[Any]]] = {}
    for topic, messages in (rows.items() if wanted is None else
                            ((t, rows[t]) for t in wanted)):
        names: dict[str, None] = {}  # first-seen order
        for _, fields in messages:
            names.update(dict.fromkeys(fields))
        columns: dict[str, list[Any]] = {
            "log_time_ns": [t for t, _ in messages],
            "t_s": [t * 1e-9 for t, _ in messages],
        }
        for name in names:
            columns[name] = [fields.get(name) for _, fields in messages]
        out[topic] = columns
    return out


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ExportError(
            "Arrow tables and Parquet need pyarrow, which is not installed",
            fix="install the data extra: pip install -e '.[data]' (CSV needs nothing)",
        ) from None
    return pyarrow


def read(recording: Path | str, topics: Sequence[str] | None = None) -> dict[str, Any]:
    """{topic: pyarrow.Table} of a recording (the module docstring); ``.to_pandas()``
    on a table gives a DataFrame. Needs pyarrow (the ``data`` extra)."""
    pa = _pyarrow()
    tables = {}
    for topic, columns in topic_columns(recording, topics).items():
        arrays = {"log_time_ns": pa.array(columns.pop("log_time_ns"), pa.int64())}
        for name, values in columns.items():
            arrays[name] = pa.array(values)
        tables[topic] = pa.table(arrays)
    return tables


def file_stem(topic: str) -> str:
    """``/vehicle/state`` -> ``vehicle.state`` (one file per topic)."""
    return topic.strip("/").replace("/", ".")


def export(recording: Path | str, out_dir: Path | str, fmt: str = "csv",
           topics: Sequence[str] | None = None) -> list[Path]:
    """Write one ``{component}.{port}.csv`` (or ``.parquet``) per topic into
    ``out_dir``; returns the files written."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}")
    out = Path(out_dir)
    if fmt == "parquet":
        _pyarrow()
        import pyarrow.parquet as pq

        tables = read(recording, topics)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for topic, table in tables.items():
            path = out / f"{file_stem(topic)}.parquet"
            pq.write_table(table, path)
            paths.append(path)
        return paths
    columns_by_topic = topic_columns(recording, topics)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for topic, columns in columns_by_topic.items():
        path = out / f"{file_stem(topic)}.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for row in zip(*columns.values()):
                writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                                 for v in row])
        paths.append(path)
    return paths


__all__ = ["ExportError", "FORMATS", "export", "flatten_fields", "read", "topic_columns"]
