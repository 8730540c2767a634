"""``moonpool calibrate thrusters`` (issue 23) end to end: bollard-pull CSVs simulated
from bluerov2_heavy.toml's curves with a load cell's noise (2 % + 0.2 N) give a profile
that loads with the allocator's ``thrusters_from_profile``, carries every coefficient
within 2 % of the truth, and is the input profile everywhere else; each bad input is
refused with exit 2 and a message naming the file and the fix; a fit that fails exits 1
and writes nothing."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import numpy as np

from conftest import ROOT
from moonpool.components.actuation.geometry import thrusters_from_profile

PROFILE = ROOT / "fmus" / "hydrodynamics" / "profiles" / "bluerov2_heavy.toml"
TRUTH = tomllib.loads(PROFILE.read_text())


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "calibrate",
                           "thrusters", *map(str, args)], capture_output=True, text=True)
    print(proc.stdout, proc.stderr)
    return proc


def bollard_csv(path, names, seed, sides=("f", "r")):
    rng = np.random.default_rng(seed)
    lines = ["# simulated bollard pull", "thruster,speed_radps,thrust_n"]
    spec = {t["name"]: t for t in TRUTH["thrusters"]}
    for name in names:
        speeds = np.concatenate([np.linspace(0.1, 1, 10) * ("f" in sides),
                                 -np.linspace(0.1, 1, 10) * ("r" in sides)]) * 366.5
        for w in speeds[speeds != 0]:
            c = spec[name]["c_forward" if w > 0 else "c_reverse"]
            for _ in range(10):
                t = c * w * abs(w)
                lines.append(f"{name},{w:.3f},{t + 0.02 * abs(t) * rng.standard_normal() + 0.2 * rng.standard_normal():.4f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_end_to_end(tmp_path):
    names = [t["name"] for t in TRUTH["thrusters"]]
    a = bollard_csv(tmp_path / "front.csv", names[:4], 11)
    b = bollard_csv(tmp_path / "back.csv", names[4:], 12)
    out = tmp_path / "fitted.toml"
    proc = run(a, b, "--profile", PROFILE, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "| t8 | c_reverse |" in proc.stdout and "RMS residual (N)" in proc.stdout
    fitted = tomllib.loads(out.read_text())
    specs = thrusters_from_profile(fitted)
    for spec, old in zip(specs, TRUTH["thrusters"]):
        assert abs(spec.c_forward / old["c_forward"] - 1) < 0.02, spec
        assert abs(spec.c_reverse / old["c_reverse"] - 1) < 0.02, spec
        assert spec.max_forward_n == old["max_forward_n"] and spec.position_m == tuple(old["position"])
    assert fitted["parameters"] == TRUTH["parameters"] and fitted["name"] == TRUTH["name"]
    assert "front.csv, back.csv" in out.read_text().splitlines()[0]


def test_bad_input_is_refused(tmp_path):
    good = bollard_csv(tmp_path / "good.csv", ["t1"], 1)
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("thruster,speed,thrust_n\nt1,100,3.7\n")
    stranger = tmp_path / "stranger.csv"
    stranger.write_text("thruster,speed_radps,thrust_n\nt9,100,3.7\n")
    nan = tmp_path / "nan.csv"
    nan.write_text("thruster,speed_radps,thrust_n\nt1,100,nan\n")
    forward = bollard_csv(tmp_path / "forward.csv", ["t2"], 2, sides=("f",))
    reverse = bollard_csv(tmp_path / "reverse.csv", ["t2"], 2, sides=("r",))
    cases = [
        (tmp_path / "absent.csv", "absent.csv: cannot read", "existing CSV"),
        (nocol, "nocol.csv: no column 'speed_radps'", "name the columns"),
        (stranger, "stranger.csv: thruster 't9' is not in the profile", "name the thruster"),
        (nan, "nan.csv: line 2: non-finite value", "remove the NaN"),
        (forward, "forward.csv: thruster 't2' has no reverse samples", "--partial"),
        (reverse, "reverse.csv: thruster 't2' has no forward samples", "--partial"),
    ]
    for path, words, fix in cases:
        out = tmp_path / "o.toml"
        proc = run(good, path, "--profile", PROFILE, "--out", out)
        assert proc.returncode == 2, (path, proc.stderr)
        assert words in proc.stderr and fix in proc.stderr and "fix:" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and not out.exists()
    # --partial: the missing side is kept from the profile, and said so
    out = tmp_path / "partial.toml"
    proc = run(forward, "--profile", PROFILE, "--out", out, "--partial")
    assert proc.returncode == 0, proc.stderr
    assert "no reverse samples, c_reverse kept from the profile" in proc.stdout
    t2 = tomllib.loads(out.read_text())["thrusters"][1]
    assert t2["c_reverse"] == TRUTH["thrusters"][1]["c_reverse"]
    assert t2["c_forward"] != TRUTH["thrusters"][1]["c_forward"]
    # a profile without [[thrusters]]
    bare = tmp_path / "bare.toml"
    bare.write_text('name = "x"\n[parameters]\nmass = 1.0\n')
    proc = run(good, "--profile", bare, "--out", tmp_path / "o.toml")
    assert proc.returncode == 2 and "bare.toml: the profile has no [[thrusters]]" in proc.stderr


def test_failed_fit_exits_1(tmp_path):
    """Thrust of the wrong sign (a load cell mounted backwards): the fit ends at c = 0."""
    p = tmp_path / "backwards.csv"
    p.write_text("thruster,speed_radps,thrust_n\n" + "".join(
        f"t1,{w},{-3.7e-4 * w * abs(w)}\n" for w in (100.0, 200.0, 300.0, -100.0, -200.0)))
    out = tmp_path / "o.toml"
    proc = run(p, "--profile", PROFILE, "--out", out)
    assert proc.returncode == 1, proc.stderr
    assert "calibration failed" in proc.stderr and "backwards.csv" in proc.stderr
    assert "fix:" in proc.stderr and "sign" in proc.stderr and not out.exists()
