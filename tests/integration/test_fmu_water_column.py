"""One water column (DESIGN.md, "Environment in one place"): the hydrodynamics FMU's
density and hull compression follow a scene's TEOS-10 water column when the fmu
component is given ``water_column`` (components/fmi/mapping.py, the FMU's tabulated
column in fmus/hydrodynamics/model.c)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from moonpool.components.fmi.component import FmuComponent
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.wire import to_parameter_value
from moonpool.components.world.scene import Scene
from moonpool.v1 import lifecycle_pb2 as lc

ROOT = Path(__file__).resolve().parents[2]
TRENCH = ROOT / "scenes/trench_floor/scene.toml"
SIGNALS = {"s": {"type": "moonpool.v1.Signals",
                 "fields": {"rho": "rho", "d": "d", "hydro_Z": "hydro_Z"}}}


def _outputs(fmu: Path, depth: float, **params):
    host = ComponentHost(FmuComponent())
    values = dict(fmu=str(fmu), outputs=SIGNALS,
                  start_values={"init_d": depth, "volume": 0.05, "bulk_modulus": 2.0e9,
                                **params.pop("start_values", {})}, **params)
    host.configure(lc.Configure(instance_name="vehicle", seed=0, parameters=[
        lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in values.items()]))
    (out,) = host.initialize(0)
    return {s.name: s.value for s in out.message.signals}


@pytest.mark.parametrize("version", [3, 2])
def test_the_fmus_density_is_the_scenes_in_situ_density(fmus, version):
    water = Scene.load(TRENCH).environment
    for depth in (0.0, 40.0, 700.0, 3000.0, 6000.0):
        got = _outputs(fmus[version], depth, water_column=str(TRENCH))
        # TEOS-10 in-situ density at that depth, within the table's linear interpolation
        assert got["rho"] == pytest.approx(float(water.density_kgpm3(depth)), abs=0.02)
    # Without it, the profile's own column: 1,000 kg/m^3 at 6,000 m (no compression of
    # the water), 54.8 kg/m^3 less than the trench's water there.
    assert _outputs(fmus[version], 6000.0)["rho"] == pytest.approx(1000.0)


def test_buoyancy_at_depth_uses_the_tabulated_column(fmus):
    """At rest, level, the restoring heave force is W - B = m g - rho(d) g V(d), with
    V(d) = V0 (1 - p_gauge(d)/K) and p_gauge = g * integral of rho over the same knots
    (integrated independently here, numerically)."""
    water = Scene.load(TRENCH).environment
    depths, rho = water.density_knots(32)
    d, g, V0, K = 6000.0, 9.81, 0.05, 2.0e9
    z = np.linspace(0.0, d, 600_001)
    p_gauge = g * np.trapezoid(np.interp(z, depths, rho), z)
    mass = 13.5  # the FMU's default (BlueROV2)
    expected = mass * g - float(np.interp(d, depths, rho)) * g * V0 * (1 - p_gauge / K)
    got = _outputs(fmus[3], d, water_column=str(TRENCH))
    assert got["hydro_Z"] == pytest.approx(expected, rel=1e-9)


def test_two_water_columns_are_refused(fmus, tmp_path):
    with pytest.raises(ParameterError, match="two water columns"):
        _outputs(fmus[3], 10.0, water_column=str(TRENCH), start_values={"water_rho_0": 1000.0})
    with pytest.raises(ParameterError, match="water_column"):
        _outputs(fmus[3], 10.0, water_column=str(tmp_path / "nope.toml"))
