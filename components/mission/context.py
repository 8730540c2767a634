"""What the mission manager knows and commands at a step (``MissionContext``), filled
from its input messages, read and written by the phases of ``phases.py``.

Everything is in the navigation's frame (the INS's NED): the vehicle knows no other.
The truth (the INS's ``true_position_ned_m``, the arm's ``object`` pose) is used for
the metrics only, never to decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from moonpool.v1 import sensors_pb2

from ..sdk.frames import rot_from_quat

NAN3 = (math.nan, math.nan, math.nan)


@dataclass
class Nav:
    """The INS's latest estimate."""

    valid: bool
    """Its validity (a refused output is never steered by)."""
    detail: str
    """Its validity detail (why refused; "dead reckoning ...")."""
    p: np.ndarray
    """Position NED, m."""
    v: np.ndarray
    """Velocity NED, m/s."""
    R: np.ndarray
    """Body → NED."""
    yaw: float
    """Heading, rad."""
    sigma_h: float
    """Horizontal position σ, m (the larger of north and east)."""
    true_p: np.ndarray | None
    """The truth beside it (metrics only), or None."""


@dataclass
class Command:
    """What the mission asks for at this step."""

    position: tuple[float, float, float] = NAN3
    """Setpoint position NED, m (NaN: the axis is free, control.pid)."""
    yaw: float = math.nan
    """Setpoint heading, rad (NaN: free)."""
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Feed-forward velocity NED, m/s."""
    arm: dict[str, float] | None = None
    """The arm's target (x, y, z body FRD or q1..q3; duration_s; suction), or None: unchanged."""


@dataclass
class MissionContext:
    """Inputs turned into quantities (``read``), the phases' commands, the bookkeeping."""

    params: Any
    t: float = 0.0
    nav: Nav | None = None
    bottom_lock: bool = False
    t_last_lock: float | None = None
    dvl_detail: str = ""
    altitude: float | None = None
    """Altitude of the vehicle's altimeter (or the DVL's) above the floor, m."""
    new_detections: list[np.ndarray] = field(default_factory=list)
    """Target positions (NED, the floor under the blob) from this step's new images."""
    target_body: np.ndarray | None = None
    """The latest detection relative to the vehicle, body frame: R_navᵀ (p_det − p_nav)
    with the navigation of the same instant the detector used, so the INS's own drift
    cancels (what the camera sees); the grasp steers the cup by it."""
    t_last_detection: float | None = None
    arm_reachable: bool = True
    attached: bool = False
    object_resting: bool = True
    cup_distance_m: float = math.inf
    cup_angle_rad: float = math.inf
    object_true: np.ndarray | None = None
    command: Command = field(default_factory=Command)
    target: np.ndarray | None = None
    """The target's floor point (NED) estimate, once detected."""
    target_count: int = 0
    close_range: bool = False
    """The running phase works at the target (``Phase.close_range``): the manager sets it
    after each tick, the safety check reads it at the next."""
    bottom_reached: bool = False
    """The descent is over: from now on the DVL must hold its bottom lock."""
    distance_true_m: float = 0.0
    """Horizontal distance travelled (truth), m."""
    _last_true: np.ndarray | None = None
    record: dict[str, Any] = field(default_factory=dict)
    """Metrics the phases set (descent_time_s, detection_time_s, ...)."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(behaviour, reason) of every failure, in order: the first is the abort's cause."""

    # -- inputs ---------------------------------------------------------------------

    def read(self, t_s: float, inputs: Any) -> None:
        self.t = t_s
        nav = inputs.get("navigation")
        if nav is not None:
            o = nav.orientation
            q = (o.w, o.x, o.y, o.z) if (o.w or o.x or o.y or o.z) else (1.0, 0.0, 0.0, 0.0)
            cov = list(nav.covariance.values)
            sigma_h = math.sqrt(max(cov[0], cov[7])) if len(cov) >= 8 else math.inf
            tp = nav.true_position_ned_m
            true_p = np.array([tp.x, tp.y, tp.z]) if nav.HasField("true_position_ned_m") else None
            self.nav = Nav(nav.validity.valid, nav.validity.detail,
                           np.array([nav.position_ned_m.x, nav.position_ned_m.y, nav.position_ned_m.z]),
                           np.array([nav.velocity_ned_mps.x, nav.velocity_ned_mps.y,
                                     nav.velocity_ned_mps.z]),
                           rot_from_quat(q), nav.yaw_rad, sigma_h, true_p)
            if true_p is not None:
                if self._last_true is not None:
                    self.distance_true_m += float(np.hypot(*(true_p[:2] - self._last_true[:2])))
                self._last_true = true_p
        dvl = inputs.get("dvl")
        if dvl is not None:
            self.bottom_lock = dvl.validity.valid and dvl.track == sensors_pb2.DVL_TRACK_BOTTOM
            self.dvl_detail = dvl.validity.detail
            if self.bottom_lock:
                self.t_last_lock = t_s
                if inputs.get("altimeter") is None:
                    self.altitude = dvl.altitude_m
        alt = inputs.get("altimeter")
        if alt is not None and alt.validity.valid:
            self.altitude = alt.range_m
        self.new_detections = []
        for det in inputs.get("detection") or ():
            if det.validity.valid and det.has_position:
                p = det.position_ned_m
                self.new_detections.append(np.array([p.x, p.y, p.z]))
                self.t_last_detection = t_s
                if self.nav is not None:
                    self.target_body = self.to_body(self.new_detections[-1])
        joints = inputs.get("joints")
        if joints is not None:
            sig = {s.name: s.value for s in joints.signals}
            self.arm_reachable = sig.get("reachable", 1.0) >= 0.5
        suction = inputs.get("suction")
        if suction is not None:
            sig = {s.name: s.value for s in suction.signals}
            self.attached = sig.get("attached", 0.0) >= 0.5
            self.object_resting = sig.get("object_resting", 1.0) >= 0.5
            self.cup_distance_m = sig.get("distance_m", math.inf)
            self.cup_angle_rad = sig.get("angle_rad", math.inf)
        obj = inputs.get("object")
        if obj is not None:
            p = obj.position_ned_m
            self.object_true = np.array([p.x, p.y, p.z])

    # -- helpers for the phases -------------------------------------------------------

    def heading(self) -> float:
        return math.radians(self.params.heading_deg)

    def body_to_ned_xy(self, xy, yaw: float) -> np.ndarray:
        """A body-frame horizontal offset turned into NED by the heading alone."""
        c, s = math.cos(yaw), math.sin(yaw)
        return np.array([c * xy[0] - s * xy[1], s * xy[0] + c * xy[1]])

    def depth_for_altitude(self, altitude_m: float) -> float | None:
        """The depth at which the vehicle is ``altitude_m`` above the floor under it now
        (its depth + the altitude measured − the altitude wanted), or None."""
        if self.nav is None or self.altitude is None:
            return None
        return float(self.nav.p[2] + self.altitude - altitude_m)

    def to_body(self, p_ned: np.ndarray) -> np.ndarray:
        """A NED point in the body frame of the navigation's pose."""
        return self.nav.R.T @ (np.asarray(p_ned, float) - self.nav.p)


__all__ = ["Command", "MissionContext", "Nav"]
