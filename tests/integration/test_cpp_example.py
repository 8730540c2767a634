"""examples/cpp_component: the C++ component builds, is started by its rig
(run = "command"), passes `moonpool check` and gives its Python twin's digest.
Skipped where there is no C++ compiler (it is an example, not a prerequisite)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import zmq
from conftest import ROOT, moonpool

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "cpp_component"


def test_the_cpp_example_gives_its_twins_digest(tmp_path):
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH to build the example")
    for name in ("ramp.cpp", "ramp.toml", "ramp_twin.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    lib = sorted((Path(zmq.__file__).resolve().parent.parent / "pyzmq.libs").glob("libzmq*.so*"))
    assert lib, "pyzmq bundles no libzmq to link the example against"
    (tmp_path / "build").mkdir()
    build = subprocess.run([cxx, "-std=c++17", "-O2", "-Wall", "-ffp-contract=off", "-o",
                            str(tmp_path / "build" / "ramp"), str(tmp_path / "ramp.cpp"),
                            str(lib[0]), f"-Wl,-rpath,{lib[0].parent}"],
                           capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stderr
    rig = tmp_path / "ramp.toml"
    check = moonpool("check", str(rig), timeout=60)
    assert check.returncode == 0, check.stderr
    bad = moonpool("check", str(rig), "--set", "components.ramp.parameters.gian=1", timeout=60)
    assert bad.returncode == 2 and "unknown parameter 'gian'" in bad.stderr, bad.stderr
    summaries = []
    for name, mode in (("cpp", ()), ("py", ("--mode", "inproc"))):
        out = tmp_path / name
        proc = moonpool("run", str(rig), "--out", str(out), "--quiet", *mode, timeout=60)
        assert proc.returncode == 0, proc.stderr
        summaries.append(json.loads((out / "summary.json").read_text()))
    cpp, py = summaries
    assert cpp["components"]["ramp"]["placement"] == "command"
    assert py["components"]["ramp"]["placement"] == "inproc"
    assert cpp["messages"] == py["messages"] == 70
    assert cpp["digest"] == py["digest"]
