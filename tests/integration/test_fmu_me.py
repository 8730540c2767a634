"""Model exchange in the generic FMU component (moonpool.components.fmi): the fixed-step
RK4 option (``solver = "rk4"``) with the FMI event protocol (CVODE, the default, is
tested against fmpy in test_fmu_testfmus.py).

- The hydrodynamics FMU's model-exchange interface, integrated by moonpool (RK4 at
  1 ms), against its own co-simulation interface (internal RK4 at 1 ms), FMI 2 and 3.
- A small model-exchange-only FMU written here in C (FMI 2.0 and 3.0 from one source,
  built with the machine's C compiler; no network): a first-order lag with a time
  event (handled) and an event indicator (a state event, located and handled).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import RIGS, ROOT, c_compiler

from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig


def _decoded(path: Path, topic: str) -> list:
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [msg for *_, msg in reader.iter_decoded_messages(topics=[topic])]


# ------------------------------------------------------------ hydrodynamics FMU

def _hydro_has_me(version: int) -> bool:
    import fmpy

    fmu = ROOT / "fmus" / "build" / f"hydrodynamics-fmi{version}.fmu"
    return fmu.exists() and fmpy.read_model_description(str(fmu)).modelExchange is not None


@pytest.mark.parametrize("version", [3, 2])
def test_hydro_me_through_rk4_matches_its_co_simulation(tmp_path, version):
    assert _hydro_has_me(version), f"hydrodynamics-fmi{version}.fmu lost its model exchange"
    # A wrench in all six axes for 15 s, then coasting: the vehicle translates and turns.
    common = [
        f"components.vehicle.parameters.fmu=../fmus/build/hydrodynamics-fmi{version}.fmu",
        "run.plots=false",
        "components.thrust.parameters.schedule=[[0.0, 40.0, 5.0, 3.0, 0.5, 0.2, 1.0], "
        "[15.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]",
    ]
    runs = {}
    for kind, extra in (("cs", []), ("me", ["components.vehicle.parameters.step_size=0.001",
                                           "components.vehicle.parameters.solver=rk4"])):
        rig = load_and_check(RIGS / "hydro_fmu.toml",
                             [*common, f"components.vehicle.parameters.fmi_type={kind}", *extra])
        result = run_rig(rig, tmp_path / kind)
        assert result.ok, (kind, result.summary["error"])
        runs[kind] = np.array([
            [s.header.sim_time_ns * 1e-9, s.position_ned_m.x, s.position_ned_m.y,
             s.position_ned_m.z, s.yaw_rad, s.linear_velocity_body_mps.x]
            for s in _decoded(tmp_path / kind / "recording.mcap", "/vehicle/state")])
    cs, me = runs["cs"], runs["me"]
    assert cs.shape == me.shape == (2001, 6)
    assert np.array_equal(cs[:, 0], me[:, 0])
    assert cs[-1, 0] == pytest.approx(20.0)
    assert np.hypot(cs[-1, 1], cs[-1, 2]) > 0.5 and abs(cs[-1, 4]) > 1.0  # it did move and turn
    err = np.abs(cs[:, 1:4] - me[:, 1:4]).max()
    assert err < 1e-4, err


# ------------------------------------------------------------ a hand-written ME FMU

LAG_C = r"""
/* A first-order lag dx/dt = (u - x) / tau, model exchange only, FMI 2.0 and 3.0.
   Time event: at t_jump (if >= 0) x jumps by `jump`. Event indicator: x_max - x. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct { double time, tau, x_max, t_jump, jump, u, x; int jumped; } Lag;
enum { VR_TIME, VR_TAU, VR_XMAX, VR_TJUMP, VR_JUMP, VR_U, VR_X, VR_DX, VR_Z };

static Lag *lag_new(void) {
    Lag *m = calloc(1, sizeof(Lag));
    m->tau = 0.5; m->x_max = 1e9; m->t_jump = -1.0; m->jump = 1.0;
    return m;
}
static double *slot(Lag *m, unsigned vr) {
    switch (vr) {
    case VR_TIME: return &m->time; case VR_TAU: return &m->tau; case VR_XMAX: return &m->x_max;
    case VR_TJUMP: return &m->t_jump; case VR_JUMP: return &m->jump; case VR_U: return &m->u;
    case VR_X: return &m->x; default: return NULL;
    }
}
static double value(Lag *m, unsigned vr) {
    if (vr == VR_DX) return (m->u - m->x) / m->tau;
    if (vr == VR_Z) return m->x_max - m->x;
    return *slot(m, vr);
}
static int get(void *c, const unsigned *vr, size_t n, double *v) {
    for (size_t i = 0; i < n; i++) { if (vr[i] > VR_Z) return 3; v[i] = value(c, vr[i]); }
    return 0;
}
static int set(void *c, const unsigned *vr, size_t n, const double *v) {
    for (size_t i = 0; i < n; i++) { double *p = slot(c, vr[i]); if (!p) return 3; *p = v[i]; }
    return 0;
}
/* event mode: apply the time event once it is due; report the next one */
static void update(Lag *m, int *changed, int *next_defined, double *next) {
    *changed = 0;
    if (m->t_jump >= 0 && !m->jumped && m->time >= m->t_jump - 1e-12) {
        m->x += m->jump; m->jumped = 1; *changed = 1;
    }
    *next_defined = m->t_jump >= 0 && !m->jumped;
    *next = *next_defined ? m->t_jump : 0.0;
}

