"""Magnetometer: the IGRF tilted dipole against an independent Cartesian dipole, the
measurement equation m = S (R_bsᵀ R_wbᵀ b_ned) + b_hard + b_dist + noise against an
independent rotation library, noise statistics, disturbances; same seed => identical
samples one by one, in a batch and in another process."""

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
from moonpool.components.sensors.magnetometer import (MagnetometerModel, MagnetometerSensor,
                                                       declared_field_ned, dipole_field_ned,
                                                       magnetometer_measure)
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, vehicle_pb2

from navsensor_sources import run_sensor_in_process, thruster_currents, trajectory

LEVEL = np.array([1.0, 0.0, 0.0, 0.0])


def _cartesian_dipole_ned(lat_deg, lon_deg, h, g10, g11, h11):
    """Independent reference: the field of a centred dipole, written in Earth-fixed
    Cartesian coordinates, B = (a/r)³ (3 (m·r̂) r̂ − m) with m = (g11, h11, g10), then
    projected on the geodetic north/east/down axes."""
    a_wgs, f = 6378137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    n_rad = a_wgs / math.sqrt(1 - e2 * math.sin(lat) ** 2)
    x = np.array([(n_rad + h) * math.cos(lat) * math.cos(lon),
                  (n_rad + h) * math.cos(lat) * math.sin(lon),
                  (n_rad * (1 - e2) + h) * math.sin(lat)])
    r = np.linalg.norm(x)
    rh = x / r
    m = np.array([g11, h11, g10])
    b = (6371200.0 / r) ** 3 * (3 * m.dot(rh) * rh - m)
    north = np.array([-math.sin(lat) * math.cos(lon), -math.sin(lat) * math.sin(lon), math.cos(lat)])
    east = np.array([-math.sin(lon), math.cos(lon), 0.0])
    down = -np.array([math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)])
    return np.array([b.dot(north), b.dot(east), b.dot(down)])


@pytest.mark.parametrize("lat,lon,h", [(45.0, 0.0, 0.0), (45.0, 0.0, -6000.0), (-33.9, 18.4, 0.0),
                                       (78.0, -100.0, 500.0), (0.0, 170.0, -4000.0)])
def test_dipole_matches_an_independent_cartesian_dipole(lat, lon, h):
    # IGRF-14 degree 1 at 2027.5: 2.5 years of secular variation after 2025.0
    g10, g11, h11 = -29350.0 + 12.6 * 2.5, -1410.3 + 10.0 * 2.5, 4545.5 - 21.5 * 2.5
    ref = _cartesian_dipole_ned(lat, lon, h, g10, g11, h11)
    got = dipole_field_ned(lat, lon, h, 2027.5)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6 * np.linalg.norm(ref))


def test_dipole_at_45_degrees_is_plausible():
    b = dipole_field_ned(45.0, 0.0, 0.0, 2025.0)
    f = np.linalg.norm(b)
    incl = math.degrees(math.atan2(b[2], math.hypot(b[0], b[1])))
    decl = math.degrees(math.atan2(b[1], b[0]))
    # the real field there (IGRF, full degree) is about 46,000 nT, I ≈ 61°, D ≈ +2°;
    # the dipole alone gets |B| within a few thousand nT and I within a few degrees,
    # but its declination is about -13° (documented limit of the dipole)
    assert 42_000 < f < 52_000 and 58 < incl < 68 and -15 < decl < -10
    # field is weaker deeper (1/r³): 6,000 m down is 0.28 % stronger in |B| (r smaller)
    deeper = np.linalg.norm(dipole_field_ned(45.0, 0.0, -6000.0, 2025.0))
    assert deeper / f == pytest.approx((6367.5 / (6367.5 - 6.0)) ** 3, rel=2e-4)
    # IGRF-13 and -14 dipoles agree within ~0.3 % at 2025
    b13 = dipole_field_ned(45.0, 0.0, 0.0, 2025.0, "igrf13_dipole")
    assert np.linalg.norm(b13 - b) / f < 0.005


def test_declared_field():
    b = declared_field_ned(10.0, 60.0, 50_000.0)
    assert np.linalg.norm(b) == pytest.approx(50_000.0)
    assert math.degrees(math.atan2(b[1], b[0])) == pytest.approx(10.0)
    assert math.degrees(math.asin(b[2] / 50_000.0)) == pytest.approx(60.0)


