"""What every calibration step shares: its error, and listing many problems at once."""

from __future__ import annotations

import math
from typing import Any

from ...sdk.errors import MoonpoolError

MAX_LISTED = 10


class CalibrationFailed(MoonpoolError):
    """The inputs were read but the calibration could not be computed (exit 1)."""


def listing(title: str, items: list[str]) -> str:
    """``title:`` and the items one a line, at most MAX_LISTED of them."""
    shown = items[:MAX_LISTED]
    more = f"\n  ... and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return f"{title}:\n  " + "\n  ".join(shown) + more


def nan_to_none(obj: Any) -> Any:
    """JSON-able: NaN and infinities (not estimated) become null, recursively."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [nan_to_none(v) for v in obj]
    return obj
