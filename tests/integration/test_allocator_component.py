"""Allocator and thrusters in a real rig: a scheduled wrench -> allocator -> thrusters ->
the hydrodynamics FMU (BlueROV2 Heavy), run end to end, and bad geometry refused at
configure with the axis named."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from moonpool.orchestrator.recording import decode_recorded, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

FMU3 = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"

pytestmark = pytest.mark.skipif(not FMU3.exists(), reason="FMUs not built (scripts/build-fmus.sh)")

STATE = ('{ "position_ned_m.x" = "n", "position_ned_m.z" = "d", "linear_velocity_body_mps.x" = "u", '
         '"linear_velocity_body_mps.z" = "w", "yaw_rad" = "yaw" }')
WRENCH = ('{ "force_n.x" = "tau_X", "force_n.y" = "tau_Y", "force_n.z" = "tau_Z", '
          '"torque_nm.x" = "tau_K", "torque_nm.y" = "tau_M", "torque_nm.z" = "tau_N" }')


def _rig(tmp_path, schedule, *, allocator_profile="bluerov2_heavy", through_thrusters=True,
         extra=""):
    vehicle_profile = PROFILES / "bluerov2_heavy.toml"
    chain = f"""
[components.allocator]
entry = "moonpool.components.actuation.allocator:Allocator"
rate_hz = 100
profile = "{PROFILES / f'{allocator_profile}.toml'}"
{extra}
[components.thrusters]
entry = "moonpool.components.actuation.thrusters:Thrusters"
rate_hz = 100
profile = "{vehicle_profile}"

[[connections]]
from = "src.wrench"
to = "allocator.wrench"
[[connections]]
from = "allocator.command"
to = "thrusters.command"
[[connections]]
from = "thrusters.wrench"
to = "vehicle.wrench"
""" if through_thrusters else """
[[connections]]
from = "src.wrench"
to = "vehicle.wrench"
"""
    order = '["src", "allocator", "thrusters", "vehicle"]' if through_thrusters else '["src", "vehicle"]'
    text = f"""
name = "actuation"
[run]
until = "6s"
algorithm = "gauss-seidel"
plots = false
order = {order}
[components.src]
entry = "sources.constant_wrench"
rate_hz = 100
[components.src.parameters]
schedule = {schedule}
[components.vehicle]
entry = "fmu"
rate_hz = 100
profile = "{vehicle_profile}"
[components.vehicle.parameters]
fmu = "{FMU3}"
start_values = {{ volume = 0.0135, init_d = 2.0 }}
[components.vehicle.parameters.inputs.wrench]
type = "moonpool.v1.Wrench"
fields = {WRENCH}
[components.vehicle.parameters.outputs.state]
type = "moonpool.v1.VehicleState"
fields = {STATE}
{chain}
"""
    path = tmp_path / ("chain.toml" if through_thrusters else "direct.toml")
    path.write_text(text)
    return path


def _run(tmp_path, rig_path):
    out = tmp_path / rig_path.stem
    result = run_rig(load_and_check(rig_path), out)
    msgs = {}
    for m in read_recording(out / "recording.mcap"):
        msgs.setdefault(m.topic, []).append(decode_recorded(m))
    return result, msgs


def _vec(w):
    return np.array([w.force_n.x, w.force_n.y, w.force_n.z,
                     w.torque_nm.x, w.torque_nm.y, w.torque_nm.z])


def test_allocated_thrust_drives_the_fmu_like_the_wrench_itself(tmp_path):
    schedule = "[[0.0, 40.0, 0.0, 10.0, 0.0, 0.0, 1.0]]"
    result, msgs = _run(tmp_path, _rig(tmp_path, schedule))
    assert result.ok, result.summary.get("error")
    cmds = msgs["/allocator/command"]
    last = cmds[-1]
    assert len(last.force_n) == 8 and not last.saturated
    np.testing.assert_allclose(_vec(last.achieved), [40, 0, 10, 0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(_vec(last.demanded), [40, 0, 10, 0, 0, 1])
    # after many rotor time constants the thrusters deliver the demand
    np.testing.assert_allclose(_vec(msgs["/thrusters/wrench"][-1]), [40, 0, 10, 0, 0, 1],
                               atol=1e-6)
    assert len(msgs["/thrusters/feedback"][-1].thrusters) == 8
    # and the vehicle moves as when the wrench is applied directly (the rotor lag of
    # 50 ms only delays it a little)
    _, direct = _run(tmp_path, _rig(tmp_path, schedule, through_thrusters=False))
    u_chain = msgs["/vehicle/state"][-1].linear_velocity_body_mps.x
    u_direct = direct["/vehicle/state"][-1].linear_velocity_body_mps.x
    assert u_chain == pytest.approx(u_direct, rel=0.02) and u_chain > 0.3
    m = result.summary["metrics"]["allocator"]
    assert m["saturated_steps"] == 0 and m["solver_fallbacks"] == 0


def test_unattainable_demand_keeps_its_direction(tmp_path):
    schedule = "[[0.0, 400.0, 0.0, 100.0, 0.0, 0.0, 0.0]]"
    result, msgs = _run(tmp_path, _rig(tmp_path, schedule))
    assert result.ok, result.summary.get("error")
    last = msgs["/allocator/command"][-1]
    assert last.saturated and any(last.thruster_saturated)
    a = _vec(last.achieved)
    assert 0 < a[0] < 400 and a[2] / a[0] == pytest.approx(0.25, rel=1e-9)
    np.testing.assert_allclose(a[[1, 3, 4, 5]], 0, atol=1e-9)
    assert result.summary["metrics"]["allocator"]["saturated_steps"] > 0


def test_geometry_that_cannot_produce_an_axis_fails_at_configure(tmp_path):
    rig = _rig(tmp_path, "[[0.0, 10.0, 0, 0, 0, 0, 0]]", allocator_profile="remus100")
    result, _ = _run(tmp_path, rig)
    assert not result.ok
    err = str(result.summary["error"])
    assert err.startswith("component 'allocator': sway (Y), heave (Z), roll (K), pitch (M) "
                          "and yaw (N) cannot be produced by this thruster geometry")
    assert "weights = [1, 0, 0, 0, 0, 0]" in err
