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
    (out,) = host.step(0, 10**8, {"state": state((0.0, 0.0, 52.0))})
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
    above = ImagingSonarModel(ImagingSonarParams(), flat_engine(60.0)).measure([0, 0, -1.0], LEVEL)
    assert above.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE
