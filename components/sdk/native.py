"""Small C loops that moonpool compiles with the machine's C compiler and calls through
``ctypes`` (the world's ray-packet loop, the pool camera's pixel loops).

Call order::

    LOOP = CLibrary(Path(__file__).with_name("loop.c"), "the ... loop")   # module level
    LOOP.build()        # compile if not done yet (scripts/setup.sh does it up front)
    lib = LOOP.load()   # the ctypes handle, loaded once per process

A library is compiled into ``build/`` beside its source, under a name that carries the
hash of its source and flags, so a changed source is never run stale; an installed
(read-only) package compiles into the user's cache instead. ``-ffp-contract=off``: no
fused multiply-adds, so a double computed in C is the double NumPy's expression of the
same operations gives. No compiler, or a failed build: :class:`NativeBuildError` says
what to install or fix.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

CFLAGS = ("-std=c99", "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-Wall", "-Wextra")
"""The flags every library is compiled with."""


class NativeBuildError(RuntimeError):
    """A C loop could not be compiled or loaded (the message says why and how to fix it)."""


def compiler() -> str | None:
    """The C compiler: ``$CC``, else ``cc``, ``gcc`` or ``clang`` on the PATH."""
    return (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
            or shutil.which("clang"))


def _writable(folder: Path) -> bool:
    while not folder.exists():
        folder = folder.parent
    return os.access(folder, os.W_OK)


@dataclass(frozen=True)
class CLibrary:
    """One C source compiled into a shared library of its own."""

    source: Path
    """The C file."""
    what: str
    """What it is, for messages ("the ray engine's packet loop")."""
    build_dir: Path | None = None
    """Where the library goes (None: ``build/`` beside the source)."""
    flags: tuple[str, ...] = CFLAGS
    """Compiler flags."""
    _loaded: dict = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def path(self) -> Path:
        """Where the compiled library for this source and these flags lives."""
        text = self.source.read_bytes() + " ".join(self.flags).encode()
        h = hashlib.sha256(text).hexdigest()[:16]
        suffix = ".dll" if sys.platform == "win32" else ".so"
        folder = self.build_dir or self.source.with_name("build")
        return folder / f"{self.source.stem}-{h}{suffix}"

    def build(self, force: bool = False) -> Path:
        """Compile the source (if not done yet) and return the library's path. Safe when
        several processes build at once (each writes its own temporary file, then
        renames it into place)."""
        out = self.path()
        if out.exists() and not force:
            return out
        if not _writable(out.parent):
            # An installed package: the user's cache instead of site-packages.
            cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "moonpool"
            out = cache / out.name
            if out.exists() and not force:
                return out
        rel = f"{self.source.parent.name}/{self.source.name}"
        cc = compiler()
        if not cc:
            raise NativeBuildError(
                f"{self.what} ({rel}) needs a C compiler and none was found (fix: install "
                "gcc or clang, or set CC, then run scripts/setup.sh)")
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.source.stem}-", suffix=".so", dir=out.parent)
        os.close(fd)
        try:
            try:
                res = subprocess.run([cc, *self.flags, str(self.source), "-o", tmp, "-lm"],
                                     capture_output=True, text=True)
            except OSError as exc:
                raise NativeBuildError(f"the C compiler {cc!r} could not be run ({exc}); fix: "
                                       "install gcc or clang, or set CC to one") from exc
            if res.returncode != 0:
                raise NativeBuildError(
                    f"compiling {rel} with {cc} failed (fix: a working C99 compiler, or set "
                    f"CC):\n{res.stderr.strip()}")
            os.replace(tmp, out)
            for stale in out.parent.glob(f"{self.source.stem}-*"):
                if stale != out:  # builds of earlier sources (a running process keeps its copy)
                    stale.unlink(missing_ok=True)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return out

    def load(self) -> ctypes.CDLL:
        """The library, built if needed and loaded once per process."""
        with self._lock:
            lib = self._loaded.get("lib")
            if lib is None:
                path = self.build()
                try:
                    lib = ctypes.CDLL(str(path))
                except OSError as exc:
                    raise NativeBuildError(f"loading {path} failed ({exc}); fix: delete it and "
                                           "run scripts/setup.sh to build it again") from exc
                self._loaded["lib"] = lib
            return lib


__all__ = ["CFLAGS", "CLibrary", "NativeBuildError", "compiler"]
