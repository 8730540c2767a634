"""The phases of the hadal recovery (seed 003) and the safety checks, as py_trees
behaviours over a ``MissionContext`` (``context.py``); ``build_tree`` puts them
together (docs/missions.md).

    Parallel "hadal recovery" (succeeds when the mission does, fails when either fails)
    ├── Safety: lost DVL lock (after the descent), INS refused or diverging
    └── Sequence "mission" (with memory):
        descend → survey → detect → stabilise → approach → grasp → lift → transit → release

Each phase is one behaviour: ``initialise`` (on entry) records the time and the state
it starts from, ``update`` (every tick) writes the step's commands into
``ctx.command`` and returns RUNNING, SUCCESS (``feedback_message``: why, the reason of
the transition) or FAILURE (why: the abort's reason). Every phase fails on its own
simulated-time timeout (py_trees' ``Timeout`` decorator reads the wall clock: not
used). Phases that need the target fail when no detection has come for
``detection_lost_s`` ("detection lost").

Geometry (body FRD): the arm takes the target with its cup at ``grasp_point_m`` (a
point where the forearm, hence the cup, points straight down: seed 003's "pre-grasp
pose above the starfish"), so the vehicle places that point over the target's top
face. The rig aims the camera, its lamps and the altimeter at that point (the camera
pitched forward, docs/missions.md): the target is in view, centred at the grasp
height, from the survey altitude down.
"""

from __future__ import annotations

import math

import numpy as np
import py_trees
from py_trees.common import Status

from ..tasks.lawnmower import Polyline, lawnmower_waypoints
from .context import MissionContext

NAN = math.nan


class Phase(py_trees.behaviour.Behaviour):
    """One phase: entry time, its own timeout on simulated time, success/failure with a
    reason in ``feedback_message``."""

    close_range = False
    """True for the phases at the target (approach, grasp, lift): the DVL may lose its
    bottom lock there for ``dvl_lost_close_s`` (its beams meet the rocks around the
    target closer than its minimum range) before the mission gives up."""

    def __init__(self, name: str, ctx: MissionContext, timeout_s: float) -> None:
        super().__init__(name)
        self.ctx = ctx
        self.timeout_s = timeout_s
        self.t0 = 0.0

    def initialise(self) -> None:
        self.t0 = self.ctx.t
        self.feedback_message = ""
        self.enter()

    def update(self) -> Status:
        if self.ctx.t - self.t0 > self.timeout_s:
            return self.fail(f"timeout: {self.name} took more than {self.timeout_s:g} s"
                             + self.timeout_detail())
        return self.run()

    # -- for the phases ----------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return self.ctx.t - self.t0

    def enter(self) -> None:
        pass

    def run(self) -> Status:
        raise NotImplementedError

    def timeout_detail(self) -> str:
        return ""

    def succeed(self, reason: str) -> Status:
        self.feedback_message = reason
        return Status.SUCCESS

    def fail(self, reason: str) -> Status:
        self.feedback_message = reason
        self.ctx.failures.append((self.name, reason))
        return Status.FAILURE

    def hold(self, xy, z: float, yaw: float, velocity=(0.0, 0.0, 0.0)) -> None:
        c = self.ctx.command
        c.position = (float(xy[0]), float(xy[1]), float(z))
        c.yaw = float(yaw)
        c.velocity = tuple(float(v) for v in velocity)

    def detection_lost(self) -> str:
        """The reason to give up on the target, or ""."""
        ctx, p = self.ctx, self.ctx.params
        last = ctx.t_last_detection
        if last is None or ctx.t - last > p.detection_lost_s:
            return (f"detection lost: no detection of the target for {p.detection_lost_s:g} s "
                    f"(last at t = {last:.1f} s)" if last is not None else
                    "detection lost: the target was never seen")
        return ""

    def track_target(self) -> None:
        """Fold this step's detections into the target estimate: an exponential mean of
        weight 1/10, 1/3 at close range. The detections are in the INS's frame; a DVL
        outage at the target (its beams closer than their minimum range to the rocks)
        lets the INS drift and then jump when the lock comes back: a short memory
        follows the jump within a second, keeping the target where the camera sees it
        relative to the vehicle."""
        ctx = self.ctx
        window = 3 if self.close_range else 10
        for d in ctx.new_detections:
            n = min(ctx.target_count, window - 1)
            ctx.target = d.copy() if ctx.target is None else (ctx.target * n + d) / (n + 1)
            ctx.target_count += 1


