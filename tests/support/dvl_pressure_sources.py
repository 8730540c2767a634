"""Test-only source for the DVL and pressure sensor tests: a VehicleState that moves
smoothly (position, attitude, velocities all scripted functions of time), stamped at
the step's start time, plus a helper that runs a sensor rig and reads it back."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from moonpool.components import Component, Port, param
from moonpool.v1 import vehicle_pb2


def scripted_state(t: float, depth_m: float, amplitude_m: float) -> dict:
    """The scripted truth at time t (s), as plain numbers."""
    roll, pitch, yaw = 0.05 * math.sin(0.7 * t), 0.04 * math.cos(0.5 * t), 0.3 + 0.05 * t
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return {
        "pos": (0.5 * t, 0.2 * math.sin(0.3 * t), depth_m + amplitude_m * math.sin(0.4 * t)),
        "quat": (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                 cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy),
        "rpy": (roll, pitch, yaw),
        "vel": (0.5 + 0.1 * math.sin(t), 0.06 * math.cos(0.3 * t), 0.4 * amplitude_m * math.cos(0.4 * t)),
        "omega": (0.035 * math.cos(0.7 * t), -0.02 * math.sin(0.5 * t), 0.05),
    }


class ScriptedState(Component):
    """Emits the scripted VehicleState of time t at each step (stamped t)."""

    outputs = (Port("state", vehicle_pb2.VehicleState),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        depth_m: float = param(50.0, "mean depth", unit="m")
        amplitude_m: float = param(1.0, "depth oscillation amplitude", unit="m")

    def configure(self, params):
        self.p = params

    def step(self, t_ns, dt_ns, inputs):
        s = scripted_state(t_ns * 1e-9, self.p.depth_m, self.p.amplitude_m)
        m = vehicle_pb2.VehicleState(header=self.header(t_ns, "ned"))
        m.position_ned_m.x, m.position_ned_m.y, m.position_ned_m.z = s["pos"]
        q = m.orientation
        q.w, q.x, q.y, q.z = s["quat"]
        m.roll_rad, m.pitch_rad, m.yaw_rad = s["rpy"]
        v = m.linear_velocity_body_mps
        v.x, v.y, v.z = s["vel"]
        w = m.angular_velocity_body_radps
        w.x, w.y, w.z = s["omega"]
        m.water_density_kgpm3 = 1025.0
        return {"state": m}


RIG = """
name = "sensor-determinism"
[run]
until = "{until}"
seed = {seed}
algorithm = "gauss-seidel"
order = ["src", "{name}"]
plots = false

[components.src]
entry = "dvl_pressure_sources:ScriptedState"
rate_hz = {rate}
[components.src.parameters]
depth_m = {depth}

[components.{name}]
entry = "{entry}"
run = "process"
rate_hz = {rate}
[components.{name}.parameters]
{params}

[[connections]]
from = "src.state"
to = "{name}.state"
"""


def run_sensor_rig(tmp_path: Path, *, name: str, entry: str, params: str, port: str,
                   seed: int = 7, rate: int = 10, until: str = "3s", depth: float = 50.0):
    """Run src -> sensor (sensor in a child process); return (states, outputs) decoded
    from the recording, each a list of messages in publication order."""
    from moonpool.orchestrator.recording import decode_recorded, read_recording
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig_file = tmp_path / f"{name}.toml"
    rig_file.write_text(RIG.format(until=until, seed=seed, name=name, rate=rate, depth=depth,
                                   entry=entry, params=params))
    result = run_rig(load_and_check(rig_file), tmp_path / "out")
    assert result.summary["status"] == "ok", result.summary.get("error")
    assert result.summary["components"][name]["placement"] == "process"
    states, outputs = [], []
    for m in read_recording(tmp_path / "out" / "recording.mcap"):
        if m.topic == "/src/state":
            states.append(decode_recorded(m))
        elif m.topic == f"/{name}/{port}":
            outputs.append(decode_recorded(m))
    return states, outputs


def truth_arrays(states) -> dict:
    """Stacked arrays of recorded VehicleStates."""
    def v3(v):
        return [v.x, v.y, v.z]
    return {
        "t_ns": np.array([s.header.sim_time_ns for s in states]),
        "pos": np.array([v3(s.position_ned_m) for s in states]),
        "quat": np.array([[s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z]
                          for s in states]),
        "vel": np.array([v3(s.linear_velocity_body_mps) for s in states]),
        "omega": np.array([v3(s.angular_velocity_body_radps) for s in states]),
    }
