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

**Presets.** Each Jerlov type's absorption comes from Jerlov's own measurements, its
scattering from a bio-optical model of its constituents:

* **absorption** a(λ) = μ_d K_d(λ) - b_b(λ), with K_d the type's diffuse attenuation
  of down-welling irradiance measured by Jerlov (1976, *Marine Optics*, 2nd ed.,
  Table XXVII, p. 135: ``JERLOV_KD``), linearly interpolated to the channel's
  wavelength, and μ_d, b_b as below (the inverse of K_d ≈ (a + b_b)/μ_d, Kirk 1984),
  never below pure water's a_w (Jerlov I's red and green, IA's and IB's red: e.g.
  0.9 · 0.235 < a_w(600) = 0.2224, a μ_d of 0.9 is too low there; a_w is used, K_d
  then up to 6 % above Jerlov's). The preset's K_d, hence its daylight, is Jerlov's
  at every other channel;
* **scattering** from the constituents of ``JERLOV`` through published relations:
  pure sea water b_w(λ) = 0.00288 (λ/500)^-4.32 m^-1 (Morel 1974, as in Mobley 1994,
  "Light and Water", §3.8) with the phase function 0.06225 (1 + 0.835 cos²ψ) sr^-1;
  phytoplankton (chlorophyll C, mg m^-3) b_p(λ) = 0.30 C^0.62 (550/λ) m^-1 (Gordon &
  Morel 1983), particle phase function Henyey-Greenstein with g = 0.924, the usual
  one-parameter fit of Petzold's average particle phase function (Mobley 1994, §3.8);
  minerals (coastal types only) b_m(λ) = b_m(550) (550/λ)^0.5. The amounts (C, b_m)
  per type are this module's estimate (Jerlov's K_d barely constrains scattering:
  b_b is 2 % of b_p), chosen to rise with the types as Jerlov's K_d does; give
  measured c and b with ``WaterOptics`` when you have them.

``bio_optical`` still builds a water from constituent amounts alone (absorption from
Pope & Fry 1997 for pure water, a_w at 600/550/450 nm = 0.2224, 0.0565, 0.00922 m^-1;
phytoplankton a_p(λ) = 0.06 A(λ) C^0.65 after Prieur & Sathyendranath 1981 and Morel
1991 with A(450, 550, 600) = 0.95, 0.25, 0.20; CDOM a_g(λ) = a_g(440) e^(-0.014 (λ -
440)), Bricaud, Morel & Prieur 1981; minerals a_m = 0.05 b_m(550) e^(-0.0123 (λ - 440)),
Babin et al. 2003).

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


JERLOV_KD_WAVELENGTHS_NM = np.arange(400.0, 701.0, 25.0)
"""Wavelengths of Jerlov's table, nm."""
JERLOV_KD: dict[str, tuple[float, ...]] = {
    # Jerlov (1976), Marine Optics, 2nd ed., Table XXVII, p. 135: K_d in m^-1 at
    # 400, 425, ..., 700 nm (the book gives 100 K_d).
    "jerlov_I": (0.027, 0.022, 0.019, 0.018, 0.027, 0.043, 0.063, 0.089, 0.235, 0.305,
                 0.36, 0.42, 0.56),
    "jerlov_IA": (0.038, 0.031, 0.026, 0.025, 0.032, 0.048, 0.067, 0.094, 0.24, 0.31,
                  0.37, 0.43, 0.57),
    "jerlov_IB": (0.051, 0.042, 0.036, 0.033, 0.042, 0.054, 0.072, 0.099, 0.245, 0.315,
                  0.375, 0.435, 0.58),
    "jerlov_II": (0.096, 0.081, 0.068, 0.062, 0.07, 0.076, 0.089, 0.115, 0.26, 0.335,
                  0.4, 0.465, 0.61),
    "jerlov_III": (0.185, 0.16, 0.135, 0.116, 0.115, 0.116, 0.12, 0.148, 0.295, 0.375,
                   0.445, 0.52, 0.66),
    "coastal_1": (0.51, 0.36, 0.25, 0.17, 0.14, 0.13, 0.12, 0.15, 0.3, 0.37, 0.45, 0.51,
                  0.65),
    "coastal_3": (0.78, 0.54, 0.39, 0.29, 0.22, 0.2, 0.19, 0.21, 0.33, 0.4, 0.46, 0.56,
                  0.71),
    "coastal_5": (1.1, 0.78, 0.56, 0.43, 0.36, 0.31, 0.3, 0.33, 0.4, 0.48, 0.54, 0.65,
                  0.8),
    "coastal_7": (1.6, 1.2, 0.89, 0.71, 0.58, 0.49, 0.46, 0.46, 0.48, 0.54, 0.63, 0.78,
                  0.92),
    "coastal_9": (2.4, 1.9, 1.6, 1.23, 0.99, 0.78, 0.63, 0.58, 0.6, 0.65, 0.76, 0.92,
                  1.1),
}
"""Jerlov's diffuse attenuation of down-welling irradiance per water type, m^-1."""

