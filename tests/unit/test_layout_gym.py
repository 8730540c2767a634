"""moonpool.gym sits above the orchestrator (docs/architecture.md): it may import the
orchestrator and the SDK; nothing in orchestrator/ or components/ imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_nothing_below_imports_the_gym_package():
    files = [p for top in ("orchestrator", "components") for p in (ROOT / top).rglob("*.py")]
    assert len(files) > 50
    bad = [f"{p.relative_to(ROOT)}: {m}" for p in files for m in imported(p)
           if m == "moonpool.gym" or m.startswith("moonpool.gym.")]
    assert not bad, bad


def test_the_gym_package_imports_the_orchestrator_and_the_sdk_only():
    files = list((ROOT / "gym").rglob("*.py"))
    assert files
    bad = [f"{p.relative_to(ROOT)}: {m}" for p in files for m in imported(p)
           if m.startswith("moonpool.components.") and not m.startswith("moonpool.components.sdk")]
    assert not bad, bad
