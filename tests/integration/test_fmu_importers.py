"""The hydrodynamics FMUs in FMI importers other than fmpy (docs/hydrodynamics.md,
"Independent importers"):

- libcosim (DNV / Open Simulation Platform, through libcosimpy): FMI 2.0 co-simulation,
  several instances in one execution, parameters of each type set as initial values; an
  FMI 3.0 FMU is refused by this libcosim (0.11), which the test records.
- fmu-manipulation-toolbox (Renault): its FMI XSD + semantic checker, its source compiler
  (rebuilds the binary from ``sources/`` alone), and its C container FMU, which loads our
  binary with its own FMI importer code and drives it in co-simulation, or, for an
  ME-only copy of the FMU, as a model-exchange FMU integrated by the container's Euler
  solver.

Every run is checked against closed forms (terminal surge and heave speed
``(-D1 + sqrt(D1^2 + 4 D2 X)) / (2 D2)``, neutral vehicle at rest stays at rest) and
against fmpy running the same FMU directly. Both importers are dev dependencies
(pyproject.toml): a missing one fails the test, it never skips.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import fmpy  # a core dependency: no skip
import numpy as np
import pytest
from conftest import ROOT

PROFILE = ROOT / "fmus" / "hydrodynamics" / "profiles" / "bluerov2_heavy.toml"
OUT = ["n", "e", "d", "u", "v", "w", "p", "q", "r"]
DT = 0.1      # communication step [s]
STOP = 30.0   # long enough for the surge/heave speeds to converge to machine precision
FMIL_TIME_FALSE_POSITIVE = ("Start attribute is required for this causality, variability and "
                            "initial combination")


def _require(module: str, dist: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:  # a declared dev dependency: its absence is a broken setup
        pytest.fail(f"{dist} is a dev dependency (pyproject.toml, [dev]) but '{module}' does not "
                    f"import ({e}); run scripts/setup.sh --dev", pytrace=False)


def _params() -> dict:
    """BlueROV2 Heavy made exactly neutrally buoyant (V = m / rho)."""
    with open(PROFILE, "rb") as f:
        p = tomllib.load(f)["parameters"]
    p["volume"] = p["mass"] / p["rho_surface"]
    return p


def _terminal(D1: float, D2: float, X: float) -> float:
    return (-D1 + np.sqrt(D1 * D1 + 4 * D2 * X)) / (2 * D2)


# name -> start values on top of the neutral profile. "simplified_heave" sets the Integer
# parameter, "earth_rotation" the Boolean one (its sway drift has no closed form: fmpy only).
SCENARIOS = {
    "surge": {"tau_X": 30.0},
    "simplified_heave": {"tau_Z": 25.0, "backend": 1},
    "rest": {},
    "earth_rotation": {"tau_X": 30.0, "earth_rotation": True, "latitude": 60.0},
}


def _check_closed_form(label: str, scenario: str, r: dict) -> None:
    p = _params()
    if scenario == "surge":
        expect = float(_terminal(p["D1_u"], p["D2_u"], 30.0))
        print(f"{label} surge: u = {r['u']!r} vs closed form {expect!r} "
              f"(rel err {abs(r['u'] / expect - 1):.1e})")
        assert r["u"] == pytest.approx(expect, rel=1e-9)
        assert abs(r["v"]) < 1e-12 and abs(r["w"]) < 1e-12
    elif scenario == "simplified_heave":
        expect = float(_terminal(p["D1_w"], p["D2_w"], 25.0))
        print(f"{label} heave (backend 1): w = {r['w']!r} vs closed form {expect!r} "
              f"(rel err {abs(r['w'] / expect - 1):.1e})")
        assert r["w"] == pytest.approx(expect, rel=1e-9)
    elif scenario == "rest":
        moved = max(abs(r[k]) for k in OUT)
        print(f"{label} neutral at rest: max |position, velocity| after {STOP:.0f} s = {moved:.1e}")
        assert moved < 1e-9
    elif scenario == "earth_rotation":
        assert r["v"] > 1e-4  # Coriolis pushes a northern-hemisphere vehicle to the right


@pytest.fixture(scope="module")
def fmpy_reference(fmus):
    """fmpy running the FMUs directly: {(version, scenario): {output: value at STOP}}."""
    ref = {}
    for version in (3, 2):
        for name, extra in SCENARIOS.items():
            res = fmpy.simulate_fmu(str(fmus[version]), fmi_type="CoSimulation", stop_time=STOP,
                                    output_interval=DT, start_values={**_params(), **extra},
                                    output=OUT)
            ref[version, name] = {k: float(res[k][-1]) for k in OUT}
    return ref


def _compare_with_fmpy(label: str, r: dict, ref: dict, tol: float, tol_position=None) -> None:
    """max |r - ref| over the velocities <= tol, over the positions <= tol_position (or tol)."""
    dpos = max(abs(r[k] - ref[k]) for k in OUT[:3])
    dvel = max(abs(r[k] - ref[k]) for k in OUT[3:])
    print(f"{label}: max |difference to fmpy| position {dpos:.1e} m, velocity {dvel:.1e}")
    assert dpos <= (tol if tol_position is None else tol_position), f"{label}: {r} vs fmpy {ref}"
    assert dvel <= tol, f"{label}: {r} vs fmpy {ref}"


# ---------------------------------------------------------------------------
# libcosim (libcosimpy)
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cosim():
    _require("libcosimpy", "libcosimpy")
    from libcosimpy import CosimEnums, CosimExecution, CosimLogging, CosimObserver, CosimSlave
    from libcosimpy._internal import get_last_error_message
    return type("cosim", (), {"Execution": CosimExecution.CosimExecution,
                              "LocalSlave": CosimSlave.CosimLocalSlave,
                              "Observer": CosimObserver.CosimObserver, "Enums": CosimEnums,
                              "Logging": CosimLogging,
                              "last_error": staticmethod(get_last_error_message)})


def _line_of(fmu, needle: str) -> int:
    xml = zipfile.ZipFile(fmu).read("modelDescription.xml").decode()
    return next(i for i, line in enumerate(xml.splitlines(), 1) if needle in line)


def test_libcosim_runs_fmi2_cosimulation(fmus, fmpy_reference, cosim, capfd, monkeypatch,
                                         tmp_path):
    """Four instances of the FMI 2 FMU in one libcosim execution (fixed step 0.1 s), one per
    scenario, parameters set as initial values of their own type (Real, Integer, Boolean)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # libcosim unpacks each FMU there, and keeps it
    cosim.Logging.log_output_level(cosim.Logging.CosimLogLevel.INFO)
    ex = cosim.Execution.from_step_size(int(DT * 1e9))  # nanoseconds
    observer = cosim.Observer.create_last_value()
    assert ex.add_observer(observer)
    slaves, index = [], {}
    for name in SCENARIOS:
        slave = cosim.LocalSlave(fmu_path=str(fmus[2]), instance_name=name)
        assert slave.ptr(), f"libcosim cannot load the FMI 2 FMU: {cosim.last_error()}"
        slaves.append(slave)
        index[name] = ex.add_local_slave(slave)
        assert index[name] >= 0, cosim.last_error()
    variables = {v.name.decode(): v for v in ex.slave_variables(index["surge"])}
    T = cosim.Enums.CosimVariableType
    setter = {T.REAL: ex.real_initial_value, T.INTEGER: ex.integer_initial_value,
              T.BOOLEAN: ex.boolean_initial_value}
    for name, extra in SCENARIOS.items():
        for var, value in {**_params(), **extra}.items():
            v = variables[var]
            assert setter[T(v.type)](index[name], v.reference, value), (var, cosim.last_error())
    assert ex.simulate_until(int(STOP * 1e9)), cosim.last_error()
    status = ex.status()
    assert status.error_code == cosim.Enums.CosimErrorCode.SUCCESS.value
    assert status.current_time == int(STOP * 1e9)
    refs = [variables[k].reference for k in OUT]
    results = {name: dict(zip(OUT, observer.last_real_values(index[name], refs)))
               for name in SCENARIOS}
    del ex, slaves
    cosim.Logging.log_output_level(cosim.Logging.CosimLogLevel.WARNING)
    log = "".join(capfd.readouterr())  # libcosim's log (C++, on the file descriptors)

    for name, r in results.items():
        _check_closed_form("libcosim FMI 2", name, r)
        _compare_with_fmpy(f"libcosim FMI 2 {name}", r, fmpy_reference[2, name], 1e-12)

    # What libcosim's FMI Library logged as an error while parsing the model description:
    # only its known false positive on the independent variable `time` (FMI 2.0 §2.2.7 says
    # it must have no start attribute, and it has none; FMI Library issue #21, fixed upstream
    # in 2024 but not in the FMI Library that libcosim 0.11 bundles). Anything else fails.
    errors = [line for line in log.splitlines() if "[error]" in line]
    print(f"libcosim's FMI Library: {len(errors)} error line(s), all its known one on `time`")
    assert all(FMIL_TIME_FALSE_POSITIVE in line for line in errors), "\n".join(errors)
    time_line = _line_of(fmus[2], 'name="time"')
    assert set(re.findall(r"\[Line:(\d+)\] Detected during parsing", log)) <= {str(time_line)}
    assert "[warning]" not in log, [line for line in log.splitlines() if "[warning]" in line]


