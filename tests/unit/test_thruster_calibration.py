"""calibrate thrusters' fit (components/actuation/calibration.py) on bollard-pull data
simulated from bluerov2_heavy.toml's curves with a load cell's noise (2 % of the
reading + 0.2 N, both Gaussian 1σ): every coefficient within 2 % over 30 seeds, the
reported 1σ consistent with the spread of the fit over the seeds, and write_profile
changing only the coefficient lines."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest

from conftest import ROOT
from moonpool.components.actuation import calibration as cal
from moonpool.components.actuation.geometry import thrusters_from_profile
from moonpool.components.sdk.errors import ParameterError

PROFILE = ROOT / "fmus" / "hydrodynamics" / "profiles" / "bluerov2_heavy.toml"
TEXT = PROFILE.read_text()
SPECS = thrusters_from_profile(tomllib.loads(TEXT))
W_MAX = 366.5


def bollard(rng, names, per_speed=10, truth=None):
    """Rows (thruster, ω, T) of a bollard test: 10 speeds per direction from 10 % to
    100 % of the speed limit, ``per_speed`` load-cell readings at each."""
    truth = truth or {s.name: (s.c_forward, s.c_reverse) for s in SPECS}
    rows = []
    for name in names:
        cf, cr = truth[name]
        for w in np.concatenate([np.linspace(0.1, 1, 10), -np.linspace(0.1, 1, 10)]) * W_MAX:
            t = (cf if w >= 0 else cr) * w * abs(w)
            for _ in range(per_speed):
                rows.append((name, float(w), float(t + 0.02 * abs(t) * rng.standard_normal()
                             + 0.2 * rng.standard_normal())))
    return rows


def write(path, rows, thruster_column=True):
    head = "thruster,speed_radps,thrust_n" if thruster_column else "speed_radps,thrust_n"
    body = "".join((f"{n},{w!r},{t!r}\n" if thruster_column else f"{w!r},{t!r}\n")
                   for n, w, t in rows)
    path.write_text(f"# bollard pull, load cell 2 % + 0.2 N\n{head}\n{body}")
    return path


def test_coefficients_within_2_percent_and_sigma_matches_spread(tmp_path):
    names = [s.name for s in SPECS]
    profile = tomllib.loads(TEXT)
    errors = {(n, side): [] for n in names for side in cal.SIDES}
    sigmas = {k: [] for k in errors}
    for seed in range(30):
        path = write(tmp_path / f"b{seed}.csv", bollard(np.random.default_rng(seed), names))
        res = cal.calibrate([path], profile)
        assert not res.kept and len(res.fits) == 16
        for f in res.fits:
            truth = f.profile_value
            errors[(f.thruster, f.side)].append(f.coefficient / truth - 1)
            sigmas[(f.thruster, f.side)].append(f.sigma / truth)
            assert 0.2 < f.rms_n < 1.5, f  # the noise's own RMS: 0.2 N + 2 % of ≤ 50 N
    worst = max(abs(e) for v in errors.values() for e in v)
    assert worst < 0.02, worst
    # spread over the seeds against the mean reported 1σ, per coefficient
    ratios = [np.std(errors[k], ddof=1) / np.mean(sigmas[k]) for k in errors]
    print(f"worst error {worst:.3%}; spread/σ {min(ratios):.2f}..{max(ratios):.2f}")
    assert all(0.7 < r < 1.4 for r in ratios), ratios
    # and pooled over the 16 coefficients (480 fits), the normalised error is ~N(0, 1)
    z = np.concatenate([np.array(errors[k]) / np.array(sigmas[k]) for k in errors])
    assert abs(np.mean(z)) < 0.2 and 0.8 < np.std(z) < 1.4, (np.mean(z), np.std(z))


def test_a_wrong_profile_is_recovered():
    """The fit does not start from (nor lean on) the profile: data from curves 30 % off
    the profile's give those curves back."""
    truth = {s.name: (1.3 * s.c_forward, 0.7 * s.c_reverse) for s in SPECS}
    rows = bollard(np.random.default_rng(1), ["t2"], truth=truth)
    samples = [cal.Sample(n, w, t, "x.csv") for n, w, t in rows]
    fwd = cal.fit_side("t2", "forward", [s for s in samples if s.speed_radps >= 0])
    rev = cal.fit_side("t2", "reverse", [s for s in samples if s.speed_radps < 0])
    assert abs(fwd.coefficient / truth["t2"][0] - 1) < 0.02
    assert abs(rev.coefficient / truth["t2"][1] - 1) < 0.02


def test_one_file_per_thruster_named_by_its_stem(tmp_path):
    rng = np.random.default_rng(3)
    paths = [write(tmp_path / f"{n}.csv", bollard(rng, [n]), thruster_column=False)
             for n in ("t1", "t5")]
    res = cal.calibrate(paths, tomllib.loads(TEXT))
    assert sorted({f.thruster for f in res.fits}) == ["t1", "t5"]
    assert res.kept == ("t2", "t3", "t4", "t6", "t7", "t8")
    assert all(f.files == (str(tmp_path / f"{f.thruster}.csv"),) for f in res.fits)


