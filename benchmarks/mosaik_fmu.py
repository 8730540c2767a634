#!/usr/bin/env python3
"""A mosaik simulator (API v3) for an FMI 2.0 co-simulation FMU through fmpy, used by
benchmarks/peers.py: one entity per FMU instance, its inputs set from mosaik's
inputs before each doStep, its outputs read by get_data. (The kept adapter,
mosaik-fmi, builds on FMI++ whose wheel does not build here; this is the loop it
runs, written for the trivial FMU's Real variables.)

In-process: ``{"python": "mosaik_fmu:FmuSimulator"}``; a process of its own:
``{"cmd": "%(python)s benchmarks/mosaik_fmu.py %(addr)s"}``.
"""

from __future__ import annotations

import shutil
import tempfile

import mosaik_api_v3


def meta(inputs: list[str], outputs: list[str]) -> dict:
    return {"api_version": "3.0", "type": "time-based",
            "models": {"FMU": {"public": True, "params": [], "attrs": inputs + outputs}}}


class FmuSimulator(mosaik_api_v3.Simulator):
    """Steps every FMU instance it created by ``step_size`` ticks of mosaik time."""

    def __init__(self) -> None:
        super().__init__(meta([], []))
        self.instances: dict[str, tuple] = {}
        self.folder = ""

    def init(self, sid, time_resolution=1.0, fmu="", inputs=(), outputs=(), step_size=1):
        from fmpy import extract, read_model_description

        self.md = read_model_description(fmu)
        self.folder = tempfile.mkdtemp(prefix="mosaik-fmu-")
        extract(fmu, self.folder)
        refs = {v.name: v.valueReference for v in self.md.modelVariables}
        self.vr = refs
        self.inputs, self.outputs = list(inputs), list(outputs)
        self.dt, self.step_size = time_resolution * step_size, step_size
        self.meta = meta(self.inputs, self.outputs)
        return self.meta

    def create(self, num, model):
        from fmpy.fmi2 import FMU2Slave

        made = []
        for _ in range(num):
            eid = f"fmu{len(self.instances)}"
            fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.folder,
                            modelIdentifier=self.md.coSimulation.modelIdentifier,
                            instanceName=eid)
            fmu.instantiate()
            fmu.setupExperiment(startTime=0.0)
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
            self.instances[eid] = fmu
            made.append({"eid": eid, "type": model})
        return made

    def step(self, time, inputs, max_advance):
        t = time * self.dt / self.step_size
        for eid, fmu in self.instances.items():
            given = inputs.get(eid)
            if given:
                names = list(given)
                fmu.setReal([self.vr[n] for n in names],
                            [next(iter(given[n].values())) for n in names])
            fmu.doStep(currentCommunicationPoint=t, communicationStepSize=self.dt)
        return time + self.step_size

    def get_data(self, outputs):
        data = {}
        for eid, attrs in outputs.items():
            values = self.instances[eid].getReal([self.vr[a] for a in attrs])
            data[eid] = dict(zip(attrs, values))
        return data

    def finalize(self):
        for fmu in self.instances.values():
            fmu.terminate()
            fmu.freeInstance()
        shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    mosaik_api_v3.start_simulation(FmuSimulator())  # argv: mosaik's HOST:PORT to connect to
