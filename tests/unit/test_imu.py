"""IMU (components/sensors/imu.py): specific force at rest and level, the centripetal
term of a lever arm, the mount rotation, keyed determinism (one by one = one batch =
another process), truth fields, refusals and parameter checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from imu_sources import make_state
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.frames import quat_from_euler, rot_from_euler
from moonpool.components.sensors.common import G, Mount
from moonpool.components.sensors.imu import (ImuModel, ImuModelParams, ImuSensor,
                                              specific_force_and_rate)
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, vehicle_pb2

MS = 1_000_000
DT = 0.01


def _truth(n=1, rpy=(0, 0, 0), vel=(0, 0, 0), omega=(0, 0, 0), accel=(0, 0, 0), omega_dot=(0, 0, 0)):
    rows = lambda v: np.tile(np.asarray(v, dtype=float), (n, 1))  # noqa: E731
    return (rows(quat_from_euler(*rpy)), rows(vel), rows(omega), rows(accel), rows(omega_dot))


def test_at_rest_and_level_specific_force_is_minus_g():
    f, w = specific_force_and_rate(*_truth())
    assert np.allclose(f, [[0.0, 0.0, -G]], atol=1e-12) and np.allclose(w, 0.0)
    # Noise-free model: the measurement equals the truth exactly.
    out = ImuModel(ImuModelParams.ideal(), DT, 1, "imu").run(f, w)
    assert np.array_equal(out["accel"], [[0.0, 0.0, -G]]) and np.array_equal(out["gyro"], w)


def test_tilted_at_rest_sees_gravity_in_body_axes():
    roll, pitch = 0.3, -0.2
    f, _ = specific_force_and_rate(*_truth(rpy=(roll, pitch, 1.0)))
    R = rot_from_euler(roll, pitch, 1.0)
    assert np.allclose(f[0], -R.T @ [0, 0, G], atol=1e-12)
    assert np.linalg.norm(f[0]) == pytest.approx(G)


def test_spinning_with_lever_arm_shows_centripetal_term():
    omega = np.array([0.2, -0.4, 1.5])
    r = np.array([0.5, -0.3, 0.2])
    f, w = specific_force_and_rate(*_truth(omega=omega), Mount(tuple(r)))
    centripetal = np.cross(omega, np.cross(omega, r))  # independent: written out below too
    expected = centripetal + np.array([0.0, 0.0, -G])
    assert np.allclose(f[0], expected, atol=1e-12)
    # Closed form of ω×(ω×r) = ω(ω·r) − r|ω|²
    assert np.allclose(centripetal, omega * omega.dot(r) - r * omega.dot(omega))
    assert np.allclose(w[0], omega)
    # Pure yaw spin, arm along x: centripetal acceleration −ω²r towards the axis.
    f2, _ = specific_force_and_rate(*_truth(omega=(0, 0, 2.0)), Mount((0.5, 0, 0)))
    assert np.allclose(f2[0], [-4.0 * 0.5, 0.0, -G])


def test_euler_and_transport_terms_and_mount_rotation():
    vel, omega, od, acc = [1.0, 0.2, 0.1], [0.0, 0.1, 0.3], [0.5, -0.2, 0.1], [0.3, 0.0, -0.1]
    r, rpy = np.array([0.1, 0.2, -0.3]), (0.1, -0.4, 2.0)
    f, w = specific_force_and_rate(*_truth(vel=vel, omega=omega, omega_dot=od, accel=acc),
                                   Mount(tuple(r), rpy))
    a = (np.array(acc) + np.cross(omega, vel) + np.cross(od, r)
         + np.cross(omega, np.cross(omega, r)))
    R_bs = rot_from_euler(*rpy)
    assert np.allclose(f[0], R_bs.T @ (a - [0, 0, G]), atol=1e-12)
    assert np.allclose(w[0], R_bs.T @ omega)


def test_scale_misalignment_applied():
    p = ImuModelParams.mems()
    ideal = ImuModelParams.ideal()
    params = ImuModelParams(
        gyro=type(ideal.gyro)(**{**ideal.gyro.__dict__, "scale_factor": p.gyro.scale_factor,
                                 "misalignment": p.gyro.misalignment}),
        accel=ideal.accel)
    w = np.array([[0.5, -0.2, 1.0]])
    out = ImuModel(params, DT, 0, "imu").run(np.zeros((1, 3)), w)
    M = np.eye(3) + np.diag(p.gyro.scale_factor)
    (xy, xz, yx, yz, zx, zy) = p.gyro.misalignment
    M += np.array([[0, xy, xz], [yx, 0, yz], [zx, zy, 0]])
    assert np.allclose(out["gyro"][0], M @ w[0], atol=1e-15)


def test_quantization_and_clipping():
    p = ImuModelParams.mems()
    out = ImuModel(p, DT, 3, "imu").run(np.tile([0, 0, -G], (500, 1)), np.zeros((500, 3)))
    for key in ("gyro", "accel"):
        lsb = getattr(p, key).lsb
        q = out[key] / lsb
        assert np.allclose(q, np.round(q), atol=1e-6)
    big = ImuModel(p, DT, 3, "imu").run([[0.0, 0.0, -20 * G]], [[0.0, 0.0, 30.0]])
    assert big["accel"][0, 2] == -p.accel.range and big["gyro"][0, 2] == p.gyro.range
    assert big["accel_saturated"][0] and big["gyro_saturated"][0]


def test_temperature_and_vibration():
    p = ImuModelParams.ideal()
    tri = type(p.gyro)(**{**p.gyro.__dict__, "temperature_coeff": (1e-3, 2e-3, -1e-3),
                          "vibration_amplitude": 0.0, "vibration_per_radps": 1e-4})
    params = ImuModelParams(gyro=tri, accel=p.accel, vibration_freqs_hz=(10.0,))
    n = 1000
    m = ImuModel(params, DT, 5, "imu")
    out = m.run(np.zeros((n, 3)), np.zeros((n, 3)), temperature_c=35.0, thruster_speed=100.0)
    assert np.allclose(out["gyro_bias"], [[1e-2, 2e-2, -1e-2]])
    vib = out["gyro"] - out["gyro_bias"]
    # One sinusoid of amplitude A1·s̄ = 1e-2 at 10 Hz: RMS A/√2 over whole periods.
    assert np.allclose(np.sqrt(np.mean(vib**2, axis=0)), 1e-2 / math.sqrt(2), rtol=1e-6)
    spec = np.abs(np.fft.rfft(vib[:, 0]))
    assert np.argmax(spec) == round(10.0 * n * DT)


def test_same_seed_one_by_one_equals_batch():
    p = ImuModelParams.mems()
    n = 600
    f = np.tile([0.1, -0.2, -G], (n, 1)) + np.linspace(0, 1, n)[:, None]
    w = np.tile([0.01, 0.02, -0.03], (n, 1))
    temp = 20.0 + 0.01 * np.arange(n)
    speed = np.linspace(0, 200, n)
    batch = ImuModel(p, DT, 42, "imu").run(f, w, temp, speed)
    m = ImuModel(p, DT, 42, "imu")
    singles = [m.run(f[i:i + 1], w[i:i + 1], temp[i], speed[i]) for i in range(n)]
    m2 = ImuModel(p, DT, 42, "imu")
    halves = [m2.run(f[:250], w[:250], temp[:250], speed[:250]),
              m2.run(f[250:], w[250:], temp[250:], speed[250:])]
    for key in batch:
        assert np.array_equal(batch[key], np.concatenate([s[key] for s in singles])), key
        assert np.array_equal(batch[key], np.concatenate([h[key] for h in halves])), key
    other = ImuModel(p, DT, 43, "imu").run(f, w, temp, speed)
    assert not np.array_equal(other["gyro"], batch["gyro"])


def _host(params: dict | None = None, name="imu", seed=9, period_ns=10 * MS):
    def value(v):
        if isinstance(v, str):
            return lc.ParameterValue(string_value=v)
        if isinstance(v, (tuple, list)):
            return lc.ParameterValue(double_array=lc.DoubleArray(values=list(v)))
        return lc.ParameterValue(double_value=float(v))

    host = ComponentHost(ImuSensor())
    host.configure(lc.Configure(instance_name=name, seed=seed, period_ns=period_ns, parameters=[
        lc.NamedParameter(name=k, value=value(v)) for k, v in (params or {}).items()]))
    host.initialize(0)
    return host


def test_component_matches_pure_model_and_fills_truth():
    lever, rpy = (0.2, -0.1, 0.3), (0.0, 0.1, 0.5)
    host = _host({"mount_xyz_m": lever, "mount_rpy_rad": rpy, "temperature_rate_cps": 0.5})
    state = make_state(rpy=(0.1, 0.0, 1.0), vel=(1.0, 0, 0), omega=(0.0, 0.1, 0.4),
                       accel=(0.2, 0, 0))
    msgs = [host.step(k * 10 * MS, 10 * MS, {"state": state})[0].message for k in range(50)]
    imu = host.component
    n = len(msgs)
    f, w = specific_force_and_rate(*_truth(n, rpy=(0.1, 0.0, 1.0), vel=(1.0, 0, 0),
                                           omega=(0.0, 0.1, 0.4), accel=(0.2, 0, 0)),
                                   Mount(lever, rpy))
    temps = 25.0 + 0.5 * np.arange(n) * DT
    ref = ImuModel(imu.model_params, DT, 9, "imu").run(f, w, temps)
    for k, m in enumerate(msgs):
        assert m.validity.valid and m.header.sim_time_ns == k * 10 * MS
        assert m.header.frame_id == "imu"
        got = [m.specific_force_mps2.x, m.specific_force_mps2.y, m.specific_force_mps2.z]
        assert got == list(ref["accel"][k])
        assert [m.angular_rate_radps.x, m.angular_rate_radps.y, m.angular_rate_radps.z] == list(ref["gyro"][k])
        assert [m.true_gyro_bias_radps.x, m.true_gyro_bias_radps.y, m.true_gyro_bias_radps.z] == list(ref["gyro_bias"][k])
        assert m.true_accel_bias_mps2.z == ref["accel_bias"][k, 2]
        assert m.true_specific_force_mps2.z == pytest.approx(f[k, 2])
        assert m.temperature_c == pytest.approx(temps[k])


def test_refusals():
    host = _host()
    (out,) = host.step(0, 10 * MS, {})
    assert not out.message.validity.valid
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    assert not out.message.HasField("specific_force_mps2")
    no_acc = make_state()
    no_acc.ClearField("linear_acceleration_body_mps2")
    (out,) = host.step(10 * MS, 10 * MS, {"state": no_acc})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_UPSTREAM_INVALID
    assert out.message.HasField("true_angular_rate_radps")
    (out,) = host.step(20 * MS, 10 * MS, {"state": make_state(omega=(0, 0, 40.0))})
    assert out.message.validity.reason == common_pb2.REFUSAL_REASON_SATURATED
    assert "gyro" in out.message.validity.detail
    assert not out.message.HasField("angular_rate_radps")


def test_latency_delays_output_but_keeps_sample_stamp():
    host = _host({"latency_s": 0.02})
    state = make_state()
    host.step(0, 10 * MS, {"state": state})  # sample 0 held for 20 ms
    outs = [host.step(k * 10 * MS, 10 * MS, {"state": state}) for k in range(1, 5)]
    stamps = [o[0].message.header.sim_time_ns for o in outs if o]
    assert stamps[:3] == [0, 10 * MS, 20 * MS]


def test_thruster_speed_drives_vibration():
    quiet = _host({"grade": "ideal"}, name="a")
    params = {"grade": "", **{f"{p}_{k}": 0.0 for p in ("gyro", "accel") for k in
                             ("noise_density", "bias_instability", "random_walk", "lsb", "range")},
              "gyro_scale_factor": (0, 0, 0), "gyro_misalignment": (0,) * 6,
              "gyro_temperature_coeff": (0, 0, 0), "gyro_vibration_per_radps": 1e-3}
    loud = _host(params, name="a")
    fb = vehicle_pb2.ThrusterFeedback()
    for s in (100.0, -300.0):
        fb.thrusters.add(speed_radps=s)
    a = [quiet.step(k * 10 * MS, 10 * MS, {"state": make_state(), "thrusters": fb})[0].message
         for k in range(20)]
    b = [loud.step(k * 10 * MS, 10 * MS, {"state": make_state(), "thrusters": fb})[0].message
         for k in range(20)]
    assert all(m.angular_rate_radps.x == 0.0 for m in a)
    amp = max(abs(m.angular_rate_radps.x) for m in b)
    assert 0.1 < amp <= 2 * 0.2  # A1·mean|speed| = 0.2 per sinusoid, two sinusoids


@pytest.mark.parametrize("params, words", [
    ({"grade": "nope"}, "unknown grade"),
    ({"grade": "tactical", "gyro_noise_density": 1e-3}, "conflicts"),
    ({"gyro_noise_density": -1.0}, ">= 0"),
    ({"accel_bias_instability": 1e-6}, "white noise and random walk"),
    ({"mount_xyz_m": (1.0, 2.0)}, "mount_xyz_m"),
])
def test_parameter_errors(params, words):
    with pytest.raises(ParameterError, match=words):
        sensor = ImuSensor()
        sensor.name, sensor.period_ns = "imu", 10 * MS
        sensor.configure(ImuSensor.Parameters(**params))


def test_presets_calibrate_allan_floor():
    """The minimum of the complete theoretical curve (white + flicker band + RRW) is
    0.664 B for every preset triad; the old calibration at the GM peak put the MEMS
    accelerometer's floor 27 % and the tactical gyro's 90 % below it."""
    from moonpool.components.sensors.imu import allan_floor
    for grade in ("mems", "tactical"):
        p = getattr(ImuModelParams, grade)()
        for tri in (p.gyro, p.accel):
            floor, _ = allan_floor(tri.noise_density, tri.gm_sigma, tri.gm_band, tri.random_walk)
            assert floor == pytest.approx(0.664 * tri.bias_instability, rel=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_any_configuration_calibrates_or_refuses(seed):
    """Random user configurations (N, B, K, T_c over decades): either the complete
    curve's floor is 0.664 B, or the configuration is refused because white noise and
    random walk alone reach 0.664 B (their own floor sqrt(2NK/sqrt(3)) at sqrt(3) N/K)."""
    from moonpool.components.sensors.imu import TriadErrors, allan_floor
    rng = np.random.default_rng(seed)
    for _ in range(20):
        N, B, K, T = 10.0 ** rng.uniform([-6, -6, -9, -1], [-2, -2, -4, 3])
        tri = TriadErrors(noise_density=N, bias_instability=B, bias_correlation_s=T,
                          random_walk=K)
        base = math.sqrt(2.0 * N * K / math.sqrt(3.0))
        if math.sqrt(3.0) * N / K > 1e7:  # beyond the horizon: white noise decides
            base = math.sqrt(N * N / 1e7 + K * K * 1e7 / 3.0)
        try:
            sigma = tri.gm_sigma
        except ValueError as exc:
            assert "white noise and random walk alone" in str(exc) or "processes" in str(exc)
            assert base >= 0.664 * B * 0.999 or "processes" in str(exc), (N, B, K, T)
            continue
        assert base < 0.664 * B * 1.001, (N, B, K, T)
        floor, _ = allan_floor(N, sigma, tri.gm_band, K)
        assert floor == pytest.approx(0.664 * B, rel=1e-6)


RIG = """
name = "imu-determinism"
[run]
until = "0.5s"
seed = 11
plots = false