/* ---- FMI 2.0 */
typedef struct { int needed, terminate, nominals, values, next_defined; double next; } Info2;
const char *fmi2GetTypesPlatform(void) { return "default"; }
const char *fmi2GetVersion(void) { return "2.0"; }
void *fmi2Instantiate(const char *n, int type, const char *guid, const char *res,
                      const void *cb, int visible, int logging) {
    return type == 0 ? lag_new() : NULL; /* model exchange only */
}
void fmi2FreeInstance(void *c) { free(c); }
int fmi2SetupExperiment(void *c, int tol_def, double tol, double t0, int stop_def, double stop) {
    ((Lag *)c)->time = t0; return 0;
}
int fmi2EnterInitializationMode(void *c) { return 0; }
int fmi2ExitInitializationMode(void *c) { return 0; }
int fmi2Terminate(void *c) { return 0; }
int fmi2GetReal(void *c, const unsigned *vr, size_t n, double *v) { return get(c, vr, n, v); }
int fmi2SetReal(void *c, const unsigned *vr, size_t n, const double *v) { return set(c, vr, n, v); }
int fmi2EnterEventMode(void *c) { return 0; }
int fmi2NewDiscreteStates(void *c, Info2 *e) {
    e->needed = 0; e->terminate = 0; e->nominals = 0;
    update(c, &e->values, &e->next_defined, &e->next);
    return 0;
}
int fmi2EnterContinuousTimeMode(void *c) { return 0; }
int fmi2CompletedIntegratorStep(void *c, int no_set, int *enter, int *terminate) {
    *enter = 0; *terminate = 0; return 0;
}
int fmi2SetTime(void *c, double t) { ((Lag *)c)->time = t; return 0; }
int fmi2SetContinuousStates(void *c, const double *x, size_t n) { ((Lag *)c)->x = x[0]; return 0; }
int fmi2GetDerivatives(void *c, double *dx, size_t n) { dx[0] = value(c, VR_DX); return 0; }
int fmi2GetEventIndicators(void *c, double *z, size_t n) { z[0] = value(c, VR_Z); return 0; }
int fmi2GetContinuousStates(void *c, double *x, size_t n) { x[0] = ((Lag *)c)->x; return 0; }
int fmi2GetNominalsOfContinuousStates(void *c, double *x, size_t n) { x[0] = 1.0; return 0; }