class Settle:
    """True once a condition has held for ``seconds`` without a break."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.since = seconds, None

    def __call__(self, t: float, ok: bool) -> bool:
        if not ok:
            self.since = None
            return False
        if self.since is None:
            self.since = t
        return t - self.since >= self.seconds


# ------------------------------------------------------------------ the phases


class Descend(Phase):
    """Down at ``descent_speed_mps`` (heading held, the horizontal position held while
    the INS is good enough, else free), braking at ``descent_decel_mps2`` to stop at the
    survey altitude once the DVL has the floor (speed √(2 a d) with d the depth left,
    at least 2 cm/s); done when it holds that altitude with bottom lock for
    ``settle_s``."""

    def enter(self) -> None:
        ctx = self.ctx
        self.z = float(ctx.nav.p[2]) if ctx.nav is not None else 0.0
        self.last_t = ctx.t
        self.xy = ctx.nav.p[:2].copy() if ctx.nav is not None else np.array([NAN, NAN])
        self.ok = Settle(ctx.params.settle_s)

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        dt, self.last_t = ctx.t - self.last_t, ctx.t
        floor = ctx.depth_for_altitude(p.survey_altitude_m) if ctx.bottom_lock else None
        speed = p.descent_speed_mps
        if floor is not None:  # brake to stop there
            left = max(floor - self.z, 0.0)
            speed = min(speed, max(math.sqrt(2.0 * p.descent_decel_mps2 * left), 0.02))
        self.z += speed * dt
        vz = speed
        if floor is not None and self.z >= floor:
            self.z, vz = floor, 0.0
        z = self.z
        xy = self.xy if (ctx.nav is not None and ctx.nav.sigma_h <= p.descent_hold_sigma_m) \
            else (NAN, NAN)
        self.hold(xy, z, ctx.heading(), (0.0, 0.0, vz))
        alt = ctx.altitude
        at = (ctx.bottom_lock and alt is not None and abs(alt - p.survey_altitude_m) < 0.3
              and ctx.nav is not None and abs(ctx.nav.v[2]) < 0.1)
        if self.ok(ctx.t, at):
            ctx.bottom_reached = True
            ctx.record["descent_time_s"] = ctx.t
            return self.succeed(f"at the survey altitude: {alt:.2f} m above the floor with "
                                f"DVL bottom lock, depth {ctx.nav.p[2]:.1f} m")
        return Status.RUNNING

    def timeout_detail(self) -> str:
        ctx = self.ctx
        alt = "no altitude" if ctx.altitude is None else f"altitude {ctx.altitude:.1f} m"
        return f" ({alt}, DVL {'locked' if ctx.bottom_lock else 'without bottom lock'})"


class Survey(Phase):
    """The lawnmower (``tasks.lawnmower``'s path) from where the descent ended, at the
    survey speed with a leash, holding the survey altitude; done at the first
    detection with a position."""

    def enter(self) -> None:
        ctx, p = self.ctx, self.ctx.params
        w = lawnmower_waypoints(p.survey_start_ne_m, p.heading_deg, p.survey_leg_length_m,
                                p.survey_leg_spacing_m, p.survey_legs)
        here = ctx.nav.p[:2]
        # from where the descent ended to the first waypoint (unless already there)
        self.path = Polyline(w if float(np.hypot(*(w[0] - here))) < 1e-3 else np.vstack([here, w]))
        self.s = 0.0
        self.last_t = ctx.t
        self.z = float(ctx.nav.p[2])

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        if ctx.new_detections:
            ctx.target, ctx.target_count = ctx.new_detections[0].copy(), 1
            ctx.record["detection_time_s"] = ctx.t
            ctx.record["survey_length_m"] = self.s
            if ctx.nav.true_p is not None:
                err = float(np.hypot(*(ctx.nav.true_p[:2] - ctx.nav.p[:2])))
                ctx.record["ins_drift_at_detection_m"] = err
                ctx.record["ins_drift_at_detection_percent"] = (
                    100.0 * err / ctx.distance_true_m if ctx.distance_true_m > 0 else None)
            t = ctx.target
            return self.succeed(f"target detected at ({t[0]:.2f}, {t[1]:.2f}) m after "
                                f"{self.s:.1f} m of survey")
        dt, self.last_t = ctx.t - self.last_t, ctx.t
        here, _, _ = self.path.at(self.s)
        if float(np.hypot(*(here - ctx.nav.p[:2]))) <= p.survey_max_lag_m:
            self.s = min(self.s + p.survey_speed_mps * dt, self.path.total)
        point, tangent, _ = self.path.at(self.s)
        z = ctx.depth_for_altitude(p.survey_altitude_m)
        if z is not None:  # first-order filter over the floor's relief (τ = 2 s)
            self.z += (1.0 - math.exp(-dt / 2.0)) * (z - self.z)
        done = self.s >= self.path.total
        v = (0.0, 0.0) if done else p.survey_speed_mps * tangent
        self.hold(point, self.z, math.atan2(tangent[1], tangent[0]), (v[0], v[1], 0.0))
        if done and float(np.hypot(*(point - ctx.nav.p[:2]))) < p.position_tol_m:
            return self.fail(f"survey complete ({self.s:.1f} m): the target was not detected")
        return Status.RUNNING


class Detect(Phase):
    """Hold the grasp point (where the camera looks) over the first detection until
    ``confirm_detections`` more agree; the estimate is their mean."""

    def enter(self) -> None:
        self.seen: list[np.ndarray] = []
        self.yaw = self.ctx.nav.yaw

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        self.seen += ctx.new_detections
        lost = self.detection_lost()
        if lost:
            return self.fail(lost)
        aim = (self.seen[-1] if self.seen else ctx.target)[:2] - ctx.body_to_ned_xy(
            p.grasp_point_m[:2], self.yaw)
        z = ctx.depth_for_altitude(p.survey_altitude_m)
        self.hold(aim, ctx.nav.p[2] if z is None else z, self.yaw)
        if len(self.seen) >= p.confirm_detections:
            pts = np.array(self.seen[-p.confirm_detections:])
            ctx.target = pts.mean(axis=0)
            ctx.target_count = len(pts)
            spread = float(np.max(np.linalg.norm(pts[:, :2] - ctx.target[:2], axis=1)))
            return self.succeed(f"confirmed by {len(pts)} detections within {spread:.3f} m of "
                                f"({ctx.target[0]:.2f}, {ctx.target[1]:.2f}) m")
        return Status.RUNNING


class Hover(Phase):
    """Put the arm's grasp point over the target's top face at ``altitude`` above it
    (the target estimate kept up to date), and wait until the vehicle is there and
    still for ``settle_s``. ``stabilise``: high (arm folded); ``approach``: at the
    grasp height."""

    def __init__(self, name: str, ctx: MissionContext, timeout_s: float, grasp: bool) -> None:
        super().__init__(name, ctx, timeout_s)
        self.grasp = grasp
        self.close_range = grasp

    def enter(self) -> None:
        self.yaw = self.ctx.nav.yaw
        self.ok = Settle(self.ctx.params.settle_s)
        self.err = math.inf

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        self.track_target()
        lost = self.detection_lost()
        if lost:
            return self.fail(lost)
        top = ctx.target[2] - p.target_height_m
        g = np.asarray(p.grasp_point_m, float)
        xy = ctx.target[:2] - ctx.body_to_ned_xy(g[:2], self.yaw)
        z = top - g[2] - (0.0 if self.grasp else p.hover_above_m)
        self.hold(xy, z, self.yaw)
        e = np.r_[xy - ctx.nav.p[:2], z - ctx.nav.p[2]]
        self.err = float(np.linalg.norm(e))
        tol = p.grasp_tol_m if self.grasp else p.position_tol_m
        if self.ok(ctx.t, self.err < tol and float(np.linalg.norm(ctx.nav.v)) < p.speed_tol_mps):
            return self.succeed(f"{'at the grasp height' if self.grasp else 'stable'} over the "
                                f"target: position error {self.err:.3f} m, speed "
                                f"{np.linalg.norm(ctx.nav.v):.3f} m/s")
        return Status.RUNNING

    def timeout_detail(self) -> str:
        return f" (position error {self.err:.3f} m)"


class Grasp(Phase):
    """The arm brings the cup over the target's top face (``pregrasp_above_m`` above it,
    ``grasp_move_s``), then down through it (``grasp_press_m`` below, over
    ``grasp_descent_s``) with the pump on; done when the cup attaches. The cup's target
    is the latest detection relative to the vehicle (``MissionContext.target_body``: the
    INS's drift during a DVL outage cancels), re-sent each step (the arm tracks), and the
    vehicle holds its grasp point over the target's estimate (which follows the camera:
    the INS may jump)."""

    close_range = True

    def enter(self) -> None:
        self.yaw = self.ctx.nav.yaw
        self.hold_z = float(self.ctx.nav.p[2])
        self.closest = (math.inf, math.inf)
        self.commanded = False
        self.refused_since: float | None = None

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        self.track_target()
        g = np.asarray(p.grasp_point_m, float)
        self.hold(ctx.target[:2] - ctx.body_to_ned_xy(g[:2], self.yaw), self.hold_z, self.yaw)
        top = ctx.target.copy()
        top[2] -= p.target_height_m
        x_b = ctx.to_body(top)
        if ctx.target_body is not None:  # what the camera saw last, relative to the vehicle
            x_b = ctx.target_body - ctx.nav.R.T @ np.array([0.0, 0.0, p.target_height_m])
        pressing = self.elapsed > p.grasp_move_s + 0.5
        x_b[2] += p.grasp_press_m if pressing else -p.pregrasp_above_m
        ctx.command.arm = {"x": float(x_b[0]), "y": float(x_b[1]), "z": float(x_b[2]),
                           "duration_s": p.grasp_descent_s if pressing else p.grasp_move_s,
                           "suction": 1.0}
        if self.commanded and not ctx.arm_reachable:
            if self.refused_since is None:
                self.refused_since = ctx.t
            if ctx.t - self.refused_since >= p.unreachable_s:
                return self.fail(f"unreachable target: the cup point ({x_b[0]:.3f}, "
                                 f"{x_b[1]:.3f}, {x_b[2]:.3f}) m (body frame) is outside the "
                                 f"arm's workspace (refused for {p.unreachable_s:g} s)")
        else:
            self.refused_since = None
        self.commanded = True
        self.closest = min(self.closest, (ctx.cup_distance_m, ctx.cup_angle_rad))
        if ctx.attached:
            ctx.record["grasp_time_s"] = ctx.t
            return self.succeed(f"suction attached: cup {ctx.cup_distance_m * 1000:.1f} mm from the "
                                f"surface, normal {math.degrees(ctx.cup_angle_rad):.1f} deg off")
        return Status.RUNNING

    def timeout_detail(self) -> str:
        d, a = self.closest
        return (f": the suction cup never aligned (closest {d * 1000:.1f} mm from the surface, "
                f"normal {math.degrees(a):.1f} deg off)")


class Lift(Phase):
    """The arm to its carry pose, the vehicle up ``lift_m``; done when the object is still
    held ``settle_s`` after the arm's move."""

    close_range = True

    def enter(self) -> None:
        self.yaw = self.ctx.nav.yaw
        self.xy, self.z = self.ctx.nav.p[:2].copy(), float(self.ctx.nav.p[2]) - self.ctx.params.lift_m

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        c = p.carry_point_m
        ctx.command.arm = {"x": c[0], "y": c[1], "z": c[2], "duration_s": p.grasp_move_s,
                           "suction": 1.0}
        self.hold(self.xy, self.z, self.yaw)
        if not ctx.attached:
            return self.fail("object lost while lifting: the cup let go")
        if self.elapsed >= p.grasp_move_s + p.settle_s:
            ctx.record["grasp_success"] = 1.0
            return self.succeed(f"lifted {p.lift_m:g} m, the object held")
        return Status.RUNNING


