"""Rig files: TOML -> :class:`~moonpool.orchestrator.rig.Rig`, with every problem reported.

docs/rigs.md is the reference of the format, docs/rig.schema.json its JSON Schema.
Three entry points:

- :func:`load_rig` reads, applies ``--set`` overrides and the command-line options,
  and checks everything that needs no component code (types, names, durations,
  references between tables). It raises :class:`RigFileError` when the file cannot
  be read or is not TOML, and :class:`RigValidationError` listing *every* problem.
- :func:`check_rig` loads the component classes and checks what needs them: ports
  and their message types, parameters, plotted fields.
- :func:`load_and_check` does both and reports the union of their problems at once
  (what ``moonpool check`` shows).

Every :class:`Problem` names the file, the dotted key (``components.pid.period``,
``connections[2].to``; arrays count from 0), the line (best effort, 0 if unknown)
and a message that says what is wrong and how to fix it.

The pieces, in the order a rig goes through them:

=========================  ============================================================
``reading``                the file's text, TOML, ``--set`` overrides, vehicle profiles:
                           the **only** module of moonpool that parses TOML
``vocabulary``             every key of every table (schema, meaning, default, where it
                           applies): the loader's key lists and defaults, and the
                           source of ``schema``
``report``                 collecting problems; the line of each dotted key;
                           did-you-mean suggestions
``values``                 typed values (strings, durations, rates, seeds, choices)
``parse``                  the file level: every section below -> a Rig + problems
``run_section``            ``[run]``
``components_section``     ``[components.NAME]``
``placements``             what ``run = "remote"`` (endpoint, CURVE keys) and
                           ``run = "replay"`` (the recording) add
``connections_section``    ``[[connections]]``
``plots_section``          ``[[plots]]``
``deep``                   the checks that load component classes: parameters, ports,
                           connections, plots
``fields``                 plotted field paths against protobuf descriptors
``schema``                 the JSON Schema of the format, from ``vocabulary``
                           (``python -m moonpool.orchestrator.rigfile.schema``)
=========================  ============================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from moonpool.components.sdk.errors import Problem, RigValidationError

from ..rig import Rig
from . import reading
from .deep import deep_check
from .parse import parse
from .report import Report, unique

__all__ = ["apply_overrides", "check_rig", "load_and_check", "load_rig"]


def load_rig(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    until_s: float | None = None,
    seed: int | None = None,
    mode: str | None = None,
    realtime: float | None = None,
) -> Rig:
    """Read and validate the rig file ``path`` (without importing any component).

    ``overrides`` are ``--set key.path=value`` texts; ``until_s``, ``seed``,
    ``mode`` (``inproc`` or ``process``, for every component) and ``realtime`` (a
    real-time factor) replace what the file says. Raises RigFileError or
    RigValidationError (all problems at once).
    """
    parsed = parse(path, overrides, until_s=until_s, seed=seed, mode=mode, realtime=realtime)
    if parsed.problems:
        raise RigValidationError(parsed.problems)
    return parsed.rig


def check_rig(rig: Rig) -> list[Problem]:
    """The problems that need the component classes: entries, ports, types, parameters.

    A remote component whose entry cannot be loaded here is skipped (its code may
    exist only on the machine that serves it).
    """
    return deep_check(rig, Report(str(rig.path), rig.source_text))


def load_and_check(path: str | Path, overrides: Sequence[str] = (), **kw: Any) -> Rig:
    """:func:`load_rig` then :func:`check_rig`; one RigValidationError with all problems.

    Keyword arguments are those of :func:`load_rig` (``until_s``, ``seed``, ``mode``,
    ``realtime``).
    """
    parsed = parse(path, overrides, **kw)
    report = Report(str(path), parsed.rig.source_text, parsed.report.overridden)
    deep = deep_check(parsed.rig, report, parsed.connection_keys, parsed.plot_keys)
    problems = unique([*parsed.problems, *deep])
    if problems:
        raise RigValidationError(problems)
    return parsed.rig


def apply_overrides(data: dict, overrides: Sequence[str], file: str) -> list[Problem]:
    """Apply ``key.path=value`` texts to the parsed rig ``data`` in place.

    The value is read as a TOML value (``3``, ``1.5``, ``true``, ``[1, 2]``,
    ``"text"``, ``{a = 1}``) and, if it is not one, taken as a plain string
    (``20s``, ``quickstart.vehicle``). Missing tables along the path are created;
    ``connections[1].delay`` addresses an element of an array of tables.
    Returns one Problem per override that cannot be applied.
    """
    return reading.apply_overrides(data, overrides, file)[0]