/* ---- FMI 3.0 */
const char *fmi3GetVersion(void) { return "3.0"; }
void *fmi3InstantiateModelExchange(const char *n, const char *token, const char *res,
                                   bool visible, bool logging, void *env, void *log) {
    return lag_new();
}
void fmi3FreeInstance(void *c) { free(c); }
int fmi3EnterInitializationMode(void *c, bool tol_def, double tol, double t0, bool stop_def,
                                double stop) { ((Lag *)c)->time = t0; return 0; }
int fmi3ExitInitializationMode(void *c) { return 0; }
int fmi3Terminate(void *c) { return 0; }
int fmi3GetFloat64(void *c, const unsigned *vr, size_t n, double *v, size_t nv) {
    return get(c, vr, n, v);
}
int fmi3SetFloat64(void *c, const unsigned *vr, size_t n, const double *v, size_t nv) {
    return set(c, vr, n, v);
}
int fmi3EnterEventMode(void *c) { return 0; }
int fmi3UpdateDiscreteStates(void *c, bool *needed, bool *terminate, bool *nominals,
                             bool *values, bool *next_defined, double *next) {
    int changed, defined;
    update(c, &changed, &defined, next);
    *needed = false; *terminate = false; *nominals = false;
    *values = changed; *next_defined = defined;
    return 0;
}
int fmi3EnterContinuousTimeMode(void *c) { return 0; }
int fmi3CompletedIntegratorStep(void *c, bool no_set, bool *enter, bool *terminate) {
    *enter = false; *terminate = false; return 0;
}
int fmi3SetTime(void *c, double t) { ((Lag *)c)->time = t; return 0; }
int fmi3SetContinuousStates(void *c, const double *x, size_t n) { ((Lag *)c)->x = x[0]; return 0; }
int fmi3GetContinuousStateDerivatives(void *c, double *dx, size_t n) {
    dx[0] = value(c, VR_DX); return 0;
}
int fmi3GetEventIndicators(void *c, double *z, size_t n) { z[0] = value(c, VR_Z); return 0; }
int fmi3GetContinuousStates(void *c, double *x, size_t n) { x[0] = ((Lag *)c)->x; return 0; }
int fmi3GetNominalsOfContinuousStates(void *c, double *x, size_t n) { x[0] = 1.0; return 0; }
int fmi3GetNumberOfContinuousStates(void *c, size_t *n) { *n = 1; return 0; }
int fmi3GetNumberOfEventIndicators(void *c, size_t *n) { *n = 1; return 0; }
"""

PARAMS = [("tau", 0.5), ("x_max", 1e9), ("t_jump", -1.0), ("jump", 1.0)]

MD2 = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="Lag" guid="{{moonpool-test-lag}}"
  numberOfEventIndicators="1">
  <ModelExchange modelIdentifier="lag"/>
  <ModelVariables>
    <ScalarVariable name="time" valueReference="0" causality="independent"
      variability="continuous"><Real/></ScalarVariable>
{params}
    <ScalarVariable name="u" valueReference="5" causality="input"
      variability="continuous"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="x" valueReference="6" causality="output" variability="continuous"
      initial="exact"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="7" causality="local"
      variability="continuous"><Real derivative="7"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="7"/></Outputs>
    <Derivatives><Unknown index="8"/></Derivatives>
  </ModelStructure>
</fmiModelDescription>
"""
PARAM2 = ('    <ScalarVariable name="{name}" valueReference="{vr}" causality="parameter" '
          'variability="fixed" initial="exact"><Real start="{start}"/></ScalarVariable>')

MD3 = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Lag"
  instantiationToken="{{moonpool-test-lag}}">
  <ModelExchange modelIdentifier="lag"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
{params}
    <Float64 name="u" valueReference="5" causality="input" variability="continuous" start="0"/>
    <Float64 name="x" valueReference="6" causality="output" variability="continuous"
      initial="exact" start="0"/>
    <Float64 name="der(x)" valueReference="7" causality="local" variability="continuous"
      derivative="6"/>
    <Float64 name="z" valueReference="8" causality="local" variability="continuous"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="6"/>
    <ContinuousStateDerivative valueReference="7"/>
    <EventIndicator valueReference="8"/>
  </ModelStructure>
