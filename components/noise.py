"""Keyed noise: random draws that depend only on (seed, component, sample index,
channel), never on how many draws came before or in which process they are made.

A sensor stepped one sample at a time, in a batch, in another process or on another
machine therefore produces the same samples (DESIGN.md, "Wire").

Each (seed, component, channel) selects a Philox-4x64 key; the sample index selects
the counter. A draw of ``size`` values at index k reads the counter block of k alone,
so ``normal(k, ...)`` is a pure function of its arguments.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _key(seed: int, component: str, channel: str) -> np.ndarray:
    h = hashlib.sha256(f"{int(seed)}\x00{component}\x00{channel}".encode()).digest()
    return np.frombuffer(h[:16], dtype="<u8").copy()


class KeyedNoise:
    """Noise source of one component: ``KeyedNoise(seed, name).normal(index, "depth")``."""

    def __init__(self, seed: int, component: str) -> None:
        self.seed = int(seed)
        self.component = component
        self._keys: dict[str, np.ndarray] = {}

    def generator(self, index: int, channel: str) -> np.random.Generator:
        """A generator positioned for sample ``index`` on ``channel``."""
        key = self._keys.get(channel)
        if key is None:
            key = self._keys[channel] = _key(self.seed, self.component, channel)
        if index < 0:
            raise ValueError(f"sample index must be >= 0, got {index}")
        # The counter's high word is the sample index: each index owns 2**64 blocks.
        bitgen = np.random.Philox(key=key, counter=np.array([0, 0, 0, int(index)], dtype=np.uint64))
        return np.random.Generator(bitgen)

    def normal(self, index: int, channel: str, size: int | tuple[int, ...] | None = None):
        """Standard normal draw(s) for sample ``index`` on ``channel``."""
        return self.generator(index, channel).standard_normal(size)

    def uniform(self, index: int, channel: str, size: int | tuple[int, ...] | None = None):
        """Uniform [0, 1) draw(s) for sample ``index`` on ``channel``."""
        return self.generator(index, channel).random(size)

    def normal_batch(self, indices, channel: str, size: int = 1) -> np.ndarray:
        """Draws for many sample indices at once: shape (len(indices), size).
        Row i equals ``normal(indices[i], channel, size)``."""
        return np.stack([np.atleast_1d(self.normal(int(i), channel, size)) for i in indices])
