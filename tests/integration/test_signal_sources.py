"""Signal sources (sources.signal): each kind's values at exact ns instants, on any
numeric field of any message type; problems listed at once by `moonpool check`; the
shipped rig driving the hydrodynamics FMU runs, the same in inproc and process mode;
CSV and recording playback."""

from __future__ import annotations

import math

import pytest
from conftest import RIGS, moonpool

from moonpool.components.sdk.errors import ParameterError, RigValidationError
from moonpool.components.sources.signal import SignalParameters, SignalSource
from moonpool.orchestrator.recording import read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.v1 import vehicle_pb2


def _source(**kw) -> SignalSource:
    c = SignalSource()
    c.name = "src"
    c.configure(SignalParameters(**kw))
    return c


def _values(c, path, times):
    out = []
    for t in times:
        msg = next(iter(c.step(t, 1, {}).values()))
        for part in path.split("."):
            msg = getattr(msg, part)
        out.append(msg)
    return out


def test_step_and_ramp_switch_at_the_exact_nanosecond():
    c = _source(type="moonpool.v1.Wrench", fields={
        "force_n.x": {"kind": "step", "at": "1.5s", "initial": -1.0, "final": 40.0},
        "force_n.y": {"kind": "ramp", "start": 1, "end": "3s", "initial": 0.0, "final": 4.0}})
    ts = [0, 1_499_999_999, 1_500_000_000, 2_000_000_000, 5_000_000_000]
    assert _values(c, "force_n.x", ts) == [-1.0, -1.0, 40.0, 40.0, 40.0]
    assert _values(c, "force_n.y", ts) == [0.0, pytest.approx(0.999999998), 1.0, 2.0, 4.0]
    assert c.step(7, 1, {})["out"].header.sim_time_ns == 7


def test_sine_and_chirps_follow_their_formulas():
    c = _source(type="moonpool.v1.Wrench", fields={
        "force_n.x": {"kind": "sine", "amplitude": 2.0, "frequency_hz": 0.5, "offset": 1.0,
                      "start": "1s"},
        "force_n.y": {"kind": "chirp", "amplitude": 1.0, "f0_hz": 1.0, "f1_hz": 3.0,
                      "duration": 2},
        "force_n.z": {"kind": "chirp", "amplitude": 1.0, "f0_hz": 1.0, "f1_hz": 4.0,
                      "duration": 2, "method": "logarithmic"}})
    t = 1_700_000_000
    tau = t * 1e-9
    (x,) = _values(c, "force_n.x", [t])
    assert x == pytest.approx(1.0 + 2.0 * math.sin(2 * math.pi * 0.5 * (tau - 1.0)), abs=1e-12)
    assert _values(c, "force_n.x", [999_999_999]) == [1.0]  # offset before start
    (y,) = _values(c, "force_n.y", [t])
    assert y == pytest.approx(math.sin(2 * math.pi * (tau + 2.0 * tau**2 / 4)), abs=1e-12)
    (z,) = _values(c, "force_n.z", [t])
    k = 4.0
    assert z == pytest.approx(math.sin(2 * math.pi * 2 * (k ** (tau / 2) - 1) / math.log(k)),
                              abs=1e-12)
    assert _values(c, "force_n.y", [2_000_000_000]) == [0.0]  # over after its duration


def test_integer_and_boolean_fields_of_another_message_type():
    c = _source(type="moonpool.v1.Signals",
                fields={"header.seq": {"kind": "ramp", "start": 0, "end": 1, "final": 10.0}})
    assert _values(c, "header.seq", [0, 440_000_000]) == [0, 4]


def test_problems_are_listed_together_with_did_you_mean():
    with pytest.raises(ParameterError) as info:
        SignalParameters(type="moonpool.v1.Wrench", fields={
            "force_n.xx": {"kind": "step", "at": 1, "final": 2},
            "header.source": {"kind": "constant", "value": 1},
            "force_n.y": {"kind": "sin", "amplitude": 1},
            "force_n.z": {"kind": "ramp", "start": 2, "end": 1, "final": 3, "frm": 0}})
    text = str(info.value)
    assert text.startswith("component") or "5 problem(s)" in text  # one per mistake
    assert "has no field 'xx' (did you mean 'x'?)" in text
    assert "'header.source' is a string or bytes field, not a number" in text
    assert "kind 'sin' is not one of" in text and "(did you mean 'sine'?)" in text
    assert "unknown key 'frm'" in text and "end must be after start" in text
    with pytest.raises(ParameterError, match="unknown message type 'moonpool.v1.Wrenc'"):
        SignalParameters(type="moonpool.v1.Wrenc", fields={"x": {"kind": "constant", "value": 1}})


