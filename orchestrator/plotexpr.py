"""Expressions of series in a rig's ``[[plots]]`` (docs/rigs.md, ``[[plots]]``).

A series is a signal ``COMPONENT.PORT:FIELD`` or a function of series::

    diff(A, B)        A − B, B sampled at A's times (linear interpolation)
    norm(A, B, ...)   √(A² + B² + …), each sampled at A's times: a distance or an error's size
    unwrap(A)         A with its 2π jumps removed (a yaw that turns on)
    wrap(A)           A wrapped into [−π, π) (an angle error: wrap(diff(yaw, yaw_ref)))

e.g. ``norm(diff(ekf.navigation:position_ned_m.x, ekf.navigation:true_position_ned_m.x),
diff(ekf.navigation:position_ned_m.y, ekf.navigation:true_position_ned_m.y))`` is the
horizontal error of the filter. The result has the times of the first signal in it.

Call order: :func:`parse` (text -> tree, or ValueError naming what is wrong) at load
time; :func:`leaves` (the signals it reads) for the checks; :func:`evaluate` when
drawing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "diff": (2, 2), "norm": (1, None), "unwrap": (1, 1), "wrap": (1, 1),
}
"""Function name -> (fewest, most) arguments (None: any number)."""


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple["Call | str", ...]


Node = Call | str
"""A parsed series: a signal ``COMPONENT.PORT:FIELD`` (str) or a Call."""


def _split_args(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [a.strip() for a in out]


def parse(text: str) -> Node:
    """The tree of a series text; ValueError with what is wrong."""
    text = text.strip()
    head, paren, rest = text.partition("(")
    if paren and head.strip().isidentifier() and ":" not in head:
        name = head.strip()
        if not rest.endswith(")"):
            raise ValueError(f"'{text}': missing ')'")
        if name not in FUNCTIONS:
            raise ValueError(f"'{text}': unknown function '{name}'; use "
                             + ", ".join(f"{f}(...)" for f in FUNCTIONS))
        args = [a for a in _split_args(rest[:-1]) if a]
        lo, hi = FUNCTIONS[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = f"{lo}" if lo == hi else f"at least {lo}"
            raise ValueError(f"'{text}': {name} takes {want} argument(s), got {len(args)}")
        return Call(name, tuple(parse(a) for a in args))
    return text


def leaves(node: Node) -> list[str]:
    """The signals (``COMPONENT.PORT:FIELD``) an expression reads, in order."""
    if isinstance(node, str):
        return [node]
    return [leaf for arg in node.args for leaf in leaves(arg)]


Signal = tuple[np.ndarray, np.ndarray]
"""(time s, values), time increasing."""


def _at(signal: Signal, t: np.ndarray) -> np.ndarray:
    ts, ys = signal
    if len(ts) == 0:
        return np.full(len(t), np.nan)
    return np.interp(t, ts, ys, left=np.nan, right=np.nan)


def evaluate(node: Node, lookup: Callable[[str], Signal]) -> Signal:
    """The expression's (time, values); ``lookup`` gives a signal's (time, values)."""
    if isinstance(node, str):
        return lookup(node)
    args = [evaluate(a, lookup) for a in node.args]
    t = args[0][0]
    if node.name == "diff":
        return t, args[0][1] - _at(args[1], t)
    if node.name == "norm":
        return t, np.sqrt(sum(_at(a, t) ** 2 for a in args))
    y = args[0][1]
    if node.name == "unwrap":
        ok = np.isfinite(y)
        out = np.full(len(y), np.nan)
        out[ok] = np.unwrap(y[ok])
        return t, out
    return t, (y + np.pi) % (2 * np.pi) - np.pi  # wrap
