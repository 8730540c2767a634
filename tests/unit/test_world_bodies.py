"""A sensor on vehicle A sees vehicle B (docs/sensors.md, "Other vehicles"): the
multibeam and the altimeter, given a ``bodies`` table, take B's VehicleState on an
input ``body_NAME`` and cast against ``Scene.with_bodies``; passing over B, the centre
beams range to B's top and report its label and instance; before B's state arrives and
once A has passed it they see the floor."""

from __future__ import annotations

import pytest
from acoustic_scenes import state, write_flat_scene

from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.sensors.altimeter import AltimeterSensor
from moonpool.components.sensors.multibeam import MultibeamSensor
from moonpool.v1 import lifecycle_pb2 as lc

FLOOR, A_DEPTH, B_DEPTH = 60.0, 40.0, 50.0
BOX = {"shape": "box", "size_m": [3.0, 1.0, 1.0], "label": 9, "instance": 77}


def _host(cls, scene, **extra):
    params = dict(scene=str(scene), bodies={"rov2": BOX}, **extra)
    host = ComponentHost(cls())
    host.configure(lc.Configure(instance_name="s", seed=1, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    return host


def test_multibeam_passing_over_a_second_vehicle_sees_its_top(tmp_path):
    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    host = _host(MultibeamSensor, scene, beam_count=33, swath_deg=120.0, range_noise_m=0.0,
                 range_noise_per_m=0.0, sound_speed_mps=1500.0, nominal_sound_speed_mps=1500.0)
    assert [p.name for p in MultibeamSensor.ports_for(
        MultibeamSensor.Parameters(scene=scene, bodies={"rov2": BOX}))[0]] == ["state", "body_rov2"]
    b = state((0.0, 0.0, B_DEPTH))
    centre = []
    for k, north in enumerate([-10.0, -0.5, 0.0, 0.5, 10.0]):
        inputs = {"state": state((north, 0.0, A_DEPTH))}
        if k > 0:  # B's state arrives from the second ping on
            inputs["body_rov2"] = b
        (out,) = host.step(k * 10**8, 10**8, inputs)
        centre.append(out.message.beams[16])
    top = B_DEPTH - 0.5 - A_DEPTH  # B's top 9.5 m below A
    for beam in centre[1:4]:  # over B (its 3 m length covers north -1.5 .. 1.5)
        assert beam.true_range_m == pytest.approx(top, abs=1e-6)
        assert beam.range_m == pytest.approx(top, abs=1e-6)
        assert (beam.true_label, beam.true_instance) == (9, 77)
    for beam in (centre[0], centre[4]):  # no state yet; then past it: the floor
        assert beam.true_range_m == pytest.approx(FLOOR - A_DEPTH, abs=1e-6)
        assert beam.true_label == 1
    # The beams that miss B's 1 m width still see the floor beside it.
    outer = out.message.beams[0]
    assert outer.true_label == 1


def test_altimeter_over_a_rotated_second_vehicle(tmp_path):
    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    host = _host(AltimeterSensor, scene, beam_width_deg=0.0, range_noise_m=0.0,
                 range_noise_per_m=0.0, nominal_sound_speed_mps=0.0 + 1500.0)
    # B yawed 90 deg: its 3 m long axis now points east; A 1.2 m east of B's centre is over it.
    b = state((0.0, 0.0, B_DEPTH), rpy=(0.0, 0.0, 1.5707963267948966))
    (out,) = host.step(0, 10**8, {"state": state((0.0, 1.2, A_DEPTH)), "body_rov2": b})
    msg = out.message
    assert msg.true_range_m == pytest.approx(B_DEPTH - 0.5 - A_DEPTH, abs=1e-6)
    assert (msg.true_label, msg.true_instance) == (9, 77)
    (out,) = host.step(10**8, 10**8, {"state": state((1.2, 0.0, A_DEPTH)), "body_rov2": b})
    assert out.message.true_label == 1  # north of B's 1 m width: the floor


def test_bodies_need_a_scene_and_a_good_table(tmp_path):
    with pytest.raises(ParameterError, match="casts against `bodies`"):
        MultibeamSensor.Parameters(bodies={"rov2": BOX})
    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    with pytest.raises(ParameterError) as info:
        AltimeterSensor.Parameters(scene=scene, bodies={"rov2": {"shape": "cone"},
                                                        "b": {"shape": "box", "size_m": [1, 2],
                                                              "colour": 1}})
    msg = info.value.message
    assert msg.startswith("3 problems"), msg
    assert "bodies.rov2: shape must be one of box, sphere, cylinder" in msg
    assert "bodies.b: unknown key(s) ['colour']" in msg and "bodies.b: size_m must be" in msg


def test_the_sonars_see_a_second_vehicle_too(tmp_path):
    from moonpool.components.sensors.imaging_sonar import ImagingSonarSensor
    from moonpool.components.sensors.side_scan import SideScanSensor

    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    cases = [  # B 8 m ahead of a forward sonar pitched 20 deg down; 8 m to starboard
        (ImagingSonarSensor, dict(mount_rpy_rad=[0.0, -0.35, 0.0]), (8.0, 0.0, A_DEPTH + 3.0),
         lambda m: set(m.true_label)),
        (SideScanSensor, {}, (0.0, 8.0, A_DEPTH + 6.0),
         lambda m: set(m.true_starboard_label)),
    ]
    for cls, extra, where, labels in cases:
        params = cls.Parameters(scene=scene, bodies={"rov2": BOX})
        assert [p.name for p in cls.ports_for(params)[0]] == ["state", "body_rov2"]
        host = _host(cls, scene, **extra)
        a = state((0.0, 0.0, A_DEPTH))
        alone = host.step(0, 10**8, {"state": a})[0].message
        seen = host.step(10**8, 10**8, {"state": a, "body_rov2": state(where)})[0].message
        assert 9 not in labels(alone) and 9 in labels(seen), cls.__name__


def test_dvl_beams_range_to_a_second_vehicle_under_it(tmp_path):
    from moonpool.components.sensors.dvl import DvlSensor

    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    raft = {"shape": "box", "size_m": [12.0, 12.0, 1.0]}  # wide enough for all four beams
    params = dict(scene=str(scene), bodies={"raft": raft}, range_noise_m=0.0,
                  bias_walk_mps_per_sqrt_s=0.0, noise_k=0.0, noise_c_mps=0.0)
    assert [p.name for p in DvlSensor.ports_for(DvlSensor.Parameters(
        scene=scene, bodies={"raft": raft}))[0]] == ["state", "body_raft"]
    host = ComponentHost(DvlSensor())
    host.configure(lc.Configure(instance_name="dvl", seed=1, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    a = state((0.0, 0.0, A_DEPTH))
    (out,) = host.step(0, 10**8, {"state": a})  # the raft's state has not arrived: the floor
    assert out.message.true_altitude_m == pytest.approx(FLOOR - A_DEPTH, abs=1e-6)
    (out,) = host.step(10**8, 10**8, {"state": a, "body_raft": state((0.0, 0.0, B_DEPTH))})
    assert out.message.true_altitude_m == pytest.approx(B_DEPTH - 0.5 - A_DEPTH, abs=1e-6)
    assert out.message.altitude_m == pytest.approx(B_DEPTH - 0.5 - A_DEPTH, abs=1e-6)
    with pytest.raises(ParameterError, match="casts against `bodies`"):
        DvlSensor.Parameters(bodies={"raft": raft})


def test_a_body_given_as_a_mesh_file_is_seen_like_the_same_primitive(tmp_path):
    import trimesh

    scene = write_flat_scene(tmp_path, depth_m=FLOOR)
    # The same 3 x 1 x 1 m box as BOX, as an STL beside the scene file, in decimetres.
    trimesh.creation.box(extents=[30.0, 10.0, 10.0]).export(tmp_path / "rov2.stl")
    mesh = {"shape": "mesh", "file": "rov2.stl", "scale": 0.1, "label": 9, "instance": 77}
    params = dict(scene=str(scene), bodies={"rov2": mesh}, beam_width_deg=0.0,
                  range_noise_m=0.0, range_noise_per_m=0.0)
    host = ComponentHost(AltimeterSensor())
    host.configure(lc.Configure(instance_name="s", seed=1, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in params.items()]))
    host.initialize(0)
    b = state((0.0, 0.0, B_DEPTH))
    (out,) = host.step(0, 10**8, {"state": state((1.2, 0.0, A_DEPTH)), "body_rov2": b})
    assert out.message.true_range_m == pytest.approx(B_DEPTH - 0.5 - A_DEPTH, abs=1e-6)
    assert (out.message.true_label, out.message.true_instance) == (9, 77)
    # A missing file and a bad scale are named by check, with where the file is looked for.
    with pytest.raises(ParameterError) as info:
        AltimeterSensor.Parameters(scene=scene, bodies={
            "a": {"shape": "mesh", "file": "nope.stl"},
            "b": {"shape": "mesh", "file": "rov2.stl", "scale": -1}})
    text = str(info.value)
    assert "bodies.a: mesh file" in text and "not found" in text and "scene file's folder" in text
    assert "bodies.b: scale must be a number > 0" in text
