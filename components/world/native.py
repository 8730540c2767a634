"""Embree 4 through its C API, with the packet loop of ``embree_packets.c``
(docs/world.md#ray-engine).

Call order::

    scene = EmbreeScene(vertices_f32, faces_u32)      # build once (BVH, robust mode)
    face, t, normal = scene.cast(origins, dirs, max_range, normals, plane, prim_to_face)

Embree is the library the ``embreex`` wheel ships (``embreex.libs/libembree4*``):
``embreex`` binds only Embree's single-ray ``rtcIntersect1``; its 16-ray packets
(``rtcIntersect16``) trace coherent sensor rays 1.3-1.7 times faster
(``benchmarks/raycast.py``). Scenes are built here through the C API with
``ctypes``; the per-ray loop (packing rays into packets, and the float64 range from
the hit triangle's plane) is ``embree_packets.c``, compiled with the machine's C
compiler the first time it is needed (``scripts/setup.sh`` does it up front) into
``build/`` beside this file, under a name that carries the hash of its source and
flags, so a changed source is never run stale. No compiler: :class:`NativeBuildError`
says what to install.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..sdk.native import CLibrary, NativeBuildError

LOOP = CLibrary(Path(__file__).with_name("embree_packets.c"), "the ray engine's packet loop")
"""``embree_packets.c`` (compiled with ``-ffp-contract=off``: no fused multiply-adds, so
the float64 ranges are the same doubles as NumPy's expressions give)."""

# Embree 4 enums (rtcore_device.h, rtcore_scene.h, rtcore_geometry.h, rtcore_buffer.h).
_SCENE_FLAG_ROBUST = 1 << 2
_GEOMETRY_TYPE_TRIANGLE = 0
_BUFFER_TYPE_INDEX = 0
_BUFFER_TYPE_VERTEX = 1
_FORMAT_UINT3 = 0x5003
_FORMAT_FLOAT3 = 0x9003


def _embree_path() -> str:
    """The Embree 4 library of the installed ``embreex`` wheel."""
    import embreex
    import embreex.rtcore_scene  # noqa: F401  (loads the library)

    if sys.platform.startswith("linux"):
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if "libembree4" in os.path.basename(path):
                    return path
    root = Path(embreex.__file__).resolve().parent
    for folder in (root.parent / "embreex.libs", root / ".dylibs", root):
        found = sorted(folder.glob("libembree4*")) + sorted(folder.glob("embree4*.dll"))
        if found:
            return str(found[0])
    raise NativeBuildError("the Embree 4 library of the embreex package was not found "
                           "(fix: pip install 'embreex>=4.4,<5')")


@lru_cache(maxsize=None)
def _libs():
    """(embree, loop): the ctypes handles, loaded once per process."""
    embree = ctypes.CDLL(_embree_path())
    vp, sz, ui = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint
    for name, res, args in (
            ("rtcNewDevice", vp, [ctypes.c_char_p]),
            ("rtcReleaseDevice", None, [vp]),
            ("rtcNewScene", vp, [vp]),
            ("rtcSetSceneFlags", None, [vp, ctypes.c_int]),
            ("rtcCommitScene", None, [vp]),
            ("rtcReleaseScene", None, [vp]),
            ("rtcNewGeometry", vp, [vp, ctypes.c_int]),
            ("rtcSetNewGeometryBuffer", vp, [vp, ctypes.c_int, ui, ctypes.c_int, sz, sz]),
            ("rtcCommitGeometry", None, [vp]),
            ("rtcAttachGeometry", ui, [vp, vp]),
            ("rtcReleaseGeometry", None, [vp]),
            ("rtcGetDeviceError", ctypes.c_int, [vp])):
        fn = getattr(embree, name)
        fn.restype, fn.argtypes = res, args
    loop = LOOP.load()
    p = ctypes.c_void_p
    loop.mp_cast.restype = ctypes.c_int64
    loop.mp_cast.argtypes = [p, p, ctypes.c_int64, p, ctypes.c_int64, p, p, p, p, p, p, p, p]
    return embree, loop


@lru_cache(maxsize=None)
def _device():
    embree, _ = _libs()
    dev = embree.rtcNewDevice(None)
    if not dev:
        raise NativeBuildError(f"rtcNewDevice failed (Embree error {embree.rtcGetDeviceError(None)})")
    return dev


def _ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data


class EmbreeScene:
    """One triangle mesh as an Embree scene in robust mode (``RTC_SCENE_FLAG_ROBUST``)."""

    def __init__(self, vertices: np.ndarray, faces: np.ndarray) -> None:
        embree, _ = _libs()
        self._embree = embree
        dev = _device()
        v = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 3)
        f = np.ascontiguousarray(faces, dtype=np.uint32).reshape(-1, 3)
        scene = embree.rtcNewScene(dev)
        embree.rtcSetSceneFlags(scene, _SCENE_FLAG_ROBUST)
        geom = embree.rtcNewGeometry(dev, _GEOMETRY_TYPE_TRIANGLE)
        # Embree allocates the buffers (padded for its 16-byte vertex loads).
        vb = embree.rtcSetNewGeometryBuffer(geom, _BUFFER_TYPE_VERTEX, 0, _FORMAT_FLOAT3,
                                            12, len(v))
        ib = embree.rtcSetNewGeometryBuffer(geom, _BUFFER_TYPE_INDEX, 0, _FORMAT_UINT3,
                                            12, len(f))
        if not vb or not ib:
            raise MemoryError(f"Embree could not allocate the buffers of a {len(f)}-triangle mesh")
        ctypes.memmove(vb, v.ctypes.data, v.nbytes)
        ctypes.memmove(ib, f.ctypes.data, f.nbytes)
        embree.rtcCommitGeometry(geom)
        embree.rtcAttachGeometry(scene, geom)
        embree.rtcReleaseGeometry(geom)
        embree.rtcCommitScene(scene)
        err = embree.rtcGetDeviceError(dev)
        if err:
            embree.rtcReleaseScene(scene)
            raise RuntimeError(f"Embree failed to build a {len(f)}-triangle scene (error {err})")
        self._scene = scene
        self._intersect16 = ctypes.cast(embree.rtcIntersect16, ctypes.c_void_p).value

    def __del__(self) -> None:
        scene, self._scene = getattr(self, "_scene", None), None
        if scene:
            self._embree.rtcReleaseScene(scene)

    def cast(self, origins: np.ndarray, dirs: np.ndarray, max_range: np.ndarray | None,
             normals: np.ndarray, plane: np.ndarray, prim_to_face: np.ndarray | None):
        """(face int64 (N,), t float64 (N,), normal float64 (N, 3)) of the first hits
        (``embree_packets.c``). ``origins`` (N, 3) or a broadcast of one row (stride 0),
        local frame; ``dirs`` (N, 3) unit; ``max_range`` (N,) or None (unlimited)."""
        _, loop = _libs()
        n = len(dirs)
        one = n > 1 and origins.strides[0] == 0
        o = np.ascontiguousarray(origins[:1] if one else origins, dtype=np.float64)
        d = np.ascontiguousarray(dirs, dtype=np.float64)
        mr = None if max_range is None else np.ascontiguousarray(max_range, dtype=np.float64)
        face = np.empty(n, np.int64)
        t = np.empty(n, np.float64)
        nrm = np.empty((n, 3), np.float64)
        loop.mp_cast(self._intersect16, self._scene, n, _ptr(o), 0 if one else 1, _ptr(d),
                     _ptr(mr), _ptr(normals), _ptr(plane), _ptr(prim_to_face),
                     _ptr(face), _ptr(t), _ptr(nrm))
        return face, t, nrm


if __name__ == "__main__":
    print(f"built {LOOP.build()}")
