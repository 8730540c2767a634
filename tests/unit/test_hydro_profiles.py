"""Vehicle profiles for the hydrodynamics FMU: plain data that names only FMU
parameters, with positive-magnitude coefficients and sane thruster geometry."""

from __future__ import annotations

import importlib.util
import sys
import tomllib

import numpy as np
import pytest

from conftest import ROOT

PROFILES = sorted((ROOT / "fmus" / "hydrodynamics" / "profiles").glob("*.toml"))


def _table():
    spec = importlib.util.spec_from_file_location("build_fmus", ROOT / "fmus" / "build_fmus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {v[0]: v for v in mod.VARIABLES}


def test_hydro_four_profiles_exist():
    assert {p.stem for p in PROFILES} >= {"bluerov2_heavy", "remus100", "finsrov", "hadal_small"}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_hydro_profile_is_valid(path):
    table = _table()
    data = tomllib.loads(path.read_text())
    params = data["parameters"]
    for name, value in params.items():
        assert name in table and table[name][2] == "parameter", f"{path.name}: unknown parameter {name}"
        assert np.isfinite(value)
    mesh = params.get("backend") == 2
    if mesh:  # buoyancy from the mesh (fmus/meshes.py), damping from its faces
        sys.path.insert(0, str(ROOT / "fmus"))
        import meshes

        tris = meshes.triangles(params["mesh"])[0] * params.get("mesh_scale", 1.0)
        dots = np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2]))
        volume = float(dots.sum()) / 6
        assert "volume" not in params and "D2_u" not in params, "unused by the mesh backend"
    else:
        volume = params["volume"]
    assert params["mass"] > 0 and volume > 0
    for k in ("A",) if mesh else ("A", "D1", "D2"):
        for c in "uvwpqr":
            assert params[f"{k}_{c}"] >= 0, f"{k}_{c} must be a positive magnitude"
    # buoyancy within 5 % of weight: a trimmed vehicle
    W, B = params["mass"], params["rho_surface"] * volume
    assert abs(B - W) / W < 0.05
    assert data.get("thrusters") or mesh
    for t in data.get("thrusters", []):
        assert len(t["position"]) == 3
        assert np.linalg.norm(t["direction"]) == pytest.approx(1.0)
        assert t["max_forward_n"] > 0 and t["max_reverse_n"] > 0


def test_hydro_bluerov2_matches_published_values():
    p = tomllib.loads((ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml").read_text())["parameters"]
    assert (p["mass"], p["volume"], p["Ixx"], p["Iyy"], p["Izz"]) == (13.5, 0.0134, 0.26, 0.23, 0.37)
    assert [p[f"A_{c}"] for c in "uvwpqr"] == [6.36, 7.12, 18.68, 0.189, 0.135, 0.222]
    assert [p[f"D1_{c}"] for c in "uvwpqr"] == [13.7, 0, 33.0, 0, 0.8, 0]
    assert [p[f"D2_{c}"] for c in "uvwpqr"] == [141, 217, 190, 1.19, 0.47, 1.5]
    assert p["z_b"] == -0.01  # CB 1 cm above the CG (z down)
