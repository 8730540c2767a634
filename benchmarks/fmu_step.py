#!/usr/bin/env python3
"""Steps per second of an FMU through moonpool versus a bare fmpy loop.

``python benchmarks/fmu_step.py [--fmu hydro|trivial] [--steps N] [--rate HZ] [--repeat N] [--profile]``

``--fmu trivial`` runs the same paths on a trivial FMI 3.0 co-simulation FMU built
here from ``benchmarks/trivial_fmu/trivial.c`` with the machine's C compiler (6
inputs, 23 outputs copying them, a doStep that only advances time; no start values),
mapped to the same Wrench and VehicleState fields: what hosting costs when the FMU
costs nothing. The default is the hydrodynamics FMU:

Every path runs the same FMU (``fmus/build/hydrodynamics-fmi3.fmu``) with the same
start values as ``rigs/hydro_fmu.toml``'s vehicle (BlueROV2 Heavy profile, then the
rig's ``start_values``), the same 6 wrench inputs and the same 23 state outputs:

- bare fmpy (the reference): FMU3Slave through fmpy's normal API; per step
  ``setFloat64`` of the 6 wrench inputs, ``doStep``, ``getFloat64`` of the 23 outputs
  (what the rig's vehicle needs each step, without messages);
- bare ctypes (a floor, for information): the same calls straight to the FMU's C
  functions with value-reference and value buffers allocated once;
- fmu component: ``FmuComponent`` driven in a plain loop (no host, no orchestrator):
  per step a Wrench message in, a VehicleState message out — the cost of the
  ``components/fmi/`` package alone;
- moonpool fmu alone: the rig's vehicle only (wrench held at the same values as start
  values), in-process, recording and plots off: host checks, serialization, hashing
  into the digest, the execution loop;
- moonpool source + fmu: the whole rig (ConstantWrench -> fmu, Gauss-Seidel): one more
  component stepped and a Wrench produced, delivered and decoded every step.

Times are wall-clock time of the stepping loop (setup excluded), best of ``--repeat``.
The ratio is to bare fmpy (acceptance: moonpool's in-process overhead <= 1.5x).
``--profile`` also runs the two moonpool paths under cProfile and splits the time
between the components/fmi/ package, the FMU's native calls and the rest (host,
orchestrator).
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RIG = ROOT / "rigs" / "hydro_fmu.toml"
FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
OUTS = ["n", "e", "d", "qw", "qx", "qy", "qz", "roll", "pitch", "yaw", "u", "v", "w",
        "p", "q", "r", "du", "dv", "dw", "dp", "dq", "dr", "rho"]
INS = ["tau_X", "tau_Y", "tau_Z", "tau_K", "tau_M", "tau_N"]
WRENCH = [40.0, 0.0, 0.0, 0.0, 0.0, 0.0]
# The FMU component's code, by file (cProfile): the package's folder, the code it
# generates at configure (compiled I/O), and the functions that call doStep
# (co-simulation; the C call's time is counted in them).
FMI_DIR = "/components/fmi/"
GENERATED = "<moonpool.fmu"
DO_STEP = ("/components/fmi/cosimulation.py", ("step", "_do_step"))


TRIVIAL = False


def build_trivial(d: Path, version: int = 3) -> Path:
    """Compile the trivial FMU into ``d/trivial.fmu``: FMI 3.0 co-simulation from
    benchmarks/trivial_fmu/trivial.c (version 3), or FMI 2.0 co-simulation from
    trivial2.c (version 2, for the peers that load FMI 2 only). Same variables and
    value references either way: u0..u5 (1..6) in, y0..y22 (7..29) out."""
    import subprocess
    import zipfile

    import fmpy

    cc = shutil.which("cc") or shutil.which("gcc")
    if version == 2:
        headers = Path(fmpy.__file__).parent / "c-code"
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", str(headers), "-o", "trivial.so",
                        str(ROOT / "benchmarks" / "trivial_fmu" / "trivial2.c")], cwd=d,
                       check=True)
        real = '<Real start="0"/>'
        unknowns = "".join(f'      <Unknown index="{i + 7}" dependencies="{i % 6 + 1}"/>\n'
                           for i in range(23))
        rows = [f'    <ScalarVariable name="u{i}" valueReference="{i + 1}" causality="input" '
                f'variability="continuous">{real}</ScalarVariable>' for i in range(6)]
        rows += [f'    <ScalarVariable name="y{i}" valueReference="{i + 7}" causality="output" '
                 'variability="continuous"><Real/></ScalarVariable>' for i in range(23)]
        md = ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiModelDescription fmiVersion="2.0" '
              'modelName="trivial" guid="{moonpool-benchmark-trivial-2}" '
              'variableNamingConvention="flat">\n'
              '  <CoSimulation modelIdentifier="trivial" '
              'canHandleVariableCommunicationStepSize="true"/>\n  <ModelVariables>\n'
              + "\n".join(rows) + "\n  </ModelVariables>\n  <ModelStructure>\n    <Outputs>\n"
              + unknowns + "    </Outputs>\n    <InitialUnknowns>\n" + unknowns
              + "    </InitialUnknowns>\n  </ModelStructure>\n</fmiModelDescription>\n")
        platform = fmpy.platform  # FMI 2's binaries/ folder: linux64, darwin64, win64
    else:
        from fmpy.fmi3 import FMU3Slave

        src = (ROOT / "benchmarks" / "trivial_fmu" / "trivial.c").read_text()
        defined = {line.split("(")[0].split()[-1].lstrip("*") for line in src.splitlines()
                   if line.startswith(("int fmi3", "void *fmi3", "void fmi3"))}
        stubs = "".join(f"int {n}(void) {{ return 3; }}\n" for n in sorted(
            n for n in dir(FMU3Slave) if n.startswith("fmi3") and n not in defined))
        (d / "trivial.c").write_text(src + stubs)
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", "trivial.so", "trivial.c"], cwd=d,
                       check=True)
        rows = ['    <Float64 name="time" valueReference="0" causality="independent" '
                'variability="continuous"/>']
        rows += [f'    <Float64 name="u{i}" valueReference="{i + 1}" causality="input" '
                 'variability="continuous" start="0"/>' for i in range(6)]
        rows += [f'    <Float64 name="y{i}" valueReference="{i + 7}" causality="output" '
                 'variability="continuous"/>' for i in range(23)]
        md = ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiModelDescription fmiVersion="3.0" '
              'modelName="trivial" instantiationToken="{moonpool-benchmark-trivial}">\n'
              '  <CoSimulation modelIdentifier="trivial"/>\n  <ModelVariables>\n'
              + "\n".join(rows) + "\n  </ModelVariables>\n  <ModelStructure>\n"
              + "".join(f'    <Output valueReference="{i + 7}"/>\n' for i in range(23))
              + "  </ModelStructure>\n</fmiModelDescription>\n")
        platform = fmpy.platform_tuple
    path = d / "trivial.fmu"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("modelDescription.xml", md)
        z.write(d / "trivial.so", f"binaries/{platform}/trivial.so")
    return path


def use_trivial(d: Path) -> None:
    """Point every path of the benchmark at the trivial FMU (and a rig for it)."""
    global FMU, RIG, INS, OUTS, TRIVIAL
    from moonpool.orchestrator.rigfile import load_and_check

    hydro = load_and_check(RIG).component("vehicle").parameters
    ins = {hydro_name: f"u{i}" for i, hydro_name in enumerate(INS)}
    outs = {hydro_name: f"y{i}" for i, hydro_name in enumerate(OUTS)}
    FMU, TRIVIAL = build_trivial(d), True
    INS, OUTS = [ins[n] for n in INS], [outs[n] for n in OUTS]

    def table(fields: dict, names: dict) -> str:
        return "{ " + ", ".join(f'"{k}" = "{names[v]}"' for k, v in fields.items()) + " }"

    win, sout = hydro["inputs"]["wrench"], hydro["outputs"]["state"]
    RIG = d / "trivial_fmu.toml"
    RIG.write_text(f"""name = "trivial_fmu"
