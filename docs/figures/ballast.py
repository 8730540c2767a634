"""The ballast and buoyancy budget of the HSV with its arm (docs/missions.md,
"Ballast and buoyancy"), computed from the vehicle profiles and the arm's model:

    python docs/figures/ballast.py

Prints a Markdown table: at the surface and at 6,000 m, the hull's buoyancy B(d) and
weight W (hadal_small.toml, with the FMU's water column and hull compression, through
control.fossen's model of the FMU), the arm's wet weight and moment (manipulation.arm,
folded, in still water), the trim foam's lift and moment (hadal_small_arm.toml minus
hadal_small.toml), and the net force and pitch moment; then the sea water's density at
6,000 m by TEOS-10 (gsw, the world's water column) beside the FMU's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from moonpool.components.control.fossen import FossenModel
from moonpool.components.manipulation.component import ArmComponent
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.tomlfile import loads
from moonpool.components.world.scenefile import read_scene_file
from moonpool.v1 import lifecycle_pb2 as lc, vehicle_pb2

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "fmus/hydrodynamics/profiles"
G = 9.80665


def arm_reaction(rho: float) -> tuple[float, float]:
    """(Z force, pitch moment M) of the folded arm on the vehicle, N and N·m (body FRD)."""
    host = ComponentHost(ArmComponent())
    host.configure(lc.Configure(instance_name="arm", seed=0, parameters=[]))
    host.initialize(0)
    state = vehicle_pb2.VehicleState(water_density_kgpm3=rho)
    state.orientation.w = 1.0
    out = None
    for k in range(100):
        out = {o.port: o.message for o in host.step(k * 10_000_000, 10_000_000,
                                                     {"vehicle": state})}
    w = out["wrench"]
    return w.force_n.z, w.torque_nm.y


def main() -> None:
    hull = FossenModel(loads((PROFILES / "hadal_small.toml").read_text())["parameters"])
    pa = loads((PROFILES / "hadal_small_arm.toml").read_text())["parameters"]
    trimmed = FossenModel(pa)
    print("| quantity | surface | 6,000 m |")
    print("| --- | --- | --- |")
    rows: dict[str, list[str]] = {}
    for d in (0.0, 6000.0):
        rho = float(hull.density(d))
        b_hull, w_hull = float(hull.buoyancy(d)), float(hull.W)
        b_all, w_all = float(trimmed.buoyancy(d)), float(trimmed.W)
        fz, m_arm = arm_reaction(rho)
        lift = (b_all - b_hull) - (w_all - w_hull)
        m_trim = float(pa["x_b"]) * b_all - float(pa["x_g"]) * w_all  # level: x_b B − x_g W
        net = b_all - w_all - fz
        for key, value in (
                ("water density (FMU's column) [kg/m³]", f"{rho:.2f}"),
                ("hull volume V(d) [m³] (hadal_small_arm)", f"{float(trimmed.volume(d)):.5f}"),
                ("HSV alone: B − W [N]", f"{b_hull - w_hull:+.2f}"),
                ("arm, folded: wet weight [N] / pitch moment [N·m]", f"{fz:.2f} / {m_arm:+.2f}"),
                ("trim foam: net lift [N]", f"{lift:+.2f}"),
                ("with arm and foam: B − W − arm [N] (> 0 floats)", f"{net:+.2f}"),
                ("pitch moment, level: x_b B − x_g W + arm [N·m]", f"{m_trim + m_arm:+.2f}")):
            rows.setdefault(key, []).append(value)
    for key, values in rows.items():
        print(f"| {key} | {' | '.join(values)} |")
    teos = read_scene_file(ROOT / "scenes/trench_floor/scene.toml").water
    rho_teos = float(np.asarray(teos.density_kgpm3(6000.0)).ravel()[0])
    print(f"\nTEOS-10 (gsw) in situ density at 6,000 m in scenes/trench_floor's water: "
          f"{rho_teos:.1f} kg/m³ against the FMU's {float(hull.density(6000.0)):.1f} kg/m³ "
          "(the FMU's column has the seed-000 pycnocline but no compressibility).")


if __name__ == "__main__":
    main()
