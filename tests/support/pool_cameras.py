"""Pool cameras for the localization tests beside the simulated rig's own."""

from __future__ import annotations

import dataclasses
import math

from moonpool.components.localization.pool_setup import example_setup, nadir_rotation


def tilted_setup():
    """A harder camera than the rig's: tilted 12 deg, off-centre, strong distortion."""
    s = example_setup()
    R = nadir_rotation(0.4, math.radians(12.0), math.radians(-7.0))
    return dataclasses.replace(s, R_wc_rows=tuple(map(tuple, R)), t_wc=(0.3, -0.2, -1.7),
                               dist=(-0.21, 0.09, 0.0012, -0.0008, -0.015), water_z=0.05,
                               n_water=1.3335)
