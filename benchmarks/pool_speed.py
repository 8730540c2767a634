#!/usr/bin/env python3
"""How fast the pool rig runs, and what each of its components costs per step.

``python benchmarks/pool_speed.py [--until 60] [--runs 3] [--rig rigs/pool.toml]
[--set K=V]... [--baseline-python OTHER/.venv/bin/python] [--json]``

Runs the rig (default ``rigs/pool.toml``: T1 station keeping closed through the
overhead camera, the AprilTag localizer and the EKF — the controller sees no truth)
``--runs`` times for ``--until`` simulated seconds each, flat out, exactly as
``moonpool run RIG --until T --set run.plots=false`` does (recording on), one run after
the other, and prints the median over the runs of:

- the real-time factor (simulated / wall time of the run, ``summary.json``), and the
  simulated time per CPU second the run's process used (all its threads): what the
  factor would be on cores of its own, less sensitive to other work on the machine;
- each component's step time p50 (the orchestrator's timing of every step,
  ``summary.json`` ``components``): the camera and the localizer per frame (after the
  first frame they track: the whole-frame search happens once, at the start), the
  navigation filter (``ekf``), each sensor (``imu``, ``pressure``), and the others for
  reference;
- the share of the machine's two CPUs that other processes used during each run
  (/proc/stat minus this process tree) and the 1-minute load average before and after,
  so that the figures can be read against the load they were taken under.

With ``--baseline-python`` each run is paired with one of another checkout (the
code before a change), interleaved, so both see the same load; the ratios of the
medians are printed beside the figures.

Targets (issue 21), printed as met / not met: real-time factor >= 3 on the 2-core
machine, camera <= 2 ms and localizer <= 2 ms p50 per frame, EKF <= 150 us and each
sensor <= 80 us p50 per step. The wall-clock figures stretch with the load on a shared
machine; docs/benchmarks.md records them with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from realtime import _cpu_model, _cpu_times  # noqa: E402  (benchmarks/realtime.py)

# (what, summary key, limit, unit) — a limit on the real-time factor is a floor.
TARGETS = (
    ("real-time factor", "rtf", 3.0, "x"),
    ("camera p50 per frame", "camera", 2000.0, "us"),
    ("localizer p50 per frame", "localizer", 2000.0, "us"),
    ("EKF p50 per step", "ekf", 150.0, "us"),
    ("IMU p50 per step", "imu", 80.0, "us"),
    ("pressure p50 per step", "pressure", 80.0, "us"),
)


def one_run(rig: Path, until: float, sets: list[str], out: Path,
            python: str = sys.executable) -> dict:
    """One flat-out run; its summary and the others' share of the CPUs meanwhile."""
    cmd = [python, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--until",
           f"{until:g}", "--out", str(out), "--force", "--quiet", "--set", "run.plots=false"]
    for s in sets:
        cmd += ["--set", s]
    busy0, total0, _ = _cpu_times()
    own0 = os.times()
    load_before = os.getloadavg()[0]
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    own1 = os.times()
    busy1, total1, _ = _cpu_times()
    summary = json.loads((out / "summary.json").read_text())
    ticks = os.sysconf("SC_CLK_TCK")
    own = (own1.children_user + own1.children_system
           - own0.children_user - own0.children_system) * ticks
    others = max(0.0, (busy1 - busy0) - own) / (total1 - total0) if total1 > total0 else 0.0
    cpu_s = own / ticks
    return {"summary": summary, "others_cpu": others, "load_before": load_before,
            "load_after": os.getloadavg()[0], "cpu_s": cpu_s,
            "cpu_factor": summary["sim_time_s"] / cpu_s if cpu_s > 0 else float("nan")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rig", type=Path, default=ROOT / "rigs" / "pool.toml")
    ap.add_argument("--until", type=float, default=60.0, help="simulated seconds per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], metavar="K=V")
    ap.add_argument("--baseline-python", metavar="PYTHON",
                    help="also run the rig with this interpreter (another checkout's "
                    ".venv/bin/python, e.g. the code before a change), interleaved with "
                    "this one's runs, and print each figure's ratio to it")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args(argv)

    runs, base_runs = [], []
    with tempfile.TemporaryDirectory(prefix="pool_speed_") as tmp:
        for i in range(args.runs):
            todo = [("baseline", base_runs, args.baseline_python)] if args.baseline_python else []
            for label, into, python in todo + [("this", runs, sys.executable)]:
                r = one_run(args.rig, args.until, args.set, Path(tmp) / f"{label}{i}", python)
                into.append(r)
                s = r["summary"]
                print(f"run {i + 1} ({label}): real-time factor {s['real_time_factor']:.2f} "
                      f"(CPU time {r['cpu_factor']:.2f}), digest {s['digest'][:16]}, others used "
                      f"{100 * r['others_cpu']:.0f} % of the CPUs, load {r['load_before']:.2f} -> "
                      f"{r['load_after']:.2f}", flush=True)

    names = list(runs[0]["summary"]["components"])
    fig, base = medians(runs), medians(base_runs) if base_runs else {}
    print()
    print(f"machine: {_cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}")
    others = ", ".join(f"{100 * r['others_cpu']:.0f} %" for r in runs)
    print(f"rig {args.rig.name}, {args.until:g} s simulated, median of {args.runs} runs; "
          f"others' CPU {others}")
    print()
    if base:
        print(f"{'':<12} {'p50 us (median of runs)':>24} {'baseline':>10} {'ratio':>7}")
        print(f"{'real time':<12} {fig['rtf']:>23.2f}x {base['rtf']:>9.2f}x "
              f"{fig['rtf'] / base['rtf']:>7.2f}")
        print(f"{'(CPU time)':<12} {fig['cpu_factor']:>23.2f}x {base['cpu_factor']:>9.2f}x "
              f"{fig['cpu_factor'] / base['cpu_factor']:>7.2f}")
        for n in names:
            print(f"{n:<12} {fig[n]:>24.1f} {base.get(n, float('nan')):>10.1f} "
                  f"{fig[n] / base[n] if base.get(n) else float('nan'):>7.2f}")
    else:
        print(f"real time {fig['rtf']:.2f}x; simulated time per CPU second of the run "
              f"{fig['cpu_factor']:.2f}x (what it would be with a core of its own)")
        print(f"{'component':<12} {'p50 us (median of runs)':>24}   per run")
        for n in names:
            per = ", ".join(f"{r['summary']['components'][n]['p50_us']:.0f}" for r in runs)
            print(f"{n:<12} {fig[n]:>24.1f}   {per}")
    print()
    ok_all = True
    for what, key, limit, unit in TARGETS:
        if key not in fig:
            print(f"{what:<26} (no component {key!r} in this rig)")
            continue
        v = fig[key]
        met = v >= limit if key == "rtf" else v <= limit
        ok_all &= met
        rel = ">=" if key == "rtf" else "<="
        shown = f"{v:.2f}x" if key == "rtf" else f"{v:.0f} us"
        print(f"{what:<26} {shown:>10}   target {rel} {limit:g} {unit}: "
              f"{'met' if met else 'NOT met'}")
    if args.json:
        def brief(rs):
            return [{"real_time_factor": r["summary"]["real_time_factor"],
                     "digest": r["summary"]["digest"], "others_cpu": r["others_cpu"],
                     "load_before": r["load_before"], "load_after": r["load_after"]} for r in rs]

        print(json.dumps({"figures": fig, "runs": brief(runs), "baseline": base,
                          "baseline_runs": brief(base_runs)}, indent=1))
    return 0 if ok_all else 1


def medians(runs: list[dict]) -> dict[str, float]:
    """Real-time factor and each component's p50, median over the runs."""
    out = {"rtf": statistics.median(r["summary"]["real_time_factor"] for r in runs),
           "cpu_factor": statistics.median(r["cpu_factor"] for r in runs)}
    for n in runs[0]["summary"]["components"]:
        out[n] = statistics.median(r["summary"]["components"][n]["p50_us"] for r in runs)
    return out


if __name__ == "__main__":
    sys.exit(main())
