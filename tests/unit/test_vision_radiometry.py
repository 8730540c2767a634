"""Radiometry against closed forms: a flat Lambertian plane under one point light in
water of known c, b (direct + backscatter within 1 %), c = b = 0 equals the in-air
render, zero light is black."""

import numpy as np
import pytest
from scipy import integrate
from scipy.special import exp1

from moonpool.components.vision.geometry import (CameraModel, CameraMount, CameraPose,
                                                 cast_frame, world_rays)
from moonpool.components.vision.lights import SpotLight
from moonpool.components.vision.radiometry import RadiometryOptions, place_lights, radiance
from moonpool.components.vision.water import WaterOptics, water_type
from moonpool.components.world.rays import RayEngine

D = 3.0        # plane 3 m below the camera
RHO = np.array([0.6, 0.5, 0.4])
I0 = np.array([40.0, 50.0, 60.0])
S0 = 0.05


def _plane_frame(cam):
    v = np.array([[-50, -50, D], [50, -50, D], [50, 50, D], [-50, 50, D]], float)
    engine = RayEngine.from_mesh(v, np.array([[0, 1, 2], [0, 2, 3]]), 1, 1)
    pose = CameraPose.from_vehicle(CameraMount(), (0, 0, 0), (1, 0, 0, 0))
    return engine, pose, cast_frame(engine, cam, pose, 100.0)


@pytest.fixture(scope="module")
def cam():
    return CameraModel.from_fov(48, 36, 70.0)


def _render(cam, water, light, samples=8, ambient=(0.0, 0.0, 0.0)):
    engine, pose, frame = _plane_frame(cam)
    rays = world_rays(cam, pose)
    lights = place_lights([light], (0, 0, 0), np.eye(3))
    refl = np.where(frame.hit[..., None], RHO, 0.0)
    opts = RadiometryOptions(backscatter_samples=samples, backscatter_start_m=S0, backscatter_decimation=1,
                             surface_irradiance=ambient)
    return radiance(frame, rays, water, lights, refl, opts, engine), frame, rays


def test_plane_under_a_point_light_equals_the_closed_form(cam):
    water = WaterOptics("test", (0.05, 0.08, 0.2), (0.3, 0.25, 0.2), (0.0, 0.0, 0.0))
    light = SpotLight((0, 0, 0), (0, 0, 1), tuple(I0), 360.0, 0.0)  # isotropic, at the camera
    L, frame, rays = _render(cam, water, light)
    c = water.c
    cos_a = rays[:, 2]
    r = D / cos_a
    direct = RHO / np.pi * I0 * cos_a[:, None] / r[:, None] ** 2 * np.exp(-2 * np.outer(r, c))
    k = 2 * c
    integral = ((np.exp(-k * S0) / S0 - np.exp(-np.outer(r, k)) / r[:, None])
                - k * (exp1(k * S0) - exp1(np.outer(r, k))))
    back = water.beta(-1.0) * I0 * integral
    expected = direct + back
    rel = np.abs(L.reshape(-1, 3) - expected) / expected
    assert rel.max() < 0.01
    assert back.min() > 0.1 * direct.min()  # the backscatter is a real part of the sum


def test_offset_spot_light_backscatter_equals_quadrature(cam):
    water = WaterOptics("test", (0.1, 0.1, 0.1), (0.4, 0.4, 0.4), (0.0, 0.0, 0.0))
    light = SpotLight((0.5, 0.3, 0.0), (0.2, 0.0, 1.0), tuple(I0), 100.0, 1.0)
    L, frame, rays = _render(cam, water, light, samples=8)
    c = water.c[0]
    P = np.array(light.position_body_m)
    a = light.axis_body
    for i in (0, 200, 700, 1000, 1500):
        d = rays[i]
        r = D / d[2]
        X = r * d
        w = X - P
        dl = np.linalg.norm(w)
        wh = w / dl
        direct = RHO / np.pi * I0 * light.profile(wh @ a) * max(0.0, wh[2]) / dl**2 * np.exp(
            -c * dl) * np.exp(-c * r)

        def f(s):
            x = s * d
            ww = x - P
            l = np.linalg.norm(ww)
            return (water.beta(-(ww / l) @ d)[0] * light.profile((ww / l) @ a)
                    * np.exp(-c * (l + s)) / l**2)

        back = I0 * integrate.quad(f, S0, r, limit=400, epsabs=0, epsrel=1e-9)[0]
        expected = direct + back
        assert np.allclose(L.reshape(-1, 3)[i], expected, rtol=0.01), i


def test_no_water_equals_the_in_air_render(cam):
    light = SpotLight((0.2, 0.0, 0.0), (0, 0, 1), tuple(I0), 120.0, 2.0)
    L, frame, rays = _render(cam, water_type("none"), light)
    X = frame.point_ned.reshape(-1, 3)
    w = X - np.array(light.position_body_m)
    dl = np.linalg.norm(w, axis=1)
    wh = w / dl[:, None]
    air = RHO / np.pi * I0 * (light.profile(wh @ light.axis_body) * wh[:, 2] / dl**2)[:, None]
    assert np.allclose(L.reshape(-1, 3), air, rtol=1e-5, atol=0)  # float32 radiometry


