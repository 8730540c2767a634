"""Plot expressions and x-y tracks in [[plots]] (issue 22): diff, norm, unwrap, wrap;
kind = "xy" in pairs; one unit per axis, checked."""

from __future__ import annotations

import numpy as np
import pytest

from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator import plotexpr
from moonpool.orchestrator.rigfile import load_and_check, load_rig

QUICK = "rigs/quickstart.toml"


def _signal(t, y):
    return np.asarray(t, float), np.asarray(y, float)


def test_diff_norm_unwrap_wrap():
    data = {"a.p:x": _signal([0, 1, 2], [1.0, 2.0, 3.0]),
            "b.p:x": _signal([0, 2], [0.0, 2.0]),
            "a.p:yaw_rad": _signal([0, 1, 2, 3], [3.0, -3.0, -2.9, 3.1])}
    t, y = plotexpr.evaluate(plotexpr.parse("diff(a.p:x, b.p:x)"), data.__getitem__)
    assert list(t) == [0, 1, 2] and np.allclose(y, [1.0, 1.0, 1.0])  # b interpolated
    _, y = plotexpr.evaluate(plotexpr.parse("norm(diff(a.p:x, b.p:x), a.p:x)"), data.__getitem__)
    assert np.allclose(y, np.sqrt([1 + 1, 1 + 4, 1 + 9]))
    _, y = plotexpr.evaluate(plotexpr.parse("unwrap(a.p:yaw_rad)"), data.__getitem__)
    assert np.all(np.abs(np.diff(y)) < 1.0)  # no jump of 2π left
    _, y = plotexpr.evaluate(plotexpr.parse("wrap(a.p:yaw_rad)"), lambda s: _signal([0], [7.0]))
    assert np.allclose(y, [7.0 - 2 * np.pi])
    assert plotexpr.leaves(plotexpr.parse("norm(diff(a.p:x, b.p:x), c.q:z)")) == [
        "a.p:x", "b.p:x", "c.q:z"]


def _problems(*overrides):
    with pytest.raises(RigValidationError) as err:
        load_and_check(QUICK, list(overrides))
    return "\n".join(str(p) for p in err.value.problems)


def test_bad_expressions_and_pairs_are_refused():
    text = _problems('plots=[{title = "x", series = ["dif(vehicle.state:position_ned_m.z)"]}]')
    assert "unknown function 'dif'" in text
    text = _problems('plots=[{title = "x", series = ["diff(vehicle.state:position_ned_m.z)"]}]')
    assert "diff takes 2 argument(s), got 1" in text
    text = _problems('plots=[{title = "x", kind = "xy", series = ["vehicle.state:position_ned_m.z"]}]')
    assert "in pairs (x, y)" in text
    text = _problems('plots=[{title = "x", series = ["diff(vehicle.state:position_ned_m.z, '
                     'vehicle.state:nope)"]}]')
    assert "nope" in text


def test_one_unit_per_axis():
    text = _problems('plots=[{title = "x", series = ["vehicle.state:position_ned_m.z", '
                     '"vehicle.state:yaw_rad"]}]')
    assert "one y axis would carry m" in text and "rad" in text and "split them" in text
    # an x-y track may have other units on each axis, one on each
    load_rig(QUICK, ['plots=[{title = "x", kind = "xy", series = ["vehicle.state:yaw_rad", '
                     '"vehicle.state:position_ned_m.z"]}]'])


def test_the_shipped_pool_plots_answer_their_question():
    rig = load_rig("rigs/pool.toml")
    by_title = {p.title: p for p in rig.plots}
    assert by_title["Localization error"].series[0].startswith("norm(diff(")
    assert all(s.startswith("unwrap(") for s in by_title["Yaw"].series)
    assert by_title["Track (seen from above)"].kind == "xy"


