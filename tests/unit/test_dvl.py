"""Janus DVL (components/sensors/dvl.py) against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount, Truth
from moonpool.components.sensors.dvl import DvlModel, DvlParams, DvlSensor
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, sensors_pb2, vehicle_pb2

A = math.radians(25.0)
QUIET = dict(noise_k=0.0, noise_c_mps=0.0, range_noise_m=0.0, bias_walk_mps_per_sqrt_s=0.0)


def truth(n, depth=80.0, vel=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)):
    z = np.zeros((n, 3))
    pos = z.copy()
    pos[:, 2] = depth
    return Truth(pos, np.tile(quat_from_euler(*rpy), (n, 1)), np.tile(vel, (n, 1)).astype(float),
                 np.tile(omega, (n, 1)).astype(float), z, z, np.zeros(n))


def beams_ref(a=A, az=(45, 135, 225, 315)):
    return np.array([[math.sin(a) * math.cos(math.radians(p)), math.sin(a) * math.sin(math.radians(p)),
                      math.cos(a)] for p in az])


def test_noise_free_geometry_lever_arm_and_altitude():
    r = np.array([0.4, -0.1, 0.3])
    omega = np.array([0.1, -0.05, 0.2])
    v = np.array([1.0, 0.2, -0.1])
    m = DvlModel(DvlParams(**QUIET, seabed_depth_m=100.0), Mount(tuple(r)))
    b, _ = m.measure(truth(1, 80.0, v, omega))
    vs = v + np.cross(omega, r)  # sensor velocity, sensor axes = body axes
    assert b.valid[0] and b.track[0] == sensors_pb2.DVL_TRACK_BOTTOM
    np.testing.assert_allclose(b.true_velocity_mps[0], vs, atol=1e-14)
    np.testing.assert_allclose(b.velocity_mps[0], vs, atol=1e-12)
    np.testing.assert_allclose(b.true_beam_velocity_mps[0], beams_ref() @ vs, atol=1e-14)
    alt = 100.0 - 80.3
    np.testing.assert_allclose(b.true_beam_range_m[0], alt / math.cos(A), rtol=1e-12)
    assert b.altitude_m[0] == pytest.approx(alt, abs=1e-9)
    assert b.true_altitude_m[0] == pytest.approx(alt, abs=1e-12)
    assert b.residual_mps[0] == pytest.approx(0.0, abs=1e-12)


def test_tilted_vehicle_ranges_by_ray_plane_intersection():
    rpy = (0.1, -0.2, 1.0)
    m = DvlModel(DvlParams(**QUIET, seabed_depth_m=60.0), Mount((0, 0, 0), (0.0, 0.05, 0.3)))
    b, _ = m.measure(truth(1, 40.0, (0.5, 0, 0), rpy=rpy))
    from moonpool.components.sdk.frames import rot_from_euler
    R_ws = rot_from_euler(*rpy) @ rot_from_euler(0.0, 0.05, 0.3)
    for i, bi in enumerate(beams_ref()):
        d = R_ws @ bi
        assert b.true_beam_range_m[0, i] == pytest.approx(20.0 / d[2], rel=1e-12)
    assert b.true_altitude_m[0] == pytest.approx(20.0 / R_ws[2, 2], rel=1e-12)
    assert b.altitude_m[0] == pytest.approx(20.0 / R_ws[2, 2], rel=1e-9)  # plane fit, exact


def test_height_field_matches_exact_ray_plane():
    # a tilted planar seabed depth = 50 + 0.1 N - 0.05 E: bilinear is exact for a plane
    gn, ge = np.array([-200.0, 0.0, 200.0]), np.array([-200.0, 200.0])
    depth = [50 + 0.1 * n - 0.05 * e for n in gn for e in ge]
    m = DvlModel(DvlParams(**QUIET, seabed_grid_north_m=tuple(gn), seabed_grid_east_m=tuple(ge),
                           seabed_grid_depth_m=tuple(depth)))
    tr = truth(1, 30.0, rpy=(0.05, 0.1, 0.4))
    tr.position_ned_m[0, :2] = (10.0, -5.0)
    b, _ = m.measure(tr)
    R = m.mount.R_bs
    from moonpool.components.sdk.frames import rot_from_quat
    Rw = rot_from_quat(tr.quaternion[0])
    p0 = tr.position_ned_m[0]
    nrm = np.array([-0.1, 0.05, 1.0])  # plane: z - 0.1 N + 0.05 E = 50
    for i, bi in enumerate(beams_ref()):
        d = Rw @ R @ bi
        t_exact = (50.0 - nrm @ p0) / (nrm @ d)
        assert b.true_beam_range_m[0, i] == pytest.approx(t_exact, abs=1e-9)
    assert b.valid[0]


def test_per_beam_noise_maps_to_velocity_noise_within_5_percent():
    sb, n = 0.01, 40000
    m = DvlModel(DvlParams(noise_k=0.0, noise_c_mps=sb, range_noise_m=0.0,
                           bias_walk_mps_per_sqrt_s=0.0), seed=1, name="dvl")
    b, _ = m.measure(truth(n, 80.0, (1.2, -0.4, 0.1)))
    err = b.velocity_mps - b.true_velocity_mps
    sx_ref, sz_ref = sb / (math.sqrt(2) * math.sin(A)), sb / (2 * math.cos(A))
    sx, sy, sz = err.std(axis=0)
    print(f"sigma_b={sb}: sigma_x {sx:.6f} sigma_y {sy:.6f} (ref {sx_ref:.6f}); "
          f"sigma_z {sz:.6f} (ref {sz_ref:.6f}); rel. err {sx / sx_ref - 1:+.4f} "
          f"{sy / sx_ref - 1:+.4f} {sz / sz_ref - 1:+.4f}")
    assert abs(sx / sx_ref - 1) < 0.05 and abs(sy / sx_ref - 1) < 0.05
    assert abs(sz / sz_ref - 1) < 0.05
    # the reported covariance is sigma^2 (H^T H)^-1, from an independent H
    H = beams_ref()
    np.testing.assert_allclose(b.covariance[0], sb ** 2 * np.linalg.inv(H.T @ H), rtol=1e-12,
                               atol=1e-18)
    np.testing.assert_allclose(np.sqrt(np.diag(b.covariance[0])), [sx_ref, sx_ref, sz_ref],
                               rtol=1e-12)


def test_two_dropped_beams_refuse_and_one_dropped_is_solved():
    m = DvlModel(DvlParams(dropout_probability=0.5), seed=2)
    b, _ = m.measure(truth(400, 80.0, (0.5, 0.0, 0.0)))
    ndrop = b.dropped.sum(axis=1)
    assert (ndrop == 2).any() and (ndrop == 1).any()
    assert np.all(b.reason[ndrop >= 2] == common_pb2.REFUSAL_REASON_DROPOUT)
    assert np.all(np.isnan(b.velocity_mps[ndrop >= 2]))
    assert np.all(b.valid[ndrop <= 1])
    # three beams: exact solution, zero residual; against an independent solve
    i = int(np.flatnonzero(ndrop == 1)[0])
    ok = ~b.dropped[i]
    v3 = np.linalg.solve(beams_ref()[ok], b.beam_velocity_mps[i, ok])
    np.testing.assert_allclose(b.velocity_mps[i], v3, atol=1e-12)
    assert b.residual_mps[i] < 1e-12
    msg = b.fill(int(np.flatnonzero(ndrop == 2)[0]), sensors_pb2.Dvl())
    assert not msg.validity.valid and msg.validity.reason == common_pb2.REFUSAL_REASON_DROPOUT
    assert "2 dropped" in msg.validity.detail and msg.velocity_mps.x == 0.0
    assert sum(not bm.validity.valid for bm in msg.beams) == 2
    assert all(bm.true_range_m > 0 for bm in msg.beams)


def test_out_of_range_no_lock_and_water_track():
    far = DvlModel(DvlParams(max_range_m=50.0, seabed_depth_m=200.0))
    b, _ = far.measure(truth(1, 80.0))
    assert b.reason[0] == common_pb2.REFUSAL_REASON_OUT_OF_RANGE
    msg = b.fill(0, sensors_pb2.Dvl())
    assert "0 of 4 beams" in msg.validity.detail and msg.true_altitude_m == pytest.approx(120.0)
    close = DvlModel(DvlParams(min_range_m=2.0, seabed_depth_m=81.0))
    assert close.measure(truth(1, 80.0))[0].reason[0] == common_pb2.REFUSAL_REASON_OUT_OF_RANGE
    # upside down: no beam meets the seabed
    up = DvlModel(DvlParams())
    assert up.measure(truth(1, 80.0, rpy=(math.pi, 0, 0)))[0].reason[0] == \
        common_pb2.REFUSAL_REASON_NO_LOCK
    # water track: velocity relative to the current, in the sensor frame
    cur = (0.3, -0.2, 0.05)
    wt = DvlModel(DvlParams(**QUIET, max_range_m=50.0, seabed_depth_m=200.0, water_track=True,
                            current_ned_mps=cur))
    yaw = math.radians(90)
    b, _ = wt.measure(truth(1, 80.0, (1.0, 0.0, 0.0), rpy=(0, 0, yaw)))
    assert b.valid[0] and b.track[0] == sensors_pb2.DVL_TRACK_WATER
    c_body = np.array([cur[0] * math.cos(yaw) + cur[1] * math.sin(yaw),
                       -cur[0] * math.sin(yaw) + cur[1] * math.cos(yaw), cur[2]])
    np.testing.assert_allclose(b.velocity_mps[0], np.array([1.0, 0, 0]) - c_body, atol=1e-12)
    assert np.isnan(b.altitude_m[0])


def test_scale_factor_and_bias_random_walk_statistics():
    dt, n, reps = 0.2, 500, 300
    sw, bw = 1e-3, 2e-3
    final_s, final_b = [], []
    for k in range(reps):
        m = DvlModel(DvlParams(scale_walk_per_sqrt_s=sw, bias_walk_mps_per_sqrt_s=bw), seed=k,
                     dt_s=dt)
        b, _ = m.measure(truth(n, 80.0, (1.0, 0, 0)))
        final_s.append(b.scale[-1])
        final_b.append(b.bias_mps[-1])
    t = (n - 1) * dt
    assert np.std(final_s) == pytest.approx(sw * math.sqrt(t), rel=0.06)
    assert np.std(final_b) == pytest.approx(bw * math.sqrt(t), rel=0.06)


def test_batch_equals_one_by_one_and_continues_from_state():
    rng = np.random.default_rng(0)
    n = 60
    q = np.array([quat_from_euler(*rng.normal(0, 0.1, 3)) for _ in range(n)])
    tr = Truth(np.c_[rng.normal(0, 5, (n, 2)), 80 + rng.normal(0, 1, n)], q,
               rng.normal(0, 1, (n, 3)), rng.normal(0, 0.2, (n, 3)), np.zeros((n, 3)),
               np.zeros((n, 3)), np.zeros(n))
    p = DvlParams(dropout_probability=0.2, scale_walk_per_sqrt_s=1e-3,
                  bias_walk_mps_per_sqrt_s=1e-3, max_range_m=22.0)
    m = DvlModel(p, Mount((0.3, 0.1, 0.2), (0.01, 0.02, 0.5)), 3, "dvl", 0.2)
    whole, _ = m.measure(tr, 0)
    state, rows = None, []
    for i in range(n):
        one = Truth(*(np.asarray(getattr(tr, f))[i:i + 1] for f in Truth.__dataclass_fields__))
        bi, state = m.measure(one, i, state)
        rows.append(bi)
    first, st = m.measure(Truth(*(np.asarray(getattr(tr, f))[:25] for f in Truth.__dataclass_fields__)), 0)
    rest, _ = m.measure(Truth(*(np.asarray(getattr(tr, f))[25:] for f in Truth.__dataclass_fields__)), 25, st)
    cold, _ = m.measure(Truth(*(np.asarray(getattr(tr, f))[25:] for f in Truth.__dataclass_fields__)), 25)
    for f in ("reason", "velocity_mps", "covariance", "residual_mps", "altitude_m",
              "beam_velocity_mps", "beam_range_m", "beam_reason", "scale", "bias_mps"):
        ref = getattr(whole, f)
        assert np.array_equal(ref, np.concatenate([getattr(r, f) for r in rows]), equal_nan=True), f
        assert np.array_equal(ref, np.concatenate([getattr(first, f), getattr(rest, f)]),
                              equal_nan=True), f
        assert np.array_equal(ref[25:], getattr(cold, f), equal_nan=True), f
    assert len(set(whole.reason)) > 1  # some refused, some valid


def _param(name, v):
    if isinstance(v, tuple):
        return lc.NamedParameter(name=name, value=lc.ParameterValue(
            double_array=lc.DoubleArray(values=v)))
    return lc.NamedParameter(name=name, value=lc.ParameterValue(double_value=v))


def test_component_messages_match_model():
    host = ComponentHost(DvlSensor())
    host.configure(lc.Configure(instance_name="dvl", seed=4, parameters=[
        _param("seabed_depth_m", 90.0), _param("mount_xyz_m", (0.2, 0.0, 0.3)),
        _param("dropout_probability", 0.3)]))
    host.initialize(0)
    (out,) = host.step(0, 200_000_000, {})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    s = vehicle_pb2.VehicleState()
    s.orientation.w = 1.0
    s.position_ned_m.z = 70.0
    s.linear_velocity_body_mps.x = 0.8
    s.angular_velocity_body_radps.z = 0.1
    model = DvlModel(DvlParams(seabed_depth_m=90.0, dropout_probability=0.3),
                     Mount((0.2, 0.0, 0.3)), 4, "dvl", 0.2)
    ref, _ = model.measure(truth(6, 70.0, (0.8, 0, 0), (0, 0, 0.1)), 0)
    for k in range(1, 6):
        (out,) = host.step(k * 200_000_000, 200_000_000, {"state": s})
        m = out.message
        assert m.header.sim_time_ns == k * 200_000_000 and m.header.frame_id == "dvl"
        assert m.validity.valid == bool(ref.valid[k]) and len(m.beams) == 4
        if m.validity.valid:
            assert [m.velocity_mps.x, m.velocity_mps.y, m.velocity_mps.z] == list(ref.velocity_mps[k])
            assert m.altitude_m == ref.altitude_m[k] and len(m.velocity_covariance.values) == 9
        assert m.true_velocity_mps.y == pytest.approx(0.02)  # omega x r


def test_bad_parameters_are_refused():
    from moonpool.components import ParameterError
    host = ComponentHost(DvlSensor())
    with pytest.raises(Exception) as e:
        host.configure(lc.Configure(instance_name="dvl", seed=0, parameters=[
            _param("beam_azimuths_deg", (0.0, 90.0))]))
    assert "3 beam" in str(e.value) or isinstance(e.value, ParameterError)


def test_same_seed_in_another_process(tmp_path):
    from dvl_pressure_sources import run_sensor_rig, truth_arrays

    states, outs = run_sensor_rig(
        tmp_path, name="dvl", entry="sensors.dvl", port="dvl", seed=9, rate=5, until="6s",
        params='seabed_depth_m = 70.0\nmax_range_m = 22.0\ndropout_probability = 0.15\n'
               'bias_walk_mps_per_sqrt_s = 1e-3\nscale_walk_per_sqrt_s = 1e-3\n'
               'mount_xyz_m = [0.3, 0.1, 0.2]\nmount_rpy_rad = [0.0, 0.0, 0.7854]', depth=50.0)
    assert len(outs) == len(states) == 30
    tr = truth_arrays(states)
    assert [o.header.sim_time_ns for o in outs] == list(tr["t_ns"])
    n = len(states)
    z = np.zeros((n, 3))
    model = DvlModel(DvlParams(seabed_depth_m=70.0, max_range_m=22.0, dropout_probability=0.15,
                               bias_walk_mps_per_sqrt_s=1e-3, scale_walk_per_sqrt_s=1e-3),
                     Mount((0.3, 0.1, 0.2), (0.0, 0.0, 0.7854)), 9, "dvl", 0.2)
    b, _ = model.measure(Truth(tr["pos"], tr["quat"], tr["vel"], tr["omega"], z, z, np.zeros(n)))
    assert b.valid.any() and (~b.valid).any()
    for i, o in enumerate(outs):
        ref = b.fill(i, sensors_pb2.Dvl(header=o.header))
        assert o.SerializeToString(deterministic=True) == ref.SerializeToString(deterministic=True), i


# ------------------------------------------------------------- on the scene


def test_scene_flat_mesh_equals_the_flat_seabed():
    from acoustic_scenes import flat_engine

    tr = truth(5, 40.0, (0.6, -0.1, 0.05), (0.02, 0.01, 0.1), rpy=(0.1, -0.05, 0.7))
    tr.position_ned_m[:, 0] = np.arange(5) * 3.0
    p = DvlParams(seabed_depth_m=70.0, dropout_probability=0.2, bias_walk_mps_per_sqrt_s=1e-3)
    mount = Mount((0.3, 0.1, 0.2), (0.0, 0.05, 0.4))
    flat, _ = DvlModel(p, mount, 3, "dvl").measure(tr)
    mesh, _ = DvlModel(p, mount, 3, "dvl", engine=flat_engine(70.0)).measure(tr)
    np.testing.assert_allclose(mesh.true_beam_range_m, flat.true_beam_range_m, rtol=1e-12)
    np.testing.assert_allclose(mesh.true_altitude_m, flat.true_altitude_m, rtol=1e-12)
    np.testing.assert_array_equal(mesh.reason, flat.reason)
    np.testing.assert_allclose(mesh.velocity_mps, flat.velocity_mps, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mesh.altitude_m, flat.altitude_m, rtol=1e-10)


def test_scene_tilted_plane_ranges_and_altitude():
    from acoustic_scenes import plane_engine
    from moonpool.components.sdk.frames import rot_from_quat

    nrm = np.array([-0.1, 0.05, 1.0])  # the plane z - 0.1 N + 0.05 E = 50
    eng = plane_engine((0.0, 0.0, 50.0), nrm)
    m = DvlModel(DvlParams(**QUIET), engine=eng)
    tr = truth(1, 30.0, rpy=(0.05, 0.1, 0.4))
    tr.position_ned_m[0, :2] = (10.0, -5.0)
    b, _ = m.measure(tr)
    Rw = rot_from_quat(tr.quaternion[0])
    p0 = tr.position_ned_m[0]
    for i, bi in enumerate(beams_ref()):
        d = Rw @ bi
        assert b.true_beam_range_m[0, i] == pytest.approx((50.0 - nrm @ p0) / (nrm @ d), rel=1e-12)
    z = Rw[:, 2]
    assert b.true_altitude_m[0] == pytest.approx((50.0 - nrm @ p0) / (nrm @ z), rel=1e-12)
    assert b.altitude_m[0] == pytest.approx(b.true_altitude_m[0], rel=1e-9)  # plane fit, exact


def test_scene_beams_that_hit_nothing_are_invalid_and_lock_needs_three():
    from moonpool.components.world.rays import RayEngine

    # a seabed strip only north of the vehicle: the two aft beams meet nothing
    V = np.array([[0.5, -50, 100.0], [50, -50, 100.0], [50, 50, 100.0], [0.5, 50, 100.0]])
    eng = RayEngine.from_mesh(V, np.array([[0, 1, 2], [0, 2, 3]]), labels=1, instances=1)
    m = DvlModel(DvlParams(**QUIET), engine=eng)
    b, _ = m.measure(truth(1, 80.0, (0.5, 0, 0)))
    R = common_pb2
    assert list(b.beam_reason[0]) == [0, R.REFUSAL_REASON_NO_LOCK, R.REFUSAL_REASON_NO_LOCK, 0]
    assert b.reason[0] == R.REFUSAL_REASON_OUT_OF_RANGE  # 2 beams see the seabed, 3 needed
    msg = b.fill(0, sensors_pb2.Dvl())
    assert "2 of 4 beams" in msg.validity.detail
    assert msg.beams[1].validity.detail == "the beam does not meet the seabed"
    assert math.isinf(msg.beams[1].true_range_m)
    # three beams over the seabed: locked (exact 3-beam solution)
    eng3 = RayEngine.from_mesh(np.array([[-52, -50, 100.0], [48, -50, 100.0], [48, 50, 100.0]]),
                               np.array([[0, 1, 2]]), labels=1, instances=1)  # 135 deg misses
    b, _ = DvlModel(DvlParams(**QUIET), engine=eng3).measure(truth(1, 80.0, (0.5, 0.2, 0)))
    assert (b.beam_reason[0] == 0).sum() == 3 and b.valid[0]
    np.testing.assert_allclose(b.velocity_mps[0], [0.5, 0.2, 0.0], atol=1e-12)
    assert b.altitude_m[0] == pytest.approx(20.0, abs=1e-9)  # plane through the 3 hits


def test_component_with_a_scene_file(tmp_path):
    from acoustic_scenes import write_flat_scene

    path = write_flat_scene(tmp_path, depth_m=90.0, boulder=(0.0, 0.0, 88.0, 4.0))

    def run(params):
        host = ComponentHost(DvlSensor())
        host.configure(lc.Configure(instance_name="dvl", seed=4, parameters=params))
        host.initialize(0)
        s = vehicle_pb2.VehicleState()
        s.orientation.w = 1.0
        s.position_ned_m.x, s.position_ned_m.z = 30.0, 70.0
        s.linear_velocity_body_mps.x = 0.8
        return [host.step(k * 200_000_000, 200_000_000, {"state": s})[0].message for k in range(3)]

    scene = run([lc.NamedParameter(name="scene", value=lc.ParameterValue(string_value=str(path)))])
    flat = run([_param("seabed_depth_m", 90.0)])
    for a, b in zip(scene, flat):  # 30 m north of the boulder: the flat floor
        assert a.validity.valid and b.validity.valid
        assert [bm.true_range_m for bm in a.beams] == pytest.approx([bm.true_range_m for bm in b.beams], rel=1e-12)
        assert a.velocity_mps.x == pytest.approx(b.velocity_mps.x, abs=1e-12)
    # over the boulder (top at 84 m): the nadir altitude is to its top
    host = ComponentHost(DvlSensor())
    host.configure(lc.Configure(instance_name="dvl", seed=4, parameters=[
        lc.NamedParameter(name="scene", value=lc.ParameterValue(string_value=str(path)))]))
    host.initialize(0)
    s = vehicle_pb2.VehicleState()
    s.orientation.w = 1.0
    s.position_ned_m.z = 70.0
    (out,) = host.step(0, 200_000_000, {"state": s})
    assert out.message.true_altitude_m == pytest.approx(14.0, abs=1e-6)  # a vertex of the sphere
