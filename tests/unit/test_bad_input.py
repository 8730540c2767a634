"""Bad input is exit 2 with a message, never a traceback (issue 24, point 10)."""

from __future__ import annotations

import pytest

from conftest import ROOT
from moonpool.orchestrator.cli import main

QUICKSTART = ROOT / "rigs" / "quickstart.toml"
DEEP = "[" * 2000 + "]" * 2000


def _rig(tmp_path, change) -> str:
    lines = QUICKSTART.read_text().splitlines()
    change(lines)
    path = tmp_path / "rig.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_rate_that_overflows_the_period_is_refused_by_check(tmp_path, capsys):
    def slow(lines):
        i = next(i for i, line in enumerate(lines) if line.startswith("rate_hz"))
        lines[i] = "rate_hz = 1e-300"

    assert main(["check", _rig(tmp_path, slow)]) == 2
    assert "at least 1e-9 Hz" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["rig", "--set"])
def test_deeply_nested_arrays_are_refused(tmp_path, capsys, where):
    if where == "rig":
        args = ["check", _rig(tmp_path, lambda lines: lines.insert(1, f"deep = {DEEP}"))]
    else:
        args = ["check", str(QUICKSTART), "--set", f"run.seed={DEEP}"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # In a rig: a syntax error; a --set value that is no TOML is taken as a string.
    assert ("nested" if where == "rig" else "expected an integer seed") in err


@pytest.mark.parametrize("out", ["/etc/passwd", "/etc/passwd/x", "/proc/nope/x"])
def test_an_out_folder_that_cannot_be_written_is_refused(capsys, out):
    assert main(["run", str(QUICKSTART), "--until", "0.1", "--quiet", "--out", out]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and "Traceback" not in err


@pytest.mark.parametrize("level", ["LOUD", "basic_format", "Handler", "shutdown", ""])
def test_a_log_level_that_is_not_one_is_refused(capsys, level):
    # getattr(logging, level) used to take any attribute of the logging module: a
    # string (BASIC_FORMAT) gave a traceback, anything else ran at a level nobody chose.
    with pytest.raises(SystemExit) as exc:
        main(["--log-level", level, "check", str(QUICKSTART)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "is not a log level; use DEBUG, INFO, WARNING, ERROR or CRITICAL" in err
    assert "Traceback" not in err


def test_a_served_components_log_level_is_checked_too(capsys):
    from moonpool.components.sdk.serve_cli import main as serve_main

    with pytest.raises(SystemExit) as exc:
        serve_main(["quickstart_pd", "--bind", "tcp://127.0.0.1:0", "--log-level", "loud"])
    assert exc.value.code == 2
    assert "'loud' is not a log level" in capsys.readouterr().err


def test_a_log_level_in_any_case_is_taken():
    from moonpool.components.sdk.serve_cli import log_level

    assert [log_level(x) for x in ("debug", "Info", " WARNING ", "error", "critical")] == \
        ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
