"""The figures quoted in docs/sensors.md (pressure, magnetometer, the IMU presets'
bias-instability bands), recomputed from the models' code.
Run: python docs/figures/sensor_figures.py"""

from __future__ import annotations

import datetime
import math

import numpy as np
import ppigrf

from moonpool.components.sensors.environment import WaterColumn
from moonpool.components.sensors.gnss import ned_to_geodetic
from moonpool.components.sensors.imu import (FLICKER_FACTOR, ImuModelParams,
                                              allan_deviation_model, allan_floor)
from moonpool.components.sensors.magnetometer import dipole_field_ned, igrf_field_ned

# Seed 000's pycnocline (tests/unit/test_pressure.py: HADAL).
HADAL = dict(rho_surface=1025.0, pycnocline_depth=500.0, pycnocline_width=1000.0,
             pycnocline_delta_rho=3.075)
LAT, LON, YEAR = 45.0, 0.0, 2025.0


def angles(b) -> str:
    """'N … E … D … nT (declination, inclination, total)' of a NED field."""
    n, e, d = (float(x) for x in np.ravel(b)[:3])
    h = math.hypot(n, e)
    return (f"N {n:,.0f}  E {e:,.0f}  D {d:,.0f} nT  (declination {math.degrees(math.atan2(e, n)):+.1f} deg, "
            f"inclination {math.degrees(math.atan2(d, h)):.1f} deg, total {math.hypot(h, d):,.0f} nT)")


def igrf_at(lat: float, lon: float, height_km: float) -> np.ndarray:
    """IGRF-14 via ppigrf at geodetic (lat, lon, height) on 1 January 2025, NED nT."""
    be, bn, bu = ppigrf.igrf(lon, lat, height_km, datetime.datetime(2025, 1, 1))
    return np.array([float(np.ravel(bn)[0]), float(np.ravel(be)[0]), -float(np.ravel(bu)[0])])


def imu_band_table() -> None:
    """Per preset and triad: the band's processes, the τ of the theoretical floor and
    where the curve is within 5 % of 0.664 B."""
    print("| preset, triad | J | T_j | τ of the floor (theory) | flat within 5 % for τ in |")
    print("| --- | --- | --- | --- | --- |")
    grid = np.logspace(-3, 7, 4001)
    for grade in ("mems", "tactical"):
        for triad in ("gyro", "accel"):
            t = getattr(getattr(ImuModelParams, grade)(), triad)
            band, F = t.gm_band, FLICKER_FACTOR * t.bias_instability
            _, tau_min = allan_floor(t.noise_density, t.gm_sigma, band, t.random_walk)
            a = allan_deviation_model(grid, t.noise_density, t.gm_sigma, band, t.random_walk)
            flat = grid[a <= 1.05 * F]
            print(f"| {grade} {triad} | {len(band)} | {band[0]:.3g} … {band[-1]:.3g} s | "
                  f"{tau_min:.3g} s | {flat[0]:.3g} … {flat[-1]:.3g} s |")


def main() -> None:
    strat, uniform = WaterColumn(**HADAL), WaterColumn(rho_surface=1025.0)
    p6, u6 = float(strat.pressure(6000.0)), float(uniform.pressure(6000.0))
    print(f"pressure at 6,000 m: pycnocline {p6:,.3f} Pa, uniform 1025 kg/m3 {u6:,.3f} Pa, "
          f"difference {(p6 - u6) / 1e3:,.1f} kPa")
    b0 = igrf_field_ned(LAT, LON, YEAR)
    print(f"igrf14 at {LAT} N {LON} E, {YEAR}: {angles(b0)}")
    print(f"igrf14_dipole there: {angles(dipole_field_ned(LAT, LON, 0.0, YEAR))}")
    ref = igrf_at(LAT, LON, 0.0)
    for label, ned in (("10 km north", (10_000.0, 0.0, 0.0)), ("10 km east", (0.0, 10_000.0, 0.0)),
                       ("3 km deep", (0.0, 0.0, 3_000.0))):
        lat, lon, h = (float(np.ravel(x)[0]) for x in ned_to_geodetic(np.array([ned]), LAT, LON))
        d = igrf_at(lat, lon, h / 1e3) - ref
        print(f"igrf14 change over {label}: |dB| {np.linalg.norm(d):.0f} nT "
              f"(total field {np.linalg.norm(d + ref) - np.linalg.norm(ref):+.0f} nT)")
    imu_band_table()


if __name__ == "__main__":
    main()
