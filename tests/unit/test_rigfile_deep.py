"""Rig files: the checks that load component classes (ports, parameters, plotted fields;
orchestrator/rigfile/deep.py and fields.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from moonpool.orchestrator.rigfile import check_rig, load_rig

from rigfiles import HERE, MINIMAL, by_key, line_of, problems_of, write_rig


# ------------------------------------------------------------------ deep checks

DEEP = """
[run]
until = 1

[components.src]
entry = "rigfile_components.py:Source"
rate_hz = 10
[components.src.parameters]
gian = 2.0
label = 3
weights = [1, "two"]

[components.sink]
entry = "rigfile_components.py:Sink"
rate_hz = 10

[components.gone]
entry = "missing_file.py:Thing"
rate_hz = 10

[components.far]
run = "remote"
entry = "nowhere.module:Thing"
endpoint = "tcp://h:1"
insecure = true
rate_hz = 10

[[connections]]
from = "src.wrnch"
to = "sink.wrench"

[[connections]]
from = "src.wrench"
to = "sink.pressure"

[[connections]]
from = "src.wrench"
to = "sink.echo"

[[connections]]
from = "sink.echo"
to = "far.anything"

[[plots]]
title = "p"
series = [
    "src.pressure:pressure_pa", "src.pressure:depth", "sink.wrench:force_n.x", "src.wrench:force_n",
]
"""


def test_check_rig_finds_every_class_level_problem(tmp_path: Path) -> None:
    path = write_rig(tmp_path, DEEP)
    rig = load_rig(path)  # nothing here needs the classes
    problems = check_rig(rig)
    p = by_key(problems)
    assert all(q.file == str(path) for q in problems)

    gian = p["components.src.parameters.gian"]
    assert "unknown parameter 'gian'" in gian.message and "did you mean 'gain'?" in gian.message
    assert gian.line == line_of(path, "gian =")
    assert "expects a string" in p["components.src.parameters.label"].message
    assert "expects an array of numbers" in p["components.src.parameters.weights"].message
    missing = p["components.sink.parameters"]
    assert "missing required parameter 'threshold_pa' (trip level, Pa)" in missing.message
    assert missing.line == line_of(path, "[components.sink]")

    gone = p["components.gone.entry"]
    assert "does not exist" in gone.message and gone.line == line_of(path, '"missing_file.py')
    assert not any(k.startswith("components.far") for k in p)  # remote: skipped

    wrnch = p["connections[0].from"]
    assert "no output port 'wrnch' (did you mean 'wrench'?)" in wrnch.message
    assert wrnch.line == line_of(path, '"src.wrnch"')
    mismatch = p["connections[1]"]
    assert (
        "sends moonpool.v1.Wrench but sink.pressure takes moonpool.v1.Pressure" in mismatch.message
    )
    assert mismatch.line == line_of(path, '"sink.pressure"') - 2  # its [[connections]] header
    echo = p["connections[2].to"]
    assert "no input port 'echo'; 'echo' is an output port (connections go" in echo.message
    assert "did you mean" not in echo.message
    assert "connections[3].from" not in p and "connections[3].to" not in p

    series = [q for q in problems if q.key.startswith("plots[0].series[")]
    # and pressure_pa beside force_n.x: two units on one axis (issue 22)
    assert any(q.key == "plots[0].series" and "one unit per axis" in q.message
               for q in problems)
    assert [q.key for q in series] == [
        "plots[0].series[1]", "plots[0].series[2]", "plots[0].series[3]",
    ]
    assert "no field 'depth'" in series[0].message
    assert "no output port 'wrench'; 'wrench' is an input port (plot the output" in (
        series[1].message
    )
    assert "'force_n' is a moonpool.v1.Vector3 message" in series[2].message


def test_parameters_own_checks_run(tmp_path: Path) -> None:
    path = write_rig(tmp_path, MINIMAL.replace("threshold_pa = 1000.0", "threshold_pa = -1"))
    (p,) = check_rig(load_rig(path))
    assert p.key == "components.sink.parameters"
    assert "threshold_pa must be >= 0, got -1.0" in p.message


def test_entries_that_do_not_name_components(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        MINIMAL.replace("Source", "NotAComponent").replace(":Sink", ":Sunk"),
    )
    p = by_key(check_rig(load_rig(path)))
    assert "not a subclass of moonpool.components.Component" in p["components.src.entry"].message
    assert "has no attribute 'Sunk'" in p["components.sink.entry"].message
    assert set(p) == {"components.src.entry", "components.sink.entry"}


def test_load_and_check_reports_the_union_once(tmp_path: Path) -> None:
    text = MINIMAL + '\n[[connections]]\nfrom = "src.wrench"\nto = "sink.wrench"\n'
    path = write_rig(tmp_path, text.replace("until = \"1s\"", "until = \"1s\"\nsed = 1"))
    problems = problems_of(path, ["components.sink.parameters.threshold_pa=oops"], check=True)
    assert [(p.key, p.line) for p in problems] == [
        ("run.sed", 3),
        ("connections[1].to", line_of(path, "to =") + 4),
        ("components.sink.parameters.threshold_pa", line_of(path, "threshold_pa")),
    ]
    assert problems[2].message.endswith(
        "(value from --set components.sink.parameters.threshold_pa=oops)"
    )


def test_check_rig_on_a_rig_built_in_code(tmp_path: Path) -> None:
    shutil.copy(HERE / "rigfile_components.py", tmp_path)
    rig = load_rig(write_rig(tmp_path, MINIMAL))
    from dataclasses import replace

    rig2 = replace(rig, source_text="", path=Path("made-in-code.toml"))
    assert check_rig(rig2) == []
    conn = rig.connections[0]
    broken = replace(rig2, connections=(replace(conn, target_port="nope"), conn, conn))
    unknown, twice = check_rig(broken)
    assert (unknown.file, unknown.key, unknown.line) == (
        "made-in-code.toml", "connections[0].to", 0,
    )
    assert "has no input port 'nope'" in unknown.message
    assert twice.key == "connections[2].to"
    assert "input sink.wrench is already connected by connections[1]" in twice.message


def test_lines_survive_multiline_strings_comments_and_dotted_keys(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        '''
        description = """
        [run]
        until = "not this one"
        """
        # [components.fake]
        [run]
        until = 1
        [components]
        a = { entry = "x:Y", rate_hz = 1, colour = "red" }
        b.entry = "x:Y"
        b.period = "1 fortnight"
        ''',
    )
    p = by_key(problems_of(path))
    assert set(p) == {"components.a.colour", "components.b.period"}
    assert p["components.a.colour"].line == 9  # inline table: the line of `a = {...}`
    assert p["components.b.period"].line == 11  # dotted key under [components]


def test_process_group_key(tmp_path):
    from moonpool.orchestrator.rigfile import load_rig
    from moonpool.components.sdk.errors import RigValidationError

    base = """