[components.src]
entry = "imu_sources:ConstantState"
rate_hz = 100
[components.src.parameters]
rpy_rad = [0.1, -0.05, 0.7]
omega_radps = [0.05, -0.1, 0.3]
velocity_mps = [0.5, 0.0, 0.1]
accel_mps2 = [0.1, 0.0, 0.0]

[components.imu]
entry = "sensors.imu"
run = "process"
rate_hz = 100
[components.imu.parameters]
mount_xyz_m = [0.3, 0.1, -0.2]
temperature_rate_cps = 1.0
gyro_vibration_amplitude = 1e-3

[[connections]]
from = "src.state"
to = "imu.state"
"""


@pytest.mark.slow
def test_same_seed_in_another_process_equals_pure_model(tmp_path):
    from moonpool.orchestrator.recording import decode_recorded, read_recording
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig_file = tmp_path / "imu.toml"
    rig_file.write_text(RIG)
    result = run_rig(load_and_check(rig_file), tmp_path / "out")
    assert result.summary["status"] == "ok", result.summary["error"]
    msgs = [decode_recorded(m) for m in read_recording(tmp_path / "out" / "recording.mcap")
            if m.topic == "/imu/imu"]
    assert len(msgs) == 50
    host = _host({"mount_xyz_m": (0.3, 0.1, -0.2), "temperature_rate_cps": 1.0,
                  "gyro_vibration_amplitude": 1e-3}, seed=11)
    params = host.component.model_params
    n = len(msgs)
    f, w = specific_force_and_rate(*_truth(n, rpy=(0.1, -0.05, 0.7), vel=(0.5, 0, 0.1),
                                           omega=(0.05, -0.1, 0.3), accel=(0.1, 0, 0)),
                                   Mount((0.3, 0.1, -0.2)))
    ref = ImuModel(params, DT, 11, "imu").run(f, w, 25.0 + np.arange(n) * DT)
    for k, m in enumerate(msgs):
        assert m.validity.valid
        assert m.header.sim_time_ns == k * 10 * MS
        assert [m.angular_rate_radps.x, m.angular_rate_radps.y, m.angular_rate_radps.z] == list(ref["gyro"][k])
        assert [m.specific_force_mps2.x, m.specific_force_mps2.y, m.specific_force_mps2.z] == list(ref["accel"][k])


def test_cross_is_numpys_cross_bit_for_bit():
    """The sensors' (and terramechanics') 3-vector cross product is a faster np.cross:
    the same bits for single vectors, stacks and broadcasting, at any magnitude."""
    from moonpool.components.sdk.frames import cross

    rng = np.random.default_rng(5)
    for shape in [(3,), (9, 3), (2, 4, 3)]:
        a = rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, size=shape)
        b = rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, size=shape)
        assert np.array_equal(cross(a, b), np.cross(a, b)), shape
    stack, r = rng.normal(size=(5, 3)), rng.normal(size=3)
    assert np.array_equal(cross(stack, r), np.cross(stack, r))
    assert np.array_equal(cross(r, stack), np.cross(r, stack))
    assert np.array_equal(cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0])


def _bits(values) -> list[int]:
    """Each float's IEEE bits (so that 0.0 and -0.0 differ, as they do on the wire)."""
    return np.asarray(values, dtype=float).ravel().view(np.int64).tolist()


