"""Detection, measurement and the two components (components/localization/): accuracy
on rendered images, an independent renderer (OpenCV's warpPerspective) to check the
conventions, the pinhole baseline's depth bias, and the robustness cases (no tag, one
tag, an unknown id, motion blur, inconsistent geometry)."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.localization.camera import OverheadCamera
from moonpool.components.localization.detect import (
    DetectorOptions,
    TagDetector,
    as_gray8,
    roi_around,
)
from moonpool.components.localization.localizer import Localizer, image_array
from moonpool.components.localization.measure import PinholeMeasurer, RefractionMeasurer
from moonpool.components.localization.pool_setup import TagMount, example_setup
from moonpool.components.localization.render import Pose, Renderer, RenderOptions
from moonpool.components.localization.tags import tag_axes_body, tag_family
from moonpool.components.sdk.frames import quat_from_euler
from moonpool.components.sensors.common import P_ATM, G
from moonpool.v1 import common_pb2, sensors_pb2, vehicle_pb2
from moonpool.v1 import lifecycle_pb2 as lc

SETUP = example_setup()
# Tag 1 turned by 90 degrees: yaw handling is exercised.
SETUP = dataclasses.replace(SETUP, tags=(TagMount(0, (0.11, 0.0, -0.14), 0.0),
                                         TagMount(1, (-0.11, 0.0, -0.14), math.pi / 2)))
NOISY = RenderOptions(read_noise_dn=1.5, shot_noise_dn=0.05, blur_sigma_px=0.6)
POSES = [Pose(0.4, -0.3, 0.8, 0.03, -0.02, 0.6), Pose(-1.5, 0.8, 0.4, -0.04, 0.05, -2.5),
         Pose(1.6, -1.1, 1.2, 0.0, 0.0, 3.0), Pose(0.0, 0.0, 0.5, 0.02, 0.03, -1.0)]


@pytest.fixture(scope="module")
def renderer():
    return Renderer(SETUP, NOISY)


@pytest.fixture(scope="module")
def detector():
    return TagDetector(DetectorOptions())


def horizontal_error(m, pose):
    return math.hypot(m.x - pose.x, m.y - pose.y)


# ------------------------------------------------------------------- detector


def test_detector_pitfalls_are_handled():
    det = TagDetector(DetectorOptions(decode_sharpening=0.25))
    assert det.decode_sharpening == 0.25  # the wrapper alone would store int(0.25) = 0
    with pytest.raises(ValueError, match="exactly one tag family"):
        TagDetector(DetectorOptions(family="tag36h11 tag25h9"))
    with pytest.raises(ValueError, match="unknown tag family"):
        TagDetector(DetectorOptions(family="tag99h1"))
    bgr = np.dstack([np.full((40, 60), 90, np.uint8)] * 3)
    assert as_gray8(bgr).shape == (40, 60)
    assert as_gray8(np.full((4, 4), 65535, np.uint16)).max() == 255


def test_16_bit_images_are_read_by_their_significant_bits(renderer, detector):
    """16-bit data keeps its high byte; 12-bit data stored right-aligned (0-4095, as many
    machine-vision cameras write it) reads as bright as left-aligned, and its tags are
    found where the 8-bit image's are (plain v >> 8 would read it 16x too dark)."""
    img8 = renderer.render(POSES[0], np.random.default_rng(2))
    twelve = img8.astype(np.uint16) * 16 + 7          # right-aligned 12 bit, 0..4087
    full16 = img8.astype(np.uint16) * 257             # full 16 bit
    assert np.array_equal(as_gray8(twelve), img8)
    assert np.array_equal(as_gray8(full16), img8)
    assert np.array_equal(as_gray8(twelve << 4), img8)  # the same data left-aligned
    assert as_gray8(np.zeros((3, 3), np.uint16)).max() == 0
    ref = {d.id: d.corners for d in detector.detect(img8).detections}
    got = {d.id: d.corners for d in detector.detect(twelve).detections}
    assert sorted(got) == sorted(ref) == [0, 1]
    assert all(np.array_equal(got[i], ref[i]) for i in ref)


