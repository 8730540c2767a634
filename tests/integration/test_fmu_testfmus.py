"""The generic FMU component against fmpy.simulate_fmu, on moonpool's own test FMUs
(fmus/testfmus/, C, built by fmus/build_fmus.py): bouncing ball (state events), stair
(time events), Robertson (stiff), feedthrough of every type (discrete inputs), FMI 3
arrays — FMI 2 and 3, co-simulation and model exchange.

Co-simulation must equal fmpy exactly; model exchange (CVODE, rtol 1e-8, the same
largest step as fmpy's) within 1e-6 relative of fmpy's CVODE; the bouncing ball's
bounce times within 1e-6 s of the closed form. The component is driven the way the
orchestrator drives it (configure, initialize, step), and one rig runs end to end.
"""

from __future__ import annotations

import math
import shutil
import zipfile

import numpy as np
import pytest
from conftest import ROOT

from moonpool.components.fmi import FmuComponent, FmuParameters
from moonpool.components.fmi.mapping import plan
from moonpool.components.sdk.errors import ParameterError, PortError, StepFailed
from moonpool.v1 import signals_pb2

B = ROOT / "fmus" / "build" / "testfmus"


def _fmu(name: str, version: int):
    path = B / f"{name}-fmi{version}.fmu"
    if not path.exists():
        pytest.skip(f"{path.name} not built (python fmus/build_fmus.py)")
    return path


def _component(fmu, outputs, inputs=(), **params):
    c = FmuComponent()
    c.name = "dut"
    p = FmuParameters(fmu=fmu, outputs={"out": {"type": "moonpool.v1.Signals",
                                                "fields": {n: n for n in outputs}}},
                      inputs={"in": {"type": "moonpool.v1.Signals",
                                     "fields": {n: n for n in inputs}}} if inputs else {},
                      **params)
    c.configure(p)
    return c


def _values(msg) -> dict[str, float]:
    return {s.name: s.value for s in msg.signals}


def _run(c, outputs, until_s, dt_s, inputs_at=None):
    """(time, outputs...) rows at every communication point, as a rig records them."""
    dt = round(dt_s * 1e9)
    first = _values(c.initialize(0)["out"])
    rows = [[0.0, *(first[n] for n in outputs)]]
    t = 0
    try:
        while t < round(until_s * 1e9):
            ins = {} if inputs_at is None else {"in": inputs_at(t * 1e-9)}
            out = c.step(t, dt, ins)
            t += dt
            rows.append([t * 1e-9, *(_values(out["out"])[n] for n in outputs)])
    finally:
        c.terminate()
    return np.array(rows)


def _fmpy(fmu, kind, outputs, until_s, dt_s, **kw):
    import fmpy

    r = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=until_s, output_interval=dt_s,
                          output=list(outputs), validate=False, **kw)
    return np.array([[row["time"], *(row[n] for n in outputs)] for row in r])


CASES = {  # model: (outputs, until, communication step)
    "bouncingball": (("h", "v", "bounces", "t_bounce"), 2.0, 0.01),
    "stair": (("counter", "y"), 3.5, 0.1),
    "robertson": (("y1", "y2", "y3"), 2.0, 0.01),
}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("model", list(CASES))
def test_co_simulation_equals_fmpy_exactly(model, version):
    outputs, until, dt = CASES[model]
    fmu = _fmu(model, version)
    ours = _run(_component(fmu, outputs, fmi_type="cs"), outputs, until, dt)
    ref = _fmpy(fmu, "CoSimulation", outputs, until, dt)
    assert ours.shape == ref.shape
    # fmpy's step sizes are differences of start + n * interval (0.07 - 0.06 =
    # 0.010000000000000009), ours whole nanoseconds: the test FMUs integrate on their
    # own grid t0 + n h, so the results are bit-identical all the same
    assert np.array_equal(ours[:, 1:], ref[:, 1:]), np.abs(ours[:, 1:] - ref[:, 1:]).max()


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("model", list(CASES))
def test_model_exchange_within_1e6_of_fmpy_cvode(model, version):
    """Defect (issue 19): model exchange stopped at the first state event (bouncing ball,
    Robertson could not run)."""
    outputs, until, dt = CASES[model]
    fmu = _fmu(model, version)
    ours = _run(_component(fmu, outputs, fmi_type="me", rtol=1e-8, max_step=until / 50),
                outputs, until, dt)
    ref = _fmpy(fmu, "ModelExchange", outputs, until, dt, relative_tolerance=1e-8,
                record_events=False)
    assert ours.shape == ref.shape
    scale = np.maximum(np.abs(ref[:, 1:]).max(axis=0), 1e-30)
    rel = (np.abs(ours[:, 1:] - ref[:, 1:]) / scale).max()
    assert rel < 1e-6, rel


