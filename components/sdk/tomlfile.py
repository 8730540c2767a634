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


MAX_DEPTH = 64
"""The deepest nesting of tables and arrays accepted (deeper input would exhaust
Python's recursion in the parser or in the checks after it)."""


def loads(text: str) -> dict[str, Any]:
    """The tables of a TOML document (``tomllib.loads``). Raises TOMLDecodeError, also
    for nesting deeper than ``MAX_DEPTH``."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise TOMLDecodeError(f"arrays or inline tables nested too deeply (at most "
                              f"{MAX_DEPTH} levels)") from None
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:  # without recursion
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TOMLDecodeError(f"arrays or tables nested more than {MAX_DEPTH} levels deep")
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return data


def error_line(exc: TOMLDecodeError) -> int | None:
    """The 1-based line a syntax error is on, or None when the parser does not say."""
    m = re.search(r"line (\d+)", str(exc))
    return int(m[1]) if m else None