def test_written_profile_changes_only_the_coefficients(tmp_path):
    path = write(tmp_path / "b.csv", bollard(np.random.default_rng(5), ["t1", "t3"]))
    res = cal.calibrate([path], tomllib.loads(TEXT))
    out = cal.write_profile(res, TEXT, "b.csv")
    old, new = TEXT.splitlines(), out.splitlines()
    assert new[0].startswith("# c_forward / c_reverse fitted") and len(new) == len(old) + 1
    changed = [(a, b) for a, b in zip(old, new[1:]) if a != b]
    assert len(changed) == 4 and all(a.split("=")[0] == b.split("=")[0] for a, b in changed)
    fitted = {(f.thruster, f.side): f.coefficient for f in res.fits}
    got = {t["name"]: t for t in tomllib.loads(out)["thrusters"]}
    for (name, side), c in fitted.items():
        assert math.isclose(got[name][f"c_{side}"], c, rel_tol=1e-5)
    before = tomllib.loads(TEXT)
    assert tomllib.loads(out)["parameters"] == before["parameters"]
    for a, b in zip(before["thrusters"], tomllib.loads(out)["thrusters"]):
        if a["name"] not in ("t1", "t3"):
            assert a == b
        else:
            assert {k: v for k, v in a.items() if not k.startswith("c_")} == \
                   {k: v for k, v in b.items() if not k.startswith("c_")}
    thrusters_from_profile(tomllib.loads(out))


def test_absent_keys_are_added_to_the_table():
    """A profile whose thrusters carry no c_forward / c_reverse (the defaults) gets them
    added at the end of the measured thruster's table."""
    text = ('name = "x"\n[[thrusters]]\nname = "a"\nposition = [0.0, 0.0, 0.0]\n'
            'direction = [1.0, 0.0, 0.0]\nmax_forward_n = 10.0\nmax_reverse_n = 8.0\n\n'
            '[[thrusters]]\nname = "b"\nposition = [0.0, 0.0, 0.0]\n'
            'direction = [0.0, 1.0, 0.0]\nmax_forward_n = 10.0\nmax_reverse_n = 8.0\n')
    res = cal.Result((cal.SideFit("a", "forward", 1.5e-4, 1e-6, 0.3, 50, None, ("f",)),
                      cal.SideFit("a", "reverse", 1.1e-4, 1e-6, 0.3, 50, None, ("f",))), (), ())
    out = tomllib.loads(cal.write_profile(res, text, "f"))
    assert out["thrusters"][0]["c_forward"] == 1.5e-4
    assert out["thrusters"][0]["c_reverse"] == 1.1e-4
    assert "c_forward" not in out["thrusters"][1]


def test_missing_side_refused_or_kept_with_partial(tmp_path):
    rows = [r for r in bollard(np.random.default_rng(2), ["t4"]) if r[1] > 0]
    path = write(tmp_path / "fwd_only.csv", rows)
    with pytest.raises(ParameterError, match=r"fwd_only.csv: thruster 't4' has no reverse") as e:
        cal.calibrate([path], tomllib.loads(TEXT))
    assert "--partial" in e.value.fix
    res = cal.calibrate([path], tomllib.loads(TEXT), partial=True)
    assert [(f.thruster, f.side) for f in res.fits] == [("t4", "forward")]
    assert "t4 reverse" in res.kept
    assert any("no reverse samples, c_reverse kept from the profile" in n for n in res.notes)


def test_wrong_sign_and_undetermined_fits_fail():
    w = np.linspace(50, 300, 20)
    wrong = [cal.Sample("t1", x, -3.7e-4 * x * x, "s.csv") for x in w]
    with pytest.raises(cal.FitFailed, match=r"'t1' forward \(s.csv\).*c_forward = 0") as e:
        cal.fit_side("t1", "forward", wrong)
    assert "sign" in e.value.fix
    noise = [cal.Sample("t1", x, float(v), "n.csv")
             for x, v in zip([1.0, 2.0], [5.0, 1.0])]
    with pytest.raises(cal.FitFailed, match="not determined"):
        cal.fit_side("t1", "forward", noise)


def test_curve_below_its_limit_is_noted(tmp_path):
    """A fitted forward curve 5 % weak cannot make max_forward_n at the speed limit: the
    report says so, with the fix (the Thrusters component would refuse the profile)."""
    truth = {s.name: (0.95 * s.c_forward, s.c_reverse) for s in SPECS}
    rows = bollard(np.random.default_rng(4), ["t6"], truth=truth)
    r = cal.calibrate([write(tmp_path / "t6.csv", rows)], tomllib.loads(TEXT))
    assert any("'t6': the fitted forward curve reaches" in n and "max_forward_n" in n
               for n in r.notes), r.notes
    assert not any("reverse" in n for n in r.notes), r.notes
    assert "note: thruster 't6'" in cal.format_report(r)
