"""rigs/hydro_fmu.toml: the hydrodynamics FMU through the generic fmu component.

Terminal surge speed under a constant force X matches the closed form
u = (-D1 + sqrt(D1^2 + 4 D2 X)) / (2 D2); FMI 3 and FMI 2 FMUs, in-process or in a
child process, give the same message stream (bit for bit: same digest).
"""

from __future__ import annotations

import math

import pytest
from conftest import RIGS

from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

RIG = RIGS / "hydro_fmu.toml"


def _states(path):
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [(m.log_time, msg) for _, ch, m, msg in reader.iter_decoded_messages(
            topics=["/vehicle/state"])]


def test_terminal_surge_speed_matches_closed_form(tmp_path):
    rig = load_and_check(RIG)
    result = run_rig(rig, tmp_path / "out")
    assert result.ok, result.summary["error"]
    states = _states(tmp_path / "out" / "recording.mcap")
    assert len(states) == 2001  # initial outputs + 2000 steps
    # Stamped t + dt: the state after the step (Gauss-Seidel: visible at t).
    assert states[0][1].header.sim_time_ns == 0
    assert states[1][1].header.sim_time_ns == 10_000_000
    profile = rig.component("vehicle").parameters["profile"]["parameters"]
    d1, d2, x = profile["D1_u"], profile["D2_u"], 40.0
    expected = (-d1 + math.sqrt(d1 * d1 + 4 * d2 * x)) / (2 * d2)
    at_15s = next(s for _, s in states if s.header.sim_time_ns == 15_000_000_000)
    u = at_15s.linear_velocity_body_mps.x
    assert u == pytest.approx(expected, rel=1e-9)
    assert abs(at_15s.position_ned_m.z - 2.0) < 1e-9  # neutrally buoyant, starts at 2 m
    final = states[-1][1]
    assert final.linear_velocity_body_mps.x < 0.05 * expected  # coasted down
    assert (tmp_path / "out" / "plots" / "surge-speed.png").exists()


@pytest.mark.slow
def test_fmi2_and_child_process_give_the_same_stream(tmp_path):
    digests = {}
    variants = {
        "fmi3-inproc": [],
        "fmi2-inproc": ["components.vehicle.parameters.fmu=../fmus/build/hydrodynamics-fmi2.fmu"],
        "fmi3-process": ["components.vehicle.run=process"],
    }
    for label, sets in variants.items():
        rig = load_and_check(RIG, [*sets, "run.until=2s", "run.record=false"])
        result = run_rig(rig, tmp_path / label)
        assert result.ok, (label, result.summary["error"])
        digests[label] = result.summary["digest"]
    assert len(set(digests.values())) == 1, digests
