#!/usr/bin/env python3
"""NMPC solve time against its control period, over a representative closed loop.

``python benchmarks/nmpc.py [--period 0.1] [--trial 20] [--horizon 20] [--dt 0.15]
[--max-iter 5] [--sweep] [--pid]``

The loop: the ``Nmpc`` component's control law (``components/control/nmpc.py``, the
BlueROV2 Heavy profile, default weights) drives the real hydrodynamics FMU
(``fmus/build/hydrodynamics-fmi3.fmu`` through fmpy, 10 ms steps) with truth feedback
through a stand-in for the actuation chain: the wrench is clipped to the profile's
reachable box and passed through a first-order rotor lag (``--lag``, 0.08 s), under a
steady current (0.15, −0.1, 0.02) m/s the NMPC does not know (its disturbance
estimate must find it). The setpoints are the eight T1 poses of
``components/tasks/components.py`` held ``--trial`` s each (large steps in position
and yaw: the hardest solves), then the T2 lemniscate (a moving reference).

Reported per solve: wall-clock time of ``NmpcSolver.solve`` (what the real-time
budget is about), the thread's CPU time for the same call (what preemption by other
processes does not inflate), SQP iterations; p50 / p99 / max against the period, the
count of solves over the period, iteration-limit hits and solver failures. Also the
closed-loop figures (late-hold position RMSE per T1 pose, T2 RMSE) so a faster
setting is not mistaken for a better one. ``--sweep`` repeats the T1 part for a few
horizons (N, h); ``--pid`` runs the world-frame PID (default gains) through the same
loop for comparison (its compute time is the whole control law).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROFILE_PATH = ROOT / "fmus" / "hydrodynamics" / "profiles" / "bluerov2_heavy.toml"
FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
OUT = ["n", "e", "d", "qw", "qx", "qy", "qz", "u", "v", "w", "p", "q", "r"]
CURRENT = (0.15, -0.1, 0.02)


class Plant:
    """The FMU behind a box clip and a first-order rotor lag (a stand-in for allocator
    and thrusters)."""

    def __init__(self, profile: dict, init: dict, lag: float) -> None:
        from fmpy import extract, read_model_description
        from fmpy.fmi3 import FMU3Slave
        from moonpool.components.actuation.geometry import thrusters_from_profile
        from moonpool.components.control.limits import reachable_box

        md = read_model_description(str(FMU))
        self.dir = extract(str(FMU))
        vr = {v.name: v.valueReference for v in md.modelVariables}
        self.fmu = FMU3Slave(guid=md.guid, unzipDirectory=self.dir,
                             modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
        self.fmu.instantiate()
        values = {**profile["parameters"], **init,
                  **{f"current_{c}": CURRENT[i] for i, c in enumerate("ned")}}
        for k, v in values.items():
            self.fmu.setFloat64([vr[k]], [float(v)])
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.vr_out = [vr[n] for n in OUT]
        self.vr_tau = [vr[f"tau_{c}"] for c in "XYZKMN"]
        self.lo, self.hi = reachable_box(thrusters_from_profile(profile))
        self.lag, self.t, self.tau = lag, 0.0, np.zeros(6)

    def state(self):
        from moonpool.v1 import vehicle_pb2

        o = self.fmu.getFloat64(self.vr_out)
        s = vehicle_pb2.VehicleState()
        s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = o[0:3]
        s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = o[3:7]
        s.linear_velocity_body_mps.x, s.linear_velocity_body_mps.y, s.linear_velocity_body_mps.z = o[7:10]
        s.angular_velocity_body_radps.x, s.angular_velocity_body_radps.y, s.angular_velocity_body_radps.z = o[10:13]
        return s

    def advance(self, command: np.ndarray, duration: float, h: float = 0.01) -> None:
        cmd = np.clip(command, self.lo, self.hi)
        a = 1 - math.exp(-h / self.lag) if self.lag > 0 else 1.0
        for _ in range(round(duration / h)):
            self.tau += a * (cmd - self.tau)
            self.fmu.setFloat64(self.vr_tau, list(self.tau))
            self.fmu.doStep(self.t, h)
            self.t += h

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def _setpoint(p, yaw, v=(0.0, 0.0, 0.0), a=(0.0, 0.0, 0.0)):
    from moonpool.v1 import navigation_pb2

    sp = navigation_pb2.Setpoint(yaw_rad=yaw)
    sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z = map(float, p)
    sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z = map(float, v)
    sp.acceleration_ned_mps2.x, sp.acceleration_ned_mps2.y, sp.acceleration_ned_mps2.z = map(float, a)
    return sp


def run(args, horizon: int, dt: float, t2: bool = True, pid: bool = False) -> dict:
    from moonpool.components.control.nmpc import Nmpc
    from moonpool.components.control.pid import WorldFramePid
    from moonpool.components.control.state import kinematics
    from moonpool.components.tasks.components import DEFAULT_SETPOINTS
    from moonpool.components.tasks.references import t2_reference

    profile = tomllib.loads(PROFILE_PATH.read_text())
    wall, cpu, iters = [], [], []
    if pid:
        ctl = WorldFramePid()
        ctl.name, ctl.period_ns = "pid", round(args.period * 1e9)
        ctl.configure(WorldFramePid.Parameters(profile=profile))
        law = ctl.control

        def timed_pid(*a):
            w0, c0 = time.perf_counter(), time.thread_time()
            out = law(*a)
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - w0)
            return out

        ctl.control = timed_pid
    else:
        ctl = Nmpc()
        ctl.name, ctl.period_ns = "nmpc", round(args.period * 1e9)
        ctl.configure(Nmpc.Parameters(profile=profile, horizon=horizon, horizon_dt_s=dt,
                                      max_iterations=args.max_iter))
        solve = ctl.solver.solve

        def timed(*a, **k):
            c0 = time.thread_time()
            r = solve(*a, **k)
            cpu.append(time.thread_time() - c0)
            wall.append(r.wall_s)
            iters.append(r.iterations)
            return r

        ctl.solver.solve = timed
    ctl.initialize(0)
    steps = round(args.trial / args.period)
    late = int(steps * 0.5)
    plant = Plant(profile, {"init_d": 1.0}, args.lag)
    t1_rmse, tilt = [], 0.0
    for x, y, z, yaw_deg in DEFAULT_SETPOINTS:
        sp = _setpoint((x, y, z), math.radians(yaw_deg))
        err = []
        for i in range(steps):
            st = plant.state()
            kin = kinematics(st)
            tilt = max(tilt, abs(kin.euler[0]), abs(kin.euler[1]))
            if i >= late:
                err.append(kin.position_ned - (x, y, z))
            plant.advance(ctl.control(kin, sp, args.period), args.period)
        t1_rmse.append(math.sqrt(np.mean(np.sum(np.square(err), axis=1))))
    plant.close()
    t2_rmse = None
    if t2:
        ref = t2_reference("lemniscate", (0.0, 0.0, 1.0), 1.0, 0.12, 0.2)
        r0 = ref.at(0.0)
        plant = Plant(profile, {"init_n": r0.p[0], "init_e": r0.p[1], "init_d": r0.p[2]}, args.lag)
        err = []
        for i in range(round((5.0 + ref.duration_s) / args.period)):
            tau = i * args.period - 5.0
            rp = ref.at(tau)
            kin = kinematics(plant.state())
            if tau >= 0:
                err.append(kin.position_ned - rp.p)
            plant.advance(ctl.control(kin, _setpoint(rp.p, 0.0, rp.v, rp.a), args.period), args.period)
        plant.close()
        t2_rmse = math.sqrt(np.mean(np.sum(np.square(err), axis=1)))
    m = ctl.terminate()
    return {"wall_ms": np.asarray(wall) * 1e3, "cpu_ms": np.asarray(cpu) * 1e3,
            "iterations": np.asarray(iters if iters else [0]), "failures": m.get("failures", 0),
            "iteration_limit": m.get("iteration_limit", 0), "t1_rmse": t1_rmse, "t2_rmse": t2_rmse,
            "tilt_deg": math.degrees(tilt)}


def _stats(a: np.ndarray) -> str:
    return f"{np.percentile(a, 50):6.1f} {np.percentile(a, 99):6.1f} {a.max():6.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--period", type=float, default=0.1, help="control period, s")
    ap.add_argument("--trial", type=float, default=20.0, help="seconds per T1 pose")
    ap.add_argument("--horizon", type=int, default=20)
    ap.add_argument("--dt", type=float, default=0.15, help="prediction stage, s")
    ap.add_argument("--max-iter", type=int, default=5)
    ap.add_argument("--lag", type=float, default=0.08, help="rotor time constant, s")
    ap.add_argument("--sweep", action="store_true", help="also N, h = 10/0.3, 15/0.2, 30/0.1 (T1 only)")
    ap.add_argument("--pid", action="store_true", help="also the PID through the same loop")
    args = ap.parse_args()

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    import casadi

    print(f"casadi {casadi.__version__}; period {args.period * 1e3:.0f} ms, max {args.max_iter} SQP "
          f"iterations, rotor lag {args.lag} s, current {CURRENT} m/s")
    print("ctl  N   h[s]  solves | wall ms p50   p99    max | cpu ms p50  p99    max | over  it.mean "
          "it.lim fail | T1 RMSE max [m]  T2 RMSE [m]  tilt [deg]")
    configs = [(args.horizon, args.dt, True, False)]
    if args.sweep:
        configs += [(10, 0.3, False, False), (15, 0.2, False, False), (30, 0.1, False, False)]
    if args.pid:
        configs.append((0, 0.0, True, True))
    for n, dt, t2, pid in configs:
        r = run(args, n, dt, t2, pid)
        over = int(np.sum(r["wall_ms"] > args.period * 1e3))
        t2s = f"{r['t2_rmse']:.4f}" if r["t2_rmse"] is not None else "-"
        name, nh = ("pid ", "-   -    ") if pid else ("nmpc", f"{n:<3} {dt:<5}")
        print(f"{name} {nh} {len(r['wall_ms']):6d} | {_stats(r['wall_ms'])} | {_stats(r['cpu_ms'])} | "
              f"{over:4d}  {r['iterations'].mean():6.2f}  {r['iteration_limit']:5d} {r['failures']:4d} | "
              f"{max(r['t1_rmse']):.4f}           {t2s:>8}     {r['tilt_deg']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
