"""Rig files: parsing, validation, overrides and the deep checks (orchestrator/rigfile/)."""

from __future__ import annotations

import re
import shutil
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from moonpool.components.sdk.errors import Problem, RigFileError, RigValidationError
from moonpool.orchestrator.rig import Rig, Schedule
from moonpool.orchestrator.rigfile import apply_overrides, check_rig, load_and_check, load_rig

HERE = Path(__file__).parent
DOCS = HERE.parents[1] / "docs" / "rigs.md"

MINIMAL = """
[run]
until = "1s"

[components.src]
entry = "rigfile_components.py:Source"
rate_hz = 100

[components.sink]
entry = "rigfile_components.py:Sink"
period = "10ms"
[components.sink.parameters]
threshold_pa = 1000.0

[[connections]]
from = "src.wrench"
to = "sink.wrench"
"""


def write_rig(tmp_path: Path, text: str, name: str = "rig.toml") -> Path:
    """Write a rig (dedented, no leading newline) next to a copy of the test components."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    shutil.copy(HERE / "rigfile_components.py", tmp_path / "rigfile_components.py")
    return path


def problems_of(path: Path, *args, check: bool = False, **kw) -> list[Problem]:
    """The problems load_rig (or load_and_check) raises; fails if none."""
    with pytest.raises(RigValidationError) as info:
        (load_and_check if check else load_rig)(path, *args, **kw)
    return list(info.value.problems)


def by_key(problems: list[Problem]) -> dict[str, Problem]:
    out: dict[str, Problem] = {}
    for p in problems:
        out.setdefault(p.key, p)
    return out


def line_of(path: Path, marker: str) -> int:
    """1-based line of the first line containing ``marker``."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if marker in line:
            return n
    raise AssertionError(marker)


# ---------------------------------------------------------------- valid rigs


def test_minimal_rig_gets_the_defaults(tmp_path: Path) -> None:
    path = write_rig(tmp_path, MINIMAL, name="quick.toml")
    rig = load_rig(path)
    assert isinstance(rig, Rig)
    assert rig.name == "quick" and rig.description == "" and rig.path == path
    assert rig.source_text == path.read_text(encoding="utf-8")
    run = rig.run
    assert (run.until_ns, run.seed, run.algorithm, run.order) == (10**9, 0, "jacobi", ())
    assert (run.heartbeat_interval_ns, run.peer_timeout_ns) == (10**9, 10 * 10**9)
    assert run.record is True and run.plots is True and run.foxglove_images is False
    assert [c.name for c in rig.components] == ["src", "sink"]
    src = rig.component("src")
    assert src.placement == "inproc" and src.endpoint == "" and src.parameters == {}
    assert src.schedule == Schedule(Fraction(100), 0)
    assert (src.step_timeout_ns, src.setup_timeout_ns) == (2 * 10**9, 30 * 10**9)
    assert src.base_dir == tmp_path.resolve()
    assert rig.component("sink").schedule.rate_hz == Fraction(100)
    assert rig.component("sink").parameters == {"threshold_pa": 1000.0}
    (conn,) = rig.connections
    assert (conn.source, conn.source_port, conn.target, conn.target_port, conn.delay_ns) == (
        "src", "wrench", "sink", "wrench", 0,
    )
    assert check_rig(rig) == []
    assert load_and_check(path) == rig


