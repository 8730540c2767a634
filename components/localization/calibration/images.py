"""The calibration images: paths from the command line, read as 8-bit grey, checked."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from ...sdk.errors import ParameterError
from ..detect import as_gray8
from .common import listing

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".webp")


def expand_images(args: Sequence[str | Path]) -> list[Path]:
    """Image paths from the command line: files, folders (their images, sorted) and
    quoted glob patterns. Raises ParameterError for a missing file or an empty folder."""
    out: list[Path] = []
    missing: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise ParameterError(f"{p}: no image files in this folder "
                                     f"({', '.join(IMAGE_SUFFIXES)})",
                                     fix="give the calibration images or their folder")
            out += found
        elif p.is_file():
            out.append(p)
        elif any(ch in str(a) for ch in "*?["):
            found = sorted(Path(q) for q in glob.glob(str(a)) if Path(q).is_file())
            if not found:
                missing.append(f"{a}: no file matches")
            out += found
        else:
            missing.append(f"{p}: no such file")
    if missing:
        raise ParameterError(listing("image(s) not found", missing),
                             fix="check the paths (or remove them from the command)")
    if not out:
        raise ParameterError("no images given",
                             fix="give the calibration images (files or a folder)")
    return out



def read_gray(path: str | Path) -> np.ndarray:
    """An image file as 8-bit grey (colour converted, 16 bit scaled). ParameterError
    naming the file when it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{p}: no such file", fix="check the path")
    img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ParameterError(f"{p}: not a readable image (corrupt, or a format OpenCV cannot read)",
                             fix="remove it, or re-save it as PNG or JPEG")
    try:
        return as_gray8(img)
    except ValueError as exc:
        raise ParameterError(f"{p}: {exc}", fix="use 8- or 16-bit grey or colour images") from None


def check_images(paths: Sequence[Path]) -> tuple[int, int]:
    """Every image readable and of one size; returns (width, height). One ParameterError
    listing every unreadable file, or naming the first image of another size."""
    problems: list[str] = []
    size: tuple[int, int] | None = None
    first: Path | None = None
    for p in paths:
        try:
            g = read_gray(p)
        except ParameterError as exc:
            problems.append(exc.message)
            continue
        wh = (g.shape[1], g.shape[0])
        if size is None:
            size, first = wh, p
        elif wh != size:
            raise ParameterError(
                f"{p}: the image is {wh[0]}x{wh[1]} px but {first} is {size[0]}x{size[1]} px",
                fix="calibrate with images of one camera at one resolution (remove the others)")
    if problems:
        raise ParameterError(listing(f"{len(problems)} image(s) cannot be read", problems),
                             fix="remove them from the list, or re-save them as PNG or JPEG")
    assert size is not None
    return size
