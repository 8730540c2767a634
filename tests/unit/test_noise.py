"""Keyed noise depends only on (seed, component, channel, index), follows the
documented algorithm (checked against an independent Philox-4x64-10 written here),
and is standard normal."""

import hashlib
import math

import numpy as np
import pytest

from moonpool.components import KeyedNoise

M = 2**64
MUL = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
WEYL = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)


def philox4x64(counter, key, rounds=10):
    """Philox-4x64-10 (Salmon et al. 2011), written from the paper, in plain ints."""
    c = list(counter)
    k = list(key)
    for r in range(rounds):
        p0, p1 = MUL[0] * c[0], MUL[1] * c[2]
        hi0, lo0, hi1, lo1 = p0 >> 64, p0 % M, p1 >> 64, p1 % M
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
        if r < rounds - 1:
            k = [(k[0] + WEYL[0]) % M, (k[1] + WEYL[1]) % M]
    return c


def documented_normals(seed, component, channel, index):
    h = hashlib.sha256(f"{seed}\0{component}\0{channel}".encode()).digest()
    key = (int.from_bytes(h[0:8], "little"), int.from_bytes(h[8:16], "little"))
    w = philox4x64((index, 0, 0, 0), key)
    u = [((x >> 11) + 1) * 2.0**-53 for x in w]
    r0, r1 = math.sqrt(-2 * math.log(u[0])), math.sqrt(-2 * math.log(u[2]))
    return [r0 * math.cos(2 * math.pi * u[1]), r0 * math.sin(2 * math.pi * u[1]),
            r1 * math.cos(2 * math.pi * u[3]), r1 * math.sin(2 * math.pi * u[3])]


@pytest.mark.parametrize("index", [0, 1, 2, 12345, 2**40 + 7])
def test_matches_the_documented_algorithm(index):
    got = KeyedNoise(7, "imu").normal(index, "gyro", 4)
    want = documented_normals(7, "imu", "gyro", index)
    assert np.allclose(got, want, rtol=0, atol=1e-12)


def test_same_key_same_draw_in_any_order():
    a = KeyedNoise(3, "imu")
    forward = [a.normal(k, "gyro", 3) for k in range(50)]
    b = KeyedNoise(3, "imu")
    backward = [b.normal(k, "gyro", 3) for k in reversed(range(50))][::-1]
    assert all(np.array_equal(x, y) for x, y in zip(forward, backward))


def test_range_equals_one_by_one():
    n = KeyedNoise(9, "dvl")
    block = n.normal_range(10, 20, "beam", 4)
    single = np.stack([n.normal(k, "beam", 4) for k in range(10, 30)])
    assert np.array_equal(block, single)
    assert np.array_equal(n.normal_range(0, 3, "beam", 2), np.stack([n.normal(k, "beam", 2)
                                                                      for k in range(3)]))
    assert np.array_equal(n.normal_batch([5, 2], "beam", 2),
                          np.stack([n.normal(5, "beam", 2), n.normal(2, "beam", 2)]))
    assert n.uniform(4, "drop") == n.uniform_range(4, 1, "drop")[0, 0]


def test_keys_separate_streams():
    base = KeyedNoise(1, "a").normal(0, "x", 4)
    for other in (KeyedNoise(2, "a").normal(0, "x", 4), KeyedNoise(1, "b").normal(0, "x", 4),
                  KeyedNoise(1, "a").normal(1, "x", 4), KeyedNoise(1, "a").normal(0, "y", 4)):
        assert not np.array_equal(base, other)


def test_width_is_limited_to_one_block():
    with pytest.raises(ValueError, match="one channel per quantity"):
        KeyedNoise(1, "a").normal(0, "x", 5)


def test_draws_are_standard_normal_and_uncorrelated():
    x = KeyedNoise(5, "s").normal_range(0, 200_000, "c", 4)
    assert np.abs(x.mean(axis=0)).max() < 0.01
    assert np.abs(x.std(axis=0) - 1).max() < 0.01
    c = np.corrcoef(x.T)
    assert np.abs(c - np.eye(4)).max() < 0.01  # the four values of a sample are independent
    lag = np.corrcoef(x[:-1, 0], x[1:, 0])[0, 1]
    assert abs(lag) < 0.01  # consecutive samples too
    # tails: P(|z| > 3) = 0.0027
    assert abs((np.abs(x) > 3).mean() - 0.0027) < 0.0005


def test_one_sample_path_equals_the_vectorised_path_bit_for_bit():
    """A single draw (normal, uniform, a range of one) is computed in Python integers
    rather than through NumPy's Philox generator (faster for the one-sample-per-step
    sensors); the values must be the generator's, to the bit, wherever the index is."""
    n = KeyedNoise(11, "imu")
    indices = [0, 1, 2, 3, 1000, 2**32 - 1, 2**32, 2**53 + 1, 2**63, 2**64 - 2]
    for k in indices:
        ref_n = n.normal_range(k, 2, "gyro_white", 4)[0]  # a range of two: NumPy's Philox
        ref_u = n.uniform_range(k, 2, "u", 4)[0]
        assert np.array_equal(n.normal(k, "gyro_white", 4), ref_n), k
        assert np.array_equal(n.normal_range(k, 1, "gyro_white", 3)[0], ref_n[:3]), k
        assert n.normal(k, "gyro_white") == ref_n[0]
        assert np.array_equal(n.uniform(k, "u", 4), ref_u), k
        assert np.array_equal(n.uniform_range(k, 1, "u", 2)[0], ref_u[:2]), k
        assert n.uniform(k, "u") == ref_u[0]
    with pytest.raises(ValueError, match="sample indices"):
        n.normal(-1, "x")


def test_draws_made_ahead_equal_the_one_sample_path():
    """``KeyedNoise(..., ahead=N)`` computes N samples of a channel at once and serves
    one-sample draws from them (the sensors' per-step path): the same values as without,
    in order, across the end of a batch, out of order and near the last index."""
    plain, ahead = KeyedNoise(3, "imu"), KeyedNoise(3, "imu", ahead=8)
    order = list(range(20)) + [5, 100, 7, 2**64 - 3, 2**64 - 2, 2**64 - 1, 0]
    for k in order:
        for ch in ("gyro_white", "accel_gm1"):
            assert np.array_equal(ahead.normal_range(k, 1, ch, 3), plain.normal_range(k, 1, ch, 3)), k
            assert np.array_equal(ahead.normals4(k, ch), plain.normals4(k, ch)), k
            assert ahead.normal(k, ch) == plain.normal(k, ch)
            row = plain.normals4(k, ch).tolist()
            assert ahead.normals4_row(k, ch) == row and plain.normals4_row(k, ch) == row, k
    with pytest.raises(ValueError, match="sample indices"):
        ahead.normal(2**64, "gyro_white")
    with pytest.raises(ValueError, match="sample indices"):
        ahead.normals4_row(2**64, "accel_gm1")
    with pytest.raises(ValueError, match="sample indices"):
        ahead.normal(-1, "gyro_white")
