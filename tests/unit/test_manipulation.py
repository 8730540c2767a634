"""The arm and its suction cup (docs/arm.md): IK round trip, momentum balance of the
reaction wrench on a free base, suction attach / no-attach / pull-off."""

from __future__ import annotations

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from moonpool.components.manipulation.arm import (  # noqa: E402
    ArmGeometry, ArmSim, Unreachable, cup_normal, fk, ik, mjcf)
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
    pos, R = sim.cup_pose()
    assert np.allclose(pos, fk(G, q), atol=1e-12)
    assert np.allclose(R[:, 2], cup_normal(q), atol=1e-12)


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


def test_feedforward_tracks_better_than_pd_with_the_base_fixed():
    """benchmarks/arm_tracking.py tables it; here one 1 s move, gravity off."""
    from moonpool.components.manipulation.arm import min_jerk
    q0, q1 = ik(G, (0.40, -0.25, 0.30)), ik(G, (0.40, 0.25, 0.30))
    rms = {}
    for ctl in ("feedforward", "pd"):
        sim = ArmSim(G, xml=mjcf(G, target=False), controller=ctl)
        sim.set_q(q0)
        e = []
        for k in range(1000):
            sim.command(*min_jerk(q0, q1, 1.0, k * 1e-3))
            sim.substep()
            q_d = min_jerk(q0, q1, 1.0, (k + 1) * 1e-3)[0]
            e.append(np.linalg.norm(fk(G, sim.joint_state()[0]) - fk(G, q_d)))
        rms[ctl] = float(np.sqrt(np.mean(np.square(e))))
    assert rms["feedforward"] < 0.5e-3 and rms["feedforward"] < 0.05 * rms["pd"]


def _cup_sim(target_euler=(0.0, 0.0, 0.0), offset=(0.0, 0.0, 0.0)):
    q = np.array([0.0, -0.6, -math.pi / 2 + 0.6])  # forearm pointing down (+z)
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
    sim.command([0.3, -0.4, -math.pi / 2 + 0.4])
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


# ------------------------------------------------------- the component


def _host(extra: dict | None = None):
    from moonpool.components.manipulation.component import ArmComponent
    from moonpool.components.sdk.host import ComponentHost
    from moonpool.components.sdk.wire import to_parameter_value
    from moonpool.v1 import lifecycle_pb2 as lc

    host = ComponentHost(ArmComponent())
    host.configure(lc.Configure(instance_name="arm", seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in (extra or {}).items()]))
    host.initialize(0)
    return host


def _target(**vals):
    from moonpool.v1 import signals_pb2
    return signals_pb2.Signals(signals=[signals_pb2.Signal(name=k, value=v)
                                        for k, v in vals.items()])


def _run(host, t0, seconds, target, dt=10_000_000):
    out = None
    for k in range(round(seconds * 1e9 / dt)):
        out = {s.port: s.message for s in host.step(t0 + k * dt, dt, {"target": target})}
    return t0 + round(seconds * 1e9 / dt) * dt, out


def test_component_grasps_lifts_and_the_load_carries_the_target():
    wet = 9.80665 * (1 - 1025.0 / 2700.0)
    host = _host()
    arm = host.component
    m_arm = sum(G.link_mass_kg) + G.cup_mass_kg
    t, out = _run(host, 0, 0.5, _target(q1=0.0, q2=0.6, q3=-2.5))
    assert out["wrench"].force_n.z == pytest.approx(m_arm * wet, rel=1e-3)
    # approach: the cup onto the disc's top face (body frame), pump on
    t, out = _run(host, t, 2.5, _target(x=0.689, y=0.0, z=0.795, duration_s=2.0, suction=1.0))
    kinds = [e.kind for e in arm.cup.events]
    assert kinds == ["attach"]
    assert {s.name: s.value for s in out["suction"].signals}["attached"] == 1.0
    # lift and hold: the reaction now carries the target's wet weight too (0.2 kg at its
    # own density, 1200 kg/m³ by default)
    t, out = _run(host, t, 3.0, _target(x=0.689, y=0.0, z=0.6, duration_s=2.0, suction=1.0))
    assert arm.cup.attached
    w_target = 0.2 * 9.80665 * (1 - 1025.0 / 1200.0)
    assert out["wrench"].force_n.z == pytest.approx(m_arm * wet + w_target, rel=2e-3)
    # the payload is not in the controller's model: a few mm of sag, no integral action
    assert out["end_effector"].position_m.z == pytest.approx(0.6, abs=1e-2)
    # release: the event is reported in that step's suction output
    t, out = _run(host, t, 0.02, _target(x=0.689, y=0.0, z=0.6, duration_s=2.0, suction=0.0))
    sig = {s.name: s.value for s in out["suction"].signals}
    assert [e.kind for e in arm.cup.events] == ["attach", "release"] and sig["attached"] == 0.0
    metrics = arm.terminate()
    assert metrics["attach"] == 1 and metrics["release"] == 1 and metrics["pull_off"] == 0


