"""Water optics per colour channel: beam attenuation c = a + b, scattering b, the
volume scattering function β(ψ), down-welling light, and the named water types
(docs/deepsea-camera.md, "Water").

Call order::

    w = water_type("jerlov_IB")                 # or WaterOptics(...) for measured values
    w.c, w.b                                    # (3,) m^-1, channels (R, G, B)
    w.beta(cos_psi)                             # (..., 3) sr^-1 m^-1
    w.downwelling(depth_m, surface_irradiance)  # (..., 3), same unit as the irradiance

**Channels.** A camera channel is represented by one wavelength: R 600 nm, G 550 nm,
B 450 nm (narrow-band: the camera's spectral response is not integrated; see the
limits in the docs).

**Presets** are built from a bio-optical model of three constituents, each from a
published relation:

* pure sea water: absorption a_w at 600/550/450 nm = 0.2224, 0.0565, 0.00922 m^-1
  (Pope & Fry 1997, Appl. Opt. 36(33):8710, their table); molecular scattering
  b_w(λ) = 0.00288 (λ/500)^-4.32 m^-1 (Morel 1974, sea water, as in Mobley 1994,
  "Light and Water", §3.8); its phase function 0.06225 (1 + 0.835 cos²ψ) sr^-1;
* phytoplankton (chlorophyll C, mg m^-3): b_p(λ) = 0.30 C^0.62 (550/λ) m^-1
  (Gordon & Morel 1983); a_p(λ) = 0.06 A(λ) C^0.65 m^-1 (Prieur & Sathyendranath
  1981, Morel 1991) with the normalised specific absorption A(450, 550, 600) =
  (0.95, 0.25, 0.20) -- rounded values of their curve (A(440) = 1), approximate;
  particle phase function Henyey-Greenstein with g = 0.924, the usual one-parameter
  fit of Petzold's average particle phase function (Mobley 1994, §3.8);
* CDOM: a_g(λ) = a_g(440) exp(-0.014 (λ - 440)) (Bricaud, Morel & Prieur 1981);
* mineral particles (coastal types only): b_m(λ) = b_m(550) (550/λ)^0.5,
  a_m(λ) = 0.05 b_m(550) exp(-0.0123 (λ - 440)) (slope of Babin et al. 2003).

The constituent amounts per Jerlov type (``JERLOV``) are this module's choice: the
chlorophyll of the oceanic types follows the range of Solonenko & Mobley (2015,
Appl. Opt. 54(17):5392), who fitted IOPs to Jerlov's K_d spectra; their table itself
was not available when this was written, so the values are an approximation that
keeps the types' order and rough magnitude (green c from ~0.06 m^-1 for type I to
~2.5 m^-1 for coastal 9). Give measured c and b with ``WaterOptics`` when you have them.

**Down-welling light** E_d(z) = E_d(0) exp(-K_d z), K_d ≈ (a + b_b)/μ_d with
b_b = 0.5 b_w + 0.0183 b_p (Petzold's particle backscatter ratio) and μ_d = 0.9 (sun
near the zenith; Kirk 1984). At hadal depth exp(-K_d z) underflows: zero.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

import numpy as np

WAVELENGTHS_NM = np.array([600.0, 550.0, 450.0])
"""The wavelength standing for each channel (R, G, B), nm."""
A_WATER = np.array([0.2224, 0.0565, 0.00922])
"""Pure-water absorption at WAVELENGTHS_NM, m^-1 (Pope & Fry 1997)."""
B_WATER = 0.00288 * (WAVELENGTHS_NM / 500.0) ** -4.32
"""Pure-sea-water molecular scattering, m^-1 (Morel 1974)."""
A_PHYTO_SHAPE = np.array([0.20, 0.25, 0.95])
"""Normalised chlorophyll-specific absorption A(λ) at 600, 550, 450 nm (A(440) = 1)."""
HG_G = 0.924
"""Henyey-Greenstein asymmetry of the particle phase function."""
MU_D = 0.9
"""Mean cosine of the down-welling light."""


@dataclass(frozen=True)
class WaterOptics:
    """Inherent optical properties of homogeneous water, per channel (R, G, B)."""

    name: str
    absorption_per_m: tuple[float, float, float]
    """a, m^-1."""
    particle_scattering_per_m: tuple[float, float, float]
    """b_p: scattering by particles (Henyey-Greenstein phase function), m^-1."""
    molecular_scattering_per_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """b_w: scattering by the water itself (Rayleigh-like phase function), m^-1."""
    g: float = HG_G
    """Henyey-Greenstein asymmetry parameter of the particles."""
    source: str = ""
    """Where the numbers come from."""

    def __post_init__(self) -> None:
        for key in ("absorption_per_m", "particle_scattering_per_m", "molecular_scattering_per_m"):
            v = getattr(self, key)
            if len(v) != 3 or not all(math.isfinite(x) and x >= 0 for x in v):
                raise ValueError(f"water {self.name!r}: {key} must be 3 finite numbers >= 0 (R, G, B)")
        if not -1 < self.g < 1:
            raise ValueError(f"water {self.name!r}: g must be in (-1, 1)")

    @property
    def a(self) -> np.ndarray:
        return np.asarray(self.absorption_per_m, float)

    @property
    def b(self) -> np.ndarray:
        """Total scattering b = b_p + b_w, m^-1."""
        return np.asarray(self.particle_scattering_per_m, float) + np.asarray(
            self.molecular_scattering_per_m, float)

    @property
    def c(self) -> np.ndarray:
        """Beam attenuation c = a + b, m^-1."""
        return self.a + self.b

    @property
    def b_b(self) -> np.ndarray:
        """Backscattering coefficient, m^-1."""
        bp = np.asarray(self.particle_scattering_per_m, float)
        bw = np.asarray(self.molecular_scattering_per_m, float)
        return 0.5 * bw + 0.0183 * bp

    @property
    def k_d(self) -> np.ndarray:
        """Diffuse attenuation of down-welling irradiance, m^-1."""
        return (self.a + self.b_b) / MU_D

    def beta(self, cos_psi) -> np.ndarray:
        """Volume scattering function β(ψ) = b_p p_HG(ψ) + b_w p_w(ψ), (..., 3) sr^-1 m^-1;
        ψ the angle between the light's direction of travel and the scattered ray."""
        mu = np.asarray(cos_psi, float)[..., None]
        g = self.g
        p_hg = (1 - g * g) / (4 * np.pi * (1 + g * g - 2 * g * mu) ** 1.5)
        p_w = 0.06225 * (1 + 0.835 * mu * mu)
        return (np.asarray(self.particle_scattering_per_m, float) * p_hg
                + np.asarray(self.molecular_scattering_per_m, float) * p_w)

    def downwelling(self, depth_m, surface_irradiance) -> np.ndarray:
        """E_d(z) = E_d(0) exp(-K_d z), (..., 3); zero above no light."""
        z = np.maximum(np.asarray(depth_m, float), 0.0)[..., None]
        return np.asarray(surface_irradiance, float) * np.exp(-self.k_d * z)