def _equation_model(**kw):
    S = (1.05, 0.03, -0.02, 0.01, 0.97, 0.04, -0.03, 0.02, 1.02)
    return MagnetometerModel(field_model="declared", declared_declination_deg=5.0,
                             declared_inclination_deg=62.0, declared_intensity_nt=47_000.0,
                             hard_iron_nt=(800.0, -300.0, 150.0), soft_iron=S,
                             current_coefficient_nt_per_a=(20.0, -10.0, 5.0),
                             disturbances=((1.0, 2.0, 1000.0, 0.0, -500.0),),
                             mount=Mount((0.2, 0.1, 0.0), (0.0, 0.1, math.pi / 2)), **kw)


def test_measurement_equation_against_an_independent_rotation():
    model = _equation_model(noise_nt=0.0)
    t = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    rpy = np.array([[0.3, -0.2, 2.0], [0.0, 0.0, 0.0], [1.0, 0.5, -1.0], [-0.4, 0.2, 0.1],
                    [0.0, 1.2, 3.0]])
    quats = np.array([quat_from_euler(*e) for e in rpy])
    current = np.array([0.0, 10.0, 4.0, 2.0, 1.0])
    s = magnetometer_measure(model, KeyedNoise(0, "m"), 0, t, np.zeros((5, 3)), quats, current)
    b_ned = declared_field_ned(5.0, 62.0, 47_000.0)
    R_wb = Rotation.from_euler("ZYX", rpy[:, ::-1])
    R_bs = Rotation.from_euler("ZYX", [math.pi / 2, 0.1, 0.0])
    true = (R_wb * R_bs).inv().apply(b_ned)
    np.testing.assert_allclose(s.true_field_nt, true, atol=1e-8)
    window = ((t >= 1.0) & (t < 2.0))[:, None] * np.array([1000.0, 0.0, -500.0])
    expected = (true @ np.reshape(model.soft_iron, (3, 3)).T + [800.0, -300.0, 150.0]
                + current[:, None] * [20.0, -10.0, 5.0] + window)
    np.testing.assert_allclose(s.field_nt, expected, atol=1e-8)
    # level, heading north, no mount rotation, no distortion: the field is b_ned itself
    plain = MagnetometerModel(field_model="declared", declared_declination_deg=5.0,
                              declared_inclination_deg=62.0, declared_intensity_nt=47_000.0,
                              noise_nt=0.0)
    s = magnetometer_measure(plain, KeyedNoise(0, "m"), 0, 0.0, [[0, 0, 0]], [LEVEL])
    np.testing.assert_allclose(s.field_nt[0], b_ned, atol=1e-9)


def test_noise_statistics():
    model = MagnetometerModel(noise_nt=150.0)
    n = 20_000
    s = magnetometer_measure(model, KeyedNoise(4, "mag"), 0, np.zeros(n), np.zeros((n, 3)),
                             np.tile(LEVEL, (n, 1)))
    err = s.field_nt - s.true_field_nt
    np.testing.assert_allclose(err.std(axis=0), 150.0, rtol=0.03)
    np.testing.assert_allclose(err.mean(axis=0), 0.0, atol=4 * 150 / math.sqrt(n))


def _truth(t):
    truth = [trajectory(x) for x in t]
    return np.array([p for p, _ in truth]), np.array([q for _, q in truth])


def test_same_seed_identical_one_by_one_and_in_a_batch():
    model = _equation_model(noise_nt=80.0)
    t = np.arange(150) * 0.05
    pos, quat = _truth(t)
    cur = np.array([sum(thruster_currents(x)) for x in t])
    batch = magnetometer_measure(model, KeyedNoise(5, "mag"), 17, t, pos, quat, cur)
    noise = KeyedNoise(5, "mag")
    for i in range(len(t)):
        one = magnetometer_measure(model, noise, 17 + i, t[i], pos[i:i + 1], quat[i:i + 1], cur[i])
        np.testing.assert_array_equal(one.field_nt[0], batch.field_nt[i])
        np.testing.assert_array_equal(one.true_field_nt[0], batch.true_field_nt[i])
    other = magnetometer_measure(model, KeyedNoise(6, "mag"), 17, t, pos, quat, cur)
    assert not np.array_equal(other.field_nt, batch.field_nt)


def _host(**params):
    host = ComponentHost(MagnetometerSensor())
    values = []
    for k, v in params.items():
        if isinstance(v, tuple):
            pv = lc.ParameterValue(double_array=lc.DoubleArray(values=v))
        elif isinstance(v, str):
            pv = lc.ParameterValue(string_value=v)
        else:
            pv = lc.ParameterValue(double_value=v)
        values.append(lc.NamedParameter(name=k, value=pv))
    host.configure(lc.Configure(instance_name="mag", seed=3, parameters=values))
    host.initialize(0)
    return host