[run]
until = "20s"
algorithm = "gauss-seidel"
order = ["thrust", "vehicle"]
[components.thrust]
entry = "sources.constant_wrench"
rate_hz = 100
[components.thrust.parameters]
schedule = [[0.0, 40.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
[components.vehicle]
entry = "fmu"
rate_hz = 100
[components.vehicle.parameters]
fmu = "{FMU}"
[components.vehicle.parameters.inputs.wrench]
type = "{win['type']}"
fields = {table(win['fields'], ins)}
[components.vehicle.parameters.outputs.state]
type = "{sout['type']}"
fields = {table(sout['fields'], outs)}
[[connections]]
from = "thrust.wrench"
to = "vehicle.wrench"
""")


def _vehicle_params() -> dict:
    from moonpool.orchestrator.rigfile import load_and_check

    return dict(load_and_check(RIG).component("vehicle").parameters)


def _start_values() -> dict:
    p = _vehicle_params()
    return {**p.get("profile", {}).get("parameters", {}), **p.get("start_values", {})}


def _bare_instance(d: str):
    import fmpy
    from fmpy.fmi3 import FMU3Slave

    md = fmpy.read_model_description(str(FMU))
    var = {v.name: v for v in md.modelVariables}
    fmpy.extract(str(FMU), d)
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=d,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bare")
    fmu.instantiate()
    for name, value in _start_values().items():  # the rig's profile + start values
        v = var[name]
        if v.type == "Float64":
            fmu.setFloat64([v.valueReference], [float(value)])
        elif v.type == "Boolean":
            fmu.setBoolean([v.valueReference], [bool(value)])
        else:
            getattr(fmu, f"set{v.type}")([v.valueReference], [int(value)])
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    return fmu, [var[n].valueReference for n in INS], [var[n].valueReference for n in OUTS]


def bare(steps: int, dt: float) -> float:
    d = tempfile.mkdtemp()
    try:
        fmu, ins, outs = _bare_instance(d)
        fmu.getFloat64(outs)
        t0 = time.perf_counter()
        for k in range(steps):
            fmu.setFloat64(ins, WRENCH)
            fmu.doStep(k * dt, dt)
            fmu.getFloat64(outs)
        wall = time.perf_counter() - t0
        fmu.terminate()
        fmu.freeInstance()
        return wall
    finally:
        shutil.rmtree(d, ignore_errors=True)


def bare_ctypes(steps: int, dt: float) -> float:
    d = tempfile.mkdtemp()
    try:
        fmu, ins, outs = _bare_instance(d)
        h, fns = fmu.component, fmu._functions
        set64, get64, do_step = fns["fmi3SetFloat64"], fns["fmi3GetFloat64"], fns["fmi3DoStep"]
        vin, vout = (ctypes.c_uint32 * 6)(*ins), (ctypes.c_uint32 * 23)(*outs)
        win, wout = (ctypes.c_double * 6)(*WRENCH), (ctypes.c_double * 23)()
        flags = [ctypes.byref(ctypes.c_bool()) for _ in range(3)]
        last = ctypes.byref(ctypes.c_double())
        t0 = time.perf_counter()
        for k in range(steps):
            assert set64(h, vin, 6, win, 6) <= 1
            assert do_step(h, k * dt, dt, True, *flags, last) <= 1
            assert get64(h, vout, 23, wout, 23) <= 1
            wout[:]
        wall = time.perf_counter() - t0
        fmu.terminate()
        fmu.freeInstance()
        return wall
    finally:
        shutil.rmtree(d, ignore_errors=True)


def component(steps: int, dt: float) -> float:
    from moonpool.components.fmi import FmuComponent
    from moonpool.v1 import vehicle_pb2

    p = _vehicle_params()
    comp = FmuComponent()
    comp.configure(FmuComponent.Parameters(
        fmu=FMU, inputs=p["inputs"], outputs=p["outputs"],
        start_values=p.get("start_values", {}), profile=p.get("profile", {})))
    comp.initialize(0)
    dt_ns = round(dt * 1e9)
    t0 = time.perf_counter()
    for k in range(steps):
        w = vehicle_pb2.Wrench()  # a new message every step, as a source would send
        w.force_n.x = WRENCH[0]
        comp.step(k * dt_ns, dt_ns, {"wrench": w})
    wall = time.perf_counter() - t0
    comp.terminate()
    return wall


def through_moonpool(steps: int, rate: int, alone: bool) -> float:
    return _run_rig(steps, rate, alone).summary["loop_wall_time_s"]


def _run_rig(steps: int, rate: int, alone: bool):
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    sets = [f"run.until={steps / rate!r}s", "run.record=false", "run.plots=false",
            f"components.vehicle.rate_hz={rate}", f"components.thrust.rate_hz={rate}"]
    if alone:
        sets += ["run.order=[]", f"components.vehicle.parameters.start_values.{INS[0]}={WRENCH[0]}"]
    rig = load_and_check(RIG, sets)
    if alone:
        from dataclasses import replace

        rig = replace(rig, components=tuple(c for c in rig.components if c.name == "vehicle"),
                      connections=(), plots=())
    out = Path(tempfile.mkdtemp())
    try:
        result = run_rig(rig, out)
        assert result.ok, result.summary["error"]
        assert result.summary["components"]["vehicle"]["steps"] == steps
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def profile(steps: int, rate: int, alone: bool) -> None:
    """cProfile the rig run; split the time: components/fmi/, the FMU's C calls, the rest."""
    import cProfile
    import pstats

    _run_rig(min(steps, 1000), rate, alone)  # warm up (imports, caches)
    pr = cProfile.Profile()
    pr.enable()
    _run_rig(steps, rate, alone)
    pr.disable()
    stats = pstats.Stats(pr).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
    fmu_py = do_step = loop = 0.0
    for (file, _, name), (_, _, tottime, cumtime, _) in stats.items():
        # ctypes calls are not profiled on their own: the FMU's C time is in its caller
        file = file.replace("\\", "/")
        in_fmi = FMI_DIR in file
        if file.endswith(DO_STEP[0]) and name in DO_STEP[1]:
            do_step += tottime  # the FMU's doStep (native), called straight through ctypes
        elif in_fmi or file.startswith(GENERATED):
            fmu_py += tottime  # includes the two get/set C calls
        if name == "run" and file.endswith("orchestrator/execution.py"):
            loop = cumtime
    rest = loop - do_step - fmu_py
    label = "fmu alone" if alone else "source + fmu"
    print(f"cProfile, moonpool {label}: stepping loop {loop:.3f} s = doStep {do_step:.3f} s "
          f"({do_step / loop:.0%}) + components/fmi/ {fmu_py:.3f} s ({fmu_py / loop:.0%}) "
          f"+ everything else (host, orchestrator, other components, protobuf) {rest:.3f} s "
          f"({rest / loop:.0%}); of the overhead beyond doStep, outside components/fmi/: "
          f"{rest / (rest + fmu_py):.0%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rate", type=int, default=100, help="communication rate, Hz")
    ap.add_argument("--repeat", type=int, default=3, help="best of N")
    ap.add_argument("--profile", action="store_true", help="also split the time with cProfile")
    ap.add_argument("--fmu", choices=("hydro", "trivial"), default="hydro",
                    help="the hydrodynamics FMU (default) or a trivial one built here")
    a = ap.parse_args()
    if a.fmu == "trivial":
        use_trivial(Path(tempfile.mkdtemp(prefix="moonpool-trivial-fmu-")))
    dt = 1.0 / a.rate
    rows = [
        ("bare fmpy", min(bare(a.steps, dt) for _ in range(a.repeat))),
        ("bare ctypes (floor)", min(bare_ctypes(a.steps, dt) for _ in range(a.repeat))),
        ("fmu component", min(component(a.steps, dt) for _ in range(a.repeat))),
        ("moonpool fmu alone", min(through_moonpool(a.steps, a.rate, True)
                                   for _ in range(a.repeat))),
        ("moonpool source + fmu", min(through_moonpool(a.steps, a.rate, False)
                                      for _ in range(a.repeat))),
    ]
    b = rows[0][1]
    what = "trivial FMU" if TRIVIAL else "hydrodynamics FMU, substep 1 ms"
    print(f"{a.fmu}: {a.steps} steps of {dt * 1e3:g} ms ({what}), best of {a.repeat}")
    print(f"{'':24}{'steps/s':>10}{'us/step':>10}{'ratio':>8}")
    for label, wall in rows:
        print(f"{label:24}{a.steps / wall:10.0f}{wall / a.steps * 1e6:10.1f}{wall / b:8.2f}")
    if a.profile:
        profile(a.steps, a.rate, True)
        profile(a.steps, a.rate, False)


if __name__ == "__main__":
    main()
