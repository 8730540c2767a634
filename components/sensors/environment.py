"""The water column, exactly as the hydrodynamics FMU models it (fmus/hydrodynamics/
model.c): density rho(d) = rho_surface + delta_rho · ramp(d), with a linear ramp of
width w centred on the pycnocline depth (a step when w = 0), and the absolute
pressure p(d) = p_atm + g ∫0^d rho(z) dz in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import G, P_ATM


@dataclass(frozen=True)
class WaterColumn:
    """Density profile and surface conditions (same parameters as the FMU)."""

    rho_surface: float = 1025.0
    """Density at the surface, kg/m^3."""
    pycnocline_depth: float = 0.0
    """Depth of the centre of the density ramp, m."""
    pycnocline_width: float = 0.0
    """Thickness of the ramp, m (0: a step)."""
    pycnocline_delta_rho: float = 0.0
    """Density increase across the ramp, kg/m^3 (0: uniform water)."""
    g: float = G
    """Gravity, m/s^2."""
    p_atm: float = P_ATM
    """Pressure at the surface, Pa."""

    def _ramp(self, d):
        w, top = self.pycnocline_width, self.pycnocline_depth - self.pycnocline_width / 2
        d = np.asarray(d, dtype=float)
        if w <= 0:
            return (d >= self.pycnocline_depth).astype(float)
        return np.clip((d - top) / w, 0.0, 1.0)

    def _ramp_integral(self, d):
        w, top = self.pycnocline_width, self.pycnocline_depth - self.pycnocline_width / 2
        d = np.asarray(d, dtype=float)
        if w <= 0:
            return np.maximum(d - self.pycnocline_depth, 0.0)
        inside = (d - top) ** 2 / (2 * w)
        below = w / 2 + (d - top - w)
        return np.where(d <= top, 0.0, np.where(d >= top + w, below, inside))

    def density(self, d):
        """rho(d), kg/m^3."""
        return self.rho_surface + self.pycnocline_delta_rho * self._ramp(d)

    def gauge_pressure(self, d):
        """g ∫0^d rho dz, Pa (0 above the surface)."""
        d = np.asarray(d, dtype=float)
        integral = self.rho_surface * d + self.pycnocline_delta_rho * (
            self._ramp_integral(d) - self._ramp_integral(0.0))
        return np.where(d <= 0, 0.0, self.g * integral)

    def pressure(self, d):
        """Absolute pressure at depth d, Pa."""
        return self.p_atm + self.gauge_pressure(d)
