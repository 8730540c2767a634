"""Guidance references and task scoring (components/tasks) against independent checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.tasks.components import StationKeeping, TrajectoryTracking
from moonpool.components.sdk.frames import wrap_angle
from moonpool.components.tasks.references import (
    T2_TRAJECTORIES, Ellipse, Lemniscate, Polyline, quintic, t2_reference,
)
from moonpool.components.tasks.scoring import T1Trial, t1_summary, t2_summary
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.v1 import lifecycle_pb2 as lc, vehicle_pb2

NS = 1_000_000_000


def _central(ref, tau, h=1e-5):
    """Velocity and acceleration by central differences of p (the independent check)."""
    p = lambda t: ref.at(t).p  # noqa: E731
    v = (p(tau + h) - p(tau - h)) / (2 * h)
    a = (p(tau + h) - 2 * p(tau) + p(tau - h)) / (h * h)
    return v, a


@pytest.mark.parametrize("kind", T2_TRAJECTORIES)
def test_reference_derivatives_are_the_true_derivatives(kind):
    ref = t2_reference(kind, (0.0, 0.0, 1.0), 1.0, 0.12, 0.2)
    rng = np.random.default_rng(1)
    for tau in rng.uniform(0.01, ref.duration_s - 0.01, 40):
        r = ref.at(tau)
        v, a = _central(ref, tau)
        assert np.allclose(r.v, v, atol=1e-7), (kind, tau)
        assert np.allclose(r.a, a, atol=2e-4), (kind, tau)


@pytest.mark.parametrize("kind", T2_TRAJECTORIES)
def test_reference_starts_at_rest_and_moves_at_the_requested_mean_speed(kind):
    ref = t2_reference(kind, (0.0, 0.0, 1.0), 1.0, 0.12, 0.0)
    assert np.allclose(ref.at(0.0).v, 0.0) and np.allclose(ref.at(-3.0).p, ref.at(0.0).p)
    # path length by fine sampling / duration of the motion = mean speed (the ramp of
    # closed curves costs ramp_s / 2 of travel time)
    taus = np.linspace(0.0, ref.duration_s, 200_001)
    pts = np.array([ref.at(t).p for t in taus])
    length = np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1))
    moving_s = ref.duration_s - getattr(ref, "ramp_s", 0.0) / 2  # a ramp costs half its length
    mean_speed = length / moving_s
    print(f"{kind}: length {length:.3f} m in {ref.duration_s:.1f} s, mean {mean_speed:.4f} m/s")
    assert mean_speed == pytest.approx(0.12, rel=0.03)
    assert np.allclose(ref.at(ref.duration_s + 5).v, 0.0)


def test_polyline_visits_every_corner_and_rests_there():
    wps = ((0.0, 0.0, 1.0), (1.0, 0.0, 1.0), (1.0, 1.0, 1.5))
    ref = Polyline(wps, 0.25)
    t_corner = 1.0 / 0.25
    assert np.allclose(ref.at(t_corner).p, wps[1])
    assert np.allclose(ref.at(t_corner).v, 0.0)
    assert ref.duration_s == pytest.approx((1.0 + math.hypot(1.0, 0.5)) / 0.25)
    # the quintic peaks at 1.875x the mean speed mid-segment
    assert np.linalg.norm(ref.at(t_corner / 2).v) == pytest.approx(1.875 * 0.25)
    s, ds, dds = quintic(0.5)
    assert (s, ds, dds) == (0.5, 1.875, 0.0)


def test_ellipse_and_lemniscate_have_their_shapes():
    e = Ellipse((1.0, 0.0, 1.0), 1.0, 0.6, 0.0, 40.0, ramp_s=0.0)
    pts = np.array([e.at(t).p for t in np.linspace(0, 40, 400)])
    centre = np.array([0.0, 0.0])
    r = ((pts[:, 0] - centre[0]) / 1.0) ** 2 + ((pts[:, 1] - centre[1]) / 0.6) ** 2
    assert np.allclose(r, 1.0)
    lem = Lemniscate((0.0, 0.0, 1.0), 1.0, 0.6, 0.0, 40.0, ramp_s=0.0)
    pts = np.array([lem.at(t).p for t in np.linspace(0, 40, 400)])
    # Gerono: y = (b/2) sin 2θ with x = a sin θ  =>  y² = (b/a)² x² (1 − x²/a²)
    assert np.allclose(pts[:, 1] ** 2, 0.36 * pts[:, 0] ** 2 * (1 - pts[:, 0] ** 2), atol=1e-12)
    assert pts[:, 0].max() == pytest.approx(1.0, abs=1e-3) and pts[:, 1].max() == pytest.approx(0.3, abs=1e-3)


def test_wrap_angle():
    assert wrap_angle(3 * math.pi / 2) == pytest.approx(-math.pi / 2)
    assert wrap_angle(-math.pi) == math.pi and wrap_angle(math.pi) == math.pi
    assert wrap_angle(math.radians(350) - math.radians(-5)) == pytest.approx(math.radians(-5))


def test_t1_scoring_by_hand():
    trial = T1Trial(0, (40.0, 60.0))
    # outside the window: ignored for RMSE but counts for the tilt guard
    trial.add(10.0, np.array([5.0, 0.0, 0.0]), 1.0, math.radians(20), 0.0)
    trial.add(40.0, np.array([0.03, 0.04, 0.0]), math.radians(3), 0.0, 0.0)
    trial.add(60.0, np.array([0.0, 0.0, 0.0]), math.radians(-4), 0.0, 0.0)
    row = trial.result()
    assert row["position_rmse_m"] == pytest.approx(math.sqrt(0.05**2 / 2))
    assert row["yaw_rmse_deg"] == pytest.approx(math.sqrt((9 + 16) / 2))
    assert row["max_tilt_deg"] == pytest.approx(20.0)
    assert row["success"] is False  # tilt guard broken
    good = T1Trial(1, (40.0, 60.0))
    good.add(50.0, np.array([0.01, 0.0, 0.0]), 0.0, 0.0, 0.0)
    summary = t1_summary([trial, good])
    assert summary["success"] == 1 and summary["trials"] == 2
    assert summary["position_rmse_m"] == pytest.approx(math.sqrt((0.05**2 + 0 + 0.01**2) / 3))


def test_t2_scoring_by_hand():
    e = np.array([[0.3, 0.4, 0.0], [0.0, 0.0, 0.2], [0.0, 0.0, 0.0], [0.1, 0.0, 0.0]])
    m = t2_summary(e, "straight")
    assert m["horizontal_rmse_m"] == pytest.approx(math.sqrt((0.25 + 0.01) / 4))
    assert m["vertical_rmse_m"] == pytest.approx(math.sqrt(0.04 / 4))
    assert m["p95_3d_m"] == pytest.approx(np.percentile([0.5, 0.2, 0.0, 0.1], 95))


def _host(cls, name, **params):
    host = ComponentHost(cls())
    host.configure(lc.Configure(instance_name=name, seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    return host


def _state(x, y, z, yaw):
    s = vehicle_pb2.VehicleState(yaw_rad=yaw)
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = x, y, z
    s.orientation.w = 1.0
    return s


def test_station_keeping_component_issues_setpoints_in_turn_and_scores():
    host = _host(StationKeeping, "t1", setpoints=[[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 90.0]],
                 trial_s=10.0, window_start_s=5.0, window_end_s=10.0)
    host.initialize(0)
    dt = NS // 10
    seen = []
    for k in range(0, 200):
        t = k * dt
        # a vehicle 2 cm off in x and 1 degree off in yaw, always
        sp_index = 0 if t < 10 * NS else 1
        target = [(0.0, 0.0), (1.0, math.pi / 2)][sp_index]
        outs = {o.port: o.message for o in host.step(t, dt, {"state": _state(target[0] + 0.02, 0.0, 1.0,
                                                                         target[1] + math.radians(1))})}
        seen.append(outs["setpoint"].index)
        if k == 150:
            assert outs["setpoint"].yaw_rad == pytest.approx(math.pi / 2)
            assert outs["setpoint"].phase == "T1/2"
            errs = {s.name: s.value for s in outs["error"].signals}
            assert errs["e_x"] == pytest.approx(0.02) and errs["e_yaw"] == pytest.approx(math.radians(1))
    assert seen[:100] == [0] * 100 and seen[100:] == [1] * 100
    m = host.terminate()
    assert m["trials"] == 2 and m["success"] == 2
    assert m["position_rmse_m"] == pytest.approx(0.02) and m["yaw_rmse_deg"] == pytest.approx(1.0)
    assert [r["samples"] for r in m["per_trial"]] == [50, 50]  # window [5, 10) s at 10 Hz: 10 s is trial 2


def test_trajectory_tracking_component_scores_the_moving_part_only():
    host = _host(TrajectoryTracking, "t2", trajectory="straight", settle_s=2.0, speed_mps=0.5, size_m=1.0,
                 heave_m=0.0)
    host.initialize(0)
    ref = t2_reference("straight", (0.0, 0.0, 1.0), 1.0, 0.5, 0.0)
    dt = NS // 10
    end = 2.0 + ref.duration_s
    k = 0
    while k * dt / NS <= end + 1.0:
        tau = k * dt / NS - 2.0
        p = ref.at(tau).p
        outs = {o.port: o.message for o in host.step(k * dt, dt, {"state": _state(p[0], p[1], p[2] + 0.05, 0.0)})}
        sp = outs["setpoint"]
        assert np.allclose([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z], p)
        k += 1
    m = host.terminate()
    assert m["complete"] and m["vertical_rmse_m"] == pytest.approx(0.05)
    assert m["horizontal_rmse_m"] == pytest.approx(0.0, abs=1e-12)
    assert m["samples"] == math.floor(ref.duration_s * 10) + 1  # tau = 0, 0.1, ... <= duration


@pytest.mark.parametrize("cls,params,needle", [
    (StationKeeping, {"setpoints": [[0.0, 0.0, 1.0]]}, "setpoints"),
    (StationKeeping, {"window_start_s": 50.0, "window_end_s": 40.0}, "window"),
    (TrajectoryTracking, {"trajectory": "circle"}, "circle"),
    (TrajectoryTracking, {"speed_mps": 0.0}, "speed_mps"),
])
def test_bad_task_parameters_are_refused_by_name(cls, params, needle):
    with pytest.raises(ParameterError, match=needle) as info:
        _host(cls, "task", **params)
    assert info.value.component == "task" and info.value.fix
