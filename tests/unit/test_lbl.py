"""LBL (components/sensors/lbl.py): trilateration exactness, DOP against an
independent geometry, travel-time noise and covariance, sound-speed bias, occlusion
through the real ray engine, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import plane_engine, sphere_engine, state
from scipy.optimize import least_squares

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.lbl import LblModel, LblParams, LblSensor, trilaterate
from moonpool.components.sensors.sound_rays import harmonic_mean_speed
from moonpool.components.world.environment import WaterColumn
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

WATER = WaterColumn(latitude_deg=45.0, surface_temperature_c=15.0, mixed_layer_depth_m=30.0,
                    thermocline_bottom_m=500.0, deep_temperature_c=5.0)
BEACONS = np.array([[-300.0, -250.0, 400.0], [350.0, -200.0, 410.0], [50.0, 380.0, 395.0],
                    [-100.0, 100.0, 405.0]])
LEVEL = np.array([1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("x", [(10.0, -20.0, 150.0), (400.0, 300.0, 380.0), (0.0, 0.0, 5.0)])
@pytest.mark.parametrize("nb", [3, 4])
def test_exact_ranges_give_the_fix_within_1e_6_m(x, nb):
    x = np.array(x)
    b = BEACONS[:nb]
    fix = trilaterate(b, np.linalg.norm(b - x, axis=1))
    assert fix.ok
    np.testing.assert_allclose(fix.position_ned_m, x, atol=1e-6, rtol=0)
    assert fix.residual_m < 1e-8


def test_dop_and_the_noisy_fix_against_an_independent_solver():
    x = np.array([30.0, 40.0, 200.0])
    H = (x - BEACONS) / np.linalg.norm(x - BEACONS, axis=1)[:, None]
    G = np.linalg.inv(H.T @ H)
    rho = np.linalg.norm(BEACONS - x, axis=1) + np.array([0.3, -0.2, 0.1, 0.25])
    fix = trilaterate(BEACONS, rho)
    ref = least_squares(lambda y: np.linalg.norm(BEACONS - y, axis=1) - rho, x + 5.0,
                        xtol=1e-15, ftol=1e-15, gtol=1e-15)
    np.testing.assert_allclose(fix.position_ned_m, ref.x, atol=1e-7)
    H2 = (fix.position_ned_m - BEACONS) / np.linalg.norm(fix.position_ned_m - BEACONS, axis=1)[:, None]
    G2 = np.linalg.inv(H2.T @ H2)
    assert fix.pdop == pytest.approx(math.sqrt(np.trace(G2)), rel=1e-9)
    assert fix.vdop == pytest.approx(math.sqrt(G2[2, 2]), rel=1e-9)
    assert fix.pdop == pytest.approx(math.sqrt(np.trace(G)), rel=1e-3)
    assert fix.hdop ** 2 + fix.vdop ** 2 == pytest.approx(fix.pdop ** 2, rel=1e-12)


def test_perfectly_compensated_model_is_exact_and_the_nominal_one_is_biased():
    x = np.array([10.0, -20.0, 150.0])
    exact = LblModel(LblParams(tuple(BEACONS.ravel()), nominal_sound_speed_mps=0.0,
                               travel_time_noise_s=0.0), WATER)
    s = exact.measure(x, LEVEL)
    assert s.reason == 0
    np.testing.assert_allclose(s.range_m, s.true_range_m, rtol=1e-13)
    np.testing.assert_allclose(s.fix.position_ned_m, x, atol=1e-6, rtol=0)
    nominal = LblModel(LblParams(tuple(BEACONS.ravel()), travel_time_noise_s=0.0), WATER)
    s = nominal.measure(x, LEVEL)
    c_h = harmonic_mean_speed(WATER.sound_speed_mps, np.full(4, 150.0), BEACONS[:, 2])
    np.testing.assert_allclose(s.range_m, s.true_range_m * 1500.0 / c_h, rtol=1e-12)
    assert np.linalg.norm(s.fix.position_ned_m - x) > 0.5  # a 1 % sound-speed error


def test_travel_time_noise_statistics_and_covariance():
    p = LblParams(tuple(BEACONS.ravel()), nominal_sound_speed_mps=0.0, travel_time_noise_s=2e-4)
    m = LblModel(p, WATER, seed=11, name="lbl")
    x = np.array([30.0, 40.0, 200.0])
    samples = [m.measure(x, LEVEL, k) for k in range(1500)]
    err = np.array([s.range_m - s.true_range_m for s in samples])
    c = np.array([s.range_m / (s.travel_time_s) for s in samples[:1]])[0]
    np.testing.assert_allclose(err.std(axis=0), c * 2e-4, rtol=0.05)
    fixes = np.array([s.fix.position_ned_m for s in samples])
    cov = np.cov((fixes - x).T)
    msg = samples[0].fill(acoustics_pb2.Lbl())
    reported = np.array(msg.position_covariance.values).reshape(3, 3)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), np.sqrt(np.diag(reported)), rtol=0.06)
    # keyed: the same cycle again gives the same ranges
    assert np.array_equal(m.measure(x, LEVEL, 17).range_m, samples[17].range_m)


def test_occlusion_by_the_scene_and_refusals():
    x = np.array([0.0, 0.0, 200.0])
    # a sphere between the vehicle and beacon 0
    mid = 0.5 * (x + BEACONS[0])
    eng = sphere_engine(mid, 10.0, subdivisions=3)
    m = LblModel(LblParams(tuple(BEACONS.ravel()), travel_time_noise_s=0.0), WATER, eng)
    s = m.measure(x, LEVEL)
    R = common_pb2
    assert list(s.range_reason) == [R.REFUSAL_REASON_NOT_DETECTED, 0, 0, 0] and s.reason == 0
    msg = s.fill(acoustics_pb2.Lbl())
    assert "blocked by the scene" in msg.ranges[0].validity.detail and msg.ranges[0].range_m == 0
    assert msg.ranges[0].true_range_m == pytest.approx(np.linalg.norm(x - BEACONS[0]))
    # beacons lying on a seabed plane are not blocked by it (margin)
    floor = plane_engine((0.0, 0.0, 400.0), (0.0, 0.0, -1.0))
    on_floor = BEACONS.copy()
    on_floor[:, 2] = 400.0
    s = LblModel(LblParams(tuple(on_floor.ravel())), WATER, floor).measure(x, LEVEL)
    assert s.reason == 0 and np.all(s.range_reason == 0)
    # out of range: beacons 0 and 1 beyond 435 m -> 2 valid ranges, no fix
    far = LblModel(LblParams(tuple(BEACONS.ravel()), max_range_m=435.0), WATER)
    s = far.measure(x, LEVEL)
    assert sum(s.range_reason == R.REFUSAL_REASON_OUT_OF_RANGE) == 2
    assert s.reason == R.REFUSAL_REASON_NO_LOCK
    msg = s.fill(acoustics_pb2.Lbl())
    assert "2 valid ranges, 3 needed" in msg.validity.detail and msg.pdop == 0.0
    up = LblModel(LblParams(tuple(BEACONS.ravel())), WATER).measure([0.0, 0.0, -1.0], LEVEL)
    assert up.reason == R.REFUSAL_REASON_ABOVE_SURFACE


def test_component_matches_the_model():
    params = dict(beacons_ned_m=tuple(BEACONS.ravel()), dropout_probability=0.3,
                  water={"surface_temperature_c": 15.0, "mixed_layer_depth_m": 30.0,
                         "thermocline_bottom_m": 500.0, "deep_temperature_c": 5.0,
                         "latitude_deg": 45.0})
    host = ComponentHost(LblSensor())
    host.configure(lc.Configure(instance_name="lbl", seed=8, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    model = LblModel(LblParams(tuple(BEACONS.ravel()), dropout_probability=0.3), WATER,
                     seed=8, name="lbl")
    seen = set()
    for k in range(12):
        (out,) = host.step(k * 10**9, 10**9, {"state": state((5.0, 6.0, 120.0))})
        ref = model.measure([5.0, 6.0, 120.0], LEVEL, k).fill(acoustics_pb2.Lbl(header=out.message.header))
        assert out.message.SerializeToString(deterministic=True) == ref.SerializeToString(
            deterministic=True)
        seen.add(out.message.validity.valid)
    assert seen == {True, False}
