"""docs/foxglove-layout.json (the live view's layout, docs/live.md) is what
scripts/make_foxglove_layout.py writes, and every topic and message field it names
exists: in the live view of rigs/pool_realtime.toml (the imaging sonar's in
rigs/acoustics.toml's), with the fields of the topic's message type."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from conftest import RIGS, ROOT

from moonpool.components.sdk import wire
from moonpool.components.sdk.loading import load_entry
from moonpool.orchestrator.rigfile import load_rig

pytest.importorskip("foxglove")
LAYOUT = ROOT / "docs/foxglove-layout.json"
STREAMED = {"/live/scene": "foxglove.SceneUpdate", "/live/transforms": "foxglove.FrameTransform"}


def _script():
    spec = importlib.util.spec_from_file_location("make_foxglove_layout",
                                                  ROOT / "scripts/make_foxglove_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _live_topics(rig_path) -> dict[str, str]:
    """topic -> type of every channel the live view opens for a rig (live.py)."""
    rig = load_rig(rig_path)
    out = dict(STREAMED)
    for c in rig.components:
        cls = load_entry(c.entry, c.base_dir)
        params = wire.build_parameters(cls.Parameters, c.parameters, c.name, c.base_dir)
        for port in cls.ports_for(params)[1]:
            topic = f"/{c.name}/{port.name}"
            out[topic] = port.type_name
            if port.type_name == "moonpool.v1.ImageHeader":
                out[topic + "/foxglove"] = "foxglove.RawImage"
    return out


def test_the_committed_layout_is_the_scripts_output():
    assert LAYOUT.read_text() == _script().text(), \
        "regenerate it: .venv/bin/python scripts/make_foxglove_layout.py"


def _field_path_exists(type_name: str, path: str) -> bool:
    desc = wire.message_class(type_name).DESCRIPTOR
    for part in path.split("."):
        name = re.sub(r"\[.*\]|\{.*\}", "", part)
        field = desc.fields_by_name.get(name)
        if field is None:
            return False
        desc = field.message_type
    return True


def test_every_topic_and_field_of_the_layout_is_streamed(fmus):
    topics = {**_live_topics(RIGS / "pool_realtime.toml"), **_live_topics(RIGS / "acoustics.toml")}
    configs = json.loads(LAYOUT.read_text())["configById"]
    named = []
    for panel, cfg in configs.items():
        if panel.startswith("Image!"):
            named.append((cfg["imageMode"]["imageTopic"], None))
        elif panel.startswith("3D!"):
            named += [(t, None) for t in cfg["topics"]]
        elif panel.startswith("Plot!"):
            for series in cfg["paths"]:
                m = re.match(r"(/[^/.]+/[^/.]+)\.(.*)", series["value"])
                named.append((m.group(1), m.group(2)))
    assert len(named) == 8  # 3-D: 1 topic, 2 image panels, 5 plotted series
    for topic, field in named:
        assert topic in topics, f"{topic} is not streamed by the live view"
        if field is not None:
            assert _field_path_exists(topics[topic], field), f"{topic}.{field}"
    assert {t: topics[t] for t, _ in named if t.endswith("/foxglove")} == {
        "/camera/image/foxglove": "foxglove.RawImage", "/sonar/image/foxglove": "foxglove.RawImage"}
