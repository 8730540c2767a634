"""The water column (components/world/environment.py): TEOS-10 through gsw, the
three-layer temperature/salinity profile and the current profile."""

from __future__ import annotations

import gsw
import numpy as np
import pytest

from moonpool.components.world.environment import P_ATM_PA, WaterColumn

LAT, LON = 11.35, 142.2


def uniform(salinity, temperature, **kw) -> WaterColumn:
    return WaterColumn(latitude_deg=LAT, longitude_deg=LON, surface_temperature_c=temperature,
                       deep_temperature_c=temperature, surface_salinity_psu=salinity,
                       deep_salinity_psu=salinity, **kw)


def test_sound_speed_and_density_at_6000_m_equal_gsw_computed_independently():
    w = uniform(35.0, 2.0)
    p = float(w.sea_pressure_dbar(6000.0))  # the column's own (tested below)
    sa = gsw.SA_from_SP(35.0, p, LON, LAT)
    ct = gsw.CT_from_t(sa, 2.0, p)
    assert float(w.sound_speed_mps(6000.0)) == pytest.approx(
        float(gsw.sound_speed(sa, ct, p)), abs=1e-9)
    assert float(w.density_kgpm3(6000.0)) == pytest.approx(float(gsw.rho(sa, ct, p)), abs=1e-9)
    assert float(w.pressure_pa(6000.0)) == pytest.approx(p * 1e4 + P_ATM_PA, abs=1e-6)
    # and plausible against the literature (deep Pacific: ~1,560 m/s, ~1,055 kg/m³, ~61 MPa)
    assert 1550.0 < float(w.sound_speed_mps(6000.0)) < 1565.0
    assert 1050.0 < float(w.density_kgpm3(6000.0)) < 1060.0
    assert 60.0e6 < float(w.pressure_pa(6000.0)) < 62.0e6


@pytest.mark.parametrize("salinity, temperature", [(35.0, 2.0), (0.0, 20.0), (34.0, 28.0)])
def test_pressure_is_the_hydrostatic_integral_of_the_columns_own_density(salinity, temperature):
    """dp/dz = rho(SA, CT, p) g(z), integrated independently (solve_ivp, rtol 1e-11)."""
    from scipy.integrate import solve_ivp

    w = uniform(salinity, temperature)

    def dpdz(z, y):
        sa = gsw.SA_from_SP(salinity, y[0], LON, LAT)
        rho = gsw.rho(sa, gsw.CT_from_t(sa, temperature, y[0]), y[0])
        return [rho * gsw.grav(LAT, y[0]) / 1e4]

    depths = [0.5, 2.0, 100.0, 6000.0]
    ref = solve_ivp(dpdz, (0.0, 6000.0), [0.0], t_eval=depths, rtol=1e-11, atol=1e-9).y[0]
    got = w.sea_pressure_dbar(depths)
    np.testing.assert_allclose(got * 1e4, ref * 1e4, atol=2.0)  # Pa, at up to 61 MPa
    if salinity == 0.0:
        # gsw.p_from_z assumes TEOS-10's standard ocean: 3 % high in fresh water.
        assert gsw.p_from_z(-2.0, LAT) / got[1] == pytest.approx(1.03, abs=0.01)


def test_surface_pressure_is_one_atmosphere_and_fresh_water_is_fresh():
    fresh = uniform(0.0, 20.0)
    assert float(fresh.pressure_pa(0.0)) == pytest.approx(P_ATM_PA, abs=1e-6)
    assert float(fresh.pressure_pa(-1.0)) == pytest.approx(P_ATM_PA, abs=1e-6)  # above the water
    assert float(fresh.density_kgpm3(0.0)) == pytest.approx(998.2, abs=0.1)
    assert float(fresh.sound_speed_mps(0.0)) == pytest.approx(1482.3, abs=0.5)


def test_pressure_grows_as_the_weight_of_the_column():
    w = uniform(35.0, 10.0)
    d = np.linspace(0.0, 100.0, 11)
    dp = np.diff(w.pressure_pa(d))
    rho = w.density_kgpm3(d[:-1] + 5.0)
    np.testing.assert_allclose(dp / (rho * 10.0), 9.78, rtol=3e-3)  # g at 11° N


def test_three_layer_profile():
    w = WaterColumn(surface_temperature_c=25.0, surface_salinity_psu=34.0,
                    mixed_layer_depth_m=50.0, thermocline_bottom_m=150.0,
                    deep_temperature_c=5.0, deep_salinity_psu=35.0,
                    deep_temperature_gradient_c_per_m=-1e-3)
    np.testing.assert_allclose(w.temperature_c([0.0, 50.0, 100.0, 150.0, 1150.0]),
                               [25.0, 25.0, 15.0, 5.0, 4.0])
    np.testing.assert_allclose(w.salinity_psu([0.0, 49.0, 100.0, 150.0, 4000.0]),
                               [34.0, 34.0, 34.5, 35.0, 35.0])
    step = WaterColumn(mixed_layer_depth_m=20.0, thermocline_bottom_m=20.0,
                       surface_temperature_c=10.0, deep_temperature_c=4.0)
    np.testing.assert_allclose(step.temperature_c([19.9, 20.0, 20.1]), [10.0, 10.0, 4.0])


def test_current_uniform_and_piecewise_linear():
    assert WaterColumn(uniform_current_ned_mps=(0.1, -0.2, 0.0)).current_ned_mps(
        [0.0, 3000.0]).tolist() == [[0.1, -0.2, 0.0], [0.1, -0.2, 0.0]]
    w = WaterColumn(current_profile=((10.0, (0.0, 0.4, 0.0)), (110.0, (0.2, 0.0, 0.0))))
    np.testing.assert_allclose(w.current_ned_mps([0.0, 10.0, 60.0, 110.0, 500.0]),
                               [[0, 0.4, 0], [0, 0.4, 0], [0.1, 0.2, 0], [0.2, 0, 0], [0.2, 0, 0]])
    assert w.current_ned_mps(60.0).shape == (1, 3)


def test_bad_columns_are_refused():
    with pytest.raises(ValueError, match="order the layers"):
        WaterColumn(mixed_layer_depth_m=100.0, thermocline_bottom_m=50.0)
    with pytest.raises(ValueError, match="sort the knots"):
        WaterColumn(current_profile=((10.0, (0, 0, 0)), (5.0, (0, 0, 0))))
    with pytest.raises(ValueError, match="latitude"):
        WaterColumn(latitude_deg=91.0)
