"""``RigEnv``: a Gymnasium environment over any rig (docs/gym.md).

Call order (Gymnasium's)::

    env = RigEnv("rigs/pool_t1.toml", action="controller.wrench", observations=[...],
                 reward=fn, horizon_s=20, randomize={"KEY": "uniform(a, b)"})
    obs, info = env.reset(seed=s)    the rig loaded with a new seed (and the drawn
                                     --set values), set up, executed until the
                                     agent's first step
    obs, r, terminated, truncated, info = env.step(a)   a -> the action port's message
                                     for this step; executed until the agent's next
                                     step (at the replaced component's rate)
    env.close()

The agent replaces the component of ``action`` (``COMPONENT.PORT``): it steps at that
component's schedule, its action port feeds the rig's connections, and it sees the
output ports named in ``observations`` (``COMPONENT.PORT:field.path``, the plot
series syntax: ``vehicle.state:position_ned_m.x``, ``t1.error:signals[e_3d].value``),
flattened to a ``Box`` in that order; or a :class:`Task` computes the observation,
reward and termination from the messages (the registered tasks, gym/tasks.py).
Actions are a ``Box`` in [-1, 1]^n scaled by ``action_scale`` into the fields
``action_fields`` of the port's message (default for a ``moonpool.v1.Wrench``: the six
body-wrench axes, seed 001's Wrench6). ``truncated`` is true when the horizon (the
run's ``until``) is reached; ``terminated`` when the task says so (a failure).

Seeds: ``reset(seed=s)`` seeds the environment's generator; the rig's seed and the
randomised values are drawn from it, so the same seed gives the same trajectory.
The execution is ``moonpool.orchestrator.external.ExternalRun`` (the orchestrator's
API for stepping one component from outside), in-process, without recording.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium
import numpy as np
from gymnasium import spaces

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import RigValidationError, Problem
from moonpool.orchestrator.external import ExternalRun
from moonpool.orchestrator.plots import flatten
from moonpool.orchestrator.rigfile import load_and_check, load_rig
from moonpool.orchestrator.sweep.design import Distribution, parse_distribution, value_text

OBS_BOUND = 1.0e4
WRENCH6 = ("force_n.x", "force_n.y", "force_n.z", "torque_nm.x", "torque_nm.y", "torque_nm.z")


class Task(Protocol):
    """What a registered environment adds to a rig: observation, reward, end."""

    observe_ports: tuple[str, ...]
    """The COMPONENT.PORT outputs the task reads."""
    size: int
    """Length of the observation vector."""

    def reset(self) -> None: ...

    def observe(self, messages: Mapping[str, Any]) -> np.ndarray: ...

    def reward(self, messages: Mapping[str, Any], action: np.ndarray
               ) -> tuple[float, bool, dict[str, float]]: ...


def _set_field(msg: Any, path: str, value: float) -> None:
    *parents, leaf = path.split(".")
    for p in parents:
        msg = getattr(msg, p)
    setattr(msg, leaf, float(value))


class RigEnv(gymnasium.Env):
    """A Gymnasium ``Env`` over a rig (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, rig: str | Path, *, action: str,
                 observations: Sequence[str] | None = None, task: Task | None = None,
                 reward: Callable[[Mapping[str, Any], np.ndarray], float] | None = None,
                 horizon_s: float | None = None, randomize: Mapping[str, str] | None = None,
                 overrides: Sequence[str] = (), action_fields: Sequence[str] | None = None,
                 action_scale: Sequence[float] | float = 1.0, frame_id: str = "body") -> None:
        super().__init__()
        self.rig_path = Path(rig)
        self.overrides = list(overrides)
        self.horizon_s = horizon_s
        comp, _, port = action.partition(".")
        self.component, self.port = comp, port
        self.randomize: dict[str, Distribution] = {
            k: parse_distribution(v, f"randomize[{k}]") if isinstance(v, str) else v
            for k, v in (randomize or {}).items()}
        if (task is None) == (observations is None):
            raise ValueError("give either observations (field paths) or a task")
        self.task = task
        self.reward_fn = reward
        if task is None and reward is None:
            raise ValueError("observations need a reward function: reward(messages, action)")
        self.fields: list[tuple[str, str]] = []
        if observations is not None:
            for ref in observations:
                p, sep, f = ref.partition(":")
                if not sep:
                    raise ValueError(f"observation {ref!r}: expected COMPONENT.PORT:field.path")
                self.fields.append((p, f))
        ports = task.observe_ports if task else tuple(dict.fromkeys(p for p, _ in self.fields))
        self.observe_ports = tuple(ports)
        # Load and check once (every entry, parameter and key); the ports of the
        # components concerned are described once and reused at every reset.
        keys = [f"{k}={value_text(d.draw(0.5))}" for k, d in self.randomize.items()]
        rig0 = load_and_check(self.rig_path, self.overrides + keys, until_s=horizon_s)
        probe = ExternalRun(rig0, comp, self.observe_ports)
        self._descriptions = probe.descriptions
        self.port_type = probe.output_types.get(port)
        if self.port_type is None:
            raise RigValidationError([Problem(str(self.rig_path), "action", f"'{comp}' has no "
                                              f"output '{port}' (outputs: {sorted(probe.output_types)})")])
        self._msg_class = wire.message_class(self.port_type)
        if action_fields is None:
            if self.port_type != "moonpool.v1.Wrench":
                raise ValueError(f"{action}: give action_fields for a {self.port_type}")
            action_fields = WRENCH6
        self.action_fields = tuple(action_fields)
        n = len(self.action_fields)
        self.action_scale = np.broadcast_to(np.asarray(action_scale, float), (n,)).copy()
        self.frame_id = frame_id
        self.action_space = spaces.Box(-1.0, 1.0, (n,), dtype=np.float32)
        size = task.size if task else len(self.fields)
        # Finite bounds (Gymnasium warns about infinite ones); no observation of a
        # pool vehicle (m, m/s, rad/s, unit vectors) comes near them.
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), dtype=np.float32)
        self._run: ExternalRun | None = None
        self._messages: dict[str, Any] = {}
        self._t_ns = 0
        self.rig_seed: int | None = None
        self.drawn: dict[str, Any] = {}

    # -- helpers ---------------------------------------------------------------

    def _observe(self) -> np.ndarray:
        if self.task is not None:
            obs = self.task.observe(self._messages)
        else:
            flat: dict[str, dict[str, float]] = {}
            obs = np.zeros(len(self.fields))
            for i, (port, field) in enumerate(self.fields):
                msg = self._messages.get(port)
                if msg is None:
                    continue
                if port not in flat:
                    flat[port] = {p: v for p, v, _ in flatten(msg)}
                obs[i] = flat[port].get(field, 0.0)
        return np.clip(np.asarray(obs, dtype=np.float32), -OBS_BOUND, OBS_BOUND)

    def _message(self, action: np.ndarray) -> Any:
        msg = self._msg_class()
        if "header" in msg.DESCRIPTOR.fields_by_name:
            msg.header.sim_time_ns = self._t_ns
            msg.header.frame_id = self.frame_id
        for f, v in zip(self.action_fields, action * self.action_scale):
            _set_field(msg, f, v)
        return msg

    # -- Gymnasium API ---------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self._run is not None:
            self._run.close()
            self._run = None
        rng = self.np_random
        self.rig_seed = int(rng.integers(0, 2**32))
        self.drawn = {k: d.draw(float(np.clip(rng.random(), 1e-12, 1 - 1e-12)))
                      for k, d in self.randomize.items()}
        sets = self.overrides + [f"{k}={value_text(v)}" for k, v in self.drawn.items()]
        rig = load_rig(self.rig_path, sets, seed=self.rig_seed, until_s=self.horizon_s)
        self._run = ExternalRun(rig, self.component, self.observe_ports,
                                descriptions=self._descriptions)
        got = self._run.start()
        if got is None:
            raise RuntimeError(f"{self.rig_path}: the run ended before '{self.component}' "
                               "stepped once (horizon too short?)")
        self._t_ns, self._messages = got
        if self.task is not None:
            self.task.reset()
        return self._observe(), {"t_s": self._t_ns * 1e-9, "rig_seed": self.rig_seed,
                                 "randomized": dict(self.drawn)}

    def step(self, action):
        if self._run is None:
            raise RuntimeError("call reset() before step()")
        a = np.clip(np.asarray(action, dtype=float).reshape(-1), -1.0, 1.0)
        got = self._run.step({self.port: self._message(a)})
        truncated = got is None
        if got is not None:
            self._t_ns, messages = got
            self._messages.update(messages)
        obs = self._observe()
        info: dict[str, Any] = {"t_s": self._t_ns * 1e-9}
        if self.task is not None:
            r, terminated, terms = self.task.reward(self._messages, a)
            info["reward_terms"] = terms
        else:
            r, terminated = float(self.reward_fn(self._messages, a)), False
        if terminated or truncated:
            self._finish(info)
        return obs, float(r), bool(terminated), bool(truncated), info

    def _finish(self, info: dict[str, Any]) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.close()
            info["digest"] = run.digest
            info["metrics"] = run.metrics

    def close(self) -> None:
        if self._run is not None:
            self._run.close()
            self._run = None
        super().close()