def test_component_uses_thruster_current_and_stamps_the_sample_time():
    host = _host(current_coefficient_nt_per_a=(10.0, 0.0, 0.0), noise_nt=0.0)
    (out,) = host.step(0, 10**8, {})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    st = vehicle_pb2.VehicleState()
    st.orientation.w = 1.0
    fb = vehicle_pb2.ThrusterFeedback()
    for c in (3.0, 4.5):
        fb.thrusters.add(current_a=c)
    (out,) = host.step(10**8, 10**8, {"state": st, "thrusters": fb})
    m = out.message
    assert m.validity.valid and m.header.sim_time_ns == 10**8 and m.header.frame_id == "mag"
    assert m.field_nt.x - m.true_field_nt.x == pytest.approx(75.0)
    assert m.field_nt.z == m.true_field_nt.z > 0  # northern hemisphere: the field points down
    (out,) = host.step(2 * 10**8, 10**8, {"state": st})  # no thruster input: no disturbance
    assert out.message.field_nt.x == out.message.true_field_nt.x


def test_latency_delays_publication():
    host = _host(latency_s=0.2, noise_nt=0.0)
    st = vehicle_pb2.VehicleState()
    st.orientation.w = 1.0
    assert host.step(0, 10**8, {"state": st}) == []
    outs = [host.step(k * 10**8, 10**8, {"state": st}) for k in range(1, 5)]
    stamps = [o[0].message.header.sim_time_ns for o in outs if o]
    assert stamps == [0, 10**8, 2 * 10**8]


def test_same_seed_identical_in_another_process(tmp_path):
    S = (1.05, 0.03, -0.02, 0.01, 0.97, 0.04, -0.03, 0.02, 1.02)
    params = dict(hard_iron_nt=(800.0, -300.0, 150.0), soft_iron=S,
                  current_coefficient_nt_per_a=(20.0, -10.0, 5.0),
                  disturbances=(1.0, 2.0, 1000.0, 0.0, -500.0), mount_xyz_m=(0.2, 0.1, 0.0),
                  mount_rpy_rad=(0.0, 0.1, 1.5), origin_latitude_deg=60.0,
                  origin_longitude_deg=5.0)
    msgs = run_sensor_in_process(tmp_path, "sensors.magnetometer", "magnetometer", params,
                                 seed=21, thrusters=True)
    assert len(msgs) == 60
    model = MagnetometerModel(hard_iron_nt=(800.0, -300.0, 150.0), soft_iron=S,
                              current_coefficient_nt_per_a=(20.0, -10.0, 5.0),
                              disturbances=((1.0, 2.0, 1000.0, 0.0, -500.0),),
                              mount=Mount((0.2, 0.1, 0.0), (0.0, 0.1, 1.5)),
                              origin_latitude_deg=60.0, origin_longitude_deg=5.0)
    t_ns = np.array([m.header.sim_time_ns for m in msgs])
    t = t_ns * 1e-9
    pos, quat = _truth(t)
    cur = np.array([sum(thruster_currents(x)) for x in t])
    s = magnetometer_measure(model, KeyedNoise(21, "dut"), 0, t, pos, quat, cur)
    for i, m in enumerate(msgs):
        assert m.validity.valid and m.header.seq == i
        assert [m.field_nt.x, m.field_nt.y, m.field_nt.z] == s.field_nt[i].tolist()
        assert [m.true_field_nt.x, m.true_field_nt.y, m.true_field_nt.z] == s.true_field_nt[i].tolist()


def test_parameter_errors():
    with pytest.raises(ParameterError):
        _host(field_model="wmm2045")
    with pytest.raises(ParameterError):
        _host(soft_iron=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
    with pytest.raises(ParameterError):
        _host(disturbances=(0.0, 1.0, 5.0))


def test_igrf14_field_from_ppigrf_in_ned():
    """The default field model: the full IGRF-14 (ppigrf), turned from its east/north/up
    components into NED. Checked against the physics we know: field down in the north,
    up in the south, and the declination in western Europe close to 0 (≈ +1.5° at
    45° N 0° E in 2025, where the dipole alone says about -13°)."""
    import ppigrf
    import datetime

    from moonpool.components.sensors.magnetometer import igrf_field_ned

    b = igrf_field_ned(45.0, 0.0, 2025.0)
    be, bn, bu = ppigrf.igrf(0.0, 45.0, 0.0, datetime.datetime(2025, 1, 1))
    assert np.allclose(b, [np.ravel(bn)[0], np.ravel(be)[0], -np.ravel(bu)[0]])
    declination = np.degrees(np.arctan2(b[1], b[0]))
    assert 0.0 < declination < 3.0
    assert 44_000 < np.linalg.norm(b) < 50_000 and b[2] > 0
    south = igrf_field_ned(-45.0, 147.0, 2025.0)  # Tasmania: field points up
    assert south[2] < 0
    assert MagnetometerModel().field_model == "igrf14"