def _bounce_times(h0=1.0, g=9.81, e=0.7, n=4):
    t, v, out = math.sqrt(2 * h0 / g), math.sqrt(2 * g * h0), []
    for _ in range(n):
        out.append(t)
        v *= e
        t += 2 * v / g
    return out


@pytest.mark.parametrize("solver", ["cvode", "rk4"])
@pytest.mark.parametrize("version", [2, 3])
def test_bounce_times_match_the_closed_form(version, solver):
    outputs = ("bounces", "t_bounce")
    c = _component(_fmu("bouncingball", version), outputs, fmi_type="me", solver=solver,
                   rtol=1e-10)
    rows = _run(c, outputs, 2.0, 0.01)
    times = [rows[np.argmax(rows[:, 1] >= k), 2] for k in range(1, 5)]
    assert rows[-1, 1] == 4
    assert np.abs(np.array(times) - _bounce_times()).max() < 1e-6, times


def _signals(**values):
    return signals_pb2.Signals(signals=[signals_pb2.Signal(name=k, value=v)
                                        for k, v in values.items()])


@pytest.mark.parametrize("kind", ["me", "cs"])
@pytest.mark.parametrize("version", [2, 3])
def test_discrete_inputs_and_tunable_parameters_in_model_exchange(version, kind):
    """Defect (issue 19): discrete inputs and tunable parameters could not be set in
    model exchange (fmi2SetReal ... can only be set in event mode)."""
    ins = ("real_c_in", "real_d_in", "int_in", "bool_in", "enum_in", "gain")
    outs = ("real_c_out", "real_d_out", "int_out", "bool_out", "enum_out", "scaled")
    c = _component(_fmu("feedthrough", version), outs, ins, fmi_type=kind)

    def inputs(t):
        k = round(t / 0.1)
        return _signals(real_c_in=1.5 * k, real_d_in=-k, int_in=k, bool_in=k % 2,
                        enum_in=1 + k % 3, gain=2.0 + k)
    rows = _run(c, outs, 0.5, 0.1, inputs)
    for row in rows[1:]:  # the output at t + dt shows the inputs set at t
        k = round(row[0] / 0.1) - 1
        assert list(row[1:]) == [1.5 * k, -k, k, k % 2, 1 + k % 3, (2.0 + k) * 1.5 * k], row


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("field,value,accepts", [
    ("int_in", 2**31, "[-2147483648, 2147483647]"),
    ("int_in", 0.5, "whole numbers"),
    ("bool_in", 0.4, "0 / false or 1 / true only"),
    ("enum_in", 7, "red = 1, green = 2, blue = 3"),
])
def test_out_of_range_inputs_are_refused(version, field, value, accepts):
    """Defect (issue 19): out-of-range values were written silently (300 -> 44 in a UInt8,
    -1 -> 1.8e19 in a UInt64, 0.4 -> true)."""
    c = _component(_fmu("feedthrough", version), ("int_out",), (field,), fmi_type="cs")
    c.initialize(0)
    try:
        with pytest.raises(PortError) as info:
            c.step(0, 10**8, {"in": _signals(**{field: value})})
    finally:
        c.terminate()
    text = str(info.value)
    assert "feedthrough" in text and field in text and repr(value) in text and accepts in text


