"""The pool navigation filter (components/localization/navigation_filter.py).

Checks: statistical consistency on trajectories drawn from the filter's own model
(NEES), latency handled by timestamps (a late delivery ends bit-identical to an
on-time one), Mahalanobis gating, yaw wrapping across ±π, coasting through refusals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.localization.navigation_filter import NavigationFilter
from moonpool.components.sdk.frames import wrap_angle
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.v1 import common_pb2, lifecycle_pb2 as lc, navigation_pb2, sensors_pb2

NS = 1_000_000_000
DT = NS // 20  # the filter steps at 20 Hz
G = 9.80665
P_ATM = 101_325.0


def make(**params) -> ComponentHost:
    host = ComponentHost(NavigationFilter())
    host.configure(lc.Configure(instance_name="ekf", seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    return host


def pose(t_ns, x, y, yaw, sigma=0.005, sigma_yaw=0.01, valid=True):
    m = navigation_pb2.PoseMeasurement(yaw_rad=yaw, components=["x", "y", "yaw"])
    m.header.sim_time_ns = t_ns
    m.position_m.x, m.position_m.y = x, y
    m.covariance.n = 3
    m.covariance.values.extend(np.diag([sigma**2, sigma**2, sigma_yaw**2]).ravel())
    m.validity.valid = valid
    if not valid:
        m.validity.reason = common_pb2.REFUSAL_REASON_NOT_DETECTED
    return m


def pressure(t_ns, depth, rho=1000.0):
    m = sensors_pb2.Pressure(pressure_pa=P_ATM + rho * G * depth)
    m.header.sim_time_ns = t_ns
    m.validity.valid = True
    return m


def run(host, steps, measurements_at, first=0):
    """Step ``steps`` times from step ``first``; ``measurements_at(k, t)`` gives the inputs of step k."""
    outs = []
    for k in range(first, first + steps):
        t = k * DT
        (o,) = host.step(t, DT, measurements_at(k, t))
        outs.append(o.message)
    return outs


def truth_track(n, q_a=0.05, seed=3):
    """A trajectory drawn from the filter's own model: white-noise acceleration (exact
    discretisation at DT), so the filter is consistent by construction."""
    rng = np.random.default_rng(seed)
    dt = DT / NS
    Q1 = q_a * np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
    L = np.linalg.cholesky(Q1)
    x = np.zeros((n, 3, 2))  # (step, axis, [pos, vel])
    x[0, :, 0] = (1.0, -0.5, 1.2)
    for k in range(1, n):
        for a in range(3):
            p, v = x[k - 1, a]
            x[k, a] = (p + dt * v, v) + L @ rng.standard_normal(2)
    return x


def test_nees_is_consistent_and_error_is_below_the_measurement_noise():
    n = 2400
    truth = truth_track(n)
    rng = np.random.default_rng(7)
    sigma, sigma_d = 0.005, 0.01
    host = make(depth_noise_m=sigma_d, accel_noise_m2ps3=0.05)

    def inputs(k, t):
        x, y, z = truth[k, :, 0]
        return {"pose": [pose(t, x + sigma * rng.standard_normal(), y + sigma * rng.standard_normal(), 0.3)],
                "pressure": [pressure(t, z + sigma_d * rng.standard_normal())]}

    outs = run(host, n, inputs)
    nees, errs = [], []
    for k in range(200, n):  # after the start-up transient
        o = outs[k]
        assert o.validity.valid
        e = np.array([o.position_ned_m.x, o.position_ned_m.y]) - truth[k, :2, 0]
        P = np.array(o.covariance.values).reshape(6, 6)[:2, :2]
        nees.append(float(e @ np.linalg.solve(P, e)))
        errs.append(np.linalg.norm(e))
    mean_nees = float(np.mean(nees))
    rmse = math.sqrt(np.mean(np.square(errs)))
    print(f"mean NEES {mean_nees:.3f} (expect 2), horizontal RMSE {rmse * 1000:.2f} mm "
          f"vs measurement sigma {sigma * 1000:.1f} mm per axis")
    # mean of N chi2(2) draws; the samples are correlated in time, so allow a wide band
    assert 1.5 < mean_nees < 2.6
    assert rmse < sigma * math.sqrt(2)
    m = host.terminate()
    assert m["rejected"]["pose"] <= 0.01 * n and m["applied"]["pose"] >= 0.99 * n


def test_late_measurements_are_applied_at_their_timestamps():
    n, delay_steps = 200, 6  # 0.3 s late
    truth = truth_track(n, seed=11)
    rng = np.random.default_rng(5)
    meas = [(pose(k * DT, truth[k, 0, 0] + 0.005 * rng.standard_normal(),
                  truth[k, 1, 0] + 0.005 * rng.standard_normal(), 0.1 + 0.01 * rng.standard_normal()),
             pressure(k * DT, truth[k, 2, 0] + 0.01 * rng.standard_normal())) for k in range(n)]
    on_time = run(make(), n + delay_steps, lambda k, t: {"pose": [meas[k][0]], "pressure": [meas[k][1]]}
                  if k < n else {})
    # poses arrive 0.3 s late (camera + processing), pressure on time
    late = run(make(), n + delay_steps, lambda k, t: {
        "pose": [meas[k - delay_steps][0]] if k >= delay_steps else [],
        "pressure": [meas[k][1]] if k < n else []})
    a, b = on_time[-1], late[-1]
    assert list(a.covariance.values) == list(b.covariance.values)
    assert (a.position_ned_m, a.velocity_ned_mps, a.yaw_rad) == (b.position_ned_m, b.velocity_ned_mps, b.yaw_rad)
    # while they are in flight, the late filter lacks them and differs
    mid = n // 2
    assert on_time[mid].position_ned_m != late[mid].position_ned_m


def test_outliers_are_gated_and_counted():
    host = make()
    outs = run(host, 100, lambda k, t: {
        "pose": [pose(t, 1.0 + (0.8 if k == 60 else 0.0), 2.0, 0.0)], "pressure": [pressure(t, 1.0)]})
    assert abs(outs[60].position_ned_m.x - 1.0) < 0.005
    m = host.terminate()
    assert m["rejected"]["pose"] == 1


def test_filter_relocks_after_a_jump_that_persists():
    host = make(reset_after_rejections=5)
    outs = run(host, 120, lambda k, t: {
        "pose": [pose(t, 1.0 if k < 50 else 3.0, 2.0, 0.0)], "pressure": [pressure(t, 1.0)]})
    assert abs(outs[-1].position_ned_m.x - 3.0) < 0.01
    m = host.terminate()
    assert m["resets"] == 1 and m["rejected"]["pose"] == 5


def test_yaw_is_tracked_through_the_wrap_at_pi():
    rate = 0.5  # rad/s, starting at 2.5 rad: crosses +pi after ~1.3 s
    host = make()
    outs = run(host, 200, lambda k, t: {
        "pose": [pose(t, 0.0, 0.0, wrap_angle(2.5 + rate * t / NS))], "pressure": [pressure(t, 1.0)]})
    errs = [abs(wrap_angle(o.yaw_rad - (2.5 + rate * k * DT / NS))) for k, o in enumerate(outs)]
    assert max(errs[40:]) < 0.01, max(errs[40:])
    assert all(-math.pi < o.yaw_rad <= math.pi for o in outs)
    assert abs(outs[-1].angular_velocity_body_radps.z - rate) < 0.02


def test_not_ready_until_pose_and_depth_then_coasts_through_refusals():
    host = make(max_position_std_m=0.05)
    (o,) = host.step(0, DT, {"pressure": [pressure(0, 1.0)]})
    assert not o.message.validity.valid
    assert o.message.validity.reason == common_pb2.REFUSAL_REASON_NOT_READY
    assert "pose" in o.message.validity.detail
    outs = run(host, 39, lambda k, t: {"pose": [pose(t, 0.5, 0.0, 0.0)], "pressure": [pressure(t, 1.0)]},
               first=1)
    assert outs[-1].validity.valid
    # the camera loses the tags: refusals only; the filter predicts and stays valid for a while
    coast = []
    for k in range(40, 400):
        (o,) = host.step(k * DT, DT, {"pose": [pose(k * DT, 0, 0, 0, valid=False)],
                                      "pressure": [pressure(k * DT, 1.0)]})
        coast.append(o.message)
    assert coast[0].validity.valid and abs(coast[0].position_ned_m.x - 0.5) < 0.01
    sig = [math.sqrt(np.array(c.covariance.values).reshape(6, 6)[0, 0]) for c in coast]
    assert all(b >= a for a, b in zip(sig, sig[1:]))  # uncertainty only grows while coasting
    assert not coast[-1].validity.valid
    assert coast[-1].validity.reason == common_pb2.REFUSAL_REASON_UPSTREAM_INVALID
    m = host.terminate()
    assert m["refused"]["pose"] == 360


@pytest.mark.parametrize("name,value", [("depth_noise_m", 0.0), ("gate_probability", 1.5),
                                        ("accel_noise_m2ps3", -1.0)])
def test_bad_parameters_are_named(name, value):
    from moonpool.components.sdk.errors import ParameterError
    with pytest.raises(ParameterError, match=name):
        make(**{name: value})


def imu(t_ns, roll, pitch, rates=(0.0, 0.0, 0.0)):
    """A vehicle at rest tilted by (roll, pitch): specific force −g in the body frame."""
    m = sensors_pb2.Imu()
    m.header.sim_time_ns = t_ns
    m.validity.valid = True
    g_b = np.array([-math.sin(pitch), math.sin(roll) * math.cos(pitch), math.cos(roll) * math.cos(pitch)]) * G
    m.specific_force_mps2.x, m.specific_force_mps2.y, m.specific_force_mps2.z = -g_b
    m.angular_rate_radps.x, m.angular_rate_radps.y, m.angular_rate_radps.z = rates
    return m


def test_roll_and_pitch_from_the_imu_reach_the_output_quaternion():
    from moonpool.components.sdk.frames import euler_from_rot, rot_from_quat

    host = make(attitude_time_constant_s=0.5)
    roll, pitch = math.radians(4.0), math.radians(-3.0)
    outs = run(host, 100, lambda k, t: {"pose": [pose(t, 0.2, 0.1, 1.0)], "pressure": [pressure(t, 1.0)],
                                        "imu": [imu(t, roll, pitch, (0.01, -0.02, 0.03) if k == 99 else
                                                    (0.0, 0.0, 0.0))]})
    o = outs[-1].orientation
    r, p, y = euler_from_rot(rot_from_quat(np.array([o.w, o.x, o.y, o.z])))
    assert r == pytest.approx(roll, abs=1e-3) and p == pytest.approx(pitch, abs=1e-3)
    assert y == pytest.approx(outs[-1].yaw_rad, abs=1e-9)
    w = outs[-1].angular_velocity_body_radps
    assert (w.x, w.y, w.z) == (0.01, -0.02, 0.03)


def test_a_fast_turn_is_followed_with_the_gyro():
    """The PID spins the vehicle up to 1.4 rad/s within 0.1 s: the heading must follow.
    (With q_ψ = 0.05 rad²/s³ the filter lags, then gates every yaw out: 1.4 rad off.)"""
    host = make()

    def psi_r(t):
        s = t / NS - 1.0  # turn from t = 1 s: r ramps to 1.4 rad/s over 0.1 s, holds 1 s
        r = 0.0 if s < 0 else 14.0 * s if s < 0.1 else 1.4 if s < 1.1 else 0.0
        ang = 0.0 if s < 0 else 7.0 * s * s if s < 0.1 else 0.07 + 1.4 * (min(s, 1.1) - 0.1)
        return wrap_angle(-1.5 + ang), r

    def inputs(k, t):
        psi, r = psi_r(t)
        d = {"pressure": [pressure(t, 1.0)], "imu": [imu(t, 0.0, 0.0, (0.0, 0.0, r))]}
        if k % 2 == 0:
            d["pose"] = [pose(t, 0.0, 0.0, psi)]
        return d

    outs = run(host, 80, inputs)
    errs = [abs(wrap_angle(o.yaw_rad - psi_r(k * DT)[0])) for k, o in enumerate(outs)]
    print(f"largest heading error during the turn {max(errs[10:]):.4f} rad")
    assert max(errs[10:]) < 0.03
    m = host.terminate()
    assert m["rejected"]["yaw"] == 0 and m["yaw_resets"] == 0


def test_heading_relocks_after_persistent_disagreement():
    host = make(reset_after_rejections=5)
    outs = run(host, 80, lambda k, t: {"pressure": [pressure(t, 1.0)],
                                        "pose": [pose(t, 0.0, 0.0, 0.2 if k < 30 else 2.2)]})
    assert abs(outs[-1].yaw_rad - 2.2) < 0.01
    m = host.terminate()
    assert m["yaw_resets"] == 1 and m["rejected"]["yaw"] == 5


def test_measurements_at_the_start_instant_are_used():
    host = make()
    (o,) = host.step(0, DT, {"pose": [pose(0, 0.3, 0.2, 0.1)], "pressure": [pressure(0, 1.0)]})
    assert o.message.validity.valid and abs(o.message.position_ned_m.x - 0.3) < 1e-9
    assert host.terminate()["too_late"] == 0


def test_linear_kalman_is_filterpys_arithmetic_bit_for_bit():
    """``LinearKalman`` replaces filterpy's ``ExtendedKalmanFilter`` (for speed: its
    bookkeeping cost more than the arithmetic); the estimates must stay filterpy's to the
    bit — predictions over varied steps, 2-D and 1-D updates, wrapped angle residuals."""
    from filterpy.kalman import ExtendedKalmanFilter

    from moonpool.components.localization.navigation_filter import (
        LinearKalman,
        _angle_residual,
        _transition,
    )

    rng = np.random.default_rng(5)
    ours, theirs = LinearKalman(6), ExtendedKalmanFilter(dim_x=6, dim_z=2)
    yaw_ours, yaw_theirs = LinearKalman(2), ExtendedKalmanFilter(dim_x=2, dim_z=1)
    H2 = np.zeros((2, 6))
    H2[0, 0] = H2[1, 1] = 1.0
    H1 = np.zeros((1, 6))
    H1[0, 2] = 1.0
    Hy, Hr = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    for k in range(400):
        F, Q, Fy, Qy = _transition(rng.choice([0.02, 0.01, 0.0133333, 0.0066667]), 0.05, 5.0)
        ours.predict(F, Q)
        theirs.F, theirs.Q = F, Q
        theirs.predict()
        yaw_ours.predict(Fy, Qy)
        yaw_theirs.F, yaw_theirs.Q = Fy, Qy
        yaw_theirs.predict()
        kind = k % 3
        if kind == 0:
            z = rng.normal(0.0, 0.01, (2, 1))
            R = np.diag(rng.uniform(1e-6, 1e-4, 2))
            ours.update(z - H2 @ ours.x, H2, R)
            theirs.update(z, lambda x: H2, lambda x: H2 @ x, R=R)
            psi = np.array([[rng.uniform(-math.pi, math.pi)]])
            Ry = np.array([[rng.uniform(1e-5, 1e-3)]])
            yaw_ours.update(_angle_residual(psi, Hy @ yaw_ours.x), Hy, Ry)
            yaw_theirs.update(psi, lambda x: Hy, lambda x: Hy @ x, R=Ry, residual=_angle_residual)
        elif kind == 1:
            z = rng.normal(0.5, 0.003, (1, 1))
            R = np.array([[0.003**2]])
            ours.update(z - H1 @ ours.x, H1, R)
            theirs.update(z, lambda x: H1, lambda x: H1 @ x, R=R)
        else:
            z = rng.normal(0.0, 0.05, (1, 1))
            R = np.array([[0.01**2]])
            yaw_ours.update(z - Hr @ yaw_ours.x, Hr, R)
            yaw_theirs.update(z, lambda x: Hr, lambda x: Hr @ x, R=R)
        for a, b in ((ours, theirs), (yaw_ours, yaw_theirs)):
            assert np.array_equal(a.x, b.x) and np.array_equal(a.P, b.P), k


class _ReplayEverything(NavigationFilter):
    """The rollback by its definition: back to the newest snapshot strictly before the
    earliest new measurement, every pending measurement after it applied again (the
    replay itself is the filter's own)."""

    def _apply_in_time_order(self, new, t_ns):
        import bisect

        times = self.history_t
        i = bisect.bisect_left(times, min(m.t_ns for m in new))
        self.f.restore(self.history[i - 1])
        for m in new:
            j = bisect.bisect_right(self.pending, m.key, key=lambda p: p.key)
            self.pending.insert(j, m)
            self.pending_t.insert(j, m.t_ns)
        self._replay(i, self.pending[bisect.bisect_right(self.pending_t, times[i - 1]):], t_ns)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rollback_to_the_newest_snapshot_gives_the_same_bits(seed):
    """The filter rolls back only as far as the earliest new measurement needs (none
    for the sensors' on-time samples): the same output, bit for bit, as replaying from
    the snapshot before it, on a stream with late poses (0–4 steps), samples between
    steps, several at one instant, a measurement of an instant whose snapshot already
    holds one ordered after it (a depth after a gyro of the same time), and late gyros
    of an earlier instant ordered after all it holds (its snapshot made again)."""
    rng = np.random.default_rng(seed)
    hosts = [make(history_s=1.0)]
    ref = ComponentHost(_ReplayEverything())
    ref.configure(lc.Configure(instance_name="ekf", seed=0, parameters=[
        lc.NamedParameter(name="history_s", value=to_parameter_value(1.0))]))
    ref.initialize(0)
    hosts.append(ref)
    held_back: list = []  # (step due, kind, message)
    for k in range(300):
        t = k * DT
        x, y, psi = 0.3 * math.sin(t / NS), 0.2 * math.cos(t / NS), wrap_angle(0.4 * t / NS)
        inputs: dict = {"pose": [], "pressure": [], "imu": []}
        if k % 3 == 0:  # a pose, 0–4 steps late, some stamped between steps
            ts = t - int(rng.integers(0, DT)) if k and rng.random() < 0.3 else t
            held_back.append((k + int(rng.integers(0, 5)), "pose",
                              pose(ts, x + rng.normal(0, 0.005), y + rng.normal(0, 0.005),
                                   psi + rng.normal(0, 0.01))))
        inputs["pressure"].append(pressure(t, 1.0 + rng.normal(0, 0.003)))
        for ts in (t - DT // 2, t) if k else (t,):  # the IMU at twice the filter's rate
            inputs["imu"].append(imu(ts, 0.01, -0.02, (0.0, 0.0, 0.4 + rng.normal(0, 0.01))))
        if k and rng.random() < 0.2:  # a depth of the previous instant, after its gyro
            inputs["pressure"].append(pressure(t - DT, 1.0 + rng.normal(0, 0.003)))
        if k > 1 and rng.random() < 0.3:  # a late gyro of an earlier instant, or between
            ts = t - DT * int(rng.integers(1, 3)) - (DT // 4 if rng.random() < 0.5 else 0)
            inputs["imu"].append(imu(ts, 0.01, -0.02, (0.0, 0.0, 0.4 + rng.normal(0, 0.01))))
        due = [m for m in held_back if m[0] == k]
        held_back = [m for m in held_back if m[0] != k]
        for _, kind, msg in due:
            inputs[kind].append(msg)
        got = [h.step(t, DT, inputs)[0].message.SerializeToString() for h in hosts]
        assert got[0] == got[1], k
    metrics = [h.terminate() for h in hosts]
    assert metrics[0] == metrics[1]
    assert metrics[0]["applied"]["pose"] > 50 and metrics[0]["applied"]["gyro"] > 400