def test_every_key_is_read(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        name = "full"
        description = "all keys"

        [run]
        until = 2.5
        seed = 42
        algorithm = "gauss-seidel"
        order = ["b", "a"]
        heartbeat_interval = "500ms"
        peer_timeout = "5s"
        record = false
        foxglove_images = true
        plots = false
        safe_stop = ["a"]

        [components.a]
        entry = "rigfile_components.py:Source"
        rate_hz = 29.97
        offset = "1ms"
        step_timeout = "100ms"
        setup_timeout = "1min"
        [components.a.parameters]
        weights = [1, 2.5, 3]
        nested = { k = [1, 2] }

        [components.b]
        run = "remote"
        endpoint = "tcp://10.0.0.2:5555"
        insecure = true
        period = "1 s"

        [[connections]]
        from = "a.pressure"
        to = "b.pressure"
        delay = "250 us"

        [[plots]]
        title = "Depth"
        series = ["a.pressure:true_depth_m", "a.wrench:force_n.z"]
        ylabel = "depth [m]"
        """,
    )
    rig = load_rig(path)
    assert (rig.name, rig.description) == ("full", "all keys")
    assert rig.run.until_ns == 2_500_000_000 and rig.run.seed == 42
    assert rig.run.algorithm == "gauss-seidel" and rig.run.order == ("b", "a")
    assert rig.run.heartbeat_interval_ns == 500_000_000 and rig.run.peer_timeout_ns == 5 * 10**9
    assert rig.run.record is False and rig.run.plots is False and rig.run.foxglove_images is True
    a, b = rig.components
    assert a.schedule == Schedule(Fraction(2997, 100), 1_000_000)
    assert (a.step_timeout_ns, a.setup_timeout_ns) == (100_000_000, 60 * 10**9)
    assert a.parameters == {"weights": [1, 2.5, 3], "nested": {"k": [1, 2]}}  # as parsed
    assert (b.placement, b.endpoint, b.entry) == ("remote", "tcp://10.0.0.2:5555", "")
    assert b.insecure is True and b.server_key is None and rig.run.safe_stop == ("a",)
    assert b.schedule.rate_hz == Fraction(1)
    assert rig.connections[0].delay_ns == 250_000
    (plot,) = rig.plots
    assert plot.title == "Depth" and plot.ylabel == "depth [m]"
    assert plot.series == ("a.pressure:true_depth_m", "a.wrench:force_n.z")


def test_documented_example_is_a_valid_rig(tmp_path: Path) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/rigs.md has no ```toml example"
    from moonpool.components.sdk.security import generate_keys

    # The key files the examples name (server_key, client_key), as `moonpool keys generate`
    # writes them.
    for name in set(re.findall(r'"keys/([\w.-]+?)\.key(?:_secret)?"', "".join(blocks))):
        generate_keys(name, tmp_path / "keys", force=True)
    rig = load_and_check(write_rig(tmp_path, blocks[0]))  # also the registered components
    assert len(rig.components) >= 3 and rig.connections and rig.plots
    for block in blocks[1:]:  # partial examples: valid once given a [run]
        assert load_rig(write_rig(tmp_path, f"[run]\nuntil = 1\n{block}", "part.toml"))


# ------------------------------------------------------------------ time


def test_schedule_instants_are_exact(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = 0.1
        [components.cam]
        entry = "x:Y"
        rate_hz = 30
        [components.imu]
        entry = "x:Y"
        period = "0.1s"
        offset = "5ms"
        """,
    )
    rig = load_rig(path)
    assert rig.run.until_ns == 100_000_000
    cam = rig.component("cam").schedule
    assert cam.rate_hz == Fraction(30)
    assert [cam.instant(k) for k in range(4)] == [0, 33_333_333, 66_666_667, 100_000_000]
    assert cam.instant(30) == 10**9 and cam.instant(3000) == 100 * 10**9
    imu = rig.component("imu").schedule
    assert imu.rate_hz == Fraction(10) and imu.offset_ns == 5_000_000
    assert imu.instant(3) == 305_000_000


def test_bad_durations_and_rates(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = "-1s"
        heartbeat_interval = "fast"
        [components.a]
        entry = "x:Y"
        rate_hz = "100"
        offset = "0.5ns"
        [components.b]
        entry = "x:Y"
        period = "0s"
        step_timeout = true
        [components.c]
        entry = "x:Y"
        rate_hz = -3
        """,
    )
    p = by_key(problems_of(path))
    assert "negative" in p["run.until"].message and p["run.until"].line == 2
    assert '"10ms"' in p["run.heartbeat_interval"].message
    assert 'expected a number of Hz' in p["components.a.rate_hz"].message
    assert 'period = "10ms"' in p["components.a.rate_hz"].message
    assert "whole number of nanoseconds" in p["components.a.offset"].message
    assert "longer than zero" in p["components.b.period"].message
    assert "got true" in p["components.b.step_timeout"].message
    assert "above 0 Hz" in p["components.c.rate_hz"].message
    assert p["components.c.rate_hz"].line == 14


# ---------------------------------------------------------------- problems


def test_three_mistakes_are_all_reported_with_file_key_and_line(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = "20s"
        sede = 3

        [components.sensor]
        entry = "x:Y"
        rate_hz = 100

        [components.pid]
        entry = "x:Y"
        period = "10 parsecs"

        [[connections]]
        from = "sensor.out"
        to = "pid.in"

        [[connections]]
        from = "sensor.out"
        to = "pdi.in2"
        """,
    )
    problems = problems_of(path)
    assert [(p.key, p.line) for p in problems] == [
        ("run.sede", 3),
        ("components.pid.period", 11),
        ("connections[1].to", 19),
    ]
    assert all(p.file == str(path) for p in problems)
    sede, period, to = problems
    assert "unknown key 'sede'" in sede.message and "did you mean 'seed'?" in sede.message
    assert "unknown unit 'parsecs'" in period.message
    assert "no component named 'pdi'" in to.message and "did you mean 'pid'?" in to.message
    assert str(to).startswith(f"{path}:19: connections[1].to: ")


