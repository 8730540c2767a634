"""TOML: the one module of moonpool that imports :mod:`tomllib`.

Rig files (``moonpool.orchestrator.rigfile.reading``), vehicle profiles and scene
files (``moonpool.components.world.scenefile``) are all parsed through
:func:`loads`; each caller turns a :class:`TOMLDecodeError` into its own error (a
``RigFileError`` or a ``Problem`` naming the file and line), so a syntax error reads
the same whatever the file.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

TOMLDecodeError = tomllib.TOMLDecodeError
"""What :func:`loads` raises on a syntax error (its text names the line and column)."""


def loads(text: str) -> dict[str, Any]:
    """The tables of a TOML document (``tomllib.loads``)."""
    return tomllib.loads(text)


def error_line(exc: TOMLDecodeError) -> int | None:
    """The 1-based line a syntax error is on, or None when the parser does not say."""
    m = re.search(r"line (\d+)", str(exc))
    return int(m[1]) if m else None
