"""USBL: geometry against an independent rotation library, range error grows with range
(σ_r = c0 + c1 r), bearing error constant in angle, sound-speed scale error, fix
covariance, refusal beyond the maximum range; same seed => identical samples one by
one, in a batch and in another process."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.noise import KeyedNoise
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.usbl import UsblModel, UsblSensor, usbl_measure
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, vehicle_pb2

from navsensor_sources import run_sensor_in_process, trajectory

LEVEL = np.array([1.0, 0.0, 0.0, 0.0])
N = 20_000


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _at_range(model, r, n=N, seed=1, az=0.7, el=-0.5):
    """n samples with the beacon at slant range r, azimuth az, elevation el (transceiver
    at the origin, level)."""
    d = r * np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), -math.sin(el)])
    s = usbl_measure(model, KeyedNoise(seed, f"usbl{r}"), 0, np.tile(d, (n, 1)),
                     np.tile(LEVEL, (n, 1)))
    return s


def test_geometry_matches_an_independent_rotation():
    rpy = (0.1, -0.2, 1.2)
    model = UsblModel(transceiver_ned_m=(5.0, -3.0, 2.0), transceiver_rpy_rad=rpy,
                      range_sigma_m=0.0, range_sigma_per_m=0.0, bearing_sigma_rad=0.0,
                      mount=Mount((0.5, 0.2, -0.1)))
    pos = np.array([[40.0, 25.0, 80.0], [-10.0, 3.0, 30.0]])
    quats = np.array([quat_from_euler(0.2, 0.1, -2.0), quat_from_euler(0.0, 0.3, 0.5)])
    s = usbl_measure(model, KeyedNoise(0, "u"), 0, pos, quats)
    R_wt = Rotation.from_euler("ZYX", rpy[::-1])
    beacon = pos + Rotation.from_quat(quats[:, [1, 2, 3, 0]]).apply([0.5, 0.2, -0.1])
    d = R_wt.inv().apply(beacon - [5.0, -3.0, 2.0])
    np.testing.assert_allclose(s.true_position_ned_m, beacon, atol=1e-12)
    np.testing.assert_allclose(s.true_range_m, np.linalg.norm(d, axis=1), rtol=1e-14)
    np.testing.assert_allclose(s.true_azimuth_rad, np.arctan2(d[:, 1], d[:, 0]), atol=1e-14)
    np.testing.assert_allclose(s.true_elevation_rad, -np.arcsin(d[:, 2] / np.linalg.norm(d, axis=1)),
                               atol=1e-14)
    # noise-free: the fix is the transponder, in the transceiver frame and in NED
    np.testing.assert_allclose(s.position_m, d, atol=1e-9)
    np.testing.assert_allclose(s.position_ned_m, beacon, atol=1e-9)
    # a beacon straight below a level transceiver: elevation -90° (depression 90°)
    below = usbl_measure(model.__class__(bearing_sigma_rad=0.0, range_sigma_m=0.0,
                                         range_sigma_per_m=0.0), KeyedNoise(0, "u"), 0,
                         [[0.0, 0.0, 50.0]], [LEVEL])
    assert below.true_elevation_rad[0] == pytest.approx(-math.pi / 2)


def test_range_error_grows_with_range_bearing_error_constant_in_angle():
    c0, c1, sig = 0.1, 0.002, 0.01
    model = UsblModel(range_sigma_m=c0, range_sigma_per_m=c1, bearing_sigma_rad=sig,
                      max_range_m=1000.0)
    rows = []
    for r in (20.0, 200.0, 500.0, 900.0):
        s = _at_range(model, r)
        assert s.valid.all()
        e_r = s.range_m - r
        e_az = _wrap(s.azimuth_rad - 0.7)
        e_el = s.elevation_rad + 0.5
        e_pos = np.linalg.norm(s.position_m - s.true_position_m, axis=1)
        rows.append((r, e_r.std(), e_az.std(), e_el.std(), e_r.mean(), e_pos.mean()))
        # sampling error of a std from N = 20,000 samples: 0.5 %; allow 3 %
        assert e_r.std() == pytest.approx(c0 + c1 * r, rel=0.03)
        assert abs(e_r.mean()) < 4 * (c0 + c1 * r) / math.sqrt(N)
        assert e_az.std() == pytest.approx(sig, rel=0.03)
        assert e_el.std() == pytest.approx(sig, rel=0.03)
    rows = np.array(rows)
    # range error grows with range, angle error does not; position error grows ~linearly
    assert np.all(np.diff(rows[:, 1]) > 0)
    assert rows[:, 2].max() / rows[:, 2].min() < 1.05
    assert rows[-1, 5] / rows[0, 5] > 20


def test_sound_speed_error_scales_the_range():
    model = UsblModel(sound_speed_mps=1500.0, assumed_sound_speed_mps=1515.0,
                      range_sigma_m=0.05, range_sigma_per_m=0.001)
    for r in (100.0, 800.0):
        s = _at_range(model, r)
        bias = (s.range_m - r).mean()
        assert bias == pytest.approx(r * 0.01, abs=4 * (0.05 + 0.001 * r) / math.sqrt(N))


def test_fix_covariance_matches_the_scatter():
    model = UsblModel(range_sigma_m=0.5, range_sigma_per_m=0.0, bearing_sigma_rad=0.005)
    s = _at_range(model, 300.0, az=-2.0, el=-0.3)
    emp = np.cov((s.position_m - s.true_position_m).T)
    mean_cov = s.covariance.mean(axis=0)
    # compare the principal standard deviations (sampling error ~0.5 %, linearisation tiny)
    np.testing.assert_allclose(np.sqrt(np.linalg.eigvalsh(emp)),
                               np.sqrt(np.linalg.eigvalsh(mean_cov)), rtol=0.03)
    np.testing.assert_allclose(mean_cov, mean_cov.transpose(), atol=0)


def test_refused_beyond_max_range():
    model = UsblModel(max_range_m=500.0)
    r = np.array([10.0, 499.9, 500.0, 500.1, 700.0, 5000.0])
    s = usbl_measure(model, KeyedNoise(2, "u"), 0, np.stack([r, 0 * r, 0 * r], 1),
                     np.tile(LEVEL, (6, 1)))
    assert s.valid.tolist() == [True, True, True, False, False, False]
    assert set(s.reason[~s.valid]) == {common_pb2.REFUSAL_REASON_OUT_OF_RANGE}
    assert np.isnan(s.range_m[~s.valid]).all() and np.isnan(s.position_m[~s.valid]).all()
    # statistics: beyond max range every one of 20,000 samples is refused, inside none
    far = _at_range(model, 501.0)
    near = _at_range(model, 499.0)
    assert far.valid.sum() == 0 and near.valid.all()


def _host(**params):
    host = ComponentHost(UsblSensor())
    values = []
    for k, v in params.items():
        pv = (lc.ParameterValue(double_array=lc.DoubleArray(values=v)) if isinstance(v, tuple)
              else lc.ParameterValue(double_value=v))
        values.append(lc.NamedParameter(name=k, value=pv))
    host.configure(lc.Configure(instance_name="usbl", seed=3, parameters=values))
    host.initialize(0)
    return host


def _state(pos):
    st = vehicle_pb2.VehicleState()
    st.position_ned_m.x, st.position_ned_m.y, st.position_ned_m.z = pos
    st.orientation.w = 1.0
    return st


def test_component_refusals_keep_truth_and_no_value():
    host = _host(max_range_m=100.0)
    (out,) = host.step(0, 10**9, {})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    (out,) = host.step(10**9, 10**9, {"state": _state((120.0, 0.0, 50.0))})
    m = out.message
    assert not m.validity.valid and m.validity.reason == common_pb2.REFUSAL_REASON_OUT_OF_RANGE
    assert m.validity.detail == "slant range 130.0 m > max range 100 m"
    assert m.true_range_m == pytest.approx(math.hypot(120, 50)) and m.range_m == 0.0
    assert m.true_elevation_rad == pytest.approx(-math.atan2(50, 120))
    (out,) = host.step(2 * 10**9, 10**9, {"state": _state((10.0, 0.0, -1.0))})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE
    (out,) = host.step(3 * 10**9, 10**9, {"state": _state((30.0, 40.0, 20.0))})
    m = out.message
    assert m.validity.valid and m.header.sim_time_ns == 3 * 10**9 and m.header.frame_id == "usbl"
    assert m.range_m == pytest.approx(math.sqrt(30**2 + 40**2 + 20**2), abs=1.0)
    assert m.position_covariance.n == 3 and len(m.position_covariance.values) == 9


def test_same_seed_identical_one_by_one_and_in_a_batch():
    model = UsblModel(max_range_m=60.0, dropout_probability=0.1, mount=Mount((0.3, 0.0, 0.2)))
    t = np.arange(100) * 0.1
    truth = [trajectory(x) for x in t]
    pos, quat = np.array([p for p, _ in truth]), np.array([q for _, q in truth])
    batch = usbl_measure(model, KeyedNoise(5, "usbl"), 40, pos, quat)
    noise = KeyedNoise(5, "usbl")
    for i in range(len(t)):
        one = usbl_measure(model, noise, 40 + i, pos[i:i + 1], quat[i:i + 1])
        assert one.reason[0] == batch.reason[i]
        for a, b in ((one.range_m, batch.range_m), (one.azimuth_rad, batch.azimuth_rad),
                     (one.elevation_rad, batch.elevation_rad), (one.position_m, batch.position_m),
                     (one.covariance, batch.covariance)):
            np.testing.assert_array_equal(a[0], b[i])
    assert len(set(batch.reason.tolist())) == 4  # valid, dropout, above surface, out of range


def test_same_seed_identical_in_another_process(tmp_path):
    params = dict(max_range_m=30.0, mount_xyz_m=(0.3, 0.0, 0.2), transceiver_ned_m=(25.0, 2.0, 5.0))
    msgs = run_sensor_in_process(tmp_path, "sensors.usbl", "usbl", params, seed=9)
    assert len(msgs) == 60
    model = UsblModel(max_range_m=30.0, mount=Mount((0.3, 0.0, 0.2)), transceiver_ned_m=(25.0, 2.0, 5.0))
    t = np.array([m.header.sim_time_ns for m in msgs]) * 1e-9
    truth = [trajectory(x) for x in t]
    s = usbl_measure(model, KeyedNoise(9, "dut"), 0, np.array([p for p, _ in truth]),
                     np.array([q for _, q in truth]))
    assert 0 < s.valid.sum() < len(msgs)
    for i, m in enumerate(msgs):
        assert m.validity.valid == s.valid[i] and m.validity.reason == s.reason[i]
        assert m.true_range_m == s.true_range_m[i]
        if m.validity.valid:
            assert (m.range_m, m.bearing_rad, m.elevation_rad) == (
                s.range_m[i], s.azimuth_rad[i], s.elevation_rad[i])
            assert [m.position_m.x, m.position_m.y, m.position_m.z] == s.position_m[i].tolist()
            assert list(m.position_covariance.values) == s.covariance[i].ravel().tolist()


def test_parameter_errors():
    with pytest.raises(ParameterError):
        _host(max_range_m=0.0)
    with pytest.raises(ParameterError):
        _host(transceiver_ned_m=(1.0, 2.0))
