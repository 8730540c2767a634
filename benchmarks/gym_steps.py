"""Environment steps per second of moonpool/StationKeeping-v0, 1, 2 and 4 envs.

``python benchmarks/gym_steps.py [--steps 150] [--envs 1,2,4]``

For each N: ``gymnasium.vector.AsyncVectorEnv`` of N copies (each env in its own
process), reset (setup excluded from the timing), then ``--steps`` vector steps
with a zero action, wall time and the env processes' CPU time (each env step = one 0.1 s agent step = 5 steps of the task,
allocator and controller slots at 50 Hz and 10 of thrusters and FMU at 100 Hz);
env steps/s = N · steps / wall time. Also one env stepped directly (no vector
wrapper, same process) as the baseline. On a machine shared with other jobs the
wall-clock rates follow the load; the CPU time per env step does not, and
min(N, cores) / CPU time is what N envs reach on idle cores. Prints the scaling N=2 vs N=1 and says
"met" when more envs give more steps per second (2 cores: expect at most ~2x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def cpu_s(pids) -> float:
    """User + system CPU seconds of the processes ``pids`` (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


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
        pids = [p.pid for p in envs.processes]
        c0, t0 = cpu_s(pids), time.perf_counter()
        for _ in range(args.steps):
            envs.step(zeros)
        wall = time.perf_counter() - t0
        cpu_ms = (cpu_s(pids) - c0) / (n * args.steps) * 1e3
        rates[n] = n * args.steps / wall
        envs.close()
        print(f"AsyncVectorEnv x{n}: {rates[n]:7.1f} env steps/s  CPU {cpu_ms:5.2f} ms per env "
              f"step in the env processes -> {min(n, os.cpu_count()) / cpu_ms * 1e3:6.0f} "
              f"steps/s on idle cores  (load average {os.getloadavg()[0]:.1f})")
    if 1 in rates and 2 in rates:
        print(f"scaling 2 envs / 1 env: {rates[2] / rates[1]:.2f}x")
        print("met" if rates[2] > rates[1] else "NOT met (2 envs no faster than 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
