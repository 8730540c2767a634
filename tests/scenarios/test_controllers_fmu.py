"""Both controllers close the loop on the real hydrodynamics FMU (BlueROV2 Heavy).

Truth feedback, a plain wrench path (controller → FMU ``tau_*`` inputs, no allocator
and no thruster dynamics) and a steady current the controllers do not know of. One
4-DOF setpoint step from (0, 0, 1 m, 0°) to (0.8, −0.5, 1.5 m, 90°), 25 s; the T1
task component issues the setpoint and scores the late hold (15–25 s) on the truth.
"""

from __future__ import annotations

import math

import pytest
from conftest import ROOT
from moonpool.orchestrator.recording import decode_recorded, read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow

PROFILE = ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml"
CONTROLLERS = {
    "pid": "moonpool.components.control.pid:WorldFramePid",
    "nmpc": "moonpool.components.control.nmpc:Nmpc",
}
STATE_FIELDS = (
    '"position_ned_m.x" = "n", "position_ned_m.y" = "e", "position_ned_m.z" = "d", '
    '"orientation.w" = "qw", "orientation.x" = "qx", "orientation.y" = "qy", "orientation.z" = "qz", '
    '"roll_rad" = "roll", "pitch_rad" = "pitch", "yaw_rad" = "yaw", '
    '"linear_velocity_body_mps.x" = "u", "linear_velocity_body_mps.y" = "v", '
    '"linear_velocity_body_mps.z" = "w", "angular_velocity_body_radps.x" = "p", '
    '"angular_velocity_body_radps.y" = "q", "angular_velocity_body_radps.z" = "r"'
)
WRENCH_FIELDS = (
    '"force_n.x" = "tau_X", "force_n.y" = "tau_Y", "force_n.z" = "tau_Z", '
    '"torque_nm.x" = "tau_K", "torque_nm.y" = "tau_M", "torque_nm.z" = "tau_N"'
)


def _rig(controller: str, fmu) -> str:
    return f"""
name = "controllers_fmu_{controller}"
[run]
until = "25s"
algorithm = "gauss-seidel"
order = ["t1", "controller", "vehicle"]
plots = false

[components.t1]
entry = "moonpool.components.tasks.components:StationKeeping"
rate_hz = 10
[components.t1.parameters]
setpoints = [[0.8, -0.5, 1.5, 90.0]]
trial_s = 25.0
window_start_s = 15.0
window_end_s = 25.0

[components.controller]
entry = "{CONTROLLERS[controller]}"
rate_hz = 10
profile = "{PROFILE}"

[components.vehicle]
entry = "fmu"
rate_hz = 100
profile = "{PROFILE}"
[components.vehicle.parameters]
fmu = "{fmu}"
start_values = {{ init_d = 1.0, current_n = 0.1, current_e = 0.05 }}
[components.vehicle.parameters.inputs.wrench]
type = "moonpool.v1.Wrench"
fields = {{ {WRENCH_FIELDS} }}
[components.vehicle.parameters.outputs.state]
type = "moonpool.v1.VehicleState"
fields = {{ {STATE_FIELDS} }}

[[connections]]
from = "t1.setpoint"
to = "controller.setpoint"
[[connections]]
from = "vehicle.state"
to = "controller.state"
[[connections]]
from = "vehicle.state"
to = "t1.state"
[[connections]]
from = "controller.wrench"
to = "vehicle.wrench"
"""


@pytest.mark.parametrize("controller", ["pid", "nmpc"])
def test_controller_holds_a_4dof_setpoint_on_the_fmu(tmp_path, fmus, controller):
    rig_file = tmp_path / "rig.toml"
    rig_file.write_text(_rig(controller, fmus[3]))
    result = run_rig(load_and_check(rig_file), tmp_path / "out")
    assert result.ok, result.summary["error"]
    t1 = result.summary["metrics"]["t1"]
    trial = t1["per_trial"][0]
    print(controller, "T1 step:", trial)
    assert trial["position_rmse_m"] < 0.02
    assert trial["yaw_rmse_deg"] < 1.0
    assert trial["max_tilt_deg"] < 10.0
    assert trial["success"]

    # It got there by moving (not because it started there), and the wrench is a body wrench.
    msgs = [decode_recorded(m) for m in read_recording(tmp_path / "out" / "recording.mcap")
            if m.topic == "/controller/wrench"]
    assert len(msgs) == 250 and all(m.header.frame_id == "body" for m in msgs)
    assert max(abs(m.force_n.x) + abs(m.force_n.y) for m in msgs) > 10.0
    assert max(abs(m.torque_nm.z) for m in msgs) > 0.5
    states = [decode_recorded(m) for m in read_recording(tmp_path / "out" / "recording.mcap")
              if m.topic == "/vehicle/state"]
    last = states[-1]
    assert math.hypot(last.position_ned_m.x - 0.8, last.position_ned_m.y + 0.5) < 0.02
    assert abs(math.remainder(last.yaw_rad - math.pi / 2, 2 * math.pi)) < math.radians(1)

    metrics = result.summary["metrics"]["controller"]
    if controller == "nmpc":
        assert metrics["failures"] == 0 and metrics["solves"] == 250
