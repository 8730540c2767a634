"""The static 3-D scene of a rig, for the live view (docs/live.md, "The 3-D scene").

The orchestrator knows no scene format and no tag layout: it asks each component's
class (``Component.static_scene``, called with the component's validated parameters,
as ``moonpool check`` calls ``check_parameters``) and reads scene files through the
SDK (``sdk/scene.py``: the reader a package registers for the file's format). The
rig's own ``run.view_scene`` is read the same way. Nothing here starts a component.

A part fixed to a body (``ScenePart.body_port``) is placed in the frame of the output
connected to that input port of the component: the frame of a ``VehicleState``
topic is the topic without its leading slash (``vehicle/state``; live.py
publishes its transform from every such message).

A viewer never fails a run: a component whose class cannot be loaded here (a
remote one served elsewhere), whose parameters do not build, or whose scene cannot
be read is left out with a warning, and the run goes on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from moonpool.components.sdk.loading import load_entry
from moonpool.components.sdk.scene import SceneFile, ScenePart, read_scene_file
from moonpool.components.sdk.wire import build_parameters

from .rig import ComponentConfig, Rig

log = logging.getLogger("moonpool.live")

WORLD_FRAME = "ned"
"""The frame of world parts: NED about the scene's origin."""


@dataclass(frozen=True)
class PlacedPart:
    """A part with the frame it is drawn in and its unique id."""

    id: str
    """Unique in the scene: ``component/part`` or ``scene-file-stem/part``."""
    frame: str
    """``ned``, or the frame of a VehicleState topic (``vehicle/state``)."""
    part: ScenePart


def topic_frame(topic: str) -> str:
    """The frame a pose topic's transform defines: the topic without its leading '/'."""
    return topic.lstrip("/")


def _source_frame(rig: Rig, component: str, port: str) -> str | None:
    for c in rig.connections:
        if c.target == component and c.target_port == port:
            return topic_frame(f"/{c.source}/{c.source_port}")
    return None


def _component_scene(c: ComponentConfig) -> list[ScenePart | SceneFile]:
    cls = load_entry(c.entry, c.base_dir)
    params = build_parameters(cls.Parameters, c.parameters, component=c.name,
                              base_dir=c.base_dir)
    return list(cls.static_scene(params))


def rig_scene(rig: Rig) -> list[PlacedPart]:
    """Every static part the rig's components and ``run.view_scene`` describe (module
    docstring); each scene file once, however many components name it."""
    placed: list[PlacedPart] = []
    files: dict[Path, str] = {}  # resolved path -> who named it first
    if rig.run.view_scene is not None:
        files[rig.run.view_scene.resolve()] = "run.view_scene"
    for c in rig.components:
        if c.placement in ("replay", "command") or not c.entry:
            continue
        try:
            items = _component_scene(c)
        except Exception as exc:  # noqa: BLE001 - a viewer never fails a run
            log.warning("live view: no static scene from component '%s': %s", c.name, exc)
            continue
        for item in items:
            if isinstance(item, SceneFile):
                files.setdefault(Path(item.path).resolve(), c.name)
                continue
            frame = WORLD_FRAME
            if item.body_port:
                found = _source_frame(rig, c.name, item.body_port)
                if found is None:
                    log.warning("live view: '%s' of component '%s' rides on the body of input "
                                "'%s', which nothing is connected to: not drawn",
                                item.name, c.name, item.body_port)
                    continue
                frame = found
            placed.append(PlacedPart(f"{c.name}/{item.name}", frame, item))
    for path, who in files.items():
        try:
            parts = read_scene_file(path)
        except Exception as exc:  # noqa: BLE001
            log.warning("live view: scene file %s (named by %s) not drawn: %s", path, who, exc)
            continue
        placed.extend(PlacedPart(f"{path.parent.name}/{p.name}", WORLD_FRAME, p)
                      for p in parts if not p.body_port)
    return placed