def test_file_path_is_reported_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_rig(tmp_path, "[run]\nuntil = 1\n[components.a]\nentry = 'x:Y'\n")
    monkeypatch.chdir(tmp_path)
    (problem,) = problems_of(Path("rig.toml"))
    assert problem.file == "rig.toml" and problem.key == "components.a.rate_hz"
    assert problem.line == 3  # the [components.a] header: the key itself is missing
    assert 'rate_hz = 100 or period = "10ms"' in problem.message


def test_unknown_keys_everywhere_suggest_the_right_one(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        nmae = "x"
        [run]
        until = 1
        algoritm = "jacobi"
        [components.a]
        entry = "x:Y"
        rate_hz = 10
        perod = "1s"
        [[connections]]
        from = "a.x"
        to = "a.y"
        dealy = "1ms"
        [[plots]]
        title = "t"
        series = ["a.x:y"]
        ylable = "m"
        """,
    )
    p = by_key(problems_of(path))
    expected = {
        "nmae": ("name", 1),
        "run.algoritm": ("algorithm", 4),
        "components.a.perod": ("period", 8),
        "connections[0].dealy": ("delay", 12),
        "plots[0].ylable": ("ylabel", 16),
    }
    assert set(p) == set(expected)
    for key, (suggestion, line) in expected.items():
        assert f"did you mean '{suggestion}'?" in p[key].message, key
        assert p[key].line == line, key
        assert "remove it or correct the spelling" in p[key].message


def test_type_errors_name_the_expected_type(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        name = 3
        [run]
        until = 1
        seed = "0"
        record = "yes"
        algorithm = "gauss_seidel"
        [components.a]
        entry = 5
        run = "local"
        rate_hz = 10
        parameters = [1, 2]
        [[plots]]
        title = ""
        series = "a.x:y"
        """,
    )
    p = by_key(problems_of(path))
    assert "expected a string, got an integer 3" in p["name"].message
    assert "expected an integer seed >= 0, got a string '0'" in p["run.seed"].message
    assert "expected true or false, got a string 'yes'" in p["run.record"].message
    assert "did you mean 'gauss-seidel'?" in p["run.algorithm"].message
    assert "expected a non-empty string like" in p["components.a.entry"].message
    assert '"inproc" or "process" or "remote"' in p["components.a.run"].message
    assert "expected a table [components.a.parameters]" in p["components.a.parameters"].message
    assert "must not be empty" in p["plots[0].title"].message
    assert "non-empty array" in p["plots[0].series"].message


