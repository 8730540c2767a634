"""The pool renderer's C loops (components/localization/pool_trace.c, issue 21).

A frame is drawn in one call (``mp_render``): the corner rows streamed, each row's
(rippled) surface made once for every tag, each tag traced and composited, each tag first
tried in a smaller box that its outermost light paths must show to hold it. These tests
hold that path to the stages called one by one (``render_tag``: ripple, trace,
composite), the exposure to NumPy's float32 steps (``_to_dn``), and every supersampling
to the former renderer (``tests/support/render_reference.py``), bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import render_reference as ref
from pool_cameras import tilted_setup

from moonpool.components.localization import render
from moonpool.components.localization.pool_setup import example_setup

POSES = [
    render.Pose(0.34, -0.2, 0.6, 0.03, -0.02, 0.55),
    render.Pose(1.9, -1.2, 0.3, 0.1, 0.05, 2.0),
    render.Pose(-1.0, -0.8, 1.6, -0.05, 0.02, 3.0),
    render.Pose(0.05, -0.03, 0.16, 0.0, 0.0, 0.4),      # tags at the surface (in air)
    render.Pose(-0.4, 0.3, 0.13, 0.2, 0.1, -1.2),      # breaking the surface, tilted
    render.Pose(-2.35, 1.0, 0.6, 0.0, 0.0, 0.7),       # partly out of the image
]


def _visible(r: render.Renderer, pose: render.Pose, extra: float):
    tags = r.tag_world(pose)
    return [(t, b) for t, b in zip(tags, r._tag_boxes(tags, extra)) if b is not None]


def _one_by_one(r: render.Renderer, visible, t_s: float, waves) -> np.ndarray:
    img = np.full((r.height, r.width), r.options.floor_level, np.float32)
    for tag, box in visible:
        r.render_tag(img, box, tag, t_s, waves)
    return img


@pytest.mark.parametrize("setup", [example_setup(), tilted_setup()], ids=["rig", "tilted"])
@pytest.mark.parametrize("ripple", [0.0, 2e-4, 3e-3], ids=["still", "ripple", "steep"])
def test_a_frame_in_one_call_is_the_tags_drawn_one_by_one(setup, ripple):
    r = render.Renderer(setup, render.RenderOptions(ripple_amplitude_m=ripple, blur_sigma_px=0.6))
    waves = r.ripple_waves(5) if ripple else None
    drawn = smaller = 0
    for k, pose in enumerate(POSES):
        t_s = 0.7 + 0.033 * k
        visible = _visible(r, pose, 12.0)
        want = _one_by_one(r, visible, t_s, waves)
        for shrink in (0, 9):
            img = np.full_like(want, r.options.floor_level)
            used = r._render_tags(img, visible, t_s, waves, shrink=shrink)
            assert np.array_equal(img, want), (pose, shrink)
            big = np.array([b for _, b in visible], dtype=np.int64).reshape(-1, 4)
            assert np.all(used[:, :2] >= big[:, :2]) and np.all(used[:, 2:] <= big[:, 2:])
            smaller += int(np.any(used != big))
        drawn += int(np.any(want != r.options.floor_level))
    assert drawn >= 3  # (the tilted camera sees fewer of the poses)
    assert smaller >= 2  # the smaller boxes were taken (where the ring allowed)


def test_a_box_that_would_cut_the_tag_is_refused():
    """Shrunk until it cuts the tags, the smaller box fails the ring test: the tags are
    drawn in their full boxes, and the image is the same."""
    r = render.Renderer(example_setup(), render.RenderOptions(ripple_amplitude_m=2e-4))
    waves = r.ripple_waves(1)
    visible = _visible(r, POSES[0], 10.0)
    want = _one_by_one(r, visible, 0.3, waves)
    big = np.array([b for _, b in visible], dtype=np.int64)
    for shrink in (16, 25, 60):  # 3 px into the tag's ring, further, past its centre
        img = np.full_like(want, r.options.floor_level)
        used = r._render_tags(img, visible, 0.3, waves, shrink=shrink)
        assert np.array_equal(used, big), shrink
        assert np.array_equal(img, want), shrink


def test_the_rigs_frames_take_the_smaller_boxes():
    """On the pool rig's camera, with its ripple and blur, tags in view (not at the
    image's edge) are drawn in boxes a third smaller in area or more (what makes the
    camera fast)."""
    r = render.Renderer(example_setup(), render.RenderOptions(ripple_amplitude_m=2e-4,
                                                              blur_sigma_px=0.6))
    waves = r.ripple_waves(3)
    for pose in (POSES[0], POSES[2], render.Pose(0.0, 0.0, 0.5, 0.0, 0.0, 0.3)):
        slope = sum(a * math.hypot(kx, ky) for a, kx, ky, _, _ in waves)
        extra = 3 * 0.6 + 1 + slope * (pose.z + 0.5) * r.camera.fx / r.camera.h_air + 2
        visible = _visible(r, pose, extra)
        img = np.full((r.height, r.width), 0.45, np.float32)
        used = r._render_tags(img, visible, 0.2, waves, shrink=math.floor(extra))
        big = np.array([b for _, b in visible])
        area = lambda b: (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)  # noqa: E731
        assert np.all(area(used) <= 0.67 * area(big)), pose


@pytest.mark.parametrize("ss", [1, 2, 3, 5, 12])
def test_every_supersampling_is_the_former_renderers(ss):
    """The edge pixels' average (NumPy's pairwise sum, unrolled for 16 samples) for
    other sample counts: still and rippled water, noise-free radiance and images."""
    opts = dict(supersampling=ss, blur_sigma_px=0.5)
    for ripple in (0.0, 2e-4):
        old = ref.Renderer(example_setup(), ref.RenderOptions(ripple_amplitude_m=ripple, **opts))
        new = render.Renderer(example_setup(),
                              render.RenderOptions(ripple_amplitude_m=ripple, **opts))
        for k, pose in enumerate(POSES[:4]):
            a = old.radiance(pose, t_s=0.1 * k, ripple_seed=2)
            b = new.radiance(pose, t_s=0.1 * k, ripple_seed=2)
            assert np.array_equal(a, b), (ss, ripple, pose)


def test_the_ripple_phases_follow_the_seed():
    """The phases kept per corner belong to one set of waves: another seed makes them
    again, and going back gives the first images again."""
    r = render.Renderer(example_setup(), render.RenderOptions(ripple_amplitude_m=2e-4))
    pose = POSES[0]
    first = r.render(pose, t_s=1.0, ripple_seed=7).copy()
    other = r.render(pose, t_s=1.0, ripple_seed=8).copy()
    assert not np.array_equal(first, other)
    assert np.array_equal(r.render(pose, t_s=1.0, ripple_seed=7), first)
    fresh = render.Renderer(example_setup(), render.RenderOptions(ripple_amplitude_m=2e-4))
    assert np.array_equal(fresh.render(pose, t_s=1.0, ripple_seed=8), other)


@pytest.mark.parametrize("read,shot", [(1.5, 0.05), (2.0, 0.0), (0.0, 0.0)])
def test_exposure_is_numpys_float32_steps(read, shot):
    """``mp_expose`` against ``_to_dn``: gains, negative and saturated radiance, each
    noise draw, and no noise at all."""
    r = render.Renderer(example_setup(), render.RenderOptions(read_noise_dn=read,
                                                              shot_noise_dn=shot,
                                                              exposure_jitter=0.1))
    rng = np.random.default_rng(4)
    rad = rng.uniform(-0.1, 1.3, (r.height, r.width)).astype(np.float32)
    boxes = [(10, 20, 400, 300), (900, 500, 1279, 719)]
    for k in range(3):
        noise = r.frame_noise(np.random.default_rng(k))
        idx = None if noise.idx is None else noise.idx.copy()
        out = r.expose(rad, None, boxes, noise)
        for u0, v0, u1, v1 in boxes:
            box = (slice(v0, v1 + 1), slice(u0, u1 + 1))
            z = None if idx is None else render._NORMAL_LUT[idx[box]]
            assert np.array_equal(out[box], r._to_dn(rad[box], z, noise.gain)), k
