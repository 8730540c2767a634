"""Seed 003's 3-DOF arm: closed-form kinematics, the MJCF model, joint controllers and
the MuJoCo simulation core that yields the reaction wrench on the vehicle.

Call order: ``ArmGeometry`` → ``ik`` / ``fk`` (pure functions); ``ArmSim(geometry,
options)`` builds the MJCF model → ``set_gravity`` → (``command``)* ``substep`` … →
``reaction_wrench`` / ``joint_state`` / ``cup_pose``.

**Kinematics** (seed 003 eqs. 1–3). Arm frame A at the mount: axes parallel to the
vehicle's body FRD axes (x forward, y right, z down). Joint 1 (q₁) turns about z_A,
joints 2 and 3 (q₂ shoulder, q₃ elbow) pitch the links in the vertical plane of q₁,
positive **upwards** (towards −z_A), so that the seed's height is h = −z. Link
lengths l₁ (shoulder → elbow), l₂ (elbow → cup centre). Forward kinematics::

    r = l₁ cos q₂ + l₂ cos(q₂ + q₃),   h = l₁ sin q₂ + l₂ sin(q₂ + q₃)
    x = r cos q₁,   y = r sin q₁,   z = −h

Inverse kinematics (eq. 2's branch q₃ ≤ 0: the elbow above the shoulder–cup line)::

    q₁ = atan2(y, x)                                                     (1)
    q₃ = −arccos((x² + y² + z² − l₁² − l₂²) / (2 l₁ l₂))                 (2)
    q₂ = atan2(h, √(x² + y²)) − atan2(l₂ sin q₃, l₁ + l₂ cos q₃)          (3)

The cup's outward normal is the forearm's axis, n = (cos(q₂+q₃) cos q₁,
cos(q₂+q₃) sin q₁, −sin(q₂+q₃)) in A (straight down at q₂ + q₃ = −π/2): with three
joints only the cup's position is commanded, its normal follows.

**Joint control.** Feed-forward (seed 003 eq. 4), a commanded joint acceleration::

    q̈_c = q̈_d + K_v (q̇_d − q̇) + K_p (q_d − q)                           (4)

realised by the joint motors as τ = M(q) q̈_c + c(q, q̇) (M and c = Coriolis,
centrifugal and gravity terms from MuJoCo, ``mj_fullM`` / ``qfrc_bias``); the pure
PD beside it is τ = diag(M(q₀)) (K_p (q_d − q) + K_v (q̇_d − q̇)), the same gains
scaled by the nominal joint inertia, no model. Both are clipped to the torque
limits τ_max (N·m); the joints have hard limits (MJCF ``range``).

**Reaction wrench.** After ``mj_forward`` + ``mj_rnePostConstraint``, ``cfrc_int`` of
link 1 is the spatial force the base exerts on the arm (com-based: force f, moment
about the subtree centre of mass c, world axes). The arm exerts −f on the vehicle,
with moment −(τ_c + (c − p) × f) about the mount point p; ``reaction_wrench`` returns
it in the body frame about the body origin (adding r_mount × F).

Model assumptions (seed 003 gives no arm numbers; docs/arm.md tables them): l₁ =
0.35 m, l₂ = 0.30 m, link masses 2.0 / 1.5 kg, cup 0.3 kg, gravity in the model =
the wet-weight field g (1 − ρ_w / ρ_arm) rotated into A, minus the vehicle's linear
acceleration (a uniform pseudo-gravity: the non-inertial frame of a translating
base; the rotational pseudo-forces of a turning vehicle are neglected).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..sdk.errors import ParameterError
from ..sdk.frames import cross

try:  # MuJoCo enters here; everything else imports it from this module
    import mujoco
except ImportError as exc:  # pragma: no cover - a broken install
    raise ImportError("manipulation needs MuJoCo: pip install 'mujoco>=3.2,<4' "
                      "(scripts/setup.sh installs it)") from exc


def full_mass_matrix(m, d) -> np.ndarray:
    """The dense joint-space inertia M(q) (nv × nv) after ``mj_forward``; MuJoCo ≥ 3.3
    takes ``mj_fullM(m, d, dst)``, earlier ones ``mj_fullM(m, dst, d.qM)``."""
    M = np.zeros((m.nv, m.nv))
    if hasattr(d, "qM"):
        mujoco.mj_fullM(m, M, d.qM)
    else:
        mujoco.mj_fullM(m, d, M)
    return M


@dataclass(frozen=True, kw_only=True)
class ArmGeometry:
    """Lengths, masses and limits of the 3-DOF arm (assumptions: docs/arm.md)."""

    l1_m: float = 0.35
    """Shoulder → elbow length l₁, m."""
    l2_m: float = 0.30
    """Elbow → cup centre length l₂, m."""
    link_mass_kg: tuple[float, float, float] = (1.0, 2.0, 1.5)
    """Masses of the turret (joint 1), upper arm and forearm, kg."""
    cup_mass_kg: float = 0.3
    """Suction cup mass at the forearm's end, kg."""
    link_radius_m: float = 0.03
    """Radius of the capsule links (inertia), m."""
    q_min_rad: tuple[float, float, float] = (-math.pi, -math.pi, -2.8)
    """Lower joint limits, rad."""
    q_max_rad: tuple[float, float, float] = (math.pi, math.pi / 2, 0.0)
    """Upper joint limits, rad."""
    tau_max_nm: tuple[float, float, float] = (40.0, 80.0, 40.0)
    """Joint torque limits τ_max, N·m."""

    def __post_init__(self) -> None:
        if not (self.l1_m > 0 and self.l2_m > 0):
            raise ParameterError(f"link lengths must be > 0, got l1={self.l1_m}, l2={self.l2_m}",
                                 fix="set l1_m and l2_m to positive lengths in metres")
        if any(lo >= hi for lo, hi in zip(self.q_min_rad, self.q_max_rad)):
            raise ParameterError("each joint's q_min must be < q_max",
                                 fix="check q_min_rad / q_max_rad")


