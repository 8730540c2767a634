"""Side-scan sonar (components/sensors/side_scan.py) through the real ray engine:
symmetric lines over a flat seabed, the dark water column, a target's return and its
acoustic shadow, keyed speckle, the component on a scene file."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acoustic_scenes import flat_engine, state, write_flat_scene

from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.side_scan import SideScanModel, SideScanParams, SideScanSensor
from moonpool.components.world.scene import Scene
from moonpool.v1 import acoustics_pb2, common_pb2, lifecycle_pb2 as lc

LEVEL = np.array([1.0, 0.0, 0.0, 0.0])


def test_flat_seabed_lines_are_symmetric_and_start_at_the_steepest_ray():
    p = SideScanParams(speckle=False, range_bins=490, range_max_m=49.5, footprint_spreading=False)
    ping = SideScanModel(p, flat_engine(90.0)).measure([0.0, 0.0, 80.0], LEVEL)
    port, stbd = ping.true_intensity[:, 0], ping.true_intensity[:, 1]
    np.testing.assert_allclose(port, stbd, rtol=1e-12, atol=0)
    on = np.nonzero(stbd)[0]
    dr = p.range_resolution_m
    steepest = math.radians(20.0 + 25.0)
    assert on.min() == int((10.0 / math.sin(steepest) - 0.5) / dr)  # before: the water column
    # the farthest ray inside 49.5 m: r = h / (cos δ sin θ) over the sampled rays
    theta = np.radians(np.linspace(-5.0, 45.0, p.depression_rays))
    delta = np.radians(((np.arange(3) + 0.5) / 3 - 0.5) * 1.0)
    with np.errstate(divide="ignore"):
        r = 10.0 / (np.cos(delta)[:, None] * np.sin(theta)[None, :])
    r_far = r[(r > 0) & (r <= 49.5)].max()
    assert on.max() == int((r_far - 0.5) / dr)
    assert set(ping.true_label[on, 1]) == {3}


def test_a_boulder_returns_and_casts_a_shadow(tmp_path):
    path = write_flat_scene(tmp_path, depth_m=90.0, boulder=(0.0, 20.0, 88.5, 1.5))
    scene = Scene.load(path)
    p = SideScanParams(speckle=False, depression_rays=400, along_track_rays=1,
                       range_bins=500, range_max_m=50.5, footprint_spreading=False)
    ping = SideScanModel(p, scene.engine(), {c: s.backscatter_db for c, s in scene.classes.items()}
                         ).measure([0.0, 0.0, 80.0], LEVEL)
    dr = p.range_resolution_m
    r_bins = p.range_min_m + (np.arange(p.range_bins) + 0.5) * dr
    port, stbd = ping.true_intensity[:, 0], ping.true_intensity[:, 1]
    rock = np.nonzero(ping.true_label[:, 1] == 2)[0]
    assert rock.size and not np.any(ping.true_label[:, 0] == 2)  # starboard only
    dist = math.hypot(20.0, 8.5)
    assert r_bins[rock.min()] == pytest.approx(dist - 1.5, abs=dr)  # its nearest point
    # the upper tangent from the transducer over the boulder meets the floor at r_end
    theta_t = math.atan2(8.5, 20.0) - math.asin(1.5 / dist)
    r_end = 10.0 / math.sin(theta_t)
    r_contact = math.hypot(20.0, 10.0)  # where the boulder touches the floor
    shadow = (r_bins > r_contact + dr) & (r_bins < r_end - 2 * dr)
    assert shadow.sum() > 50
    assert np.all(stbd[shadow] == 0) and np.mean(port[shadow] > 0) > 0.7  # port: rays sparse
    spread = SideScanModel(SideScanParams(speckle=False, depression_rays=400, along_track_rays=1,
                                          range_bins=500, range_max_m=50.5), scene.engine(),
                           {}).measure([0.0, 0.0, 80.0], LEVEL).true_intensity
    inner = (r_bins > r_contact + 0.5) & (r_bins < r_end - 0.5)  # footprints: 0.3 m here
    assert np.all(spread[inner, 1] == 0) and np.all(spread[shadow, 0] > 0)
    after = (r_bins > r_end + 0.5) & (r_bins < r_end + 3.0)
    assert np.all(spread[after, 1] > 0)  # the floor again behind the shadow


def test_speckle_keyed_and_the_component_matches_the_model(tmp_path):
    path = write_flat_scene(tmp_path, depth_m=60.0, boulder=(0.0, -12.0, 58.0, 2.0))
    params = dict(scene=str(path), range_bins=100, depression_rays=32)
    host = ComponentHost(SideScanSensor())
    host.configure(lc.Configure(instance_name="sss", seed=6, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    scene = Scene.load(path)
    model = SideScanModel(SideScanParams(range_bins=100, depression_rays=32), scene.engine(),
                          {c: s.backscatter_db for c, s in scene.classes.items()}, seed=6,
                          name="sss")
    lines = []
    for k in range(3):
        (out,) = host.step(k * 10**8, 10**8, {"state": state((0.0, 0.0, 50.0))})
        ref = model.measure([0.0, 0.0, 50.0], LEVEL, k).fill(
            acoustics_pb2.SideScan(header=out.message.header))
        assert out.message.SerializeToString(deterministic=True) == ref.SerializeToString(
            deterministic=True)
        lines.append(np.array(out.message.port_intensity))
    assert 2 in set(out.message.true_port_label)  # the boulder lies to port
    assert not np.array_equal(lines[0], lines[1])  # fresh speckle every ping
    above = SideScanModel(SideScanParams(), flat_engine(60.0)).measure([0, 0, -1.0], LEVEL)
    assert above.reason == common_pb2.REFUSAL_REASON_ABOVE_SURFACE