@pytest.mark.parametrize("field,value,accepts", [
    ("u8_in", 300, "[0, 255]"), ("u64_in", -1, "[0, 18446744073709551615]"),
    ("i8_in", -129, "[-128, 127]"), ("u16_in", 65536, "[0, 65535]"),
])
def test_fmi3_integer_types_are_range_checked(field, value, accepts):
    c = _component(_fmu("feedthrough", 3), ("u8_out", "u64_out"), (field,), fmi_type="me")
    c.initialize(0)
    try:
        c.step(0, 10**8, {"in": _signals(u8_in=255, u64_in=2**53)})  # in range: fine
        with pytest.raises(PortError) as info:
            c.step(10**8, 10**8, {"in": _signals(**{field: value})})
    finally:
        c.terminate()
    assert field in str(info.value) and accepts in str(info.value), str(info.value)


def test_enumeration_start_value_by_name():
    c = _component(_fmu("feedthrough", 3), ("enum_out",), fmi_type="cs",
                   start_values={"enum_in": "blue"})
    try:
        assert _values(c.initialize(0)["out"])["enum_out"] == 3
    finally:
        c.terminate()
    with pytest.raises(ParameterError, match="not an item"):
        plan(FmuParameters(fmu=_fmu("feedthrough", 3), start_values={"enum_in": "purple"}))


def test_fmi3_arrays_are_refused_by_check():
    """Defect (issue 19): FMI 3 array variables passed moonpool check and failed at run
    time (Expected nValues >= 3 but was 1)."""
    with pytest.raises(ParameterError) as info:
        plan(FmuParameters(fmu=_fmu("arrays", 3), inputs={
            "in": {"type": "moonpool.v1.Signals", "fields": {"u": "u"}}}))
    assert "FMI 3 array" in str(info.value) and "3 values" in str(info.value)


def test_scheduled_execution_refusal_says_what_it_is(tmp_path):
    """Defect (issue 19): an FMI 3 ScheduledExecution FMU was refused as implementing
    "neither interface"."""
    src = _fmu("stair", 3)
    dst = tmp_path / "scheduled.fmu"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "modelDescription.xml":
                text = data.decode()
                start = text.index("  <ModelExchange")
                end = text.index("/>", text.index("<CoSimulation")) + 2
                data = (text[:start] + '  <ScheduledExecution modelIdentifier="stair"/>'
                        + text[end:]).encode()
            zout.writestr(item, data)
    with pytest.raises(ParameterError) as info:
        plan(FmuParameters(fmu=dst))
    text = str(info.value)
    assert "Scheduled Execution" in text and "neither" not in text, text
    _ = shutil, StepFailed


@pytest.mark.parametrize("version", [2, 3])
def test_hydro_fmu_me_with_tunable_d2u_as_an_input(version):
    """Defect (issue 19): our hydrodynamics FMU in model exchange with the tunable
    parameter D2_u mapped as an input failed (it can only be set in event mode). Now
    it runs, and the change takes effect at the next step: from the step where D2_u
    goes from 141 to 1410 N s2/m2, the surge deceleration du at t + dt differs."""
    fmu = ROOT / "fmus" / "build" / f"hydrodynamics-fmi{version}.fmu"
    outs = ("u", "du")

    def run(d2u_after):
        c = _component(fmu, outs, ("D2_u", "tau_X"), fmi_type="me",
                       start_values={"init_u": 1.0})
        return _run(c, outs, 0.1, 0.01, lambda t: _signals(
            D2_u=141.0 if t < 0.05 - 1e-9 else d2u_after, tau_X=0.0))
    same, changed = run(141.0), run(1410.0)
    k = 6  # row of t = 0.06 s: the first output after D2_u was set at t = 0.05 s
    assert np.array_equal(same[:k], changed[:k])
    assert changed[k, 2] < same[k, 2] - 1.0  # much stronger quadratic damping at once


