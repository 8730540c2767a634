"""The file level: text -> TOML -> ``--set`` overrides -> every section -> a Rig.

:func:`parse` never stops at a bad value: each section reports into one
:class:`~.report.Report` and goes on with placeholders, so the rig it returns is
complete in shape and the problems are all of them. It imports no component.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from moonpool.components.sdk.errors import Problem

from ..rig import Rig
from . import values
from .components_section import component_names, components
from .connections_section import connections, inputs_connected_twice
from .plots_section import plots
from .reading import apply_overrides, overrides_note, parse_toml, read_text
from .report import Report
from .run_section import run_config
from .scenario_section import scenarios
from .vocabulary import TOP


@dataclass
class Parsed:
    """What :func:`parse` found: a rig (with placeholders where values are bad),
    the problems, and the file key of each connection and plot kept in the rig."""

    rig: Rig
    report: Report
    connection_keys: tuple[str, ...]
    plot_keys: tuple[str, ...]
    scenario_keys: tuple[str, ...] = ()

    @property
    def problems(self) -> list[Problem]:
        return self.report.problems


def parse(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    until_s: float | None = None,
    seed: int | None = None,
    mode: str | None = None,
    realtime: float | None = None,
) -> Parsed:
    """Read, override and validate; never raises RigValidationError itself."""
    file = str(path)
    text = read_text(path)
    data = parse_toml(text, file)
    set_problems, applied = apply_overrides(data, overrides, file)
    report = Report(file, text, applied)
    report.problems.extend(set_problems)

    values.check_keys(report, "", data, TOP.names, TOP.title)
    name = values.string(report, "name", data.get("name", Path(path).stem), required=True)
    description = values.string(report, "description", TOP.value(data, "description"))
    declared = component_names(data.get("components"))
    base_dir = Path(path).resolve().parent
    run = run_config(report, data.get("run"), declared, until_s, seed, realtime, base_dir)
    comps = components(report, data.get("components"), base_dir, mode)
    conns, connection_keys = connections(report, data.get("connections"), declared)
    figures, plot_keys = plots(report, data.get("plots"), declared)
    inputs_connected_twice(report, conns, connection_keys)
    changes, scenario_keys = scenarios(report, data.get("scenario"), declared)

    rig = Rig(
        path=Path(path),
        name=name or Path(path).stem,
        run=run,
        components=tuple(comps),
        connections=tuple(conns),
        plots=tuple(figures),
        scenarios=tuple(changes),
        description=description or "",
        source_text=text + overrides_note(overrides, until_s, seed, mode, realtime),
    )
    return Parsed(rig, report, tuple(connection_keys), tuple(plot_keys), tuple(scenario_keys))
