"""Test-only truth source for the magnetometer, USBL and GNSS tests: a VehicleState
(and a ThrusterFeedback) that is a closed-form function of time, so a test can
recompute the truth each sensor sample saw, plus a helper that runs a sensor in a
child process behind this source and returns its recorded messages.

The trajectory moves north at 8 m/s, bobs through the surface (depth 1.0 sin 0.7t:
GNSS valid / refused, USBL transponder above the surface) and tumbles (roll, pitch,
yaw all varying), with a total thruster current of 5 + 3 sin t A.
"""

from __future__ import annotations

import math
import numpy as np

from moonpool.components import Component, Port
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.v1 import vehicle_pb2


def trajectory(t: float) -> tuple[np.ndarray, np.ndarray]:
    """(position NED (3,), quaternion (4,) w x y z) at time t, s."""
    pos = np.array([8.0 * t, 3.0 * math.sin(t), 1.0 * math.sin(0.7 * t)])
    quat = quat_from_euler(0.9 * math.sin(0.5 * t), 0.6 * math.sin(0.3 * t + 1.0), 0.8 * t)
    return pos, quat


def thruster_currents(t: float) -> list[float]:
    """Per-thruster currents at time t, A (they sum to 5 + 3 sin t)."""
    return [2.0 + 1.0 * math.sin(t), 3.0 + 2.0 * math.sin(t)]


class TrajectorySource(Component):
    """Emits the closed-form trajectory state (stamped with the step time) and the
    thruster currents."""

    outputs = (
        Port("state", vehicle_pb2.VehicleState, "closed-form truth"),
        Port("thrusters", vehicle_pb2.ThrusterFeedback, "thruster currents"),
    )

    def step(self, t_ns, dt_ns, inputs):
        t = t_ns * 1e-9
        pos, quat = trajectory(t)
        st = vehicle_pb2.VehicleState(header=self.header(t_ns, "ned"))
        st.position_ned_m.x, st.position_ned_m.y, st.position_ned_m.z = pos
        st.orientation.w, st.orientation.x, st.orientation.y, st.orientation.z = quat
        fb = vehicle_pb2.ThrusterFeedback(header=self.header(t_ns, "body"))
        for c in thruster_currents(t):
            fb.thrusters.add(current_a=c)
        return {"state": st, "thrusters": fb}


RIG = """
name = "{name}"
[run]
until = "{until}"
seed = {seed}
algorithm = "gauss-seidel"
order = ["src", "dut"]
plots = false

[components.src]
entry = "navsensor_sources:TrajectorySource"
rate_hz = {rate}

[components.dut]
entry = "{entry}"
run = "process"
rate_hz = {rate}
[components.dut.parameters]
{parameters}

[[connections]]
from = "src.state"
to = "dut.state"
{extra}
"""


def _toml(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def run_sensor_in_process(tmp_path, entry: str, port: str, parameters: dict, *, seed: int = 7,
                          until: str = "6s", rate: int = 10, thrusters: bool = False) -> list:
    """Run ``entry`` as a child process behind TrajectorySource (Gauss-Seidel: the
    sensor at t sees the state of t). Returns the decoded messages of ``dut.PORT``."""
    from moonpool.orchestrator.recording import decode_recorded, read_recording
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    extra = '[[connections]]\nfrom = "src.thrusters"\nto = "dut.thrusters"\n' if thrusters else ""
    text = RIG.format(name="navsensor", until=until, seed=seed, rate=rate, entry=entry,
                      parameters="\n".join(f"{k} = {_toml(v)}" for k, v in parameters.items()),
                      extra=extra)
    rig_file = tmp_path / "rig.toml"
    rig_file.write_text(text)
    result = run_rig(load_and_check(rig_file), tmp_path / "out")
    assert result.ok, result.summary.get("error")
    assert result.summary["components"]["dut"]["placement"] == "process"
    return [decode_recorded(m) for m in read_recording(tmp_path / "out" / "recording.mcap")
            if m.topic == f"/dut/{port}"]