def test_component_refuses_an_unreachable_target_and_holds():
    host = _host()
    t, out = _run(host, 0, 0.1, _target(x=3.0, y=0.0, z=0.5))
    sig = {s.name: s.value for s in out["joints"].signals}
    assert sig["reachable"] == 0.0
    assert host.component.metrics["refused_targets"] == 1


def test_component_schedule_drives_the_arm_and_bad_schedules_are_refused():
    from moonpool.components.sdk.errors import ParameterError
    host = _host({"schedule": [[0.0, 0.689, 0.0, 0.795, 1.5, 1.0]]})
    for k in range(200):
        host.step(k * 10_000_000, 10_000_000, {})
    assert [e.kind for e in host.component.cup.events] == ["attach"]
    with pytest.raises(ParameterError, match="schedule"):
        _host({"schedule": [[0.0, 1.0, 2.0]]})


@pytest.mark.parametrize("params,match", [({"controller": "torque"}, "controller"),
                                          ({"l1_m": -0.1}, "l1_m"),
                                          ({"mount_m": [0.4, 0.0]}, "mount_m")])
def test_component_bad_parameters_are_named(params, match):
    from moonpool.components.sdk.errors import ParameterError
    with pytest.raises(ParameterError, match=match) as err:
        _host(params)
    assert err.value.fix


def _vehicle(p, yaw=0.0, u=0.0):
    from moonpool.v1 import vehicle_pb2
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = (float(v) for v in p)
    s.orientation.w, s.orientation.z = math.cos(yaw / 2), math.sin(yaw / 2)
    s.yaw_rad = yaw
    s.linear_velocity_body_mps.x = u
    s.water_density_kgpm3 = 1025.0
    return s


def test_the_object_rests_in_the_world_while_the_vehicle_moves_and_is_grasped():
    """The target belongs to the world: while the vehicle drifts (5 cm/s north, turned
    10°) the object stays where it lies, the cup is steered to it in the moving body
    frame and takes it; lifted, it moves with the vehicle. Before this the target lived
    in the arm's model in the vehicle frame and moved with the vehicle."""
    from moonpool.v1 import vehicle_pb2
    host = _host()
    arm = host.component
    dt, u, yaw = 10_000_000, 0.05, math.radians(10)
    p0 = np.array([10.0, -4.0, 100.0])
    R = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    target_m = np.array([0.689, 0.0, 0.808])
    hh = 0.01
    world_top = p0 + R @ target_m - np.array([0.0, 0.0, hh])  # the disc's top face, NED
    objects, attached_at, lifted = [], None, None
    for k in range(400):
        t = k * dt
        p_v = p0 + R @ np.array([u * t * 1e-9, 0.0, 0.0])
        x_b = R.T @ (world_top - p_v)  # the top face in the body frame, now
        if attached_at is not None and k > attached_at + 20:
            if lifted is None:  # then lift 0.2 m and hold it there in the body frame
                lifted = x_b - [0.0, 0.0, 0.2]
            x_b = lifted
        out = {s.port: s.message for s in host.step(t, dt, {
            "vehicle": _vehicle(p_v, yaw, u),
            "target": _target(x=x_b[0], y=x_b[1], z=x_b[2], duration_s=1.0, suction=1.0)})}
        o = out["object"].position_ned_m
        objects.append((np.array([o.x, o.y, o.z]), p_v))
        if attached_at is None and arm.cup.attached:
            attached_at = k
    assert [e.kind for e in arm.cup.events] == ["attach"], "the cup did not take the object"
    rest = np.array([o for o, _ in objects[:attached_at]])
    # resting: exactly where it lies (its frame = the disc centre here), not moving with
    # the vehicle, which went 2 cm * attach step north meanwhile
    np.testing.assert_allclose(rest, np.tile(world_top + [0.0, 0.0, hh], (len(rest), 1)), atol=1e-12)
    # held and lifted: it keeps its place relative to the vehicle, 0.2 m up
    (o_end, p_end), (o_mid, p_mid) = objects[-1], objects[-40]
    np.testing.assert_allclose(o_end - p_end, o_mid - p_mid, atol=2e-3)
    assert (o_end - p_end)[2] == pytest.approx((world_top + [0, 0, hh] - p0)[2] - 0.2, abs=0.015)
    assert isinstance(out["object"], vehicle_pb2.VehicleState)


