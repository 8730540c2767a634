"""The generic FMU component (moonpool.components.fmi): bad input caught by
`moonpool check`, FMI failures translated, a third-party FMU (built with pythonfmu)
run from a rig file alone, and an FMU crashing in a child process."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from moonpool.components.sdk.errors import RigValidationError, StepFailed
from moonpool.components.fmi import FmuComponent
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2

FMU3 = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"

RIG = """
[run]
until = "{until}"
[components.src]
entry = "sources.constant_wrench"
rate_hz = 100
[components.src.parameters]
schedule = [[0.0, 10.0, 0, 0, 0, 0, 0]]
[components.vehicle]
entry = "fmu"
rate_hz = 100
[components.vehicle.parameters]
fmu = "{fmu}"
start_values = {start}
[components.vehicle.parameters.inputs.wrench]
type = "moonpool.v1.Wrench"
fields = {{ "force_n.x" = "{input_var}" }}
[components.vehicle.parameters.outputs.state]
type = "moonpool.v1.VehicleState"
fields = {{ "linear_velocity_body_mps.x" = "u" }}
[[connections]]
from = "src.wrench"
to = "vehicle.{port}"
"""


def _rig(tmp_path, fmu="model.fmu", *, input_var="tau_X", start="{}", port="wrench",
         until="1s", copy=True):
    if copy:
        shutil.copy(FMU3, tmp_path / "model.fmu")
    path = tmp_path / "rig.toml"
    path.write_text(RIG.format(fmu=fmu, input_var=input_var, start=start, port=port, until=until))
    return path


def _problems(path) -> str:
    with pytest.raises(RigValidationError) as info:
        load_and_check(path)
    return str(info.value)


def test_valid_rig_checks_and_runs(tmp_path):
    rig = load_and_check(_rig(tmp_path))
    result = run_rig(rig, tmp_path / "out")
    assert result.ok, result.summary["error"]


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("missing", "the file does not exist"),
        ("not_zip", "is not an FMU (not a zip archive)"),
        ("no_binary", "has no binary for this platform (x86_64-linux)"),
        ("fmi1", "FMI version 1.0 is not supported"),
    ],
)
def test_bad_fmu_files_are_caught_by_check(tmp_path, kind, expected):
    path = _rig(tmp_path)
    fmu = tmp_path / "model.fmu"
    if kind == "missing":
        fmu.unlink()
    elif kind == "not_zip":
        fmu.write_text("not an FMU")
    else:
        src = zipfile.ZipFile(FMU3)
        with zipfile.ZipFile(tmp_path / "new.fmu", "w") as out:
            for item in src.namelist():
                data = src.read(item)
                if kind == "no_binary" and item.startswith("binaries/"):
                    continue
                if kind == "fmi1" and item == "modelDescription.xml":
                    data = data.replace(b'fmiVersion="3.0"', b'fmiVersion="1.0"')
                out.writestr(item, data)
        (tmp_path / "new.fmu").replace(fmu)
    text = _problems(path)
    assert "model.fmu" in text and expected in text, text
    assert "components.vehicle.parameters" in text


def test_misspelt_variable_wrong_causality_and_port(tmp_path):
    text = _problems(_rig(tmp_path, input_var="tau_x"))
    assert "no variable 'tau_x'" in text and "did you mean 'tau_X'" in text, text
    text = _problems(_rig(tmp_path, input_var="u"))
    assert "variable 'u' has causality 'output'" in text, text
    text = _problems(_rig(tmp_path, start="{ init_dd = 1.0 }"))
    assert "no variable 'init_dd'" in text and "did you mean 'init_d'" in text, text
    # The port comes from the mapping: a connection to another name is a wiring problem.
    text = _problems(_rig(tmp_path, port="wrnech"))
    assert "has no input port 'wrnech'" in text and "did you mean 'wrench'" in text, text


def test_fmi_failure_names_the_fmu_and_function(tmp_path):
    rig = load_and_check(_rig(tmp_path, start="{ D2_w = -5.0 }"))
    result = run_rig(rig, tmp_path / "out")
    assert not result.ok
    err = result.summary["error"]
    assert result.summary["failed_component"] == "vehicle"
    assert "model.fmu" in err and "fmi3ExitInitializationMode" in err, err
    assert "D2_w" in err, err  # the FMU's own log message


def _host(**params):
    host = ComponentHost(FmuComponent())
    msg = lc.Configure(instance_name="v", period_ns=10_000_000)
    for k, v in params.items():
        msg.parameters.add(name=k, value=to_parameter_value(v))
    host.configure(msg)
    return host


def test_describe_after_configure_and_step_size_policy():
    host = _host(fmu=str(FMU3), inputs={"w": {"type": "moonpool.v1.Wrench",
                                              "fields": {"force_n.x": "tau_X"}}},
                 outputs={"s": {"type": "moonpool.v1.Signals", "fields": {"speed": "u"}}})
    d = host.describe()
    assert [p.name for p in d.inputs] == ["w"] and [p.name for p in d.outputs] == ["s"]
    assert d.outputs[0].type == "moonpool.v1.Signals"
    out = host.initialize(0)
    assert out[0].message.header.sim_time_ns == 0
    comp = host.component
    comp._stepper.variable_step = False  # as if canHandleVariableCommunicationStepSize = false
    w = vehicle_pb2.Wrench()
    w.force_n.x = 10
    out = host.step(0, 10_000_000, {"w": w})
    assert out[0].message.header.sim_time_ns == 10_000_000
    assert out[0].message.signals[0].name == "speed" and out[0].message.signals[0].value > 0
    steps = []  # the doSteps the subdivided step makes: (communication point, size), s
    do_step = comp._stepper._do_step
    comp._stepper._do_step = lambda t, dt: steps.append((t, dt)) or do_step(t, dt)
    host.step(10_000_000, 20_000_000, {"w": w})  # a multiple: subdivided
    assert steps == [(0.01, 0.01), (0.02, 0.01)]
    with pytest.raises(StepFailed, match="variable communication step size"):
        host.step(30_000_000, 15_000_000, {"w": w})
    host.terminate()


# ---------------------------------------------------------------- third-party FMU

LAG = '''
import os
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class Lag(Fmi2Slave):
    """First-order lag dx/dt = (u - x) / tau (explicit Euler, 100 sub-steps)."""

    author = "third party"
    description = "first-order lag"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tau = 0.5
        self.u = 0.0
        self.x = 0.0
        self.crash_at = -1.0
        self.register_variable(Real("tau", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.tunable))
        self.register_variable(Real("crash_at", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.tunable))
        self.register_variable(Real("u", causality=Fmi2Causality.input))
        self.register_variable(Real("x", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        if 0 <= self.crash_at <= current_time:
            os.abort()  # a native crash, as a buggy FMU would
        h = step_size / 100
        for _ in range(100):
            self.x += h * (self.u - self.x) / self.tau
        return True
'''

LAG_RIG = """
# A third-party FMU (pythonfmu, FMI 2.0 co-simulation) in a rig file, no code.
[run]
until = "2s"
[components.source]
entry = "sources.constant_wrench"
rate_hz = 100
[components.source.parameters]
schedule = [[0.0, 2.0, 0, 0, 0, 0, 0]]
[components.lag]
entry = "fmu"
rate_hz = 100
run = "{run}"
[components.lag.parameters]
fmu = "Lag.fmu"
start_values = {{ tau = 0.25, crash_at = {crash_at} }}
inputs.command = {{ type = "moonpool.v1.Wrench", fields = {{ "force_n.x" = "u" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "x" }} }}
[[connections]]
from = "source.wrench"
to = "lag.command"
"""


@pytest.fixture(scope="module")
def lag_fmu(tmp_path_factory):
    pytest.importorskip("pythonfmu")
    d = tmp_path_factory.mktemp("lag")
    (d / "lag.py").write_text(textwrap.dedent(LAG))
    subprocess.run([sys.executable, "-m", "pythonfmu", "build", "-f", "lag.py", "-d", str(d)],
                   cwd=d, check=True, capture_output=True)
    return d / "Lag.fmu"


def test_third_party_fmu_runs_from_a_rig_file(tmp_path, lag_fmu):
    shutil.copy(lag_fmu, tmp_path / "Lag.fmu")
    path = tmp_path / "rig.toml"
    path.write_text(LAG_RIG.format(run="inproc", crash_at=-1.0))
    result = run_rig(load_and_check(path), tmp_path / "out")
    assert result.ok, result.summary["error"]
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(tmp_path / "out" / "recording.mcap", "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        xs = [msg.signals[0].value for *_, msg in reader.iter_decoded_messages(topics=["/lag/out"])]
    assert len(xs) == 201
    # x(t) = u (1 - exp(-t / tau)) to the Euler accuracy of 1e-4 s sub-steps.
    import math

    assert xs[-1] == pytest.approx(2.0 * (1 - math.exp(-2.0 / 0.25)), abs=1e-3)


@pytest.mark.slow
def test_fmu_crash_in_child_process_fails_the_run_cleanly(tmp_path, lag_fmu, monkeypatch):
    shutil.copy(lag_fmu, tmp_path / "Lag.fmu")
    path = tmp_path / "rig.toml"
    path.write_text(LAG_RIG.format(run="process", crash_at=0.5))
    temp = tmp_path / "temp"  # the system's temporary folder, for this run and its children
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    result = run_rig(load_and_check(path), tmp_path / "out")
    assert not result.ok
    assert result.summary["failed_component"] == "lag"
    assert "lag" in result.summary["error"]
    assert result.summary["components"]["source"]["steps"] >= 50  # ran until the crash
    # The crashed child could not remove the FMU it had unpacked: it unpacked it in
    # the run's folder, which the run removed (it used to stay in TMPDIR for ever).
    assert list(temp.iterdir()) == []


def test_outputs_convert_between_fmu_and_field_types():
    """The compiled output code: Int32 / Boolean / Float64 variables into int, bool, double
    fields and signals (start values: backend = 1, earth_rotation = true, init_d = 2.6)."""
    host = _host(
        fmu=str(FMU3), start_values={"backend": 1, "earth_rotation": True, "init_d": 2.6},
        outputs={
            "flag": {"type": "moonpool.v1.Validity", "fields": {"valid": "earth_rotation"}},
            "count": {"type": "moonpool.v1.Covariance", "fields": {"n": "backend"}},
            "depth": {"type": "moonpool.v1.Covariance", "fields": {"n": "d"}},
            "sig": {"type": "moonpool.v1.Signals",
                    "fields": {"b": "backend", "e": "earth_rotation", "d": "d"}},
        })
    for out in (host.initialize(0), host.step(0, 10_000_000, {})):
        got = {o.port: o.message for o in out}
        assert got["flag"].valid is True
        assert got["count"].n == 1
        assert got["depth"].n == 3  # 2.6 m rounded
        sig = {s.name: s.value for s in got["sig"].signals}
        assert sig["b"] == 1.0 and sig["e"] == 1.0 and sig["d"] == pytest.approx(2.6, abs=1e-3)
    host.terminate()


def test_inputs_are_set_only_when_they_change(monkeypatch):
    host = _host(fmu=str(FMU3), inputs={"w": {"type": "moonpool.v1.Wrench",
                                              "fields": {"force_n.x": "tau_X"}}},
                 outputs={"s": {"type": "moonpool.v1.Signals", "fields": {"u": "u"}}})
    host.initialize(0)
    comp = host.component
    sets = []
    raw = comp._apply_inputs.__globals__
    name = next(k for k in raw if k[0] == "S" and k[1:].isdigit())  # the set function
    real = raw[name]
    raw[name] = lambda *a: sets.append(a[3][0]) or real(*a)
    t = 0
    for x in (10.0, 10.0, 10.0, 20.0, 20.0):
        w = vehicle_pb2.Wrench()
        w.force_n.x = x
        host.step(t, 10_000_000, {"w": w})
        t += 10_000_000
    host.step(t, 10_000_000, {})  # no message: the last value is held
    assert sets == [10.0, 20.0]
    host.terminate()


LOG_ROUTING = """
import gc, shutil, sys, tempfile
sys.path[:0] = [{tests!r}, {tests_root!r}]
from test_fmu_adapter import _host
from moonpool.components.sdk.errors import StepFailed
import fmpy
from fmpy.fmi2 import FMU2Slave

