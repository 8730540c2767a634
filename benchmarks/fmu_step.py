#!/usr/bin/env python3
"""Steps per second of the hydrodynamics FMU through moonpool versus a bare fmpy loop.

``python benchmarks/fmu_step.py [--steps N] [--rate HZ]``

- bare fmpy: FMU3Slave; per step set the 6 wrench inputs, ``doStep``, read the 23
  state outputs (what the fmu component does, without messages);
- moonpool "fmu alone": rigs/hydro_fmu.toml's vehicle only (wrench held at its start
  values, in-process, recording and plots off): per step the component reads the
  outputs into a VehicleState, which is serialized and hashed into the digest;
- moonpool "source + fmu": the whole rig (ConstantWrench -> fmu, Gauss-Seidel), so a
  Wrench message is also produced, delivered, decoded and applied every step.

Times are wall-clock time of the stepping loop (setup excluded). Prints the
overhead ratio moonpool / bare (target <= 1.5).
"""

from __future__ import annotations

import argparse
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


def bare(steps: int, dt: float) -> float:
    import fmpy
    from fmpy.fmi3 import FMU3Slave

    md = fmpy.read_model_description(str(FMU))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    d = tempfile.mkdtemp()
    try:
        fmpy.extract(str(FMU), d)
        fmu = FMU3Slave(guid=md.guid, unzipDirectory=d,
                        modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bare")
        fmu.instantiate()
        fmu.enterInitializationMode(startTime=0.0)
        fmu.exitInitializationMode()
        ins, outs = [vr[n] for n in INS], [vr[n] for n in OUTS]
        wrench = [40.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        t0 = time.perf_counter()
        for k in range(steps):
            fmu.setFloat64(ins, wrench)
            fmu.doStep(k * dt, dt)
            fmu.getFloat64(outs)
        wall = time.perf_counter() - t0
        fmu.terminate()
        fmu.freeInstance()
        return wall
    finally:
        shutil.rmtree(d, ignore_errors=True)


def through_moonpool(steps: int, rate: int, alone: bool) -> float:
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    sets = [f"run.until={steps / rate!r}s", "run.record=false", "run.plots=false",
            f"components.vehicle.rate_hz={rate}", f"components.thrust.rate_hz={rate}"]
    if alone:
        sets += ["run.order=[]", "components.vehicle.parameters.start_values.tau_X=40.0"]
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
        return result.summary["loop_wall_time_s"]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rate", type=int, default=100, help="communication rate, Hz")
    ap.add_argument("--repeat", type=int, default=3, help="best of N")
    a = ap.parse_args()
    dt = 1.0 / a.rate
    b = min(bare(a.steps, dt) for _ in range(a.repeat))
    m1 = min(through_moonpool(a.steps, a.rate, True) for _ in range(a.repeat))
    m2 = min(through_moonpool(a.steps, a.rate, False) for _ in range(a.repeat))
    print(f"{a.steps} steps of {dt * 1e3:g} ms (FMU substep 1 ms), best of {a.repeat}")
    print(f"{'':22}{'steps/s':>10}{'us/step':>10}{'ratio':>8}")
    for label, wall in (("bare fmpy", b), ("moonpool fmu alone", m1), ("moonpool source + fmu", m2)):
        print(f"{label:22}{a.steps / wall:10.0f}{wall / a.steps * 1e6:10.1f}{wall / b:8.2f}")


if __name__ == "__main__":
    main()
