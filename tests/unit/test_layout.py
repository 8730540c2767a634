"""The dependency rule of the layout (docs/architecture.md), read from the source:

    orchestrator  ->  components.sdk, moonpool.v1          (never a domain package)
    domains       ->  components.sdk, moonpool.v1, other domains   (never the orchestrator)
    sdk           ->  moonpool.v1                          (never a domain, never the orchestrator)

Every ``import`` and ``from … import`` of every module is resolved to the absolute
module it names (relative imports included, also those inside functions), so a
lazy import in a function breaks the rule as surely as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"orchestrator": "moonpool.orchestrator", "components": "moonpool.components"}


def module_name(path: Path) -> str:
    """moonpool.components.sensors.dvl for components/sensors/dvl.py."""
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:-1]]
    if rel.stem != "__init__":
        parts.append(rel.stem)
    return ".".join(parts)


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``source`` (of ``module``)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import sub` may name a submodule: record pkg.sub too
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names if a.name != "*"]
    return found


def layer(module: str) -> str | None:
    """'orchestrator', 'sdk' or 'domain' for a moonpool module; None for anything else."""
    if module == "moonpool.orchestrator" or module.startswith("moonpool.orchestrator."):
        return "orchestrator"
    if module == "moonpool.components.sdk" or module.startswith("moonpool.components.sdk."):
        return "sdk"
    if module.startswith("moonpool.components."):
        return "domain"
    if module == "moonpool.components":
        return "components-root"
    return None


ALLOWED = {
    "orchestrator": {"orchestrator", "sdk"},
    "sdk": {"sdk"},
    "domain": {"sdk", "domain", "components-root"},
    "components-root": {"sdk"},
}


def violations(source: str, module: str, is_package: bool) -> list[str]:
    """Imports of ``module`` that break the rule, as 'line: a -> b' strings."""
    here = layer(module)
    out = []
    for line, target in imports(source, module, is_package):
        there = layer(target)
        if here is None or there is None:
            continue
        if there not in ALLOWED[here]:
            out.append(f"{module}:{line}: {here} imports {there} ({target})")
    return sorted(set(out))


def sources() -> list[Path]:
    return sorted(p for top in PACKAGES for p in (ROOT / top).rglob("*.py")
                  if "__pycache__" not in p.parts)


def test_the_source_tree_keeps_the_dependency_rule():
    files = sources()
    assert len(files) > 50, "the walk found too few modules: is ROOT right?"
    bad = []
    for path in files:
        bad += violations(path.read_text(), module_name(path), path.name == "__init__.py")
    assert not bad, "imports that break the dependency rule (docs/architecture.md):\n" + "\n".join(bad)


def test_the_component_root_re_exports_only_the_sdk():
    path = ROOT / "components" / "__init__.py"
    assert not violations(path.read_text(), "moonpool.components", True)


@pytest.mark.parametrize("module,source,expected", [
    ("moonpool.orchestrator.cli", "from moonpool.components.localization import dataset\n",
     "orchestrator imports domain"),
    ("moonpool.orchestrator.cli", "def f():\n    import moonpool.components.sensors.dvl\n",
     "orchestrator imports domain"),
    ("moonpool.components.sdk.host", "from ..sensors import common\n", "sdk imports domain"),
    ("moonpool.components.sdk.host", "from moonpool.orchestrator import run\n",
     "sdk imports orchestrator"),
    ("moonpool.components.sensors.dvl", "from ...orchestrator import rig\n",
     "domain imports orchestrator"),
    ("moonpool.components.sensors.dvl", "from moonpool.orchestrator.rig import Rig\n",
     "domain imports orchestrator"),
])
def test_the_checker_sees_each_kind_of_violation(module, source, expected):
    found = violations(source, module, False)
    assert found and expected in found[0], found


@pytest.mark.parametrize("module,source", [
    ("moonpool.orchestrator.cli", "from moonpool.components.sdk.errors import RigError\n"),
    ("moonpool.orchestrator.cli", "from moonpool.v1 import common_pb2\nimport numpy\n"),
    ("moonpool.components.sensors.dvl", "from ..sdk.component import Component\n"),
    ("moonpool.components.sensors.dvl", "from ..actuation.geometry import thrusters_from_profile\n"),
    ("moonpool.components.sdk.host", "from . import wire\nfrom .errors import StepFailed\n"),
])
def test_the_checker_accepts_what_the_rule_allows(module, source):
    assert violations(source, module, False) == []


def test_relative_imports_resolve_from_the_package():
    assert (3, "moonpool.components.sdk.errors") in imports(
        "import os\n\nfrom ..sdk.errors import ParameterError\n", "moonpool.components.sensors.dvl",
        False)
    assert (1, "moonpool.components.sdk.wire") in imports(
        "from . import wire\n", "moonpool.components.sdk", True)