[run]
until = "1s"
[components.a]
entry = "quickstart.vehicle"
rate_hz = 10
run = "{run}"
group = "{group}"
"""
    ok = tmp_path / "ok.toml"
    ok.write_text(base.format(run="process", group="sensors"))
    assert load_rig(ok).component("a").group == "sensors"
    assert load_rig(ok, mode="process").component("a").group == ""  # --mode: one process each
    for run, group, expect in (("inproc", "g", 'only used with run = "process"'),
                               ("process", "bad name!", "expected a group name")):
        bad = tmp_path / "bad.toml"
        bad.write_text(base.format(run=run, group=group))
        with pytest.raises(RigValidationError) as err:
            load_rig(bad)
        assert "components.a.group" in str(err.value) and expect in str(err.value)


def test_plot_paths_may_key_signals_by_names_with_dots() -> None:
    from moonpool.orchestrator.rigfile.fields import field_problem as _field_problem
    from moonpool.v1 import signals_pb2

    desc = signals_pb2.Signals.DESCRIPTOR
    assert _field_problem(desc, "signals[left.traction_n].value") is None
    assert _field_problem(desc, "signals[e_3d].value") is None
    assert "has no field 'nope'" in _field_problem(desc, "signals[left.traction_n].nope")
    assert "not a number" in _field_problem(desc, "signals[left.traction_n]")


def test_record_exclude_is_checked(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = 1
        record_exclude = ["a", "ghost.out", "a.out"]
        [components.a]
        entry = "x:Y"
        rate_hz = 1
        """,
    )
    p = by_key(problems_of(path))
    assert "not COMPONENT.PORT" in p["run.record_exclude[0]"].message
    assert "no component named 'ghost'" in p["run.record_exclude[1]"].message
    assert "run.record_exclude[2]" not in p
    bad = write_rig(tmp_path, '[run]\nuntil = 1\nrecord_exclude = "a.out"\n[components.a]\nentry = "x:Y"\nrate_hz = 1\n')
    assert "expected a list" in by_key(problems_of(bad))["run.record_exclude"].message
