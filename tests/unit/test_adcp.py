"""ADCP (components/sensors/adcp.py) through the real ray engine: bin geometry,
current profile, bins beyond the seabed / surface and the side-lobe rule, noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import flat_engine, plane_engine, state

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.acoustic import FlatSeabed
from moonpool.components.sensors.adcp import AdcpModel, AdcpParams, AdcpSensor
from moonpool.components.sdk.frames import quat_from_euler, rot_from_euler
from moonpool.components.world.environment import WaterColumn
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

A = math.radians(20.0)
LEVEL = np.array([1.0, 0.0, 0.0, 0.0])
PROFILE = ((0.0, (0.5, 0.0, 0.0)), (100.0, (0.1, 0.3, 0.0)), (200.0, (0.0, 0.1, 0.01)))
WATER = WaterColumn(current_profile=PROFILE)


def current_ref(d):
    """The profile's current, interpolated independently."""
    knots = [k[0] for k in PROFILE]
    return np.array([np.interp(d, knots, [k[1][i] for k in PROFILE]) for i in range(3)])


def test_level_profile_is_the_current_minus_the_vehicle_velocity():
    p = AdcpParams(bin_count=10, bin_size_m=4.0, blanking_m=2.0, velocity_noise_mps=0.0)
    m = AdcpModel(p, flat_engine(150.0), WATER)
    yaw = math.radians(40.0)
    v = np.array([1.0, 0.2, 0.0])
    s = m.measure([0.0, 0.0, 50.0], quat_from_euler(0.0, 0.0, yaw), v, (0.0, 0.0, 0.0))
    R = rot_from_euler(0.0, 0.0, yaw)
    D = 2.0 + 4.0 * (np.arange(10) + 0.5)
    np.testing.assert_allclose(s.true_depth_m, 50.0 + D, atol=1e-12)
    expected = np.array([R.T @ current_ref(50.0 + d) - v for d in D])
    assert s.reason == 0 and np.all(s.bin_reason == 0)
    np.testing.assert_allclose(s.velocity_mps, expected, atol=1e-12)
    np.testing.assert_allclose(s.true_velocity_mps, expected, atol=1e-12)
    msg = s.fill(acoustics_pb2.Adcp())
    assert len(msg.bins) == 10 and msg.bins[0].distance_m == 4.0
    assert len(msg.bins[3].beam_velocity_mps) == 4


@pytest.mark.parametrize("side_lobe", [True, False])
def test_bins_beyond_the_seabed_and_its_side_lobe_echo_are_refused(side_lobe):
    H = 30.0  # altitude
    p = AdcpParams(bin_count=34, bin_size_m=1.0, blanking_m=0.5, velocity_noise_mps=0.0,
                   side_lobe_rejection=side_lobe)
    s = AdcpModel(p, flat_engine(100.0 + H), WATER).measure([0.0, 0.0, 100.0], LEVEL)
    D = 0.5 + np.arange(34) + 0.5
    limit = H * math.cos(A) if side_lobe else H  # bin centre D_k / cos a vs t_near or t_beam
    np.testing.assert_array_equal(s.bin_reason == 0, D <= limit)
    assert np.all(s.bin_reason[D > limit] == common_pb2.REFUSAL_REASON_OUT_OF_RANGE)
    np.testing.assert_allclose(s.boundary_m, H / math.cos(A), rtol=1e-12)
    msg = s.fill(acoustics_pb2.Adcp())
    last = msg.bins[-1]
    assert not last.validity.valid and "beyond the seabed" in last.validity.detail
    assert last.velocity_mps.x == 0.0 and msg.true_boundary_range_m == pytest.approx(H / math.cos(A))


def test_tilted_seabed_cuts_the_beams_at_their_own_ranges():
    n = np.array([0.15, 0.06, -1.0])  # seabed rising towards north and (less) east
    eng = plane_engine((0.0, 0.0, 80.0), n)
    p = AdcpParams(bin_count=40, bin_size_m=1.0, blanking_m=0.0, velocity_noise_mps=0.0,
                   side_lobe_rejection=False)
    s = AdcpModel(p, eng, WATER).measure([0.0, 0.0, 50.0], LEVEL)
    nn = n / np.linalg.norm(n)
    for i, b in enumerate(p.beams):
        t_ref = nn @ (np.array([0.0, 0.0, 80.0]) - np.array([0.0, 0.0, 50.0])) / (nn @ b)
        assert s.boundary_m[i] == pytest.approx(t_ref, rel=1e-12)
    slant = (np.arange(40) + 0.5) / math.cos(A)
    n_ok = (slant[:, None] <= s.boundary_m[None, :]).sum(axis=1)
    np.testing.assert_array_equal(s.bin_reason == 0, n_ok >= 3)
    three = np.flatnonzero(n_ok == 3)
    assert three.size and np.all(np.isfinite(s.velocity_mps[three]))  # 3-beam solutions