class Unreachable(ValueError):
    """A Cartesian target outside the workspace (|cos q₃| > 1 or a joint limit)."""


def fk(g: ArmGeometry, q) -> np.ndarray:
    """Cup centre (x, y, z) in the arm frame A, m, for joint angles q (rad)."""
    q1, q2, q3 = (float(v) for v in q)
    r = g.l1_m * math.cos(q2) + g.l2_m * math.cos(q2 + q3)
    h = g.l1_m * math.sin(q2) + g.l2_m * math.sin(q2 + q3)
    return np.array([r * math.cos(q1), r * math.sin(q1), -h])


def cup_normal(q) -> np.ndarray:
    """Outward unit normal of the cup (the forearm's axis) in A."""
    q1, q2, q3 = (float(v) for v in q)
    c = math.cos(q2 + q3)
    return np.array([c * math.cos(q1), c * math.sin(q1), -math.sin(q2 + q3)])


def ik(g: ArmGeometry, x, check_limits: bool = True) -> np.ndarray:
    """Joint angles (q₁, q₂, q₃) placing the cup centre at x = (x, y, z) in A (eqs. 1–3).

    Raises :class:`Unreachable` outside the annulus |l₁ − l₂| ≤ |x| ≤ l₁ + l₂ or when a
    joint limit is violated (``check_limits``)."""
    px, py, pz = (float(v) for v in x)
    c3 = (px * px + py * py + pz * pz - g.l1_m ** 2 - g.l2_m ** 2) / (2 * g.l1_m * g.l2_m)
    if not -1.0 <= c3 <= 1.0:
        raise Unreachable(f"target {px:.3f}, {py:.3f}, {pz:.3f} m is outside the reach "
                          f"[{abs(g.l1_m - g.l2_m):.3f}, {g.l1_m + g.l2_m:.3f}] m")
    q1 = math.atan2(py, px)
    q3 = -math.acos(c3)
    q2 = math.atan2(-pz, math.hypot(px, py)) - math.atan2(g.l2_m * math.sin(q3),
                                                          g.l1_m + g.l2_m * math.cos(q3))
    q = np.array([q1, q2, q3])
    if check_limits and (np.any(q < np.array(g.q_min_rad)) or np.any(q > np.array(g.q_max_rad))):
        raise Unreachable(f"target {px:.3f}, {py:.3f}, {pz:.3f} m needs q = {q.round(3)} rad, "
                          "beyond the joint limits")
    return q


