"""The one description of the ocean: the water column of a scene (docs/world.md).

Temperature and salinity are given as a three-layer profile in depth d (m, positive
down):

* a **mixed layer** 0 <= d <= d_m: uniform, T_s and S_s;
* a **thermocline** d_m < d < d_t: linear from (T_s, S_s) to (T_d, S_d);
* the **deep** water d >= d_t: T_d + g_T (d - d_t), S_d (g_T a small gradient, °C/m).

Pressure, density and sound speed follow from TEOS-10 (IOC, SCOR and IAPSO 2010,
*The international thermodynamic equation of seawater - 2010*) through ``gsw``
(the Gibbs SeaWater toolbox, McDougall and Barker 2011), never from a hand-written
equation of state:

* sea pressure p (dbar): the hydrostatic integral p(d) = ∫0^d ρ(SA, CT, p) g(z) dz of
  this column's own density, with gravity ``gsw.grav(latitude, p)``, on a 1 m grid
  from the surface (trapezoids; ρ depends on p, so three fixed-point passes, started
  from ``gsw.p_from_z``, converge to < 1e-6 dbar), interpolated linearly between the
  metres (error < 0.01 Pa). ``gsw.p_from_z`` alone assumes TEOS-10's standard ocean
  (SA = 35.16504 g/kg, CT = 0 °C): 3 % high in fresh water (a pool), ~0.2 % off in a
  warm mixed layer;
* absolute salinity SA = ``gsw.SA_from_SP(S, p, lon, lat)`` (with the regional
  anomaly of the map origin) and conservative temperature
  CT = ``gsw.CT_from_t(SA, T, p)``;
* density ρ = ``gsw.rho(SA, CT, p)`` and sound speed c = ``gsw.sound_speed(SA, CT, p)``;
* absolute pressure = p · 10^4 Pa/dbar + 101,325 Pa.

Fresh water (a pool) is S = 0. The current is uniform, or piecewise linear in depth
through given (depth, velocity) knots and held constant above the first and below
the last.
"""

from __future__ import annotations

from dataclasses import dataclass

import gsw
import numpy as np

P_ATM_PA = 101_325.0
"""Standard atmosphere at the surface, Pa."""
PA_PER_DBAR = 1.0e4