def test_libcosim_fmi3(fmus, fmpy_reference, cosim, monkeypatch, tmp_path):
    """libcosim 0.11 implements FMI 1 and 2 only: the FMI 3 FMU must be refused for that
    reason and no other; should a later libcosim load it, it must run like fmpy."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    cosim.Logging.log_output_level(cosim.Logging.CosimLogLevel.WARNING)
    slave = cosim.LocalSlave(fmu_path=str(fmus[3]), instance_name="hydro3")
    if not slave.ptr():
        msg = cosim.last_error()
        print(f"libcosim refuses the FMI 3 FMU: {msg}")
        assert "Unsupported FMI version" in msg
        return
    ex = cosim.Execution.from_step_size(int(DT * 1e9))
    observer = cosim.Observer.create_last_value()
    ex.add_observer(observer)
    i = ex.add_local_slave(slave)
    variables = {v.name.decode(): v.reference for v in ex.slave_variables(i)}
    for var, value in {**_params(), **SCENARIOS["surge"]}.items():
        assert ex.real_initial_value(i, variables[var], value)
    assert ex.simulate_until(int(STOP * 1e9)), cosim.last_error()
    r = dict(zip(OUT, observer.last_real_values(i, [variables[k] for k in OUT])))
    _check_closed_form("libcosim FMI 3", "surge", r)
    _compare_with_fmpy("libcosim FMI 3 surge", r, fmpy_reference[3, "surge"], 1e-12)


def test_libcosim_reports_an_invalid_parameter_by_name(fmus, cosim, tmp_path):
    """mass = -1 is rejected in fmi2ExitInitializationMode with a message naming it, and
    libcosim passes that message on. (libcosim 0.11 aborts the process on a model error in
    its worker thread, hence the child process.)"""
    script = (
        "import sys\n"
        "from libcosimpy.CosimExecution import CosimExecution\n"
        "from libcosimpy.CosimSlave import CosimLocalSlave\n"
        "ex = CosimExecution.from_step_size(100000000)\n"
        "s = CosimLocalSlave(fmu_path=sys.argv[1], instance_name='bad')\n"
        "i = ex.add_local_slave(s)\n"
        "vr = {v.name.decode(): v.reference for v in ex.slave_variables(i)}\n"
        "ex.real_initial_value(i, vr['mass'], -1.0)\n"
        "print('simulate_until returned', ex.simulate_until(1000000000), flush=True)\n"
    )
    res = subprocess.run([sys.executable, "-c", script, str(fmus[2])], check=False,
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    out = res.stdout + res.stderr
    assert "invalid parameter mass = -1: must be finite and > 0" in out, out
    assert "simulate_until returned True" not in out, out


# ---------------------------------------------------------------------------
# fmu-manipulation-toolbox
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toolbox():
    return _require("fmu_manipulation_toolbox", "fmu-manipulation-toolbox")


def _fmutool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fmu_manipulation_toolbox.cli.fmutool", *args],
                          check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("version", [3, 2])
def test_toolbox_checker_finds_no_error(fmus, toolbox, version):
    """The toolbox's checker: the official FMI XSD schemas plus the rules they cannot express
    (causality/variability/initial combinations, start values, derivative and
    ModelStructure references)."""
    res = _fmutool("-input", str(fmus[version]), "-check")
    out = res.stdout + res.stderr
    print("\n".join(line for line in out.splitlines() if "=>" in line or "ompliant" in line
                    or "semantic" in line))
    assert res.returncode == 0, out
    assert f"This FMU seems to be compliant with FMI-{version}.0." in out, out
    assert f"No semantic error against the FMI-{version} standard." in out, out
    assert not [line for line in out.splitlines()
                if line.startswith(("ERROR", "WARNING", "CRITICAL"))], out


def test_build_descriptions_follow_the_fmi3_schema(fmus, toolbox):
    """sources/buildDescription.xml of both FMUs validates against fmi3BuildDescription.xsd
    (FMI 2.0.4 adopted that file as FMI 3.0 defines it), and fmpy reads the source list of
    both (FMI 2: from <SourceFiles>)."""
    import xmlschema
    xsd = xmlschema.XMLSchema(str(Path(toolbox.__file__).parent / "resources" / "fmi-3.0" /
                                  "fmi3BuildDescription.xsd"))
    for version in (3, 2):
        xml = zipfile.ZipFile(fmus[version]).read("sources/buildDescription.xml").decode()
        assert [e.reason for e in xsd.iter_errors(xml)] == [], version
        configs = fmpy.read_model_description(str(fmus[version])).buildConfigurations
        assert [sorted(c.sourceFileSets[0].sourceFiles) for c in configs] == \
            [sorted([f"fmi{version}.c", "model.c", "fmu_common.c"])]


def _copy_fmu(src, dst, *, drop_binaries=False, model_exchange_only=False):
    """A modified copy of an FMU: without binaries/, or without its <CoSimulation> interface."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if drop_binaries and item.filename.startswith("binaries/"):
                continue
            data = zin.read(item.filename)
            if model_exchange_only and item.filename == "modelDescription.xml":
                root = ET.fromstring(data)
                root.remove(root.find("CoSimulation"))
                data = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
            zout.writestr(item, data)
    return dst


