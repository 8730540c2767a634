"""Pressure sensor (components/sensors/pressure.py) against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.environment import WaterColumn
from moonpool.components.sensors.pressure import PressureModel, PressureParams, PressureSensor
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, vehicle_pb2

G0 = 9.80665
P0 = 101_325.0
# Seed 000's pycnocline (profile hadal_small): +0.3 % over the first 1000 m.
HADAL = dict(rho_surface=1025.0, pycnocline_depth=500.0, pycnocline_width=1000.0,
             pycnocline_delta_rho=3.075)


def rho_ref(z: float, rho_surface, pycnocline_depth, pycnocline_width, pycnocline_delta_rho):
    """Density profile written independently: linear ramp of the FMU."""
    top = pycnocline_depth - pycnocline_width / 2
    frac = min(max((z - top) / pycnocline_width, 0.0), 1.0)
    return rho_surface + pycnocline_delta_rho * frac


def closed_form_ref(d: float) -> float:
    """p(d) for the hadal profile by hand: ramp 0..1000 m, uniform below."""
    r0, dr, w = 1025.0, 3.075, 1000.0
    if d <= w:
        return P0 + G0 * (r0 * d + dr * d * d / (2 * w))
    return P0 + G0 * (r0 * d + dr * (w / 2 + (d - w)))


def level(n: int, depth) -> tuple[np.ndarray, np.ndarray]:
    pos = np.zeros((n, 3))
    pos[:, 2] = depth
    return pos, np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))


def test_pressure_at_6000_m_matches_integral_within_1_pa():
    water = WaterColumn(**HADAL)
    model = PressureModel(PressureParams(noise_pa=0.0, resolution_pa=0.0), water)
    pos, q = level(1, 6000.0)
    p_model = model.measure(pos, q).true_pressure_pa[0]
    integral, err = quad(lambda z: rho_ref(z, **HADAL) * G0, 0.0, 6000.0, points=[0.0, 1000.0],
                         epsabs=1e-6, limit=200)
    p_quad = P0 + integral
    p_closed = closed_form_ref(6000.0)
    print(f"6000 m: model {p_model:.4f} Pa, quad {p_quad:.4f} Pa, closed form {p_closed:.4f} Pa, "
          f"|model - quad| = {abs(p_model - p_quad):.2e} Pa")
    assert abs(p_model - p_quad) < 1.0
    assert abs(p_model - p_closed) < 1.0
    assert abs(p_quad - p_closed) < 1.0
    # the pycnocline matters at this level of agreement: uniform water is 166 kPa off
    uniform = P0 + 1025.0 * G0 * 6000.0
    assert abs(p_model - uniform) > 1e4


@pytest.mark.parametrize("depth", [0.0, 3.0, 499.0, 500.0, 999.9, 1000.0, 1234.5])
def test_profile_matches_quadrature_at_many_depths(depth):
    model = PressureModel(PressureParams(noise_pa=0.0, resolution_pa=0.0), WaterColumn(**HADAL))
    p = model.measure(*level(1, depth)).true_pressure_pa[0]
    integral, _ = quad(lambda z: rho_ref(z, **HADAL) * G0, 0.0, depth, points=[1000.0]) \
        if depth > 0 else (0.0, 0.0)
    assert p == pytest.approx(P0 + integral, abs=1e-3)


def test_lever_arm_sets_the_sensor_depth():
    # pitched up 30 deg: a sensor 1 m forward is 0.5 m shallower (NED z = -sin(pitch) * x)
    model = PressureModel(PressureParams(noise_pa=0.0, resolution_pa=0.0), WaterColumn(),
                          Mount((1.0, 0.0, 0.0)))
    q = quat_from_euler(0.0, math.radians(30), 0.7)[None]
    b = model.measure(np.array([[3.0, 4.0, 10.0]]), q)
    assert b.true_depth_m[0] == pytest.approx(9.5, abs=1e-12)
    assert b.true_pressure_pa[0] == pytest.approx(P0 + 1025.0 * G0 * 9.5, abs=1e-6)


def test_refused_above_surface_and_beyond_full_scale():
    model = PressureModel(PressureParams(full_scale_pa=2e6), WaterColumn(), Mount((0, 0, -0.2)))
    b = model.measure(*level(4, np.array([0.1, 0.3, 100.0, 300.0])))
    assert list(b.reason) == [common_pb2.REFUSAL_REASON_ABOVE_SURFACE, 0, 0,
                              common_pb2.REFUSAL_REASON_SATURATED]
    assert np.isnan(b.pressure_pa[[0, 3]]).all() and np.isfinite(b.pressure_pa[[1, 2]]).all()
    assert b.true_depth_m[0] == pytest.approx(-0.1)
    assert b.true_pressure_pa[0] == P0  # truth always filled


def test_bias_noise_quantization_statistics():
    n = 20000
    model = PressureModel(PressureParams(noise_pa=30.0, bias_pa=120.0, resolution_pa=10.0),
                          WaterColumn(), seed=3, name="p")
    b = model.measure(*level(n, 100.0))
    err = b.pressure_pa - b.true_pressure_pa
    assert np.all(np.abs(b.pressure_pa / 10.0 - np.round(b.pressure_pa / 10.0)) < 1e-9)
    assert err.mean() == pytest.approx(120.0, abs=1.0)
    # quantization adds q^2/12 to the variance
    assert err.std() == pytest.approx(math.sqrt(30.0 ** 2 + 10.0 ** 2 / 12), rel=0.03)


def test_batch_equals_one_by_one():
    model = PressureModel(PressureParams(noise_pa=20.0), WaterColumn(**HADAL), Mount((0.1, 0, 0.3)),
                          seed=11, name="press")
    rng = np.random.default_rng(0)
    pos = np.c_[rng.normal(0, 1, (50, 2)), rng.uniform(-1, 3000, 50)]
    q = np.array([quat_from_euler(*rng.normal(0, 0.3, 3)) for _ in range(50)])
    batch = model.measure(pos, q, first=5)
    single = [model.measure(pos[i:i + 1], q[i:i + 1], first=5 + i) for i in range(50)]
    for f in ("pressure_pa", "true_pressure_pa", "true_depth_m", "reason"):
        assert np.array_equal(getattr(batch, f), np.concatenate([getattr(s, f) for s in single]),
                              equal_nan=True), f
    other = PressureModel(PressureParams(noise_pa=20.0), WaterColumn(**HADAL),
                          Mount((0.1, 0, 0.3)), seed=12, name="press").measure(pos, q, first=5)
    assert not np.array_equal(other.pressure_pa, batch.pressure_pa, equal_nan=True)


@pytest.mark.parametrize("resolution", [1.0, 0.0, 250.0])
def test_measure1_equals_measure(resolution):
    """measure1 (one sample in Python floats: the component's step) gives measure's
    values for that sample bit for bit, zeros of either sign included (-0.0 is another
    message on the wire): the sensor depth, the true and the measured pressure, the
    quantization, the refusals above the surface and beyond the full scale."""
    params = PressureParams(noise_pa=20.0, bias_pa=-3.0, resolution_pa=resolution,
                            full_scale_pa=2.5e7)
    mount = Mount((0.1, -0.2, 0.3), (0.1, 0.0, 0.2))
    a = PressureModel(params, WaterColumn(**HADAL), mount, seed=4, name="press")
    rng = np.random.default_rng(8)
    pos = np.c_[rng.normal(0, 1, (300, 2)), rng.uniform(-2, 3000, 300)]
    pos[::7, 2] = rng.uniform(2400, 2600, len(pos[::7]))  # around the full scale
    pos[::11, 2] = [(-0.0, 0.0)[i % 2] for i in range(len(pos[::11]))]
    pos[::17, 2] = -0.4  # above the surface (with the lever arm's 0.3 m)
    q = np.array([quat_from_euler(*rng.normal(0, 0.3, 3)) for _ in range(300)])
    q[::13] = [1.0, -0.0, 0.0, -0.0]
    bits = lambda v: np.float64(v).view(np.int64)  # noqa: E731
    reasons = set()
    for k in range(300):
        want = a.measure(pos[k:k + 1], q[k:k + 1], first=k)
        reason, value, true_p, depth = a.measure1(pos[k].tolist(), q[k].tolist(), k)
        assert reason == want.reason[0], k
        assert bits(true_p) == bits(want.true_pressure_pa[0]), k
        assert bits(depth) == bits(want.true_depth_m[0]), k
        assert bits(value) == bits(want.pressure_pa[0]) or (math.isnan(value) and
                                                            math.isnan(want.pressure_pa[0])), k
        reasons.add(reason)
    assert len(reasons) == 3  # valid, above the surface, saturated: every branch


def _param(name, v):
    if isinstance(v, tuple):
        return lc.NamedParameter(name=name, value=lc.ParameterValue(
            double_array=lc.DoubleArray(values=v)))
    return lc.NamedParameter(name=name, value=lc.ParameterValue(double_value=v))


def test_component_stamps_refuses_and_matches_model():
    host = ComponentHost(PressureSensor())
    host.configure(lc.Configure(instance_name="press", seed=5, parameters=[
        _param("noise_pa", 10.0), _param("mount_xyz_m", (0.0, 0.0, 0.5))]))
    host.initialize(0)
    (out,) = host.step(0, 100_000_000, {})
    assert not out.message.validity.valid
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    s = vehicle_pb2.VehicleState()
    s.orientation.w = 1.0
    s.position_ned_m.z = -1.0
    (out,) = host.step(100_000_000, 100_000_000, {"state": s})
    m = out.message
    assert m.header.sim_time_ns == 100_000_000 and m.header.frame_id == "press"
    assert m.validity.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE and m.pressure_pa == 0.0
    assert m.true_depth_m == pytest.approx(-0.5) and "above the surface" in m.validity.detail
    s.position_ned_m.z = 20.0
    (out,) = host.step(200_000_000, 100_000_000, {"state": s})
    ref = PressureModel(PressureParams(noise_pa=10.0), WaterColumn(), Mount((0, 0, 0.5)), 5,
                        "press").measure(*level(1, 20.0), first=2)
    assert out.message.validity.valid and out.message.pressure_pa == ref.pressure_pa[0]


def test_latency_delays_the_output():
    host = ComponentHost(PressureSensor())
    host.configure(lc.Configure(instance_name="press", seed=5, parameters=[
        _param("latency_s", 0.2)]))
    host.initialize(0)
    s = vehicle_pb2.VehicleState()
    s.orientation.w = 1.0
    outs = []
    for k in range(5):
        s.position_ned_m.z = 10.0 + k
        outs.append(host.step(k * 100_000_000, 100_000_000, {"state": s}))
    assert outs[0] == [] or outs[0] is None or len(outs[0]) == 0
    assert len(outs[1]) == 0
    (o,) = outs[2]
    assert o.message.header.sim_time_ns == 0 and o.message.true_depth_m == 10.0


def test_same_seed_in_another_process(tmp_path):
    from dvl_pressure_sources import run_sensor_rig, truth_arrays

    states, outs = run_sensor_rig(
        tmp_path, name="press", entry="sensors.pressure", port="pressure", seed=9, depth=-0.2,
        params='noise_pa = 25.0\nbias_pa = 3.0\nresolution_pa = 0.5\npycnocline_depth = 1.0\n'
               'pycnocline_width = 0.5\npycnocline_delta_rho = 2.0\nmount_xyz_m = [0.3, 0.0, 0.1]')
    assert len(outs) == len(states) == 30
    tr = truth_arrays(states)
    assert [o.header.sim_time_ns for o in outs] == list(tr["t_ns"])
    model = PressureModel(PressureParams(25.0, 3.0, 0.5),
                          WaterColumn(1025.0, 1.0, 0.5, 2.0), Mount((0.3, 0.0, 0.1)), 9, "press")
    b = model.measure(tr["pos"], tr["quat"], 0)
    assert (~b.valid).any() and b.valid.any()  # the source crosses the surface
    for i, o in enumerate(outs):
        assert o.validity.valid == bool(b.valid[i])
        assert o.true_pressure_pa == b.true_pressure_pa[i] and o.true_depth_m == b.true_depth_m[i]
        if b.valid[i]:
            assert o.pressure_pa == b.pressure_pa[i]
        else:
            assert o.validity.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE


def test_with_a_scene_the_sensor_is_in_the_scenes_teos10_column():
    """One water column: the pressure is the scene's (the FMU's with water_column)."""
    from pathlib import Path

    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.sdk.host import ComponentHost
    from moonpool.components.sdk.wire import to_parameter_value
    from moonpool.components.sensors.pressure import PressureSensor
    from moonpool.components.world.scene import Scene
    from moonpool.v1 import lifecycle_pb2 as lc
    from moonpool.v1 import vehicle_pb2

    scene = Path(__file__).resolve().parents[2] / "scenes/trench_floor/scene.toml"
    host = ComponentHost(PressureSensor())
    host.configure(lc.Configure(instance_name="p", seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v))
        for k, v in dict(scene=str(scene), noise_pa=0.0, resolution_pa=0.0).items()]))
    host.initialize(0)
    state = vehicle_pb2.VehicleState()
    state.position_ned_m.z = 5990.0
    state.orientation.w = 1.0
    (out,) = host.step(0, 10**8, {"state": state})
    expected = float(Scene.load(scene).environment.pressure_pa(5990.0))
    assert out.message.pressure_pa == pytest.approx(expected, abs=1e-6)
    assert out.message.true_pressure_pa == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ParameterError, match="two water columns"):
        PressureSensor.check_parameters(PressureSensor.Parameters(scene=scene,
                                                                  pycnocline_delta_rho=3.0))
