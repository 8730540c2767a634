"""Multibeam echosounder (components/sensors/multibeam.py, sound_rays.py): the
closed-form arc model against a numerical integration of the ray equations, and the
swath through the real ray engine against analytic geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import flat_engine, plane_engine, sphere_engine, state
from scipy.integrate import solve_ivp

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors import sound_rays as sr
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.multibeam import MultibeamModel, MultibeamParams, MultibeamSensor
from moonpool.components.world.environment import WaterColumn
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

QUIET = dict(range_noise_m=0.0, range_noise_per_m=0.0)
LEVEL = np.array([[1.0, 0.0, 0.0, 0.0]])
C_NOM = 1500.0


def ivp_ray(theta0, c0, g, dz):
    """Independent reference: integrate dx/dz = cot θ, dt/dz = 1/(c sin θ) with
    Snell's law cos θ = a c(z), a = cos θ0 / c0, from the transducer down by dz."""
    a = math.cos(theta0) / c0

    def rhs(z, y):
        c = c0 + g * z
        s = math.sqrt(1.0 - (a * c) ** 2)
        return [a * c / s, 1.0 / (c * s)]

    sol = solve_ivp(rhs, (0.0, dz), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y[0, -1], sol.y[1, -1]


@pytest.mark.parametrize("beam_deg", [0.0, 20.0, 45.0, 60.0])
@pytest.mark.parametrize("g", [0.05, -0.05, 0.017])
def test_arc_range_bias_matches_ray_integration_within_1_cm_at_100_m(beam_deg, g):
    """The sensor's range bias through the real engine (flat floor 100 m below) equals
    the one of the integrated ray equations."""
    c0, alt = 1490.0, 100.0
    p = MultibeamParams(beam_count=1, swath_deg=0.0, max_range_m=400.0, **QUIET,
                        sound_speed_mps=c0 - g * 50.0, sound_speed_gradient_per_s=g)
    # one beam tilted across track by beam_deg through the mount roll
    mount = Mount((0.0, 0.0, 0.0), (-math.radians(beam_deg), 0.0, 0.0))
    m = MultibeamModel(p, flat_engine(150.0), mount=mount)
    b = m.measure([[0.0, 0.0, 50.0]], LEVEL)
    assert b.valid[0]
    theta0 = math.pi / 2 - math.radians(beam_deg)  # depression angle
    x, t = ivp_ray(theta0, c0, g, alt)
    bias_ref = C_NOM * t - math.hypot(x, alt)
    bias = b.range_m[0, 0] - b.true_range_m[0, 0]
    assert bias == pytest.approx(bias_ref, abs=0.01)
    assert bias == pytest.approx(bias_ref, abs=1e-9)  # what the model achieves (~1e-13 m)
    assert b.true_point_ned_m[0, 0, 2] == pytest.approx(150.0, abs=1e-9)
    assert math.hypot(*b.true_point_ned_m[0, 0, :2]) == pytest.approx(x, abs=1e-8)
    # and the bending matters: a straight ray in the same water would be centimetres off
    if beam_deg >= 45:
        straight_t = alt / math.sin(theta0) / sr.harmonic_mean_speed(lambda z: c0 + g * z, 0, alt)
        assert abs(C_NOM * straight_t - math.hypot(x, alt) - bias_ref) > 0.05


def test_arc_formulas_against_integration_and_limits():
    for th0 in np.radians([3.0, 30.0, 89.9]):
        for g in (0.05, -0.03, 1e-9):
            k = sr.arc_curvature(th0, 1500.0, g)
            s = sr.arc_length_to_depth(th0, k, 100.0)
            turn_depth = 1500.0 * (1 / math.cos(th0) - 1) / g  # where cos θ = a c = 1
            if 0 < turn_depth < 100.0:  # the ray turns up before 100 m
                assert math.isnan(s)
                continue
            X, Z = sr.arc_offsets(th0, k, s)
            x, t = ivp_ray(th0, 1500.0, g, 100.0)
            assert Z == pytest.approx(100.0, abs=1e-9)
            assert X == pytest.approx(x, abs=1e-6)
            assert sr.arc_time(th0, 1500.0, g, s) == pytest.approx(t, rel=1e-10)
    # vertical rays and g = 0: straight, t = ln(c1/c0)/g or s/c0
    assert sr.arc_time(math.pi / 2, 1500.0, 0.05, 100.0) == pytest.approx(math.log(1505 / 1500) / 0.05, rel=1e-13)
    assert sr.arc_time(-math.pi / 2, 1500.0, 0.05, 100.0) == pytest.approx(math.log(1500 / 1495) / 0.05, rel=1e-13)
    assert sr.arc_time(0.3, 1500.0, 0.0, 100.0) == pytest.approx(100.0 / 1500.0, rel=1e-15)


def test_flat_floor_swath_reproduces_the_analytic_geometry():
    """g = 0: across-track position = altitude · tan φ, range = altitude / cos φ (the
    engine refines the distance in float64, so 1e-6 m holds with margin)."""
    p = MultibeamParams(beam_count=101, swath_deg=130.0, max_range_m=500.0, **QUIET)
    m = MultibeamModel(p, flat_engine(120.0))
    yaw = math.radians(30.0)
    b = m.measure([[10.0, -4.0, 40.0]], [quat_from_euler(0.0, 0.0, yaw)])
    phi = b.angle_rad
    across = 80.0 * np.tan(phi)
    expected = np.stack([10.0 - across * math.sin(yaw), -4.0 + across * math.cos(yaw),
                         np.full_like(phi, 120.0)], axis=1)
    assert b.valid[0] and b.beam_reason.max() == 0
    np.testing.assert_allclose(b.true_point_ned_m[0], expected, atol=1e-6, rtol=0)
    np.testing.assert_allclose(b.range_m[0], 80.0 / np.cos(phi), atol=1e-6, rtol=0)
    np.testing.assert_allclose(b.true_range_m[0], 80.0 / np.cos(phi), atol=1e-6, rtol=0)
    assert phi[0] == pytest.approx(-math.radians(65.0)) and phi[50] == 0.0
    assert np.all(b.true_label[0] == 3)


def test_refracted_swath_on_a_flat_floor_matches_the_closed_form_arcs():
    g, c_s = 0.05, 1495.0
    p = MultibeamParams(beam_count=31, swath_deg=120.0, max_range_m=300.0, **QUIET,
                        sound_speed_mps=c_s, sound_speed_gradient_per_s=g)
    b = MultibeamModel(p, flat_engine(120.0)).measure([[0.0, 0.0, 20.0]], LEVEL)
    c0 = c_s + g * 20.0
    th0 = math.pi / 2 - np.abs(b.angle_rad)
    k = sr.arc_curvature(th0, c0, g)
    s = sr.arc_length_to_depth(th0, k, 100.0)
    X, _ = sr.arc_offsets(th0, k, s)
    np.testing.assert_allclose(np.abs(b.true_point_ned_m[0, :, 1]), X, atol=2e-6)
    np.testing.assert_allclose(b.range_m[0], C_NOM * sr.arc_time(th0, c0, g, s), atol=2e-6)


def test_tilted_plane_and_sphere_straight_beams():
    # plane z = 60 + 0.2 y (rising to port): beam φ meets it at t = 40 / (cos φ - 0.2 sin φ)
    n = np.array([0.0, -0.2, 1.0])
    m = MultibeamModel(MultibeamParams(beam_count=21, swath_deg=100.0, **QUIET),
                       plane_engine((0.0, 0.0, 60.0), n))
    b = m.measure([[0.0, 0.0, 20.0]], LEVEL)
    phi = b.angle_rad
    np.testing.assert_allclose(b.true_range_m[0], 40.0 / (np.cos(phi) - 0.2 * np.sin(phi)),
                               rtol=1e-12)
    # a sphere below: nadir beam hits its top at H - R
    s = MultibeamModel(MultibeamParams(beam_count=3, swath_deg=2.0, **QUIET),
                       sphere_engine((0.0, 0.0, 50.0), 5.0))
    b = s.measure([[0.0, 0.0, 10.0]], LEVEL)
    assert b.true_range_m[0, 1] == pytest.approx(35.0, abs=1e-9)
    assert b.true_label[0, 1] == 5 and b.true_instance[0, 1] == 9


def test_refusals_beams_out_of_range_and_ping_refused():
    p = MultibeamParams(beam_count=5, swath_deg=120.0, max_range_m=100.0, **QUIET)
    b = MultibeamModel(p, flat_engine(100.0)).measure([[0, 0, 40.0], [0, 0, -2.0]],
                                                      np.tile(LEVEL, (2, 1)))
    R = common_pb2
    # 60 m altitude: the outer beams (60 deg) reach 120 m > 100 m
    assert list(b.beam_reason[0]) == [R.REFUSAL_REASON_OUT_OF_RANGE, 0, 0, 0,
                                      R.REFUSAL_REASON_OUT_OF_RANGE]
    assert b.reason[0] == 0 and b.reason[1] == R.REFUSAL_REASON_ABOVE_SURFACE
    msg = b.fill(0, acoustics_pb2.Multibeam())
    assert msg.validity.valid and len(msg.beams) == 5
    assert not msg.beams[0].validity.valid and "outside [0.5, 100] m" in msg.beams[0].validity.detail
    assert msg.beams[0].range_m == 0.0 and msg.beams[0].true_range_m == pytest.approx(120.0)
    assert msg.beams[2].two_way_travel_time_s == pytest.approx(2 * 60.0 / 1500.0)
    deep = MultibeamModel(p, flat_engine(500.0)).measure([[0, 0, 40.0]], LEVEL)
    assert deep.reason[0] == R.REFUSAL_REASON_OUT_OF_RANGE
    assert "no return" in deep.fill(0, acoustics_pb2.Multibeam()).beams[2].validity.detail


def test_keyed_noise_batch_equals_one_by_one_and_statistics():
    p = MultibeamParams(beam_count=9, swath_deg=90.0, range_noise_m=0.1, range_noise_per_m=0.0,
                        dropout_probability=0.2)
    m = MultibeamModel(p, flat_engine(100.0), seed=7, name="mbes")
    n = 4000
    b = m.measure(np.tile([0.0, 0.0, 50.0], (n, 1)), np.tile(LEVEL, (n, 1)))
    err = b.range_m - 1500.0 * b.true_travel_time_s
    assert abs(np.nanstd(err) / 0.1 - 1) < 0.03
    assert abs(np.mean(b.beam_reason == common_pb2.REFUSAL_REASON_DROPOUT) - 0.2) < 0.01
    one = np.concatenate([m.measure([[0.0, 0.0, 50.0]], LEVEL, k).range_m for k in range(30)])
    assert np.array_equal(one, b.range_m[:30], equal_nan=True)


def test_profile_fitted_to_the_water_column():
    water = WaterColumn(latitude_deg=45.0, surface_temperature_c=18.0, mixed_layer_depth_m=0.0,
                        thermocline_bottom_m=1000.0, deep_temperature_c=4.0)
    p = MultibeamParams(beam_count=3, sound_speed_mps=0.0, max_range_m=100.0, **QUIET)
    m = MultibeamModel(p, flat_engine(150.0), water)
    c0, g = m.profile(np.array([60.0]))
    z = 60.0 + np.linspace(0, 100, 33)
    ref = np.polyfit(z - 60.0, water.sound_speed_mps(z), 1)
    assert c0[0] == pytest.approx(ref[1], rel=1e-12) and g[0] == pytest.approx(ref[0], rel=1e-9)
    assert g[0] < 0  # cooling with depth: c decreases
    b = m.measure([[0.0, 0.0, 60.0]], LEVEL)
    assert b.valid[0] and b.sound_speed_mps[0] == pytest.approx(c0[0])


def test_component_messages_match_the_model():
    host = ComponentHost(MultibeamSensor())
    host.configure(lc.Configure(instance_name="mbes", seed=2, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in dict(
            seabed_depth_m=90.0, beam_count=16, swath_deg=100.0, sound_speed_gradient_per_s=0.02,
            dropout_probability=0.1).items()]))
    host.initialize(0)
    model = MultibeamModel(MultibeamParams(beam_count=16, swath_deg=100.0,
                                           sound_speed_gradient_per_s=0.02,
                                           dropout_probability=0.1),
                           flat_engine(90.0), seed=2, name="mbes")
    (out,) = host.step(0, 10**9, {})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    for k in range(1, 3):
        (out,) = host.step(k * 10**9, 10**9, {"state": state((0, 0, 30.0), rpy=(0.1, 0.05, 1.0))})
        ref = model.measure([[0, 0, 30.0]], [quat_from_euler(0.1, 0.05, 1.0)], k)
        got = out.message
        assert len(got.beams) == 16
        for j, beam in enumerate(got.beams):
            assert beam.validity.valid == (ref.beam_reason[0, j] == 0)
            if beam.validity.valid:  # flat mesh vs FlatSeabed: same plane, same ranges
                assert beam.range_m == pytest.approx(ref.range_m[0, j], abs=1e-9)