@pytest.mark.parametrize("version", [3, 2])
def test_toolbox_rebuilds_the_binary_from_sources(fmus, fmpy_reference, toolbox, tmp_path, version):
    """An FMU with sources/ only (binaries removed) is compiled by the toolbox from its build
    description (FMI 3: buildDescription.xml, FMI 2: <SourceFiles>) with its own FMI headers,
    and the rebuilt FMU runs as the original."""
    src = _copy_fmu(fmus[version], tmp_path / f"src{version}.fmu", drop_binaries=True)
    rebuilt = tmp_path / f"rebuilt{version}.fmu"
    res = _fmutool("-input", str(src), "-compile-sources", "-output", str(rebuilt))
    out = res.stdout + res.stderr
    assert res.returncode == 0 and rebuilt.is_file(), out
    assert "is built." in out, out
    def binaries(fmu):
        return [n for n in zipfile.ZipFile(fmu).namelist() if n.startswith("binaries/")]
    assert binaries(rebuilt) == binaries(fmus[version])  # same platform folder and file name
    res = fmpy.simulate_fmu(str(rebuilt), fmi_type="CoSimulation", stop_time=STOP,
                            output_interval=DT, start_values={**_params(), **SCENARIOS["surge"]},
                            output=OUT)
    r = {k: float(res[k][-1]) for k in OUT}
    _check_closed_form(f"rebuilt FMI {version}", "surge", r)
    _compare_with_fmpy(f"rebuilt FMI {version} surge", r, fmpy_reference[version, "surge"], 1e-12)


