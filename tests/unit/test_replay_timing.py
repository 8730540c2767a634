"""Replay timing (orchestrator/adapters/replay.py) without a recording."""

from __future__ import annotations

from fractions import Fraction

from moonpool.orchestrator.adapters.replay import publication_time, publishes_at
from moonpool.orchestrator.rig import Schedule

MS = 1_000_000


def test_a_replay_publishes_exactly_at_its_instants():
    """Under either algorithm a replay can publish at its start time (Initialize) and at
    every later instant of its schedule, and nowhere between them."""
    cam = Schedule(Fraction(30), offset_ns=5 * MS)
    instants = [cam.instant(k) for k in range(200)]
    assert all(publishes_at(cam, t) for t in instants)
    assert not any(publishes_at(cam, t + 1) for t in instants)
    assert not any(publishes_at(cam, t - 1) for t in instants)
    assert not publishes_at(cam, 0)  # before the offset
    odd = Schedule(Fraction(2997, 100))
    assert all(publishes_at(odd, odd.instant(k)) for k in range(0, 100_000, 997))


def test_publication_time_follows_the_algorithm():
    assert publication_time("jacobi", 10, 5) == 15  # outputs visible at the end of the step
    assert publication_time("gauss-seidel", 10, 5) == 10  # at its start