def test_rendered_corners_are_where_the_forward_projection_puts_them(renderer, detector):
    """Render (ray tracing) -> detect: the corners agree with the forward projection
    (validated against the quartic) to a small fraction of a pixel, with no bias."""
    rng = np.random.default_rng(4)
    errs = []
    for pose in POSES:
        img = renderer.render(pose, rng)
        found = {d.id: d for d in detector.detect(img).detections}
        assert sorted(found) == [0, 1]
        for tid, d in found.items():
            truth = renderer.camera.project(pose.position + SETUP.corners_body(tid) @ pose.R_wb.T)
            errs.append(d.corners - truth)
    e = np.concatenate(errs)
    rms, bias = float(np.sqrt(np.mean(e ** 2))), np.abs(e.mean(axis=0)).max()
    print(f"corner error rms {rms:.3f} px, mean {e.mean(axis=0).round(3)} px")
    assert rms < 0.15 and bias < 0.05  # a half-pixel convention slip would show as 0.5


def test_roi_detection_matches_full_frame(renderer, detector):
    img = renderer.render(POSES[0], np.random.default_rng(1))
    full = detector.detect(img).detections
    roi = detector.detect(img, roi_around(full, img.shape)).detections
    assert sorted(d.id for d in roi) == sorted(d.id for d in full)
    for a in full:
        b = next(d for d in roi if d.id == a.id)
        assert np.max(np.abs(a.corners - b.corners)) < 0.15  # decimated vs full-res quad search


# ---------------------------------------------------------------- measurement


def test_refraction_measurement_on_ideal_images_is_sub_millimetre(detector):
    r = Renderer(SETUP, RenderOptions())
    meas = RefractionMeasurer(SETUP)
    for pose in POSES:
        m = meas.measure(detector.detect(r.render(pose)).detections, pose.z, pose.roll, pose.pitch)
        assert m.valid and m.n_corners == 8 and m.tags == (0, 1)
        assert horizontal_error(m, pose) < 0.001
        assert abs(math.remainder(m.yaw - pose.yaw, 2 * math.pi)) < 0.003
        sd = np.sqrt(np.diag(m.covariance))
        assert np.all(np.linalg.eigvalsh(m.covariance) > 0)
        assert 0.0003 < sd[0] < 0.01 and 0.0003 < sd[1] < 0.01  # floor + depth/tilt terms


def test_pinhole_baseline_shows_the_depth_bias(renderer, detector):
    """PnP through water: depth ~ h_air + d_water / 1.333, and a horizontal error that
    grows off-axis; the refraction-aware measurement has neither."""
    ref, pin = RefractionMeasurer(SETUP), PinholeMeasurer(SETUP)
    rng = np.random.default_rng(8)
    for pose in POSES:
        dets = detector.detect(renderer.render(pose, rng)).detections
        a = ref.measure(dets, pose.z, pose.roll, pose.pitch)
        b = pin.measure(dets)
        assert a.valid and b.valid
        tag_depth = pose.z - 0.14  # the tags sit 0.14 m above the body origin
        apparent = tag_depth / 1.333 + 0.14
        assert b.z < pose.z - 0.2 * tag_depth  # far too shallow
        assert b.z == pytest.approx(apparent, abs=0.06)
        assert horizontal_error(a, pose) < 0.002
    far = POSES[2]
    dets = detector.detect(renderer.render(far, rng)).detections
    assert horizontal_error(pin.measure(dets), far) > 5 * horizontal_error(
        ref.measure(dets, far.z, far.roll, far.pitch), far)


