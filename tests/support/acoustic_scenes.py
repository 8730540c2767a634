"""Test-only geometry for the acoustic sensor tests: small meshes handed to the real
ray engine (``moonpool.components.world.rays.RayEngine``) whose hits have closed
forms: a flat seabed, a tilted plane and a sphere; plus VehicleState builders."""

from __future__ import annotations

import numpy as np
import trimesh

from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.world.rays import RayEngine
from moonpool.v1 import vehicle_pb2


def plane_engine(point, normal, half_size=5000.0, label=3, instance=7) -> RayEngine:
    """A square of side 2·half_size through ``point`` perpendicular to ``normal`` (2 triangles)."""
    p0 = np.asarray(point, dtype=float)
    n = np.asarray(normal, dtype=float)
    n = n / np.linalg.norm(n)
    a = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
    a /= np.linalg.norm(a)
    b = np.cross(n, a)
    s = half_size
    V = np.array([p0 - s * a - s * b, p0 + s * a - s * b, p0 + s * a + s * b, p0 - s * a + s * b])
    return RayEngine.from_mesh(V, np.array([[0, 1, 2], [0, 2, 3]]), labels=label, instances=instance)


def flat_engine(depth_m, **kw) -> RayEngine:
    """A horizontal seabed at NED z = depth_m."""
    return plane_engine((0.0, 0.0, depth_m), (0.0, 0.0, -1.0), **kw)


def sphere_engine(center, radius, subdivisions=6, label=5, instance=9) -> RayEngine:
    """An icosphere (vertices on the sphere; flat facets within radius·(1 - cos(edge/2R)))."""
    m = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return RayEngine.from_mesh(np.asarray(m.vertices) + np.asarray(center, dtype=float),
                               np.asarray(m.faces), labels=label, instances=instance)


def state(pos=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0), vel=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0)):
    """A VehicleState at a pose (NED, ZYX) with body velocities."""
    m = vehicle_pb2.VehicleState()
    m.position_ned_m.x, m.position_ned_m.y, m.position_ned_m.z = pos
    q = quat_from_euler(*rpy)
    m.orientation.w, m.orientation.x, m.orientation.y, m.orientation.z = q
    m.linear_velocity_body_mps.x, m.linear_velocity_body_mps.y, m.linear_velocity_body_mps.z = vel
    w = m.angular_velocity_body_radps
    w.x, w.y, w.z = omega
    return m


def write_flat_scene(folder, depth_m=90.0, boulder=None, size_m=400.0, water=""):
    """A scene file: a flat procedural seabed at depth_m (class sediment = 1), optionally a
    sphere ``boulder`` = (north, east, down, radius) of class rock = 2. Returns its path."""
    text = f"""format = "moonpool.scene/1"
name = "flat"
description = "a flat floor for the sensor tests"

[origin]
latitude_deg = 45.0
longitude_deg = 0.0

[water]
{water}

[classes.sediment]
id = 1
backscatter_db = -30.0
reflectance = [0.4, 0.4, 0.4]

[classes.rock]
id = 2
backscatter_db = -15.0
reflectance = [0.3, 0.3, 0.3]

[seabed]
kind = "procedural"
class = "sediment"
size_m = [{size_m}, {size_m}]
resolution_m = 20.0
mean_depth_m = {depth_m}
"""
    if boulder is not None:
        n, e, d, r = boulder
        text += f"""
[[objects]]
name = "boulder"
class = "rock"
shape = "sphere"
radius_m = {r}
position_ned_m = [{n}, {e}, {d}]
"""
    from pathlib import Path

    path = Path(folder) / "scene.toml"
    path.write_text(text)
    return path
