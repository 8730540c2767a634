"""``manipulation.arm``: seed 003's arm with its suction cup, as a moonpool component.

Call order: configure (builds the MJCF model, checks the parameters) → initialize
(publishes the state at rest at ``q0_rad``) → step* → terminate (metrics: events,
peak reaction force, tracking error).

Each step t → t + dt:

1. Inputs. ``target`` (``Signals``, sample and hold; until its first message, the
   row of the ``schedule`` parameter in force at t, if any): ``q1 q2 q3`` (rad, a joint
   target) or ``x y z`` (m, the cup centre in the **body** frame FRD; the mount
   offset is subtracted and the closed-form IK of ``arm.py`` applied), optional
   ``duration_s`` (time of the minimum-jerk move, default ``move_s``) and
   ``suction`` (1 = pump on, 0 = off). A target that differs from the last starts a
   minimum-jerk move from the present desired joints, unless it lies within
   ``retarget_m`` of the move's goal with the same ``duration_s``: then the goal moves
   and the move keeps its timing (a point held in the world, re-sent in the body frame
   each step while the vehicle moves, is tracked; after the move's end the desired
   joints step to it). An unreachable Cartesian target is refused (the arm holds the
   last one, ``reachable`` = 0 in ``joints``).
   ``vehicle`` (``VehicleState``): attitude, linear acceleration and water density,
   from which the model's gravity is set (below).
2. n = max(1, round(dt / substep_s)) MuJoCo sub-steps of h = dt / n: q_d(t), q̇_d,
   q̈_d from the move, the controller (eq. 4 or PD), ``ArmSim.substep`` (reaction
   wrench of the sub-step), ``Suction.update``.
3. Outputs at t + dt: ``joints``, ``end_effector`` (cup pose in the body frame),
   ``suction`` (state and the events of this step), ``wrench`` (the reaction on the
   vehicle, body FRD, about the body origin; the mean over the sub-steps, i.e. the
   step's impulse / dt), ``object`` (the grasped object's pose in the world: for the
   camera that sees it, and for scoring).

**The object is placed from the world** (``world_object.py``): with ``scene`` and
``target_object``, the scene object of that name (its mesh's volume and thickness make
the disc, its pose the rest pose, shifted by ``target_shift_north_m`` /
``target_shift_east_m`` and put on what lies there, the seabed or a rock: the highest
surface of the static scene under its centre and its rim, so that no part of it is
buried); without a scene, a disc of
``target_radius_m`` × 2 ``target_half_height_m`` whose centre is at ``target_m`` from
the vehicle's body origin (body frame) at the first step, on a horizontal floor
``floor_m`` below that origin. Either way it stays where it is in the world while the
vehicle moves, until the cup takes it; its wet weight (density
``target_density_kgpm3``) and its drag through the water (the ``current`` input, or
still water) load the arm, and through it the vehicle.

Gravity in the arm's model (frame A ∥ body): g_A = Rᵀ (0, 0, g)·(1 − ρ_w/ρ_arm) −
a_b, with R body → NED from ``vehicle.orientation``, ρ_w its water density (1025 when
0) and a_b its body linear acceleration: the arm's wet weight plus the inertial load
of a translating base. Before the first ``vehicle`` message the vehicle is level and
at rest.

**Coupling step (why it is stable).** The arm and the vehicle (the hydrodynamics
FMU, ``ext_X … ext_N`` inputs) exchange data once per macro step Δt (the rig's rate,
e.g. 100 Hz; Jacobi): the arm steps over [t, t + Δt] with the vehicle state of t and
returns the mean reaction wrench, which the FMU applies over its next step — an
explicit (one-step-delayed) coupling, with MuJoCo sub-steps h ≪ Δt inside. The only
algebraic path in the loop is through the vehicle's acceleration: the arm's
reaction contains −m_arm a_b, and a_b responds to it as 1/(m + m_A). Iterating this
loop is a fixed-point map with gain m_arm/(m + m_A) (arm 4.8 kg against the HSV's
60 kg + its added mass: < 0.08), so the delayed coupling converges instead of
amplifying (the instability of explicit added-mass-like couplings needs a ratio ≥ 1).
The rest of the loop (positions, velocities) is delayed by one Δt and is stable when
Δt is well below the arm's closed-loop time constant (1/√K_p = 0.1 s with the
default gains, against Δt = 10 ms). Choosing Δt equal to the vehicle's step keeps
the impulse exchanged exact: ∫ F dt over the step is what MuJoCo applied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.v1 import navigation_pb2, signals_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from ..sdk.frames import euler_from_rot, quat_from_rot, rot_from_quat
from .arm import ArmGeometry, ArmSim, Gains, Unreachable, fk, ik, min_jerk, mjcf
from .suction import Suction, SuctionConfig
from .world_object import ObjectSpec, VehiclePose, WorldObject

G0 = 9.80665  # standard gravity, m/s²


def _triple(name: str, v: Any) -> tuple[float, float, float]:
    ok = (isinstance(v, (list, tuple)) and len(v) == 3
          and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))
    if not ok:
        raise ParameterError(f"'{name}' must be a list of 3 numbers, got {v!r}",
                             fix=f"e.g. {name} = [0.0, 0.0, 0.0]")
    return tuple(float(x) for x in v)  # type: ignore[return-value]


class ArmComponent(Component):
    """The 3-DOF arm with suction cup on a vehicle (module docstring)."""

    inputs = (
        Port("target", signals_pb2.Signals,
             "q1 q2 q3 (rad) or x y z (m, body FRD); duration_s; suction (1 on / 0 off)"),
        Port("vehicle", vehicle_pb2.VehicleState, "the vehicle's true state: pose, velocity, "
             "acceleration, water density"),
        Port("current", vehicle_pb2.WaterCurrent, "optional: the water's velocity (the "
             "object's drag); still water without it"),
    )
    outputs = (
        Port("joints", signals_pb2.Signals, "q1..3 (rad), qd1..3 (rad/s), tau1..3 (N·m), "
             "q_d1..3, error_m, reachable"),
        Port("end_effector", navigation_pb2.PoseMeasurement, "cup pose, body frame"),
        Port("suction", signals_pb2.Signals, "attached, distance_m, angle_rad, force_n, "
             "events; event.KIND = time of an event of this step (s)"),
        Port("wrench", vehicle_pb2.Wrench, "reaction of the arm on the vehicle, body FRD, "
             "about the body origin (for the FMU's ext_* inputs)"),
        Port("object", vehicle_pb2.VehicleState, "the object's pose in the world (its frame -> "
             "NED; truth, e.g. for a camera's movable object)"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        l1_m: float = param(0.35, "upper-arm length l1", unit="m")
        l2_m: float = param(0.30, "forearm length l2 (elbow to cup centre)", unit="m")
        mount_m: Any = param([0.4, 0.0, 0.3], "arm base in the body frame (FRD)", unit="m")
        q0_rad: Any = param([0.0, 0.6, -2.5], "initial joint angles (folded)", unit="rad")
        controller: str = param("feedforward", "'feedforward' (eq. 4) or 'pd'")
        kp: float = param(100.0, "K_p (all joints)", unit="1/s^2")
        kv: float = param(20.0, "K_v (all joints)", unit="1/s")
        tau_max_nm: Any = param([40.0, 80.0, 40.0], "joint torque limits", unit="N*m")
        move_s: float = param(3.0, "default duration of a minimum-jerk move", unit="s")
        retarget_m: float = param(0.02, "a new Cartesian target within this of the move's goal "
                                  "(same duration_s) moves the goal and keeps the move's timing "
                                  "(tracking a target held in the world); farther, a new move",
                                  unit="m")
        substep_s: float = param(0.001, "MuJoCo sub-step (rounded to divide the step)",
                                 unit="s")
        arm_density_kgpm3: float = param(2700.0, "density of the arm (wet weight)",
                                         unit="kg/m^3")
        scene: Path | None = param(None, "scene file (TOML) holding the target object; relative "
                                   "to the rig file's folder (none: the disc of target_m)")
        target_object: str = param("", "name of the scene object to grasp (with scene)")
        target_shift_north_m: float = param(0.0, "the scene object moved north (on the seabed "
                                            "there)", unit="m")
        target_shift_east_m: float = param(0.0, "the scene object moved east", unit="m")
        target_density_kgpm3: float = param(1200.0, "density of the object (a starfish: "
                                            "~1.1-1.2 times water)", unit="kg/m^3")
        target_drag_coefficient: float = param(1.2, "C_d of the object's face and edge")
        target_m: Any = param([0.689, 0.0, 0.808],
                              "without scene: the disc's centre from the body origin at the "
                              "first step, body frame (FRD)", unit="m")
        target_radius_m: float = param(0.06, "target disc radius", unit="m")
        target_half_height_m: float = param(0.01, "target disc half height", unit="m")
        target_mass_kg: float = param(0.2, "without scene: the disc's mass", unit="kg")
        floor_m: float = param(0.818, "without scene: the floor's depth below the body origin "
                               "at the first step", unit="m")
        position_tol_m: float = param(0.01, "suction position tolerance", unit="m")
        normal_tol_deg: float = param(10.0, "suction normal tolerance", unit="deg")
        pull_off_n: float = param(40.0, "suction pull-off force", unit="N")
        schedule: Any = param([], "rows [t_s, x, y, z, duration_s, suction]: Cartesian "
                              "targets (body FRD, m) from t_s on, used until a message "
                              "arrives on the target input")

        def __post_init__(self) -> None:
            for k in ("mount_m", "q0_rad", "tau_max_nm", "target_m"):
                _triple(k, getattr(self, k))
            for k in ("l1_m", "l2_m", "kp", "kv", "move_s", "retarget_m", "substep_s",
                      "arm_density_kgpm3",
                      "target_radius_m", "target_half_height_m", "target_mass_kg",
                      "position_tol_m", "normal_tol_deg", "pull_off_n", "target_density_kgpm3",
                      "target_drag_coefficient"):
                if not getattr(self, k) > 0:
                    raise ParameterError(f"'{k}' must be > 0, got {getattr(self, k)}",
                                         fix=f"set {k} to a positive value")
            rows = self.schedule
            if not (isinstance(rows, (list, tuple)) and all(
                    isinstance(r, (list, tuple)) and len(r) == 6
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r)
                    for r in rows)):
                raise ParameterError(f"schedule must be a list of rows [t_s, x, y, z, "
                                     f"duration_s, suction], got {rows!r}",
                                     fix="e.g. schedule = [[1.0, 0.689, 0.0, 0.795, 2.0, 1]]")
            if any(b[0] <= a[0] for a, b in zip(rows, rows[1:])):
                raise ParameterError("schedule times must increase strictly",
                                     fix="sort the schedule's rows by time")
            if self.controller not in ("feedforward", "pd"):
                raise ParameterError(f"controller must be 'feedforward' or 'pd', got "
                                     f"{self.controller!r}", fix='controller = "feedforward"')
            if bool(self.scene) != bool(self.target_object):
                raise ParameterError("scene and target_object go together",
                                     fix='e.g. scene = "../scenes/trench_floor/scene.toml" and '
                                         'target_object = "starfish"')
            if self.scene:
                from ..world.scenefile import read_scene_file, validate_scene

                problems = validate_scene(self.scene)
                if problems:
                    raise ParameterError("scene: " + "; ".join(problems),
                                         fix="correct the scene file or the arm's scene")
                names = [o.name for o in read_scene_file(self.scene).objects]
                if self.target_object not in names:
                    raise ParameterError(f"target_object {self.target_object!r} is not an "
                                         f"object of the scene",
                                         fix=f"one of {', '.join(names) or '(none)'}")

    def configure(self, params: Parameters) -> None:
        self.params = p = params
        self.mount = np.array(_triple("mount_m", p.mount_m))
        self.geometry = ArmGeometry(l1_m=p.l1_m, l2_m=p.l2_m,
                                    tau_max_nm=_triple("tau_max_nm", p.tau_max_nm))
        self.rest: tuple[np.ndarray, np.ndarray] | None = None  # object frame pose, NED
        if p.scene:
            self.spec, self.rest, self.floor_depth = self._scene_object(p)
        else:
            self.spec = ObjectSpec(p.target_radius_m, p.target_half_height_m, p.target_mass_kg,
                                   p.target_density_kgpm3, p.target_drag_coefficient)
            self.floor_depth = None  # the plane floor_m below the first pose
        tgt_a = np.array(_triple("target_m", p.target_m)) - self.mount
        xml = mjcf(self.geometry, target=True, world=True, target_pos_m=tuple(tgt_a),
                   target_size_m=(self.spec.radius_m, self.spec.half_height_m),
                   target_mass_kg=self.spec.mass_kg, timestep_s=p.substep_s)
        try:
            self.sim = ArmSim(self.geometry, xml=xml, controller=p.controller,
                              gains=Gains(kp=(p.kp,) * 3, kv=(p.kv,) * 3))
            self.cup = Suction(self.sim, SuctionConfig(
                position_tol_m=p.position_tol_m, normal_tol_rad=math.radians(p.normal_tol_deg),
                pull_off_n=p.pull_off_n))
        except ParameterError as exc:
            raise ParameterError(str(exc), component=self.name, fix=exc.fix) from exc

    def _scene_object(self, p: Parameters):
        """(ObjectSpec, rest pose, floor depth function) of the scene's target object."""
        from ..world.scene import Scene

        try:
            scene = Scene.load(p.scene, movable=(p.target_object,))
        except ParameterError as exc:
            raise ParameterError(str(exc), component=self.name, fix=exc.fix) from exc
        body = scene.movable[p.target_object]
        obj = next(o for o in scene.spec.objects if o.name == p.target_object)
        import trimesh

        mesh = trimesh.Trimesh(body.vertices, body.faces, process=False)
        zmin, zmax = float(body.vertices[:, 2].min()), float(body.vertices[:, 2].max())
        h = 0.5 * (zmax - zmin)
        volume = abs(float(mesh.volume))
        radius = math.sqrt(volume / (math.pi * 2 * h))  # the disc of the same volume
        # the object's frame relative to the disc centre (object axes)
        centre = np.array([0.0, 0.0, 0.5 * (zmin + zmax)])
        spec = ObjectSpec(radius, h, volume * p.target_density_kgpm3, p.target_density_kgpm3,
                          p.target_drag_coefficient, tuple(-centre))
        engine = scene.engine()  # the static scene: seabed, rocks, other objects (~1 s)

        def surface(nn: float, ee: float, radius: float = 0.0) -> float:
            """Depth of what lies under (n, e): the highest first hit of rays from above
            at the centre and, with ``radius``, 8 points on that circle (what a flat
            object of that radius rests on: a rock's top, or the seabed), m."""
            z = float(scene.seabed_depth(nn, ee))
            if not math.isfinite(z):
                return z
            a = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
            pts = np.array([[nn, ee]] + ([[nn + radius * np.cos(t), ee + radius * np.sin(t)]
                                          for t in a] if radius > 0 else []))
            o = np.column_stack([pts, np.full(len(pts), z - 100.0)])
            hit = engine.cast(o, np.array([0.0, 0.0, 1.0]), 200.0)
            depths = np.where(np.isfinite(hit.distance_m), hit.point_ned[:, 2], z)
            return float(depths.min())

        n = body.position_ned_m[0] + p.target_shift_north_m
        e = body.position_ned_m[1] + p.target_shift_east_m
        d = body.position_ned_m[2]
        if obj.on_seabed:  # where it lies: on the seabed, or on a rock there
            tips = float(np.max(np.hypot(body.vertices[:, 0], body.vertices[:, 1])))
            d = surface(n, e, tips) + obj.position_ned_m[2]
            if not math.isfinite(d):
                raise ParameterError(f"the target shifted to ({n:.2f}, {e:.2f}) m is off the "
                                     "seabed", component=self.name,
                                     fix="keep target_shift_* within the scene's seabed")
        rest = (np.array([n, e, d]), rot_from_quat(body.quaternion_wxyz))
        return spec, rest, surface

    def initialize(self, start_time_ns: int) -> dict[str, Any]:
        q0 = np.array(_triple("q0_rad", self.params.q0_rad))
        self.sim.set_q(q0)
        self.move = (q0, q0, 0.0, start_time_ns)  # (from, to, duration s, start ns)
        self.last_target: tuple = ()
        self.pump = False
        self.external_target = False
        self.reachable = True
        self.wrench = np.zeros(6)
        self.metrics = {"attach": 0, "release": 0, "pull_off": 0, "refused_targets": 0,
                        "peak_reaction_n": 0.0, "max_tracking_error_m": 0.0,
                        "peak_object_drag_n": 0.0}
        self.current = np.zeros(3)
        self.obj: WorldObject | None = None
        self.vehicle = VehiclePose(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
        self.rho_w = 1025.0
        self._set_gravity(None)
        if self.rest is not None:  # from the scene: known before any vehicle state
            self.obj = WorldObject(self.sim, self.spec, self.mount, *self.rest, self.floor_depth)
        return self._outputs(start_time_ns, [])

    def _make_object(self) -> None:
        """Without a scene: the object and the floor where target_m and floor_m put them
        from the first vehicle pose (module docstring)."""
        v = self.vehicle
        self.rest = (v.p + v.R @ np.array(_triple("target_m", self.params.target_m)), v.R)
        floor = float(v.p[2] + self.params.floor_m)
        self.floor_depth = lambda n, e: floor
        self.obj = WorldObject(self.sim, self.spec, self.mount, *self.rest, self.floor_depth)

    # -- inputs -------------------------------------------------------------------

    def _set_gravity(self, vs: Any) -> None:
        rho = 1025.0
        R = np.eye(3)
        a = np.zeros(3)
        if vs is not None:
            q = vs.orientation
            R = rot_from_quat([q.w, q.x, q.y, q.z] if (q.w or q.x or q.y or q.z) else [1, 0, 0, 0])
            a = np.array([vs.linear_acceleration_body_mps2.x, vs.linear_acceleration_body_mps2.y,
                          vs.linear_acceleration_body_mps2.z])
            if vs.water_density_kgpm3 > 0:
                rho = vs.water_density_kgpm3
            p, nu, w = vs.position_ned_m, vs.linear_velocity_body_mps, vs.angular_velocity_body_radps
            self.vehicle = VehiclePose(np.array([p.x, p.y, p.z]), R, np.array([nu.x, nu.y, nu.z]),
                                       np.array([w.x, w.y, w.z]))
        self.rho_w = rho
        self.wet = 1.0 - rho / self.params.arm_density_kgpm3
        self.sim.set_gravity(R.T @ np.array([0.0, 0.0, G0 * self.wet]) - a)

    def _desired(self, t_ns: int):
        q_from, q_to, dur, t0 = self.move
        return min_jerk(q_from, q_to, dur, (t_ns - t0) * 1e-9)

    def _take_target(self, t_ns: int, msg: Any) -> None:
        if msg is None:
            return
        vals = {s.name: s.value for s in msg.signals}
        self.pump = vals.get("suction", 1.0 if self.pump else 0.0) >= 0.5
        key = tuple(sorted((k, v) for k, v in vals.items() if k != "suction"))
        if key == self.last_target:
            return
        self.last_target = key
        if all(k in vals for k in ("q1", "q2", "q3")):
            q_to = np.clip([vals["q1"], vals["q2"], vals["q3"]],
                           self.geometry.q_min_rad, self.geometry.q_max_rad)
        elif all(k in vals for k in ("x", "y", "z")):
            try:
                q_to = ik(self.geometry, np.array([vals["x"], vals["y"], vals["z"]]) - self.mount)
            except Unreachable:
                self.reachable = False
                self.metrics["refused_targets"] += 1
                return
        else:
            return
        self.reachable = True
        q_to = np.asarray(q_to, float)
        q_now, _, _ = self._desired(t_ns)
        duration = float(vals.get("duration_s", self.params.move_s))
        q_from, q_goal, dur, t0 = self.move
        shift = float(np.linalg.norm(fk(self.geometry, q_to) - fk(self.geometry, q_goal)))
        if duration == dur and shift <= self.params.retarget_m:
            # the same move's goal, moved a little (a target held in the world while the
            # vehicle moves): keep the move's timing, replace its end point
            self.move = (q_from, q_to, dur, t0)
        else:
            self.move = (q_now, q_to, duration, t_ns)

    # -- step ----------------------------------------------------------------------

    def _scheduled(self, t_ns: int) -> Any:
        row = None
        for r in self.params.schedule:
            if round(float(r[0]) * 1e9) <= t_ns:
                row = r
        if row is None:
            return None
        names = ("x", "y", "z", "duration_s", "suction")
        return signals_pb2.Signals(signals=[signals_pb2.Signal(name=k, value=float(v))
                                            for k, v in zip(names, row[1:])])

    def step(self, t_ns: int, dt_ns: int, inputs: Any) -> dict[str, Any]:
        target = inputs.get("target")
        if target is not None:
            self.external_target = True
        if not self.external_target:
            target = self._scheduled(t_ns)
        self._take_target(t_ns, target)
        self._set_gravity(inputs.get("vehicle"))
        cur = inputs.get("current")
        if cur is not None:
            c = cur.velocity_ned_mps
            self.current = np.array([c.x, c.y, c.z])
        n = max(1, round(dt_ns * 1e-9 / self.params.substep_s))
        h_ns = dt_ns / n
        h = dt_ns * 1e-9 / n
        self.sim.model.opt.timestep = h
        acc = np.zeros(6)
        events = []
        v = self.vehicle
        if self.obj is None:
            self._make_object()
        for k in range(n):
            tk = t_ns + round(k * h_ns)
            self.obj.place(*v.at(k * h), v, self.current, self.rho_w, self.wet)
            self.sim.command(*self._desired(tk))
            acc += self.sim.substep()
            new = self.cup.update(t_ns + round((k + 1) * h_ns), self.pump)
            self.obj.on_events([e.kind for e in new])
            self.obj.update(h, v)
            events += new
            self.metrics["peak_object_drag_n"] = max(self.metrics["peak_object_drag_n"],
                                                     float(np.linalg.norm(self.obj.drag_n)))
        self.obj.pose = v.at(dt_ns * 1e-9)  # the vehicle at t + dt, for the object's pose
        w = acc / n  # mean over the step, arm frame A ∥ body; moment about the mount
        f = w[:3]
        self.wrench = np.concatenate([f, w[3:] + np.cross(self.mount, f)])
        for e in events:
            self.metrics[e.kind] += 1
        self.metrics["peak_reaction_n"] = max(self.metrics["peak_reaction_n"],
                                              float(np.linalg.norm(f)))
        return self._outputs(t_ns + dt_ns, events)

    def _outputs(self, t_ns: int, events: list) -> dict[str, Any]:
        q, qd = self.sim.joint_state()
        q_d, _, _ = self._desired(t_ns)
        err = float(np.linalg.norm(fk(self.geometry, q) - fk(self.geometry, q_d)))
        self.metrics["max_tracking_error_m"] = max(self.metrics["max_tracking_error_m"], err)
        sig = [(f"q{i + 1}", q[i]) for i in range(3)] + [(f"qd{i + 1}", qd[i]) for i in range(3)]
        sig += [(f"tau{i + 1}", self.sim.tau[i]) for i in range(3)]
        sig += [(f"q_d{i + 1}", q_d[i]) for i in range(3)]
        sig += [("error_m", err), ("reachable", 1.0 if self.reachable else 0.0)]
        joints = signals_pb2.Signals(header=self.header(t_ns, "arm"),
                                     signals=[signals_pb2.Signal(name=k, value=float(v))
                                              for k, v in sig])
        pos, R = self.sim.cup_pose()  # arm frame A ∥ body
        qw = quat_from_rot(R)
        ee = navigation_pb2.PoseMeasurement(header=self.header(t_ns, "body"))
        ee.validity.valid = True
        p_b = pos + self.mount
        ee.position_m.x, ee.position_m.y, ee.position_m.z = (float(v) for v in p_b)
        ee.orientation.w, ee.orientation.x, ee.orientation.y, ee.orientation.z = (
            float(v) for v in qw)
        dist, ang = self.cup.alignment()
        resting = self.obj is None or self.obj.state == "resting"
        drag = 0.0 if self.obj is None else float(np.linalg.norm(self.obj.drag_n))
        su = [("attached", 1.0 if self.cup.attached else 0.0), ("pump", 1.0 if self.pump else 0.0),
              ("distance_m", dist), ("angle_rad", ang), ("force_n", self.cup.force_n),
              ("events", float(len(self.cup.events))),
              ("object_resting", 1.0 if resting else 0.0), ("object_drag_n", drag)]
        su += [(f"event.{e.kind}", e.t_ns * 1e-9) for e in events]
        suction = signals_pb2.Signals(header=self.header(t_ns, "arm"),
                                      signals=[signals_pb2.Signal(name=k, value=float(v))
                                               for k, v in su])
        wr = vehicle_pb2.Wrench(header=self.header(t_ns, "body"))
        wr.force_n.x, wr.force_n.y, wr.force_n.z = (float(v) for v in self.wrench[:3])
        wr.torque_nm.x, wr.torque_nm.y, wr.torque_nm.z = (float(v) for v in self.wrench[3:])
        out = {"joints": joints, "end_effector": ee, "suction": suction, "wrench": wr}
        if self.obj is not None:  # (without a scene: from the first step)
            p_o, R_o = self.obj.world_pose()
            ob = vehicle_pb2.VehicleState(header=self.header(t_ns, "ned"))
            ob.position_ned_m.x, ob.position_ned_m.y, ob.position_ned_m.z = (float(v) for v in p_o)
            ob.orientation.w, ob.orientation.x, ob.orientation.y, ob.orientation.z = (
                float(v) for v in quat_from_rot(R_o))
            ob.roll_rad, ob.pitch_rad, ob.yaw_rad = (float(v) for v in euler_from_rot(R_o))
            out["object"] = ob
        return out

    def terminate(self) -> dict[str, float]:
        metrics = getattr(self, "metrics", {})  # never initialised: none
        return {k: float(v) for k, v in metrics.items()}