def _plot_problems(rig) -> list[str]:
    """What a reader of a shipped rig's plots would trip over (issue 22, point 7): two
    units on one axis, a raw yaw (a solid block at +-pi), an "error" plot that draws the
    quantities instead of their difference."""
    problems = []
    for plot in rig.plots:
        where = f"{rig.name}: {plot.title!r}"
        for label in (plot.ylabel, getattr(plot, "xlabel", "") or "", getattr(plot, "zlabel", "") or ""):
            if label.count("[") > 1:
                problems.append(f"{where}: two units on one axis ({label!r})")
        for s in plot.series:
            if s.endswith("yaw_rad") and not s.startswith(("unwrap(", "wrap(")):
                problems.append(f"{where}: raw yaw {s!r} (use unwrap(...) or wrap(diff(...)))")
        if "error" in plot.title.lower():
            for s in plot.series:
                if not (s.startswith(("diff(", "norm(", "wrap(")) or "signals[e" in s
                        or "error" in s.split(":")[0] or "err" in s.rpartition(":")[2]):
                    problems.append(f"{where}: {s!r} is not an error (a difference, a norm "
                                    "or an error signal)")
    return problems


def test_every_shipped_rigs_plots_answer_their_question():
    from pathlib import Path

    rigs = sorted(Path("rigs").glob("*.toml")) + sorted(Path("rigs/hil").glob("*.toml"))
    assert len(rigs) > 15
    problems = [p for path in rigs for p in _plot_problems(load_rig(str(path)))]
    assert problems == []


def test_the_plot_review_finds_what_the_old_pool_t2_localized_plots_had():
    # the plots rigs/pool_t2_localized.toml had before: four overlapping x positions
    # under "Localization error", raw yaws, metres and radians on one axis
    rig = load_rig(QUICK, ['plots=[{title = "Localization error", series = '
                           '["vehicle.state:position_ned_m.z", "pid.command:signals[e].value"]}, '
                           '{title = "Yaw", series = ["vehicle.state:yaw_rad"], '
                           'ylabel = "|e| [m], e_yaw [rad]"}]'])
    problems = _plot_problems(rig)
    assert any("is not an error" in p for p in problems)
    assert any("two units on one axis" in p for p in problems)
    assert any("raw yaw" in p for p in problems)


def test_xyz_tracks_take_triples_with_one_unit_per_axis(tmp_path):
    text = _problems('plots=[{title = "x", kind = "xyz", series = ['
                     '"vehicle.state:position_ned_m.y", "vehicle.state:position_ned_m.x"]}]')
    assert "in triples (x, y, z)" in text
    text = _problems('plots=[{title = "x", kind = "xyz", series = ["vehicle.state:position_ned_m.y", '
                     '"vehicle.state:position_ned_m.x", "vehicle.state:yaw_rad", '
                     '"vehicle.state:position_ned_m.y", "vehicle.state:position_ned_m.x", '
                     '"vehicle.state:position_ned_m.z"]}]')
    assert "one z axis would carry" in text
    rig = load_rig(QUICK, ['plots=[{title = "Track", kind = "xyz", zlabel = "depth [m]", series = '
                           '["vehicle.state:position_ned_m.y", "vehicle.state:position_ned_m.x", '
                           '"vehicle.state:position_ned_m.z"]}]'])
    assert rig.plots[0].kind == "xyz" and rig.plots[0].zlabel == "depth [m]"
    # drawn from a real run's recording: a 3-D axes, its z axis pointing down
    from moonpool.orchestrator.plots import make_plots
    from moonpool.orchestrator.rigfile import load_and_check as check
    from moonpool.orchestrator.run import run_rig

    rig = check(QUICK, ["run.plots=false", 'plots=[{title = "Track", kind = "xyz", series = '
                        '["vehicle.state:position_ned_m.y", "vehicle.state:position_ned_m.x", '
                        '"vehicle.state:position_ned_m.z"]}]'], until_s=2.0)
    run_rig(rig, tmp_path)
    paths = make_plots(tmp_path / "recording.mcap", tmp_path / "plots", rig.plots)
    assert any(p.name == "track.png" for p in paths)
