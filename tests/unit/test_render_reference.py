"""The pool renderer against its former self (issue 21).

The renderer now keeps the light path of every pixel corner up to the water (a constant
of the setup), shares one rippled surface between tags side by side, and draws its
noise bits in one call, and draws each frame into its own radiance image again (only the
last frame's boxes reset); ``tests/support/render_reference.py`` is the renderer as it
was before. Every image must be the same, bit for bit: poses across the frame, the vehicle
partly out of view, tilted, with a tag out of the water at the surface, with ripple,
motion blur and noise, on the rig's camera and on a tilted, strongly distorted one, and
with the noise drawn from each kind of bit generator (the fast path takes 64-bit words
from Philox and PCG64; others fall back to ``Generator.bytes``).
"""

from __future__ import annotations

import numpy as np
import pytest
import render_reference as ref
from pool_cameras import tilted_setup
from moonpool.components.localization import render
from moonpool.components.localization.camera import OverheadCamera, pose_from_state
from moonpool.components.localization.pool_setup import example_setup
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.noise import channel_key
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2

NOISY = dict(exposure_jitter=0.05, blur_sigma_px=0.6, read_noise_dn=1.5, shot_noise_dn=0.05)

# (name, pose, what it exercises)
POSES = [
    ("centre", render.Pose(0.1, 0.2, 0.5, 0.02, -0.01, 0.3)),
    ("far corner", render.Pose(1.9, -1.2, 0.3, 0.1, 0.05, 2.0)),
    ("partly out of frame", render.Pose(-2.35, 1.0, 0.6, 0.0, 0.0, 0.7)),
    ("out of frame", render.Pose(6.0, 0.0, 0.5)),
    ("tilted", render.Pose(0.5, -0.4, 0.9, 0.25, -0.3, 0.8)),
    ("at the surface (tags in air)", render.Pose(0.05, -0.03, 0.16, 0.0, 0.0, 0.4)),
    ("breaking the surface, tilted", render.Pose(-0.4, 0.3, 0.13, 0.2, 0.1, -1.2)),
    ("deep", render.Pose(-1.0, -0.8, 1.6, -0.05, 0.02, 3.0)),
]


def philox(k: int) -> np.random.Generator:
    """The camera component's generator of frame k."""
    key = np.array([0x1234, 0x5678], np.uint64)
    return np.random.Generator(np.random.Philox(key=key, counter=np.array([0, k, 0, 0], np.uint64)))


def pair(setup, **options):
    return (ref.Renderer(setup, ref.RenderOptions(**options)),
            render.Renderer(setup, render.RenderOptions(**options)))


@pytest.mark.parametrize("setup", [example_setup(), tilted_setup()], ids=["rig", "tilted"])
def test_images_are_the_former_renderers_bit_for_bit(setup):
    old, new = pair(setup, ripple_amplitude_m=0.0002, **NOISY)
    drawn = 0
    for k, (what, pose) in enumerate(POSES):
        blur = (1.5, -0.7) if k % 3 == 1 else None
        a = old.render(pose, philox(k), t_s=0.033 * k, ripple_seed=7, motion_blur_px=blur)
        b = new.render(pose, philox(k), t_s=0.033 * k, ripple_seed=7, motion_blur_px=blur)
        assert np.array_equal(a, b), what
        drawn += int(np.any(a != old.render(None, philox(k))))
    assert drawn >= len(POSES) - 2  # the tags were in the images (all but out of frame)
    # The frames again, in another order: the cache of rays filled differently.
    for k, (what, pose) in reversed(list(enumerate(POSES))):
        assert np.array_equal(old.render(pose, philox(k), t_s=0.033 * k, ripple_seed=7),
                              new.render(pose, philox(k), t_s=0.033 * k, ripple_seed=7)), what


def test_still_water_and_noise_free_images_are_the_former_renderers():
    old, new = pair(example_setup(), blur_sigma_px=0.5)
    for k, (what, pose) in enumerate(POSES):
        assert np.array_equal(old.render(pose), new.render(pose)), what
        assert np.array_equal(old.radiance(pose), new.radiance(pose)), what


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937, np.random.SFC64])
def test_noise_bits_are_generator_bytes_for_every_bit_generator(bitgen):
    """``random_uint16`` returns ``Generator.bytes`` and leaves the generator as it would."""
    for n, shape in ((8, (2, 4)), (6, (2, 3)), (720 * 1280, (720, 1280))):
        a, b = np.random.Generator(bitgen(3)), np.random.Generator(bitgen(3))
        a.standard_normal()
        b.standard_normal()
        if bitgen is np.random.PCG64:
            a.integers(0, 2**32, dtype=np.uint32)  # a buffered half word: the slow path
            b.integers(0, 2**32, dtype=np.uint32)
        want = np.frombuffer(a.bytes(2 * n), dtype=np.uint16).reshape(shape)
        assert np.array_equal(render.random_uint16(b, shape), want)
        # the same state after: the same next draws (32-bit ones use a buffered half)
        assert np.array_equal(a.integers(0, 2**32, 5, dtype=np.uint32),
                              b.integers(0, 2**32, 5, dtype=np.uint32))
        assert np.array_equal(a.bit_generator.random_raw(3), b.bit_generator.random_raw(3))
    old, new = pair(example_setup(), **NOISY)
    pose = POSES[0][1]
    assert np.array_equal(old.render(pose, np.random.Generator(bitgen(11))),
                          new.render(pose, np.random.Generator(bitgen(11))))


