"""The arm and its suction cup (docs/arm.md): IK round trip, momentum balance of the
reaction wrench on a free base, suction attach / no-attach / pull-off."""

from __future__ import annotations

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from moonpool.components.manipulation.arm import (  # noqa: E402
    ArmGeometry, ArmSim, Unreachable, fk, ik, mjcf)
from moonpool.components.manipulation.suction import Suction, SuctionConfig  # noqa: E402

G = ArmGeometry()


def test_ik_round_trip_over_the_workspace_grid():
    reach_lo, reach_hi = abs(G.l1_m - G.l2_m), G.l1_m + G.l2_m
    n = worst = 0.0
    for x in np.linspace(-0.65, 0.65, 14):
        for y in np.linspace(-0.65, 0.65, 14):
            for z in np.linspace(-0.65, 0.65, 14):
                p = np.array([x, y, z])
                r = np.linalg.norm(p)
                if not (reach_lo + 1e-6 < r < reach_hi - 1e-6) or math.hypot(x, y) < 1e-6:
                    continue
                try:
                    q = ik(G, p)
                except Unreachable:  # beyond a joint limit: must really be beyond one
                    q = ik(G, p, check_limits=False)
                    assert np.any(q < G.q_min_rad) or np.any(q > G.q_max_rad)
                    continue
                worst = max(worst, float(np.linalg.norm(fk(G, q) - p)))
                n += 1
    assert n > 500
    assert worst < 1e-9


def test_ik_refuses_out_of_reach():
    with pytest.raises(Unreachable, match="outside the reach"):
        ik(G, [0.0, 0.0, 0.7])


def test_fk_matches_the_mujoco_model():
    sim = ArmSim(G, xml=mjcf(G, target=False))
    q = np.array([0.4, 0.7, -1.1])
    sim.set_q(q)
    pos, _ = sim.cup_pose()
    assert np.allclose(pos, fk(G, q), atol=1e-12)


def test_reaction_wrench_conserves_linear_momentum_on_a_free_base():
    """Gravity and hydrodynamics off: the arm's reaction force is the only force on the
    free base, m_b a_b = F at every sub-step, and P_base + P_arm stays at 0."""
    xml = mjcf(G, free_base=True, base_mass_kg=50.0, target=False, integrator="RK4")
    sim = ArmSim(G, xml=xml, controller="feedforward")
    sim.set_q([0.0, 0.3, -1.0])
    sim.command([1.0, 1.0, -0.5])
    m, d = sim.model, sim.data
    mb = m.body_mass[sim.base]
    worst_f = peak_arm = 0.0
    for _ in range(1500):
        w = sim.substep()
        f_base = mb * sim.qacc[:3]  # the free joint's linear acceleration, world axes
        worst_f = max(worst_f, np.linalg.norm(w[:3] - f_base) / max(np.linalg.norm(f_base), 1e-9))
        mujoco.mj_forward(m, d)
        mujoco.mj_subtreeVel(m, d)
        p_total = m.body_subtreemass[sim.base] * d.subtree_linvel[sim.base]
        p_arm = p_total - mb * d.qvel[:3]
        peak_arm = max(peak_arm, float(np.linalg.norm(p_arm)))
    assert peak_arm > 1.0  # the arm really moved (kg·m/s)
    assert worst_f < 1e-6
    assert np.linalg.norm(p_total) / peak_arm < 1e-6


def _cup_sim(target_euler=(0.0, 0.0, 0.0), offset=(0.0, 0.0, 0.0)):
    q = np.array([0.0, 2.0, math.pi / 2 - 2.0])  # forearm pointing down (+z)
    p = fk(G, q)
    hh = 0.01
    tgt = p + np.array([0, 0, hh]) + np.array(offset)
    xml = mjcf(G, target=True, target_pos_m=tuple(tgt), target_size_m=(0.06, hh),
               target_euler_rad=target_euler)
    sim = ArmSim(G, xml=xml)
    sim.set_q(q)
    return sim, Suction(sim, SuctionConfig(position_tol_m=0.01,
                                           normal_tol_rad=math.radians(10), pull_off_n=20.0))


def test_suction_attaches_within_tolerance_and_holds():
    sim, cup = _cup_sim(offset=(0.004, 0.0, 0.003))
    ev = cup.update(0, pump_on=True)
    assert [e.kind for e in ev] == ["attach"] and cup.attached
    tgt = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_BODY, "target")
    rel0 = sim.data.xpos[tgt] - sim.cup_pose()[0]
    sim.command([0.3, 2.2, math.pi / 2 - 2.2])
    for k in range(800):
        sim.substep()
        cup.update(k, pump_on=True)
    assert cup.attached and [e.kind for e in cup.events] == ["attach"]
    mujoco.mj_forward(sim.model, sim.data)
    pos, R = sim.cup_pose()
    # the target moved with the cup (rigidly, to the weld's softness)
    assert np.linalg.norm(sim.data.xpos[tgt] - pos) == pytest.approx(np.linalg.norm(rel0), abs=2e-3)
    ev = cup.update(10_000, pump_on=False)
    assert [e.kind for e in ev] == ["release"] and not cup.attached


@pytest.mark.parametrize("offset,euler", [((0.02, 0.0, 0.0), (0, 0, 0)),
                                          ((0.0, 0.0, 0.015), (0, 0, 0)),
                                          ((0.0, 0.0, 0.0), (0.0, math.radians(20), 0.0))])
def test_suction_does_not_attach_outside_tolerance(offset, euler):
    sim, cup = _cup_sim(target_euler=euler, offset=offset)
    d, a = cup.alignment()
    assert d > 0.01 or a > math.radians(10)
    assert cup.update(0, pump_on=True) == [] and not cup.attached
    # and never without the pump, even when aligned
    sim2, cup2 = _cup_sim()
    assert cup2.update(0, pump_on=False) == [] and not cup2.attached


@pytest.mark.parametrize("pull_n,expect", [(10.0, False), (40.0, True)])
def test_suction_detaches_above_the_pull_off_force(pull_n, expect):
    sim, cup = _cup_sim()
    cup.update(0, pump_on=True)
    assert cup.attached
    tgt = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_BODY, "target")
    sim.data.xfrc_applied[tgt, 2] = pull_n  # pull the target away (+z, down), N
    for k in range(1, 400):
        sim.substep()
        cup.update(k, pump_on=True)
    kinds = [e.kind for e in cup.events]
    assert (kinds == ["attach", "pull_off"]) is expect
    if expect:
        assert cup.events[-1].force_n > 20.0
    else:
        assert cup.attached and cup.force_n == pytest.approx(pull_n, rel=0.05)
