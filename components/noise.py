"""Keyed noise: random draws that depend only on (seed, component, channel, sample
index), never on how many draws came before or in which process they are made.

A sensor stepped one sample at a time, in a batch, in another process or on another
machine therefore produces the same samples (DESIGN.md, "Wire"). The algorithm is
fully specified (docs/protocol.md §11) so a component in another language can
reproduce it bit for bit:

1. key = the first 16 bytes of SHA-256(f"{seed}\\0{component}\\0{channel}"), read as
   two little-endian uint64 — the key of a Philox-4x64-10 generator;
2. sample k of that channel is the Philox block at counter (k, 0, 0, 0): four uint64
   words w0..w3;
3. uniforms u_i = ((w_i >> 11) + 1) · 2⁻⁵³, in (0, 1];
4. normals by Box–Muller: z0 = r cos θ, z1 = r sin θ with r = sqrt(−2 ln u0),
   θ = 2π u1; z2, z3 likewise from u2, u3.

So a channel gives at most four values per sample (a 3-axis sensor uses one channel
per quantity). Drawing a range of samples is one vectorised Philox call.
"""

from __future__ import annotations

import hashlib

import numpy as np

_TWO_PI = 2.0 * np.pi


def channel_key(seed: int, component: str, channel: str) -> np.ndarray:
    """The Philox key (2 × uint64) of one noise channel."""
    h = hashlib.sha256(f"{int(seed)}\x00{component}\x00{channel}".encode()).digest()
    return np.frombuffer(h[:16], dtype="<u8").copy()


def _blocks(key: np.ndarray, first: int, count: int) -> np.ndarray:
    """Philox-4x64-10 blocks at counters (first .. first+count-1, 0, 0, 0): (count, 4) uint64."""
    if first < 0 or count < 0:
        raise ValueError(f"sample indices must be >= 0, got first={first}, count={count}")
    # NumPy's Philox increments the counter before producing a block: start one below.
    counter = np.array([(first - 1) % 2**64, 0, 0, 0], dtype=np.uint64)
    if first == 0:
        counter[1:] = np.uint64(2**64 - 1)  # (-1) in 256-bit arithmetic wraps to 0
    bitgen = np.random.Philox(key=key, counter=counter)
    return bitgen.random_raw(4 * count).reshape(count, 4)


def _uniforms(words: np.ndarray) -> np.ndarray:
    return ((words >> np.uint64(11)).astype(np.float64) + 1.0) * (1.0 / 9007199254740992.0)


def _normals(words: np.ndarray) -> np.ndarray:
    u = _uniforms(words)
    r01 = np.sqrt(-2.0 * np.log(u[..., 0]))
    r23 = np.sqrt(-2.0 * np.log(u[..., 2]))
    t01 = _TWO_PI * u[..., 1]
    t23 = _TWO_PI * u[..., 3]
    return np.stack([r01 * np.cos(t01), r01 * np.sin(t01), r23 * np.cos(t23), r23 * np.sin(t23)],
                    axis=-1)


class KeyedNoise:
    """Noise source of one component: ``KeyedNoise(seed, name).normal(k, "depth")``."""

    def __init__(self, seed: int, component: str) -> None:
        self.seed = int(seed)
        self.component = component
        self._keys: dict[str, np.ndarray] = {}

    def _key(self, channel: str) -> np.ndarray:
        key = self._keys.get(channel)
        if key is None:
            key = self._keys[channel] = channel_key(self.seed, self.component, channel)
        return key

    @staticmethod
    def _width(size: int | None) -> int:
        n = 1 if size is None else int(size)
        if not 1 <= n <= 4:
            raise ValueError(f"a noise channel gives 1 to 4 values per sample, asked {size}; "
                             "use one channel per quantity")
        return n

    def normal(self, index: int, channel: str, size: int | None = None):
        """Standard normal value(s) of sample ``index`` on ``channel`` (size 1..4, or None
        for a scalar)."""
        z = _normals(_blocks(self._key(channel), int(index), 1))[0]
        return float(z[0]) if size is None else z[: self._width(size)]

    def uniform(self, index: int, channel: str, size: int | None = None):
        """Uniform (0, 1] value(s) of sample ``index`` on ``channel``."""
        u = _uniforms(_blocks(self._key(channel), int(index), 1))[0]
        return float(u[0]) if size is None else u[: self._width(size)]

    def normal_range(self, first: int, count: int, channel: str, size: int = 1) -> np.ndarray:
        """Samples ``first .. first+count-1`` at once: shape (count, size). Row i equals
        ``normal(first + i, channel, size)``."""
        return _normals(_blocks(self._key(channel), int(first), int(count)))[:, : self._width(size)]

    def uniform_range(self, first: int, count: int, channel: str, size: int = 1) -> np.ndarray:
        """Uniforms of samples ``first .. first+count-1``: shape (count, size)."""
        return _uniforms(_blocks(self._key(channel), int(first), int(count)))[:, : self._width(size)]

    def normal_batch(self, indices, channel: str, size: int = 1) -> np.ndarray:
        """Samples at arbitrary indices: shape (len(indices), size)."""
        return np.stack([np.atleast_1d(self.normal(int(i), channel, size)) for i in indices])
