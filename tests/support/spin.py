"""A C busy loop, for tests of steps stuck in native code: ``spin(seconds)`` never
returns to Python meanwhile (called through ctypes, which releases the GIL, as
fmpy's calls into an FMU do), so no Python signal handler runs until it ends."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moonpool.components.sdk.native import compiler

SOURCE = r"""
#include <time.h>
void spin(double seconds) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do { clock_gettime(CLOCK_MONOTONIC, &b); }
    while ((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9 < seconds);
}
"""


def build(folder: Path) -> Path:
    """Compile ``libspin.so`` into ``folder`` (the test is skipped, saying why, on a
    machine without a C compiler) and return its path."""
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler (CC, cc, gcc or clang) to build the busy loop")
    (folder / "spin.c").write_text(SOURCE)
    lib = folder / "libspin.so"
    subprocess.run([cc, "-O1", "-fPIC", "-shared", "-o", str(lib), str(folder / "spin.c")],
                   check=True)
    return lib
