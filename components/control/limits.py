"""What the thrusters can push: the reachable body wrench box of a vehicle profile.

A profile's ``[[thrusters]]`` (``position`` [m, body FRD], unit ``direction``,
``max_forward_n``, ``max_reverse_n``), read and checked by ``actuation/geometry.py``
as the allocator reads them, define the thrust configuration matrix

    B = [d_1 … d_n; r_1 × d_1 … r_n × d_n]        τ = B f,   −f_rev,i ≤ f_i ≤ f_fwd,i

For each body axis j and sign, the largest |τ_j| reachable with every other wrench
component held at zero is one small linear program (this is the box a wrench
allocator can honour axis by axis; combinations need not all be reachable at once,
hence the margin the controllers apply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..actuation.geometry import ThrusterSpec, configuration_matrix, thrusters_from_profile
from ..sdk.errors import ParameterError

__all__ = ["limit_box", "profile_box", "reachable_box"]


def reachable_box(thrusters: Sequence[ThrusterSpec]) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper): per axis X Y Z K M N, the extreme single-axis wrench [N, N·m]
    of validated thrusters (``actuation.geometry.thrusters_from_profile``)."""
    from scipy.optimize import linprog

    B = configuration_matrix(thrusters)
    n = B.shape[1]
    bounds = [(t.f_min, t.f_max) for t in thrusters] + [(None, None)]
    lower, upper = np.zeros(6), np.zeros(6)
    for j in range(6):
        e = np.zeros((6, 1))
        e[j] = 1.0
        a_eq = np.hstack([B, -e])
        for sign, out in ((1.0, upper), (-1.0, lower)):
            c = np.zeros(n + 1)
            c[-1] = -sign  # maximise sign * s
            res = linprog(c, A_eq=a_eq, b_eq=np.zeros(6), bounds=bounds, method="highs")
            out[j] = res.x[-1] if res.status == 0 else 0.0
    return lower, upper


def profile_box(profile: Mapping[str, Any],
                component: str = "") -> tuple[np.ndarray, np.ndarray] | None:
    """The reachable box of a profile table, or None when it has no ``[[thrusters]]``;
    the thrusters are validated as the allocator validates them (``ParameterError``
    naming ``component`` and the thruster)."""
    thrusters = profile.get("thrusters") if profile else None
    if not thrusters:
        return None
    return reachable_box(thrusters_from_profile(profile, component))


def limit_box(profile: Mapping[str, Any], margin: float, component: str, limit_name: str,
              limit_fix: str) -> tuple[np.ndarray, np.ndarray]:
    """The reachable box of a profile for a controller whose ``limit_name`` parameter
    (``input_limit``, ``output_limit``) was left empty, before its ``limit_margin``
    is applied: ``margin`` checked in (0, 1], ``ParameterError`` naming ``component``
    when the profile has no ``[[thrusters]]`` (``limit_fix`` says what to give instead)."""
    if not 0 < margin <= 1:
        raise ParameterError(f"limit_margin must be in (0, 1], got {margin}", component=component,
                             fix="e.g. limit_margin = 0.8")
    box = profile_box(profile, component)  # ParameterError naming the thruster at fault
    if box is None:
        raise ParameterError(f"{limit_name} is empty and the profile has no [[thrusters]]",
                             component=component, fix=limit_fix)
    return box
