"""PNG plots drawn from a recording after a run.

- One figure per component, ``{component}.png``: one panel per numeric field of the
  messages on its ports that is not constant zero (header fields left out), at most
  :data:`MAX_PANELS`; the others are listed in a note under the panels.
- One figure per ``[[plots]]`` entry of the rig (:class:`~moonpool.orchestrator.rig.PlotSpec`),
  named after its slugified title, all its series on one axes; or, for
  ``kind = "waterfall"``, one image per series: a row per message (time upwards), a
  column per element of the path's ``[*]`` (``beams[*].true_point_ned_m.z``: a
  bathymetry swath; ``port_intensity[*]``: a side-scan line), colours clipped to the
  2nd–98th percentile.

Field paths (used in panel titles and in ``PlotSpec.series``):

- nested messages are flattened with dots: ``position_ned_m.z``, ``validity.valid``;
- repeated numbers are indexed, first :data:`MAX_ELEMENTS` elements: ``force_n[0]``;
- repeated messages likewise (``thrusters[2].force_n``), except elements with a
  non-empty string field ``name``, which are keyed by it: ``signals[depth].value``;
- numbers, bools (0/1) and enums (their number) are plotted; strings and bytes are not.

The x axis is the simulation time of each message (its log time), in seconds.
Plotting never fails a run: unknown series and undecodable messages are logged and
skipped.
"""

from __future__ import annotations

from array import array

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from moonpool.components.sdk.errors import MoonpoolError

from . import plotexpr
from .recording import decode_recorded, read_recording
from .rig import PlotSpec

log = logging.getLogger("moonpool.plots")

MAX_PANELS = 12
"""Panels per component figure; further fields are listed in a note."""
MAX_ELEMENTS = 8
"""Elements of a repeated field that are plotted (indices 0 .. MAX_ELEMENTS-1)."""
PANEL_SIZE_IN = (10.0, 2.2)
"""Width and height of one panel row, inches."""
DPI = 100

_NUMBER = "number"
_STEP = "step"  # bools and enums: drawn as steps
_KIND = {
    FieldDescriptor.CPPTYPE_DOUBLE: _NUMBER,
    FieldDescriptor.CPPTYPE_FLOAT: _NUMBER,
    FieldDescriptor.CPPTYPE_INT32: _NUMBER,
    FieldDescriptor.CPPTYPE_INT64: _NUMBER,
    FieldDescriptor.CPPTYPE_UINT32: _NUMBER,
    FieldDescriptor.CPPTYPE_UINT64: _NUMBER,
    FieldDescriptor.CPPTYPE_BOOL: _STEP,
    FieldDescriptor.CPPTYPE_ENUM: _STEP,
}


# --------------------------------------------------------------- flattening


def flatten(msg: Message, prefix: str = "") -> Iterable[tuple[str, float, str]]:
    """(path, value, kind) for every numeric leaf of a message (see the module doc)."""
    for fd in msg.DESCRIPTOR.fields:
        path = prefix + fd.name
        value = getattr(msg, fd.name)
        if fd.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
            if fd.is_repeated:
                if fd.message_type.GetOptions().map_entry:
                    continue
                named = "name" in fd.message_type.fields_by_name and (
                    fd.message_type.fields_by_name["name"].cpp_type
                    == FieldDescriptor.CPPTYPE_STRING
                )
                for i, element in enumerate(value):
                    key = element.name if named and element.name else None
                    if key is None and i >= MAX_ELEMENTS:
                        continue
                    yield from flatten(element, f"{path}[{key if key is not None else i}].")
            else:
                yield from flatten(value, path + ".")
            continue
        kind = _KIND.get(fd.cpp_type)
        if kind is None:
            continue
        if fd.is_repeated:
            for i, v in enumerate(value[:MAX_ELEMENTS]):
                yield f"{path}[{i}]", float(v), kind
        else:
            yield path, float(value), kind


@dataclass
class _Column:
    kind: str
    # Typed arrays, not lists: 16 bytes a value instead of about 60 (a two-hour dive
    # records ~10^8 values).
    index: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("d"))


@dataclass
class _Topic:
    """The numeric content of one topic over time."""

    times_ns: array = field(default_factory=lambda: array("q"))
    columns: dict[str, _Column] = field(default_factory=dict)

    def add(self, t_ns: int, msg: Message) -> None:
        i = len(self.times_ns)
        self.times_ns.append(t_ns)
        for path, value, kind in flatten(msg):
            col = self.columns.get(path)
            if col is None:
                col = self.columns[path] = _Column(kind)
            col.index.append(i)
            col.values.append(value)

    def arrays(self) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, str]]]:
        """Time in s (sorted) and each column, NaN where a message lacked the field."""
        t = np.frombuffer(self.times_ns, dtype=np.int64)
        order = np.argsort(t, kind="stable")
        out: dict[str, tuple[np.ndarray, str]] = {}
        for path, col in self.columns.items():
            y = np.full(len(t), np.nan)
            y[np.frombuffer(col.index, dtype=np.int64)] = np.frombuffer(col.values)
            out[path] = (y[order], col.kind)
        return t[order] / 1e9, out