def test_one_sample_truth_equals_the_vectorised_truth_bit_for_bit():
    """The component's per-step truth (specific_force_and_rate1, Python floats) is the
    vectorised specific_force_and_rate of one sample, bit for bit: random states at
    every magnitude, rotated and offset mounts, and zeros of either sign (a -0.0 is
    another message on the wire)."""
    from moonpool.components.sensors.imu import specific_force_and_rate1

    rng = np.random.default_rng(11)
    signed = [0.0, -0.0, 1.0, -1.0, 0.5]
    mounts = [Mount(), Mount((0.2, -0.1, 0.3), (0.0, 0.1, 0.5)), Mount((1, 0, -2), (3.0, -1.2, 0.4))]
    cases = 0
    for i in range(3000):
        if i % 3 == 0:  # exact values: unit quaternions, zeros of both signs
            q = [signed[j] for j in rng.integers(0, len(signed), 4)]
            vecs = [[signed[j] for j in rng.integers(0, len(signed), 3)] for _ in range(4)]
        else:
            q = (rng.normal(size=4) * 10.0 ** rng.uniform(-3, 3)).tolist()
            vecs = [(rng.normal(size=3) * 10.0 ** rng.uniform(-6, 3, size=3)).tolist()
                    for _ in range(4)]
        mount = mounts[i % len(mounts)]
        want = specific_force_and_rate(np.array(q), *(np.array(v) for v in vecs), mount)
        got = specific_force_and_rate1(q, *vecs, mount)
        assert _bits(got[0]) == _bits(want[0]) and _bits(got[1]) == _bits(want[1]), (q, vecs)
        cases += 1
    assert cases == 3000


