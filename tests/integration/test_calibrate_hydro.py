"""``moonpool calibrate hydro`` (issue 23) on trials simulated by the real hydrodynamics
FMU (calibrated Fossen backend) for the BlueROV2 Heavy and REMUS 100 profiles, with
DVL/gyro-like white noise on the measured velocity (0.005 m/s, 0.002 rad/s): for surge,
sway, heave and yaw, four step trials (0.08, 0.3, 1 and 2 times a level: the smallest
makes the linear damping visible beside the quadratic) fitted and a
sinusoid held out; every fitted
coefficient within 5 % (added mass 10 %) of the profile (a zero D1 within 5 % of the
quadratic term at the trial speed), the replay NRMSE of the held-out trial tabled and
small; bad input refused with the file named."""

from __future__ import annotations

import math
import subprocess
import sys
import tomllib

import numpy as np
import pytest

from conftest import ROOT
from test_hydro_fmu import Hydro

pytestmark = pytest.mark.slow

PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"
FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
THRUST = {"u": "tau_X", "v": "tau_Y", "w": "tau_Z", "r": "tau_N"}
NOISE = {"u": 0.005, "v": 0.005, "w": 0.005, "r": 0.002}
LEVELS = {"bluerov2_heavy": {"u": 20.0, "v": 20.0, "w": 15.0, "r": 1.5},
          "remus100": {"u": 3.0, "v": 10.0, "w": 10.0, "r": 2.0}}
DT = 0.1


def simulate(params, axis, thrust, seed, path):
    """One trial CSV: the FMU at 10 Hz under the thrust profile, noisy velocity."""
    h = Hydro(FMU, 3, dict(params, init_d=5.0)).init()
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(len(thrust)):
        vel = float(h.get([axis])[0])
        rows.append((k * DT, thrust[k], vel + NOISE[axis] * rng.standard_normal()))
        h.set({THRUST[axis]: thrust[k]})
        h.step(DT)
    h.close()
    with open(path, "w") as f:
        f.write(f"t,{THRUST[axis]},{axis}\n")
        f.writelines(f"{t:.3f},{tau:.6g},{v:.8g}\n" for t, tau, v in rows)


def trials(tmp_path, name):
    params = tomllib.loads((PROFILES / f"{name}.toml").read_text())["parameters"]
    paths = []
    n = 300  # 30 s
    t = np.arange(n) * DT
    for i, axis in enumerate(THRUST):
        lvl = LEVELS[name][axis]
        shapes = [np.where(t < 20, 0.08 * lvl, 0.0), np.where(t < 20, 0.3 * lvl, 0.0),
                  np.where(t < 20, lvl, 0.0),
                  np.where(t < 20, 2.0 * lvl, 0.0), 1.5 * lvl * np.sin(2 * math.pi * t / 8.0)]
        for j, shape in enumerate(shapes):
            p = tmp_path / f"{axis}_{j}.csv"
            simulate(params, axis, shape, 100 * i + j, p)
            paths.append(p)
    return params, paths


@pytest.mark.parametrize("name", ["bluerov2_heavy", "remus100"])
def test_fit_recovers_the_profile(tmp_path, name):
    params, paths = trials(tmp_path, name)
    out = tmp_path / "fitted.toml"
    proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "calibrate", "hydro",
                           *map(str, paths), "--profile", str(PROFILES / f"{name}.toml"),
                           "--out", str(out)], capture_output=True, text=True)
    print(proc.stdout, proc.stderr)
    assert proc.returncode == 0, proc.stderr
    fitted = tomllib.loads(out.read_text())["parameters"]
    failures = []
    for axis in THRUST:
        vmax = 0.6 if axis != "r" else 1.0
        for key, tol in (("A", 0.10), ("D1", 0.05), ("D2", 0.05)):
            k = f"{key}_{axis}"
            truth, got = params[k], fitted[k]
            rigid = params["mass"] if axis != "r" else params["Izz"]
            if truth == 0.0:
                ok = got <= 0.05 * params[f"D2_{axis}"] * vmax
            elif key == "A" and truth < 0.1 * rigid:
                # Below a tenth of the rigid inertia (REMUS surge: 0.84 kg on 31 kg) the
                # added mass is not identifiable to 10 % from velocity trials: the total
                # inertia m + A is, to 1 %.
                ok = abs(got - truth) <= 0.01 * (rigid + truth)
            else:
                ok = abs(got / truth - 1) <= tol
            if not ok:
                failures.append(f"{k}: fitted {got:.4g}, truth {truth:.4g}")
    assert "NRMSE held out" in proc.stdout
    held = [float(line.split("|")[7]) for line in proc.stdout.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in THRUST]
    assert len(held) == 4 and max(held) < 0.05, held
    assert not failures, failures


def test_bad_trials_are_refused(tmp_path):
    flat = tmp_path / "flat.csv"
    flat.write_text("t,tau_X,u\n0,0,0\n0.1,0,0\n0.2,0,0\n")
    still = tmp_path / "still.csv"
    still.write_text("t,tau_X,u\n0,5,0.1\n0.1,5,0.1\n0.2,5,0.1\n")
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("t,tau_X\n0,5\n0.1,5\n0.2,5\n")
    prof = PROFILES / "bluerov2_heavy.toml"
    for path, words in ((flat, "excites no axis"), (still, "not excited"),
                        (nocol, "no measured velocity column 'u'")):
        proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "calibrate",
                               "hydro", str(path), "--profile", str(prof), "--out",
                               str(tmp_path / "o.toml")], capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        assert str(path) in proc.stderr and words in proc.stderr, proc.stderr
        assert "fix:" in proc.stderr


def test_undetermined_fit_fails(tmp_path):
    """A single, tiny step: the three coefficients are not determined -> exit 1."""
    from moonpool.components.dynamics import calibration as cal

    p = tmp_path / "tiny.csv"
    t = np.arange(5) * DT
    v = np.array([0.0, 1e-4, 2e-4, 2e-4, 2e-4])
    p.write_text("t,tau_X,u\n" + "".join(f"{a},{0.01},{b}\n" for a, b in zip(t, v)))
    with pytest.raises(cal.FitFailed, match="axis u"):
        cal.calibrate([p], {"mass": 13.5}, holdout=0)
