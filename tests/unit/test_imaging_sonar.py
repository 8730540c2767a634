"""Forward-looking imaging sonar (components/sensors/imaging_sonar.py) through the real
ray engine: geometry of the returns, the echo formula of a single ray, time-varied gain,
speckle statistics, per-cell truth labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import flat_engine, sphere_engine, state, write_flat_scene

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.common import Mount
from moonpool.components.sensors.imaging_sonar import (ImagingSonarModel, ImagingSonarParams,
                                                       ImagingSonarSensor)
from moonpool.components.world.scene import Scene
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

LEVEL = np.array([1.0, 0.0, 0.0, 0.0])


def test_a_sphere_ahead_appears_at_its_range_and_bearing_with_its_label():
    p = ImagingSonarParams(speckle=False, range_min_m=0.5, range_max_m=40.0, range_bins=256,
                           footprint_spreading=False)
    m = ImagingSonarModel(p, sphere_engine((20.0, 0.0, 10.0), 1.0), {5: -10.0})
    im = m.measure([0.0, 0.0, 10.0], LEVEL)
    rows, cols = np.nonzero(im.true_intensity)
    dr = p.range_resolution_m
    assert rows.min() == int((19.0 - 0.5) / dr)  # the nearest point, 20 - 1 m
    assert rows.max() <= int((20.0 - 0.5) / dr)  # nothing beyond the silhouette's edge
    bearing = p.bearings_rad[cols]
    assert np.all(np.abs(bearing) <= math.asin(1.0 / 20.0) + p.beam_spacing_rad)
    np.testing.assert_array_equal(im.true_label != 0, im.true_intensity > 0)
    assert set(im.true_label[im.true_label != 0]) == {5}
    assert np.array_equal(im.intensity, im.true_intensity)  # no speckle, no noise


@pytest.mark.parametrize("tvg, alpha, alpha_tvg", [(20.0, 0.0, 0.0), (30.0, 0.0, 0.0),
                                                   (20.0, 0.1, 0.0), (20.0, 0.1, 0.1)])
def test_single_ray_echo_formula_and_time_varied_gain(tvg, alpha, alpha_tvg):
    tilt, h = math.radians(30.0), 10.0
    p = ImagingSonarParams(beam_count=1, fov_azimuth_deg=2.0, azimuth_rays=1, elevation_rays=1,
                           aperture_elevation_deg=10.0, speckle=False, source_level=2.0,
                           tvg_db_per_decade=tvg, absorption_db_per_m=alpha,
                           tvg_absorption_db_per_m=alpha_tvg, default_backscatter_db=-20.0,
                           footprint_spreading=False)
    mount = Mount((0.0, 0.0, 0.0), (0.0, -tilt, 0.0))  # pitched down by 30 deg: x looks down
    m = ImagingSonarModel(p, flat_engine(50.0 + h), {}, mount)
    im = m.measure([0.0, 0.0, 50.0], LEVEL)
    r = h / math.sin(tilt)
    row = int((r - 0.5) / p.range_resolution_m)
    omega = math.radians(2.0) * math.radians(10.0)  # Δψ Δε cos 0
    ref = 2.0 * 10 ** (-2.0) * math.sin(tilt) * omega * r ** ((tvg - 20) / 10) * 10 ** (
        -2 * (alpha - alpha_tvg) * r / 10)
    assert np.count_nonzero(im.intensity) == 1
    assert im.intensity[row, 0] == pytest.approx(ref, rel=1e-12)
    assert im.true_label[row, 0] == 3  # the test plane's class id


def test_flat_floor_returns_span_the_elevation_aperture():
    tilt, h, beta = math.radians(25.0), 8.0, math.radians(20.0)
    p = ImagingSonarParams(beam_count=9, azimuth_rays=1, speckle=False, elevation_rays=41,
                           range_max_m=60.0, range_bins=600, footprint_spreading=False)
    m = ImagingSonarModel(p, flat_engine(58.0), {}, Mount((0, 0, 0), (0.0, -tilt, 0.0)))
    im = m.measure([0.0, 0.0, 50.0], LEVEL)
    rows = np.nonzero(im.true_intensity[:, 4])[0]
    dr = p.range_resolution_m
    # the centre beam (bearing 0): the steepest ray (tilt + β/2) nearest, the shallowest farthest
    assert rows.min() == int((h / math.sin(tilt + beta / 2) - 0.5) / dr)
    assert rows.max() == int((h / math.sin(tilt - beta / 2) - 0.5) / dr)


def test_footprint_spreading_conserves_the_echo_and_fills_the_far_bins():
    base = dict(beam_count=9, azimuth_rays=1, speckle=False, elevation_rays=12,
                range_max_m=150.0, range_bins=1500)  # every footprint inside the window
    mount = Mount((0, 0, 0), (0.0, -math.radians(25.0), 0.0))
    point = ImagingSonarModel(ImagingSonarParams(**base, footprint_spreading=False),
                              flat_engine(58.0), {}, mount).measure([0.0, 0.0, 50.0], LEVEL)
    spread = ImagingSonarModel(ImagingSonarParams(**base), flat_engine(58.0), {},
                               mount).measure([0.0, 0.0, 50.0], LEVEL)
    np.testing.assert_allclose(spread.true_intensity.sum(axis=0),
                               point.true_intensity.sum(axis=0), rtol=1e-12)
    rows_point = np.nonzero(point.true_intensity[:, 4])[0]
    rows = np.nonzero(spread.true_intensity[:, 4])[0]
    assert len(rows_point) == 12  # one bin per ray: gaps between them
    assert np.all(np.diff(rows) == 1)  # contiguous from the nearest to the farthest
    assert rows.min() <= rows_point.min() and rows.max() >= rows_point.max()


def test_speckle_is_exponential_keyed_and_the_noise_floor_adds():
    p = ImagingSonarParams(beam_count=6, fov_azimuth_deg=30.0, range_bins=32, range_max_m=20.0,
                           elevation_rays=8, azimuth_rays=1, noise_floor=0.0)
    m = ImagingSonarModel(p, flat_engine(58.0), {}, Mount((0, 0, 0), (0.0, -0.5, 0.0)),
                          seed=3, name="fls")
    pings = [m.measure([0.0, 0.0, 50.0], LEVEL, k) for k in range(400)]
    on = pings[0].true_intensity > 0
    ratio = np.array([pg.intensity[on] / pg.true_intensity[on] for pg in pings]).ravel()
    assert ratio.size > 5000
    assert abs(ratio.mean() - 1) < 0.03 and abs(ratio.var() - 1) < 0.08  # exponential(1)
    assert np.all(pings[0].intensity[~on] == 0)
    again = m.measure([0.0, 0.0, 50.0], LEVEL, 17)
    assert np.array_equal(again.intensity, pings[17].intensity)
    assert not np.array_equal(pings[1].intensity, pings[2].intensity)
    noisy = ImagingSonarModel(ImagingSonarParams(beam_count=6, range_bins=32, noise_floor=1e-3,
                                                 speckle=False), flat_engine(500.0), {},
                              seed=3, name="fls")
    img = np.array([noisy.measure([0.0, 0.0, 50.0], LEVEL, k).intensity for k in range(50)])
    assert img.mean() == pytest.approx(1e-3, rel=0.03)  # nothing in view: only the floor


def test_component_on_a_scene_uses_the_class_backscatter(tmp_path):
    path = write_flat_scene(tmp_path, depth_m=60.0, boulder=(15.0, 0.0, 57.0, 2.0))
    params = dict(scene=str(path), beam_count=16, range_bins=64, elevation_rays=8,
                  mount_rpy_rad=(0.0, -0.3, 0.0))
    host = ComponentHost(ImagingSonarSensor())
    host.configure(lc.Configure(instance_name="fls", seed=2, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    out, image = host.step(0, 10**8, {"state": state((0.0, 0.0, 52.0))})
    msg = out.message
    assert msg.validity.valid and msg.n_ranges == 64 and len(msg.intensity) == 64 * 16
    scene = Scene.load(path)
    model = ImagingSonarModel(ImagingSonarParams(beam_count=16, range_bins=64, elevation_rays=8),
                              scene.engine(), {c: s.backscatter_db for c, s in scene.classes.items()},
                              Mount((0, 0, 0), (0.0, -0.3, 0.0)), 2, "fls")
    ref = model.measure([0.0, 0.0, 52.0], LEVEL, 0).fill(
        acoustics_pb2.ImagingSonar(header=msg.header))
    assert msg.SerializeToString(deterministic=True) == ref.SerializeToString(deterministic=True)
    assert set(msg.true_label) == {0, 1, 2}
    # The same ping as a mono8 image with the pixels attached: beams across, far range on top.
    assert image.port == "image" and image.type_name == "moonpool.v1.ImageHeader"
    hdr = image.message
    assert (hdr.width, hdr.height, hdr.encoding, hdr.step_bytes) == (16, 64, "mono8", 16)
    assert hdr.header.sim_time_ns == msg.header.sim_time_ns and hdr.header.frame_id == "fls"
    pixels = np.frombuffer(bytes(image.attachment), dtype=np.uint8).reshape(64, 16)
    inten = np.asarray(msg.intensity, dtype=float).reshape(64, 16)
    row, col = np.unravel_index(np.argmax(inten), inten.shape)
    assert pixels[63 - row, col] == 255
    db = 10 * np.log10(np.where(inten > 0, inten, np.nan) / inten.max())
    want = np.clip(np.rint(255 * (np.nan_to_num(db, nan=-1e9) + 60) / 60), 0, 255)
    np.testing.assert_array_equal(pixels[::-1], want)
    above = ImagingSonarModel(ImagingSonarParams(), flat_engine(60.0)).measure([0, 0, -1.0], LEVEL)
    assert above.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE


# -- acceptance on a known target (issue: "imaging sonar on a known target")

TARGET = dict(ground_range=12.0, bearing_deg=10.0, radius=0.5, floor=20.0, sonar_depth=15.0)


def _target_scene(tmp_path, with_target=True):
    t = TARGET
    b = math.radians(t["bearing_deg"])
    boulder = ((t["ground_range"] * math.cos(b), t["ground_range"] * math.sin(b),
                t["floor"] - t["radius"], t["radius"]) if with_target else None)
    folder = tmp_path / ("target" if with_target else "bare")
    folder.mkdir()
    return Scene.load(write_flat_scene(folder, depth_m=t["floor"], boulder=boulder, size_m=80.0))


def _sonar(scene, **kw):
    p = ImagingSonarParams(speckle=False, **kw)
    mount = Mount((0.0, 0.0, 0.0), (0.0, -math.radians(20.0), 0.0))  # pitched 20 deg down
    bs = {c: s.backscatter_db for c, s in scene.classes.items()}
    return ImagingSonarModel(p, scene.engine(), bs, mount), p, mount


def test_strongest_return_is_at_the_targets_range_and_bearing_with_a_shadow_behind(tmp_path):
    t = TARGET
    scene, bare = _target_scene(tmp_path), _target_scene(tmp_path, with_target=False)
    m, p, mount = _sonar(scene)
    p_s = np.array([0.0, 0.0, t["sonar_depth"]])
    im = m.measure(p_s, LEVEL)
    b = math.radians(t["bearing_deg"])
    c = np.array([t["ground_range"] * math.cos(b), t["ground_range"] * math.sin(b),
                  t["floor"] - t["radius"]])
    v_s = mount.R_bs.T @ (c - p_s)  # the sphere's centre in the sensor frame (level vehicle)
    true_range = float(np.linalg.norm(c - p_s)) - t["radius"]  # its nearest point
    true_bearing = math.atan2(v_s[1], v_s[0])
    row, col = np.unravel_index(np.argmax(im.true_intensity), im.true_intensity.shape)
    true_row = (true_range - p.range_min_m) / p.range_resolution_m - 0.5  # in bin-centre units
    true_col = (true_bearing - p.bearings_rad[0]) / p.beam_spacing_rad
    assert abs(row - true_row) <= 1.0 and abs(col - true_col) <= 1.0, (row, true_row, col, true_col)
    assert im.true_label[row, col] == scene.class_id("rock")
    # Shadow: in the target's beam, the floor from just behind the sphere to where the ray
    # over its top comes down (ground range x·h/(h - 2R)) is dark; without the target it
    # is lit.
    h = t["floor"] - t["sonar_depth"]
    g0, g1 = t["ground_range"] + 2 * t["radius"], t["ground_range"] * h / (h - 2 * t["radius"])
    r0, r1 = math.hypot(g0, h), math.hypot(g1 - 0.5, h)
    ranges = p.range_min_m + (np.arange(p.range_bins) + 0.5) * p.range_resolution_m
    band = (ranges > r0) & (ranges < r1)
    beam = int(round(true_col))
    lit = m.__class__(p, bare.engine(), m.backscatter_db, mount).measure(p_s, LEVEL).true_intensity
    assert band.sum() >= 8 and np.all(lit[band, beam] > 0)
    shadowed = im.true_intensity[band, beam].sum() / lit[band, beam].sum()
    assert shadowed < 0.02, shadowed
    # ... and the floor's echo in front of the target and beyond the shadow is untouched.
    assert np.allclose(im.true_intensity[ranges < true_range - 1.0, beam],
                       lit[ranges < true_range - 1.0, beam], rtol=1e-9)


@pytest.mark.parametrize("spreading", [False, True])
def test_truth_labels_are_the_primary_contributors_class_in_every_cell(tmp_path, spreading):
    """The label of each cell is the class of its strongest single contribution, recomputed
    here ray by ray from the engine's hits (100 % of the cells with a contributor)."""
    scene = _target_scene(tmp_path)
    m, p, mount = _sonar(scene, footprint_spreading=spreading)
    p_s = np.array([0.0, 0.0, TARGET["sonar_depth"]])
    im = m.measure(p_s, LEVEL)
    dirs = m.rays @ mount.R_bs.T
    hits = scene.engine().cast(p_s, dirs, p.range_max_m)
    r = hits.distance_m
    ok = np.isfinite(r) & (r >= p.range_min_m)
    cos_g = np.clip(-np.sum(hits.normal_ned * dirs, axis=1), 0.0, 1.0)
    bs = np.array([m.backscatter_db.get(int(c), p.default_backscatter_db) for c in hits.label])
    energy = np.where(ok, m.ray_gain * 10 ** (bs / 10) * cos_g, 0.0)  # TVG 20, no absorption
    expected = np.zeros(im.true_label.shape, dtype=np.int64)
    best = np.zeros(im.true_label.shape)
    for i in np.flatnonzero(ok):
        if spreading:  # the ray's echo spread over r ± r Δε tan γ / 2
            tan_g = min(math.sqrt(max(1 - cos_g[i] ** 2, 0.0)) / max(cos_g[i], 1e-300),
                        math.tan(math.radians(89.0)))
            w = r[i] * m.spread_rad * tan_g
            lo, hi = r[i] - w / 2, r[i] + w / 2
        else:
            lo = hi = r[i]
            w = 0.0
        for b in range(int((lo - p.range_min_m) // p.range_resolution_m),
                       int((hi - p.range_min_m) // p.range_resolution_m) + 1):
            if not 0 <= b < p.range_bins:
                continue
            e0 = p.range_min_m + b * p.range_resolution_m
            frac = 1.0 if w == 0 else max(min(hi, e0 + p.range_resolution_m) - max(lo, e0), 0) / w
            part = energy[i] * frac
            j = m.beam_of_ray[i]
            if part > best[b, j]:
                best[b, j], expected[b, j] = part, hits.label[i]
    has = best > 0
    assert has.sum() > 500
    np.testing.assert_array_equal(im.true_label[has], expected[has])  # 100 % of them
    assert np.all(im.true_label[~has] == 0)
    assert {0, 1, 2} == set(np.unique(im.true_label))