def warp_render(setup, pose: Pose, up: int = 4) -> np.ndarray:
    """An independent renderer without water (n_water = n_air): OpenCV projects the tag's
    outer corners, warpPerspective draws the family bitmap at `up` x resolution, INTER_AREA
    averages down. Pixel centres at integers throughout (OpenCV)."""
    fam = tag_family(setup.tag_family)
    w, h = setup.image_size
    fx, fy, cx, cy = setup.K
    # a pixel i at `up` x covers the low-res pixel i // up: centre (i - (up - 1) / 2) / up
    K = np.array([[fx * up, 0, cx * up + (up - 1) / 2], [0, fy * up, cy * up + (up - 1) / 2],
                  [0, 0, 1]])
    canvas = np.full((h * up, w * up), 115, np.uint8)
    src_n = fam.total_width * 40
    half = 0.5 * fam.total_width * setup.tag_size_m / fam.width_at_border
    for t in setup.tags:
        bm = cv2.resize(fam.bitmap(t.id), (src_n, src_n), interpolation=cv2.INTER_NEAREST)
        bm = np.where(bm > 127, 217, 18).astype(np.uint8)
        top, right, _ = tag_axes_body(t.yaw_b_rad)
        c = np.asarray(t.center_b)
        corners_b = [c + half * (top - right), c + half * (top + right), c + half * (-top + right),
                     c + half * (-top - right)]  # TL, TR, BR, BL of the upright bitmap
        Pw = pose.position + np.array(corners_b) @ pose.R_wb.T
        Xc = (Pw - np.asarray(setup.t_wc)) @ setup.R_wc
        dst, _ = cv2.projectPoints(Xc, np.zeros(3), np.zeros(3), K, None)
        src = np.array([[-0.5, -0.5], [src_n - 0.5, -0.5], [src_n - 0.5, src_n - 0.5],
                        [-0.5, src_n - 0.5]], np.float32)
        H = cv2.getPerspectiveTransform(src, dst.reshape(4, 2).astype(np.float32))
        cv2.warpPerspective(bm, H, (w * up, h * up), dst=canvas, flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_TRANSPARENT)
    return cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA)


def test_conventions_against_an_independent_renderer(detector):
    """No water and no distortion: both measurers must recover the pose that OpenCV's
    projection drew. This pins R_wc (camera -> world), t_wc (camera centre), the tag
    orientation on the body, the corner order and the pixel-centre convention."""
    setup = dataclasses.replace(SETUP, n_water=1.0, dist=(0.0,) * 5)
    ref, pin = RefractionMeasurer(setup), PinholeMeasurer(setup)
    for pose in POSES:
        img = warp_render(setup, pose)
        dets = detector.detect(img).detections
        assert sorted(d.id for d in dets) == [0, 1]
        a = ref.measure(dets, pose.z, pose.roll, pose.pitch)
        b = pin.measure(dets)
        assert horizontal_error(a, pose) < 0.0015, (a, pose)
        assert abs(math.remainder(a.yaw - pose.yaw, 2 * math.pi)) < 0.005
        assert horizontal_error(b, pose) < 0.02 and abs(b.z - pose.z) < 0.03
        assert abs(math.remainder(b.yaw - pose.yaw, 2 * math.pi)) < 0.03


# ----------------------------------------------------------------- robustness


def test_no_tag_visible_is_refused(renderer, detector):
    img = renderer.render(Pose(9.0, 9.0, 1.0), np.random.default_rng(2))  # out of view
    m = RefractionMeasurer(SETUP).measure(detector.detect(img).detections, 1.0, 0.0, 0.0)
    assert not m.valid and m.reason == common_pb2.REFUSAL_REASON_NOT_DETECTED
    assert m.detail == "no tag in view"
    assert not PinholeMeasurer(SETUP).measure([]).valid


def test_one_tag_only(detector):
    one = dataclasses.replace(SETUP, tags=SETUP.tags[:1])
    r = Renderer(one, NOISY)
    pose = POSES[0]
    dets = detector.detect(r.render(pose, np.random.default_rng(3))).detections
    m = RefractionMeasurer(SETUP).measure(dets, pose.z, pose.roll, pose.pitch)
    assert m.valid and m.tags == (0,) and m.n_corners == 4
    assert horizontal_error(m, pose) < 0.002
    assert PinholeMeasurer(SETUP).measure(dets).valid


def test_unknown_tag_id_is_ignored_and_reported(detector):
    other = dataclasses.replace(SETUP, tags=(SETUP.tags[0], TagMount(7, (-0.11, 0.0, -0.14), 0.0)))
    pose = POSES[3]
    dets = detector.detect(Renderer(other, NOISY).render(pose, np.random.default_rng(5))).detections
    assert sorted(d.id for d in dets) == [0, 7]
    m = RefractionMeasurer(SETUP).measure(dets, pose.z, pose.roll, pose.pitch)
    assert m.valid and m.tags == (0,)
    assert m.ignored == ["tag 7 is not in the layout"]
    only7 = [d for d in dets if d.id == 7]
    m = RefractionMeasurer(SETUP).measure(only7, pose.z, pose.roll, pose.pitch)
    assert not m.valid and m.reason == common_pb2.REFUSAL_REASON_NOT_DETECTED
    assert "tag 7 is not in the layout" in m.detail