def _split_topic(topic: str) -> tuple[str, str]:
    """'/component/port' -> ('component', 'port')."""
    parts = topic.strip("/").split("/", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "")


def _load(recording: Path) -> dict[str, _Topic]:
    """Every topic of a recording, flattened; undecodable messages are skipped."""
    topics: dict[str, _Topic] = {}
    failed: set[str] = set()
    for rec in read_recording(recording):
        try:
            msg = decode_recorded(rec)
        except MoonpoolError as exc:
            if rec.topic not in failed:
                failed.add(rec.topic)
                log.warning("plots: skipping messages on %s: %s", rec.topic, exc)
            continue
        topics.setdefault(rec.topic, _Topic()).add(rec.log_time_ns, msg)
    return topics


# ----------------------------------------------------------------- drawing


def _new_figure(rows: float) -> Figure:
    fig = Figure(
        figsize=(PANEL_SIZE_IN[0], PANEL_SIZE_IN[1] * rows), dpi=DPI, layout="constrained"
    )
    FigureCanvasAgg(fig)  # the Agg canvas: no display, no pyplot state to close
    return fig


def _draw(ax, t: np.ndarray, y: np.ndarray, kind: str, label: str | None = None) -> None:
    marker = "." if np.count_nonzero(~np.isnan(y)) < 50 else None
    if kind == _STEP:
        ax.step(t, y, where="post", lw=1.0, marker=marker, label=label)
    else:
        ax.plot(t, y, lw=1.0, marker=marker, label=label)


def _varies(path: str, y: np.ndarray) -> bool:
    """Worth a generic panel: not a header field, not constant zero (or missing)."""
    if path == "header" or path.startswith("header."):
        return False
    finite = y[~np.isnan(y)]
    return finite.size > 0 and bool(np.any(finite != 0.0))


_Panel = tuple[str, np.ndarray, np.ndarray, str]  # title, t [s], y, kind


def _panels(ports: list[tuple[str, _Topic]]) -> list[_Panel]:
    """Every panel a component's figure could show, in port then field order."""
    panels: list[_Panel] = []
    for port, topic in ports:
        t, columns = topic.arrays()
        for field_path, (y, kind) in columns.items():
            if _varies(field_path, y):
                panels.append((f"{port}: {field_path}", t, y, kind))
    return panels


def _component_figure(component: str, ports: list[tuple[str, _Topic]], path: Path) -> None:
    panels = _panels(ports)
    if not panels:
        fig = _new_figure(1)
        ax = fig.subplots()
        ax.axis("off")
        names = ", ".join(p or "(no port)" for p, _ in ports)
        ax.text(0.5, 0.5, f"no numeric field of {names} varies (all zero or none)",
                ha="center", va="center", fontsize=9, wrap=True)
        fig.suptitle(component)
        fig.savefig(path)
        return
    shown, rest = panels[:MAX_PANELS], panels[MAX_PANELS:]
    note = f"{len(rest)} more not shown: " + ", ".join(n for n, *_ in rest) if rest else ""
    heights = [1.0] * len(shown) + ([0.25] if note else [])
    fig = _new_figure(sum(heights))
    grid = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    first = None
    for row, (name, t, y, kind) in enumerate(shown):
        ax = fig.add_subplot(grid[row, 0], sharex=first)
        first = first or ax
        _draw(ax, t, y, kind)
        ax.set_title(name, fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8, labelbottom=row == len(shown) - 1)
    ax.set_xlabel("simulation time [s]")
    if note:
        ax_note = fig.add_subplot(grid[-1, 0])
        ax_note.axis("off")
        ax_note.text(0.0, 1.0, note, va="top", ha="left", fontsize=8, wrap=True)
    fig.suptitle(component)
    fig.savefig(path)


def _parse_series(series: str) -> tuple[str, str] | None:
    """'component.port:field.path' -> ('/component/port', 'field.path')."""
    m = re.fullmatch(r"\s*([^.:/\s]+)\.([^:\s]+):(\S+)\s*", series)
    if m is None:
        return None
    return f"/{m.group(1)}/{m.group(2)}", m.group(3)


