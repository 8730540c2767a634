"""The table "Mesh profiles" of docs/hydrodynamics.md: for each mesh profile
(fmus/hydrodynamics/profiles/*_mesh.toml), the mesh's enclosed volume and centroid
(FMU outputs mesh_volume, mesh_x_b … mesh_z_b) and the damping the mesh backend gives at
1 m/s in surge, sway and heave and at 1 rad/s in yaw (the FMU's hydro_* wrench at the
initial state, gravity off), beside the Fossen profile's quadratic + linear damping
D2 + D1 at the same speed. Run: python docs/figures/mesh_profiles.py"""

from __future__ import annotations

from pathlib import Path

from moonpool.components.dynamics.trials import initialized
from moonpool.components.sdk import tomlfile

ROOT = Path(__file__).resolve().parents[2]
FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"
PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"
OUT = ["hydro_X", "hydro_Y", "hydro_Z", "hydro_K", "hydro_M", "hydro_N",
       "mesh_volume", "mesh_x_b", "mesh_y_b", "mesh_z_b"]


def evaluate(params: dict) -> list[float]:
    """The outputs OUT right after initialization with these start values."""
    with initialized(FMU, params, "mesh") as (inst, refs):
        return list(inst.getFloat64([refs[n].valueReference for n in OUT]))


def main() -> None:
    print("| profile | volume (m³) | centroid (m) | surge 1 m/s (N) | sway 1 m/s (N) | "
          "heave 1 m/s (N) | yaw 1 rad/s (N·m) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for mesh_name, fossen_name in (("bluerov2_heavy_mesh", "bluerov2_heavy"),
                                   ("remus100_mesh", "remus100")):
        p = tomlfile.loads((PROFILES / f"{mesh_name}.toml").read_text())["parameters"]
        f = tomlfile.loads((PROFILES / f"{fossen_name}.toml").read_text())["parameters"]
        cells = []
        for axis in "uvwr":
            out = evaluate({**p, "g": 0.0, "init_d": 50.0, f"init_{axis}": 1.0})
            k = "uvwpqr".index(axis)
            cells.append(f"{-out[k]:.3g} ({f[f'D1_{axis}'] + f[f'D2_{axis}']:.3g})")
            geo = out[6:]
        print(f"| `{mesh_name}` | {geo[0]:.4g} | ({geo[1]:.3g}, {geo[2]:.2g}, {geo[3]:.3g}) | "
              + " | ".join(cells) + " |")
    print("\nIn brackets: the Fossen profile's D1 + D2 at the same speed.")


if __name__ == "__main__":
    main()
