"""Helpers for the rig-file tests (tests/unit/test_rigfile*.py): writing a rig beside the
test components, collecting its problems, finding lines."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from moonpool.components.sdk.errors import Problem, RigValidationError
from moonpool.orchestrator.rigfile import load_and_check, load_rig

HERE = Path(__file__).resolve().parents[1] / "unit"
DOCS = HERE.parents[1] / "docs" / "rigs.md"

MINIMAL = """
[run]
until = "1s"

[components.src]
entry = "rigfile_components.py:Source"
rate_hz = 100

[components.sink]
entry = "rigfile_components.py:Sink"
period = "10ms"
[components.sink.parameters]
threshold_pa = 1000.0

[[connections]]
from = "src.wrench"
to = "sink.wrench"
"""


def write_rig(tmp_path: Path, text: str, name: str = "rig.toml") -> Path:
    """Write a rig (dedented, no leading newline) next to a copy of the test components."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    shutil.copy(HERE / "rigfile_components.py", tmp_path / "rigfile_components.py")
    return path


def problems_of(path: Path, *args, check: bool = False, **kw) -> list[Problem]:
    """The problems load_rig (or load_and_check) raises; fails if none."""
    with pytest.raises(RigValidationError) as info:
        (load_and_check if check else load_rig)(path, *args, **kw)
    return list(info.value.problems)


def by_key(problems: list[Problem]) -> dict[str, Problem]:
    out: dict[str, Problem] = {}
    for p in problems:
        out.setdefault(p.key, p)
    return out


def line_of(path: Path, marker: str) -> int:
    """1-based line of the first line containing ``marker``."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if marker in line:
            return n
    raise AssertionError(marker)
