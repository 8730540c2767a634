#!/usr/bin/env python3
"""moonpool beside its peers, in one run: a chain of N trivial FMUs stepped at 1 ms.

    .venv/bin/python benchmarks/peers.py [--ticks 5000] [--repeat 3] [--only ROWS]

The FMU is benchmarks/trivial_fmu/trivial2.c, FMI 2.0 co-simulation (so every peer
loads it): 6 Real inputs, outputs that copy them, a doStep that only advances time.
In the chain FMU k's outputs y0..y5 feed FMU k+1's inputs u0..u5; all are stepped at
every tick (Jacobi: each reads what the one before it gave at the previous tick,
except where a peer says otherwise below). N = 1 and N = 8, through:

- ``fmpy``: the bare loop a user writes: per FMU and tick setReal(6), doStep,
  getReal(6) with fmpy's FMU2Slave (the reference of the in-process targets);
- ``libcosim``: DNV/OSP libcosim through libcosimpy, its fixed-step algorithm (its
  own worker threads), the chain as real-variable connections;
- ``mosaik-inproc`` / ``mosaik-proc``: mosaik 3 with benchmarks/mosaik_fmu.py (fmpy
  inside), every FMU in this process, or each in a process of its own (mosaik's TCP
  and JSON); time-shifted connections (Jacobi);
- ``mp-rec`` / ``mp-norec``: moonpool in-process (the ``fmu`` component), recording
  on (MCAP file + digest) and off (digest only);
- ``mp-group``: moonpool, all N in one process group (one StepBatch per tick);
- ``mp-proc``: moonpool, each FMU in its own process over ipc (recording on in both);
- ``echo``: the pure-pyzmq floor: the orchestrator's fan-out of one message to each of
  N echo processes and back, no moonpool code (benchmarks/zmq_echo.py);
- ``proto`` / ``proto-canned``: the protocol floor (benchmarks/proto_floor.py): the
  same fan-out doing only what moonpool's step protocol asks of each end in Python —
  the Step and Reply envelopes encoded and parsed, the input and output payloads
  parsed and built, each output hashed and buffered for recording, no FMU and none of
  moonpool's own bookkeeping — the least any Python implementation pays; with
  ``-canned`` the component processes send a reply encoded once (what a compiled
  component's side would cost at best), leaving the orchestrator's side alone.

Every row is measured ``--repeat`` times, the rows interleaved (row a, b, c, ...,
then again), and the median is printed in µs per tick, with every ratio to the
fmpy loop and to the echo floor of the same N. Only the stepping loop is timed
(set-up, process start and FMU loading excluded); a measurement is ``--ticks``
ticks, 8/N times as many for the in-process rows at N < 8 (so that each lasts about
as long as at N = 8). The targets (issue 21), each a
ratio in this same run:

- one trivial FMU, recording on <= 1.5x the bare fmpy loop (mp-rec/fmpy, N = 1);
- eight in one process <= 1.5x eight bare fmpy steps (mp-rec/fmpy, N = 8);
- eight components, one per process <= 1.3x the echo floor for eight processes;
- eight in one process group <= 1.0x that floor.

mosaik needs the benchmark extra: ``pip install -e '.[bench]'``; without it its rows
are skipped (said so), the rest still runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fmu_step import build_trivial  # noqa: E402

INS = [f"u{i}" for i in range(6)]
OUTS = [f"y{i}" for i in range(6)]
VR_IN = list(range(1, 7))
VR_OUT = list(range(7, 13))
DT = 0.001
ROWS = ("fmpy", "libcosim", "mosaik-inproc", "mosaik-proc", "mp-rec", "mp-norec",
        "mp-group", "mp-proc", "echo", "proto", "proto-canned")


# ------------------------------------------------------------------- bare fmpy


def fmpy_loop(fmu_path: Path, n: int, ticks: int) -> tuple[float, float]:
    """µs per tick (wall, CPU) of the bare fmpy loop over a chain of n FMUs."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu_path))
    folder = tempfile.mkdtemp(prefix="peers-fmpy-")
    try:
        extract(str(fmu_path), folder)
        fmus = []
        for k in range(n):
            f = FMU2Slave(guid=md.guid, unzipDirectory=folder,
                          modelIdentifier=md.coSimulation.modelIdentifier, instanceName=f"f{k}")
            f.instantiate()
            f.setupExperiment(startTime=0.0)
            f.enterInitializationMode()
            f.exitInitializationMode()
            fmus.append(f)
        values = [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]] + [[0.0] * 6 for _ in range(n - 1)]
        c0, t0 = time.process_time(), time.perf_counter()
        for step in range(ticks):
            t = step * DT
            for k, f in enumerate(fmus):  # Jacobi: inputs from the previous tick's outputs
                f.setReal(VR_IN, values[k])
                f.doStep(currentCommunicationPoint=t, communicationStepSize=DT)
            values[1:] = [f.getReal(VR_OUT) for f in fmus[:-1]]
            fmus[-1].getReal(VR_OUT)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        for f in fmus:
            f.terminate()
            f.freeInstance()
        return wall / ticks * 1e6, cpu / ticks * 1e6
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -------------------------------------------------------------------- libcosim


