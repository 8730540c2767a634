"""Altimeter (components/sensors/altimeter.py) through the real ray engine, against
closed forms: flat seabed, tilted plane, sphere; sound-speed bias, refusals, keyed noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import flat_engine, plane_engine, sphere_engine, state
from scipy.integrate import quad

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.acoustic import FlatSeabed, cone_directions
from moonpool.components.sensors.altimeter import (AltimeterModel, AltimeterParams,
                                                   AltimeterSensor)
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.world.environment import WaterColumn
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

QUIET = dict(range_noise_m=0.0, range_noise_per_m=0.0)
WATER = WaterColumn(latitude_deg=45.0, surface_temperature_c=18.0, mixed_layer_depth_m=20.0,
                    thermocline_bottom_m=300.0, deep_temperature_c=4.0)
LEVEL = np.array([[1.0, 0.0, 0.0, 0.0]])


def c_harmonic(z0, z1, water=WATER):
    """Independent harmonic mean: adaptive quadrature of 1/c over depth."""
    integral, _ = quad(lambda z: 1.0 / float(water.sound_speed_mps(z)), z0, z1, epsabs=1e-14,
                       epsrel=1e-13, limit=200)
    return (z1 - z0) / integral


def test_flat_seabed_range_with_the_harmonic_mean_sound_speed_bias():
    m = AltimeterModel(AltimeterParams(**QUIET), flat_engine(120.0), WATER)
    b = m.measure([[3.0, -2.0, 40.0]], LEVEL)
    assert b.valid[0]
    assert b.true_range_m[0] == pytest.approx(80.0, abs=1e-9)
    np.testing.assert_allclose(b.true_point_ned_m[0], [3.0, -2.0, 120.0], atol=1e-9)
    ch = c_harmonic(40.0, 120.0)
    # 16-point Gauss-Legendre vs adaptive quadrature: gsw's salinity-anomaly atlas is
    # interpolated linearly in pressure, so c(z) has kinks at the 1e-9 level
    assert b.harmonic_sound_speed_mps[0] == pytest.approx(ch, rel=1e-8)
    assert b.range_m[0] == pytest.approx(80.0 * 1500.0 / ch, abs=1e-6)
    assert abs(b.range_m[0] - 80.0) > 0.1  # the bias is not negligible in this water
    assert (b.true_label[0], b.true_instance[0]) == (3, 7)


def test_cone_takes_the_nearest_return_on_a_tilted_plane():
    # plane through (0, 0, 60) tilted 4 deg about north; the 10 deg cone contains its normal
    tilt = math.radians(4.0)
    n = np.array([0.0, math.sin(tilt), -math.cos(tilt)])  # towards the sensor (up)
    eng = plane_engine((0.0, 0.0, 60.0), n)
    p = AltimeterParams(**QUIET, beam_width_deg=10.0, cone_rings=4, cone_azimuths=36)
    m = AltimeterModel(p, eng, WATER)
    b = m.measure([[0.0, 0.0, 20.0]], LEVEL)
    D = 40.0 * math.cos(tilt)  # perpendicular distance sensor -> plane
    rays = cone_directions(math.radians(5.0), 4, 36)
    expected = D / np.max(rays @ -n)  # independent: the ray most aligned with the normal
    assert b.true_range_m[0] == pytest.approx(expected, rel=1e-12)
    assert D <= b.true_range_m[0] < D / math.cos(math.radians(5.0) / 8)
    axis_only = AltimeterModel(AltimeterParams(**QUIET, beam_width_deg=0.0), eng, WATER)
    assert axis_only.measure([[0.0, 0.0, 20.0]], LEVEL).true_range_m[0] == pytest.approx(
        40.0, rel=1e-12)  # along the axis: the vertical distance to the plane at (0, 0)


def test_sphere_and_mount_rotation():
    # a sphere of radius 5 m centred 30 m ahead; the altimeter is pitched to look forward
    eng = sphere_engine((30.0, 0.0, 10.0), 5.0)
    mount = Mount((0.5, 0.0, 0.0), (0.0, math.pi / 2, 0.0))  # sensor z -> body x
    m = AltimeterModel(AltimeterParams(**QUIET, beam_width_deg=0.0), eng, WATER, mount)
    b = m.measure([[0.0, 0.0, 10.0]], LEVEL)
    assert b.true_range_m[0] == pytest.approx(30.0 - 0.5 - 5.0, abs=1e-9)  # hits a vertex
    # off-axis: ray from (0, 1, 10) along north meets x = 30 - sqrt(25 - 1); facets <= 2 mm
    b = m.measure([[0.0, 1.0, 10.0]], LEVEL)
    assert b.true_range_m[0] == pytest.approx(30.0 - math.sqrt(24.0) - 0.5, abs=2e-3)
    assert b.true_label[0] == 5


def test_refusals_out_of_range_above_surface_no_return():
    m = AltimeterModel(AltimeterParams(**QUIET, max_range_m=50.0, min_range_m=1.0),
                       flat_engine(100.0), WATER)
    pos = np.array([[0, 0, 40.0], [0, 0, 99.5], [0, 0, -1.0], [0, 0, 60.0]])
    b = m.measure(pos, np.tile(LEVEL, (4, 1)))
    R = common_pb2
    assert list(b.reason) == [R.REFUSAL_REASON_OUT_OF_RANGE, R.REFUSAL_REASON_OUT_OF_RANGE,
                              R.REFUSAL_REASON_ABOVE_SURFACE, 0]
    msgs = [b.fill(i, acoustics_pb2.Altimeter()) for i in range(4)]
    assert "outside [1, 50] m" in msgs[0].validity.detail and msgs[0].range_m == 0.0
    assert msgs[0].true_range_m == pytest.approx(60.0)
    assert "above the surface" in msgs[2].validity.detail
    up = m.measure([[0, 0, 40.0]], [quat_from_euler(math.pi, 0, 0)])
    assert up.reason[0] == R.REFUSAL_REASON_OUT_OF_RANGE and math.isinf(up.true_range_m[0])
    assert "no return" in up.fill(0, acoustics_pb2.Altimeter()).validity.detail


def test_keyed_noise_statistics_and_batch_equals_one_by_one():
    p = AltimeterParams(range_noise_m=0.05, range_noise_per_m=0.001, dropout_probability=0.1)
    m = AltimeterModel(p, FlatSeabed(100.0), WATER, seed=4, name="alt")
    n = 20000
    pos = np.tile([0.0, 0.0, 50.0], (n, 1))
    b = m.measure(pos, np.tile(LEVEL, (n, 1)))
    ok = b.valid
    assert abs(ok.mean() - 0.9) < 0.01
    clean = 50.0 * 1500.0 / b.harmonic_sound_speed_mps[0]
    err = b.range_m[ok] - clean
    assert abs(err.std() / (0.05 + 0.05) - 1) < 0.03 and abs(err.mean()) < 0.003
    one = [m.measure(pos[:1], LEVEL, k) for k in range(40)]
    assert np.array_equal(np.concatenate([o.range_m for o in one]), b.range_m[:40], equal_nan=True)
    other = AltimeterModel(p, FlatSeabed(100.0), WATER, seed=5, name="alt").measure(pos[:40], np.tile(LEVEL, (40, 1)))
    assert not np.array_equal(other.range_m, b.range_m[:40], equal_nan=True)


def _cfg(name, seed, **params):
    return lc.Configure(instance_name=name, seed=seed, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()])


def test_component_flat_seabed_and_water_table_match_the_model():
    water = {"surface_temperature_c": 12.0, "mixed_layer_depth_m": 10.0,
             "thermocline_bottom_m": 200.0, "deep_temperature_c": 5.0, "latitude_deg": 45.0}
    host = ComponentHost(AltimeterSensor())
    host.configure(_cfg("alt", 3, seabed_depth_m=80.0, water=water, mount_xyz_m=(0.0, 0.0, 0.4),
                        latency_s=0.0))
    host.initialize(0)
    (out,) = host.step(0, 100_000_000, {})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    model = AltimeterModel(AltimeterParams(), FlatSeabed(80.0), WaterColumn(**water),
                           Mount((0.0, 0.0, 0.4)), 3, "alt")
    for k in range(1, 4):
        (out,) = host.step(k * 100_000_000, 100_000_000, {"state": state((0, 0, 30.0 + k))})
        ref = model.measure([[0, 0, 30.0 + k]], LEVEL, k).fill(0, acoustics_pb2.Altimeter(
            header=out.message.header))
        assert out.message.SerializeToString(deterministic=True) == ref.SerializeToString(
            deterministic=True)
        assert out.message.validity.valid and out.message.header.frame_id == "alt"


def test_bad_parameters_are_refused_with_the_component_named():
    with pytest.raises(ParameterError, match="alt"):
        ComponentHost(AltimeterSensor()).configure(_cfg("alt", 0, max_range_m=-1.0))
    with pytest.raises(ParameterError, match="unknown water column"):
        ComponentHost(AltimeterSensor()).configure(_cfg("alt", 0, water={"salt": 3.0}))
    with pytest.raises(ParameterError, match="not found"):
        ComponentHost(AltimeterSensor()).configure(_cfg("alt", 0, scene="no/such/scene.toml"))


def test_acoustics_messages_have_header_validity_and_truth():
    for name, m in acoustics_pb2.DESCRIPTOR.message_types_by_name.items():
        assert m.fields_by_name["header"].number == 1, name
        assert m.fields_by_name["validity"].message_type.full_name == "moonpool.v1.Validity", name
        assert any(f.startswith("true_") for f in m.fields_by_name), name
        for sub in m.nested_types:  # per beam / range / bin
            assert sub.fields_by_name["validity"].number == 1, sub.full_name
            assert any(f.startswith("true_") for f in sub.fields_by_name), sub.full_name


def test_component_on_a_scene_file_sees_the_boulder_and_the_scene_water(tmp_path):
    from acoustic_scenes import write_flat_scene

    from moonpool.components.world.scene import Scene

    path = write_flat_scene(tmp_path, depth_m=90.0, boulder=(0.0, 0.0, 88.0, 4.0),
                            water="surface_temperature_c = 8.0\nsurface_salinity_psu = 30.0")
    host = ComponentHost(AltimeterSensor())
    host.configure(_cfg("alt", 1, scene=str(path), range_noise_m=0.0, range_noise_per_m=0.0))
    host.initialize(0)
    (over,) = host.step(0, 10**8, {"state": state((0.0, 0.0, 70.0))})
    (beside,) = host.step(10**8, 10**8, {"state": state((30.0, 0.0, 70.0))})
    water = Scene.load(path).environment
    assert over.message.true_label == 2 and over.message.true_range_m == pytest.approx(14.0, abs=1e-6)
    assert beside.message.true_label == 1 and beside.message.true_range_m == pytest.approx(20.0, abs=1e-9)
    ch = c_harmonic(70.0, 90.0, water)
    assert beside.message.range_m == pytest.approx(20.0 * 1500.0 / ch, abs=1e-6)
