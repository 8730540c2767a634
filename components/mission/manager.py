"""``mission.manager``: seed 003's hadal recovery as a behaviour tree (py_trees; the
phases and the safety checks in ``phases.py``), a normal component: it reads the
vehicle's navigation, the DVL, the altimeter, the detector and the arm, and commands
the controller's setpoint and the arm's target. It can run in-process, in its own
process or on another host like any component (docs/missions.md).

Call order: configure (parameters checked, the tree built) → initialize (the first
state: phase "descend") → step(t): read the inputs into the context, tick the tree
once, publish ``setpoint``, ``arm`` (when a phase commands it), ``state`` (every
step) and ``transition`` (only when the phase changes: from, to, and why) →
terminate (``metrics.mission``: the seed's figures and the timeline).

The mission ends the run itself: on success (the object released and resting)
``finish`` (status "terminated", exit 0); on a failure of any phase or of the safety
checks it aborts safely — the setpoint holds the horizontal position and rises
``abort_rise_m``, the pump off, the arm folded to ``q0`` — publishes that and the
``aborted`` transition with the reason, and ends the run as failed
(``finish(reason, failed=True)``: status "failed", exit 1, the reason in
summary.json's ``error``, everything recorded).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from py_trees.common import Status

from moonpool.v1 import (acoustics_pb2, mission_pb2, navigation_pb2, sensors_pb2, signals_pb2,
                         vehicle_pb2, vision_pb2)

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from .context import MissionContext
from .phases import PHASES, build_tree

log = logging.getLogger(__name__)

NS = 1_000_000_000


def _pair(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)


class MissionManager(Component):
    """Seed 003's hadal recovery, descend → survey → detect → stabilise → approach →
    grasp → lift → transit → release, as a py_trees behaviour tree with safety checks
    and safe aborts."""

    inputs = (
        Port("navigation", navigation_pb2.NavigationState, "the INS: pose, velocity, covariance "
             "(the truth beside it is used for the metrics only)"),
        Port("dvl", sensors_pb2.Dvl, "the DVL: bottom lock, altitude"),
        Port("altimeter", acoustics_pb2.Altimeter, "optional: altitude (else the DVL's)"),
        Port("detection", vision_pb2.TargetDetection, "the target detector (every new image)",
             queued=True),
        Port("joints", signals_pb2.Signals, "the arm's joints (reachable)"),
        Port("suction", signals_pb2.Signals, "the arm's suction (attached, alignment, object)"),
        Port("object", vehicle_pb2.VehicleState, "optional: the object's true pose (metrics "
             "only: object delivered)"),
    )
    outputs = (
        Port("setpoint", navigation_pb2.Setpoint, "pose for control.pid (NaN: a free axis)"),
        Port("arm", signals_pb2.Signals, "the arm's target: x y z (body FRD) or q1..3, "
             "duration_s, suction"),
        Port("state", mission_pb2.MissionState, "the mission's phase at every step"),
        Port("transition", mission_pb2.MissionState, "each change of phase, with its reason"),
    )

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        heading_deg: float = param(0.0, "survey heading (and the heading of the descent)",
                                   unit="deg")
        descent_speed_mps: float = param(0.5, "descent rate", unit="m/s")
        descent_decel_mps2: float = param(0.05, "the descent brakes at this rate to stop at "
                                          "the survey altitude (from the DVL's altitude)",
                                          unit="m/s^2")
        descent_hold_sigma_m: float = param(10.0, "during the descent the horizontal position "
                                            "is held while the INS's horizontal sigma is below "
                                            "this, else free (the current carries the vehicle)",
                                            unit="m")
        survey_altitude_m: float = param(2.5, "altitude of the survey (the camera's)", unit="m")
        survey_start_ne_m: tuple[float, ...] = param((0.0, 0.0), "first waypoint of the "
                                                     "lawnmower [north, east]", unit="m")
        survey_leg_length_m: float = param(12.0, "lawnmower leg length", unit="m")
        survey_leg_spacing_m: float = param(2.0, "lawnmower leg spacing (to the right)", unit="m")
        survey_legs: int = param(3, "lawnmower legs")
        survey_speed_mps: float = param(0.4, "survey speed", unit="m/s")
        survey_max_lag_m: float = param(2.0, "the path waits while the vehicle is farther "
                                        "behind", unit="m")
        confirm_detections: int = param(4, "detections that confirm the target (detect)")
        grasp_point_m: tuple[float, ...] = param(
            (0.7152, 0.0, 0.7522), "where the arm's cup takes the target, body frame: a point "
            "where the cup points straight down (the arm's q = (0, -0.45, -1.12) rad), 0.55 m "
            "from the shoulder: room to reach 6 cm deeper within the 0.65 m reach", unit="m")
        target_height_m: float = param(0.02, "height of the target's top face above the floor",
                                       unit="m")
        hover_above_m: float = param(0.8, "stabilise this much above the grasp height",
                                     unit="m")
        pregrasp_above_m: float = param(0.05, "the cup first stops this far above the top "
                                        "face", unit="m")
        grasp_press_m: float = param(0.06, "then goes this far below it, pump on: the cup "
                                     "attaches on its way down within the suction's "
                                     "tolerance of the actual face (the estimate's height "
                                     "comes from the altimeter: a rock under the camera "
                                     "puts it off by centimetres)", unit="m")
        grasp_move_s: float = param(3.0, "duration of the arm's moves", unit="s")
        grasp_descent_s: float = param(2.0, "duration of the cup's final descent", unit="s")
        carry_point_m: tuple[float, ...] = param((0.75, 0.0, 0.6), "the cup while carrying, "
                                                 "body frame", unit="m")
        lift_m: float = param(1.0, "the vehicle rises this much with the object", unit="m")
        dropoff_ne_m: tuple[float, ...] = param((8.0, 0.0), "where the object is delivered "
                                                "[north, east]", unit="m")
        transit_altitude_m: float = param(2.0, "altitude of the transit", unit="m")
        transit_speed_mps: float = param(0.3, "transit speed", unit="m/s")
        release_altitude_m: float = param(1.3, "altitude at which the object is let go",
                                          unit="m")
        delivery_radius_m: float = param(1.0, "delivered: resting within this of the drop-off "
                                         "(truth)", unit="m")
        position_tol_m: float = param(0.1, "position reached", unit="m")
        grasp_tol_m: float = param(0.03, "position reached at the grasp height", unit="m")
        speed_tol_mps: float = param(0.05, "still", unit="m/s")
        settle_s: float = param(3.0, "a position held this long is reached", unit="s")
        detection_lost_s: float = param(10.0, "the target is lost without a detection for "
                                        "this long", unit="s")
        dvl_lost_s: float = param(5.0, "after the descent, abort without DVL bottom lock for "
                                  "this long", unit="s")
        dvl_lost_close_s: float = param(30.0, "the same at the target (approach, grasp, lift): "
                                        "the DVL's beams meet rocks around it closer than "
                                        "its minimum range", unit="s")
        ins_max_sigma_m: float = param(10.0, "abort when the INS's horizontal sigma exceeds "
                                       "this", unit="m")
        ins_grace_s: float = param(5.0, "the INS may refuse its output (aligning) this long "
                                   "at the start", unit="s")
        abort_rise_m: float = param(10.0, "a safe abort rises this much", unit="m")
        arm_fold_rad: tuple[float, ...] = param((0.0, 0.6, -2.5), "the arm's folded joints "
                                                "(a safe abort)", unit="rad")
        descend_timeout_s: float = param(600.0, "timeout of the descent", unit="s")
        survey_timeout_s: float = param(600.0, "timeout of the survey", unit="s")
        detect_timeout_s: float = param(30.0, "timeout of detect", unit="s")
        stabilise_timeout_s: float = param(60.0, "timeout of stabilise", unit="s")
        approach_timeout_s: float = param(60.0, "timeout of approach", unit="s")
        grasp_timeout_s: float = param(30.0, "timeout of grasp (the cup never aligns)",
                                       unit="s")
        unreachable_s: float = param(2.0, "abort when the arm refuses the cup's target this "
                                     "long (a single refusal may follow a jump of the INS "
                                     "before the camera corrects the target)", unit="s")
        lift_timeout_s: float = param(30.0, "timeout of lift", unit="s")
        transit_timeout_s: float = param(180.0, "timeout of transit", unit="s")
        release_timeout_s: float = param(60.0, "timeout of release", unit="s")

        def __post_init__(self) -> None:
            problems = []
            for k in ("survey_start_ne_m", "dropoff_ne_m"):
                if not _pair(getattr(self, k)):
                    problems.append(f"{k} needs 2 numbers [north, east] (or [x, y])")
            for k in ("grasp_point_m", "carry_point_m", "arm_fold_rad"):
                v = getattr(self, k)
                if not (isinstance(v, (list, tuple)) and len(v) == 3):
                    problems.append(f"{k} needs 3 numbers")
            for k in ("descent_speed_mps", "survey_altitude_m", "survey_leg_length_m",
                      "survey_leg_spacing_m", "survey_speed_mps", "survey_max_lag_m",
                      "transit_altitude_m", "transit_speed_mps", "release_altitude_m",
                      "delivery_radius_m", "position_tol_m", "grasp_tol_m", "speed_tol_mps",
                      "settle_s", "detection_lost_s", "dvl_lost_s", "dvl_lost_close_s",
                      "ins_max_sigma_m", "unreachable_s",
                      "grasp_move_s", "grasp_descent_s", "descent_hold_sigma_m", "descent_decel_mps2",
                      *(f"{ph}_timeout_s" for ph in PHASES)):
                v = getattr(self, k)
                if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                    problems.append(f"{k} must be > 0, got {v!r}")
            if self.survey_legs < 1 or self.confirm_detections < 1:
                problems.append("survey_legs and confirm_detections must be >= 1")
            if problems:
                raise ParameterError("; ".join(problems),
                                     fix="correct the mission's parameters (docs/missions.md)")

    def configure(self, params: Parameters) -> None:
        self.params = params

    def initialize(self, start_time_ns: int):
        self.ctx = MissionContext(self.params)
        self.root, self.mission, self.safety = build_tree(self.ctx)
        self.phase = ""
        self.reason = "mission start"
        self.phase_t0 = 0.0
        self.transitions = 0
        self.timeline: list[dict[str, Any]] = []
        self.status = mission_pb2.MISSION_STATUS_RUNNING
        self.last_arm: dict[str, float] | None = None
        self.aborted_in = ""
        return None

    # -- the step --------------------------------------------------------------------

    def _running_phase(self) -> str:
        for child in self.mission.children:
            if child.status == Status.RUNNING:
                return child.name
        return self.phase

    def step(self, t_ns: int, dt_ns: int, inputs: Any):
        ctx = self.ctx
        ctx.read(t_ns / NS, inputs)
        out: dict[str, Any] = {}
        if ctx.nav is None:  # nothing to steer by yet
            return {"state": self._state(t_ns)}
        ctx.command.arm = None
        self.root.tick_once()
        status = self.root.status
        if status == Status.FAILURE:
            who, why = ctx.failures[0] if ctx.failures else ("mission", "failed")
            phase = self._running_phase() if who == "safety" else who
            self._abort_command()
            out["transition"] = self._transition(t_ns, "aborted", f"{who}: {why}",
                                                 mission_pb2.MISSION_STATUS_ABORTED)
            self.aborted_in = phase
            self.finish(f"mission aborted in {phase}: {why}", failed=True)
        else:
            now = "done" if status == Status.SUCCESS else self._running_phase()
            if now != self.phase:
                prev = next((c for c in self.mission.children if c.name == self.phase), None)
                why = prev.feedback_message if prev is not None else "mission start"
                st = (mission_pb2.MISSION_STATUS_SUCCEEDED if status == Status.SUCCESS
                      else mission_pb2.MISSION_STATUS_RUNNING)
                out["transition"] = self._transition(t_ns, now, why, st)
            if status == Status.SUCCESS:
                self.finish(f"mission complete: {self.reason}")
            running = next((c for c in self.mission.children if c.name == self.phase), None)
            ctx.close_range = bool(running is not None and running.close_range)
        out["setpoint"] = self._setpoint(t_ns)
        arm = ctx.command.arm
        if arm is not None and arm != self.last_arm:
            self.last_arm = dict(arm)
            out["arm"] = signals_pb2.Signals(header=self.header(t_ns, "body"), signals=[
                signals_pb2.Signal(name=k, value=float(v)) for k, v in arm.items()])
        out["state"] = self._state(t_ns)
        return out

    def _transition(self, t_ns: int, to: str, why: str, status: int) -> mission_pb2.MissionState:
        t = t_ns / NS
        log.info("%s t = %.2f s: %s -> %s: %s", self.name, t, self.phase or "(start)", to, why)
        self.timeline.append({"t_s": t, "from": self.phase, "to": to, "reason": why})
        prev, self.phase, self.reason = self.phase, to, why
        self.phase_t0 = t
        self.transitions += 1
        self.status = status
        msg = self._state(t_ns)
        msg.previous_phase = prev
        return msg

    def _state(self, t_ns: int) -> mission_pb2.MissionState:
        ctx = self.ctx
        msg = mission_pb2.MissionState(header=self.header(t_ns, "ned"), status=self.status,
                                       phase=self.phase, reason=self.reason,
                                       phase_time_s=t_ns / NS - self.phase_t0,
                                       transitions=self.transitions,
                                       detections=ctx.target_count)
        if ctx.target is not None:
            msg.has_target = True
            msg.target_ned_m.x, msg.target_ned_m.y, msg.target_ned_m.z = map(float, ctx.target)
        if self.timeline:
            msg.previous_phase = self.timeline[-1]["from"]
        return msg

    def _setpoint(self, t_ns: int) -> navigation_pb2.Setpoint:
        c = self.ctx.command
        sp = navigation_pb2.Setpoint(header=self.header(t_ns, "ned"), yaw_rad=c.yaw,
                                     phase=self.phase,
                                     index=PHASES.index(self.phase) if self.phase in PHASES else 0)
        sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z = c.position
        sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z = c.velocity
        return sp

    def _abort_command(self) -> None:
        """Safe: hold the horizontal position, rise, pump off, arm folded."""
        ctx, p = self.ctx, self.params
        nav = ctx.nav
        xy = nav.p[:2] if nav.valid else (math.nan, math.nan)
        ctx.command.position = (float(xy[0]), float(xy[1]), float(nav.p[2] - p.abort_rise_m))
        ctx.command.yaw = float(nav.yaw)
        ctx.command.velocity = (0.0, 0.0, 0.0)
        q = p.arm_fold_rad
        ctx.command.arm = {"q1": q[0], "q2": q[1], "q3": q[2], "duration_s": p.grasp_move_s,
                           "suction": 0.0}

    # -- the end -----------------------------------------------------------------------

    def terminate(self):
        if not hasattr(self, "ctx"):  # never initialised
            return None
        ctx, p = self.ctx, self.params
        r = ctx.record
        delivered = 0.0
        err = None
        if ctx.object_true is not None and "release_time_s" in r:
            err = float(np.hypot(*(ctx.object_true[:2] - np.asarray(p.dropoff_ne_m, float))))
            delivered = 1.0 if err <= p.delivery_radius_m else 0.0
        aborted = self.status == mission_pb2.MISSION_STATUS_ABORTED
        end = self.timeline[-1]["t_s"] if self.timeline else ctx.t
        return {
            "status": "aborted" if aborted else ("succeeded" if self.phase == "done"
                                                 else "unfinished"),
            "abort_reason": ctx.failures[0][1] if aborted and ctx.failures else None,
            "last_phase": self.aborted_in if aborted else self.phase,
            "descent_time_s": r.get("descent_time_s"),
            "survey_length_m": r.get("survey_length_m"),
            "detection_time_s": r.get("detection_time_s"),
            "ins_drift_at_detection_m": r.get("ins_drift_at_detection_m"),
            "ins_drift_at_detection_percent": r.get("ins_drift_at_detection_percent"),
            "grasp_success": r.get("grasp_success", 0.0),
            "object_delivered": delivered,
            "delivery_error_m": err,
            "total_mission_time_s": end if self.phase in ("done", "aborted") else None,
            "distance_travelled_m": ctx.distance_true_m,
            "transitions": self.timeline,
        }


__all__ = ["MissionManager"]
