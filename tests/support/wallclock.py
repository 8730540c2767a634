"""A component that notes, at every step, the wall clock (time.monotonic()) beside the
simulation time, one line per step in a file: when a run is killed, which simulation
time it had reached a second earlier (the crash-recovery test and benchmark)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from moonpool.components import Component, param


class WallClock(Component):
    """Writes "MONOTONIC_S SIM_NS" per step to ``path`` (unbuffered); no ports."""

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        path: str = param(doc="the file the lines are written to")

    def configure(self, params):
        self.file = open(params.path, "w", buffering=1)  # noqa: SIM115 (closed at terminate)

    def step(self, t_ns, dt_ns, inputs):
        self.file.write(f"{time.monotonic():.6f} {t_ns}\n")

    def terminate(self):
        self.file.close()


def reached(path, wall_s: float) -> int | None:
    """The last simulation time (ns) stamped at or before ``wall_s`` (time.monotonic)."""
    best = None
    for line in open(path):
        parts = line.split()
        if len(parts) == 2 and float(parts[0]) <= wall_s:
            best = int(parts[1])
    return best
