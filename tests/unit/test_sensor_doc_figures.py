"""The figures docs/sensors.md quotes for the pressure sensor and the magnetometer are
the models' own (issue 23 found five that were not): each is recomputed here from the
code, by the same calls as docs/figures/sensor_figures.py, and looked up in the page."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from moonpool.components.sensors import magnetometer
from moonpool.components.sensors.environment import WaterColumn
from moonpool.components.sensors.magnetometer import dipole_field_ned, igrf_field_ned

DOC = (Path(__file__).resolve().parents[2] / "docs" / "sensors.md").read_text(encoding="utf-8")
HADAL = dict(rho_surface=1025.0, pycnocline_depth=500.0, pycnocline_width=1000.0,
             pycnocline_delta_rho=3.075)


def _total_and_inclination(b) -> tuple[float, float]:
    n, e, d = (float(x) for x in np.ravel(b)[:3])
    return math.sqrt(n * n + e * e + d * d), math.degrees(math.atan2(d, math.hypot(n, e)))


def test_pressure_difference_to_uniform_water():
    diff = float(WaterColumn(**HADAL).pressure(6000.0) - WaterColumn().pressure(6000.0))
    assert f"{diff / 1e3:.0f} kPa" in DOC  # 166 kPa
    assert "90 kPa" not in DOC


def test_igrf_and_dipole_figures():
    total, inc = _total_and_inclination(igrf_field_ned(45.0, 0.0, 2025.0))
    assert f"total {total:,.0f} nT" in DOC and f"full IGRF: {total:,.0f} nT, {inc:.1f}°" in DOC
    dtotal, dinc = _total_and_inclination(dipole_field_ned(45.0, 0.0, 0.0, 2025.0))
    assert f"|B| = {dtotal:,.0f} nT and I = {dinc:.1f}°" in DOC


def test_igrf_change_over_the_area_and_the_default():
    """82 nT over 10 km north, computed with ppigrf at the displaced geodetic point."""
    import datetime

    import ppigrf

    from moonpool.components.sensors.gnss import ned_to_geodetic

    def field(lat, lon, h_km):
        be, bn, bu = ppigrf.igrf(lon, lat, h_km, datetime.datetime(2025, 1, 1))
        return np.array([np.ravel(bn)[0], np.ravel(be)[0], -np.ravel(bu)[0]], dtype=float)

    lat, lon, h = (float(np.ravel(x)[0]) for x in ned_to_geodetic(np.array([[1e4, 0.0, 0.0]]),
                                                                  45.0, 0.0))
    change = float(np.linalg.norm(field(lat, lon, h / 1e3) - field(45.0, 0.0, 0.0)))
    assert f"{change:.0f} nT over 10 km north" in DOC
    assert "by default (``igrf14``) the full IGRF-14" in magnetometer.__doc__
    assert magnetometer.MagnetometerModel().field_model == "igrf14"
