"""Seabeds as regular height grids, triangulated, and the rocks on them (docs/world.md).

A seabed is a grid of depths z[i, j] (NED z, m, positive down) at
north = n0 + i·r, east = e0 + j·r (r the resolution). Each cell is split into two
triangles along the diagonal from (i+1, j) to (i, j+1); :meth:`HeightGrid.depth`
interpolates on exactly those triangles, so it agrees with what a ray hits.

Procedural seabed (all terms in metres, s = n·cosψ + e·sinψ along the ripple
direction ψ):

    z(n, e) = z̄ + s_n (n - n_c) + s_e (e - e_c)                      mean and slope
              + (h/2) sin(2π s / λ)                                    sand ripples
              + A · Σ_k a_k sin(2π (n cosθ_k + e sinθ_k)/λ_k + φ_k)    relief

with the relief's wavelengths λ_k (log-uniform in [λ_min, λ_max]), directions θ_k,
phases φ_k and weights a_k ∝ λ_k (redder relief) drawn from
``numpy.random.default_rng(seed)`` and normalised so that Σ a_k²/2 = 1 (standard
deviation A). Same seed ⇒ same floor, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from .scenefile import Boulders, Relief, Ripples, SeabedSpec, load_heightmap


@dataclass(frozen=True)
class HeightGrid:
    """Depths on a regular grid: z[i, j] at (n0 + i r, e0 + j r)."""

    z: np.ndarray
    north0_m: float
    east0_m: float
    resolution_m: float

    def vertices_faces(self) -> tuple[np.ndarray, np.ndarray]:
        """The triangulated grid: vertices (V, 3) NED and faces (2 (I-1)(J-1), 3),
        wound so the face normals point up (towards -z, into the water)."""
        ni, nj = self.z.shape
        n = self.north0_m + self.resolution_m * np.arange(ni)
        e = self.east0_m + self.resolution_m * np.arange(nj)
        N, E = np.meshgrid(n, e, indexing="ij")
        vertices = np.stack([N.ravel(), E.ravel(), self.z.ravel()], axis=1)
        i = (np.arange(ni - 1)[:, None] * nj + np.arange(nj - 1)[None, :]).ravel()
        # Vertex (i, j) is i·J + j: +1 steps east, +J north. Order (i,j), (i,j+1),
        # (i+1,j): east × north = -z (up, into the water); likewise the other half.
        a = np.stack([i, i + 1, i + nj], axis=1)
        b = np.stack([i + nj, i + 1, i + nj + 1], axis=1)
        faces = np.concatenate([a, b])
        return vertices, faces

    def depth(self, north_m, east_m) -> np.ndarray:
        """Seabed depth under (north, east), m, on the grid's triangles; nan outside."""
        north_m, east_m = np.broadcast_arrays(np.asarray(north_m, float), np.asarray(east_m, float))
        ni, nj = self.z.shape
        x = (north_m - self.north0_m) / self.resolution_m
        y = (east_m - self.east0_m) / self.resolution_m
        inside = (x >= 0) & (x <= ni - 1) & (y >= 0) & (y <= nj - 1)
        i = np.clip(np.floor(x).astype(np.int64), 0, ni - 2)
        j = np.clip(np.floor(y).astype(np.int64), 0, nj - 2)
        u, v = x - i, y - j
        z = self.z
        z00, z10, z01, z11 = z[i, j], z[i + 1, j], z[i, j + 1], z[i + 1, j + 1]
        lower = u + v <= 1.0
        d = np.where(lower, z00 + u * (z10 - z00) + v * (z01 - z00),
                     z11 + (1 - u) * (z01 - z11) + (1 - v) * (z10 - z11))
        return np.where(inside, d, np.nan)


def procedural_grid(spec: SeabedSpec) -> HeightGrid:
    """The procedural seabed of ``spec`` (module docstring)."""
    r = spec.resolution_m
    ni = int(round(spec.size_m[0] / r)) + 1
    nj = int(round(spec.size_m[1] / r)) + 1
    n0 = spec.center_ne_m[0] - 0.5 * (ni - 1) * r
    e0 = spec.center_ne_m[1] - 0.5 * (nj - 1) * r
    N, E = np.meshgrid(n0 + r * np.arange(ni), e0 + r * np.arange(nj), indexing="ij")
    z = surface_depth(spec, N, E)
    return HeightGrid(z, float(n0), float(e0), float(r))


