"""Log lines about what peers do, rate-limited: a flood of handshakes or connections
must not flood a server's log (docs/distributed.md)."""

from __future__ import annotations

import logging
import math
import time


class RateLimitedLog:
    """At most ``burst`` lines per ``window_s`` seconds one by one; the rest are counted
    and told in one line when the next window begins."""

    def __init__(self, logger: logging.Logger, level: int, counted: str,
                 burst: int = 5, window_s: float = 10.0) -> None:
        """``counted``: the line for the events not logged one by one, with ``{n}`` and
        ``{s}`` (their number and the window's length)."""
        self.logger, self.level, self.counted = logger, level, counted
        self.burst = burst
        """Events logged one by one per window."""
        self.window_s = window_s
        """The window, s: at most ``burst`` + 1 lines per window."""
        self._window_start = -math.inf
        self._in_window = 0  # events seen in the current window

    def log(self, text: str, *args: object) -> None:
        """Log ``text % args``, unless the window's burst is used up (then count it)."""
        now = time.monotonic()
        if now - self._window_start >= self.window_s:
            unlogged = self._in_window - self.burst
            if unlogged > 0:
                self.logger.log(self.level, self.counted.format(
                    n=unlogged, s=f"{now - self._window_start:.0f}"))
            self._window_start, self._in_window = now, 0
        self._in_window += 1
        if self._in_window <= self.burst:
            suffix = (f"; further ones in the next {self.window_s:.0f} s are counted, not "
                      "logged" if self._in_window == self.burst else "")
            self.logger.log(self.level, text + "%s", *args, suffix)
