"""The ``[[connections]]`` array: ``from`` an output ``to`` an input, with a ``delay``.

At the file level a connection must name existing components and each input may
take one connection; that the ports exist and carry the same message type is
checked with the classes loaded (:mod:`.deep`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..rig import ConnectionConfig
from . import values
from .report import Report, did_you_mean, kind_of
from .vocabulary import CONNECTION


def array_of_tables(report: Report, key: str, value: Any, example: str) -> list[Any]:
    """The elements of ``[[key]]`` ([] when absent, with a problem when not an array)."""
    if value is None:
        return []
    if not isinstance(value, list):
        report.add(key, f"expected an array of tables; write each entry as [[{key}]] ({example})")
        return []
    return value


def connections(
    report: Report, value: Any, names: Sequence[str]
) -> tuple[list[ConnectionConfig], list[str]]:
    """Valid [[connections]] and the file key (``connections[i]``) of each."""
    out: list[ConnectionConfig] = []
    keys: list[str] = []
    for i, spec in enumerate(array_of_tables(report, "connections", value, "with from and to")):
        key = f"connections[{i}]"
        if not isinstance(spec, dict):
            report.add(key, f"expected a table with from and to, got {kind_of(spec)}")
            continue
        values.check_keys(report, key, spec, CONNECTION.names, f"{CONNECTION.title} #{i}")
        source = _port_ref(
            report, f"{key}.from", spec.get("from"), names, "output", "vehicle.state"
        )
        target = _port_ref(report, f"{key}.to", spec.get("to"), names, "input", "sensor.state")
        delay = values.duration(
            report, f"{key}.delay", CONNECTION.value(spec, "delay"), positive=False
        )
        if source and target and delay is not None:
            out.append(ConnectionConfig(*source, *target, delay_ns=delay))
            keys.append(key)
    return out, keys


def _port_ref(
    report: Report, key: str, value: Any, names: Sequence[str], direction: str, example: str
) -> tuple[str, str] | None:
    """``component.port`` -> (component, port), checking the component exists."""
    if value is None:
        report.add(key, f'missing: name the {direction} port as COMPONENT.PORT, e.g. "{example}"')
        return None
    if not isinstance(value, str):
        report.add(key, f'expected a string COMPONENT.PORT like "{example}", got {kind_of(value)}')
        return None
    component, dot, port = value.partition(".")
    if not dot or not component or not port or "." in port:
        report.add(
            key,
            f"'{value}' is not COMPONENT.PORT; write the component name, one dot and the "
            f'{direction} port name, e.g. "{example}"',
        )
        return None
    if component not in names:
        report.add(key, unknown_component(component, names))
        return None
    return component, port


def unknown_component(name: str, names: Sequence[str]) -> str:
    """The message for a reference to a component the rig does not declare."""
    return (
        f"no component named '{name}'{did_you_mean(name, names)}; "
        f"use one of the [components] tables ({', '.join(names) or 'none defined'})"
    )


def inputs_connected_twice(
    report: Report, connections: Sequence[ConnectionConfig], keys: Sequence[str]
) -> None:
    """An input port takes one connection: one problem per extra connection."""
    first: dict[tuple[str, str], str] = {}
    for conn, key in zip(connections, keys):
        target = (conn.target, conn.target_port)
        if target in first:
            report.add(
                f"{key}.to",
                f"input {conn.target}.{conn.target_port} is already connected by {first[target]}; "
                "an input port takes one connection: remove one of them",
            )
        else:
            first[target] = key
