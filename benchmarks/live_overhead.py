#!/usr/bin/env python3
"""What the live view costs when it is off: the observer's per-message work with
``live=None`` (what every run without ``--live`` does) against the same work without
the live-view branch, and with a live view on (a Foxglove server, no client).

    .venv/bin/python benchmarks/live_overhead.py [--messages 200000]

Prints ns per message and the ratios; "met" when off costs less than 2 % more than
the branch-free baseline.
"""

from __future__ import annotations

import argparse
import time

from moonpool.orchestrator.run import RunObserver


class _Baseline(RunObserver):
    """RunObserver.write as it was before the live view (no live branch)."""

    def write(self, index, log_time_ns, payload, attachment=None):
        prefix, channel = self._topics[index]
        self.digest.update_prefixed(prefix, log_time_ns, payload, attachment)
        if channel >= 0:
            self.recorder.write(channel, log_time_ns, payload, attachment=attachment)


def _per_message_ns(observer: RunObserver, n: int) -> float:
    index = observer.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
    payload = bytes(200)
    write = observer.write
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for k in range(n):
            write(index, k, payload)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=200_000)
    n = ap.parse_args().messages
    base = _per_message_ns(_Baseline(None), n)
    off = _per_message_ns(RunObserver(None), n)
    print(f"baseline (no live branch): {base:8.1f} ns/message")
    print(f"live off (live=None):      {off:8.1f} ns/message  ratio {off / base:.3f}")
    try:
        from moonpool.orchestrator.live import LiveView

        live = LiveView(0)
        on = _per_message_ns(RunObserver(None, live=live), n)
        live.close()
        print(f"live on (no client):       {on:8.1f} ns/message  ratio {on / base:.3f}")
    except Exception as exc:  # noqa: BLE001 - the live extra may be missing
        print(f"live on: not measured ({exc})")
    print("off costs < 2 % more than the baseline:", "met" if off / base < 1.02 else "not met")


if __name__ == "__main__":
    main()
