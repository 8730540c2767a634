"""The Python face of ``pool_trace.c``, the pool renderer's loops over pixel corners and
pixels (``render.py``; docs/localization.md, "Renderer"): the library, compiled once per
machine (``sdk/native.py``; ``scripts/setup.sh`` runs this module to do it up front),
and its functions typed for ``ctypes``.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from ..sdk.native import CFLAGS, CLibrary

LOOPS = CLibrary(Path(__file__).with_name("pool_trace.c"), "the pool camera's pixel loops",
                 flags=(*CFLAGS, "-O3", "-fno-math-errno"))
"""``pool_trace.c``. ``-O3`` lets the compiler vectorize its passes (for the
architecture's baseline, and AVX2 and AVX-512 clones chosen at load: the library is
portable to any machine of the architecture the checkout is used on), and
``-fno-math-errno`` lets it vectorize the square roots (errno is never read); neither
changes a result."""

_I64, _P, _D, _F = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double, ctypes.c_float
# name: (result, arguments), as declared in pool_trace.c
_SIGNATURES = {
    "mp_ripple": (None, [_I64, _I64, _P, _P, _I64, _P, _P, _I64, _I64, _I64, _P, _D, _P, _P]),
    "mp_trace": (None, [_I64, _I64, _P, _I64, _P, _P, _I64, _P, ctypes.c_int, _P, _P, _P]),
    "mp_composite": (ctypes.c_int, [_I64, _I64, _P, _P, _P, _P, _I64, _I64, _P, _I64]),
    "mp_expose": (None, [_I64, _I64, _P, _I64, _P, _I64, _P, _F, _F, _F, _P, _I64]),
    "mp_render": (ctypes.c_int, [_I64, _P, _P, _P, _P, _P, _I64, _I64, _P, _P, _P, _I64, _I64,
                                 _P, _P, _I64, _I64, _P, _D, _P, _I64]),
}


def loops() -> ctypes.CDLL:
    """``pool_trace.c``, built if needed, its functions typed (once per process)."""
    lib = LOOPS.load()
    if not getattr(lib, "_typed", False):
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        lib._typed = True
    return lib


def ptr(a: np.ndarray | None) -> int | None:
    """The address of an array's first element (None: a NULL pointer)."""
    return None if a is None else a.ctypes.data


def row_stride(a: np.ndarray) -> int:
    """The row stride, in doubles, of a grid of 3-vectors (h, w, 3) whose rows are each
    contiguous (a box cut from a cache, or an array of its own)."""
    if a.dtype != np.float64 or a.strides[1:] != (24, 8):
        raise ValueError("a grid of 3-vectors of float64, contiguous along its rows")
    return a.strides[0] // 8


if __name__ == "__main__":
    print(f"built {LOOPS.build()}")
