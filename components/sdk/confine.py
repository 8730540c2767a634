"""Where the path parameters of a served component may point (``moonpool serve``).

An orchestrator that may connect to ``moonpool serve`` chooses every parameter of the
component it configures. A path parameter (annotated ``pathlib.Path``, or declared a
device with ``param(..., device=True)``) is therefore checked against the server's
:class:`Confinement` before the component sees it:

- a file parameter must be a relative path, taken from ``--base-dir`` (default the
  server's current folder, as a rig's paths are taken from the rig's folder), that
  stays **inside the served folder** (``--confine``, default ``--base-dir``): a ``..``
  that climbs out of it, or a symlink that leads out of it, is refused (the resolved
  path is what the component gets);
- a device (a serial port, ``/dev/video0``, a pyserial URL such as
  ``socket://host:port``) must be one the operator listed with ``--device``, exactly.

Anything else is refused with ParameterError (INVALID_PARAMETER) before the
filesystem is looked at, with the same words whether or not the path exists: a peer
learns nothing about the server's files outside the folder. Components the
orchestrator spawns from a local rig (``run = "process"``) are not confined: their
parameters come from the rig file on the same machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import ParameterError


@dataclass(frozen=True)
class Confinement:
    """The served folder and the devices a served component may open."""

    root: Path
    """The served folder, symlinks resolved: every file parameter resolves inside it."""
    base_dir: Path
    """Where relative paths start (symlinks resolved; inside ``root``)."""
    devices: frozenset[str] = frozenset()
    """Device paths or URLs (``--device``) a parameter may name exactly, outside the folder."""

    @classmethod
    def of(cls, base_dir: str | Path | None, root: str | Path | None = None,
           devices: Iterable[str] = ()) -> Confinement:
        """Paths from ``base_dir`` (None: the current folder), inside ``root`` (None:
        ``base_dir``); ValueError if ``base_dir`` is not inside ``root``."""
        base = Path(os.path.realpath(base_dir or os.getcwd()))
        top = Path(os.path.realpath(root)) if root else base
        if not _inside(str(base), str(top)):
            raise ValueError(f"{base_dir} is not inside {root}")
        return cls(top, base, frozenset(devices))

    def path(self, name: str, text: str) -> Path:
        """The file parameter ``name`` = ``text`` resolved inside the folder (or one of
        the allowed devices, as given); ParameterError otherwise."""
        if text in self.devices:
            return Path(text)
        if "\0" in text or PurePosixPath(text).is_absolute():
            raise self._refused(name, text)
        # normpath first: a '..' must not climb out, even through a symlink it passes
        rel = os.path.normpath(os.path.join(self.base_dir, text))
        real = os.path.realpath(rel)
        if not (_inside(rel, str(self.root)) and _inside(real, str(self.root))):
            raise self._refused(name, text)
        return Path(real)

    def device(self, name: str, text: str) -> str:
        """The device parameter ``name`` = ``text`` if the operator allows it."""
        if text not in self.devices:
            raise ParameterError(
                f"parameter '{name}': {text!r} is not a device this server may open",
                fix="ask the server's operator to allow it (moonpool serve --device "
                    f"{text!r}), or name one it allows")
        return text

    def _refused(self, name: str, text: str) -> ParameterError:
        extra = " or a device it allows (--device)" if self.devices else ""
        return ParameterError(
            f"parameter '{name}': {text!r} is not a path inside the folder this server "
            f"serves{extra}",
            fix="give a path relative to the server's --base-dir that stays inside its "
                "served folder (absolute paths, and '..' or links that lead out, are refused)")


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both absolute, normalised)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
