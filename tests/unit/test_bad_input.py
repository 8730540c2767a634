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
