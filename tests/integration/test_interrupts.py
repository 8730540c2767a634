"""Ctrl-C at a terminal, as a user presses it: a real pseudo-terminal (Python's ``pty``)
whose foreground process is ``moonpool run``; ``\\x03`` written to the terminal is what
the keyboard sends. Whatever the timing of two Ctrl-C, summary.json exists and says
the run was interrupted, the exit status is 1 and no traceback is printed (issue 22).

So that a Ctrl-C sent after "drawing the plots" always lands while the plots are
being drawn (a fast machine could finish them first), the process runs with
tests/support/hold_plots/ on its path: its ``sitecustomize`` makes matplotlib's
``Figure.savefig`` wait for the Ctrl-C (a test double of matplotlib; moonpool's code
is the shipped one).
"""

from __future__ import annotations

import json
import os
import pty
import select
import sys
import time
from pathlib import Path

from conftest import RIGS, ROOT, SUPPORT


HOLD_PLOTS = SUPPORT / "hold_plots"


class Terminal:
    """``moonpool ARGS`` as the foreground job of a new pseudo-terminal; with
    ``hold_plots`` every plot waits for a Ctrl-C (module docstring)."""

    def __init__(self, *args: str, hold_plots: bool = False) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [*([str(HOLD_PLOTS)] if hold_plots else []), str(SUPPORT), env.get("PYTHONPATH", "")])
        env["MOONPOOL_TEST_HOLD_PLOTS"] = "1" if hold_plots else "0"
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "moonpool.orchestrator.cli", *args],
                      env)
        self.text = ""

    def read(self, timeout: float) -> bool:
        """Append what arrives within ``timeout`` s; False at end of output."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        self.text += data.decode(errors="replace")
        return True

    def expect(self, needle: str, timeout: float = 120) -> None:
        deadline = time.time() + timeout
        while needle not in self.text:
            assert time.time() < deadline, f"no {needle!r} in:\n{self.text}"
            assert self.read(0.1), f"ended without {needle!r}:\n{self.text}"

    def ctrl_c(self) -> None:
        os.write(self.fd, b"\x03")

    def wait(self, timeout: float = 120) -> int:
        deadline = time.time() + timeout
        while self.read(0.1) and time.time() < deadline:
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_ctrl_c_during_the_run_then_during_the_plots(tmp_path):
    out = tmp_path / "out"
    term = Terminal("run", str(RIGS / "quickstart.toml"), "--until", "3600", "--out", str(out),
                    hold_plots=True)
    term.expect("real time")  # the progress bar: stepping has begun
    term.ctrl_c()
    term.expect("press Ctrl-C again to skip the plots")
    term.expect("drawing the plots")
    assert (out / "summary.json").exists()  # before any plot
    assert _summary(out)["interrupted"] is True and _summary(out)["plots"] == []
    term.expect("[test] plotting held")  # the first figure is being drawn
    term.ctrl_c()
    code = term.wait()
    assert code == 1, term.text
    assert "Traceback" not in term.text and "KeyboardInterrupt" not in term.text, term.text
    s = _summary(out)
    assert s["status"] == "failed" and s["interrupted"] is True
    assert "interrupted by the user" in s["error"]
    # The second Ctrl-C landed while drawing: the plots were skipped, and said so.
    assert "plots skipped" in term.text and s["plots_skipped"] and s["plots"] == []
    assert term.text.count("interrupted by the user") == 1, term.text  # the error once


def test_two_ctrl_c_during_the_plots_of_a_finished_run(tmp_path):
    out = tmp_path / "out"
    term = Terminal("run", str(RIGS / "quickstart.toml"), "--until", "2", "--out", str(out),
                    hold_plots=True)
    term.expect("[test] plotting held")
    term.ctrl_c()
    time.sleep(0.05)
    term.ctrl_c()
    code = term.wait()
    assert code == 1, term.text
    assert "Traceback" not in term.text, term.text
    s = _summary(out)
    assert s["status"] == "failed" and s["interrupted"] is True and s["plots_skipped"]
    assert "the simulation had completed" in s["error"]
    assert s["sim_time_s"] == 2.0 and s["digest"]