def test_component_names_entries_and_endpoints(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = 1
        [components.9lives]
        entry = "x:Y"
        rate_hz = 1
        [components.noentry]
        rate_hz = 1
        [components.remote_no_endpoint]
        run = "remote"
        rate_hz = 1
        [components.local_with_endpoint]
        entry = "x:Y"
        endpoint = "tcp://h:1"
        rate_hz = 1
        [components.bad_endpoint]
        run = "remote"
        endpoint = "http://h:80"
        rate_hz = 1
        [components.bad_port]
        run = "remote"
        endpoint = "tcp://h:70000"
        rate_hz = 1
        [components.both]
        entry = "x:Y"
        rate_hz = 1
        period = "1s"
        """,
    )
    p = by_key(problems_of(path))
    assert "not a valid component name" in p["components.9lives"].message
    assert p["components.9lives"].line == 3
    assert "missing: say what to run" in p["components.noentry.entry"].message
    assert "needs the endpoint" in p["components.remote_no_endpoint.endpoint"].message
    assert 'only used with run = "remote"' in p["components.local_with_endpoint.endpoint"].message
    assert "not a ZeroMQ endpoint" in p["components.bad_endpoint.endpoint"].message
    assert "out of range" in p["components.bad_port.endpoint"].message
    assert "either rate_hz or period, not both" in p["components.both.period"].message
    assert len(p) == 7


@pytest.mark.parametrize(
    "endpoint", ["tcp://10.0.0.2:5555", "tcp://[::1]:5555", "ipc://cam.sock", "inproc://cam"]
)
def test_accepted_endpoints(tmp_path: Path, endpoint: str) -> None:
    path = write_rig(
        tmp_path,
        f'[run]\nuntil = 1\n[components.a]\nrun = "remote"\nendpoint = "{endpoint}"\nrate_hz = 1\n'
        'insecure = true\n',  # (keys: test_rig_security_keys)
    )
    assert load_rig(path).component("a").endpoint == endpoint


def test_run_order_rules(tmp_path: Path) -> None:
    one = 'entry = "x:Y"\nrate_hz = 1\n'
    base = f"[components.a]\n{one}[components.b]\n{one}"
    jacobi = write_rig(tmp_path, f'[run]\nuntil = 1\norder = ["a", "b"]\n{base}', "j.toml")
    (p,) = problems_of(jacobi)
    assert p.key == "run.order" and 'only used by algorithm = "gauss-seidel"' in p.message
    bad = write_rig(
        tmp_path,
        f'[run]\nuntil = 1\nalgorithm = "gauss-seidel"\norder = ["a", "a", "bb"]\n{base}',
        "g.toml",
    )
    messages = [p.message for p in problems_of(bad)]
    assert any("no component named 'bb' (did you mean 'b'?)" in m for m in messages)
    assert any("lists a more than once" in m for m in messages)
    assert any("does not list b" in m for m in messages)


def test_timeouts_and_missing_until(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        '[run]\npeer_timeout = "1s"\nheartbeat_interval = "2s"\n'
        '[components.a]\nentry = "x:Y"\nrate_hz = 1\n',
    )
    p = by_key(problems_of(path))
    assert 'until = "20s" under [run], or pass --until' in p["run.until"].message
    assert p["run.until"].line == 1  # [run] header
    assert "longer than heartbeat_interval" in p["run.peer_timeout"].message
    assert p["run.peer_timeout"].line == 2


def test_rig_without_components(tmp_path: Path) -> None:
    (p,) = problems_of(write_rig(tmp_path, "[run]\nuntil = 1\n"))
    assert p.key == "components" and "add a [components.NAME] table" in p.message


def test_connection_and_plot_references(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [run]
        until = 1
        [components.a]
        entry = "x:Y"
        rate_hz = 1
        [[connections]]
        from = "a"
        to = "a.b.c"
        [[connections]]
        to = "ghost.in"
        [[connections]]
        from = "a.out"
        to = "a.in"
        [[connections]]
        from = "a.out2"
        to = "a.in"
        [[plots]]
        title = "x"
        series = ["a.out", "b.out:x", "a.out:x..y"]
        """,
    )
    p = by_key(problems_of(path))
    assert "'a' is not COMPONENT.PORT" in p["connections[0].from"].message
    assert p["connections[0].from"].line == 7
    assert "'a.b.c' is not COMPONENT.PORT" in p["connections[0].to"].message
    assert "missing: name the output port" in p["connections[1].from"].message
    assert "no component named 'ghost'" in p["connections[1].to"].message
    twice = p["connections[3].to"]
    assert "input a.in is already connected by connections[2]" in twice.message
    assert twice.line == 16
    assert "not COMPONENT.PORT:FIELD" in p["plots[0].series[0]"].message
    assert "no component named 'b'" in p["plots[0].series[1]"].message
    assert "not COMPONENT.PORT:FIELD" in p["plots[0].series[2]"].message
    assert p["plots[0].series[2]"].line == 19


def test_unreadable_and_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(RigFileError, match="does not exist"):
        load_rig(tmp_path / "missing.toml")
    with pytest.raises(RigFileError, match="is a folder"):
        load_rig(tmp_path)
    path = write_rig(tmp_path, '[run]\nuntil = 1\n\n[components.a\nentry = "x:Y"\n')
    with pytest.raises(RigFileError) as info:
        load_rig(path)
    assert str(info.value).startswith(f"{path}:4: not valid TOML")
    assert "fix:" in str(info.value)