def min_jerk(q0, q1, duration_s: float, t_s: float):
    """Minimum-jerk joint trajectory q0 → q1 over ``duration_s``: (q_d, q̇_d, q̈_d) at t."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    if duration_s <= 0 or t_s >= duration_s:
        return q1.copy(), np.zeros(3), np.zeros(3)
    s = max(t_s, 0.0) / duration_s
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    dp = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration_s
    ddp = (60 * s - 180 * s**2 + 120 * s**3) / duration_s**2
    d = q1 - q0
    return q0 + p * d, dp * d, ddp * d


def mjcf(g: ArmGeometry, *, free_base: bool = False, base_mass_kg: float = 50.0,
         target: bool = True, floor_z_m: float | None = None,
         target_pos_m=(0.45, 0.0, 0.40), target_size_m=(0.06, 0.01),
         target_mass_kg: float = 0.2, target_euler_rad=(0.0, 0.0, 0.0),
         timestep_s: float = 0.001, integrator: str = "Euler", world: bool = False) -> str:
    """The MJCF text of the arm in frame A (world = A unless ``free_base``).

    Bodies: ``base`` (welded to the world, or on a free joint of mass
    ``base_mass_kg`` for the momentum test), ``turret`` (q₁), ``upper`` (q₂),
    ``fore`` (q₃) with the site ``cup`` (z axis = outward normal) at its end;
    optionally the ``target`` (a free cylinder, radius × half-height
    ``target_size_m``, site ``surface`` on its −z face: the face up, towards the
    arm, since z is down) and a floor plane at depth ``floor_z_m`` (z down, its
    normal −z). The equality ``suction`` (weld cup body ↔ target) is created
    inactive. Only the target and the floor collide (the arm's links do not).

    ``world``: the target is placed from the world (``world_object.py``): a mocap body
    ``anchor``, moved each sub-step to where the world is in the arm's frame, holds it
    where it rests (the weld ``rest``, active: the seabed's support and friction); no
    floor plane (a mocap plane would hold a resting object still in the arm's frame
    through contact friction, not in the world) and the target does not collide.
    ``integrator``: MuJoCo's ``Euler`` (semi-implicit, the default) or ``RK4``."""
    if integrator not in ("Euler", "RK4"):
        raise ParameterError(f"integrator must be 'Euler' or 'RK4', got {integrator!r}",
                             fix='integrator = "Euler" or "RK4"')
    m0, m1, m2 = g.link_mass_kg
    r = g.link_radius_m
    base_joint = '<freejoint name="base_free"/>' if free_base else ""
    base_inertial = (f'<inertial pos="0 0 0" mass="{base_mass_kg}" diaginertia="4 5 6"/>'
                     if free_base else "")
    floor = ""
    if world:
        floor = (f'<body name="anchor" mocap="true" pos="{target_pos_m[0]} {target_pos_m[1]} '
                 f'{target_pos_m[2]}"/>')
    elif floor_z_m is not None:
        floor = (f'<geom name="floor" type="plane" size="5 5 0.1" pos="0 0 {floor_z_m}" '
                 'zaxis="0 0 -1" contype="1" conaffinity="1"/>')
    tgt = eq = ""
    if target:
        rad, hh = target_size_m
        e = " ".join(f"{v}" for v in target_euler_rad)
        tgt = f"""
    <body name="target" pos="{target_pos_m[0]} {target_pos_m[1]} {target_pos_m[2]}" euler="{e}">
      <freejoint name="target_free"/>
      <geom name="target" type="cylinder" size="{rad} {hh}" mass="{target_mass_kg}"
            contype="{0 if world else 1}" conaffinity="{0 if world else 1}"/>
      <site name="surface" pos="0 0 {-hh}" zaxis="0 0 -1" size="0.005"/>
    </body>"""
        rest = ('\n    <weld name="rest" body1="anchor" body2="target" active="true" '
                'relpose="0 0 0 1 0 0 0"/>') if world else ""
        eq = f"""
  <equality>
    <weld name="suction" body1="fore" body2="target" active="false" solref="0.005 1"/>{rest}
  </equality>"""
    l1, l2 = g.l1_m, g.l2_m
    return f"""<mujoco model="hsv_arm">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{timestep_s}" gravity="0 0 0" integrator="{integrator}"/>
  <worldbody>
    {floor}
    <body name="base" pos="0 0 0">
      {base_joint}{base_inertial}
      <body name="turret" pos="0 0 0">
        <joint name="q1" type="hinge" axis="0 0 1" range="{g.q_min_rad[0]} {g.q_max_rad[0]}"/>
        <geom type="cylinder" size="{r * 1.5} {r}" mass="{m0}" contype="0" conaffinity="0"/>
        <body name="upper" pos="0 0 0">
          <joint name="q2" type="hinge" axis="0 1 0" range="{g.q_min_rad[1]} {g.q_max_rad[1]}"/>
          <geom type="capsule" fromto="0 0 0 {l1} 0 0" size="{r}" mass="{m1}"
                contype="0" conaffinity="0"/>
          <body name="fore" pos="{l1} 0 0">
            <joint name="q3" type="hinge" axis="0 1 0" range="{g.q_min_rad[2]} {g.q_max_rad[2]}"/>
            <geom type="capsule" fromto="0 0 0 {l2} 0 0" size="{r}" mass="{m2}"
                  contype="0" conaffinity="0"/>
            <geom type="sphere" pos="{l2} 0 0" size="{r}" mass="{g.cup_mass_kg}"
                  contype="0" conaffinity="0"/>
            <site name="cup" pos="{l2} 0 0" zaxis="1 0 0" size="0.01"/>
          </body>
        </body>
      </body>
    </body>{tgt}
  </worldbody>{eq}
  <actuator>
    <motor name="m1" joint="q1"/>
    <motor name="m2" joint="q2"/>
    <motor name="m3" joint="q3"/>
  </actuator>
</mujoco>"""


@dataclass(frozen=True, kw_only=True)
class Gains:
    """Diagonal gains of eq. (4) (and of the PD, scaled by the nominal inertia)."""

    kp: tuple[float, float, float] = (100.0, 100.0, 100.0)
    """K_p, 1/s²."""
    kv: tuple[float, float, float] = (20.0, 20.0, 20.0)
    """K_v, 1/s (critically damped at K_v = 2 √K_p)."""


@dataclass
class ArmSim:
    """The arm in MuJoCo: controllers, sub-steps and the reaction wrench (module doc)."""

    geometry: ArmGeometry = field(default_factory=ArmGeometry)
    xml: str | None = None
    gains: Gains = field(default_factory=Gains)
    controller: str = "feedforward"

    def __post_init__(self) -> None:
        if self.controller not in ("feedforward", "pd"):
            raise ParameterError(f"controller must be 'feedforward' or 'pd', got "
                                 f"{self.controller!r}",
                                 fix='controller = "feedforward" or "pd"')
        text = self.xml if self.xml is not None else mjcf(self.geometry)
        try:
            self.model = mujoco.MjModel.from_xml_string(text)
        except ValueError as exc:
            raise ParameterError(f"the arm's MJCF model does not compile: {exc}",
                                 fix="check the arm parameters") from exc
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.dof = np.array([m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)]
                             for n in ("q1", "q2", "q3")])
        self.qadr = np.array([m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)]
                              for n in ("q1", "q2", "q3")])
        self.turret = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "turret")
        self.base = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "base")
        self.cup_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "cup")
        self.tau_max = np.array(self.geometry.tau_max_nm)
        self.kp = np.array(self.gains.kp)
        self.kv = np.array(self.gains.kv)
        self.q_d = np.zeros(3)
        self.qd_d = np.zeros(3)
        self.qdd_d = np.zeros(3)
        self.tau = np.zeros(3)
        mujoco.mj_forward(m, self.data)
        M = full_mass_matrix(m, self.data)
        self._m_nominal = np.diag(M)[self.dof].copy()

    # -- state ------------------------------------------------------------------

    def set_q(self, q) -> None:
        """Put the joints at q (rad), at rest, and hold q as the target."""
        self.data.qpos[self.qadr] = q
        self.data.qvel[self.dof] = 0.0
        self.q_d = np.array(q, float)
        self.qd_d = np.zeros(3)
        self.qdd_d = np.zeros(3)
        mujoco.mj_forward(self.model, self.data)

    def set_gravity(self, g_arm) -> None:
        """Effective gravity in A, m/s² (wet weight minus the base's acceleration)."""
        self.model.opt.gravity[:] = g_arm

    def command(self, q_d, qd_d=(0, 0, 0), qdd_d=(0, 0, 0)) -> None:
        """Desired joint positions, velocities, accelerations for the next sub-steps."""
        self.q_d = np.asarray(q_d, float)
        self.qd_d = np.asarray(qd_d, float)
        self.qdd_d = np.asarray(qdd_d, float)

    def joint_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q, q̇), rad and rad/s."""
        return self.data.qpos[self.qadr].copy(), self.data.qvel[self.dof].copy()

    def cup_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Cup site position (m) and 3×3 orientation (columns: site axes; z = normal) in
        the MuJoCo world (= A for a fixed base)."""
        return (self.data.site_xpos[self.cup_site].copy(),
                self.data.site_xmat[self.cup_site].reshape(3, 3).copy())

    # -- stepping ---------------------------------------------------------------

    def _torque(self) -> np.ndarray:
        m, d = self.model, self.data
        q, qd = self.joint_state()
        e, ed = self.q_d - q, self.qd_d - qd
        if self.controller == "feedforward":
            qdd_c = self.qdd_d + self.kv * ed + self.kp * e                     # eq. (4)
            M = full_mass_matrix(m, d)
            tau = M[np.ix_(self.dof, self.dof)] @ qdd_c + d.qfrc_bias[self.dof]
        else:
            tau = self._m_nominal * (self.kp * e + self.kv * ed)
        return np.clip(tau, -self.tau_max, self.tau_max)

    def substep(self) -> np.ndarray:
        """One MuJoCo step of ``model.opt.timestep``: forward dynamics at the current
        state, control torque from it, reaction wrench (returned: the 6-vector
        [f, τ_p] on the base in the MuJoCo world axes, moment about the base origin p),
        then the update: semi-implicit Euler (``mj_Euler``) with that same
        acceleration, so the returned wrench times the step is exactly the impulse
        of this step; with ``RK4`` (``mj_RungeKutta``, torque held over the step) the
        wrench is the one at the start of the step. ``self.qacc``: the generalised
        accelerations of that same dynamics evaluation."""
        m, d = self.model, self.data
        mujoco.mj_forward(m, d)
        self.tau = self._torque()
        d.ctrl[:] = self.tau
        mujoco.mj_forward(m, d)
        mujoco.mj_rnePostConstraint(m, d)
        w = self.base_reaction()
        self.qacc = d.qacc.copy()
        if m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
            mujoco.mj_RungeKutta(m, d, 4)
        else:
            mujoco.mj_Euler(m, d)
        return w

    def base_reaction(self) -> np.ndarray:
        """[f, τ_p]: what the arm exerts on the base, world axes, moment about the base
        origin p (valid after ``mj_rnePostConstraint``)."""
        d = self.data
        tq = d.cfrc_int[self.turret, :3]
        f = d.cfrc_int[self.turret, 3:]
        c = d.subtree_com[self.model.body_rootid[self.turret]]
        p = d.xpos[self.base]
        tau_p = tq + cross(c - p, f)
        return -np.concatenate([f, tau_p])
