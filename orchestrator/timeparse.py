"""Durations written by people (rig files, the command line) -> exact integer nanoseconds.

Accepted forms (docs/rigs.md):

- a string ``<number><unit>``, spaces allowed between them: ``"10ms"``, ``"1.5s"``,
  ``"250 us"``, ``"2min"``; units ``ns``, ``us`` (or ``µs``), ``ms``, ``s``, ``min``;
- a bare integer or float, meaning seconds: ``20``, ``0.1``.

The conversion is exact: the number is read as a decimal (``Decimal(str(x))``), so
``0.1`` s is exactly 100 000 000 ns. Negative values, NaN, infinities, booleans and
durations that are not a whole number of nanoseconds are refused.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

NS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 MICRO SIGN
    "μs": 1_000,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60_000_000_000,
}
"""Nanoseconds in one of each accepted unit."""

INT64_MAX = 2**63 - 1
"""Largest duration representable in simulation time (about 292 years)."""

FORMS = (
    'a duration string like "10ms", "1.5s", "250 us" or "2min" '
    "(units: ns, us, µs, ms, s, min) or a number of seconds like 20 or 0.1"
)
"""The accepted forms, as quoted in every error message."""

_PATTERN = re.compile(
    r"^\s*(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>[a-zµμ]+)\s*$"
)


class DurationError(ValueError):
    """A value that is not an acceptable duration.

    ``str(exc)`` is ``"KEY: REASON"``; ``reason`` alone is what is wrong and how to
    write it instead (for callers that name the key themselves).
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}" if key else reason)
        self.key = key
        self.reason = reason


def parse_duration_ns(value: Any, *, key: str) -> int:
    """The duration ``value`` in exact integer nanoseconds (>= 0).

    ``key`` names where the value came from (``run.until``, ``--until``) in the
    error message. Raises :class:`DurationError` (a ``ValueError``) naming the
    accepted forms.
    """
    number, scale = _split(value, key)
    return _to_ns(number, scale, value, key)


def seconds_to_ns(seconds: int | float, *, key: str = "") -> int:
    """A number of seconds in exact integer nanoseconds (``0.1`` -> ``100000000``)."""
    if isinstance(seconds, str):
        raise DurationError(key, f"expected a number of seconds, got the string {seconds!r}")
    return parse_duration_ns(seconds, key=key)


def _split(value: Any, key: str) -> tuple[Decimal, int]:
    """(decimal number, ns per unit) of a duration value; DurationError if malformed."""
    if isinstance(value, bool):
        raise DurationError(key, f"expected {FORMS}, got {str(value).lower()}")
    if isinstance(value, (int, float)):
        return _decimal(str(value), value, key), NS_PER_UNIT["s"]
    if isinstance(value, str):
        match = _PATTERN.match(value)
        if match is None:
            raise DurationError(key, f"{value!r} is not a duration; write {FORMS}")
        unit = match["unit"]
        if unit not in NS_PER_UNIT:
            raise DurationError(
                key, f"unknown unit {unit!r} in {value!r}; use one of ns, us, µs, ms, s, min"
            )
        return _decimal(match["number"], value, key), NS_PER_UNIT[unit]
    raise DurationError(key, f"expected {FORMS}, got {type(value).__name__} {value!r}")


def _decimal(text: str, value: Any, key: str) -> Decimal:
    try:
        number = Decimal(text)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise DurationError(key, f"{value!r} is not a number; write {FORMS}") from exc
    if not number.is_finite():
        raise DurationError(key, f"{value!r} is not a finite duration; write {FORMS}")
    return number


def _to_ns(number: Decimal, scale: int, value: Any, key: str) -> int:
    """Exact ``number * scale`` as an int, refusing negative, fractional or huge results."""
    if number < 0:
        raise DurationError(key, f"{value!r} is negative; a duration must be >= 0")
    with localcontext() as ctx:
        ctx.prec = 100  # enough digits that nothing below int64 is ever rounded
        ns = number * scale
        if ns != ns.to_integral_value():
            raise DurationError(
                key,
                f"{value!r} is not a whole number of nanoseconds; "
                "round it, or give it in ns (e.g. \"1500ns\")",
            )
        result = int(ns)
    if result > INT64_MAX:
        raise DurationError(key, f"{value!r} is too long; the limit is about 292 years")
    return result
