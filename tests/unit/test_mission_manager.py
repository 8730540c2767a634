"""mission.manager on hand-made inputs (the whole mission runs in
tests/integration/test_hadal_mission.py): the descent's ramp and its transition with
its reason, safe aborts (the INS refusing or its sigma beyond the bound, the lost DVL
after the descent, the target lost after its detection), bad
parameters."""

from __future__ import annotations

import math

import pytest

from moonpool.components.mission.manager import MissionManager
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.v1 import acoustics_pb2, lifecycle_pb2 as lc, mission_pb2, navigation_pb2, sensors_pb2, vision_pb2

DT = 100_000_000


def _host(**params):
    host = ComponentHost(MissionManager())
    host.configure(lc.Configure(instance_name="mission", seed=0, period_ns=DT, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    return host


def _nav(z, valid=True, detail="", sigma=0.1):
    n = navigation_pb2.NavigationState()
    n.validity.valid, n.validity.detail = valid, detail
    n.position_ned_m.z = z
    n.orientation.w = 1.0
    n.covariance.n = 6
    n.covariance.values.extend([sigma**2 if i in (0, 7) else 0.0 for i in range(36)])
    return n


def _dvl(lock=True):
    d = sensors_pb2.Dvl(track=sensors_pb2.DVL_TRACK_BOTTOM)
    d.validity.valid = lock
    d.validity.detail = "" if lock else "no bottom within range"
    return d


def _alt(r):
    a = acoustics_pb2.Altimeter(range_m=r)
    a.validity.valid = True
    return a


def _step(host, k, **inputs):
    return {o.port: o.message for o in host.step(k * DT, DT, inputs)}


def test_the_descent_ramps_down_and_hands_over_with_its_reason():
    host = _host(descent_speed_mps=0.5, survey_altitude_m=2.5, settle_s=1.0,
                 survey_start_ne_m=[5.0, 5.0])
    out = _step(host, 0, navigation=_nav(100.0), dvl=_dvl(False))
    assert out["transition"].phase == "descend" and out["transition"].reason == "mission start"
    sp = out["setpoint"]
    assert math.isnan(sp.position_ned_m.x) is False and sp.position_ned_m.z == pytest.approx(100.0)
    out = _step(host, 1, navigation=_nav(100.0), dvl=_dvl(False))
    assert out["setpoint"].position_ned_m.z == pytest.approx(100.05)  # 0.5 m/s x 0.1 s
    assert out["setpoint"].velocity_ned_mps.z == pytest.approx(0.5)
    # at 2.5 m above the floor with the lock, still: settled after 1 s -> survey
    t = None
    for k in range(2, 14):
        out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5))
        t = out.get("transition", t)
    assert t is not None and t.phase == "survey" and t.previous_phase == "descend"
    assert t.reason.startswith("at the survey altitude: 2.50 m above the floor")
    assert out["state"].status == mission_pb2.MISSION_STATUS_RUNNING


def test_the_ins_refusing_its_output_aborts_safely():
    host = _host(ins_grace_s=0.5, abort_rise_m=10.0)
    _step(host, 0, navigation=_nav(50.0), dvl=_dvl(False))
    out = _step(host, 10, navigation=_nav(50.0, valid=False, detail="dead reckoning: sigma 60 m"))
    t = out["transition"]
    assert t.phase == "aborted" and t.status == mission_pb2.MISSION_STATUS_ABORTED
    assert "INS divergence: the INS refused its output (dead reckoning: sigma 60 m)" in t.reason
    assert out["setpoint"].position_ned_m.z == pytest.approx(40.0)  # rises 10 m
    arm = {s.name: s.value for s in out["arm"].signals}
    assert arm["suction"] == 0.0 and arm["q3"] == pytest.approx(-2.5)  # pump off, folded
    c = host.component
    assert c.finished_failed and "mission aborted in descend: INS divergence" in c.finished
    m = c.terminate()
    assert m["status"] == "aborted" and m["last_phase"] == "descend"
    assert m["abort_reason"].startswith("INS divergence")