def _spec_figure(spec: PlotSpec, topics: dict[str, _Topic], path: Path) -> None:
    """A ``[[plots]]`` figure: its series (signals or expressions, plotexpr.py) against
    time, or with ``kind = "xy"`` in pairs (x, y) as tracks (equal scales)."""
    fig = _new_figure(2 if spec.kind == "time" else 4)
    ax = fig.add_subplot(projection="3d") if spec.kind == "xyz" else fig.subplots()
    arrays: dict[str, tuple[np.ndarray, dict[str, tuple[np.ndarray, str]]]] = {}
    kinds: dict[str, str] = {}

    def lookup(series: str) -> plotexpr.Signal:
        parsed = _parse_series(series)
        if parsed is None:
            raise _Skip(f"series '{series}' is not 'component.port:field.path'")
        topic_name, field_path = parsed
        topic = topics.get(topic_name)
        if topic is None:
            raise _Skip(f"no messages on {topic_name} (series '{series}')")
        if topic_name not in arrays:
            arrays[topic_name] = topic.arrays()
        t, columns = arrays[topic_name]
        column = columns.get(field_path)
        if column is None:
            known = ", ".join(list(columns)[:20])
            raise _Skip(f"{topic_name} has no numeric field '{field_path}' (fields: {known})")
        kinds[series] = column[1]
        return t, column[0]

    def signal(text: str) -> plotexpr.Signal | None:
        try:
            return plotexpr.evaluate(plotexpr.parse(text), lookup)
        except (_Skip, ValueError) as exc:
            log.warning("plot '%s': %s; skipped", spec.title, exc)
            return None

    drawn = 0
    if spec.kind == "xy":
        for x_text, y_text in zip(spec.series[0::2], spec.series[1::2]):
            x, y = signal(x_text), signal(y_text)
            if x is None or y is None:
                continue
            y_at_x = np.interp(x[0], y[0], y[1], left=np.nan, right=np.nan)
            x_ref, y_ref = x_text.partition(":")[0], y_text.partition(":")[0]
            label = y_ref if x_ref == y_ref and "(" not in y_ref else f"{y_text} vs {x_text}"
            ax.plot(x[1], y_at_x, linewidth=1.0, label=label)
            ax.plot(x[1][:1], y_at_x[:1], "o", color=ax.lines[-1].get_color(), markersize=4)
            drawn += 1
        ax.set_aspect("equal", adjustable="datalim")
        if spec.xlabel:
            ax.set_xlabel(spec.xlabel)
    elif spec.kind == "xyz":
        for texts in zip(spec.series[0::3], spec.series[1::3], spec.series[2::3]):
            x, y, z = (signal(text) for text in texts)
            if x is None or y is None or z is None:
                continue
            y_at = np.interp(x[0], y[0], y[1], left=np.nan, right=np.nan)
            z_at = np.interp(x[0], z[0], z[1], left=np.nan, right=np.nan)
            refs = {text.partition(":")[0] for text in texts}
            fields = {text.partition(":")[2].rpartition(".")[0] for text in texts}
            if len(refs) == 1 and len(fields) == 1 and "(" not in texts[0]:
                label = f"{refs.pop()}:{fields.pop()}"  # one vector field: name it once
            else:
                label = " / ".join(texts)
            ax.plot(x[1], y_at, z_at, linewidth=1.0, label=label)
            ax.plot(x[1][:1], y_at[:1], z_at[:1], "o", color=ax.lines[-1].get_color(),
                    markersize=4)
            drawn += 1
        if drawn:
            ax.invert_zaxis()  # depth down
        if spec.xlabel:
            ax.set_xlabel(spec.xlabel)
    else:
        for text in spec.series:
            s = signal(text)
            if s is None:
                continue
            kind = kinds.get(text, _NUMBER)  # an expression is a number
            _draw(ax, s[0], s[1], kind, label=text)
            drawn += 1
        ax.set_xlabel("simulation time [s]")
    if drawn:
        ax.legend(fontsize=8, loc="best")
    else:
        ax.text(0.5, 0.5, "no data for " + ", ".join(spec.series), ha="center",
                va="center", transform=ax.transAxes, fontsize=9, wrap=True)
    ax.set_title(spec.title)
    if spec.ylabel:
        ax.set_ylabel(spec.ylabel)
    if spec.kind == "xyz" and spec.zlabel:
        ax.set_zlabel(spec.zlabel)
    ax.grid(True, alpha=0.3)
    fig.savefig(path)