def _container(tmp_path, caplog, fmu, version: int, step: float, me: bool):
    """A toolbox container FMU (FMI `version`) embedding a copy of `fmu` (model exchange only
    if `me`); the embedded FMU's parameters are exposed as ``hydro.<name>``. Returns the
    container and the warnings/errors the toolbox logged while reading our FMU and building."""
    from fmu_manipulation_toolbox.assembly import Assembly
    _copy_fmu(fmu, tmp_path / "hydro.fmu", model_exchange_only=me)
    (tmp_path / "wrap.json").write_text(json.dumps(
        {"name": "wrap.fmu", "step_size": step, "auto_parameter": True, "fmu": ["hydro.fmu"]}))
    with caplog.at_level("INFO", logger="fmu_manipulation_toolbox"):
        Assembly("wrap.json", fmu_directory=tmp_path).make_fmu(fmi_version=version)
    complaints = [r.getMessage() for r in caplog.records
                  if r.name.startswith("fmu_manipulation_toolbox") and r.levelname != "INFO"
                  and r.levelname != "DEBUG"]
    caplog.clear()
    return tmp_path / "wrap.fmu", complaints


def _run_container(wrap, extra: dict, step: float) -> dict:
    messages = []
    res = fmpy.simulate_fmu(str(wrap), stop_time=STOP, output_interval=DT, step_size=step,
                            start_values={**{f"hydro.{k}": v for k, v in _params().items()},
                                          **{(k if k.startswith("tau_") else f"hydro.{k}"): v
                                             for k, v in extra.items()}},
                            output=OUT, logger=lambda *a: messages.append(a))
    assert res["time"][-1] == pytest.approx(STOP)
    return {k: float(res[k][-1]) for k in OUT}