</fmiModelDescription>
"""
PARAM3 = ('    <Float64 name="{name}" valueReference="{vr}" causality="parameter" '
          'variability="fixed" start="{start}"/>')


@pytest.fixture(scope="module")
def lag_me(tmp_path_factory) -> dict[int, Path]:
    """Lag-fmi2.fmu and Lag-fmi3.fmu: model exchange only, built from LAG_C."""
    import fmpy
    from fmpy.fmi2 import FMU2Model
    from fmpy.fmi3 import FMU3Model

    cc = c_compiler()
    d = tmp_path_factory.mktemp("lag_me")
    # fmpy binds every FMI function of the interface: the ones the model does not use
    # are stubs (never called by moonpool).
    defined = {line.split("(")[0].split()[-1].lstrip("*") for line in LAG_C.splitlines()
               if line.startswith(("int fmi", "void *fmi", "void fmi", "const char *fmi"))}
    wanted = {n for cls, p in ((FMU2Model, "fmi2"), (FMU3Model, "fmi3"))
              for n in dir(cls) if n.startswith(p)}
    stubs = "".join(f"int {n}(void) {{ return 3; }}\n" for n in sorted(wanted - defined))
    (d / "lag.c").write_text(LAG_C + stubs)
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", "lag.so", "lag.c"], cwd=d, check=True,
                   capture_output=True)
    fmus = {}
    for version, md, param, plat in ((2, MD2, PARAM2, fmpy.platform),
                                     (3, MD3, PARAM3, fmpy.platform_tuple)):
        params = "\n".join(param.format(name=n, vr=i + 1, start=s) for i, (n, s) in
                           enumerate(PARAMS))
        path = d / f"Lag-fmi{version}.fmu"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("modelDescription.xml", md.format(params=params))
            z.write(d / "lag.so", f"binaries/{plat}/lag.so")
        fmus[version] = path
    return fmus


LAG_RIG = """
# A third-party model-exchange FMU in a rig file, no code: moonpool integrates it.
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
[components.lag.parameters]
fmu = "Lag.fmu"
fmi_type = "{fmi_type}"
{step}
start_values = {{ tau = 0.25, t_jump = {t_jump}, x_max = {x_max} }}
inputs.command = {{ type = "moonpool.v1.Wrench", fields = {{ "force_n.x" = "u" }} }}
outputs.out = {{ type = "moonpool.v1.Signals", fields = {{ x = "x" }} }}
[[connections]]
from = "source.wrench"
to = "lag.command"
"""


def _lag_rig(tmp_path, fmu, *, fmi_type="auto", t_jump=-1.0, x_max=1e9,
             step="step_size = 0.001", solver="rk4"):
    shutil.copy(fmu, tmp_path / "Lag.fmu")
    path = tmp_path / "rig.toml"
    step = f'solver = "{solver}"\n{step}'
    path.write_text(LAG_RIG.format(fmi_type=fmi_type, t_jump=t_jump, x_max=x_max, step=step))
    return run_rig(load_and_check(path), tmp_path / "out")


@pytest.mark.parametrize("version", [2, 3])
def test_model_exchange_only_fmu_runs_from_a_rig_file(tmp_path, lag_me, version):
    result = _lag_rig(tmp_path, lag_me[version])  # fmi_type = "auto": the FMU has only ME
    assert result.ok, result.summary["error"]
    msgs = _decoded(tmp_path / "out" / "recording.mcap", "/lag/out")
    assert len(msgs) == 201
    # Gauss-Seidel is not set: the input of step k is the source's output of step k - 1,
    # a 10 ms delay; compare with the closed form delayed accordingly.
    for msg in msgs[2::20]:
        t = msg.header.sim_time_ns * 1e-9
        assert msg.signals[0].value == pytest.approx(_lag(t), abs=1e-9), t


@pytest.mark.parametrize("version", [2, 3])
def test_time_event_inside_a_substep_is_handled(tmp_path, lag_me, version):
    t_jump = 0.50037  # neither on the 10 ms communication grid nor on the 1 ms sub-steps
    result = _lag_rig(tmp_path, lag_me[version], fmi_type="me", t_jump=t_jump)
    assert result.ok, result.summary["error"]
    msgs = _decoded(tmp_path / "out" / "recording.mcap", "/lag/out")
    by_t = {round(m.header.sim_time_ns * 1e-9, 6): m.signals[0].value for m in msgs}
    assert by_t[0.5] < by_t[0.51] - 0.9  # the jump of 1 (exactly at t_jump, see _lag)
    for t in (0.5, 0.51, 0.75, 1.5, 2.0):
        assert by_t[t] == pytest.approx(_lag(t, t_jump), abs=1e-9), t


def _lag(t: float, t_jump: float = math.inf, u: float = 2.0, tau: float = 0.25,
         delay: float = 0.01) -> float:
    """Closed form: x for the input u reaching the FMU at `delay`, plus a jump of 1 at
    t_jump (RK4 at 1 ms is exact to ~1e-12 here)."""
    def free(t0: float, x0: float, t1: float) -> float:
        return u + (x0 - u) * math.exp(-(t1 - t0) / tau)

    x = 0.0 if t <= delay else free(delay, 0.0, min(t, t_jump))
    if t >= t_jump:
        x = free(t_jump, x + 1.0, t)
    return x


@pytest.mark.parametrize("solver", ["rk4", "cvode"])
@pytest.mark.parametrize("version", [2, 3])
def test_state_event_is_located_and_the_run_goes_on(tmp_path, lag_me, version, solver):
    """Defect (issue 19): model exchange stopped at the first state event. The lag's
    indicator x_max - x crosses 0 at t = 0.18 s; its event changes nothing, so x
    follows the closed form through it."""
    result = _lag_rig(tmp_path, lag_me[version], x_max=1.0, solver=solver)
    assert result.ok, result.summary["error"]
    msgs = _decoded(tmp_path / "out" / "recording.mcap", "/lag/out")
    tol = 1e-9 if solver == "rk4" else 1e-5
    for msg in msgs[2::20]:
        t = msg.header.sim_time_ns * 1e-9
        assert msg.signals[0].value == pytest.approx(_lag(t), abs=tol), t


def test_asking_for_co_simulation_of_a_model_exchange_fmu_is_caught_by_check(tmp_path, lag_me):
    shutil.copy(lag_me[3], tmp_path / "Lag.fmu")
    path = tmp_path / "rig.toml"
    path.write_text(LAG_RIG.format(fmi_type="cs", t_jump=-1.0, x_max=1e9, step=""))
    from moonpool.components.sdk.errors import RigValidationError

    with pytest.raises(RigValidationError) as info:
        load_and_check(path)
    text = str(info.value)
    assert "Lag.fmu" in text and "implements model exchange" in text, text


def test_step_size_and_substeps(tmp_path, lag_me):
    """Default step_size 1 ms = 10 sub-steps of a 10 ms step; step_size = 0 uses substeps."""
    finals = {}
    for label, step in (("default", ""), ("1ms", "step_size = 0.001"),
                        ("0.7ms", "step_size = 0.0007"),  # 15 sub-steps of 0.667 ms
                        ("10 substeps", "step_size = 0\nsubsteps = 10"),
                        ("1 substep", "step_size = 0\nsubsteps = 1")):
        d = tmp_path / label.replace(" ", "_")
        d.mkdir()
        result = _lag_rig(d, lag_me[3], step=step)
        assert result.ok, (label, result.summary["error"])
        msgs = _decoded(d / "out" / "recording.mcap", "/lag/out")
        finals[label] = msgs[-1].signals[0].value
    assert finals["default"] == finals["1ms"] == finals["10 substeps"]
    exact = _lag(2.0)
    assert abs(finals["0.7ms"] - exact) < 1e-11 and abs(finals["1ms"] - exact) < 1e-11
    assert 1e-10 < abs(finals["1 substep"] - exact) < 1e-5  # RK4 at 10 ms: coarser