class Transit(Phase):
    """To the drop-off at ``transit_altitude_m``, at ``transit_speed_mps`` along a
    straight line (a leash), holding the object: the vehicle goes where the object,
    at the arm's carry point, is over the drop-off."""

    def enter(self) -> None:
        ctx, p = self.ctx, self.ctx.params
        self.yaw = ctx.nav.yaw
        goal = np.asarray(p.dropoff_ne_m, float) - ctx.body_to_ned_xy(p.carry_point_m[:2], self.yaw)
        self.line = Polyline(np.vstack([ctx.nav.p[:2], goal]))
        self.s, self.last_t = 0.0, ctx.t
        self.z = float(ctx.nav.p[2])
        self.ok = Settle(p.settle_s)

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        if not ctx.attached:
            return self.fail("object lost in transit: the cup let go")
        dt, self.last_t = ctx.t - self.last_t, ctx.t
        here, _, _ = self.line.at(self.s)
        if float(np.hypot(*(here - ctx.nav.p[:2]))) <= p.survey_max_lag_m:
            self.s = min(self.s + p.transit_speed_mps * dt, self.line.total)
        point, tangent, _ = self.line.at(self.s)
        z = ctx.depth_for_altitude(p.transit_altitude_m)
        if z is not None:
            self.z += (1.0 - math.exp(-dt / 2.0)) * (z - self.z)
        done = self.s >= self.line.total
        v = (0.0, 0.0) if done else p.transit_speed_mps * tangent
        self.hold(point, self.z, self.yaw, (v[0], v[1], 0.0))
        err = float(np.hypot(*(point - ctx.nav.p[:2])))
        if self.ok(ctx.t, done and err < p.position_tol_m
                   and float(np.linalg.norm(ctx.nav.v)) < p.speed_tol_mps):
            return self.succeed(f"the object over the drop-off ({p.dropoff_ne_m[0]:g}, "
                                f"{p.dropoff_ne_m[1]:g}) m: position error {err:.3f} m")
        return Status.RUNNING


