"""Subcommands of ``moonpool`` that domain packages contribute (``moonpool localize``,
``moonpool dataset pool``, ``moonpool calibrate water``, …).

Call order, as the ``moonpool`` command uses them::

    registered_commands()                   names -> Command / CommandGroup, from entry points
                                            (and the entries that could not be loaded)
    command.add_arguments(parser)           once, while the argument parser is built
    command.run(args) -> exit code          when the user typed that command

The orchestrator's CLI knows no domain package: a package registers its commands
under the entry-point group ``moonpool.commands``, with the words the user types
as the name (``"dataset pool"``) and a ``module:attribute`` that is a
:class:`Command` (a leaf the user runs) or a :class:`CommandGroup` (a word that
only groups leaves, e.g. ``"dataset"``, for its help line)::

    [project.entry-points."moonpool.commands"]
    "dataset" = "moonpool.components.localization.cli:DATASET"
    "dataset pool" = "moonpool.components.localization.cli:DATASET_POOL"

``run`` returns the process exit code: 0 success, 1 a computation that failed,
2 bad input (it prints the message itself, naming the place and the fix).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import EntryError, FitFailed, ParameterError
from .loading import entry_points

GROUP = "moonpool.commands"


@dataclass(frozen=True)
class Command:
    """A leaf subcommand: ``moonpool WORD [WORD] ARGS``."""

    help: str
    """One line for ``moonpool --help``."""
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the command's arguments to its parser."""
    run: Callable[[argparse.Namespace], int]
    """Runs it with the parsed arguments; returns the exit code (0, 1 or 2)."""


@dataclass(frozen=True)
class CommandGroup:
    """A word that groups subcommands (``moonpool dataset …``)."""

    help: str
    """One line for ``moonpool --help``."""


def registered_commands() -> tuple[dict[str, Command | CommandGroup], list[EntryError]]:
    """Every registered command, by the words the user types (``"calibrate water"``), and
    an :class:`EntryError` for each entry that cannot be loaded or is not a Command /
    CommandGroup (the others still work)."""
    out: dict[str, Command | CommandGroup] = {}
    problems: list[EntryError] = []
    for ep in sorted(entry_points(GROUP), key=lambda e: e.name):
        name = " ".join(ep.name.split())
        mod_name, _, attr = ep.value.partition(":")
        try:
            obj = getattr(importlib.import_module(mod_name.strip()), attr.strip())
        except Exception as exc:  # ImportError, AttributeError, anything the module raises
            problems.append(EntryError(
                f"cannot load the command '{name}' ({ep.value}): {type(exc).__name__}: {exc}",
                fix="reinstall the package that registers it (scripts/setup.sh), or remove the "
                    "entry point",
            ))
            continue
        if not isinstance(obj, (Command, CommandGroup)):
            problems.append(EntryError(
                f"the command '{name}' ({ep.value}) is a {type(obj).__name__}, not a "
                "moonpool.components.sdk.commands.Command or CommandGroup",
                fix="register a Command (or a CommandGroup for a word that only groups)"))
            continue
        out[name] = obj
    return out, problems


def run_fit(fit: Callable[[], tuple[str, Path, str]]) -> int:
    """A calibration command's run: ``fit()`` returns (report, out path, out text); its
    ParameterError (bad input) prints and gives 2, its FitFailed prints and gives 1;
    otherwise the report is printed and the file written (0). Nothing is written on
    failure."""
    try:
        report, out, text = fit()
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FitFailed as exc:
        print(f"error: calibration failed: {exc}", file=sys.stderr)
        return 1
    print(report)
    out.write_text(text, encoding="utf-8")
    print(f"fitted profile in {out}")
    return 0
