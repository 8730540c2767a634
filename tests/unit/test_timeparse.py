"""Durations -> exact integer nanoseconds (orchestrator/timeparse.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonpool.orchestrator.timeparse import (
    INT64_MAX,
    DurationError,
    parse_duration_ns,
    seconds_to_ns,
)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("7ns", 7),
        ("250us", 250_000),
        ("250 us", 250_000),
        ("250µs", 250_000),  # micro sign U+00B5
        ("250μs", 250_000),  # greek mu U+03BC
        ("10ms", 10_000_000),
        ("1.5s", 1_500_000_000),
        ("2min", 120_000_000_000),
        ("0.5min", 30_000_000_000),
        (" 3 s ", 3_000_000_000),
        ("1e3ms", 1_000_000_000),
        (".25s", 250_000_000),
        ("0s", 0),
        ("+2ms", 2_000_000),
    ],
)
def test_strings_with_units(text: str, ns: int) -> None:
    assert parse_duration_ns(text, key="k") == ns


@pytest.mark.parametrize(
    ("value", "ns"),
    [(20, 20_000_000_000), (0, 0), (1.5, 1_500_000_000), (1e-9, 1), (2.5e-7, 250)],
)
def test_bare_numbers_are_seconds(value: float, ns: int) -> None:
    assert parse_duration_ns(value, key="k") == ns


def test_tenth_of_a_second_is_exact() -> None:
    assert int(1.005 * 1e9) == 1_004_999_999  # the naive float product truncates...
    assert parse_duration_ns(1.005, key="k") == 1_005_000_000  # ...the decimal reading does not
    assert parse_duration_ns(0.1, key="k") == 100_000_000
    assert parse_duration_ns("0.1s", key="k") == 100_000_000
    assert seconds_to_ns(0.7) == 700_000_000


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (-1, "negative"),
        ("-5ms", "negative"),
        (float("nan"), "not a finite duration"),
        (float("inf"), "not a finite duration"),
        (True, "got true"),
        ("10", "is not a duration"),
        ("abc", "is not a duration"),
        ("10 h", "unknown unit 'h'"),
        ("10 sec", "unknown unit 'sec'"),
        ("0.5ns", "not a whole number of nanoseconds"),
        (1e-10, "not a whole number of nanoseconds"),
        (None, "got NoneType"),
        ([1], "got list"),
        (1e12, "too long"),
    ],
)
def test_refused_values_say_why_and_name_the_forms(value: object, fragment: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration_ns(value, key="run.until")
    message = str(info.value)
    assert message.startswith("run.until: ")
    assert fragment in message
    assert isinstance(info.value, ValueError)
    assert info.value.reason == message.removeprefix("run.until: ")


@pytest.mark.parametrize("value", ["abc", True, None, "10"])
def test_malformed_message_lists_the_accepted_forms(value: object) -> None:
    with pytest.raises(ValueError, match=r'"10ms", "1\.5s", "250 us".*ns, us, µs, ms, s, min'):
        parse_duration_ns(value, key="x")


def test_largest_value_is_int64() -> None:
    assert parse_duration_ns(f"{INT64_MAX}ns", key="k") == INT64_MAX
    with pytest.raises(DurationError, match="too long"):
        parse_duration_ns(f"{INT64_MAX + 1}ns", key="k")


def test_seconds_to_ns_refuses_strings() -> None:
    with pytest.raises(DurationError, match="number of seconds"):
        seconds_to_ns("1s", key="--until")  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=10**9))
def test_milliseconds_are_exact(k: int) -> None:
    assert parse_duration_ns(f"{k}ms", key="k") == k * 1_000_000


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_float_seconds_match_their_decimal_spelling(x: float) -> None:
    exact = Decimal(str(x)) * 10**9
    if exact == exact.to_integral_value():
        assert parse_duration_ns(x, key="k") == int(exact)
    else:
        with pytest.raises(DurationError, match="whole number of nanoseconds"):
            parse_duration_ns(x, key="k")
