#!/usr/bin/env python3
"""Probe: would a rasteriser (moderngl on EGL / Mesa llvmpipe, CPU) give the camera's
per-pixel hits faster than the ray engine? (docs/deepsea-camera.md, "Why ray casting").

    LP_NUM_THREADS=1 python benchmarks/deepsea_raster_probe.py

Renders the triangle id (gl_PrimitiveID) and depth of scenes/trench_floor from 2 m
above the starfish with a pinhole camera (70° hfov; no distortion: a rasteriser would
need a remap afterwards) and reads them back; compares with RayEngine.cast of the same
pixel rays. Needs ``moderngl`` (not a dependency of moonpool: pip install moderngl).
One core: LP_NUM_THREADS=1 (llvmpipe's rasteriser threads).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

VS = """
#version 330
in vec3 pos;
uniform mat4 mvp;
void main() { gl_Position = mvp * vec4(pos, 1.0); }
"""
FS = """
#version 330
out int tri;
void main() { tri = gl_PrimitiveID + 1; }
"""


def main() -> int:
    try:
        import moderngl
    except ImportError:
        print("moderngl is not installed: pip install moderngl (probe only)")
        return 0
    from moonpool.components.vision.geometry import CameraModel, CameraMount, CameraPose, world_rays
    from moonpool.components.world.scene import Scene

    scene = Scene.load(ROOT / "scenes/trench_floor/scene.toml")
    engine = scene.engine()  # the BVH is built here, not in the timed cast
    ctx = moderngl.create_standalone_context(backend="egl")
    print(f"renderer: {ctx.info['GL_RENDERER']}")
    C = np.array([6.0, 3.0, float(scene.seabed_depth(6.0, 3.0)) - 2.0])
    rel = (scene.vertices - C).astype(np.float32)
    tri = rel[scene.faces.reshape(-1)].reshape(-1, 3)
    vbo = ctx.buffer(tri.tobytes())
    prog = ctx.program(vertex_shader=VS, fragment_shader=FS)
    vao = ctx.vertex_array(prog, [(vbo, "3f", "pos")])
    ctx.enable(moderngl.DEPTH_TEST)
    for w, h in ((640, 480), (1280, 720)):
        cam = CameraModel.from_fov(w, h, 70.0)
        pose = CameraPose.from_vehicle(CameraMount(), C, (1.0, 0.0, 0.0, 0.0))
        fx, fy, cx, cy = cam.K[0], cam.K[4], cam.K[2], cam.K[5]
        n, f = 0.05, 100.0
        # camera frame (x right, y down, z forward) -> GL clip space (y up, looking down -z)
        Rcw = pose.R_wc.T
        view = np.eye(4)
        view[:3, :3] = np.diag([1.0, -1.0, -1.0]) @ Rcw
        proj = np.array([[2 * fx / w, 0, 1 - 2 * (cx + 0.5) / w, 0],
                         [0, 2 * fy / h, 2 * (cy + 0.5) / h - 1, 0],
                         [0, 0, -(f + n) / (f - n), -2 * f * n / (f - n)],
                         [0, 0, -1, 0]])
        prog["mvp"].write((proj @ view).T.astype("f4").tobytes())
        fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((w, h), components=1, dtype="i4")],
                              depth_attachment=ctx.depth_renderbuffer((w, h)))
        fbo.use()
        times = []
        for _ in range(5):
            t = time.perf_counter()
            fbo.clear(depth=1.0)
            vao.render(moderngl.TRIANGLES)
            ids = np.frombuffer(fbo.read(components=1, dtype="i4"), np.int32).reshape(h, w)[::-1]
            times.append(time.perf_counter() - t)
        rays = world_rays(cam, pose)
        t_rays = []
        for _ in range(3):
            t = time.perf_counter()
            hits = engine.cast(C, rays, 100.0)
            t_rays.append(time.perf_counter() - t)
        t_ray = min(t_rays)
        agree = np.mean((ids.reshape(-1) - 1) == hits.triangle)
        print(f"{w} x {h}: raster + readback {1e3 * min(times):.1f} ms (median "
              f"{1e3 * np.median(times):.1f}); RayEngine.cast {1e3 * t_ray:.1f} ms (best of 3); same triangle "
              f"in {100 * agree:.1f} % of pixels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