def test_motion_blur(detector):
    pose = POSES[0]
    for blur in [(6.0, 3.0), (0.0, 9.0)]:
        r = Renderer(SETUP, dataclasses.replace(NOISY, motion_blur_px=blur))
        dets = detector.detect(r.render(pose, np.random.default_rng(6))).detections
        m = RefractionMeasurer(SETUP).measure(dets, pose.z, pose.roll, pose.pitch)
        assert m.valid, m.detail
        assert horizontal_error(m, pose) < 0.004


def test_inconsistent_geometry_is_refused(renderer, detector):
    """A wrong tag size in the calibration: the corners cannot fit the layout."""
    wrong = dataclasses.replace(SETUP, tag_size_m=0.10)
    pose = POSES[0]
    dets = detector.detect(renderer.render(pose, np.random.default_rng(7))).detections
    m = RefractionMeasurer(wrong).measure(dets, pose.z, pose.roll, pose.pitch)
    assert not m.valid and m.reason == common_pb2.REFUSAL_REASON_NO_LOCK
    assert "inconsistent" in m.detail
    m = RefractionMeasurer(SETUP).measure(dets, math.nan, 0.0, 0.0)
    assert not m.valid and m.reason == common_pb2.REFUSAL_REASON_UPSTREAM_INVALID


# ----------------------------------------------------------------- components


def state_msg(pose: Pose, t_ns: int = 0) -> vehicle_pb2.VehicleState:
    s = vehicle_pb2.VehicleState()
    s.header.sim_time_ns = t_ns
    s.position_ned_m.x, s.position_ned_m.y, s.position_ned_m.z = pose.x, pose.y, pose.z
    w, x, y, z = quat_from_euler(pose.roll, pose.pitch, pose.yaw)
    s.orientation.w, s.orientation.x, s.orientation.y, s.orientation.z = w, x, y, z
    s.roll_rad, s.pitch_rad, s.yaw_rad = pose.roll, pose.pitch, pose.yaw
    return s


def sensors(pose: Pose, rho=997.0):
    p = sensors_pb2.Pressure(pressure_pa=P_ATM + rho * G * pose.z)
    p.validity.valid = True
    imu = sensors_pb2.Imu()
    imu.validity.valid = True
    f = -G * np.array([-math.sin(pose.pitch), math.cos(pose.pitch) * math.sin(pose.roll),
                       math.cos(pose.pitch) * math.cos(pose.roll)])
    imu.specific_force_mps2.x, imu.specific_force_mps2.y, imu.specific_force_mps2.z = f
    return p, imu


