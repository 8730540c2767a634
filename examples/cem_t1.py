"""Improve a linear policy for T1 station keeping with the cross-entropy method.

``python examples/cem_t1.py [--iterations 8] [--population 10] [--elites 3]
[--envs 1] [--seed 0] [--plot docs/img/gym_cem_t1.png]``

NumPy only (no GPU, nothing downloaded). The environment is
``moonpool/StationKeeping-v0`` (rigs/pool_t1.toml, the agent in the controller's
place at 10 Hz, one 20 s trial towards setpoint 1, docs/gym.md), with the current
randomised per episode (north component uniform in [0, 0.1] m/s).

Policy (linear in the observation o, normalised wrench a ∈ [−1, 1]⁶, clipped):

    a_x,y = k_p,xy · e_x,y − k_d,xy · v_x,y        e: target displacement (body), v: velocity
    a_z   = k_p,z · e_z − k_d,z · v_z + b_z
    a_N   = k_ψ · sin e_ψ − k_r · r                 sin e_ψ = (Rᵀ R_r)₁₀, r: yaw rate
    a_K = a_M = 0                                   (roll and pitch are passively stable)

θ = (k_p,xy, k_p,z, k_d,xy, k_d,z, b_z, k_ψ, k_r). The cross-entropy method: draw
N θ ~ 𝒩(μ, diag σ²), run one episode each (the same seeds for every candidate of an
iteration), keep the E best returns, set μ, σ to their mean and standard deviation
(σ floored at 0.05). Starts from μ = 0 (no control at all).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("kp_xy", "kp_z", "kd_xy", "kd_z", "b_z", "k_psi", "k_r")
RANDOMIZE = {"components.vehicle.parameters.start_values.current_n": "uniform(0.0, 0.1)"}


def policy(theta: np.ndarray, obs: np.ndarray) -> np.ndarray:
    kp_xy, kp_z, kd_xy, kd_z, b_z, k_psi, k_r = theta
    e, v, w = obs[0:3], obs[9:12], obs[12:15]
    sin_epsi = obs[4]  # (R^T R_r)[1, 0]
    a = np.array([kp_xy * e[0] - kd_xy * v[0], kp_xy * e[1] - kd_xy * v[1],
                  kp_z * e[2] - kd_z * v[2] + b_z, 0.0, 0.0, k_psi * sin_epsi - k_r * w[2]])
    return np.clip(a, -1.0, 1.0).astype(np.float32)


def episode(env, theta: np.ndarray, seed: int) -> float:
    obs, _ = env.reset(seed=seed)
    total = 0.0
    while True:
        obs, r, term, trunc, _ = env.step(policy(theta, obs))
        total += r
        if term or trunc:
            return total


def evaluate(envs, thetas: list[np.ndarray], seed: int) -> np.ndarray:
    """Return of each θ (one episode, seed ``seed``); with a vector env, in parallel."""
    import gymnasium

    if not isinstance(envs, gymnasium.vector.VectorEnv):
        return np.array([episode(envs, th, seed) for th in thetas])
    n = envs.num_envs
    out = []
    for i in range(0, len(thetas), n):
        batch = thetas[i:i + n]
        batch = batch + [batch[-1]] * (n - len(batch))
        obs, _ = envs.reset(seed=[seed] * n)
        total, done = np.zeros(n), np.zeros(n, bool)
        while not done.all():
            acts = np.stack([policy(th, o) for th, o in zip(batch, obs)])
            obs, r, term, trunc, _ = envs.step(acts)
            total += np.where(done, 0.0, r)
            done |= term | trunc
        out += list(total[:len(thetas[i:i + n])])
    return np.array(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=8)
    ap.add_argument("--population", type=int, default=10)
    ap.add_argument("--elites", type=int, default=3)
    ap.add_argument("--envs", type=int, default=1, help="AsyncVectorEnv of this many processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, help="learning-curve PNG")
    args = ap.parse_args()
    import gymnasium

    import moonpool.gym  # noqa: F401 - registers the environments

    def make():
        return gymnasium.make("moonpool/StationKeeping-v0", randomize=RANDOMIZE)

    envs = (gymnasium.vector.AsyncVectorEnv([make] * args.envs, autoreset_mode="SameStep")
            if args.envs > 1 else make())
    rng = np.random.default_rng(args.seed)
    mu, sigma = np.zeros(len(NAMES)), np.array([2.0, 2.0, 2.0, 2.0, 0.3, 1.0, 1.0])
    held_out = [1000 + k for k in range(3)]
    t0 = time.perf_counter()
    start = np.array([evaluate(envs, [mu], s)[0] for s in held_out])
    curve = [(0, float(start.mean()), float(start.mean()), float(start.mean()))]
    print(f"iteration 0: mean return of mu on held-out seeds {start.mean():8.2f}")
    for it in range(1, args.iterations + 1):
        thetas = [mu + sigma * rng.standard_normal(len(NAMES)) for _ in range(args.population)]
        returns = evaluate(envs, thetas, seed=args.seed * 1000 + it)
        elite = np.argsort(returns)[-args.elites:]
        mu = np.mean([thetas[i] for i in elite], axis=0)
        sigma = np.maximum(np.std([thetas[i] for i in elite], axis=0), 0.05)
        held = np.array([evaluate(envs, [mu], s)[0] for s in held_out])
        curve.append((it, float(returns.mean()), float(returns[elite].mean()), float(held.mean())))
        print(f"iteration {it}: population mean {returns.mean():8.2f}  elite mean "
              f"{returns[elite].mean():8.2f}  mu on held-out seeds {held.mean():8.2f}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    envs.close()
    print("mu = " + ", ".join(f"{n}={v:.3f}" for n, v in zip(NAMES, mu)))
    first, last = curve[0][3], curve[-1][3]
    print(f"held-out return: {first:.2f} -> {last:.2f} "
          f"({'improved' if last > first else 'NOT improved'})")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        c = np.array(curve)
        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.plot(c[1:, 0], c[1:, 1], "o-", label="population mean")
        ax.plot(c[1:, 0], c[1:, 2], "s-", label="elite mean")
        ax.plot(c[:, 0], c[:, 3], "k^-", label="μ, held-out seeds")
        ax.set_xlabel("CEM iteration")
        ax.set_ylabel("episode return (20 s, T1 reward)")
        ax.set_title("StationKeeping-v0: linear policy, cross-entropy method", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.plot, dpi=100)
        print(f"learning curve: {args.plot}")
    return 0 if last > first else 1


if __name__ == "__main__":
    sys.exit(main())
