#!/usr/bin/env python3
"""Model exchange in the fmu component: CVODE against RK4, per communication step.

``python benchmarks/fmu_me_solvers.py [--seconds S] [--repeat N]``

Each case drives ``FmuComponent`` in a plain loop (configure, initialize, step at
100 Hz; no host, no orchestrator) and prints the wall time per 10 ms communication
step (best of ``--repeat``) and the accuracy figure of the case:

- bouncing ball (test FMU, state events), FMI 3: error of the first four bounce
  times against the closed form, CVODE (rtol 1e-6 and 1e-10) and RK4 (1 ms, 0.1 ms);
- Robertson (test FMU, stiff), FMI 3: CVODE rtol 1e-8 against fmpy.simulate_fmu's
  CVODE; RK4 at 1 ms (unstable: reported as such if it blows up);
- hydrodynamics FMU, FMI 3, model exchange, 40 N surge: CVODE rtol 1e-8 and RK4 1 ms
  against its own co-simulation (internal RK4 at 1 ms), surge position after S s.

There is no acceptance threshold: the figures go into docs/benchmarks.md and
docs/third-party-fmus.md (the choice of CVODE as the default).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TEST = ROOT / "fmus" / "build" / "testfmus"
HYDRO = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"


def _component(fmu, outputs, inputs=(), **params):
    from moonpool.components.fmi import FmuComponent, FmuParameters

    c = FmuComponent()
    c.name = "bench"
    c.configure(FmuParameters(
        fmu=fmu, outputs={"out": {"type": "moonpool.v1.Signals",
                                  "fields": {n: n for n in outputs}}},
        inputs={"in": {"type": "moonpool.v1.Signals", "fields": {n: n for n in inputs}}}
        if inputs else {}, **params))
    return c


def _run(make, outputs, seconds, inputs=None):
    """(rows, seconds per step): rows of (t, outputs...) at each 10 ms step."""
    c = make()
    c.initialize(0)
    dt, n = 10**7, round(seconds * 100)
    rows = []
    t0 = time.perf_counter()
    try:
        for k in range(n):
            out = c.step(k * dt, dt, inputs or {})["out"]
            v = {s.name: s.value for s in out.signals}
            rows.append([(k + 1) * dt * 1e-9, *(v[o] for o in outputs)])
    finally:
        wall = time.perf_counter() - t0
        c.terminate()
    return np.array(rows), wall / n


def best(repeat, fn):
    results = [fn() for _ in range(repeat)]
    return results[0][0], min(r[1] for r in results)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    s, rep = a.seconds, a.repeat
    print(f"{'case':48s} {'us/step':>9s}  accuracy")

    ball = TEST / "bouncingball-fmi3.fmu"
    t, v, exact = math.sqrt(2 / 9.81), math.sqrt(2 * 9.81), []
    for _ in range(4):
        exact.append(t)
        v *= 0.7
        t += 2 * v / 9.81
    for label, kw in (("CVODE rtol 1e-6", dict(solver="cvode", rtol=1e-6)),
                      ("CVODE rtol 1e-10", dict(solver="cvode", rtol=1e-10)),
                      ("RK4 1 ms", dict(solver="rk4", step_size=1e-3)),
                      ("RK4 0.1 ms", dict(solver="rk4", step_size=1e-4))):
        rows, per = best(rep, lambda kw=kw: _run(
            lambda: _component(ball, ("bounces", "t_bounce"), fmi_type="me", **kw),
            ("bounces", "t_bounce"), 2.0))
        times = [rows[np.argmax(rows[:, 1] >= k), 2] for k in range(1, 5)]
        err = np.abs(np.array(times) - exact).max()
        print(f"{'bouncing ball, ' + label:48s} {per * 1e6:9.1f}  bounce times to {err:.1e} s")

    rob = TEST / "robertson-fmi3.fmu"
    import fmpy

    ref = fmpy.simulate_fmu(str(rob), fmi_type="ModelExchange", stop_time=s, output_interval=0.01,
                            relative_tolerance=1e-8, output=["y1", "y2", "y3"], validate=False,
                            record_events=False)
    refa = np.array([[r["y1"], r["y2"], r["y3"]] for r in ref])[1:]
    for label, kw in (("CVODE rtol 1e-8", dict(solver="cvode", rtol=1e-8, max_step=s / 50)),
                      ("RK4 1 ms", dict(solver="rk4", step_size=1e-3))):
        try:
            rows, per = best(rep, lambda kw=kw: _run(
                lambda: _component(rob, ("y1", "y2", "y3"), fmi_type="me", **kw),
                ("y1", "y2", "y3"), s))
            scale = np.abs(refa).max(axis=0)
            rel = (np.abs(rows[:, 1:] - refa) / scale).max()
            acc = "unstable (non-finite)" if not np.isfinite(rel) else \
                f"{rel:.1e} relative to fmpy's CVODE"
        except Exception as exc:  # noqa: BLE001 - RK4 on a stiff model may blow up
            per, acc = float("nan"), f"failed: {str(exc)[:60]}"
        print(f"{'Robertson, ' + label:48s} {per * 1e6:9.1f}  {acc}")

    from moonpool.v1 import signals_pb2

    force = {"in": signals_pb2.Signals(signals=[signals_pb2.Signal(name="tau_X", value=40.0)])}
    cs, per_cs = best(rep, lambda: _run(
        lambda: _component(HYDRO, ("n",), ("tau_X",), fmi_type="cs"), ("n",), s, force))
    print(f"{'hydrodynamics FMU, co-simulation (reference)':48s} {per_cs * 1e6:9.1f}  "
          f"n({s:g} s) = {cs[-1, 1]:.6f} m")
    for label, kw in (("CVODE rtol 1e-8", dict(solver="cvode", rtol=1e-8)),
                      ("RK4 1 ms", dict(solver="rk4", step_size=1e-3))):
        rows, per = best(rep, lambda kw=kw: _run(
            lambda: _component(HYDRO, ("n",), ("tau_X",), fmi_type="me", **kw), ("n",), s,
            force))
        print(f"{'hydrodynamics FMU, ME ' + label:48s} {per * 1e6:9.1f}  "
              f"|n - n_cs| max {np.abs(rows[:, 1] - cs[:, 1]).max():.1e} m")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