def test_check_lists_the_problems_of_a_rig(tmp_path):
    rig = tmp_path / "rig.toml"
    rig.write_text('[run]\nuntil = "1s"\n[components.s]\nentry = "sources.signal"\nrate_hz = 10\n'
                   '[components.s.parameters]\ntype = "moonpool.v1.Wrench"\n'
                   'fields = { "force_n.q" = { kind = "step", at = 1, final = 1 } }\n')
    r = moonpool("check", str(rig))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "has no field 'q'" in r.stdout + r.stderr


def test_csv_and_recording_playback(tmp_path):
    (tmp_path / "thrust.csv").write_text("t_s,fx,fz\n0,1.0,0\n0.5,3.0,0\n1.0,5.0,2\n")
    c = _source(type="moonpool.v1.Wrench", csv=tmp_path / "thrust.csv", fields={
        "force_n.x": {"kind": "csv", "column": "fx", "interpolation": "linear"},
        "force_n.z": {"kind": "csv", "column": "fz", "scale": 10.0}})
    ts = [0, 250_000_000, 500_000_000, 999_999_999, 3_000_000_000]
    assert _values(c, "force_n.x", ts) == [1.0, 2.0, 3.0, pytest.approx(5.0), 5.0]
    assert _values(c, "force_n.z", ts) == [0.0, 0.0, 0.0, 0.0, 20.0]
    with pytest.raises(ParameterError, match=r"no column 'fxx'.*did you mean 'fx'"):
        SignalParameters(type="moonpool.v1.Wrench", csv=tmp_path / "thrust.csv",
                         fields={"force_n.x": {"kind": "csv", "column": "fxx"}})

    # play back the surge speed of a short recorded run of the shipped signal rig
    rig = load_and_check(RIGS / "hydro_fmu_signals.toml", ["run.until=0.3s", "run.plots=false"])
    result = run_rig(rig, tmp_path / "run")
    assert result.ok, result.summary["error"]
    recorded = {m.log_time_ns: vehicle_pb2.VehicleState.FromString(m.payload)
                for m in read_recording(tmp_path / "run" / "recording.mcap")
                if m.topic == "/vehicle/state"}
    c = _source(type="moonpool.v1.Wrench", recording=tmp_path / "run" / "recording.mcap",
                fields={"force_n.x": {"kind": "recording", "topic": "/vehicle/state",
                                      "field": "linear_velocity_body_mps.x"}})
    t = sorted(recorded)[-1]
    assert _values(c, "force_n.x", [t]) == [recorded[t].linear_velocity_body_mps.x]


def test_shipped_signal_rig_same_digest_inproc_and_process(tmp_path):
    sets = ["run.until=6s", "run.plots=false", "run.record=false"]
    digests = []
    for mode in ("inproc", "process"):
        rig = load_and_check(RIGS / "hydro_fmu_signals.toml", sets, mode=mode)
        result = run_rig(rig, tmp_path / mode)
        assert result.ok, result.summary["error"]
        digests.append(result.summary["digest"])
    assert digests[0] == digests[1]


def test_check_refuses_a_source_with_a_missing_csv(tmp_path):
    rig = tmp_path / "rig.toml"
    rig.write_text('[run]\nuntil = "1s"\n[components.s]\nentry = "sources.signal"\nrate_hz = 10\n'
                   '[components.s.parameters]\ntype = "moonpool.v1.Wrench"\ncsv = "nope.csv"\n'
                   'fields = { "force_n.x" = { kind = "csv", column = "fx" } }\n')
    with pytest.raises(RigValidationError, match="cannot read the csv file"):
        load_and_check(rig)