def host(component, name, seed=3, **params):
    from moonpool.components.sdk.wire import to_parameter_value

    h = ComponentHost(component)
    h.configure(lc.Configure(instance_name=name, seed=seed, period_ns=33_333_333, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    h.initialize(0)
    return h


def test_camera_frames_are_keyed_and_deterministic():
    pose = POSES[0]
    a = host(OverheadCamera(), "cam")
    b = host(OverheadCamera(), "cam")
    fa = [a.step(k * 33_333_333, 33_333_333, {"state": state_msg(pose)})[0] for k in range(2)]
    fb = b.step(0, 33_333_333, {"state": state_msg(pose)})[0]
    assert fa[0].message.width == 1280 and fa[0].message.encoding == "mono8"
    assert bytes(memoryview(fa[0].attachment)) == bytes(memoryview(fb.attachment))
    assert bytes(memoryview(fa[0].attachment)) != bytes(memoryview(fa[1].attachment))


def test_camera_and_localizer_components():
    from moonpool.components.sdk.component import Attached

    cam = host(OverheadCamera(), "camera")
    loc = host(Localizer(), "localizer")
    pin = host(Localizer(), "pnp", method="pinhole")
    pose = POSES[0]
    out = cam.step(0, 33_333_333, {"state": state_msg(pose)})[0]
    image = Attached(out.message, out.attachment)
    assert image_array(image).shape == (720, 1280)
    p, imu = sensors(pose)
    res = {o.port: o.message for o in loc.step(0, 33_333_333, {
        "image": image, "pressure": p, "imu": imu, "truth": [state_msg(pose)]})}
    m = res["pose"]
    assert m.validity.valid, m.validity.detail
    assert math.hypot(m.position_m.x - pose.x, m.position_m.y - pose.y) < 0.003
    assert m.position_m.z == pytest.approx(pose.z, abs=1e-9)
    assert list(m.components) == ["x", "y", "yaw"] and m.covariance.n == 3
    assert m.features == 8 and m.true_position_m.x == pytest.approx(pose.x)
    assert len(res["detections"].detections) == 2
    assert len(res["detections"].detections[0].corners_px) == 4
    # the same image again: nothing new to publish
    assert loc.step(33_333_333, 33_333_333, {"image": image, "pressure": p, "imu": imu}) == []
    b = {o.port: o.message for o in pin.step(0, 33_333_333, {"image": image})}["pose"]
    assert b.validity.valid and b.position_m.z < pose.z - 0.1
    # a second frame: tracked in a region of interest, same answer
    out2 = cam.step(33_333_333, 33_333_333, {"state": state_msg(pose)})[0]
    res2 = {o.port: o.message for o in loc.step(66_666_666, 33_333_333, {
        "image": Attached(out2.message, out2.attachment), "pressure": p, "imu": imu})}
    assert res2["pose"].validity.valid
    assert abs(res2["pose"].position_m.x - m.position_m.x) < 0.002


def test_localizer_refusals():
    from moonpool.components.sdk.component import Attached

    cam = host(OverheadCamera(), "camera")
    loc = host(Localizer(), "localizer")
    pose = POSES[1]
    p, imu = sensors(pose)
    empty = cam.step(0, 1, {})[0]  # no state yet: the empty pool
    res = {o.port: o.message for o in loc.step(0, 1, {
        "image": Attached(empty.message, empty.attachment), "pressure": p, "imu": imu})}
    assert not res["pose"].validity.valid
    assert res["pose"].validity.reason == common_pb2.REFUSAL_REASON_NOT_DETECTED
    assert not res["detections"].validity.valid
    out = cam.step(1, 1, {"state": state_msg(pose)})[0]
    p.validity.valid = False
    res = {o.port: o.message for o in loc.step(1, 1, {
        "image": Attached(out.message, out.attachment), "pressure": p, "imu": imu})}
    assert res["pose"].validity.reason == common_pb2.REFUSAL_REASON_UPSTREAM_INVALID
    assert res["detections"].validity.valid  # the tags were seen all the same
    broken = Attached(out.message, b"\x00" * 100)
    out.message.header.seq += 1
    res = {o.port: o.message for o in loc.step(2, 1, {"image": broken, "pressure": p, "imu": imu})}
    assert res["pose"].validity.reason == common_pb2.REFUSAL_REASON_FAULT
    assert "unreadable image" in res["pose"].validity.detail


def test_water_plane_offset(detector):
    """water_z != 0: the pressure depth is below the surface, world z = water_z + depth."""
    s = dataclasses.replace(SETUP, water_z=0.04)
    pose = POSES[0]
    dets = detector.detect(Renderer(s, RenderOptions()).render(pose)).detections
    m = RefractionMeasurer(s).measure(dets, pose.z - 0.04, pose.roll, pose.pitch)
    assert m.valid and horizontal_error(m, pose) < 0.001
    assert m.z == pytest.approx(pose.z)


def test_coarse_acquisition_finds_what_the_whole_frame_search_finds(renderer, detector):
    """The localizer's first image (and every re-acquisition): a coarse whole-frame
    search (quad_decimate 3) locates the tags and a full-resolution search around
    them gives the corners; same tags, and corners as close to the whole-frame
    search's (quad_decimate 2) as tracking gives them."""
    loc = host(Localizer(), "localizer")
    plain = host(Localizer(), "plain", acquire_decimate=1.0)
    for k, pose in enumerate(POSES):
        img = renderer.render(pose, np.random.default_rng(10 + k))
        full = detector.detect(img).detections
        acquired = loc.component._acquire(img).detections
        assert sorted(d.id for d in acquired) == sorted(d.id for d in full) != []
        for a in full:
            b = next(d for d in acquired if d.id == a.id)
            assert np.max(np.abs(a.corners - b.corners)) < 0.15
        # acquire_decimate <= quad_decimate: the whole-frame search itself
        same = plain.component._acquire(img).detections
        assert [d.corners.tolist() for d in same] == [d.corners.tolist() for d in full]


def test_acquisition_falls_back_to_the_whole_frame_search(renderer):
    """When the coarse search finds no known tag (here: a decimation too coarse for
    the tags' size), the whole frame is searched at quad_decimate."""
    loc = host(Localizer(), "localizer", acquire_decimate=40.0)
    img = renderer.render(POSES[0], np.random.default_rng(1))
    assert loc.component.detector.detect(img, decimate=40.0).detections == []
    assert len(loc.component._acquire(img).detections) == 2


def test_bad_acquire_decimate_is_refused_by_name():
    from moonpool.components.sdk.errors import ParameterError

    with pytest.raises(ParameterError, match="acquire_decimate must be >= 1"):
        host(Localizer(), "localizer", acquire_decimate=0.5)


def test_the_truth_is_the_state_stamped_nearest_the_image():
    """The truth stamped on a pose is the truth state nearest the image's time (the
    first of two equally near), from the newest 64 received."""
    loc = Localizer()
    loc._truth, loc._truth_t = [], []

    def state(t):
        s = vehicle_pb2.VehicleState()
        s.header.sim_time_ns = t
        return s

    loc.step(0, 1, {"truth": [state(t) for t in (10, 20, 30, 40)]})
    assert loc._truth_at(24).header.sim_time_ns == 20
    assert loc._truth_at(25).header.sim_time_ns == 20  # equally near: the first
    assert loc._truth_at(26).header.sim_time_ns == 30
    assert loc._truth_at(-5).header.sim_time_ns == 10
    loc.step(1, 1, {"truth": [state(100 + t) for t in range(70)]})
    assert len(loc._truth) == len(loc._truth_t) == 64
    assert loc._truth_at(0).header.sim_time_ns == 106  # the oldest kept
    assert [s.header.sim_time_ns for s in loc._truth] == loc._truth_t


def _bits(v) -> list[int]:
    return np.asarray(v, dtype=float).ravel().view(np.int64).tolist()


def test_solving_the_cases_together_gives_the_same_bits():
    """The refraction fit solves itself and its six finite-difference cases together
    (_solve_many): each the same, bit for bit, as solving it alone (_solve): random
    tag poses seen by the rig's camera, one or both tags, and corners that cannot be
    back-projected (then all are solved one by one)."""
    setup = example_setup()
    meas = RefractionMeasurer(setup)
    cam = meas.camera
    rng = np.random.default_rng(12)
    for trial in range(200):
        ids = [t.id for t in setup.tags][: 1 + trial % 2]
        cb = np.concatenate([setup.corners_body(i) for i in ids])
        x, y = rng.uniform(-1.5, 1.5, 2)
        depth, roll, pitch, yaw = rng.uniform(0.2, 1.8), *rng.normal(0, 0.05, 2), rng.uniform(-3, 3)
        R = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0],
                      [0, 0, 1]])
        world = np.array([x, y, cam.water_z + depth]) + cb @ R.T
        px = cam.project(world) + rng.normal(0, 0.3, (len(cb), 2))
        rays = cam.rays(cam.normalized(px))
        if trial % 25 == 0:
            rays[1] = [0.0, 0.0, -1.0]  # looking up: never reaches the water
        hits = cam.surface_hits(rays)
        cases = [(depth, roll, pitch)] + [
            tuple(v + s * h * (j == k) for j, v in enumerate((depth, roll, pitch)))
            for k, h in enumerate((1e-4, 1e-5, 1e-5)) for s in (1, -1)]
        together = meas._solve_many(rays, cb, cases, hits)
        for k, (case, got) in enumerate(zip(cases, together)):
            alone = meas._solve(rays, cb, *case, hits)
            assert _bits(got[:3]) == _bits(alone[:3]), (trial, k)
            if k == 0:
                x_, y_, yaw_, r, q, ok = got
                assert _bits(r) == _bits(alone[3]) and _bits(q) == _bits(alone[4])
                assert ok.tolist() == alone[5].tolist()