@pytest.mark.parametrize("version", [3, 2])
def test_toolbox_container_drives_the_fmu_in_cosimulation(fmus, fmpy_reference, toolbox,
                                                          tmp_path, caplog, version):
    """The container's C importer loads our binary and calls doStep(0.1 s); same numbers as
    fmpy to 1e-12 and as the closed forms."""
    wrap, complaints = _container(tmp_path, caplog, fmus[version], version, DT, me=False)
    assert complaints == []
    for name, extra in SCENARIOS.items():
        r = _run_container(wrap, extra, DT)
        _check_closed_form(f"container CS FMI {version}", name, r)
        _compare_with_fmpy(f"container CS FMI {version} {name}", r, fmpy_reference[version, name],
                           1e-12)


@pytest.mark.parametrize("version", [3, 2])
def test_toolbox_container_integrates_the_fmu_in_model_exchange(fmus, fmpy_reference, toolbox,
                                                               tmp_path, caplog, version):
    """An ME-only copy of the FMU, integrated by the container's own solver (explicit Euler,
    1 ms) through fmi{2,3}SetContinuousStates / GetDerivatives / CompletedIntegratorStep.
    Terminal speeds are fixed points of any integrator, so they match the closed form; the
    positions differ from the RK4 co-simulation by Euler's O(h) error only (~1e-4 of the
    distance travelled)."""
    step = 1e-3
    wrap, complaints = _container(tmp_path, caplog, fmus[version], version, step, me=True)
    # The toolbox only advises that 1 ms is below the FMU's <DefaultExperiment stepSize="0.01">
    # (a suggestion for the importer, not a constraint of a model-exchange FMU).
    assert all("step_size" in c and "0.01" in c for c in complaints), complaints
    for name, extra in SCENARIOS.items():
        r = _run_container(wrap, extra, step)
        _check_closed_form(f"container ME FMI {version}", name, r)
        _compare_with_fmpy(f"container ME (Euler 1 ms) FMI {version} {name}", r,
                           fmpy_reference[version, name], 1e-5, tol_position=5e-3)
