"""Sweep designs (orchestrator/sweep/design.py): cases, seeds, distributions, files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from moonpool.orchestrator.sweep.design import (
    SweepError,
    case_seed,
    make_cases,
    parse_distribution,
    parse_value,
    spec_from_args,
    spec_from_file,
    split_top,
    value_text,
)

ROOT = Path(__file__).resolve().parents[2]
RIG = ROOT / "rigs" / "quickstart.toml"


def test_grid_is_the_product_times_the_seeds_and_seeds_depend_on_index_only():
    spec = spec_from_args(RIG, grid=["a.b=1,2,3", "c.d=[1, 2],[3, 4]"], seeds=2, seed=7)
    cases = make_cases(spec)
    assert len(cases) == 3 * 2 * 2
    assert [c.index for c in cases] == list(range(12))
    assert cases[5].point == 2 and cases[5].replicate == 1
    assert cases[5].values == (("a.b", 2), ("c.d", [1, 2]))
    assert cases[7].values == (("a.b", 2), ("c.d", [3, 4]))
    assert [c.seed for c in cases] == [case_seed(7, i) for i in range(12)]
    assert len({c.seed for c in cases}) == 12
    assert case_seed(7, 3) != case_seed(8, 3)
    assert cases[3].overrides(spec) == ["a.b=1", "c.d=[3, 4]"]


def test_random_draws_are_reproducible_and_in_range():
    kw = dict(random=["x=uniform(1, 2)", "y=loguniform(1e-3, 1e-1)", "z=choice(a, b)",
                      "w=normal(0, 1)"], samples=50, seed=3)
    a, b = make_cases(spec_from_args(RIG, **kw)), make_cases(spec_from_args(RIG, **kw))
    assert a == b
    vals = {k: [dict(c.values)[k] for c in a] for k in "xyzw"}
    assert all(1 <= x <= 2 for x in vals["x"])
    assert all(1e-3 <= y <= 1e-1 for y in vals["y"])
    assert set(vals["z"]) == {"a", "b"}
    assert abs(np.mean(vals["w"])) < 0.5
    other = make_cases(spec_from_args(RIG, **{**kw, "seed": 4}))
    assert [c.values for c in other] != [c.values for c in a]


def test_latin_hypercube_puts_one_sample_in_each_stratum():
    n = 10
    cases = make_cases(spec_from_args(RIG, random=["x=uniform(0, 1)", "y=uniform(0, 10)"],
                                      samples=n, sampling="lhs", seed=1))
    for key, scale in (("x", 1), ("y", 10)):
        strata = sorted(int(dict(c.values)[key] / scale * n) for c in cases)
        assert strata == list(range(n))


@pytest.mark.parametrize("text", ["uniform(2, 1)", "loguniform(0, 1)", "normal(0, -1)",
                                  "gauss(0, 1)", "choice()", "uniform(1)", "uniform(a, b)"])
def test_bad_distributions_are_refused(text):
    with pytest.raises(SweepError):
        parse_distribution(text, "--random x")


def test_empty_grid_and_bad_counts_are_refused():
    with pytest.raises(SweepError, match="no values"):
        spec_from_args(RIG, grid=["a.b="])
    with pytest.raises(SweepError, match="seeds"):
        spec_from_args(RIG, seeds=0)
    with pytest.raises(SweepError, match="twice"):
        spec_from_args(RIG, grid=["a=1"], random=["a=uniform(0, 1)"])
    with pytest.raises(SweepError, match="not found"):
        spec_from_args(ROOT / "rigs" / "nope.toml")


def test_values_round_trip_through_set_text():
    for v in [1, -2.5, 1e-9, True, "text", [1.0, 2.0], {"a": 1, "b": [1, 2]}]:
        assert parse_value(value_text(v)) == v
    assert split_top('[1, 2], "a,b", {x = 1, y = 2}') == ["[1, 2]", '"a,b"', "{x = 1, y = 2}"]


def test_sweep_file(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(f'''
[sweep]
rig = "{RIG}"
seeds = 2
until = "3s"
set = ["components.pid.parameters.ki=1"]
[sweep.grid]
"components.pid.parameters.kp" = [10, 20]
[sweep.random]
"components.pid.parameters.kd" = {{ dist = "uniform", low = 1, high = 2 }}
"components.pid.parameters.max_force_n" = "choice(50, 60)"
''')
    spec = spec_from_file(f)
    assert spec.until_s == 3.0 and spec.seeds == 2 and len(make_cases(spec)) == 4
    f.write_text(f'[sweep]\nrig = "{RIG}"\nseedz = 2\n')
    with pytest.raises(SweepError, match="seedz"):
        spec_from_file(f)
    f.write_text('[sweep]\nrig = "quickstart.toml"\n[sweep.grid]\n"a.b" = []\n')
    with pytest.raises(SweepError):
        spec_from_file(f)


def test_results_table_types_and_atomic_files(tmp_path):
    from moonpool.orchestrator.sweep.results import make_row, read_table, write_tables

    spec = spec_from_args(RIG, grid=["components.pid.parameters.kp=[1.0, 2.0],[3.0, 4.0]"])
    c0, c1 = make_cases(spec)
    ok = {"status": "ok", "digest": "ab", "sim_time_s": 1.0,
          "metrics": {"t1": {"rmse": 0.5, "success": 3, "per_trial": [1, 2], "flag": True}}}
    bad = {"status": "failed", "error": "boom"}
    rows = [make_row(c0, ok, 1.5), make_row(c1, bad, 0.1)]
    write_tables(tmp_path, rows, spec)
    t = read_table(tmp_path).to_pylist()
    assert t[0]["param.components.pid.parameters.kp"] == "[1.0, 2.0]"
    assert t[0]["metrics.t1.rmse"] == 0.5 and t[1]["metrics.t1.rmse"] is None
    assert t[0]["metrics.t1.success"] == 3 and t[0]["metrics.t1.flag"] is True
    assert t[0]["metrics.t1.per_trial"] == "[1, 2]"
    assert t[1]["error"] == "boom" and t[1]["status"] == "failed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv", "results.parquet"]
