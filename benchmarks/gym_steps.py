"""Environment steps per second of moonpool/StationKeeping-v0, 1, 2 and 4 envs.

``python benchmarks/gym_steps.py [--steps 150] [--envs 1,2,4]``

For each N: ``gymnasium.vector.AsyncVectorEnv`` of N copies (each env in its own
process), reset (setup excluded from the timing), then ``--steps`` vector steps
with a zero action (each env step = one 0.1 s agent step = 5 steps of the task,
allocator and controller slots at 50 Hz and 10 of thrusters and FMU at 100 Hz);
env steps/s = N · steps / wall time. Also one env stepped directly (no vector
wrapper, same process) as the baseline. Prints the scaling N=2 vs N=1 and says
"met" when more envs give more steps per second (2 cores: expect at most ~2x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--envs", default="1,2,4")
    args = ap.parse_args()
    import gymnasium

    import moonpool.gym  # noqa: F401

    def make():
        return gymnasium.make("moonpool/StationKeeping-v0", horizon_s=60.0)

    env = make()
    env.reset(seed=0)
    for _ in range(20):  # warm-up (first solves, caches)
        env.step(np.zeros(6, dtype=np.float32))
    t0 = time.perf_counter()
    for _ in range(args.steps):
        env.step(np.zeros(6, dtype=np.float32))
    direct = args.steps / (time.perf_counter() - t0)
    env.close()
    print(f"cores: {os.cpu_count()}; load average before {os.getloadavg()[0]:.1f}")
    print(f"direct (1 env, this process): {direct:7.1f} env steps/s")
    rates = {}
    for n in [int(x) for x in args.envs.split(",")]:
        envs = gymnasium.vector.AsyncVectorEnv([make] * n)
        envs.reset(seed=list(range(n)))
        zeros = np.zeros((n, 6), dtype=np.float32)
        for _ in range(20):  # warm-up
            envs.step(zeros)
        t0 = time.perf_counter()
        for _ in range(args.steps):
            envs.step(zeros)
        rates[n] = n * args.steps / (time.perf_counter() - t0)
        envs.close()
        print(f"AsyncVectorEnv x{n}: {rates[n]:7.1f} env steps/s  "
              f"(load average {os.getloadavg()[0]:.1f})")
    if 1 in rates and 2 in rates:
        print(f"scaling 2 envs / 1 env: {rates[2] / rates[1]:.2f}x")
        print("met" if rates[2] > rates[1] else "NOT met (2 envs no faster than 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
