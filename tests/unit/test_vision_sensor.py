"""The sensor: zero light is black plus noise; bit depths; Bayer; vignetting; keyed noise."""

import numpy as np

from moonpool.components.sdk.noise import channel_key
from moonpool.components.vision.geometry import CameraModel
from moonpool.components.vision.sensor import SensorOptions, bayer_rggb, expose, frame_rng

CAM = CameraModel.from_fov(64, 48, 70.0)


def test_zero_light_is_black_plus_read_noise():
    s = SensorOptions(bit_depth=16, read_noise_e=20.0, gain=1.0)
    dn = expose(np.zeros((48, 64, 3)), CAM.rays_cam, s, frame_rng(channel_key(1, "cam", "image"), 0))
    assert expose(np.zeros((48, 64, 3)), CAM.rays_cam, s, None).max() == 0
    e = dn.astype(float) * s.full_well_e / s.max_dn
    # clipped at 0: the positive half of N(0, 20 e-): mean 20 sqrt(2/pi)/2 ~ 8 e-
    assert 4.0 < e.mean() < 12.0
    assert dn.max() < 6 * 20 * s.max_dn / s.full_well_e


def test_bit_depths_and_bayer():
    L = np.full((48, 64, 3), 0.1)
    for bits, dtype in ((8, np.uint8), (12, np.uint16), (16, np.uint16)):
        s = SensorOptions(bit_depth=bits, vignetting_exponent=0.0)
        dn = expose(L, CAM.rays_cam, s, None)
        assert dn.dtype == dtype and dn.max() <= (1 << bits) - 1
        expected = 0.1 * s.exposure_s * s.sensitivity * s.max_dn / s.full_well_e
        assert abs(int(dn[0, 0, 0]) - expected) <= 0.5 + 1e-9
    rgb = np.arange(4 * 4 * 3).reshape(4, 4, 3)
    m = bayer_rggb(rgb)
    assert m[0, 0] == rgb[0, 0, 0] and m[0, 1] == rgb[0, 1, 1] and m[1, 1] == rgb[1, 1, 2]
    s = SensorOptions(bayer=True)
    assert expose(L, CAM.rays_cam, s, None).shape == (48, 64) and s.encoding == "bayer_rggb8"


def test_vignetting_is_cos4():
    s = SensorOptions(bit_depth=16)
    dn = expose(np.full((48, 64, 3), 0.1), CAM.rays_cam, s, None).astype(float)
    cos = CAM.rays_cam[..., 2]
    ratio = dn[0, 0, 1] / dn[24, 32, 1]
    assert abs(ratio - cos[0, 0] ** 4 / cos[24, 32] ** 4) < 2e-3


def test_noise_is_keyed_by_frame():
    s = SensorOptions()
    L = np.full((48, 64, 3), 0.1)
    key = channel_key(3, "cam", "image")
    a = expose(L, CAM.rays_cam, s, frame_rng(key, 5))
    b = expose(L, CAM.rays_cam, s, frame_rng(key, 5))
    c = expose(L, CAM.rays_cam, s, frame_rng(key, 6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
