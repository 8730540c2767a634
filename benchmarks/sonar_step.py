"""Per-step time of the scene sensors on one core (docs/benchmarks.md, "Sonar steps").

``python benchmarks/sonar_step.py [--steps 50] [--scene scenes/trench_floor/scene.toml]``

Targets (issue 16): a 256-beam multibeam at 10 Hz and a 256 × 512 imaging sonar at 10 Hz
each take <= 20 ms per step on one core. Each sensor is the real component, configured
through its host on the shipped trench floor (325,000 triangles, ~6,000 m deep), and
stepped with a vehicle 10 m above the floor moving north at 1 m/s (0.1 m per step, yaw
slowly turning), so each step casts new rays. Timed: ``host.step`` (the model, the
message fill and serialization), after 3 warm-up steps, as the thread's CPU time (the
time the step takes of one core, which other processes on a shared machine do not
inflate the way they inflate the wall clock) and as wall time. Printed per sensor: p50,
p99 and max of both; met / not met against 20 ms of CPU at p50.

- ``multibeam``: 256 beams over 120°, the arc traced in a constant-gradient profile
  (16 chords, then 16 sub-chords of the hit chord: two engine casts).
- ``imaging_sonar``: 256 beams × 512 range bins over 40 m, 3 azimuth × 24 elevation rays
  per beam (18,432 rays), footprint spreading and speckle on, pitched 20° down.

One core: thread counts set to 1 before numpy loads, the process pinned to one CPU
where the OS allows. Measured, never asserted in tests.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "TBB_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

TARGET_MS = 20.0
ROOT = Path(__file__).resolve().parents[1]

SENSORS = {
    "multibeam": ("moonpool.components.sensors.multibeam", "MultibeamSensor",
                  dict(beam_count=256, swath_deg=120.0, max_range_m=100.0)),
    "imaging_sonar": ("moonpool.components.sensors.imaging_sonar", "ImagingSonarSensor",
                      dict(beam_count=256, range_bins=512, range_max_m=40.0,
                           mount_rpy_rad=[0.0, -math.radians(20.0), 0.0])),
}


def _state(k: int, floor_depth: float):
    from moonpool.components.sdk.frames import quat_from_euler
    from moonpool.v1 import vehicle_pb2

    m = vehicle_pb2.VehicleState()
    m.position_ned_m.x, m.position_ned_m.y, m.position_ned_m.z = -20.0 + 0.1 * k, 0.0, floor_depth
    q = quat_from_euler(0.0, 0.0, 0.002 * k)
    m.orientation.w, m.orientation.x, m.orientation.y, m.orientation.z = q
    m.linear_velocity_body_mps.x = 1.0
    return m


def bench(name: str, scene: Path, steps: int) -> np.ndarray:
    import importlib

    from moonpool.components.sdk.host import ComponentHost
    from moonpool.components.sdk.wire import to_parameter_value
    from moonpool.v1 import lifecycle_pb2 as lc

    module, cls, params = SENSORS[name]
    sensor = getattr(importlib.import_module(module), cls)()
    host = ComponentHost(sensor)
    params = dict(params, scene=str(scene))
    host.configure(lc.Configure(instance_name=name, seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    wall, cpu = [], []
    for k in range(steps + 3):
        state = _state(k, 5990.0)
        t0, c0 = time.perf_counter(), time.thread_time()
        host.step(k * 10**8, 10**8, {"state": state})
        if k >= 3:
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - t0)
    return np.array(wall) * 1e3, np.array(cpu) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--scene", type=Path, default=ROOT / "scenes/trench_floor/scene.toml")
    ap.add_argument("--only", choices=sorted(SENSORS), default=None)
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    except (AttributeError, OSError):
        pass
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in ([args.only] if args.only else SENSORS):
        wall, cpu = bench(name, args.scene, args.steps)
        p50, p99 = np.percentile(cpu, 50), np.percentile(cpu, 99)
        verdict = "met" if p50 <= TARGET_MS else "NOT MET"
        print(f"{name:14s} steps {len(cpu):4d}  CPU p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
              f"max {cpu.max():7.2f} ms | wall p50 {np.percentile(wall, 50):7.2f} ms  "
              f"p99 {np.percentile(wall, 99):7.2f} ms  | target CPU p50 <= {TARGET_MS:g} ms: "
              f"{verdict}")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
