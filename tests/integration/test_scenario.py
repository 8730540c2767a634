"""Scenarios ([[scenario]]): a tunable FMU parameter changed at t = 5 s shows in the
recording at the first step at or after 5 s; an input field overridden by a ramp; each
change recorded on /scenario/set; the same digest in inproc and process mode; every
problem of a scenario reported by `moonpool check` with its line."""

from __future__ import annotations

import pytest
from conftest import RIGS, ROOT, moonpool

from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.recording import read_recording
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.v1 import signals_pb2, vehicle_pb2

SCENARIO = """
[[scenario]]
at = "{at}"
set = "vehicle.D2_u"
value = 200.0

[[scenario]]
at = "7s"
end = "8s"
set = "vehicle.wrench:force_n.z"
from = 0.0
value = 10.0
"""


def _rig(tmp_path, extra: str, name: str = "rig.toml"):
    text = (RIGS / "hydro_fmu.toml").read_text().replace("../fmus/", f"{ROOT}/fmus/")
    path = tmp_path / name
    path.write_text(text + extra)
    return path


def _run(tmp_path, path, out, mode=None):
    rig = load_and_check(path, ["run.until=8.5s", "run.plots=false"], mode=mode)
    result = run_rig(rig, tmp_path / out)
    assert result.ok, result.summary["error"]
    return result


def _states(run_dir):
    return {m.log_time_ns: vehicle_pb2.VehicleState.FromString(m.payload)
            for m in read_recording(run_dir / "recording.mcap") if m.topic == "/vehicle/state"}


@pytest.mark.parametrize("at, first_ns", [("5s", 5_000_000_000), ("5.004s", 5_010_000_000)])
def test_parameter_change_shows_at_the_first_step_at_or_after_its_time(tmp_path, at, first_ns):
    plain = _run(tmp_path, _rig(tmp_path, "", "plain.toml"), "plain")
    changed = _run(tmp_path, _rig(tmp_path, SCENARIO.format(at=at)), "changed")
    a, b = _states(tmp_path / "plain"), _states(tmp_path / "changed")
    # Gauss-Seidel: the vehicle's step at t is logged at t; its output describes t + 10 ms
    for t in a:
        if t < first_ns:
            assert a[t] == b[t], t
    step = first_ns  # the first step at or after `at`, with the new D2_u
    assert a[step].linear_acceleration_body_mps2.x != b[step].linear_acceleration_body_mps2.x
    assert b[step].header.sim_time_ns == step + 10_000_000
    # the change is in the stream: recorded on /scenario/set, so the digest covers it
    changes = [(m.log_time_ns, signals_pb2.Signals.FromString(m.payload))
               for m in read_recording(tmp_path / "changed" / "recording.mcap")
               if m.topic == "/scenario/set"]
    assert changes[0][0] == first_ns
    assert [(s.name, s.value) for s in changes[0][1].signals] == [("vehicle.D2_u", 200.0)]
    assert plain.summary["digest"] != changed.summary["digest"]
    # the input ramp: 0 at 7 s, 10 N at 8 s, one change per step in between, then held
    ramp = [(t, s.signals[0].value) for t, s in changes[1:]]
    assert ramp[0] == (7_000_000_000, 0.0) and ramp[50] == (7_500_000_000, 5.0)
    assert ramp[-1] == (8_000_000_000, 10.0) and len(ramp) == 101
    heave = b[8_400_000_000].linear_velocity_body_mps.z  # pushed down (NED z) by 10 N
    assert heave > a[8_400_000_000].linear_velocity_body_mps.z + 1e-3


def test_same_digest_in_inproc_process_and_group_mode(tmp_path):
    path = _rig(tmp_path, SCENARIO.format(at="5s"))
    digests = {mode: _run(tmp_path, path, mode, mode).summary["digest"]
               for mode in ("inproc", "process")}
    group = [f"components.{c}.{k}={v}" for c in ("thrust", "vehicle")
             for k, v in (("run", "process"), ("group", "g"))]
    rig = load_and_check(path, ["run.until=8.5s", "run.plots=false", *group])
    result = run_rig(rig, tmp_path / "group")
    assert result.ok, result.summary["error"]
    assert digests["inproc"] == digests["process"] == result.summary["digest"]
    # Jacobi: all in-process vs the vehicle in a child process
    jacobi = []
    for extra in ([], ["components.vehicle.run=process"]):
        rig = load_and_check(path, ["run.until=8.5s", "run.plots=false", "run.record=false",
                                    "run.algorithm=jacobi", "run.order=[]", *extra])
        result = run_rig(rig, tmp_path / f"jacobi{len(extra)}")
        assert result.ok, result.summary["error"]
        jacobi.append(result.summary["digest"])
    assert jacobi[0] == jacobi[1] != digests["inproc"]