def surface_depth(spec: SeabedSpec, N: np.ndarray, E: np.ndarray) -> np.ndarray:
    """The closed-form procedural depth z(n, e) (before triangulation)."""
    dn, de = N - spec.center_ne_m[0], E - spec.center_ne_m[1]
    z = spec.mean_depth_m + spec.slope[0] * dn + spec.slope[1] * de
    if spec.ripples is not None:
        z = z + _ripples(spec.ripples, N, E)
    if spec.relief is not None:
        z = z + _relief(spec.relief, N, E)
    return z


def _ripples(rip: Ripples, N, E):
    psi = np.radians(rip.direction_deg)
    s = N * np.cos(psi) + E * np.sin(psi)
    return 0.5 * rip.height_m * np.sin(2 * np.pi * s / rip.wavelength_m)


def _relief(rel: Relief, N, E):
    rng = np.random.default_rng(rel.seed)
    lam = np.exp(rng.uniform(np.log(rel.wavelength_min_m), np.log(rel.wavelength_max_m),
                             rel.waves))
    theta = rng.uniform(0, 2 * np.pi, rel.waves)
    phase = rng.uniform(0, 2 * np.pi, rel.waves)
    a = lam / np.sqrt(0.5 * np.sum(lam**2))
    out = np.zeros_like(N, dtype=float)
    for k in range(rel.waves):
        out += a[k] * np.sin(2 * np.pi * (N * np.cos(theta[k]) + E * np.sin(theta[k])) / lam[k]
                             + phase[k])
    return rel.amplitude_m * out


def heightmap_grid(spec: SeabedSpec) -> HeightGrid:
    """A height-map seabed: z = z0 + offset + scale · sample (rows north, columns east)."""
    raw = load_heightmap(spec.file)
    z = spec.origin_ned_m[2] + spec.depth_offset_m + spec.depth_scale_m * raw
    return HeightGrid(z, spec.origin_ned_m[0], spec.origin_ned_m[1], spec.resolution_m)


def boulder_meshes(b: Boulders, grid: HeightGrid) -> list[tuple[np.ndarray, np.ndarray]]:
    """``b.count`` rocks, each (vertices NED, faces): a jittered, flattened icosphere
    (80 faces) of radius in [radius_min, radius_max], yawed at random, its centre at
    depth z_seabed - (1 - 2·burial)·c (c = flattening · radius): burial 0 rests on
    the floor, 0.5 is buried to the centre. Positions are uniform over the grid
    (kept a radius from its edges). From ``default_rng(b.seed)``."""
    rng = np.random.default_rng(b.seed)
    ni, nj = grid.z.shape
    n_lo, e_lo = grid.north0_m, grid.east0_m
    n_hi, e_hi = n_lo + (ni - 1) * grid.resolution_m, e_lo + (nj - 1) * grid.resolution_m
    base = trimesh.creation.icosphere(subdivisions=1, radius=1.0)
    unit_v, faces = np.asarray(base.vertices), np.asarray(base.faces)
    rocks = []
    for _ in range(b.count):
        radius = rng.uniform(b.radius_min_m, b.radius_max_m)
        n = rng.uniform(n_lo + radius, n_hi - radius)
        e = rng.uniform(e_lo + radius, e_hi - radius)
        yaw = rng.uniform(0, 2 * np.pi)
        jitter = 1.0 + 0.15 * rng.uniform(-1, 1, len(unit_v))
        v = unit_v * jitter[:, None] * radius
        v[:, 2] *= b.flattening
        c, s = np.cos(yaw), np.sin(yaw)
        v = v @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]])
        zc = float(grid.depth(n, e)) - (1 - 2 * b.burial) * b.flattening * radius
        rocks.append((v + np.array([n, e, zc]), faces.copy()))
    return rocks