def test_same_seed_in_another_process_on_a_scene_file(tmp_path):
    from acoustic_scenes import write_flat_scene
    from dvl_pressure_sources import run_sensor_rig, truth_arrays

    from moonpool.components.world.scene import Scene

    scene = write_flat_scene(tmp_path, depth_m=70.0, boulder=(1.0, 3.0, 68.0, 4.0))
    states, outs = run_sensor_rig(
        tmp_path, name="mbes", entry="sensors.multibeam", port="multibeam", seed=9, rate=5,
        until="2s", params='scene = "scene.toml"\nbeam_count = 24\nswath_deg = 110.0\n'
                           'sound_speed_gradient_per_s = 0.03\ndropout_probability = 0.1\n'
                           'mount_xyz_m = [0.3, 0.1, 0.2]', depth=40.0)
    assert len(outs) == len(states) == 10
    tr = truth_arrays(states)
    model = MultibeamModel(MultibeamParams(beam_count=24, swath_deg=110.0,
                                           sound_speed_gradient_per_s=0.03,
                                           dropout_probability=0.1),
                           Scene.load(scene).engine(), mount=Mount((0.3, 0.1, 0.2)), seed=9,
                           name="mbes")
    labels = set()
    for i, o in enumerate(outs):
        ref = model.measure(tr["pos"][i:i + 1], tr["quat"][i:i + 1], i).fill(
            0, acoustics_pb2.Multibeam(header=o.header))
        assert o.SerializeToString(deterministic=True) == ref.SerializeToString(deterministic=True), i
        labels |= {b.true_label for b in o.beams}
    assert labels == {1, 2}  # the seabed and the boulder