# ---------------------------------------------------------------- overrides


def test_overrides_set_numbers_strings_arrays_and_new_keys(tmp_path: Path) -> None:
    path = write_rig(tmp_path, MINIMAL)
    rig = load_rig(
        path,
        [
            "run.seed=7",
            "run.until=2.5s",
            "run.algorithm=gauss-seidel",
            'components.src.entry="rigfile_components.py:Source"',
            "components.src.parameters.weights=[3, 4]",
            "components.src.parameters.extra.deep.value=1.5",
            "connections[0].delay=5ms",
            "run.record=false",
        ],
    )
    assert rig.run.seed == 7 and rig.run.until_ns == 2_500_000_000
    assert rig.run.algorithm == "gauss-seidel" and rig.run.record is False
    assert rig.component("src").parameters == {"weights": [3, 4], "extra": {"deep": {"value": 1.5}}}
    assert rig.connections[0].delay_ns == 5_000_000
    assert rig.source_text.startswith(path.read_text(encoding="utf-8"))
    assert "# --set run.seed=7\n" in rig.source_text
    assert "# --set connections[0].delay=5ms\n" in rig.source_text


def test_bad_overrides_are_problems(tmp_path: Path) -> None:
    path = write_rig(tmp_path, MINIMAL)
    problems = problems_of(
        path,
        ["foo", "=3", "run.until.x=1", "connections[5].delay=1ms", "bad key=1", "run.seed=-1"],
    )
    p = by_key(problems)
    assert "is not KEY=VALUE" in p["--set foo"].message and p["--set foo"].line == 0
    assert p["--set foo"].file == str(path)
    assert "--set =3" in p
    assert "not a table" in p["--set run.until.x"].message
    assert "[5] does not exist" in p["--set connections[5].delay"].message
    assert "not a dotted key" in p["--set bad key"].message
    seed = p["run.seed"]
    assert "seed -1 is out of range" in seed.message
    assert seed.message.endswith("(value from --set run.seed=-1)")


def test_apply_overrides_on_a_dict() -> None:
    data = {"run": {"until": "1s"}, "components": {"a": {"parameters": {"k": 1}}}}
    problems = apply_overrides(
        data,
        ["run.until=3", 'components.a.parameters.name="x y"', "components.a.parameters.k=hello",
         "components.a.parameters.t={a = 1}", "run=5", "run.x=1"],
        "rig.toml",
    )
    assert data["components"]["a"]["parameters"] == {"k": "hello", "name": "x y", "t": {"a": 1}}
    assert data["run"] == 5  # later overrides see earlier ones
    (problem,) = problems
    assert problem == Problem("rig.toml", "--set run.x", problem.message, 0)
    assert "run is an integer, not a table" in problem.message


# ---------------------------------------------------- command-line arguments


def test_until_seed_and_mode_arguments(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        """
        [components.a]
        entry = "x:Y"
        rate_hz = 1
        [components.b]
        entry = "x:Y"
        run = "remote"
        endpoint = "tcp://h:1"
        insecure = true
        rate_hz = 1
        [components.c]
        entry = "x:Y"
        run = "process"
        rate_hz = 1
        """,
    )
    rig = load_rig(path, until_s=0.1, seed=9, mode="process")
    assert rig.run.until_ns == 100_000_000 and rig.run.seed == 9
    assert [(c.placement, c.endpoint) for c in rig.components] == [("process", "")] * 3
    assert "# --until 0.1\n# --seed 9\n# --mode process\n" in rig.source_text
    assert load_rig(path, until_s=1, mode="inproc").component("b").placement == "inproc"
    assert load_rig(path, until_s=1).component("b").placement == "remote"


def test_bad_arguments(tmp_path: Path) -> None:
    path = write_rig(
        tmp_path,
        '[run]\nuntil = 1\n[components.cam]\nrun = "remote"\nendpoint = "tcp://h:1"\nrate_hz = 1\n',
    )
    p = by_key(problems_of(path, until_s=-1.0, seed=-2, mode="cloud"))
    assert "negative" in p["--until"].message and p["--until"].line == 0
    assert "out of range" in p["--seed"].message
    assert "--mode inproc or --mode process" in p["--mode"].message
    (p,) = problems_of(path, mode="inproc")
    assert p.key == "components.cam.entry" and p.line == 3
    assert "--mode inproc" in p.message and "has no entry" in p.message


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