fmu = {fmu!r}
bad, good = _host(fmu=fmu, start_values={{"D2_w": -5.0}}), _host(fmu=fmu)
try:
    bad.initialize(0)
    raise SystemExit("no error")
except StepFailed as exc:
    assert "D2_w = -5" in str(exc), exc  # formatted, and routed to the right component
good.initialize(0)
assert not good.component._fmu.log, good.component._fmu.log
bad.terminate(); good.terminate()
del bad, good
gc.collect()
# A bare fmpy FMI 2 instance (fmpy's default callbacks) logging after our components
# are gone: its messages must not reach a freed logger.
md = fmpy.read_model_description(fmu)
d = tempfile.mkdtemp()
fmpy.extract(fmu, d)
f = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier)
f.instantiate()
vr = next(v.valueReference for v in md.modelVariables if v.name == "D2_w")
f.setReal([vr], [-5.0])
f.setupExperiment(startTime=0.0)
f.enterInitializationMode()
try:
    f.exitInitializationMode()
except Exception:
    pass
f.freeInstance()
shutil.rmtree(d)
print("ok")
"""


def test_fmi2_log_messages_reach_their_own_component_and_never_a_freed_logger(tmp_path):
    """fmpy's FMI 2 logger proxy is process-wide: the fmu component routes messages by
    componentEnvironment (this used to segfault a later bare fmpy FMU that logged)."""
    fmu2 = ROOT / "fmus" / "build" / "hydrodynamics-fmi2.fmu"
    here = Path(__file__).parent
    script = LOG_ROUTING.format(tests=str(here), tests_root=str(here.parent), fmu=str(fmu2))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).parent, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]