def test_the_held_object_s_drag_in_a_current_loads_the_vehicle():
    """Held still in a 0.3 m/s current across the vehicle, the disc's drag (edge on: area
    2r·2h, C_d 1.2) is ½ ρ C_d A v², and the arm passes it to the vehicle."""
    from moonpool.v1 import vehicle_pb2
    host = _host()
    arm = host.component
    dt = 10_000_000
    top = dict(x=0.689, y=0.0, z=0.798, duration_s=1.5, suction=1.0)
    t, out = _run(host, 0, 2.0, _target(**top))
    assert arm.cup.attached
    t, still = _run(host, t, 2.0, _target(**{**top, "z": 0.6}))
    cur = vehicle_pb2.WaterCurrent()
    cur.velocity_ned_mps.y = 0.3
    for k in range(200):
        out = {s.port: s.message for s in host.step(t + k * dt, dt, {
            "target": _target(**{**top, "z": 0.6}), "current": cur})}
    drag = 0.5 * 1025.0 * 1.2 * (2 * 0.06 * 2 * 0.01) * 0.3**2
    sig = {s.name: s.value for s in out["suction"].signals}
    assert sig["object_drag_n"] == pytest.approx(drag, rel=0.02)
    assert out["wrench"].force_n.y - still["wrench"].force_n.y == pytest.approx(drag, rel=0.05)


def test_a_released_object_sinks_to_the_seabed_and_rests_there():
    """Released 0.2 m above the floor, the object sinks under its wet weight against its
    drag (face on: terminal speed √(W / (½ ρ C_d π r²)) ≈ 0.20 m/s) and rests on the
    floor, level, where the world has it from then on."""
    host = _host()
    arm = host.component
    top = dict(x=0.689, y=0.0, z=0.798, duration_s=1.5, suction=1.0)
    level = {**top, "x": 0.75, "z": 0.6}  # q2 = 0, the forearm (and the cup) vertical
    t, out = _run(host, 0, 2.0, _target(**top))
    t, out = _run(host, t, 2.0, _target(**level))
    assert arm.cup.attached and arm.obj.state == "held"
    t, out = _run(host, t, 0.02, _target(**{**level, "suction": 0.0}))
    assert arm.obj.state == "free"
    speeds = []
    for _ in range(150):
        t, out = _run(host, t, 0.01, _target(**{**level, "suction": 0.0}))
        if arm.obj.state == "free":
            speeds.append(arm.obj.velocity_ned(arm.vehicle)[2])
    assert arm.obj.state == "resting"
    w = 0.2 * 9.80665 * (1 - 1025.0 / 1200.0)
    v_t = math.sqrt(w / (0.5 * 1025.0 * 1.2 * math.pi * 0.06**2))
    assert max(speeds) == pytest.approx(v_t, rel=0.05)
    o = out["object"]
    assert o.position_ned_m.z == pytest.approx(0.818 - 0.01, abs=1e-9)  # centre: floor − h
    assert abs(o.roll_rad) < 1e-12 and abs(o.pitch_rad) < 1e-12