def bio_optical(name: str, chl_mg_m3: float, cdom_440_per_m: float = 0.0,
                mineral_550_per_m: float = 0.0, source: str = "") -> WaterOptics:
    """Water from constituent amounts (module docstring): chlorophyll C (mg m^-3),
    CDOM absorption at 440 nm and mineral scattering at 550 nm (m^-1)."""
    lam = WAVELENGTHS_NM
    a = (A_WATER + 0.06 * A_PHYTO_SHAPE * chl_mg_m3 ** 0.65 * (chl_mg_m3 > 0)
         + cdom_440_per_m * np.exp(-0.014 * (lam - 440.0))
         + 0.05 * mineral_550_per_m * np.exp(-0.0123 * (lam - 440.0)))
    bp = 0.30 * chl_mg_m3 ** 0.62 * (550.0 / lam) + mineral_550_per_m * (550.0 / lam) ** 0.5
    return WaterOptics(name, tuple(a), tuple(bp), tuple(B_WATER), HG_G, source)


_SRC = ("bio-optical model of water.py (Pope & Fry 1997; Morel 1974; Gordon & Morel 1983; "
        "Prieur & Sathyendranath 1981; Bricaud et al. 1981); amounts approximate, after "
        "Solonenko & Mobley 2015")
JERLOV: dict[str, tuple[float, float, float]] = {
    # name: (chlorophyll mg m^-3, CDOM a_g(440) m^-1, mineral b_m(550) m^-1)
    "jerlov_I": (0.01, 0.0, 0.0),
    "jerlov_IA": (0.05, 0.005, 0.0),
    "jerlov_IB": (0.1, 0.01, 0.0),
    "jerlov_II": (0.5, 0.03, 0.0),
    "jerlov_III": (1.25, 0.06, 0.0),
    "coastal_1": (1.5, 0.1, 0.1),
    "coastal_3": (2.0, 0.2, 0.3),
    "coastal_5": (3.0, 0.35, 0.6),
    "coastal_7": (4.0, 0.6, 1.1),
    "coastal_9": (5.0, 1.0, 2.0),
}
"""Constituents of the named water types (module docstring)."""

PRESETS: dict[str, WaterOptics] = {n: bio_optical(n, *v, source=_SRC) for n, v in JERLOV.items()}
PRESETS["pure_sea_water"] = WaterOptics("pure_sea_water", tuple(A_WATER), (0.0, 0.0, 0.0),
                                        tuple(B_WATER), HG_G, "Pope & Fry 1997; Morel 1974")
PRESETS["none"] = WaterOptics("none", (0.0,) * 3, (0.0,) * 3, (0.0,) * 3, HG_G,
                              "no water (c = b = 0): the in-air render")

WATER_TYPES = tuple(PRESETS)


def water_type(name: str) -> WaterOptics:
    """The named preset; ValueError with the closest names for an unknown one."""
    try:
        return PRESETS[name]
    except KeyError:
        close = difflib.get_close_matches(name, WATER_TYPES, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"unknown water type {name!r}{hint}; known: {', '.join(WATER_TYPES)}, "
                         "or 'custom' with attenuation_per_m and scattering_per_m") from None
