"""Issue 22, point 9: ``scripts/setup.sh`` does not print setuptools' "!!" warning block
(an editable install prints it every time), and keeps everything else pip says. The
filter is setup.sh's own awk program, run on the output of a real editable build."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT


def _setup_filter() -> str:
    """The awk program setup.sh pipes ``pip install -e`` through."""
    text = (ROOT / "scripts/setup.sh").read_text()
    return re.search(r"\|\s*awk '(.*?)' >&2", text, re.S).group(1)


def test_setup_leaves_out_setuptools_warning_block_and_keeps_the_rest(tmp_path):
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet",
         "--target", str(tmp_path / "target"), "-e", str(ROOT)],
        capture_output=True, text=True, timeout=300)
    raw = pip.stdout + pip.stderr
    assert "!!" in raw, "setuptools no longer prints the block; the filter may go"
    marker = "ERROR: a line pip prints after the block\n"
    shown = subprocess.run(["awk", _setup_filter()], input=raw + marker, capture_output=True,
                           text=True, check=True).stdout
    assert "!!" not in shown and "BuildBackendWarning" not in shown, shown
    # Exactly the block is left out: from setuptools' warning line to the source line
    # it quotes last; every other line is kept as it was.
    lines = (raw + marker).splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if "BuildBackendWarning" in ln)
    end = next(i for i, ln in enumerate(lines) if i > start and "with strategy, WheelFile" in ln)
    assert shown == "".join(lines[:start] + lines[end + 1:])
