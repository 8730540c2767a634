"""The grasped object placed from the world: where it rests, how the arm's frame sees
it while the vehicle moves, and the load it puts on the arm (weight, buoyancy, drag).

The arm's MuJoCo model lives in the arm frame A (body axes, origin at the mount,
``arm.py``), which moves with the vehicle. The object belongs to the world (NED): it
rests on the seabed until the cup takes it. Each sub-step, with the vehicle's pose
(p_v, R_v) (the state at the step's start, extrapolated over the step with its body
velocity ν₁ and rate ω: p_v + R_v ν₁ τ, R_v exp([ω τ]×)):

    x_A = R_vᵀ (x_w − p_v) − r_mount,      R_A = R_vᵀ R_w

- **resting**: the mocap body ``anchor`` is put at the object's rest pose, and the
  weld ``rest`` (anchor ↔ object, ``arm.mjcf(world=True)``) holds it there: the
  seabed's support and friction;
- **held** (after the suction's ``attach``): ``rest`` is switched off; the object
  moves with the cup, its load reaching the vehicle through the arm (``cfrc_int``);
- **free** (after ``release`` / ``pull_off``): it sinks under its wet weight against
  its drag until its lowest point reaches the seabed under it (``floor_depth(n, e)``),
  where it comes to rest level, at its heading (``rest`` on again). No contact model:
  a mocap plane moved with the arm's frame would hold a resting object still in that
  frame through friction, not in the world.

Loads on the object, besides the model's gravity field g_A = R_vᵀ g (1 − ρ_w/ρ_arm) −
a_b (the arm's wet weight and the translating frame): its own wet weight,
m (ρ_w/ρ_arm − ρ_w/ρ_obj) R_vᵀ g added, and, unless resting, quadratic drag against the
water: in the object's axes, per axis i, F_i = −½ ρ_w C_d A_i |u_i| u_i with u the
object's velocity relative to the water (vehicle velocity at the object + its
velocity in A − the current) and A_i its projected areas (the flat face π r², the
edge 2 r · 2 h). Both enter as ``xfrc_applied`` on the object's centre of mass.

The object is a disc (radius r, half-height h) whose frame is the MuJoCo body's
(its centre); the world pose published is that of the scene object's frame,
``origin_offset_m`` away from the centre (the starfish mesh: its bottom face, (0, 0, h)
from the centre in the object's axes, z down).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sdk.frames import cross
from .arm import ArmSim, mujoco

G0 = 9.80665


@dataclass(frozen=True)
class ObjectSpec:
    """The grasped object (a disc) and its water."""

    radius_m: float
    """Disc radius r, m."""
    half_height_m: float
    """Disc half-height h, m."""
    mass_kg: float
    """Mass, kg."""
    density_kgpm3: float
    """Density (for its wet weight), kg/m³."""
    drag_coefficient: float = 1.2
    """C_d of the flat face and the edge (a flat plate normal to the flow: ≈ 1.2)."""
    origin_offset_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """The published frame's origin relative to the disc centre, object axes, m."""


