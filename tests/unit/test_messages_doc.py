"""docs/messages.md is generated from the .proto files (proto/document.py) and kept
current by this test; the FMU and rig docs link to it (issue 22)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _document():
    spec = importlib.util.spec_from_file_location("document", ROOT / "proto" / "document.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_messages_page_is_the_generated_one():
    doc = _document()
    committed = (ROOT / "docs" / "messages.md").read_text(encoding="utf-8")
    assert committed == doc.render(), f"docs/messages.md is stale; regenerate it: {doc.COMMAND}"


def test_every_message_and_field_is_on_the_page():
    import moonpool.v1 as v1

    text = (ROOT / "docs" / "messages.md").read_text(encoding="utf-8")
    for name in v1.__all__:
        module = getattr(v1, name)
        for msg in module.DESCRIPTOR.message_types_by_name.values():
            assert f"### {msg.name}\n" in text, msg.full_name
            for field in msg.fields:
                assert f"| `{field.name}` |" in text, f"{msg.full_name}.{field.name}"


def test_the_fmu_and_rig_docs_link_to_it():
    for page in ("third-party-fmus.md", "rigs.md"):
        assert "(messages.md" in (ROOT / "docs" / page).read_text(encoding="utf-8"), page
