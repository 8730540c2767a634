"""GNSS: refused under water, valid at the surface; noise σ_h / σ_v; lat/lon from the
NED origin; same seed => identical samples one by one, in a batch and in another process."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.noise import KeyedNoise
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.gnss import GnssModel, GnssSensor, gnss_measure, ned_to_geodetic
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, vehicle_pb2

from navsensor_sources import run_sensor_in_process, trajectory

LEVEL = np.array([1.0, 0.0, 0.0, 0.0])


def _host(**params):
    host = ComponentHost(GnssSensor())
    values = []
    for k, v in params.items():
        if isinstance(v, tuple):
            pv = lc.ParameterValue(double_array=lc.DoubleArray(values=v))
        else:
            pv = lc.ParameterValue(double_value=v)
        values.append(lc.NamedParameter(name=k, value=pv))
    host.configure(lc.Configure(instance_name="gnss", seed=3, parameters=values))
    host.initialize(0)
    return host


def _state(pos, quat=LEVEL):
    st = vehicle_pb2.VehicleState()
    st.position_ned_m.x, st.position_ned_m.y, st.position_ned_m.z = pos
    st.orientation.w, st.orientation.x, st.orientation.y, st.orientation.z = quat
    return st


def test_refused_under_water_valid_at_the_surface():
    model = GnssModel(max_antenna_depth_m=0.1, mount=Mount((0.0, 0.0, -0.5)))  # mast 0.5 m up
    depths = np.array([-1.0, 0.0, 0.5, 0.6, 0.6000001, 1.0, 100.0])
    pos = np.stack([np.zeros(7), np.zeros(7), depths], axis=1)
    s = gnss_measure(model, KeyedNoise(1, "gnss"), 0, pos, np.tile(LEVEL, (7, 1)))
    # antenna depth = body depth - 0.5: valid up to body depth 0.6 m
    assert s.valid.tolist() == [True, True, True, True, False, False, False]
    assert set(s.reason[~s.valid]) == {common_pb2.REFUSAL_REASON_UNDER_WATER}
    assert np.all(np.isnan(s.position_ned_m[~s.valid]))
    assert np.all(np.isnan(s.latitude_deg[~s.valid]))
    np.testing.assert_allclose(s.true_position_ned_m[:, 2], depths - 0.5)
    # the lever arm turns with the vehicle: rolled 90° the mast is horizontal
    rolled = quat_from_euler(math.pi / 2, 0.0, 0.0)
    s = gnss_measure(model, KeyedNoise(1, "gnss"), 0, [[0.0, 0.0, 0.3]], [rolled])
    np.testing.assert_allclose(s.true_position_ned_m[0], [0.0, 0.5, 0.3], atol=1e-12)
    assert not s.valid[0]


def test_component_refuses_with_reason_and_detail_and_fills_truth():
    host = _host(mount_xyz_m=(0.0, 0.0, -0.2))
    (out,) = host.step(0, 100_000_000, {})
    assert not out.message.validity.valid
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    (out,) = host.step(100_000_000, 100_000_000, {"state": _state((5.0, 1.0, 3.0))})
    m = out.message
    assert not m.validity.valid and m.validity.reason == common_pb2.REFUSAL_REASON_UNDER_WATER
    assert "2.800 m deep" in m.validity.detail
    assert m.latitude_deg == 0.0 and m.position_ned_m.x == 0.0  # no made-up value
    assert (m.true_position_ned_m.x, m.true_position_ned_m.z) == (5.0, pytest.approx(2.8))
    (out,) = host.step(200_000_000, 100_000_000, {"state": _state((5.0, 1.0, 0.0))})
    m = out.message
    assert m.validity.valid and m.satellites == 10
    assert m.header.sim_time_ns == 200_000_000 and m.header.frame_id == "gnss"
    assert list(m.position_covariance.values) == pytest.approx([2.25, 0, 0, 0, 2.25, 0, 0, 0, 9.0])
    assert abs(m.position_ned_m.x - 5.0) < 10 and abs(m.latitude_deg - 45.0) < 1e-3


def test_noise_statistics_at_the_surface():
    model = GnssModel(sigma_horizontal_m=1.5, sigma_vertical_m=3.0)
    n = 20_000
    pos = np.tile([10.0, -4.0, 0.0], (n, 1))
    s = gnss_measure(model, KeyedNoise(11, "gnss"), 0, pos, np.tile(LEVEL, (n, 1)))
    assert s.valid.all()
    err = s.position_ned_m - pos
    std = err.std(axis=0)
    # sampling error of a std from n samples: 1/sqrt(2n) = 0.5 %; allow 3 %
    np.testing.assert_allclose(std, [1.5, 1.5, 3.0], rtol=0.03)
    np.testing.assert_allclose(err.mean(axis=0), 0.0, atol=4 * 3.0 / math.sqrt(n))
    assert abs(np.corrcoef(err.T)[0, 1]) < 0.03


def test_latitude_longitude_from_the_ned_origin():
    # independent: distance along the meridian / parallel on WGS-84 for small offsets
    a, f = 6378137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    lat0 = math.radians(45.0)
    m_per_deg_lat = math.pi / 180 * a * (1 - e2) / (1 - e2 * math.sin(lat0) ** 2) ** 1.5
    m_per_deg_lon = math.pi / 180 * a * math.cos(lat0) / math.sqrt(1 - e2 * math.sin(lat0) ** 2)
    # textbook values at 45°: 111,132 m per degree of latitude, 78,847 m per degree of longitude
    assert m_per_deg_lat == pytest.approx(111_132, abs=2)
    assert m_per_deg_lon == pytest.approx(78_847, abs=2)
    lat, lon, h = ned_to_geodetic(np.array([1000.0, -500.0, -20.0]), 45.0, 10.0, 0.0)
    assert lat == pytest.approx(45.0 + 1000.0 / m_per_deg_lat, abs=1e-9)
    assert lon == pytest.approx(10.0 - 500.0 / m_per_deg_lon, abs=1e-9)
    assert h == pytest.approx(20.0)
    assert ned_to_geodetic(np.array([0.0, 0.0, -20.0]), 45.0, 10.0, 5.0)[2] == pytest.approx(25.0)
    model = GnssModel(sigma_horizontal_m=0.0, sigma_vertical_m=0.0, origin_latitude_deg=45.0,
                      origin_longitude_deg=10.0)
    s = gnss_measure(model, KeyedNoise(0, "g"), 0, [[1000.0, -500.0, 0.0]], [LEVEL])
    assert s.latitude_deg[0] == pytest.approx(45.0 + 1000.0 / m_per_deg_lat, abs=1e-9)


def test_same_seed_identical_one_by_one_and_in_a_batch():
    model = GnssModel(dropout_probability=0.2, mount=Mount((0.1, 0.0, -0.3)))
    t = np.arange(200) * 0.1
    truth = [trajectory(x) for x in t]
    pos = np.array([p for p, _ in truth])
    quat = np.array([q for _, q in truth])
    batch = gnss_measure(model, KeyedNoise(5, "gnss"), 100, pos, quat)
    noise = KeyedNoise(5, "gnss")
    for i in range(len(t)):
        one = gnss_measure(model, noise, 100 + i, pos[i:i + 1], quat[i:i + 1])
        assert one.reason[0] == batch.reason[i]
        np.testing.assert_array_equal(one.position_ned_m[0], batch.position_ned_m[i])
        np.testing.assert_array_equal(one.latitude_deg[0], batch.latitude_deg[i])
    assert 0 < batch.valid.sum() < len(t)
    assert (batch.reason == common_pb2.REFUSAL_REASON_DROPOUT).any()
    other = gnss_measure(model, KeyedNoise(6, "gnss"), 100, pos, quat)
    assert not np.array_equal(other.position_ned_m[other.valid], batch.position_ned_m[other.valid])


def test_same_seed_identical_in_another_process(tmp_path):
    params = dict(mount_xyz_m=(0.1, 0.0, -0.3), sigma_horizontal_m=2.0)
    msgs = run_sensor_in_process(tmp_path, "sensors.gnss", "gnss", params, seed=7)
    assert len(msgs) == 60
    model = GnssModel(sigma_horizontal_m=2.0, mount=Mount((0.1, 0.0, -0.3)))
    t = np.array([m.header.sim_time_ns for m in msgs]) * 1e-9
    truth = [trajectory(x) for x in t]
    s = gnss_measure(model, KeyedNoise(7, "dut"), 0, np.array([p for p, _ in truth]),
                     np.array([q for _, q in truth]))
    assert 0 < s.valid.sum() < len(msgs)  # the trajectory bobs through the surface
    for i, m in enumerate(msgs):
        assert m.header.seq == i
        assert m.validity.valid == s.valid[i] and m.validity.reason == s.reason[i]
        tp = m.true_position_ned_m
        assert [tp.x, tp.y, tp.z] == s.true_position_ned_m[i].tolist()
        if m.validity.valid:
            p = m.position_ned_m
            assert [p.x, p.y, p.z] == s.position_ned_m[i].tolist()
            assert m.latitude_deg == s.latitude_deg[i] and m.longitude_deg == s.longitude_deg[i]


def test_parameter_errors():
    with pytest.raises(ParameterError):
        _host(sigma_horizontal_m=-1.0)
    with pytest.raises(ParameterError):
        _host(mount_xyz_m=(0.0, 0.0))
