"""How moonpool's C loops are built (components/sdk/native.py): named by the hash of
their source, and a clear error, with nothing half-written left, without a compiler."""

from __future__ import annotations

from pathlib import Path

import pytest

from moonpool.components.sdk import native
from moonpool.components.world.native import LOOP


def _copy(tmp_path: Path) -> native.CLibrary:
    src = tmp_path / "embree_packets.c"
    src.write_text(LOOP.source.read_text())
    return native.CLibrary(src, "the test's loop", build_dir=tmp_path / "build")


def test_the_library_is_named_by_its_source_hash(tmp_path):
    lib = _copy(tmp_path)
    first = lib.path()
    assert first.name.startswith("embree_packets-") and first.parent == tmp_path / "build"
    lib.source.write_text(lib.source.read_text() + "\n/* changed */\n")
    assert lib.path() != first


def test_a_build_replaces_the_stale_one_and_loads(tmp_path):
    src = tmp_path / "add.c"
    src.write_text("double mp_add(double a, double b) { return a + b; }\n")
    lib = native.CLibrary(src, "the test's loop", build_dir=tmp_path / "build")
    old = lib.build()
    src.write_text("double mp_add(double a, double b) { return b + a; }\n")
    new = lib.build()
    assert new != old and new.exists() and not old.exists()
    import ctypes

    fn = lib.load().mp_add
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
    assert fn(0.5, 0.25) == 0.75


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    lib = _copy(tmp_path)
    monkeypatch.setattr(native, "compiler", lambda: None)
    with pytest.raises(native.NativeBuildError, match="C compiler.*fix: install gcc or clang"):
        lib.build()
    monkeypatch.setattr(native, "compiler", lambda: str(tmp_path / "no-such-cc"))
    with pytest.raises(native.NativeBuildError, match="could not be run.*fix"):
        lib.build()
    assert not list((tmp_path / "build").glob("*"))  # no half-written library left


def test_a_compile_error_names_the_source_and_the_fix(tmp_path):
    src = tmp_path / "broken.c"
    src.write_text("this is not C\n")
    lib = native.CLibrary(src, "the test's loop", build_dir=tmp_path / "build")
    with pytest.raises(native.NativeBuildError, match=r"compiling .*broken\.c .*failed \(fix"):
        lib.build()
    assert not list((tmp_path / "build").glob("*"))