@pytest.mark.parametrize("kind", ["cs", "me"])
@pytest.mark.parametrize("version", [2, 3])
def test_fmu_state_save_and_restore(version, kind):
    """get/set/serialize the FMU state: a run restored at t = 1 s (in the same component,
    and in a fresh one from the serialized bytes) repeats the original exactly."""
    outputs = ("h", "v", "bounces")
    fmu = _fmu("bouncingball", version)
    dt = 10**7

    def steps(c, t0, n):
        rows = []
        for k in range(n):
            out = _values(c.step(t0 + k * dt, dt, {})["out"])
            rows.append([out[o] for o in outputs])
        return np.array(rows)
    c = _component(fmu, outputs, fmi_type=kind)
    c.initialize(0)
    steps(c, 0, 100)
    state = c.get_state()
    data = c.save_state()
    first = steps(c, 10**9, 100)
    c.set_state(state)
    again = steps(c, 10**9, 100)
    c.free_state(state)
    assert np.array_equal(first, again)
    fork = _component(fmu, outputs, fmi_type=kind)
    fork.initialize(0)
    fork.restore_state(data)
    forked = steps(fork, 10**9, 100)
    assert np.array_equal(first, forked)
    assert first[-1, 2] == 4  # it bounced on the way
    with pytest.raises(StepFailed, match="not a state saved"):
        fork.restore_state(b"nonsense")
    c.terminate()
    fork.terminate()


STAIR_RIG = """
[run]
until = "10s"
[components.stair]
entry = "fmu"
rate_hz = 10
{run}
[components.stair.parameters]
fmu = "{fmu}"
fmi_type = "{kind}"
start_values = {{ {start} }}
{extra}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ counter = "counter" }} }}
"""


def _stair_run(tmp_path, version, kind, run="", extra="", start="stop_count = 3"):
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig = tmp_path / "rig.toml"
    rig.write_text(STAIR_RIG.format(fmu=_fmu("stair", version).as_posix(), kind=kind, run=run,
                                    extra=extra, start=start))
    return run_rig(load_and_check(rig), tmp_path / "out")


@pytest.mark.parametrize("kind", ["cs", "me"])
@pytest.mark.parametrize("version", [2, 3])
def test_fmu_requested_termination_ends_the_run_cleanly(tmp_path, version, kind):
    """Defect (issue 19): a termination requested by the FMU failed the run and the last
    sample was lost (FMI 2 reported only "discard"). The stair asks to terminate when
    its counter reaches 3, at t = 3 s."""
    result = _stair_run(tmp_path, version, kind)
    s = result.summary
    assert s["status"] == "terminated" and result.exit_code == 0, s["error"]
    assert s["terminated"]["component"] == "stair"
    assert s["terminated"]["time_s"] == pytest.approx(3.0)
    assert f"stair-fmi{version}.fmu' requested termination at t=3 s" in s["terminated"]["reason"]
    assert s["sim_time_s"] == pytest.approx(3.0)
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(tmp_path / "out" / "recording.mcap", "rb") as f:
        msgs = [m for *_, m in make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(topics=["/stair/out"])]
    assert len(msgs) == 31  # t = 0, 0.1, ..., 3.0: the last sample is recorded
    assert msgs[-1].header.sim_time_ns == 3 * 10**9 and msgs[-1].signals[0].value == 3


def test_fmu_requested_termination_through_a_process(tmp_path):
    """The same across the wire: StepResult.finished from a child process."""
    result = _stair_run(tmp_path, 2, "cs", run='run = "process"')
    assert result.summary["status"] == "terminated", result.summary["error"]
    assert result.summary["terminated"]["time_s"] == pytest.approx(3.0)
    assert result.summary["sim_time_s"] == pytest.approx(3.0)
    assert result.summary["messages"] == 31  # the step after 3 s, already sent, is dropped


def test_fmu_requested_termination_as_an_error(tmp_path):
    result = _stair_run(tmp_path, 3, "cs", extra="terminate_is_error = true")
    assert result.summary["status"] == "failed" and result.exit_code == 1
    assert "requested termination at t=3 s" in result.summary["error"]


