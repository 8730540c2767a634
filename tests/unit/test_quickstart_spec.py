"""The quickstart pressure sensor does exactly what its docstring specifies (so a twin in
another language can be written from docs/reference/components.md): an independent
implementation of the seven steps, byte for byte equal over depths that are missing,
negative, zero, positive, and rounding ties."""

from __future__ import annotations

from moonpool.components.quickstart import PressureSensor
from moonpool.components.sdk import KeyedNoise, wire
from moonpool.components.sdk.host import ComponentHost
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, sensors_pb2, vehicle_pb2

G = 9.80665


def _from_the_docstring(k, z_depth, t_ns, seed, name, noise_pa, bias_pa, res, mount, p_atm, rho):
    msg = sensors_pb2.Pressure()
    msg.header.sim_time_ns, msg.header.frame_id = t_ns, name
    if z_depth is None:
        msg.validity.reason = common_pb2.REFUSAL_REASON_NOT_READY
        msg.validity.detail = "no vehicle state received yet"
        return msg
    d = z_depth + mount
    msg.true_pressure_pa = p_atm + rho * G * max(d, 0.0)
    msg.true_depth_m = d
    if d < 0:
        msg.validity.reason = common_pb2.REFUSAL_REASON_ABOVE_SURFACE
        msg.validity.detail = f"sensor {-d:.3f} m above the surface"
        return msg
    p = msg.true_pressure_pa + bias_pa + noise_pa * float(KeyedNoise(seed, name).normal(k, "pressure"))
    if res > 0:
        p = round(p / res) * res
    msg.pressure_pa = p
    msg.validity.valid = True
    return msg


def test_the_pressure_sensor_is_its_specification():
    params = dict(noise_pa=20.0, bias_pa=3.5, resolution_pa=2.0, mount_z_m=0.1,
                  atmospheric_pa=101_000.0, water_density_kgpm3=1020.0)
    host = ComponentHost(PressureSensor())
    host.configure(lc.Configure(instance_name="p", seed=12345, parameters=[
        lc.NamedParameter(name=n, value=wire.to_parameter_value(v)) for n, v in params.items()]))
    host.initialize(0)
    depths = [None, -0.5, -0.1, 0.0, 0.25, 1.0, 3.7, None]
    held = None
    for k, z in enumerate(depths):
        t = k * 10_000_000
        inputs = {}
        if z is not None:
            held = vehicle_pb2.VehicleState()
            held.position_ned_m.z = z
        if held is not None:
            inputs["state"] = held  # sample and hold: the last state again at the end
        (out,) = host.step(t, 10_000_000, inputs)
        got = sensors_pb2.Pressure.FromString(out.payload)
        want = _from_the_docstring(k, held.position_ned_m.z if held is not None else None, t,
                                   12345, "p", *params.values())
        got.header.ClearField("source"), got.header.ClearField("seq")
        assert got.SerializeToString(deterministic=True) == \
            want.SerializeToString(deterministic=True), (k, z, got, want)


def test_quantization_ties_go_to_even():
    # 101_001 Pa with 2 Pa resolution is the tie 50_500.5 steps: Python's round -> 50_500.
    assert round(101_001.0 / 2.0) * 2.0 == 101_000.0
    assert round(101_003.0 / 2.0) * 2.0 == 101_004.0
