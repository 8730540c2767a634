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
_MASK64 = (1 << 64) - 1
_PHILOX_M0, _PHILOX_M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157  # round multipliers
_PHILOX_W0, _PHILOX_W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B  # Weyl key increments
_INV_2_53 = 1.0 / 9007199254740992.0


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


def _block(key: tuple[int, int], index: int) -> tuple[int, int, int, int]:
    """One Philox-4x64-10 block at counter (index, 0, 0, 0), in Python integers.

    The same four words as ``_blocks(key, index, 1)`` (NumPy's Philox), computed
    without building a generator: a sensor drawing one sample per step spends ~15 µs
    here instead of ~100 µs. Each of the ten rounds, with (c0, c1, c2, c3) the
    counter and (k0, k1) the key: hi/lo of M0·c0 and M1·c2 (128-bit products), then
    c ← (hi(M1·c2) ⊕ c1 ⊕ k0, lo(M1·c2), hi(M0·c0) ⊕ c3 ⊕ k1, lo(M0·c0)) and the
    key bumped by the Weyl constants (Salmon et al., "Parallel random numbers: as
    easy as 1, 2, 3", SC 2011)."""
    if not 0 <= index <= _MASK64:
        raise ValueError(f"sample indices must be in [0, 2**64), got {index}")
    k0, k1 = key
    c0, c1, c2, c3 = index, 0, 0, 0
    for _ in range(10):
        p0 = _PHILOX_M0 * c0
        p1 = _PHILOX_M1 * c2
        c0, c1, c2, c3 = (p1 >> 64) ^ c1 ^ k0, p1 & _MASK64, (p0 >> 64) ^ c3 ^ k1, p0 & _MASK64
        k0 = (k0 + _PHILOX_W0) & _MASK64
        k1 = (k1 + _PHILOX_W1) & _MASK64
    return c0, c1, c2, c3


def _uniforms1(words: tuple[int, int, int, int]) -> list[float]:
    """``_uniforms`` of one block (exact: integers below 2**53 times a power of two)."""
    return [((w >> 11) + 1) * _INV_2_53 for w in words]


def _normals1(words: tuple[int, int, int, int]) -> np.ndarray:
    """``_normals`` of one block, bit for bit: the same NumPy functions (log, cos, sin
    may be NumPy's own SIMD code, not the C library's), on scalars; the products and
    the square root are IEEE-exact either way."""
    u0, u1, u2, u3 = _uniforms1(words)
    r01 = np.sqrt(-2.0 * np.log(u0))
    r23 = np.sqrt(-2.0 * np.log(u2))
    t01 = _TWO_PI * u1
    t23 = _TWO_PI * u3
    return np.array([r01 * np.cos(t01), r01 * np.sin(t01), r23 * np.cos(t23), r23 * np.sin(t23)])


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

    def __init__(self, seed: int, component: str, ahead: int = 0) -> None:
        """``ahead`` > 1: a draw of one sample (``normal``, ``normal_range`` of one)
        computes the next ``ahead`` samples of its channel at once (one vectorised
        Philox call; the values are the same, see ``normal_range``) and serves the
        following draws from them — for a sensor that draws each channel once per step,
        in sample order."""
        self.seed = int(seed)
        self.component = component
        self.ahead = int(ahead)
        self._keys: dict[str, np.ndarray] = {}
        self._int_keys: dict[str, tuple[int, int]] = {}
        self._ahead: dict[str, tuple[int, np.ndarray]] = {}
        self._ahead_rows: dict[str, tuple[int, list[list[float]]]] = {}

    def _key(self, channel: str) -> np.ndarray:
        key = self._keys.get(channel)
        if key is None:
            key = self._keys[channel] = channel_key(self.seed, self.component, channel)
        return key

    def _int_key(self, channel: str) -> tuple[int, int]:
        key = self._int_keys.get(channel)
        if key is None:
            k = self._key(channel)
            key = self._int_keys[channel] = (int(k[0]), int(k[1]))
        return key

    @staticmethod
    def _width(size: int | None) -> int:
        n = 1 if size is None else int(size)
        if not 1 <= n <= 4:
            raise ValueError(f"a noise channel gives 1 to 4 values per sample, asked {size}; "
                             "use one channel per quantity")
        return n

    def normals4(self, index: int, channel: str) -> np.ndarray:
        """The four normals of sample ``index`` on ``channel`` (read-only: it may be
        a row of the draws made ahead)."""
        return self._normals_of(int(index), channel)

    def normals4_row(self, index: int, channel: str) -> list[float]:
        """:meth:`normals4` as a list of four Python floats (the same values), for a
        step computed in floats; with draws ahead, a row of them converted once per
        block (do not modify it)."""
        got = self._ahead_rows.get(channel)
        if got is not None:
            i = index - got[0]
            if 0 <= i < len(got[1]):
                return got[1][i]
        if self.ahead > 1:
            self._normals_of(int(index), channel)  # the block holding index
            first, z = self._ahead[channel]
            rows = z.tolist()
            self._ahead_rows[channel] = (first, rows)
            return rows[index - first]
        return self._normals_of(int(index), channel).tolist()

    def _normals_of(self, index: int, channel: str) -> np.ndarray:
        if self.ahead > 1:
            first, z = self._ahead.get(channel, (-1, None))
            if z is None or not 0 <= index - first < len(z):
                if not 0 <= index <= _MASK64:
                    raise ValueError(f"sample indices must be in [0, 2**64), got {index}")
                count = min(self.ahead, _MASK64 - index + 1)
                z = _normals(_blocks(self._key(channel), index, count))
                z.flags.writeable = False
                first = index
                self._ahead[channel] = (first, z)
            return z[index - first]
        return _normals1(_block(self._int_key(channel), index))

    def normal(self, index: int, channel: str, size: int | None = None):
        """Standard normal value(s) of sample ``index`` on ``channel`` (size 1..4, or None
        for a scalar)."""
        z = self._normals_of(int(index), channel)
        return float(z[0]) if size is None else z[: self._width(size)].copy()

    def uniform(self, index: int, channel: str, size: int | None = None):
        """Uniform (0, 1] value(s) of sample ``index`` on ``channel``."""
        u = _uniforms1(_block(self._int_key(channel), int(index)))
        return u[0] if size is None else np.array(u[: self._width(size)])

    def normal_range(self, first: int, count: int, channel: str, size: int = 1) -> np.ndarray:
        """Samples ``first .. first+count-1`` at once: shape (count, size). Row i equals
        ``normal(first + i, channel, size)``."""
        if count == 1:  # one sample per step: the scalar path (or the draws ahead), the same values
            return self._normals_of(int(first), channel)[None, : self._width(size)].copy()
        return _normals(_blocks(self._key(channel), int(first), int(count)))[:, : self._width(size)]

    def uniform_range(self, first: int, count: int, channel: str, size: int = 1) -> np.ndarray:
        """Uniforms of samples ``first .. first+count-1``: shape (count, size)."""
        if count == 1:
            return np.array(_uniforms1(_block(self._int_key(channel), int(first)))[: self._width(size)])[None, :]
        return _uniforms(_blocks(self._key(channel), int(first), int(count)))[:, : self._width(size)]

    def normal_batch(self, indices, channel: str, size: int = 1) -> np.ndarray:
        """Samples at arbitrary indices: shape (len(indices), size)."""
        return np.stack([np.atleast_1d(self.normal(int(i), channel, size)) for i in indices])
