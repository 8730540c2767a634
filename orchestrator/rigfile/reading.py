"""Reading rig files: the text, TOML, ``--set`` overrides, vehicle profiles.

The only module of the orchestrator that parses TOML (through the SDK's
``tomlfile``, moonpool's one importer of :mod:`tomllib`): a rig file, the value of a
``--set KEY=VALUE`` and a ``profile = "FILE.toml"`` are parsed here, and nowhere
else (components get plain tables, never TOML).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from moonpool.components.sdk import tomlfile
from moonpool.components.sdk.errors import Problem, RigFileError

from .report import KEY_PART, Report, key_parts, kind_of


def read_text(path: str | Path) -> str:
    """The rig file's text; RigFileError if it cannot be read."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RigFileError(
            f"rig file '{path}' does not exist",
            fix="check the path (a relative path is taken from the current folder)",
        ) from exc
    except IsADirectoryError as exc:
        raise RigFileError(
            f"'{path}' is a folder, not a rig file", fix="give the path of a .toml rig file"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RigFileError(
            f"cannot read rig file '{path}': {exc}",
            fix="check the file's permissions and that it is UTF-8 text",
        ) from exc


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """Parse TOML; RigFileError with the file and line of the syntax error."""
    try:
        return tomlfile.loads(text)
    except tomlfile.TOMLDecodeError as exc:
        line = tomlfile.error_line(exc)
        where = f"{file}:{line}" if line is not None else file
        raise RigFileError(
            f"{where}: not valid TOML: {exc}",
            fix="correct the syntax at that line (docs/rigs.md shows a complete rig)",
        ) from exc


def read_profile(
    report: Report, key: str, value: Any, base_dir: Path, parameters: dict[str, Any]
) -> dict[str, Any]:
    """``profile = "FILE.toml"``: the file's tables become the parameter ``profile``, with
    the file's path as its ``file`` key (paths inside a profile are relative to it).

    A vehicle profile (fmus/hydrodynamics/profiles/) is TOML, and only this module
    parses TOML, so the rig loader reads it and hands the component its content as a
    table parameter named ``profile`` (components cannot read TOML themselves).
    """
    if not isinstance(value, str) or not value.strip():
        report.add(
            key, f"expected the path of a profile .toml file, got {kind_of(value)} {value!r}"
        )
        return parameters
    if "profile" in parameters:
        report.add(
            key,
            "the profile key and parameters.profile both set the parameter 'profile'; "
            "remove one of them",
        )
        return parameters
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        missing = isinstance(exc, FileNotFoundError)
        reason = "does not exist" if missing else f"cannot be read: {exc}"
        report.add(
            key, f"profile '{value}' {reason}; give a path relative to the rig file's folder"
        )
        return parameters
    try:
        data = tomlfile.loads(text)
    except tomlfile.TOMLDecodeError as exc:
        report.add(key, f"profile '{value}' is not valid TOML: {exc}")
        return parameters
    return {**parameters, "profile": {**data, "file": str(path)}}


# ------------------------------------------------------------------ overrides

_SEGMENT = rf"{KEY_PART}(?:\[\d+\])*"
_OVERRIDE_KEY = re.compile(rf"^{_SEGMENT}(?:\.{_SEGMENT})*$")
_SEGMENT_PART = re.compile(rf"(?P<name>{KEY_PART})|\[(?P<index>\d+)\]")

PathStep = str | int
"""A step of an override path: a table key or an array index."""


def apply_overrides(
    data: dict, overrides: Sequence[str], file: str
) -> tuple[list[Problem], dict[str, str]]:
    """Apply ``--set`` texts; (problems, dotted key -> text of each applied override)."""
    problems: list[Problem] = []
    applied: dict[str, str] = {}
    for text in overrides:
        key_text, sep, value_text = text.partition("=")
        key_text = key_text.strip()
        if not sep or not key_text:
            problems.append(
                Problem(
                    file,
                    f"--set {text}",
                    f"'{text}' is not KEY=VALUE; write e.g. --set run.seed=3 "
                    "or --set components.pid.parameters.kp=2.5",
                )
            )
            continue
        if not _OVERRIDE_KEY.match(key_text):
            problems.append(
                Problem(
                    file,
                    f"--set {key_text}",
                    f"'{key_text}' is not a dotted key; write e.g. run.until or "
                    "connections[0].delay (letters, digits, '_' and '-' between dots)",
                )
            )
            continue
        path = _override_path(key_text)
        error = _set_path(data, path, _override_value(value_text))
        if error:
            problems.append(Problem(file, f"--set {key_text}", error))
        else:
            applied[_render_path(path)] = text
    return problems, applied


def _override_path(key_text: str) -> list[PathStep]:
    """``connections[1].delay`` -> ``['connections', 1, 'delay']``."""
    path: list[PathStep] = []
    for m in _SEGMENT_PART.finditer(key_text):
        if m["index"] is not None:
            path.append(int(m["index"]))
        else:
            path.extend(key_parts(m["name"]))
    return path


def _render_path(path: Sequence[PathStep]) -> str:
    """``['connections', 1, 'delay']`` -> ``connections[1].delay``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out = f"{out}.{step}" if out else step
    return out


def _override_value(text: str) -> Any:
    """A TOML value if ``text`` is one (``3``, ``[1, 2]``, ``"x"``), else the text itself."""
    text = text.strip()
    try:
        return tomlfile.loads(f"value = {text}")["value"]
    except tomlfile.TOMLDecodeError:
        return text


def _set_path(data: dict, path: Sequence[PathStep], value: Any) -> str | None:
    """Set ``data[path] = value``, creating missing tables; an error message or None."""
    node: Any = data
    for depth, step in enumerate(path):
        here = _render_path(path[:depth]) or "the top level"
        last = depth == len(path) - 1
        if isinstance(step, int):
            if not isinstance(node, list):
                return f"{here} is {kind_of(node)}, not an array; remove [{step}] from the key"
            if step >= len(node):
                return (
                    f"{here} has {len(node)} element(s), so [{step}] does not exist; "
                    f"use an index from 0 to {len(node) - 1}"
                )
        elif not isinstance(node, dict):
            return f"{here} is {kind_of(node)}, not a table, so it has no key '{step}'"
        elif not last and step not in node:
            if isinstance(path[depth + 1], int):
                return f"{_render_path(path[: depth + 1])} does not exist, so it has no elements"
            node[step] = {}
        if last:
            node[step] = value
            return None
        node = node[step]
    return None  # pragma: no cover - path is never empty


def overrides_note(
    overrides: Sequence[str], until_s: Any, seed: Any, mode: Any, realtime: Any = None
) -> str:
    """A TOML comment block listing the command-line changes (appended to source_text)."""
    items = [f"--set {o}" for o in overrides]
    options = (("until", until_s), ("seed", seed), ("mode", mode), ("realtime", realtime))
    items += [f"--{k} {v}" for k, v in options if v is not None]
    if not items:
        return ""
    lines = "".join(f"# {item}".replace("\n", "\\n") + "\n" for item in items)
    return f"\n# --- command-line overrides applied to this rig ---\n{lines}"