CHAIN_RIG = """
[run]
until = "0.3s"
[components.a]
entry = "fmu"
rate_hz = 10
[components.a.parameters]
fmu = "{fmu}"
fmi_type = "cs"
start_values = {{ real_c_in = 2.5, int_in = 7 }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out", k = "int_out" }} }}
[components.b]
entry = "fmu"
rate_hz = 10
{run}
[components.b.parameters]
fmu = "{fmu}"
fmi_type = "{kind}"
inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in", k = "int_in" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out", k = "int_out" }} }}
[[connections]]
from = "a.out"
to = "b.in"
"""


@pytest.mark.parametrize("kind,run", [("cs", ""), ("me", ""), ("cs", 'run = "process"')])
@pytest.mark.parametrize("version", [2, 3])
def test_t0_output_of_a_feedthrough_equals_its_t0_input(tmp_path, version, kind, run):
    """Defect (issue 19): the inputs at t = 0 were not applied before initialization, so
    the first outputs ignored them. Now they are set in initialization mode: b's first
    output is a's first output (2.5, 7), not b's start values (0, 0)."""
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig = tmp_path / "rig.toml"
    rig.write_text(CHAIN_RIG.format(fmu=_fmu("feedthrough", version).as_posix(), kind=kind,
                                    run=run))
    result = run_rig(load_and_check(rig), tmp_path / "out")
    assert result.ok, result.summary["error"]
    with open(tmp_path / "out" / "recording.mcap", "rb") as f:
        msgs = [m for *_, m in make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(topics=["/b/out"])]
    assert msgs[0].header.sim_time_ns == 0
    assert _values(msgs[0]) == {"x": 2.5, "k": 7}
    assert all(_values(m) == {"x": 2.5, "k": 7} for m in msgs)


def test_moonpool_check_refuses_an_fmi3_array_port_with_exit_2(tmp_path):
    from conftest import moonpool

    rig = tmp_path / "rig.toml"
    rig.write_text(f"""
[run]
until = "1s"
[components.arr]
entry = "fmu"
rate_hz = 10
[components.arr.parameters]
fmu = "{_fmu("arrays", 3).as_posix()}"
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ y = "y" }} }}
""")
    proc = moonpool("check", str(rig))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    assert "arrays-fmi3.fmu" in text and "outputs.out.fields.y" in text and "FMI 3 array" in text


def test_moonpool_run_of_a_terminating_fmu_exits_0(tmp_path):
    from conftest import moonpool

    rig = tmp_path / "rig.toml"
    rig.write_text(STAIR_RIG.format(fmu=_fmu("stair", 3).as_posix(), kind="cs", run="",
                                    extra="", start="stop_count = 3"))
    proc = moonpool("run", str(rig), "--out", str(tmp_path / "out"), "--set", "run.plots=false")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "terminated by stair at t = 3 s" in proc.stdout + proc.stderr


@pytest.mark.parametrize("version", [2, 3])
def test_fmu_discard_fails_the_step_with_its_log(tmp_path, version):
    """A doStep that returns discard without asking to terminate fails the run, naming
    the FMU, the time and the FMU's log (FMI 2: fmi2Terminated is false)."""
    result = _stair_run(tmp_path, version, "cs", start="discard_count = 2")
    s = result.summary
    assert s["status"] == "failed" and result.exit_code == 1
    err = s["error"]
    assert f"stair-fmi{version}.fmu" in err and "discard" in err, err
    assert "the model cannot go on past t = 2 s" in err, err  # the FMU's log