def test_check_lists_every_problem_with_its_line(tmp_path):
    bad = """
[[scenario]]
at = "1s"
set = "vehicle.mass"
value = 10.0

[[scenario]]
at = "2s"
set = "vehicle.wrnch:force_n.x"
value = 1.0

[[scenario]]
at = "3s"
set = "vehicle.wrench:force_n.q"
value = 1.0

[[scenario]]
at = "4s"
end = "3s"
set = "vehicle.D2_u"
from = 1.0
value = 2.0

[[scenario]]
at = "1s"
set = "vehicle.D2_u"
value = "high"
"""
    path = _rig(tmp_path, bad)
    with pytest.raises(RigValidationError) as info:
        load_and_check(path)
    text = str(info.value)
    lines = path.read_text().splitlines()
    for needle, problem in [
        ('set = "vehicle.mass"', "parameter 'mass' of 'vehicle' (fmu) is not tunable"),
        ('set = "vehicle.wrnch:force_n.x"', "no input port 'wrnch' (did you mean 'wrench'?)"),
        ('set = "vehicle.wrench:force_n.q"', "moonpool.v1.Vector3 has no field 'q'"),
        ('end = "3s"', "scenario[3].end: must be after at"),
        ('value = "high"', "scenario[4].value: expected a number or true/false"),
    ]:
        line = next(i for i, x in enumerate(lines, 1) if x == needle)
        assert problem in text, (problem, text)
        assert f":{line}:" in text, (needle, text)
    assert "D2_u" in text  # the tunable parameters are listed
    r = moonpool("check", str(path))
    assert r.returncode == 2


def test_host_refuses_a_parameter_that_is_not_tunable():
    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.sdk.host import FAILED, ComponentHost
    from moonpool.components.sdk.wire import to_parameter_value
    from moonpool.components.sources import SignalSource
    from moonpool.v1 import lifecycle_pb2 as lc

    host = ComponentHost(SignalSource())
    msg = lc.Configure(instance_name="src")
    msg.parameters.add(name="type", value=to_parameter_value("moonpool.v1.Wrench"))
    msg.parameters.add(name="fields", value=to_parameter_value(
        {"force_n.x": {"kind": "constant", "value": 1.0}}))
    host.configure(msg)
    host.initialize(0)
    assert list(host.describe().tunable_parameters) == []
    with pytest.raises(ParameterError, match="parameter 'port' is not tunable"):
        host.step(0, 10, {}, [("port", "x")])
    assert host.state == FAILED


@pytest.mark.parametrize("fmi_type", ["cs", "me"])
def test_a_tunable_parameter_changes_in_co_simulation_and_model_exchange(tmp_path, fmi_type):
    """Model exchange may set a tunable parameter only in event mode (FMI 2 and 3): the
    scenario's change goes in through event mode, and takes effect at the next step."""
    rig = SCENARIO.format(at="5s").split("[[scenario]]\nat = \"7s\"")[0]
    over = ["run.until=5.1s", "run.plots=false", f"components.vehicle.parameters.fmi_type={fmi_type!r}"]
    plain = run_rig(load_and_check(_rig(tmp_path, "", "plain.toml"), over), tmp_path / "plain")
    changed = run_rig(load_and_check(_rig(tmp_path, rig), over), tmp_path / "changed")
    assert plain.ok and changed.ok, (plain.summary["error"], changed.summary["error"])
    a, b = _states(tmp_path / "plain"), _states(tmp_path / "changed")
    assert all(a[t] == b[t] for t in a if t < 5_000_000_000)
    assert a[5_000_000_000].linear_acceleration_body_mps2.x != b[5_000_000_000].linear_acceleration_body_mps2.x
