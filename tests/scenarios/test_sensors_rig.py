"""The sensor suite on the hydrodynamics FMU (rigs/sensors.toml), end to end: it runs,
every sensor publishes, GNSS is refused under water while the others are valid, the
gyro follows the true yaw rate, and the whole stream is the same in-process and with
every component in its own process."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import RIGS, moonpool
from moonpool.orchestrator.recording import decode_recorded, read_recording
from moonpool.v1 import common_pb2

pytestmark = pytest.mark.slow


def _run(tmp_path, name, *args):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "sensors.toml"), "--out", str(out), "--quiet",
                    "--until", "8", "--set", "run.plots=false", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


def test_sensor_suite_rig(tmp_path):
    summary, out = _run(tmp_path, "inproc", "--mode", "inproc")
    steps = {k: v["steps"] for k, v in summary["components"].items()}
    assert steps == {"thrust": 800, "vehicle": 800, "imu": 800, "dvl": 40, "pressure": 80,
                     "magnetometer": 160, "gnss": 8}
    by_topic: dict[str, list] = {}
    for m in read_recording(out / "recording.mcap"):
        by_topic.setdefault(m.topic, []).append(decode_recorded(m))
    for topic in ("/imu/imu", "/dvl/dvl", "/pressure/pressure", "/magnetometer/magnetometer"):
        assert all(m.validity.valid for m in by_topic[topic][1:]), topic
    gnss = by_topic["/gnss/gnss"]
    assert all(not m.validity.valid and m.validity.reason == common_pb2.REFUSAL_REASON_UNDER_WATER
               for m in gnss)
    # Each sample is of the state of its own instant (sensors before the vehicle in the
    # Gauss-Seidel order), and the gyro's z rate tracks the true yaw rate in the turn.
    states = {m.header.sim_time_ns: m for m in by_topic["/vehicle/state"]}
    assert all(m.true_angular_rate_radps.z == states[m.header.sim_time_ns].angular_velocity_body_radps.z
               for m in by_topic["/imu/imu"])
    err = [m.angular_rate_radps.z - states[m.header.sim_time_ns].angular_velocity_body_radps.z
           for m in by_topic["/imu/imu"] if m.header.sim_time_ns > 6e9]
    assert abs(np.mean(err)) < 0.01 and np.std(err) < 0.02
    assert max(s.angular_velocity_body_radps.z for s in states.values()) > 0.05


def test_sensor_suite_same_stream_in_processes(tmp_path):
    a, _ = _run(tmp_path, "inproc", "--mode", "inproc")
    b, _ = _run(tmp_path, "process", "--mode", "process")
    assert a["digest"] == b["digest"]
