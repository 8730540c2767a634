"""The suction cup: a MuJoCo weld equality between the cup and the target, activated at
run time (seed 003 §4.2: Stonefish's "glue", a fixed joint created during the run).

Call order: ``Suction(sim, config)`` (the model must have the ``suction`` weld, the
``cup`` and ``surface`` sites; ``arm.mjcf`` makes them) → after each
``ArmSim.substep``: ``update(t_ns, pump_on)`` → ``events`` (every attach / release /
pull-off so far, in order).

Rules, evaluated once per sub-step on the state of that sub-step's dynamics:

- **attach** when the pump is on, the cup is free, and the cup centre is within
  ``position_tol_m`` of the target's surface point (distance d) with the cup's
  outward normal n_c opposed to the surface's outward normal n_s within
  ``normal_tol_rad`` (angle θ = arccos(−n_c · n_s)). The weld's relative pose is set
  to the present one, so attaching moves nothing.
- **hold** while the pump is on and the weld's constraint force |f| (the first three
  rows of its ``efc_force``, N) stays ≤ ``pull_off_n``.
- **pull_off** when |f| > ``pull_off_n``: the weld is deactivated (the load is more
  than the cup's suction can hold, e.g. the target is stuck or the arm pulls
  against the seabed).
- **release** when the pump is switched off while attached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..sdk.errors import ParameterError
from .arm import ArmSim, mujoco


@dataclass(frozen=True, kw_only=True)
class SuctionConfig:
    """Tolerances and strength of the suction cup."""

    position_tol_m: float = 0.01
    """Largest cup-centre ↔ surface-point distance that still attaches, m."""
    normal_tol_rad: float = math.radians(10.0)
    """Largest angle between −n_cup and the surface normal that still attaches, rad."""
    pull_off_n: float = 40.0
    """Weld force above which the cup lets go, N."""

    def __post_init__(self) -> None:
        if not (self.position_tol_m > 0 and self.normal_tol_rad > 0 and self.pull_off_n > 0):
            raise ParameterError("suction tolerances and pull-off force must be > 0",
                                 fix="set position_tol_m, normal_tol and pull_off_n > 0")


@dataclass(frozen=True)
class SuctionEvent:
    """One change of the cup's state."""

    t_ns: int
    """Simulation time of the sub-step, ns."""
    kind: str
    """``attach``, ``release`` or ``pull_off``."""
    distance_m: float
    """Cup ↔ surface distance at the event, m."""
    angle_rad: float
    """Normal misalignment at the event, rad."""
    force_n: float
    """Weld force at the event (0 for attach), N."""


@dataclass
class Suction:
    """The cup's state machine over an :class:`ArmSim` (module docstring)."""

    sim: ArmSim
    config: SuctionConfig = field(default_factory=SuctionConfig)

    def __post_init__(self) -> None:
        m = self.sim.model
        self.eq = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, "suction")
        self.surface = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "surface")
        if self.eq < 0 or self.surface < 0:
            raise ParameterError("the arm model has no suction weld or target surface",
                                 fix="build the model with arm.mjcf(..., target=True)")
        self.b1 = int(m.eq_obj1id[self.eq])
        self.b2 = int(m.eq_obj2id[self.eq])
        self.events: list[SuctionEvent] = []
        self.force_n = 0.0
        self._armed = True

    @property
    def attached(self) -> bool:
        """True while the weld is active."""
        return bool(self.sim.data.eq_active[self.eq])

    def alignment(self) -> tuple[float, float]:
        """(d, θ): cup ↔ surface distance (m) and normal misalignment (rad)."""
        d = self.sim.data
        cup = self.sim.cup_site
        dist = float(np.linalg.norm(d.site_xpos[cup] - d.site_xpos[self.surface]))
        n_c = d.site_xmat[cup].reshape(3, 3)[:, 2]
        n_s = d.site_xmat[self.surface].reshape(3, 3)[:, 2]
        ang = float(math.acos(max(-1.0, min(1.0, -float(n_c @ n_s)))))
        return dist, ang

    def weld_force(self) -> float:
        """|f| of the active weld in the last dynamics evaluation, N (0 when free)."""
        d = self.sim.data
        if not self.attached:
            return 0.0
        rows = np.flatnonzero((d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
                              & (d.efc_id[:d.nefc] == self.eq))
        return float(np.linalg.norm(d.efc_force[rows[:3]])) if rows.size else 0.0

    def _activate(self) -> None:
        m, d = self.sim.model, self.sim.data
        # relpose = pose of body2 in body1's frame (checked: the weld's residual is 0)
        p1, p2 = d.xpos[self.b1], d.xpos[self.b2]
        R1 = d.xmat[self.b1].reshape(3, 3)
        q1inv = np.zeros(4)
        mujoco.mju_negQuat(q1inv, d.xquat[self.b1])
        qrel = np.zeros(4)
        mujoco.mju_mulQuat(qrel, q1inv, d.xquat[self.b2])
        m.eq_data[self.eq, 0:3] = 0.0
        m.eq_data[self.eq, 3:6] = R1.T @ (p2 - p1)
        m.eq_data[self.eq, 6:10] = qrel
        d.eq_active[self.eq] = 1

    def update(self, t_ns: int, pump_on: bool) -> list[SuctionEvent]:
        """Apply the rules after a sub-step; return the events it caused."""
        dist, ang = self.alignment()
        new: list[SuctionEvent] = []
        if self.attached:
            self.force_n = self.weld_force()
            if not pump_on:
                self.sim.data.eq_active[self.eq] = 0
                new.append(SuctionEvent(t_ns, "release", dist, ang, self.force_n))
            elif self.force_n > self.config.pull_off_n:
                self.sim.data.eq_active[self.eq] = 0
                self._armed = False
                new.append(SuctionEvent(t_ns, "pull_off", dist, ang, self.force_n))
        else:
            self.force_n = 0.0
            if not pump_on:
                self._armed = True
            elif (self._armed and dist <= self.config.position_tol_m
                    and ang <= self.config.normal_tol_rad):
                self._activate()
                new.append(SuctionEvent(t_ns, "attach", dist, ang, 0.0))
        self.events.extend(new)
        return new
