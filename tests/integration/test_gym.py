"""moonpool.gym and the external-step API under it, on the real T1/T2 rigs.

- an ExternalRun whose steps are made by the rig's own PID (outside the execution)
  publishes the same stream as the rig run normally (digest equal)
- gymnasium's check_env passes for both registered environments
- the same seed gives the same trajectory (observations, rewards, digest); another
  seed with domain randomisation gives another
- AsyncVectorEnv runs two environments, each in its own process
"""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import moonpool.gym  # noqa: F401 - registers the environments
from moonpool.components.sdk.errors import RigValidationError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.loading import load_entry
from moonpool.orchestrator.execution import configure_message
from moonpool.orchestrator.external import ExternalRun
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
T1 = ROOT / "rigs" / "pool_t1.toml"


def test_external_steps_by_the_same_controller_give_the_rigs_digest(tmp_path):
    rig = load_and_check(T1, ["components.t1.parameters.count=1", "run.plots=false"], until_s=1.0)
    reference = run_rig(rig, tmp_path / "ref").summary["digest"]
    cfg = rig.component("controller")
    pid = load_entry(cfg.entry, cfg.base_dir)()
    host = ComponentHost(pid, base_dir=cfg.base_dir)
    host.configure(configure_message(rig, cfg))
    host.initialize(0)
    run = ExternalRun(rig, "controller", ["vehicle.state", "t1.setpoint"])
    assert run.output_types == {"wrench": "moonpool.v1.Wrench"}
    got, steps = run.start(), 0
    while got is not None:
        t, inputs = got
        ins = {"state": inputs["vehicle.state"]}
        if "t1.setpoint" in inputs:
            ins["setpoint"] = inputs["t1.setpoint"]
        got = run.step(pid.step(t, 20_000_000, ins))
        steps += 1
    run.close()
    assert steps == 50
    assert run.digest == reference
    assert "t1" in run.metrics


def test_external_run_names_bad_ports():
    rig = load_and_check(T1, until_s=0.1)
    with pytest.raises(RigValidationError, match="has no output 'nope'"):
        ExternalRun(rig, "controller", ["vehicle.nope"])
    with pytest.raises(RigValidationError, match="no component 'pilot'"):
        ExternalRun(rig, "pilot", ["vehicle.state"])


@pytest.mark.parametrize("env_id", sorted(moonpool.gym.ENVIRONMENTS))
def test_check_env_passes(env_id):
    env = gymnasium.make(env_id, horizon_s=1.0)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def rollout(env, seed, steps=15):
    obs, info = env.reset(seed=seed)
    trace, rewards = [obs], []
    for k in range(steps):
        a = np.r_[0.2 * np.sin(0.3 * k + np.arange(3)), 0.0, 0.0, 0.0]  # forces only
        obs, r, term, trunc, info = env.step(a)
        trace.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    return np.array(trace), np.array(rewards), info


def test_same_seed_same_trajectory_and_randomisation_changes_it():
    env = gymnasium.make("moonpool/StationKeeping-v0", horizon_s=1.5, randomize={
        "components.vehicle.parameters.start_values.current_n": "uniform(0.0, 0.2)"})
    a = rollout(env, 11, steps=100)
    b = rollout(env, 11, steps=100)
    c = rollout(env, 12, steps=100)
    env.close()
    assert a[2]["digest"] == b[2]["digest"] != c[2]["digest"]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    assert len(a[1]) == 15  # 1.5 s at the agent's 10 Hz, then truncated


def test_async_vector_env_runs_each_env_in_its_own_process():
    envs = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make("moonpool/StationKeeping-v0", horizon_s=1.0)] * 2)
    try:
        obs, _ = envs.reset(seed=[1, 1])
        assert obs.shape == (2, 16)
        np.testing.assert_array_equal(obs[0], obs[1])
        for _ in range(3):
            obs, r, term, trunc, _ = envs.step(np.zeros((2, 6), dtype=np.float32))
        assert r.shape == (2,) and r[0] == r[1]
    finally:
        envs.close()