@dataclass
class VehiclePose:
    """The vehicle's state at the start of the step."""

    p: np.ndarray
    """Position NED, m."""
    R: np.ndarray
    """Body → NED."""
    nu1: np.ndarray
    """Body linear velocity, m/s."""
    omega: np.ndarray
    """Body angular rate, rad/s."""

    def at(self, tau_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(p, R) extrapolated by τ s with the body velocity and rate: p + R ν₁ τ,
        R exp([ω τ]×) (MuJoCo's quaternion integration, C)."""
        q = np.empty(4)
        mujoco.mju_mat2Quat(q, self.R.ravel())
        mujoco.mju_quatIntegrate(q, self.omega, tau_s)
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, q)
        return self.p + self.R @ self.nu1 * tau_s, R.reshape(3, 3)


def quat_of(R: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of a rotation matrix (MuJoCo's, C)."""
    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, float).ravel())
    return q


class WorldObject:
    """The object in the world and its twin in the arm's model (module docstring).

    Call order: ``WorldObject(sim, spec, mount, rest_p, rest_R, floor_depth)`` →
    per sub-step ``place(pose, τ, current, rho_w, wet_arm)`` before ``sim.substep``,
    ``update(h)`` after it (with the suction events of that sub-step) →
    ``world_pose(pose)``."""

    def __init__(self, sim: ArmSim, spec: ObjectSpec, mount: np.ndarray, rest_p: np.ndarray,
                 rest_R: np.ndarray, floor_depth) -> None:
        m = sim.model
        self.sim, self.spec, self.mount = sim, spec, np.asarray(mount, float)
        self.body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "target")
        self.anchor = int(m.body_mocapid[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "anchor")])
        self.rest_eq = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, "rest")
        self.floor_depth = floor_depth
        self.off = np.asarray(spec.origin_offset_m, float)
        self.rest_R = np.asarray(rest_R, float)
        self.rest_c = np.asarray(rest_p, float) - self.rest_R @ self.off  # disc centre, NED
        self.state = "resting"
        self.pose: tuple[np.ndarray, np.ndarray] | None = None  # (p_v, R_v) of the last place()
        self.drag_n = np.zeros(3)
        self.set_mass()

    def set_mass(self) -> None:
        """The object's mass and inertia (a solid disc) in the model."""
        m, s = self.sim.model, self.spec
        r, h = s.radius_m, s.half_height_m
        m.body_mass[self.body] = s.mass_kg
        m.body_inertia[self.body] = (s.mass_kg * (3 * r * r + 4 * h * h) / 12,
                                     s.mass_kg * (3 * r * r + 4 * h * h) / 12, s.mass_kg * r * r / 2)

    # -- frames -----------------------------------------------------------------

    def to_arm(self, p_v, R_v, x_w) -> np.ndarray:
        return R_v.T @ (np.asarray(x_w, float) - p_v) - self.mount

    def to_world(self, p_v, R_v, x_a) -> np.ndarray:
        return p_v + R_v @ (self.mount + np.asarray(x_a, float))

    # -- each sub-step ------------------------------------------------------------

    def place(self, p_v: np.ndarray, R_v: np.ndarray, vehicle: VehiclePose, current_ned,
              rho_w: float, wet_arm: float) -> None:
        """Move the anchor to where the world is; set the object's extra loads."""
        d = self.sim.data
        first = self.pose is None
        self.pose = (p_v, R_v)
        d.mocap_pos[self.anchor] = self.to_arm(p_v, R_v, self.rest_c)
        d.mocap_quat[self.anchor] = quat_of(R_v.T @ self.rest_R)
        if first:
            self.snap()
        s = self.spec
        g_body = R_v.T @ np.array([0.0, 0.0, G0])
        f = s.mass_kg * ((1.0 - rho_w / s.density_kgpm3) - wet_arm) * g_body  # own wet weight
        self.drag_n = np.zeros(3)
        if self.state != "resting":
            u_w = self.velocity_ned(vehicle) - np.asarray(current_ned, float)  # through the water
            R_o = R_v @ d.xmat[self.body].reshape(3, 3)
            u_o = R_o.T @ u_w
            r, h = s.radius_m, s.half_height_m
            area = np.array([4 * r * h, 4 * r * h, math.pi * r * r])
            f_o = -0.5 * rho_w * s.drag_coefficient * area * np.abs(u_o) * u_o
            self.drag_n = R_o @ f_o  # NED
            f = f + R_v.T @ self.drag_n
        d.xfrc_applied[self.body, :3] = f
        d.xfrc_applied[self.body, 3:] = 0.0

    def on_events(self, kinds) -> None:
        """The suction's events of the sub-step just taken."""
        for kind in kinds:
            if kind == "attach":
                self.sim.data.eq_active[self.rest_eq] = 0
                self.state = "held"
            elif kind in ("release", "pull_off"):
                self.state = "free"

    def velocity_ned(self, vehicle: VehiclePose) -> np.ndarray:
        """The object centre's velocity over the ground, NED, m/s."""
        d = self.sim.data
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(self.sim.model, d, mujoco.mjtObj.mjOBJ_BODY, self.body, vel, 0)
        x_b = self.mount + d.xpos[self.body]
        R_v = self.pose[1] if self.pose is not None else vehicle.R
        return R_v @ (vehicle.nu1 + cross(vehicle.omega, x_b) + vel[3:])

    def snap(self) -> None:
        """Put the object exactly at its anchor, at rest (before the first sub-step)."""
        m, d = self.sim.model, self.sim.data
        adr = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "target_free")]
        dof = m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "target_free")]
        d.qpos[adr:adr + 3] = d.mocap_pos[self.anchor]
        d.qpos[adr + 3:adr + 7] = d.mocap_quat[self.anchor]
        d.qvel[dof:dof + 6] = 0.0
        mujoco.mj_forward(m, d)

    def update(self, h_s: float, vehicle: VehiclePose) -> None:
        """After a sub-step: a free object whose lowest point has reached the seabed under
        it rests there, level, at its heading."""
        if self.state != "free" or self.pose is None:
            return
        d = self.sim.data
        p_v, R_v = self.pose
        c = self.to_world(p_v, R_v, d.xpos[self.body])
        R_o = R_v @ d.xmat[self.body].reshape(3, 3)
        floor = float(self.floor_depth(c[0], c[1]))
        lowest = c[2] + self.spec.radius_m * math.hypot(R_o[2, 0], R_o[2, 1]) \
            + self.spec.half_height_m * abs(R_o[2, 2])
        if lowest >= floor:
            yaw = math.atan2(R_o[1, 0], R_o[0, 0])
            cy, sy = math.cos(yaw), math.sin(yaw)
            self.rest_R = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
            self.rest_c = np.array([c[0], c[1], floor - self.spec.half_height_m])
            d.eq_active[self.rest_eq] = 1
            self.state = "resting"

    def world_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(position, R object → NED) of the published object frame."""
        if self.state == "resting" or self.pose is None:
            return self.rest_c + self.rest_R @ self.off, self.rest_R
        p_v, R_v = self.pose
        d = self.sim.data
        R_o = R_v @ d.xmat[self.body].reshape(3, 3)
        return self.to_world(p_v, R_v, d.xpos[self.body]) + R_o @ self.off, R_o


__all__ = ["ObjectSpec", "VehiclePose", "WorldObject", "quat_of"]