JERLOV: dict[str, tuple[float, float]] = {
    # name: (chlorophyll mg m^-3, mineral b_m(550) m^-1): the scatterers
    "jerlov_I": (0.01, 0.0),
    "jerlov_IA": (0.05, 0.0),
    "jerlov_IB": (0.1, 0.0),
    "jerlov_II": (0.5, 0.0),
    "jerlov_III": (1.25, 0.0),
    "coastal_1": (1.5, 0.1),
    "coastal_3": (2.0, 0.3),
    "coastal_5": (3.0, 0.6),
    "coastal_7": (4.0, 1.1),
    "coastal_9": (5.0, 2.0),
}
"""Scattering constituents of the named water types (module docstring)."""


def jerlov_kd(name: str) -> np.ndarray:
    """Jerlov's K_d of a type at the channels' wavelengths (R, G, B), m^-1."""
    return np.interp(WAVELENGTHS_NM, JERLOV_KD_WAVELENGTHS_NM, JERLOV_KD[name])


def jerlov_water(name: str) -> WaterOptics:
    """The preset of a Jerlov type (module docstring): absorption from Jerlov's K_d,
    scattering from the type's constituents."""
    chl, mineral = JERLOV[name]
    lam = WAVELENGTHS_NM
    bp = 0.30 * chl ** 0.62 * (550.0 / lam) + mineral * (550.0 / lam) ** 0.5
    b_b = 0.5 * B_WATER + 0.0183 * bp
    a = np.maximum(MU_D * jerlov_kd(name) - b_b, A_WATER)
    source = ("absorption from Jerlov (1976) Table XXVII K_d (a = mu_d K_d - b_b); "
              f"scattering from {chl:g} mg/m3 chlorophyll (Gordon & Morel 1983)"
              + (f" and minerals b_m(550) = {mineral:g}/m" if mineral else "")
              + " and sea water (Morel 1974)")
    return WaterOptics(name, tuple(a), tuple(bp), tuple(B_WATER), HG_G, source)


PRESETS: dict[str, WaterOptics] = {n: jerlov_water(n) for n in JERLOV}
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


def presets_table() -> str:
    """The presets as the Markdown table of docs/deepsea-camera.md ("Water"); a test
    keeps the page equal to it (``python -m moonpool.components.vision.water``)."""
    def f3(v) -> str:
        return ", ".join(f"{x:.3f}" for x in v)

    rows = ["| preset | Jerlov K_d (R, G, B) m⁻¹ | chlorophyll mg m⁻³ | minerals b_m(550) m⁻¹ "
            "| a (R, G, B) m⁻¹ | b (R, G, B) m⁻¹ | c (R, G, B) m⁻¹ |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, w in PRESETS.items():
        if name in JERLOV:
            chl, mineral = JERLOV[name]
            rows.append(f"| `{name}` | {f3(jerlov_kd(name))} | {chl:g} | {mineral:g} | "
                        f"{f3(w.a)} | {f3(w.b)} | {f3(w.c)} |")
        else:
            rows.append(f"| `{name}` | – | – | – | {f3(w.a)} | {f3(w.b)} | {f3(w.c)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(presets_table())