def pool_camera(seed: int) -> ComponentHost:
    """The camera component with the pool rig's options."""
    params = dict(exposure_jitter=0.05, blur_sigma_px=0.6, ripple_amplitude_m=0.0002)
    cam = ComponentHost(OverheadCamera())
    cam.configure(lc.Configure(instance_name="camera", seed=seed, period_ns=33_333_333, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    cam.initialize(0)
    return cam


def pool_renderer():
    """The former renderer with the camera's options (its default noise included)."""
    return ref.Renderer(example_setup(), ref.RenderOptions(
        ripple_amplitude_m=0.0002, exposure_jitter=0.05, blur_sigma_px=0.6, read_noise_dn=1.5,
        shot_noise_dn=0.05))


def state_of(pose: render.Pose) -> vehicle_pb2.VehicleState:
    s = vehicle_pb2.VehicleState()
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = pose.x, pose.y, pose.z
    s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = quat_from_euler(
        pose.roll, pose.pitch, pose.yaw)
    return s


def test_camera_frames_are_the_former_renderers():
    """The camera component's frames, with the pool rig's options (ripple, blur,
    jitter, noise), are the former renderer's with the frame's keyed generator, before
    a state arrives and after."""
    cam, old = pool_camera(4), pool_renderer()
    key = channel_key(4, "camera", "image")
    for k, (what, pose) in enumerate([("no state yet", None)] + POSES[:5]):
        t_ns = (k * 10**9 + 15) // 30
        inputs = {}
        if pose is not None:
            s = state_of(pose)
            inputs["state"] = s
            pose = pose_from_state(s)
        (out,) = cam.step(t_ns, 33_333_333, inputs)
        rng = np.random.Generator(np.random.Philox(key=key, counter=np.array([0, k, 0, 0], np.uint64)))
        want = old.render(pose, rng, t_s=t_ns * 1e-9, ripple_seed=4)
        got = np.frombuffer(memoryview(out.attachment).cast("B"), np.uint8).reshape(720, 1280)
        assert np.array_equal(got, want), what
    cam.terminate()


def test_camera_frames_of_a_drifting_vehicle_are_the_former_renderers():
    """A vehicle drifting slowly under the rippled water, the camera's schedule at
    30 Hz from a start off its grid: frame after frame, the former renderer's."""
    cam, old = pool_camera(2), pool_renderer()
    key = channel_key(2, "camera", "image")
    t0 = 10**9 // 50  # a start off the 30 Hz grid
    for k in range(6):
        t_ns = t0 + (k * 10**9 + 15) // 30
        pose = render.Pose(0.3 + 0.004 * k, -0.2, 0.6, 0.03, -0.02, 0.5 + 0.01 * k)
        s = state_of(pose)
        (out,) = cam.step(t_ns, 33_333_333, {"state": s})
        rng = np.random.Generator(np.random.Philox(key=key, counter=np.array([0, k, 0, 0], np.uint64)))
        want = old.render(pose_from_state(s), rng, t_s=t_ns * 1e-9, ripple_seed=2)
        got = np.frombuffer(memoryview(out.attachment).cast("B"), np.uint8).reshape(720, 1280)
        assert np.array_equal(got, want), k
    cam.terminate()


def test_frame_noise_made_ahead_is_the_frames_own_and_the_worker_ends():
    """The camera makes frame k + 1's noise on a worker thread while frame k is traced:
    a frame rendered with it equals the same frame rendered all inline (the component
    before ``initialize``, which has no worker), also when a step skips the frame made
    ahead; ``terminate`` ends the thread."""
    import threading

    cam = pool_camera(5)
    camera = cam.component
    inline = OverheadCamera()
    inline.name, inline.seed = "camera", 5
    inline.configure(camera.params)
    inline.key = camera.key
    for k, (_what, pose) in enumerate(POSES[:4]):
        t_ns = (k * 10**9 + 15) // 30
        s = state_of(pose)
        (out,) = cam.step(t_ns, 33_333_333, {"state": s})
        assert camera._ahead is not None and camera._ahead[0] == k + 1
        got = np.frombuffer(memoryview(out.attachment).cast("B"), np.uint8).reshape(720, 1280)
        assert np.array_equal(got, inline.render_frame(k, t_ns, s)), k
    camera.k = 7  # the frame made ahead (4) is not the one rendered: made inline then
    (out,) = cam.step(7 * 10**9 // 30, 33_333_333, {"state": state_of(POSES[0][1])})
    got = np.frombuffer(memoryview(out.attachment).cast("B"), np.uint8).reshape(720, 1280)
    assert np.array_equal(got, inline.render_frame(7, 7 * 10**9 // 30, state_of(POSES[0][1])))
    assert any(t.name.startswith("camera-noise") for t in threading.enumerate())
    cam.terminate()
    assert not any(t.name.startswith("camera-noise") for t in threading.enumerate())
