"""Typed values of a rig: each check returns the value, or None after a problem.

Every function takes the :class:`~.report.Report`, the dotted key and the value as
written, so one bad value never hides another: the caller goes on with a
placeholder and every problem is reported at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..timeparse import DurationError, parse_duration_ns
from .report import Report, did_you_mean, kind_of
from .vocabulary import MAX_RATE_HZ, MIN_RATE_HZ, SEED_LIMIT


def check_keys(
    report: Report, prefix: str, table: Mapping[str, Any], allowed: Sequence[str], where: str
) -> None:
    """One problem per key of ``table`` not in ``allowed``, with a suggestion."""
    for key in table:
        if key not in allowed:
            report.add(
                f"{prefix}.{key}" if prefix else key,
                f"unknown key '{key}' in {where}{did_you_mean(key, allowed)}; "
                f"remove it or correct the spelling (allowed: {', '.join(allowed)})",
            )


def string(report: Report, key: str, value: Any, *, required: bool = False) -> str | None:
    """A string value, or None (with a problem) if it is not one."""
    if not isinstance(value, str):
        report.add(
            key, f"expected a string, got {kind_of(value)} {value!r}; put the text in quotes"
        )
        return None
    if required and not value.strip():
        report.add(key, "must not be empty; write some text or remove the key")
        return None
    return value


def boolean(report: Report, key: str, value: Any) -> bool | None:
    if not isinstance(value, bool):
        report.add(key, f"expected true or false, got {kind_of(value)} {value!r}")
        return None
    return value


def choice(report: Report, key: str, value: Any, options: Sequence[str]) -> str | None:
    """One of ``options`` (a string), or None with a problem."""
    allowed = " or ".join(f'"{o}"' for o in options)
    if not isinstance(value, str):
        report.add(key, f"expected one of {allowed}, got {kind_of(value)} {value!r}")
        return None
    if value not in options:
        report.add(key, f"'{value}' is not one of {allowed}{did_you_mean(value, options)}")
        return None
    return value


def duration(report: Report, key: str, value: Any, *, positive: bool) -> int | None:
    """A duration in ns (see timeparse), or None with a problem."""
    try:
        ns = parse_duration_ns(value, key=key)
    except DurationError as exc:
        report.add(key, exc.reason)
        return None
    if positive and ns == 0:
        report.add(key, f"must be longer than zero, got {value!r}; give a positive duration")
        return None
    return ns


def seed(report: Report, key: str, value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        report.add(key, f"expected an integer seed >= 0, got {kind_of(value)} {value!r}")
        return None
    if not 0 <= value < SEED_LIMIT:
        report.add(key, f"seed {value} is out of range; use an integer from 0 to 2**64 - 1")
        return None
    return value


def rate(report: Report, key: str, value: Any) -> Fraction | None:
    """An exact rate (Fraction of the decimal written), or None with a problem."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        report.add(
            key,
            f"expected a number of Hz like 100 or 29.97, got {kind_of(value)} {value!r}"
            + ('; for a duration use period = "10ms"' if isinstance(value, str) else ""),
        )
        return None
    if not math.isfinite(value) or value <= 0:
        report.add(key, f"must be a finite number above 0 Hz, got {value!r}")
        return None
    hz = Fraction(Decimal(str(value)))
    if hz > MAX_RATE_HZ:
        report.add(key, f"{value} Hz would step less than 1 ns apart; use at most 1e9 Hz")
        return None
    if hz < MIN_RATE_HZ:
        report.add(key, f"{value} Hz would step more than 1e9 s (about 32 years) apart; use "
                   "at least 1e-9 Hz")
        return None
    return hz


def factor(report: Report, key: str, value: Any) -> Fraction | None:
    """A real-time factor: a number > 0 (exact), true (1) or false (off: None)."""
    if value is False:
        return None
    if value is True:
        return Fraction(1)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        report.add(
            key,
            f"expected a real-time factor like 1 (real time) or 0.5 (half speed), or "
            f"true/false, got {kind_of(value)} {value!r}",
        )
        return None
    if not math.isfinite(value) or value <= 0:
        report.add(
            key,
            f"must be a finite number above 0, got {value!r}; 1 is real time, 0.5 half "
            "speed (use false to run as fast as possible)",
        )
        return None
    return Fraction(Decimal(str(value)))
