"""Problems of one rig file: where each key is written, what is wrong, what to do.

:class:`Report` collects :class:`~moonpool.components.sdk.errors.Problem` s (all of
them: nothing stops at the first) and finds the line of each dotted key
(``components.pid.period``, ``connections[2].to``; arrays count from 0) with
:func:`line_index`, a best-effort scan of the text. :func:`did_you_mean` and
:func:`kind_of` are the phrases every message uses.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moonpool.components.sdk.errors import Problem


@dataclass
class Report:
    """Collects problems of one rig file and finds the line of each key."""

    file: str
    text: str
    overridden: dict[str, str] = field(default_factory=dict)
    """Dotted key -> the ``--set`` text that gave it its value."""
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = line_index(self.text)

    def add(self, key: str, message: str) -> None:
        """Record a problem at ``key`` (the line is looked up in the text)."""
        note = self._override_note(key)
        self.problems.append(Problem(self.file, key, message + note, self.line_of(key)))

    def line_of(self, key: str) -> int:
        """1-based line of ``key``, else of its closest enclosing table; 0 if none."""
        while key:
            if key in self.lines:
                return self.lines[key]
            key = parent_key(key)
        return 0

    def _override_note(self, key: str) -> str:
        for set_key, text in self.overridden.items():
            if key == set_key or key.startswith(set_key + ".") or key.startswith(set_key + "["):
                return f" (value from --set {text})"
        return ""


def parent_key(key: str) -> str:
    """``a.b[2].c`` -> ``a.b[2]`` -> ``a.b`` -> ``a`` -> ``''``."""
    if key.endswith("]"):
        return key[: key.rindex("[")]
    cut = key.rfind(".")
    return key[:cut] if cut > 0 else ""


def unique(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in order, each once (load and check may find the same one)."""
    seen: set[Problem] = set()
    out = []
    for p in problems:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or ``''``."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def kind_of(value: Any) -> str:
    """What kind of TOML value ``value`` is, for messages ("a string", "an array")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


# ------------------------------------------------------------------ line index

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'"
KEY_PART = rf"(?:{_BARE}|{_QUOTED})"
"""One part of a dotted TOML key: bare, or quoted."""
_DOTTED = rf"{KEY_PART}(?:\s*\.\s*{KEY_PART})*"
_KEY_LINE = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=(?P<rest>.*)$")
_TABLE_LINE = re.compile(rf"^\s*\[\s*(?P<key>{_DOTTED})\s*\]\s*(?:#.*)?$")
_ARRAY_LINE = re.compile(rf"^\s*\[\[\s*(?P<key>{_DOTTED})\s*\]\]\s*(?:#.*)?$")
_PART = re.compile(KEY_PART)


def key_parts(dotted: str) -> list[str]:
    """``components."my pid".period`` -> ``['components', 'my pid', 'period']``."""
    parts = []
    for m in _PART.finditer(dotted):
        token = m.group(0)
        if token[0] in "\"'":
            token = token[1:-1]
        parts.append(token)
    return parts


def line_index(text: str) -> dict[str, int]:
    """Dotted key (``connections[1].to``) -> 1-based line where it is written.

    A best-effort scan, not a parser: it follows table and array-of-tables headers
    and ``key =`` lines, skipping comments and multi-line strings. Every enclosing
    table of a key is indexed too (at its first appearance).
    """
    index: dict[str, int] = {}
    arrays: dict[str, int] = {}  # array-of-tables key -> elements seen so far
    table: list[str] = []
    in_string: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        if m := _ARRAY_LINE.match(line):
            parts = key_parts(m["key"])
            parent = _render(parts[:-1], arrays)
            base = f"{parent}.{parts[-1]}" if parent else parts[-1]
            arrays[base] = arrays.get(base, 0) + 1
            table = [f"{base}[{arrays[base] - 1}]"]
            _index_key(index, table, lineno)
        elif m := _TABLE_LINE.match(line):
            table = [_render(key_parts(m["key"]), arrays)]
            _index_key(index, table, lineno)
        elif m := _KEY_LINE.match(line):
            _index_key(index, [*table, *key_parts(m["key"])], lineno)
            in_string = _opens_multiline_string(m["rest"])
    return index


def _render(parts: list[str], arrays: Mapping[str, int]) -> str:
    """Join key parts, adding ``[i]`` after a part that names an array of tables
    (TOML's ``[connections.x]`` belongs to the last ``[[connections]]``)."""
    out = ""
    for part in parts:
        out = f"{out}.{part}" if out else part
        if out in arrays:
            out = f"{out}[{arrays[out] - 1}]"
    return out


def _index_key(index: dict[str, int], parts: list[str], lineno: int) -> None:
    key = ".".join(parts)
    while key:
        index.setdefault(key, lineno)
        key = parent_key(key)


def _opens_multiline_string(rest: str) -> str | None:
    for quote in ('"""', "'''"):
        if rest.count(quote) % 2 == 1:
            return quote
    return None
