"""CTD (components/sensors/ctd.py): the water column at the sensor point, against
independent values (Mackenzie's sound-speed equation, hydrostatics, fresh water at
20 °C), refusal above the surface, keyed noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from acoustic_scenes import state

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.ctd import CtdModel, CtdParams, CtdSensor
from moonpool.components.world.environment import WaterColumn
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

ROOT = Path(__file__).resolve().parents[2]
QUIET = CtdParams(temperature_noise_c=0.0, salinity_noise_psu=0.0, pressure_noise_pa=0.0)
WATER = WaterColumn(latitude_deg=45.0, surface_temperature_c=16.0, surface_salinity_psu=35.0,
                    mixed_layer_depth_m=80.0, thermocline_bottom_m=800.0, deep_temperature_c=4.0,
                    deep_salinity_psu=34.8)
LEVEL = np.array([[1.0, 0.0, 0.0, 0.0]])


def mackenzie(T, S, D):
    """Mackenzie (1981), J. Acoust. Soc. Am. 70, 807: c(T, S, D), ±0.07 m/s in its range."""
    return (1448.96 + 4.591 * T - 5.304e-2 * T ** 2 + 2.374e-4 * T ** 3 + 1.340 * (S - 35)
            + 1.630e-2 * D + 1.675e-7 * D ** 2 - 1.025e-2 * T * (S - 35) - 7.139e-13 * T * D ** 3)


def test_noise_free_readings_are_the_water_column_at_the_sensor_point():
    mount = Mount((1.0, 0.0, 0.5))
    m = CtdModel(QUIET, WATER, mount)
    pitch = math.radians(30.0)
    b = m.measure([[0.0, 0.0, 40.0]], [quat_from_euler(0.0, pitch, 0.0)])
    d = 40.0 - 1.0 * math.sin(pitch) + 0.5 * math.cos(pitch)  # lever arm turned by the pitch
    assert b.true_depth_m[0] == pytest.approx(d, abs=1e-12)
    assert b.temperature_c[0] == 16.0 and b.salinity_psu[0] == 35.0  # in the mixed layer
    assert b.pressure_pa[0] == pytest.approx(float(WATER.pressure_pa(d)), abs=1e-9)
    assert b.sound_speed_mps[0] == pytest.approx(float(WATER.sound_speed_mps(d)), abs=1e-9)
    # independent: hydrostatics and Mackenzie's equation
    # (WaterColumn takes p from gsw.p_from_z: a standard ocean at 0 °C, ρ ≈ 1028 kg/m³,
    # 0.2 % above this water's in-situ ρ ≈ 1026)
    assert b.pressure_pa[0] == pytest.approx(101325 + 1026.0 * 9.806 * d, rel=3e-3)
    assert b.sound_speed_mps[0] == pytest.approx(mackenzie(16.0, 35.0, d), abs=0.3)
    deep = m.measure([[0.0, 0.0, 2000.0]], LEVEL)
    assert deep.temperature_c[0] == 4.0 and deep.salinity_psu[0] == pytest.approx(34.8)
    assert deep.sound_speed_mps[0] == pytest.approx(mackenzie(4.0, 34.8, 2000.5), abs=0.5)


def test_refused_above_the_surface_with_truth():
    b = CtdModel(QUIET, WATER).measure([[0.0, 0.0, -0.5]], LEVEL)
    assert b.reason[0] == common_pb2.REFUSAL_REASON_ABOVE_SURFACE
    msg = b.fill(0, acoustics_pb2.Ctd())
    assert not msg.validity.valid and "0.500 m above the surface" in msg.validity.detail
    assert msg.temperature_c == 0.0 and msg.true_depth_m == -0.5 and msg.true_temperature_c == 16.0


def test_keyed_noise_statistics_bias_and_batch_equals_one_by_one():
    p = CtdParams(temperature_noise_c=0.01, temperature_bias_c=0.05, salinity_noise_psu=0.02,
                  pressure_noise_pa=200.0)
    m = CtdModel(p, WATER, seed=3, name="ctd")
    n = 20000
    b = m.measure(np.tile([0.0, 0.0, 500.0], (n, 1)), np.tile(LEVEL, (n, 1)))
    for f, sd, bias in (("temperature_c", 0.01, 0.05), ("salinity_psu", 0.02, 0.0),
                        ("pressure_pa", 200.0, 0.0)):
        err = getattr(b, f) - getattr(b, "true_" + f)
        assert abs(err.std() / sd - 1) < 0.03, f
        assert abs(err.mean() - bias) < 4 * sd / math.sqrt(n), f
    # sound speed from the measured T, S, p: dc/dT ~ 3 m/s/°C at 500 m and 10 °C
    dc = b.sound_speed_mps - b.true_sound_speed_mps
    assert 2.0 < np.mean(dc) / 0.05 < 4.5
    one = np.concatenate([m.measure([[0.0, 0.0, 500.0]], LEVEL, k).temperature_c for k in range(20)])
    assert np.array_equal(one, b.temperature_c[:20])


def _cfg(name, seed, **params):
    return lc.Configure(instance_name=name, seed=seed, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()])


def test_component_in_the_pool_scene_fresh_water_at_20_c():
    host = ComponentHost(CtdSensor())
    host.configure(_cfg("ctd", 1, scene=str(ROOT / "scenes" / "pool" / "scene.toml"),
                        temperature_noise_c=0.0, salinity_noise_psu=0.0, pressure_noise_pa=0.0))
    host.initialize(0)
    (out,) = host.step(0, 10**8, {"state": state((0.0, 0.0, 1.0))})
    msg = out.message
    assert msg.validity.valid and msg.salinity_psu == 0.0 and msg.temperature_c == 20.0
    # fresh water at 20 °C and ~1 m: 1482.3 m/s (Del Grosso & Mader 1972; Bilaniuk & Wong 1993)
    assert msg.sound_speed_mps == pytest.approx(1482.3, abs=0.3)
    # hydrostatic fresh water would be 101325 + 998.2 · 9.780 · 1 m; WaterColumn's
    # gsw.p_from_z assumes standard seawater (ρ ≈ 1028), 3 % more gauge pressure here
    # (reported to the world package: fresh water needs ∫ρ g dz)
    assert msg.pressure_pa == pytest.approx(101325 + 998.2 * 9.780 * 1.0, rel=3e-3)


def test_component_with_a_water_table_matches_the_model():
    water = {"surface_temperature_c": 10.0, "surface_salinity_psu": 34.0, "latitude_deg": 60.0}
    host = ComponentHost(CtdSensor())
    host.configure(_cfg("ctd", 5, water=water))
    host.initialize(0)
    model = CtdModel(CtdParams(), WaterColumn(**water), seed=5, name="ctd")
    for k in range(3):
        (out,) = host.step(k * 10**8, 10**8, {"state": state((0.0, 0.0, 10.0 + k))})
        ref = model.measure([[0.0, 0.0, 10.0 + k]], LEVEL, k).fill(
            0, acoustics_pb2.Ctd(header=out.message.header))
        assert out.message.SerializeToString(deterministic=True) == ref.SerializeToString(
            deterministic=True)


def test_the_water_table_reads_like_a_scene_files_water_table(tmp_path):
    from acoustic_scenes import write_flat_scene

    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.sensors.acoustic import water_column
    from moonpool.components.world.scene import Scene

    text = ("surface_temperature_c = 11.0\nmixed_layer_depth_m = 15.0\n"
            "thermocline_bottom_m = 300.0\ndeep_temperature_c = 3.5\n"
            "current_profile = [[0.0, 0.3, 0.0, 0.0], [100.0, 0.1, 0.1, 0.0]]")
    scene_water = Scene.load(write_flat_scene(tmp_path, water=text)).environment
    table = {"surface_temperature_c": 11.0, "mixed_layer_depth_m": 15.0,
             "thermocline_bottom_m": 300.0, "deep_temperature_c": 3.5,
             "current_profile": [[0.0, 0.3, 0.0, 0.0], [100.0, 0.1, 0.1, 0.0]],
             "latitude_deg": 45.0}
    assert water_column(table, "ctd") == scene_water
    with pytest.raises(ParameterError, match="current_profile rows"):
        water_column({"current_profile": [[0.0, 0.3]]}, "ctd")