def test_losing_the_dvl_after_the_descent_aborts():
    host = _host(settle_s=0.5, dvl_lost_s=2.0, survey_start_ne_m=[5.0, 5.0])
    k = 0
    for k in range(10):
        _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5))
    assert host.component.ctx.bottom_reached
    out = {}
    for k in range(k + 1, k + 40):
        out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(False), altimeter=_alt(2.5))
        if "transition" in out:
            break
    assert out["transition"].phase == "aborted"
    assert "lost DVL lock: no bottom track for 2.1 s (DVL: no bottom within range)" in \
        out["transition"].reason


def test_an_ins_sigma_above_its_bound_aborts():
    host = _host(ins_max_sigma_m=5.0, abort_rise_m=10.0)
    _step(host, 0, navigation=_nav(50.0, sigma=1.0), dvl=_dvl(False))
    out = _step(host, 1, navigation=_nav(50.0, sigma=4.9), dvl=_dvl(False))
    assert "transition" not in out  # within the bound: goes on
    out = _step(host, 2, navigation=_nav(50.0, sigma=5.5), dvl=_dvl(False))
    t = out["transition"]
    assert t.phase == "aborted" and t.status == mission_pb2.MISSION_STATUS_ABORTED
    assert t.reason == "safety: INS divergence: horizontal sigma 5.50 m > 5 m"
    assert out["setpoint"].position_ned_m.z == pytest.approx(40.0)  # rises 10 m
    assert host.component.terminate()["abort_reason"].startswith("INS divergence")


def _detection(x, y, z):
    d = vision_pb2.TargetDetection(target="starfish", has_position=True)
    d.validity.valid = True
    d.position_ned_m.x, d.position_ned_m.y, d.position_ned_m.z = x, y, z
    return d


def test_a_target_lost_after_its_detection_aborts_with_the_reason():
    host = _host(settle_s=0.5, survey_start_ne_m=[0.0, 0.0], detection_lost_s=2.0,
                 confirm_detections=4)
    k, phases = 0, []
    for k in range(12):  # at the survey altitude: descend -> survey
        out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5))
        if "transition" in out:
            phases.append(out["transition"].phase)
    assert phases[-1] == "survey"
    k += 1  # one detection: survey -> detect
    out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5),
                detection=[_detection(1.0, 0.5, 112.5)])
    assert out["transition"].phase == "detect"
    t0 = k * DT * 1e-9
    for k in range(k + 1, k + 40):  # nothing more: lost after 2 s
        out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5))
        if "transition" in out:
            break
    t = out["transition"]
    assert t.phase == "aborted" and t.previous_phase == "detect"
    assert t.reason == ("detect: detection lost: no detection of the target for 2 s "
                        f"(last at t = {t0:.1f} s)"), t.reason
    assert k * DT * 1e-9 - t0 == pytest.approx(2.1, abs=0.11)
    m = host.component.terminate()
    assert m["status"] == "aborted" and m["last_phase"] == "detect"


@pytest.mark.parametrize("kw,words", [({"survey_start_ne_m": [1.0]}, "survey_start_ne_m"),
                                      ({"descent_speed_mps": 0.0}, "descent_speed_mps"),
                                      ({"grasp_timeout_s": -1.0}, "grasp_timeout_s")])
def test_bad_parameters_are_named(kw, words):
    with pytest.raises(ParameterError, match=words) as err:
        MissionManager.Parameters(**kw)
    assert err.value.fix


def test_a_survey_starting_where_the_descent_ended_has_no_empty_leg():
    """The lawnmower path runs from where the descent ended to its first waypoint; when
    the two coincide that leg would have no length (no direction: a NaN setpoint)."""
    host = _host(settle_s=0.5, survey_start_ne_m=[0.0, 0.0])
    out = {}
    for k in range(12):
        out = _step(host, k, navigation=_nav(110.0), dvl=_dvl(True), altimeter=_alt(2.5))
    assert out["state"].phase == "survey"
    sp = out["setpoint"]
    assert all(math.isfinite(v) for v in (sp.position_ned_m.x, sp.position_ned_m.y,
                                          sp.position_ned_m.z, sp.yaw_rad))