def test_zero_light_is_black(cam):
    dark = SpotLight((0, 0, 0), (0, 0, 1), (0.0, 0.0, 0.0), 90.0, 1.0)
    L, _, _ = _render(cam, water_type("coastal_5"), dark)
    assert np.all(L == 0.0)


def test_ambient_light_vanishes_at_hadal_depth():
    w = water_type("jerlov_I")
    assert np.all(w.downwelling(10.0, (150, 150, 150)) > 1.0)
    # at 6,000 m: below 1e-40 of the surface value, nothing at any bit depth
    assert np.all(w.downwelling(6000.0, (150, 150, 150)) < 150 * 1e-40)


def test_unknown_water_type_says_did_you_mean():
    with pytest.raises(ValueError, match="did you mean .*'jerlov_IB'"):
        water_type("jerlov_Ib")


def test_shadows_of_a_box_on_the_plane():
    cam = CameraModel.from_fov(64, 48, 70.0)
    v = np.array([[-50, -50, D], [50, -50, D], [50, 50, D], [-50, 50, D]], float)
    import trimesh
    box = trimesh.creation.box(extents=(0.4, 0.4, 0.4))
    bv = np.asarray(box.vertices) + [0.0, 0.0, 2.0]
    verts = np.concatenate([v, bv])
    faces = np.concatenate([[[0, 1, 2], [0, 2, 3]], np.asarray(box.faces) + 4])
    labels = np.r_[1, 1, np.full(len(box.faces), 2)]
    engine = RayEngine.from_mesh(verts, faces, labels, labels)
    pose = CameraPose.from_vehicle(CameraMount(), (0, 0, 0), (1, 0, 0, 0))
    frame = cast_frame(engine, cam, pose, 100.0)
    rays = world_rays(cam, pose)
    light = SpotLight((0.0, 1.0, 0.0), (0, 0, 1), tuple(I0), 360.0, 0.0)
    lights = place_lights([light], (0, 0, 0), np.eye(3))
    refl = np.where(frame.hit[..., None], RHO, 0.0)
    out = {}
    for shadows in (False, True):
        opts = RadiometryOptions(backscatter_decimation=1, surface_irradiance=(0, 0, 0),
                                 shadows=shadows)
        out[shadows] = radiance(frame, rays, water_type("none"), lights, refl, opts, engine)
    plane = frame.label == 1
    dark = plane & (out[True][..., 1] == 0)
    assert not np.any(plane & (out[False][..., 1] == 0))
    assert dark.sum() > 10
    # independently: from the light, the box is met before each dark point, and not before lit ones
    X = frame.point_ned[plane]
    P = np.array([0.0, 1.0, 0.0])
    w = X - P
    dl = np.linalg.norm(w, axis=1)
    blocked = engine.cast(P, w, dl).distance_m < dl - 1e-6
    assert np.array_equal(blocked, dark[plane])


def test_marine_snow_is_keyed_and_only_adds_spots():
    from moonpool.components.sdk.noise import channel_key
    from moonpool.components.vision.render import DeepSeaRenderer, MarineSnow
    from moonpool.components.vision.sensor import frame_rng

    class _Scene:  # the two parts of a world Scene the renderer uses
        def __init__(self, engine):
            self._e = engine
            self.classes = {}

        def engine(self):
            return self._e

    cam = CameraModel.from_fov(64, 48, 70.0)
    engine, pose, frame = _plane_frame(cam)
    light = SpotLight((0, 0, 0), (0, 0, 1), tuple(I0), 120.0, 1.0)
    key = channel_key(1, "cam", "snow")
    imgs = []
    for count in (0, 40, 40):
        r = DeepSeaRenderer(_Scene(engine), cam, CameraMount(), water_type("jerlov_IB"), (light,),
                            snow=MarineSnow(count=count))
        imgs.append(r.render((0, 0, 0), (1, 0, 0, 0), None, frame_rng(key, 3)).radiance)
    assert np.array_equal(imgs[1], imgs[2])
    diff = imgs[1] - imgs[0]
    changed = np.any(np.abs(diff) > 0, axis=2)
    assert 0 < changed.sum() <= 40 * 7 * 7  # spots, not the whole image


def test_backscatter_upsampling_is_bilinear():
    from moonpool.components.vision.radiometry import _upsample

    rows, cols = np.arange(2, 48, 4), np.arange(2, 64, 4)
    B = np.random.default_rng(0).random((len(rows), len(cols), 3)).astype(np.float32)
    U = _upsample(B, rows, cols, 48, 64)
    fy = np.interp(np.arange(48), rows, np.arange(len(rows)))
    fx = np.interp(np.arange(64), cols, np.arange(len(cols)))
    i = np.minimum(fy.astype(int), len(rows) - 2)[:, None]
    j = np.minimum(fx.astype(int), len(cols) - 2)[None, :]
    ty, tx = (fy[:, None] - i)[..., None], (fx[None, :] - j)[..., None]
    ref = (B[i, j] * (1 - ty) * (1 - tx) + B[i + 1, j] * ty * (1 - tx)
           + B[i, j + 1] * (1 - ty) * tx + B[i + 1, j + 1] * ty * tx)
    assert np.abs(U - ref).max() < 1e-6