@dataclass(frozen=True)
class WaterColumn:
    """Temperature/salinity profile, current and map origin of a scene."""

    latitude_deg: float = 0.0
    """Latitude of the map origin, degrees north (gravity in gsw; the magnetometer)."""
    longitude_deg: float = 0.0
    """Longitude of the map origin, degrees east."""
    surface_temperature_c: float = 15.0
    """In-situ temperature of the mixed layer T_s, °C (ITS-90)."""
    surface_salinity_psu: float = 35.0
    """Practical salinity of the mixed layer S_s (PSS-78; 0 = fresh water)."""
    mixed_layer_depth_m: float = 50.0
    """Bottom of the mixed layer d_m, m."""
    thermocline_bottom_m: float = 1000.0
    """Bottom of the thermocline d_t, m (>= d_m; = d_m: a step)."""
    deep_temperature_c: float = 2.0
    """In-situ temperature at the top of the deep water T_d, °C."""
    deep_salinity_psu: float = 34.7
    """Practical salinity of the deep water S_d."""
    deep_temperature_gradient_c_per_m: float = 0.0
    """dT/dd below d_t, °C/m (e.g. +1e-4: adiabatic warming in a trench)."""
    uniform_current_ned_mps: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Uniform current (north, east, down), m/s; used when ``current_profile`` is empty."""
    current_profile: tuple[tuple[float, tuple[float, float, float]], ...] = ()
    """Knots (depth m, (north, east, down) m/s), depths increasing: piecewise linear."""

    def __post_init__(self) -> None:
        if not self.thermocline_bottom_m >= self.mixed_layer_depth_m >= 0:
            raise ValueError(
                f"water column: need 0 <= mixed_layer_depth_m ({self.mixed_layer_depth_m}) <= "
                f"thermocline_bottom_m ({self.thermocline_bottom_m}) (fix: order the layers)")
        if not -90.0 <= self.latitude_deg <= 90.0:
            raise ValueError(f"water column: latitude_deg {self.latitude_deg} outside [-90, 90]")
        depths = [k[0] for k in self.current_profile]
        if any(b <= a for a, b in zip(depths, depths[1:])):
            raise ValueError("water column: current_profile depths must increase "
                             "(fix: sort the knots by depth, no repeats)")

    # ------------------------------------------------------------- profiles

    def _layer(self, depth_m, surface: float, deep: float, gradient: float) -> np.ndarray:
        d = np.maximum(np.asarray(depth_m, dtype=float), 0.0)
        dm, dt = self.mixed_layer_depth_m, self.thermocline_bottom_m
        if dt > dm:
            frac = np.clip((d - dm) / (dt - dm), 0.0, 1.0)
        else:
            frac = (d > dm).astype(float)
        value = surface + (deep - surface) * frac
        return value + gradient * np.maximum(d - dt, 0.0)

    def temperature_c(self, depth_m) -> np.ndarray:
        """In-situ temperature T(d), °C."""
        return self._layer(depth_m, self.surface_temperature_c, self.deep_temperature_c,
                           self.deep_temperature_gradient_c_per_m)

    def salinity_psu(self, depth_m) -> np.ndarray:
        """Practical salinity S(d)."""
        return self._layer(depth_m, self.surface_salinity_psu, self.deep_salinity_psu, 0.0)

    def sea_pressure_dbar(self, depth_m) -> np.ndarray:
        """Sea pressure (absolute minus 10.1325 dbar), dbar: the hydrostatic integral of
        this column's density (module docstring)."""
        d = np.maximum(np.asarray(depth_m, dtype=float), 0.0)
        grid, p = self._pressure_table(float(np.max(d, initial=0.0)))
        return np.interp(d, grid, p)

    def _pressure_table(self, deepest_m: float):
        """(depth grid m, sea pressure dbar) from the surface to at least ``deepest_m``
        (11,000 m: the whole ocean), built once."""
        table = self.__dict__.get("_p_table")
        if table is not None and table[0][-1] >= deepest_m:
            return table
        grid = np.arange(0.0, max(11_000.0, np.ceil(deepest_m) + 1.0) + 0.5, 1.0)
        S, T = self.salinity_psu(grid), self.temperature_c(grid)
        p = np.asarray(gsw.p_from_z(-grid, self.latitude_deg), dtype=float)
        for _ in range(3):
            sa = gsw.SA_from_SP(S, p, self.longitude_deg, self.latitude_deg)
            rho = np.asarray(gsw.rho(sa, gsw.CT_from_t(sa, T, p), p), dtype=float)
            f = rho * np.asarray(gsw.grav(self.latitude_deg, p), dtype=float)
            p = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(grid))])
            p /= PA_PER_DBAR
        object.__setattr__(self, "_p_table", (grid, p))  # a cache on a frozen dataclass
        return grid, p

    def pressure_pa(self, depth_m) -> np.ndarray:
        """Absolute pressure (atmosphere + water), Pa."""
        return self.sea_pressure_dbar(depth_m) * PA_PER_DBAR + P_ATM_PA

    # The interface sensors and filters share with the FMU's pycnocline column
    # (components/sensors/environment.py): absolute pressure, density, gravity.

    def pressure(self, depth_m) -> np.ndarray:
        """Absolute pressure, Pa (``pressure_pa``)."""
        return self.pressure_pa(depth_m)

    def density(self, depth_m) -> np.ndarray:
        """In-situ density, kg/m^3 (``density_kgpm3``)."""
        return self.density_kgpm3(depth_m)

    @property
    def g(self) -> float:
        """Gravity at the surface at the map origin's latitude, m/s^2 (``gsw.grav``)."""
        return float(gsw.grav(self.latitude_deg, 0.0))

    def _sa_ct_p(self, depth_m):
        p = self.sea_pressure_dbar(depth_m)
        sa = gsw.SA_from_SP(self.salinity_psu(depth_m), p, self.longitude_deg, self.latitude_deg)
        ct = gsw.CT_from_t(sa, self.temperature_c(depth_m), p)
        return sa, ct, p

    def density_kgpm3(self, depth_m) -> np.ndarray:
        """In-situ density ρ(d) = ``gsw.rho(SA, CT, p)``, kg/m^3."""
        return np.asarray(gsw.rho(*self._sa_ct_p(depth_m)), dtype=float)

    def sound_speed_mps(self, depth_m) -> np.ndarray:
        """Speed of sound c(d) = ``gsw.sound_speed(SA, CT, p)``, m/s."""
        return np.asarray(gsw.sound_speed(*self._sa_ct_p(depth_m)), dtype=float)

    def density_knots(self, count: int = 32, deepest_m: float = 11_000.0):
        """(depths m, in-situ densities kg/m^3): ``count`` knots from the surface to
        ``deepest_m`` between which ρ(d) is taken as linear — the tabulated water column
        of an FMU (the
        ``fmu`` component's ``water_column``). Chosen greedily on the 1 m grid: the layer
        boundaries first, then the knot that removes the largest error, until ``count``."""
        if count < 2:
            raise ValueError("a water table needs at least 2 knots")
        grid = np.arange(0.0, np.ceil(deepest_m) + 0.5, 1.0)
        rho = self.density_kgpm3(grid)
        knots = {0, len(grid) - 1}
        for d in (self.mixed_layer_depth_m, self.thermocline_bottom_m):
            if 0 < d < grid[-1]:
                knots.add(int(round(d)))
        while len(knots) < count:
            k = np.array(sorted(knots))
            err = np.abs(np.interp(grid, grid[k], rho[k]) - rho)
            worst = int(np.argmax(err))
            if err[worst] == 0.0 or worst in knots:
                break
            knots.add(worst)
        k = np.array(sorted(knots))
        return grid[k], rho[k]

    def current_ned_mps(self, depth_m) -> np.ndarray:
        """Current (north, east, down) at each depth, (N, 3) m/s."""
        d = np.atleast_1d(np.asarray(depth_m, dtype=float))
        if not self.current_profile:
            return np.tile(np.asarray(self.uniform_current_ned_mps, dtype=float), (len(d), 1))
        knots = np.array([k[0] for k in self.current_profile], dtype=float)
        values = np.array([k[1] for k in self.current_profile], dtype=float)
        return np.stack([np.interp(d, knots, values[:, i]) for i in range(3)], axis=1)