def waterfall_rows(msg: Message, path: str) -> list[float]:
    """The numbers a waterfall path (one ``[*]``) picks from one message, in element
    order; [] when a field on the way is missing."""
    def walk(value, parts):
        if not parts:
            return [float(value)]
        name, _, index = parts[0].partition("[")
        index = index.rstrip("]")
        v = getattr(value, name, None)
        if v is None:
            return []
        if index == "*":
            return [x for element in v for x in walk(element, parts[1:])]
        if index:
            if index.isdigit():
                v = v[int(index)] if int(index) < len(v) else None
            else:
                v = next((e for e in v if getattr(e, "name", None) == index), None)
            if v is None:
                return []
        return walk(v, parts[1:])

    return walk(msg, re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?", path))


def _waterfall_figure(spec: PlotSpec, recording: Path, path: Path) -> None:
    wanted = {}
    for series in spec.series:
        parsed = _parse_series(series)
        if parsed is not None:
            wanted.setdefault(parsed[0], []).append((series, parsed[1]))
    rows: dict[str, list[tuple[float, list[float]]]] = {s: [] for s in spec.series}
    for rec in read_recording(recording):
        if rec.topic not in wanted:
            continue
        try:
            msg = decode_recorded(rec)
        except MoonpoolError:
            continue
        for series, field_path in wanted[rec.topic]:
            rows[series].append((rec.log_time_ns / 1e9, waterfall_rows(msg, field_path)))
    fig = _new_figure(3)
    axes = fig.subplots(1, len(spec.series), squeeze=False)[0]
    for ax, series in zip(axes, spec.series):
        data = [(t, r) for t, r in rows[series] if r]
        ax.set_title(series, fontsize=8, loc="left")
        if not data:
            ax.text(0.5, 0.5, f"no data for {series}", ha="center", va="center",
                    transform=ax.transAxes, fontsize=9)
            continue
        width = max(len(r) for _, r in data)
        img = np.full((len(data), width), np.nan)
        for i, (_, r) in enumerate(data):
            img[i, : len(r)] = r
        finite = img[np.isfinite(img)]
        lo, hi = (np.percentile(finite, [2, 98]) if finite.size else (0.0, 1.0))
        t0, t1 = data[0][0], data[-1][0]
        im = ax.imshow(img, origin="lower", aspect="auto", interpolation="nearest",
                       extent=(-0.5, width - 0.5, t0, t1 if t1 > t0 else t0 + 1.0),
                       vmin=lo, vmax=hi if hi > lo else lo + 1.0, cmap="viridis")
        fig.colorbar(im, ax=ax, label=spec.ylabel or None)
        ax.set_xlabel("element")
    axes[0].set_ylabel("simulation time [s]")
    fig.suptitle(spec.title)
    fig.savefig(path)


class _Skip(Exception):
    """A series that cannot be drawn (logged, the others are)."""


def slugify(title: str) -> str:
    """File name stem of a plot title: 'Depth vs. setpoint' -> 'depth-vs-setpoint'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "plot"


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip(".") or "component"


def _unique(stem: str, used: set[str]) -> str:
    name, n = stem, 2
    while name in used:
        name, n = f"{stem}-{n}", n + 1
    used.add(name)
    return name


def make_plots(
    recording: Path, out_dir: Path, specs: Sequence[PlotSpec] = ()
) -> list[Path]:
    """Draw the per-component figures and one figure per spec; returns the PNG paths.

    A figure that fails to draw is logged and skipped; a missing or unreadable
    recording yields no generic figures (spec figures then say "no data").
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        topics = _load(Path(recording))
    except (OSError, MoonpoolError) as exc:
        log.warning("plots: cannot read %s: %s", recording, exc)
        topics = {}
    by_component: dict[str, list[tuple[str, _Topic]]] = {}
    for name, topic in topics.items():
        component, port = _split_topic(name)
        by_component.setdefault(component, []).append((port, topic))

    written: list[Path] = []
    used: set[str] = set()
    for component, ports in by_component.items():
        path = out_dir / f"{_unique(_safe_name(component), used)}.png"
        if _attempt(component, _component_figure, component, ports, path):
            written.append(path)
    for spec in specs:
        path = out_dir / f"{_unique(slugify(spec.title), used)}.png"
        if spec.kind == "waterfall":
            ok = _attempt(spec.title, _waterfall_figure, spec, Path(recording), path)
        else:
            ok = _attempt(spec.title, _spec_figure, spec, topics, path)
        if ok:
            written.append(path)
    return written


def _attempt(what: str, draw: Callable[..., None], *args: object) -> bool:
    try:
        draw(*args)
    except Exception as exc:  # noqa: BLE001 (a plot must never fail the run)
        log.warning("plots: could not draw '%s': %s: %s", what, type(exc).__name__, exc)
        return False
    return True
