"""docs/reference/components.md is generated from the code (scripts/make_reference.py):
the committed page must be what the script writes now, and it lists every registered
component with every parameter its Parameters declares."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

from moonpool.components.sdk.loading import load_entry, registered

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_reference.py"


def _script():
    spec = importlib.util.spec_from_file_location("make_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_the_generated_one():
    module = _script()
    committed = module.PAGE.read_text(encoding="utf-8") if module.PAGE.exists() else ""
    assert committed == module.render(), (
        "docs/reference/components.md is stale; regenerate it with "
        "`python scripts/make_reference.py`")


def test_no_component_is_abridged():
    text = (ROOT / "docs" / "reference" / "components.md").read_text(encoding="utf-8")
    for name in registered():
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for f in dataclasses.fields(load_entry(name).Parameters):
            assert f"| `{f.name}` |" in section, (name, f.name)
