"""Resolve an ENTRY to a component class.

An ENTRY is one of:

- a short name registered under the ``moonpool.components`` entry-point group
  (``quickstart.vehicle``; ``moonpool describe --list`` shows them);
- ``package.module:Class``;
- ``path/to/file.py:Class`` (relative paths are taken from ``base_dir``, the rig
  file's folder when loading a rig).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .component import Component
from .errors import EntryError

GROUP = "moonpool.components"


def entry_points(group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    """The entry points of ``group``, read once per process: reading them scans every
    installed distribution (~30 ms), and `moonpool check` resolves every component of a
    rig. (Keyed by the reader function too, so a test that replaces it is served.)"""
    return _entry_points(importlib.metadata.entry_points, group)


@functools.lru_cache(maxsize=8)
def _entry_points(reader: Any, group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    return tuple(reader(group=group))


def registered() -> dict[str, str]:
    """Short name -> ``module:Class`` for every registered component."""
    return {ep.name: ep.value for ep in entry_points(GROUP)}


def load_entry(entry: str, base_dir: str | Path | None = None) -> type[Component]:
    """The component class an ENTRY names; EntryError says why it cannot be loaded."""
    entry = entry.strip()
    short = registered()
    target = short.get(entry, entry)
    if ":" not in target:
        raise EntryError(
            f"cannot load component '{entry}': not a registered name and not 'module:Class'",
            fix=f"use 'package.module:Class', 'file.py:Class' or one of {sorted(short)}",
        )
    mod_name, _, attr = target.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_absolute() and base_dir is not None:
                path = Path(base_dir) / path
            module = _load_file(path)
        else:
            module = importlib.import_module(mod_name)
    except EntryError:
        raise
    except Exception as exc:  # ImportError, SyntaxError, anything the module raises
        raise EntryError(
            f"cannot import '{mod_name}' for component '{entry}': {type(exc).__name__}: {exc}",
            fix="check the module path and that its package is installed in this environment",
        ) from exc
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise EntryError(
                f"'{mod_name}' has no attribute '{attr}' (component '{entry}')",
                fix="check the class name after the colon",
            )
    if not (isinstance(obj, type) and issubclass(obj, Component)):
        raise EntryError(
            f"'{target}' is not a subclass of moonpool.components.Component",
            fix="derive the class from moonpool.components.Component",
        )
    return obj


def _load_file(path: Path):
    if not path.is_file():
        raise EntryError(f"component file '{path}' does not exist", fix="check the path in 'entry'")
    name = f"_moonpool_entry_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
