"""Keyed noise depends only on (seed, component, index, channel)."""

import numpy as np

from moonpool.components import KeyedNoise


def test_same_key_same_draw_in_any_order():
    a = KeyedNoise(3, "imu")
    forward = [a.normal(k, "gyro", 3) for k in range(50)]
    b = KeyedNoise(3, "imu")
    backward = [b.normal(k, "gyro", 3) for k in reversed(range(50))][::-1]
    assert all(np.array_equal(x, y) for x, y in zip(forward, backward))


def test_batch_equals_one_by_one():
    n = KeyedNoise(9, "dvl")
    batch = n.normal_batch(range(10, 20), "beam", 4)
    single = np.stack([n.normal(k, "beam", 4) for k in range(10, 20)])
    assert np.array_equal(batch, single)


def test_keys_separate_streams():
    base = KeyedNoise(1, "a").normal(0, "x", 8)
    for other in (KeyedNoise(2, "a").normal(0, "x", 8), KeyedNoise(1, "b").normal(0, "x", 8),
                  KeyedNoise(1, "a").normal(1, "x", 8), KeyedNoise(1, "a").normal(0, "y", 8)):
        assert not np.array_equal(base, other)


def test_draws_are_standard_normal():
    n = KeyedNoise(5, "s")
    x = np.array([n.normal(k, "c") for k in range(20000)])
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    # consecutive samples are uncorrelated
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 0.03
