"""Soil presets for the terramechanics component (docs/terramechanics.md, "Soils").

Every value is SI (``phi`` in radians). Where a value is not taken from a source it
says so: treat those as assumptions of the right order, to be replaced by measured
values for a given site.

``soil_from(name, overrides)`` builds a :class:`~.bekker.Soil` from a preset and a
table of overrides in the rig's units (``c_pa``, ``phi_deg``, ``k_c``, ``k_phi``,
``n``, ``K_m``, ``K_y_m``), refusing unknown names and bad values by name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..sdk.errors import ParameterError
from .bekker import Soil

TOYOURA_SAND = Soil(
    name="toyoura_sand",
    c=800.0,                       # Pa
    phi=math.radians(37.2),        # rad
    k_c=1.37e3,                    # N/m^(n+1) = N/m^2 for n = 1
    k_phi=8.14e5,                  # N/m^(n+2) = N/m^3 for n = 1
    n=1.0,
    K=0.025,                       # m: ASSUMPTION (typical of sands)
    K_y=0.025,                     # m: ASSUMPTION (taken equal to K)
    source="c, phi, k_c, k_phi, n: Toyoura sand as used by Ishigami et al. (2007, J. Field "
           "Robotics 24(3)); K, K_y: assumption (order of published values for sands)",
)

DEEP_SEA_CLAY = Soil(
    name="deep_sea_clay",
    c=3.0e3,                       # Pa: undrained strength of surficial abyssal clay, a few kPa
    phi=math.radians(4.0),         # rad: ASSUMPTION (nearly undrained, small friction)
    k_c=3.0e3,                     # N/m^2 (n = 1): ASSUMPTION, see below
    k_phi=4.0e4,                   # N/m^3 (n = 1): ASSUMPTION, see below
    n=1.0,                         # ASSUMPTION
    K=0.04,                        # m: ASSUMPTION (soft clays shear over a few cm)
    K_y=0.04,                      # m: ASSUMPTION
    source="c: order of the shear strength measured in the top decimetres of nodule-field "
           "clay (Choi et al. 2011, Ocean Eng. 38); k_c, k_phi, n, phi, K: assumptions chosen "
           "so that ~5 kPa of ground pressure gives ~0.1 m of sinkage, the order reported for "
           "tracked miners on such sediment (Xu, Rao & Ma 2018, J. Oceanol. Limnol. 36(2))",
)

PRESETS: dict[str, Soil] = {s.name: s for s in (TOYOURA_SAND, DEEP_SEA_CLAY)}
"""Preset name -> Soil."""

OVERRIDES: dict[str, tuple[str, Any]] = {
    # rig key: (Soil field, conversion from the rig's unit to SI)
    "c_pa": ("c", float),
    "phi_deg": ("phi", math.radians),
    "k_c": ("k_c", float),
    "k_phi": ("k_phi", float),
    "n": ("n", float),
    "K_m": ("K", float),
    "K_y_m": ("K_y", float),
}
"""Keys accepted in ``soil_parameters`` (units: Pa, degrees, N/m^(n+1), N/m^(n+2), –, m, m)."""


def soil_from(name: str, overrides: Mapping[str, Any] | None = None) -> Soil:
    """The preset ``name`` with ``overrides`` applied (rig units); "custom" starts from
    nothing, so every key must be given. Raises ParameterError naming the bad key."""
    overrides = dict(overrides or {})
    unknown = sorted(k for k in overrides if k not in OVERRIDES)
    if unknown:
        raise ParameterError(
            f"soil_parameters: unknown key(s) {', '.join(unknown)}",
            fix=f"use only {', '.join(OVERRIDES)}",
        )
    for key, value in overrides.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(f"soil_parameters.{key} must be a number, got {value!r}",
                                 fix=f"write soil_parameters.{key} as a number")
    if "K_y_m" in overrides and not overrides["K_y_m"] > 0:
        raise ParameterError(
            f"soil_parameters.K_y_m = {overrides['K_y_m']!r} is not allowed (it must be > 0 m)",
            fix="give K_y_m a positive value in metres, or leave it out to use K_m",
        )
    if name == "custom":
        missing = [k for k in OVERRIDES if k not in overrides and k != "K_y_m"]
        if missing:
            raise ParameterError(
                f"soil = \"custom\" needs every soil parameter; missing {', '.join(missing)}",
                fix="give them in soil_parameters, or start from a preset: "
                    + ", ".join(PRESETS),
            )
        values: dict[str, Any] = {"name": "custom", "source": "rig parameters", "K_y": 0.0}
    elif name in PRESETS:
        base = PRESETS[name]
        values = {f: getattr(base, f) for f in
                  ("name", "c", "phi", "k_c", "k_phi", "n", "K", "K_y", "source")}
        if overrides:
            values["source"] = f"{base.source}; overridden in the rig: {', '.join(overrides)}"
    else:
        raise ParameterError(f"soil '{name}' is not a preset",
                             fix=f"use one of {', '.join(PRESETS)} or \"custom\"")
    for key, value in overrides.items():
        field, convert = OVERRIDES[key]
        values[field] = convert(value)
    try:
        return Soil(**values)
    except ParameterError as exc:
        # Name the rig key (phi_deg, K_m, ...) rather than the internal field.
        rig_key = {f: k for k, (f, _) in OVERRIDES.items()}
        for field, key in rig_key.items():
            if f": {field} = " in exc.message:
                given = overrides.get(key, None)
                shown = given if given is not None else "(preset value)"
                raise ParameterError(
                    f"soil_parameters.{key} = {shown!r} is not allowed "
                    f"({exc.message.split(' is not allowed; ')[-1]})",
                    fix=f"correct soil_parameters.{key}",
                ) from None
        raise
