"""Stationary DVL dead reckoning: the integrated position drift grows like a random
walk (std ∝ √t) under white beam noise, and the velocity error like a random walk
under the beam bias walk; both at the rate predicted from the per-beam parameters
(the 3-hour figure is docs/figures/dvl_drift.py)."""

from __future__ import annotations

import math

import numpy as np

from moonpool.components.sensors.common import Truth
from moonpool.components.sensors.dvl import DvlModel, DvlParams

A = math.radians(25.0)
DT = 0.2


def stationary(n):
    z = np.zeros((n, 3))
    pos = z.copy()
    pos[:, 2] = 80.0
    return Truth(pos, np.tile([1.0, 0, 0, 0], (n, 1)), z, z, z, z, np.zeros(n))


def runs(params, reps, n):
    tr = stationary(n)
    out = []
    for r in range(reps):  # independent realizations: one instance name each
        b, _ = DvlModel(params, seed=0, name=f"dvl{r}", dt_s=DT).measure(tr)
        assert b.valid.all()
        out.append(b.velocity_mps - b.true_velocity_mps)
    return np.array(out)  # (reps, n, 3)


def test_position_drift_grows_like_a_random_walk():
    sb, reps, n = 0.003, 200, 3000
    err = runs(DvlParams(noise_k=0.0, noise_c_mps=sb, bias_walk_mps_per_sqrt_s=0.0), reps, n)
    pos = np.cumsum(err * DT, axis=1)  # dead reckoning from zero
    k = np.array([30, 100, 300, 1000, 2999])
    t = (k + 1) * DT
    std = pos[:, k, :2].std(axis=0).mean(axis=1)  # horizontal, per axis
    ref = sb / (math.sqrt(2) * math.sin(A)) * DT * np.sqrt(k + 1)  # sigma_x dt sqrt(N)
    slope = np.polyfit(np.log(t), np.log(std), 1)[0]
    print(f"drift std {np.round(std, 4)} m vs ref {np.round(ref, 4)} m; log-log slope {slope:.3f}")
    assert np.all(np.abs(std / ref - 1) < 0.12)
    assert abs(slope - 0.5) < 0.05


def test_velocity_error_grows_like_a_random_walk_under_bias_walk():
    bw, reps, n = 1e-4, 200, 3000
    err = runs(DvlParams(noise_k=0.0, noise_c_mps=1e-9, bias_walk_mps_per_sqrt_s=bw), reps, n)
    k = np.array([100, 300, 1000, 2999])
    t = k * DT  # b_0 = 0: k increments at sample k
    std = err[:, k, :2].std(axis=0).mean(axis=1)
    ref = bw / (math.sqrt(2) * math.sin(A)) * np.sqrt(t)
    slope = np.polyfit(np.log(t), np.log(std), 1)[0]
    print(f"velocity error std {std} vs ref {ref}; slope {slope:.3f}")
    assert np.all(np.abs(std / ref - 1) < 0.12)
    assert abs(slope - 0.5) < 0.05
