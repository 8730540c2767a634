"""The ``[[plots]]`` array: extra figures, each a ``title`` and ``series`` of
``COMPONENT.PORT:FIELD`` signals.

At the file level a series must be well formed and name an existing component; that
the port is an output and the field a number of its message is checked with the
classes loaded (:mod:`.deep`, :mod:`.fields`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import plotexpr
from ..rig import PlotSpec
from . import values
from .connections_section import array_of_tables, unknown_component
from .report import Report, kind_of
from .vocabulary import FIELD_RE, PLOT, PLOT_KINDS


def plots(report: Report, value: Any, names: Sequence[str]) -> tuple[list[PlotSpec], list[str]]:
    """Valid [[plots]] and the file key (``plots[i]``) of each."""
    out: list[PlotSpec] = []
    keys: list[str] = []
    for i, spec in enumerate(array_of_tables(report, "plots", value, "with title and series")):
        key = f"plots[{i}]"
        if not isinstance(spec, dict):
            report.add(key, f"expected a table with title and series, got {kind_of(spec)}")
            continue
        values.check_keys(report, key, spec, PLOT.names, f"{PLOT.title} #{i}")
        title = None
        if "title" not in spec:
            report.add(f"{key}.title", 'missing: give the figure a title, e.g. title = "Depth"')
        else:
            title = values.string(report, f"{key}.title", spec["title"], required=True)
        series = _series_list(report, f"{key}.series", spec.get("series"), names)
        ylabel = values.string(report, f"{key}.ylabel", PLOT.value(spec, "ylabel"))
        xlabel = values.string(report, f"{key}.xlabel", PLOT.value(spec, "xlabel"))
        zlabel = values.string(report, f"{key}.zlabel", PLOT.value(spec, "zlabel"))
        kind = values.choice(report, f"{key}.kind", PLOT.value(spec, "kind"), PLOT_KINDS)
        if kind == "xy" and series and len(series) % 2:
            report.add(f"{key}.series", f"kind = \"xy\" takes the series in pairs (x, y); "
                       f"got {len(series)}: give an even number, e.g. [\"vehicle.state:"
                       "position_ned_m.y\", \"vehicle.state:position_ned_m.x\"] (east, north)")
            series = None
        if kind == "xyz" and series and len(series) % 3:
            report.add(f"{key}.series", f"kind = \"xyz\" takes the series in triples (x, y, z); "
                       f"got {len(series)}: give a multiple of 3, e.g. [\"vehicle.state:"
                       "position_ned_m.y\", \"vehicle.state:position_ned_m.x\", "
                       "\"vehicle.state:position_ned_m.z\"] (east, north, depth)")
            series = None
        if (title and series and ylabel is not None and xlabel is not None
                and zlabel is not None and kind):
            out.append(PlotSpec(title=title, series=tuple(series), ylabel=ylabel, kind=kind,
                                xlabel=xlabel, zlabel=zlabel))
            keys.append(key)
    return out, keys


def _series_list(report: Report, key: str, value: Any, names: Sequence[str]) -> list[str] | None:
    example = '["vehicle.state:position_ned_m.z"]'
    if value is None:
        report.add(key, f"missing: list the signals to draw, e.g. series = {example}")
        return None
    if not isinstance(value, list) or not value:
        report.add(
            key, f"expected a non-empty array of COMPONENT.PORT:FIELD strings like {example}"
        )
        return None
    ok = [_expression(report, f"{key}[{j}]", s, names) for j, s in enumerate(value)]
    return list(value) if all(ok) else None


def _expression(report: Report, key: str, value: Any, names: Sequence[str]) -> bool:
    """A signal or an expression of signals (orchestrator/plotexpr.py)."""
    if not isinstance(value, str):
        return _series(report, key, value, names)
    try:
        node = plotexpr.parse(value)
    except ValueError as exc:
        report.add(key, str(exc))
        return False
    return all([_series(report, key, leaf, names) for leaf in plotexpr.leaves(node)])


def _series(report: Report, key: str, value: Any, names: Sequence[str]) -> bool:
    """Check one ``component.port:field.path`` (syntax and component)."""
    example = '"vehicle.state:position_ned_m.z"'
    if not isinstance(value, str):
        report.add(
            key, f"expected a string COMPONENT.PORT:FIELD like {example}, got {kind_of(value)}"
        )
        return False
    ref, colon, path = value.partition(":")
    component, dot, port = ref.partition(".")
    if not (colon and dot and component and port and "." not in port and FIELD_RE.match(path)):
        report.add(
            key,
            f"'{value}' is not COMPONENT.PORT:FIELD; write the output port, a colon and the "
            f"message field path, e.g. {example}",
        )
        return False
    if component not in names:
        report.add(key, unknown_component(component, names))
        return False
    return True