class Release(Phase):
    """Down to ``release_altitude_m``, pump off once there; done when the object rests on
    the seabed."""

    def enter(self) -> None:
        self.xy, self.yaw = self.ctx.nav.p[:2].copy(), self.ctx.nav.yaw
        self.ok = Settle(self.ctx.params.settle_s)
        self.released = False
        self.z = float(self.ctx.nav.p[2])

    def run(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        z = ctx.depth_for_altitude(p.release_altitude_m)
        if z is not None and not self.released:
            self.z = z
        self.hold(self.xy, self.z, self.yaw)
        c = p.carry_point_m
        there = abs(self.z - ctx.nav.p[2]) < p.position_tol_m
        if self.ok(ctx.t, there) or self.released:
            self.released = True
            ctx.command.arm = {"x": c[0], "y": c[1], "z": c[2], "duration_s": p.grasp_move_s,
                               "suction": 0.0}
        if self.released and not ctx.attached and ctx.object_resting:
            ctx.record["release_time_s"] = ctx.t
            return self.succeed("released: the object rests on the seabed")
        return Status.RUNNING


# ------------------------------------------------------------------ safety


class Safety(py_trees.behaviour.Behaviour):
    """SUCCESS while all is well; FAILURE (the abort's reason) on: the INS refusing its
    output or its horizontal σ above ``ins_max_sigma_m``; after the descent, no DVL
    bottom lock for ``dvl_lost_s`` (``dvl_lost_close_s`` in the phases at the target,
    where the INS dead-reckons a few seconds with the target in view)."""

    def __init__(self, ctx: MissionContext) -> None:
        super().__init__("safety")
        self.ctx = ctx

    def update(self) -> Status:
        ctx, p = self.ctx, self.ctx.params
        nav = ctx.nav
        if nav is None:
            return Status.SUCCESS
        if not nav.valid and ctx.t > p.ins_grace_s:
            return self._abort(f"INS divergence: the INS refused its output ({nav.detail})")
        if nav.sigma_h > p.ins_max_sigma_m:
            return self._abort(f"INS divergence: horizontal sigma {nav.sigma_h:.2f} m > "
                               f"{p.ins_max_sigma_m:g} m")
        if ctx.bottom_reached:
            last = ctx.t_last_lock if ctx.t_last_lock is not None else -math.inf
            limit = p.dvl_lost_close_s if ctx.close_range else p.dvl_lost_s
            if ctx.t - last > limit:
                return self._abort(f"lost DVL lock: no bottom track for {ctx.t - last:.1f} s "
                                   f"(DVL: {ctx.dvl_detail or 'no detail'})")
        return Status.SUCCESS

    def _abort(self, reason: str) -> Status:
        self.feedback_message = reason
        self.ctx.failures.append(("safety", reason))
        return Status.FAILURE


PHASES = ("descend", "survey", "detect", "stabilise", "approach", "grasp", "lift", "transit",
          "release")


def build_tree(ctx: MissionContext) -> tuple[py_trees.behaviour.Behaviour,
                                             py_trees.composites.Sequence, Safety]:
    """(root, the mission sequence, the safety check) of the hadal recovery."""
    p = ctx.params
    phases = [
        Descend("descend", ctx, p.descend_timeout_s),
        Survey("survey", ctx, p.survey_timeout_s),
        Detect("detect", ctx, p.detect_timeout_s),
        Hover("stabilise", ctx, p.stabilise_timeout_s, grasp=False),
        Hover("approach", ctx, p.approach_timeout_s, grasp=True),
        Grasp("grasp", ctx, p.grasp_timeout_s),
        Lift("lift", ctx, p.lift_timeout_s),
        Transit("transit", ctx, p.transit_timeout_s),
        Release("release", ctx, p.release_timeout_s),
    ]
    assert tuple(ph.name for ph in phases) == PHASES
    mission = py_trees.composites.Sequence("mission", memory=True, children=phases)
    safety = Safety(ctx)
    root = py_trees.composites.Parallel(
        "hadal recovery",
        policy=py_trees.common.ParallelPolicy.SuccessOnSelected(children=[mission],
                                                                 synchronise=False),
        children=[safety, mission])
    return root, mission, safety


__all__ = ["PHASES", "Phase", "Safety", "build_tree"]