def test_upward_looking_bins_stop_at_the_surface():
    p = AdcpParams(upward=True, bin_count=30, bin_size_m=2.0, blanking_m=1.0,
                   velocity_noise_mps=0.0, side_lobe_rejection=False)
    s = AdcpModel(p, FlatSeabed(500.0), WATER).measure([0.0, 0.0, 40.0], LEVEL)
    D = 1.0 + 2.0 * (np.arange(30) + 0.5)
    np.testing.assert_array_equal(s.bin_reason == 0, D <= 40.0)
    np.testing.assert_allclose(s.true_depth_m, 40.0 - D, atol=1e-12)
    ok = s.bin_reason == 0
    np.testing.assert_allclose(s.velocity_mps[ok], [current_ref(40.0 - d) for d in D[ok]],
                               atol=1e-12)
    assert "beyond the surface" in s.fill(acoustics_pb2.Adcp()).bins[-1].validity.detail
    above = AdcpModel(p, FlatSeabed(500.0), WATER).measure([0.0, 0.0, -0.2], LEVEL)
    assert above.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE


def test_beam_noise_maps_to_bin_velocity_noise():
    sv = 0.02
    p = AdcpParams(bin_count=2, velocity_noise_mps=sv)
    m = AdcpModel(p, FlatSeabed(200.0), WaterColumn(), seed=3, name="adcp")
    err = np.array([m.measure([0.0, 0.0, 50.0], LEVEL, k=k).velocity_mps for k in range(3000)])
    sx, sy, sz = err.reshape(-1, 3).std(axis=0)
    assert sx == pytest.approx(sv / (math.sqrt(2) * math.sin(A)), rel=0.05)
    assert sy == pytest.approx(sv / (math.sqrt(2) * math.sin(A)), rel=0.05)
    assert sz == pytest.approx(sv / (2 * math.cos(A)), rel=0.05)
    again = m.measure([0.0, 0.0, 50.0], LEVEL, k=7).velocity_mps
    assert np.array_equal(again, err[7])


def test_component_with_a_current_profile_table():
    water = {"current_profile": [[0.0, 0.5, 0.0, 0.0], [100.0, 0.1, 0.3, 0.0],
                                 [200.0, 0.0, 0.1, 0.01]]}  # as in a scene file
    host = ComponentHost(AdcpSensor())
    host.configure(lc.Configure(instance_name="adcp", seed=4, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in dict(
            water=water, seabed_depth_m=90.0, bin_count=16).items()]))
    host.initialize(0)
    model = AdcpModel(AdcpParams(bin_count=16), FlatSeabed(90.0), WATER, seed=4, name="adcp")
    for k in range(3):
        (out,) = host.step(k * 10**9, 10**9, {"state": state((0, 0, 60.0), vel=(0.5, 0, 0))})
        ref = model.measure([0, 0, 60.0], LEVEL, (0.5, 0, 0), (0, 0, 0), k).fill(
            acoustics_pb2.Adcp(header=out.message.header))
        assert out.message.SerializeToString(deterministic=True) == ref.SerializeToString(
            deterministic=True)
    assert out.message.validity.valid and not out.message.bins[-1].validity.valid


def test_component_on_a_scene_file_uses_its_seabed_and_current(tmp_path):
    from acoustic_scenes import write_flat_scene

    path = write_flat_scene(tmp_path, depth_m=60.0, water="current_ned_mps = [0.2, -0.1, 0.0]")
    host = ComponentHost(AdcpSensor())
    host.configure(lc.Configure(instance_name="adcp", seed=1, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in dict(
            scene=str(path), bin_count=30, bin_size_m=1.0, blanking_m=0.5,
            velocity_noise_mps=0.0).items()]))
    host.initialize(0)
    (out,) = host.step(0, 10**9, {"state": state((0.0, 0.0, 40.0))})
    D = np.array([b.distance_m for b in out.message.bins])
    ok = np.array([b.validity.valid for b in out.message.bins])
    np.testing.assert_array_equal(ok, D <= 20.0 * math.cos(A))  # 20 m altitude, side lobes
    for b in np.array(out.message.bins)[ok]:
        assert (b.velocity_mps.x, b.velocity_mps.y) == pytest.approx((0.2, -0.1), abs=1e-12)
