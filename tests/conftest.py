"""Shared fixtures: paths, running the CLI as a real process, and process hygiene."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RIGS = ROOT / "rigs"
SUPPORT = Path(__file__).resolve().parent / "support"

# Test-only components (tests/support) are importable here and, through
# PYTHONPATH, in every component process the tests spawn.
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(SUPPORT), os.environ.get("PYTHONPATH", "")) if p
)


def moonpool(*args: str, cwd: Path | None = None, timeout: float = 120, env=None,
             **kw) -> subprocess.CompletedProcess:
    """Run the `moonpool` CLI in a child process (as a user would)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), e.get("PYTHONPATH", "")])
    if env:
        e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "moonpool.orchestrator.cli", *args],
        cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout, env=e, **kw,
    )


def children_of(pid: int) -> list[int]:
    """Every live descendant of pid (from /proc), for orphan checks."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def alive(pid: int) -> bool:
    """True if pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def c_compiler() -> str:
    """The machine's C compiler. It is a stated prerequisite (README): its absence is a
    broken setup, so tests fail loudly instead of skipping."""
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler (cc or gcc) on PATH: moonpool builds its FMUs from C; "
                    "install one (Debian: apt-get install gcc)")
    return cc


@pytest.fixture(scope="session")
def fmus():
    """The hydrodynamics FMUs, (re)built from C if their sources changed: {3: path, 2: path}."""
    c_compiler()
    subprocess.run([sys.executable, str(ROOT / "fmus" / "build_fmus.py")], check=True)
    return {3: ROOT / "fmus/build/hydrodynamics-fmi3.fmu", 2: ROOT / "fmus/build/hydrodynamics-fmi2.fmu"}
