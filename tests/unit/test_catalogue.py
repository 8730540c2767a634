"""Every component moonpool registers is loadable and listed in docs/components.md."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from moonpool.components.sdk.component import Component

DOC = Path(__file__).resolve().parents[2] / "docs" / "components.md"
NAMES = sorted(ep.name for ep in entry_points(group="moonpool.components"))


def test_there_are_registered_components():
    assert len(NAMES) >= 20, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_registered_component_loads_and_is_in_the_catalogue(name):
    (ep,) = [ep for ep in entry_points(group="moonpool.components") if ep.name == name]
    cls = ep.load()
    assert issubclass(cls, Component)
    catalogue = DOC.read_text(encoding="utf-8").split("## Catalogue", 1)[1]
    assert f"`{name}`" in catalogue, f"add {name} to the catalogue in docs/components.md"
