"""A pool setup as viewers draw it (``Component.static_scene``; docs/live.md): the tags
on the vehicle and the overhead camera above the water.

- Each tag is its bitmap (``tags.py``, as the renderer draws it): a white square of
  the whole bitmap and, 1 mm above it (body -z), its black cells, in the body frame
  (FRD) of the vehicle that carries it: parts with ``body_port`` set, which the viewer
  moves with that vehicle.
- The camera is a small pyramid in the world (NED): its apex at the camera centre
  ``t_wc``, its base 0.2 m along the optical axis, spanning the image's field of view.
"""

from __future__ import annotations

import numpy as np

from ..sdk.scene import ScenePart
from .pool_setup import PoolSetup
from .tags import tag_axes_body, tag_family

WHITE = (0.92, 0.92, 0.92, 1.0)
BLACK = (0.05, 0.05, 0.05, 1.0)
CAMERA = (0.2, 0.5, 0.9, 0.6)
LIFT_M = 0.001
"""The black cells' height above the white square (so that the viewer draws them on top)."""
CAMERA_DEPTH_M = 0.2
"""Distance from the camera centre to the base of its pyramid."""


def _squares(centers: np.ndarray, half: float, top: np.ndarray, right: np.ndarray):
    """Vertices and faces of axis-aligned squares (one per centre) in the tag's plane,
    wound counter-clockwise seen from above (body -z)."""
    offsets = np.array([[1, -1], [1, 1], [-1, 1], [-1, -1]], float) * half
    v = (centers[:, None, :] + offsets[None, :, :1] * top + offsets[None, :, 1:] * right)
    base = 4 * np.arange(len(centers))[:, None]
    faces = np.concatenate([base + [0, 1, 2], base + [0, 2, 3]])
    return v.reshape(-1, 3), faces


def tag_parts(setup: PoolSetup, body_port: str) -> list[ScenePart]:
    """Two parts per tag (white square, black cells) in the body frame (module docstring)."""
    family = tag_family(setup.tag_family)
    cell = setup.tag_size_m * family.cell_fraction
    tw = family.total_width
    parts = []
    for tag in setup.tags:
        top, right, normal = tag_axes_body(tag.yaw_b_rad)
        center = np.asarray(tag.center_b, float)
        bitmap = family.bitmap(tag.id)  # rows from the top edge down, columns left to right
        rows, cols = np.nonzero(bitmap < 128)
        along_top = (0.5 * tw - rows - 0.5) * cell
        along_right = (cols + 0.5 - 0.5 * tw) * cell
        black = center + LIFT_M * normal + along_top[:, None] * top + along_right[:, None] * right
        v, f = _squares(center[None, :], 0.5 * tw * cell, top, right)
        parts.append(ScenePart(f"tag {tag.id}", v, f, WHITE, body_port))
        v, f = _squares(black, 0.5 * cell, top, right)
        parts.append(ScenePart(f"tag {tag.id} cells", v, f, BLACK, body_port))
    return parts


def camera_part(setup: PoolSetup, name: str = "camera") -> ScenePart:
    """The overhead camera as a pyramid in NED (module docstring)."""
    w, h = setup.image_size or (1280, 720)
    fx, fy, cx, cy = setup.K
    corners_px = np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])
    rays_cam = np.column_stack([(corners_px[:, 0] - cx) / fx, (corners_px[:, 1] - cy) / fy,
                                np.ones(4)])
    base = setup.camera_center + CAMERA_DEPTH_M * rays_cam @ setup.R_wc.T
    v = np.vstack([setup.camera_center, base])
    faces = np.array([[0, 2, 1], [0, 3, 2], [0, 4, 3], [0, 1, 4], [1, 2, 3], [1, 3, 4]])
    return ScenePart(name, v, faces, CAMERA)
