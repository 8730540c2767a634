"""Static scenes for viewers: what a component knows of the world that does not move
(docs/live.md, "The 3-D scene"; docs/architecture.md, "Static scenes").

A viewer (the live view, ``moonpool run --live``) draws the world a run takes place
in: the seabed or the pool, the structures, what is fixed to a vehicle (its tags).
That knowledge lives in the domain packages (a scene file is read by
``components/world``, the tag layout by ``components/localization``), which the
orchestrator may not import. It reaches a viewer through two generic doors:

- :meth:`Component.static_scene <moonpool.components.sdk.component.Component.static_scene>`,
  a classmethod called with the component's validated Parameters (as
  ``check_parameters`` is, without configuring anything): it returns
  :class:`ScenePart` (triangle meshes, fixed in the world or to a body whose
  ``VehicleState`` reaches the component on an input port) and :class:`SceneFile`
  (a scene file, read by the reader registered for its format). By default a
  component whose Parameters have a ``scene`` file path returns that file;
- a scene file named by the rig itself (``run.view_scene``), for rigs in which no
  component reads one (the pool rigs).

Scene files are read by :func:`read_scene_file`, which dispatches on the file's
``format`` key to the function a package registers under the entry-point group
``moonpool.scenes``::

    [project.entry-points."moonpool.scenes"]
    "moonpool.scene/1" = "moonpool.components.world.view:scene_parts"

Such a function takes the file's path and returns a sequence of :class:`ScenePart`,
or raises :class:`~moonpool.components.sdk.errors.ParameterError` naming the file,
the key and the fix.

Frames: world parts are in NED (north, east, down; m) about the scene's origin;
body parts in the body's FRD frame (forward, right, down; m), the frame of
``VehicleState.position_ned_m`` / ``orientation``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import tomlfile
from .errors import EntryError, ParameterError

GROUP = "moonpool.scenes"
"""Entry-point group of scene-file readers, named by the ``format`` they read."""


@dataclass(frozen=True, eq=False)
class ScenePart:
    """One triangle mesh of one colour: a wall, the seabed, a tag's black cells."""

    name: str
    """Unique among the parts one component (or one scene file) gives; the viewer's id."""
    vertices: np.ndarray
    """(V, 3) float vertices, m: NED when ``body_port`` is empty, else the body's FRD."""
    faces: np.ndarray
    """(F, 3) integer indices into ``vertices``; counter-clockwise seen from outside."""
    color: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0)
    """RGBA, each 0..1."""
    body_port: str = ""
    """Empty: fixed in the world. Else the component's input port on which the
    ``VehicleState`` of the body carrying the part arrives (e.g. ``"state"``): the
    viewer moves the part with whatever output is connected to that port."""

    def __post_init__(self) -> None:
        v = np.asarray(self.vertices, dtype=float)
        f = np.asarray(self.faces, dtype=np.int64)
        if v.ndim != 2 or v.shape[1] != 3 or f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(f"scene part '{self.name}': vertices must be (V, 3) and faces "
                             f"(F, 3), got {v.shape} and {f.shape}")
        if f.size and (f.min() < 0 or f.max() >= len(v)):
            raise ValueError(f"scene part '{self.name}': a face index is outside the vertices")
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)


@dataclass(frozen=True)
class SceneFile:
    """A scene file (``moonpool.scene/1`` or another registered format) to be shown."""

    path: Path
    """Where it is (absolute, or relative to the working folder)."""
    options: dict = field(default_factory=dict, compare=False)
    """Unused by moonpool's readers; room for a format that needs more than a path."""


def box(name: str, size_m: Sequence[float], center_m: Sequence[float] = (0.0, 0.0, 0.0),
        color: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0),
        body_port: str = "") -> ScenePart:
    """An axis-aligned box as a ScenePart (12 triangles)."""
    half = 0.5 * np.asarray(size_m, dtype=float)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return ScenePart(name, corners * half + np.asarray(center_m, float), faces, color, body_port)


def readers() -> dict[str, str]:
    """Scene format -> ``module:function`` for every registered reader."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=GROUP)}


def _reader(fmt: str, where: str) -> Callable[[Path], Sequence[ScenePart]]:
    known = readers()
    target = known.get(fmt)
    if target is None:
        raise ParameterError(
            f"{where}: no reader for scene format {fmt!r}",
            fix=f"give a scene file of a registered format ({', '.join(sorted(known)) or 'none'})"
                " or install the package that reads it")
    mod_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(mod_name), attr)
    except Exception as exc:  # ImportError, AttributeError, anything the module raises
        raise EntryError(f"cannot load the scene reader for {fmt!r} ({target}): "
                         f"{type(exc).__name__}: {exc}",
                         fix="reinstall the package that registers it (scripts/setup.sh)") from exc


def read_scene_file(path: str | Path) -> list[ScenePart]:
    """The parts of a scene file, read by the reader registered for its ``format``.
    ParameterError (naming the file, the key and the fix) when it cannot be read."""
    path = Path(path)
    try:
        data = tomlfile.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParameterError(f"{path}: cannot read the scene file ({exc.strerror or exc})",
                             fix="give the path of an existing scene file") from exc
    except (tomlfile.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ParameterError(f"{path}: not a TOML scene file ({exc})",
                             fix="correct the file (docs/world.md)") from exc
    fmt = data.get("format")
    if not isinstance(fmt, str):
        raise ParameterError(f"{path}: format: missing", fix='start the file with '
                             'format = "moonpool.scene/1" (docs/world.md)')
    return list(_reader(fmt, str(path))(path))