def libcosim(fmu_path: Path, n: int, ticks: int) -> tuple[float, float]:
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)
    ex = CosimExecution.from_step_size(int(DT * 1e9))
    slaves = [CosimLocalSlave(fmu_path=str(fmu_path), instance_name=f"f{k}") for k in range(n)]
    index = [ex.add_local_slave(s) for s in slaves]
    if min(index) < 0:
        raise SystemExit("libcosim could not load the trivial FMU")
    for a, b in zip(index, index[1:]):
        for vo, vi in zip(VR_OUT, VR_IN):
            ex.connect_real_variables(a, vo, b, vi)
    for vi, value in zip(VR_IN, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]):
        ex.real_initial_value(index[0], vi, value)
    ex.step(max(10, ticks // 10))  # initialisation and warm-up
    c0, t0 = time.process_time(), time.perf_counter()
    ok = ex.step(ticks)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if not ok:
        raise SystemExit("libcosim failed to step")
    del ex, slaves
    return wall / ticks * 1e6, cpu / ticks * 1e6


# ---------------------------------------------------------------------- mosaik


def mosaik_chain(fmu_path: Path, n: int, ticks: int, processes: bool) -> tuple[float, float]:
    import logging

    import mosaik

    logging.getLogger("mosaik").setLevel(logging.ERROR)
    try:  # mosaik logs through loguru: keep the benchmark's output readable
        from loguru import logger

        logger.remove()
    except ImportError:
        pass
    if processes:
        starter = {"cmd": f"%(python)s {HERE / 'mosaik_fmu.py'} -l warning %(addr)s"}
    else:
        starter = {"python": "mosaik_fmu:FmuSimulator"}
    sims = {f"S{k}": starter for k in range(n)}
    world = mosaik.World(sims, time_resolution=DT, skip_greetings=True)
    params = dict(fmu=str(fmu_path), inputs=INS, outputs=OUTS, step_size=1)
    entities = [world.start(f"S{k}", **params).FMU() for k in range(n)]
    for a, b in zip(entities, entities[1:]):
        world.connect(a, b, *zip(OUTS, INS), time_shifted=True,
                      initial_data={o: 0.0 for o in OUTS})
    warm = max(10, ticks // 10)
    c0, t0 = time.process_time(), time.perf_counter()
    world.run(until=warm + ticks, print_progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # mosaik starts its simulators' init inside run; the warm-up ticks are timed too,
    # so the figure is per tick of the whole run (slightly pessimistic for mosaik).
    return wall / (warm + ticks) * 1e6, cpu / (warm + ticks) * 1e6


# -------------------------------------------------------------------- moonpool


def moonpool_rig_text(fmu_path: Path, n: int, ticks: int, placement: str, group: bool) -> str:
    fields_in = ", ".join(f'"{f}" = "{u}"' for f, u in zip(_WRENCH_FIELDS, INS))
    fields_out = ", ".join(f'"{f}" = "{y}"' for f, y in zip(_WRENCH_FIELDS, OUTS))
    text = [f'name = "peers_chain{n}"', "[run]", f'until = "{ticks}ms"',
            'algorithm = "jacobi"', "plots = false"]
    for k in range(n):
        text += [f"[components.f{k}]", 'entry = "fmu"', "rate_hz = 1000",
                 f'run = "{placement}"']
        if group:
            text.append('group = "all"')
        text += [f"[components.f{k}.parameters]", f'fmu = "{fmu_path}"',
                 f"start_values = {{ u0 = {1.0 if k == 0 else 0.0} }}",
                 f"[components.f{k}.parameters.inputs.in]", 'type = "moonpool.v1.Wrench"',
                 f"fields = {{ {fields_in} }}",
                 f"[components.f{k}.parameters.outputs.out]", 'type = "moonpool.v1.Wrench"',
                 f"fields = {{ {fields_out} }}"]
    for k in range(1, n):
        text += ["[[connections]]", f'from = "f{k - 1}.out"', f'to = "f{k}.in"']
    return "\n".join(text) + "\n"


_WRENCH_FIELDS = ["force_n.x", "force_n.y", "force_n.z", "torque_nm.x", "torque_nm.y",
                  "torque_nm.z"]


def moonpool_chain(fmu_path: Path, n: int, ticks: int, kind: str,
                   work: Path) -> tuple[float, float]:
    from moonpool.orchestrator.execution import Execution
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    loop_cpu = []
    run = Execution.run

    def timed(execution, progress=None):  # this process's CPU in the stepping loop only
        c0 = time.process_time()
        try:
            return run(execution, progress)
        finally:
            loop_cpu.append(time.process_time() - c0)

    placement = "inproc" if kind in ("mp-rec", "mp-norec") else "process"
    rig_path = work / f"{kind}-{n}.toml"
    rig_path.write_text(moonpool_rig_text(fmu_path, n, ticks, placement, kind == "mp-group"))
    rig = load_and_check(rig_path, [f"run.record={'false' if kind == 'mp-norec' else 'true'}"])
    out = work / f"run-{kind}-{n}"
    Execution.run = timed
    try:
        result = run_rig(rig, out)
        if not result.ok:
            raise SystemExit(f"moonpool {kind} N={n} failed: {result.summary['error']}")
        ticks_done = result.summary["ticks"]
        return (result.summary["loop_wall_time_s"] / ticks_done * 1e6,
                loop_cpu[0] / ticks_done * 1e6)
    finally:
        Execution.run = run
        shutil.rmtree(out, ignore_errors=True)


# ------------------------------------------------------------------------ main


def have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


IN_PROCESS = ("fmpy", "libcosim", "mp-rec", "mp-norec")


def ticks_for(kind: str, n: int, ticks: int) -> int:
    """Ticks of a measurement: ``ticks`` at N = 8; the in-process rows run 8 / N times
    as many at smaller N, so each lasts about as long (5,000 ticks of one trivial FMU
    take 0.05 s: a row that short gave 1.25x one run, 1.82x the next)."""
    return ticks * max(1, 8 // n) if kind in IN_PROCESS else ticks


def measure(kind: str, fmu_path: Path, n: int, ticks: int, work: Path) -> tuple[float, float]:
    """(wall, CPU of this process) µs per tick of the stepping loop."""
    ticks = ticks_for(kind, n, ticks)
    if kind == "fmpy":
        return fmpy_loop(fmu_path, n, ticks)
    if kind == "libcosim":
        return libcosim(fmu_path, n, ticks)
    if kind.startswith("mosaik"):
        return mosaik_chain(fmu_path, n, max(200, ticks // 5), kind == "mosaik-proc")
    if kind == "echo":
        from zmq_echo import echo_tick_us

        c0 = time.process_time()
        wall = echo_tick_us(n, ticks)  # (its CPU: warm-up and start included)
        return wall, (time.process_time() - c0) / (ticks * 1.1 + 100) * 1e6
    if kind.startswith("proto"):
        from proto_floor import proto_tick_us

        return proto_tick_us(n, ticks, canned=kind == "proto-canned")
    return moonpool_chain(fmu_path, n, ticks, kind, work)


def verdict(value: float, limit: float) -> str:
    return f"{value:.2f}x (target <= {limit:g}x): {'met' if value <= limit else 'NOT MET'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=5000, help="ticks of 1 ms per measurement "
                    "(mosaik runs a fifth of them: it is that much slower; the in-process "
                    "rows 8/N times as many at N < 8, so that each lasts about as long)")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per row (median)")
    ap.add_argument("--n", default="1,8", help="chain lengths, e.g. 1,8")
    ap.add_argument("--only", default="", help=f"rows, comma-separated, of {','.join(ROWS)}")
    args = ap.parse_args()
    sizes = [int(x) for x in args.n.split(",")]
    rows = [r for r in ROWS if not args.only or r in args.only.split(",")]
    skipped = []
    if not (have("mosaik") and have("mosaik_api_v3")):
        skipped = [r for r in rows if r.startswith("mosaik")]
        rows = [r for r in rows if r not in skipped]
    if not have("libcosimpy"):
        skipped.append("libcosim")
        rows = [r for r in rows if r != "libcosim"]
    work = Path(tempfile.mkdtemp(prefix="moonpool-peers-"))
    os.environ["TMPDIR"] = str(work)  # libcosim unpacks every FMU there, and keeps it
    tempfile.tempdir = None
    fmu_path = build_trivial(work, version=2)
    load = os.getloadavg()
    print(f"# peers: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {args.ticks} ticks of 1 ms (in-process rows at N < 8: "
          f"8/N times as many), median of {args.repeat}, "
          f"rows interleaved; load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if skipped:
        print(f"# skipped (not installed; pip install -e '.[bench]'): {', '.join(skipped)}")
    results: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    try:
        for _ in range(args.repeat):
            for n in sizes:
                for kind in rows:
                    us, cpu = measure(kind, fmu_path, n, args.ticks, work)
                    results.setdefault((kind, n), []).append(us)
                    cpus.setdefault((kind, n), []).append(cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {key: statistics.median(v) for key, v in results.items()}
    cpu = {key: statistics.median(v) for key, v in cpus.items()}
    print("# wall µs per tick (median, min..max) and its ratios; 'cpu' is this process's CPU "
          "per tick in the loop (all its threads; for process rows the orchestrator's side "
          "only), 'cpu/fmpy' its ratio: the in-process rows' figure least disturbed by load")
    print(f"{'row':>14} {'N':>3} {'us/tick':>9} {'min..max':>17} {'/fmpy':>7} {'/echo':>7} "
          f"{'cpu':>8} {'cpu/fmpy':>9}")
    nan = float("nan")
    for n in sizes:
        for kind in rows:
            v = results[(kind, n)]
            ratio_f = med[(kind, n)] / med[("fmpy", n)] if ("fmpy", n) in med else nan
            ratio_e = med[(kind, n)] / med[("echo", n)] if ("echo", n) in med else nan
            cpu_f = cpu[(kind, n)] / cpu[("fmpy", n)] if ("fmpy", n) in cpu else nan
            print(f"{kind:>14} {n:>3} {med[(kind, n)]:9.1f} {min(v):8.1f}..{max(v):<8.1f} "
                  f"{ratio_f:7.2f} {ratio_e:7.2f} {cpu[(kind, n)]:8.1f} {cpu_f:9.2f}")
    print("# targets (issue 21):")
    checks = [("one FMU, recording on / bare fmpy", ("mp-rec", 1), ("fmpy", 1), 1.5),
              ("eight in one process, recording on / eight bare fmpy steps", ("mp-rec", 8),
               ("fmpy", 8), 1.5),
              ("eight, one per process / echo floor of eight processes", ("mp-proc", 8),
               ("echo", 8), 1.3),
              ("eight in one process group / echo floor of eight processes", ("mp-group", 8),
               ("echo", 8), 1.0)]
    for label, a, b, limit in checks:
        if a in med and b in med:
            cpu_note = (f" (CPU: {cpu[a] / cpu[b]:.2f}x)" if b[0] == "fmpy" else "")
            print(f"  {label}: {med[a]:.1f} / {med[b]:.1f} us = {verdict(med[a] / med[b], limit)}"
                  + cpu_note)
    floors = [("the protocol in Python at both ends, no FMU / echo floor", ("proto", 8),
               ("echo", 8)),
              ("the same, the components' side canned (compiled at best) / echo floor",
               ("proto-canned", 8), ("echo", 8)),
              ("moonpool, one per process / the protocol floor", ("mp-proc", 8), ("proto", 8))]
    if any(a in med and b in med for _, a, b in floors):
        print("# what bounds 'one per process' (eight processes; not targets):")
        for label, a, b in floors:
            if a in med and b in med:
                print(f"  {label}: {med[a]:.1f} / {med[b]:.1f} us = {med[a] / med[b]:.2f}x")
    print(f"# load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