@pytest.mark.parametrize("preset", ["mems", "tactical", "loud"])
def test_run1_equals_run(preset):
    """ImuModel.run1 (one sample in Python floats, the component's step) gives what run
    gives for that one sample, bit for bit, sample after sample: biases, white noise,
    temperature, vibration, quantization (zeros keep their sign) and saturation."""
    import dataclasses

    if preset == "loud":  # vibration, a coarse LSB and a small range: every branch
        mems = ImuModelParams.mems()
        params = ImuModelParams(
            gyro=dataclasses.replace(mems.gyro, vibration_amplitude=0.01,
                                     vibration_per_radps=1e-4, range=0.5, lsb=0.01),
            accel=dataclasses.replace(mems.accel, vibration_amplitude=0.05, range=12.0,
                                      lsb=0.05))
    else:
        params = getattr(ImuModelParams, preset)()
    rng = np.random.default_rng(3)
    a, b = ImuModel(params, DT, 7, "imu"), ImuModel(params, DT, 7, "imu")
    saturated = 0
    for k in range(400):
        f = rng.normal(size=3) * (8.0 if k % 2 else 1e-3)
        w = rng.normal(size=3) * (0.4 if k % 2 else 1e-5)
        if k % 5 == 0:
            f, w = np.array([0.0, -0.0, -G]), np.array([-0.0, 0.0, 0.0])
        temp, speed = 20.0 + 0.37 * k, float(rng.uniform(0, 300))
        want = a.run(f[None, :], w[None, :], temp, speed)
        got = b.run1(f, w, temp, speed)
        assert got["index"] == want["index"][0] == k
        for key in ("accel", "gyro", "accel_bias", "gyro_bias"):
            assert _bits(got[key]) == _bits(want[key][0]), (k, key)
        for key in ("accel_saturated", "gyro_saturated"):
            assert got[key] == bool(want[key][0]), (k, key)
        saturated += got["accel_saturated"] or got["gyro_saturated"]
    assert (saturated > 0) == (preset == "loud")
