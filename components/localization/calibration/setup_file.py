"""setup.json I/O for the calibration: read, update in place (other keys kept), write
in the documented key order, and say what the file still lacks; the water
calibration's starting setup and tag layout (``layout.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...sdk.errors import ParameterError
from ..pool_setup import FORMAT_VERSION, PoolSetup, dumps_compact, parse_setup

if TYPE_CHECKING:
    from .intrinsics import IntrinsicsResult
    from .water import WaterResult

LAYOUT_FILE = "layout.json"


def read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror or exc}",
                             fix="give the path of a setup.json") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}",
                             fix="correct the JSON syntax (or delete the file to start afresh)"
                             ) from None
    if not isinstance(data, dict):
        raise ParameterError(f"{path}: expected a JSON object", fix="see docs/localization.md")
    return data


def _set_key(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` where it lives (top level, or the "camera" group), else at the top."""
    cam = data.get("camera")
    if key not in data and isinstance(cam, dict) and key in cam:
        cam[key] = value
    else:
        data[key] = value


def _has(data: dict[str, Any], key: str) -> bool:
    cam = data.get("camera")
    return key in data or (isinstance(cam, dict) and key in cam)


def _flatten(data: dict[str, Any]) -> dict[str, Any]:
    cam = data.get("camera")
    flat = {k: v for k, v in data.items() if k != "camera"}
    if isinstance(cam, dict):
        for k, v in cam.items():
            flat.setdefault(k, v)
    return flat


_ORDER = ("format", "name", "K", "dist", "R_wc", "t_wc", "image_size", "camera", "water_z",
          "n_air", "n_water", "tag_family", "tag_size_m", "tags")


def _write_json(data: dict[str, Any], path: Path) -> None:
    """Write with the keys in the documented order (unknown keys after them)."""
    if "format" not in data:
        data = {"format": f"moonpool.pool_setup/{FORMAT_VERSION}", **data}
    data = {**{k: data[k] for k in _ORDER if k in data},
            **{k: v for k, v in data.items() if k not in _ORDER}}
    try:
        path.write_text(dumps_compact(data) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"cannot write {path}: {exc.strerror or exc}",
                             fix="give --out a writable path") from None


_REQUIRED = ("K", "R_wc", "t_wc", "tag_size_m", "tags")


def _completeness(data: dict[str, Any], source: str) -> list[str]:
    missing = [k for k in _REQUIRED if not _has(data, k)]
    if missing:
        what = []
        if "R_wc" in missing or "t_wc" in missing:
            what.append("R_wc/t_wc: run `moonpool calibrate water`")
        if "tag_size_m" in missing or "tags" in missing:
            what.append("tag_size_m and tags: add the vehicle's tag layout (docs/localization.md)")
        return [f"{source} is not complete yet (missing {', '.join(missing)}): " + "; ".join(what)]
    try:
        parse_setup(data, source)
    except ParameterError as exc:
        return [f"{source} does not validate: {exc}"]
    return []


def check_output(out: str | Path) -> None:
    """Fail early (before the work) when ``out`` exists but is not a JSON object, or
    its folder does not exist."""
    path = Path(out)
    if path.is_dir():
        path = path / "setup.json"
    if path.exists():
        read_json_object(path)
    elif not path.parent.is_dir():
        raise ParameterError(f"cannot write {path}: the folder {path.parent} does not exist",
                             fix="create it, or give --out another path")


def write_intrinsics(res: IntrinsicsResult, out: str | Path) -> list[str]:
    """Create ``out`` or update its K, dist and image_size (other keys kept). Returns notes."""
    path = Path(out)
    if path.is_dir():
        path = path / "setup.json"
    notes = []
    if path.exists():
        data = read_json_object(path)
        if _has(data, "R_wc") or _has(data, "t_wc"):
            notes.append(f"{path} holds R_wc/t_wc fitted with the previous intrinsics: run "
                         "`moonpool calibrate water` again")
        old = _flatten(data).get("image_size")
        if old is not None and list(old) != list(res.image_size):
            notes.append(f"image_size changed from {old} to {list(res.image_size)}")
    else:
        data = {}
    _set_key(data, "K", list(res.K))
    _set_key(data, "dist", list(res.dist))
    _set_key(data, "image_size", list(res.image_size))
    _write_json(data, path)
    return [f"wrote {path}"] + notes + _completeness(data, str(path))


def load_water_setup(setup_path: Path,
                      folder: Path) -> tuple[dict[str, Any], PoolSetup, bool, str]:
    """(raw setup JSON, the PoolSetup to fit with, whether it holds extrinsics, where the
    tag layout comes from)."""
    data = read_json_object(setup_path)
    flat = _flatten(data)
    if "K" not in flat:
        raise ParameterError(f"{setup_path}: K: missing (no camera intrinsics)",
                             fix="run `moonpool calibrate intrinsics ... --out "
                                 f"{setup_path}` first")
    layout_src = str(setup_path)
    layout_path = folder / LAYOUT_FILE
    if layout_path.is_file():
        lay = read_json_object(layout_path)
        for k in ("tag_size_m", "tags"):
            if k not in lay:
                raise ParameterError(f"{layout_path}: {k}: missing",
                                     fix="a layout.json holds tag_family, tag_size_m and tags "
                                         "(as setup.json; body frame = the board's frame)")
        flat["tag_size_m"], flat["tags"] = lay["tag_size_m"], lay["tags"]
        flat["tag_family"] = lay.get("tag_family", flat.get("tag_family", "tag36h11"))
        layout_src = str(layout_path)
    elif "tags" not in flat or "tag_size_m" not in flat:
        raise ParameterError(f"{setup_path}: no tag layout (tag_size_m and tags)",
                             fix=f"add the vehicle's tag_size_m and tags to {setup_path}, or "
                                 f"put the calibration board's layout in {layout_path}")
    has_ext = "R_wc" in flat and "t_wc" in flat
    if not has_ext:
        wz = flat.get("water_z", 0.0)
        flat["R_wc"] = np.eye(3).tolist()
        flat["t_wc"] = [0.0, 0.0, (wz if isinstance(wz, (int, float)) else 0.0) - 2.0]
    setup = parse_setup(flat, str(setup_path) if layout_src == str(setup_path)
                        else f"{setup_path} + {layout_path}")
    return data, setup, has_ext, layout_src



def write_water(res: WaterResult, setup_path: str | Path,
                out: str | Path | None = None) -> list[str]:
    """Write the setup (``out``, default ``setup_path`` itself) with R_wc, t_wc and
    water_z replaced; every other key kept. Returns notes."""
    src = Path(setup_path)
    path = Path(out) if out is not None else src
    if path.is_dir():
        path = path / "setup.json"
    data = read_json_object(src)
    _set_key(data, "R_wc", [[float(v) for v in row] for row in res.R_wc])
    _set_key(data, "t_wc", [float(v) for v in res.t_wc])
    _set_key(data, "water_z", float(res.water_z))
    _write_json(data, path)
    return [f"wrote {path}"] + _completeness(data, str(path))
