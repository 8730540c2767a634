"""End-effector tracking of seed 003's feed-forward joint control (eq. 4) against a
pure PD, the vehicle held fixed (the arm's base welded to the world).

    python benchmarks/arm_tracking.py

Moves: minimum-jerk joint trajectories between IK solutions of Cartesian points
(arm frame A), durations 1 s and 3 s; no payload; MuJoCo sub-step 1 ms,
semi-implicit Euler. Both controllers have the same K_p = 100 s⁻², K_v = 20 s⁻¹
(the PD's scaled by the nominal joint inertia) and the same torque limits; each move
with the wet weight and with gravity off (the PD's error then is the dynamic lag
alone). Error e = |FK(q) − FK(q_d)| (m) over the move and 1 s after it: RMS,
maximum, and final. Prints a Markdown table (docs/arm.md).
"""

from __future__ import annotations

import numpy as np

from moonpool.components.manipulation.arm import ArmGeometry, ArmSim, fk, ik, min_jerk, mjcf

G = ArmGeometry()
WET = 9.80665 * (1 - 1025.0 / 2700.0)
MOVES = [("fold → reach forward-down", (0.25, 0.0, 0.45), (0.50, 0.10, 0.30)),
         ("sweep sideways", (0.40, -0.25, 0.30), (0.40, 0.25, 0.30)),
         ("lift", (0.30, 0.0, 0.55), (0.45, 0.0, 0.05))]


def run(controller: str, a, b, duration: float, g: float = WET) -> tuple[float, float, float]:
    """(RMS, max, final) end-effector error, m, of one move."""
    sim = ArmSim(G, xml=mjcf(G, target=False), controller=controller)
    sim.set_gravity([0.0, 0.0, g])
    q0, q1 = ik(G, a), ik(G, b)
    sim.set_q(q0)
    h = sim.model.opt.timestep
    errs = []
    for k in range(round((duration + 1.0) / h)):
        sim.command(*min_jerk(q0, q1, duration, k * h))
        sim.substep()
        q, _ = sim.joint_state()
        q_d, _, _ = min_jerk(q0, q1, duration, (k + 1) * h)
        errs.append(float(np.linalg.norm(fk(G, q) - fk(G, q_d))))
    e = np.array(errs)
    return float(np.sqrt(np.mean(e**2))), float(e.max()), float(e[-1])


def main() -> None:
    print("| move | T (s) | gravity | controller | RMS error (mm) | max error (mm) "
          "| final error (mm) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, a, b in MOVES:
        for duration in (1.0, 3.0):
            for gname, g in (("wet weight", WET), ("off", 0.0)):
                for ctl in ("feedforward", "pd"):
                    rms, mx, fin = run(ctl, a, b, duration, g)
                    print(f"| {name} | {duration:g} | {gname} | {ctl} | {rms * 1e3:.3f} | "
                          f"{mx * 1e3:.3f} | {fin * 1e3:.3f} |")


if __name__ == "__main__":
    main()