def test_t0_inputs_and_termination_in_a_process_group(tmp_path):
    """Both protocol additions through a process group (one child, StepBatch): b's
    first output is a's first output, and a stair in the group ends the run at 3 s."""
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    ft, stair = _fmu("feedthrough", 3).as_posix(), _fmu("stair", 3).as_posix()
    rig = tmp_path / "rig.toml"
    rig.write_text(f"""
[run]
until = "10s"
[components.a]
entry = "fmu"
rate_hz = 10
run = "process"
group = "g"
[components.a.parameters]
fmu = "{ft}"
start_values = {{ real_c_in = 2.5, int_in = 7 }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out", k = "int_out" }} }}
[components.b]
entry = "fmu"
rate_hz = 10
run = "process"
group = "g"
[components.b.parameters]
fmu = "{ft}"
inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in", k = "int_in" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out", k = "int_out" }} }}
[components.stair]
entry = "fmu"
rate_hz = 10
run = "process"
group = "g"
[components.stair.parameters]
fmu = "{stair}"
start_values = {{ stop_count = 3 }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ counter = "counter" }} }}
[[connections]]
from = "a.out"
to = "b.in"
""")
    result = run_rig(load_and_check(rig), tmp_path / "out")
    s = result.summary
    assert s["status"] == "terminated", s["error"]
    assert s["terminated"]["component"] == "stair" and s["terminated"]["time_s"] == 3.0
    with open(tmp_path / "out" / "recording.mcap", "rb") as f:
        msgs = [m for *_, m in make_reader(f, decoder_factories=[DecoderFactory()])
                .iter_decoded_messages(topics=["/b/out"])]
    assert _values(msgs[0]) == {"x": 2.5, "k": 7} and len(msgs) == 31


@pytest.mark.parametrize("kind,fmpy_kind", [("cs", "CoSimulation"), ("me", "ModelExchange")])
@pytest.mark.parametrize("version", [2, 3])
def test_feedthrough_equals_fmpy(version, kind, fmpy_kind):
    """The feedthrough with the same start values as fmpy gets: the same outputs."""
    start = {"real_c_in": 1.25, "real_d_in": -3.5, "int_in": -42, "bool_in": True,
             "enum_in": 2, "gain": 4.0}
    outs = ("real_c_out", "real_d_out", "int_out", "bool_out", "enum_out", "scaled")
    fmu = _fmu("feedthrough", version)
    ours = _run(_component(fmu, outs, fmi_type=kind, start_values=start), outs, 0.5, 0.1)
    ref = _fmpy(fmu, fmpy_kind, outs, 0.5, 0.1, start_values=start,
                **({"record_events": False} if kind == "me" else {}))
    assert np.array_equal(ours[:, 1:], ref[:, 1:].astype(float))
    assert list(ours[0, 1:]) == [1.25, -3.5, -42, 1, 2, 5.0]


LOOP_RIG = """
[run]
until = "0.2s"
[components.a]
entry = "fmu"
rate_hz = 10
[components.a.parameters]
fmu = "{fmu}"
fmi_type = "cs"
inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out" }} }}
[components.b]
entry = "fmu"
rate_hz = 10
[components.b.parameters]
fmu = "{fmu}"
fmi_type = "cs"
inputs.in = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_in" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "real_c_out" }} }}
[[connections]]
from = "a.out"
to = "b.in"
"""


@pytest.mark.parametrize("loop", [True, False])
def test_algebraic_loops_and_missing_t0_inputs_are_reported(tmp_path, loop):
    """Two feedthroughs that take their inputs at t0: b after a is fine; a fed by b (a
    loop at t0, or b listed after a feeding it) is reported in summary.json's warnings,
    naming the components, and the run still goes on."""
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    text = LOOP_RIG.format(fmu=_fmu("feedthrough", 3).as_posix())
    if loop:
        text += '[[connections]]\nfrom = "b.out"\nto = "a.in"\n'
    rig = tmp_path / "rig.toml"
    rig.write_text(text)
    result = run_rig(load_and_check(rig, ["run.plots=false"]), tmp_path / "out")
    assert result.ok, result.summary["error"]
    warnings = result.summary.get("warnings", [])
    if not loop:
        assert warnings == []
        return
    assert any(w.startswith("algebraic loop at t0: a -> b -> a") for w in warnings), warnings
    assert any("components.a: its input in has no value at t0 (b is initialized after it"
               in w for w in warnings), warnings
