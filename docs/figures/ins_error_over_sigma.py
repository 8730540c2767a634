#!/usr/bin/env python3
"""The INS's error against its own σ over time windows of a recording (docs/missions.md,
"The whole dive"): for every 50th NavigationState on /ins/navigation, e = estimate − truth
for north, east, down position and velocity, divided by the σ the filter reported
(√diag P). A consistent filter gives an RMS of e/σ near 1 in every window.

    python docs/figures/ins_error_over_sigma.py RUN/recording.mcap [--windows 0,1000,3000,5000,7500,8000]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from moonpool.orchestrator.recording import read_recording
from moonpool.v1 import navigation_pb2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording")
    ap.add_argument("--topic", default="/ins/navigation")
    ap.add_argument("--every", type=int, default=50, help="use every Nth message")
    ap.add_argument("--windows", default="0,1000,3000,5000,7500,8000",
                    help="window edges, simulated seconds")
    args = ap.parse_args()
    edges = [float(x) for x in args.windows.split(",")]
    rows = []
    for k, msg in enumerate(m for m in read_recording(args.recording) if m.topic == args.topic):
        if k % args.every:
            continue
        n = navigation_pb2.NavigationState.FromString(msg.payload)
        if len(n.covariance.values) != 36:
            continue
        sigma = np.sqrt(np.diag(np.array(n.covariance.values).reshape(6, 6)))
        p, tp, v, tv = (n.position_ned_m, n.true_position_ned_m, n.velocity_ned_mps,
                        n.true_velocity_ned_mps)
        e = np.array([p.x - tp.x, p.y - tp.y, p.z - tp.z, v.x - tv.x, v.y - tv.y, v.z - tv.z])
        rows.append((msg.log_time_ns * 1e-9, *(e / sigma), sigma[0], sigma[3]))
    if not rows:
        print(f"error: no NavigationState with a covariance on {args.topic}", file=sys.stderr)
        return 2
    a = np.array(rows)
    print("| window s | samples | RMS e/σ: N, E, D | RMS e/σ: vN, vE, vD | mean σ north m | mean σ vN m/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        s = (a[:, 0] >= lo) & (a[:, 0] < hi)
        if not s.any():
            continue
        r = np.sqrt(np.mean(a[s, 1:7] ** 2, axis=0))
        print(f"| {lo:g}–{hi:g} | {s.sum()} | {r[0]:.2f}, {r[1]:.2f}, {r[2]:.2f} | "
              f"{r[3]:.2f}, {r[4]:.2f}, {r[5]:.2f} | {a[s, 7].mean():.2f} | {a[s, 8].mean():.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
