"""Task contracts: how T1 and T2 trials are scored (seed 001, "Learning Task Contracts").

T1 — station keeping. Eight fixed 4-DOF setpoints, 60 s per trial. Over the late-hold
window 40–60 s after the setpoint is issued:

    position RMSE  = √( mean |p − p_ref|² )            (3-D, m)
    yaw RMSE       = √( mean wrap(ψ − ψ_ref)² )        (deg)

Roll and pitch are safety guards over the whole trial. Seed 001 does not publish its
success threshold, so moonpool's rule is stated here and in docs/tasks.md, fixed
before any result was seen: a trial **succeeds** when its position RMSE ≤ 0.10 m,
its yaw RMSE ≤ 5°, and |roll| and |pitch| stay ≤ 15° during the whole trial. The
summary reports the RMSE pooled over every trial's window (as seed 001's table
does), ``success`` = the number of trials that succeeded and ``trials`` = how many
were scored ("7 / 8" in the paper is success = 7, trials = 8).

T2 — trajectory tracking. Over the time the reference moves (its settle phase
excluded), with e = p − p_ref(t):

    horizontal RMSE = √( mean (e_x² + e_y²) )          (m)
    vertical RMSE   = √( mean e_z² )                   (m)
    3-D P95         = 95th percentile of |e|           (m, linear interpolation)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

POSITION_RMSE_LIMIT_M = 0.10
"""T1 success: position RMSE over the late-hold window at most this (m)."""
YAW_RMSE_LIMIT_DEG = 5.0
"""T1 success: yaw RMSE over the late-hold window at most this (deg)."""
TILT_GUARD_DEG = 15.0
"""T1 success: |roll| and |pitch| never beyond this during the trial (deg)."""


@dataclass
class T1Trial:
    """Samples of one station-keeping trial (appended as the run goes)."""

    index: int
    """0-based setpoint index."""
    window: tuple[float, float]
    """Late-hold window, seconds after the setpoint was issued."""
    pos_err_sq: list[float] = field(default_factory=list)
    yaw_err_sq: list[float] = field(default_factory=list)
    max_tilt_rad: float = 0.0

    def add(self, tau: float, pos_err: np.ndarray, yaw_err: float, roll: float, pitch: float) -> None:
        """One sample ``tau`` s into the trial."""
        self.max_tilt_rad = max(self.max_tilt_rad, abs(roll), abs(pitch))
        if self.window[0] <= tau <= self.window[1]:
            self.pos_err_sq.append(float(pos_err @ pos_err))
            self.yaw_err_sq.append(yaw_err * yaw_err)

    @property
    def scored(self) -> bool:
        return bool(self.pos_err_sq)

    def result(self) -> dict:
        pos = math.sqrt(np.mean(self.pos_err_sq)) if self.pos_err_sq else math.nan
        yaw = math.degrees(math.sqrt(np.mean(self.yaw_err_sq))) if self.yaw_err_sq else math.nan
        tilt = math.degrees(self.max_tilt_rad)
        ok = (self.scored and pos <= POSITION_RMSE_LIMIT_M and yaw <= YAW_RMSE_LIMIT_DEG
              and tilt <= TILT_GUARD_DEG)
        return {"setpoint": self.index, "position_rmse_m": pos, "yaw_rmse_deg": yaw,
                "max_tilt_deg": tilt, "samples": len(self.pos_err_sq), "success": bool(ok)}


def t1_summary(trials: list[T1Trial]) -> dict:
    """``metrics.t1``: pooled RMSEs, success count, trial count and per-trial rows."""
    scored = [t for t in trials if t.scored]
    pos_sq = [e for t in scored for e in t.pos_err_sq]
    yaw_sq = [e for t in scored for e in t.yaw_err_sq]
    rows = [t.result() for t in scored]
    return {
        "position_rmse_m": math.sqrt(np.mean(pos_sq)) if pos_sq else None,
        "yaw_rmse_deg": math.degrees(math.sqrt(np.mean(yaw_sq))) if yaw_sq else None,
        "success": sum(r["success"] for r in rows),
        "trials": len(rows),
        "per_trial": rows,
        "rule": (f"position RMSE <= {POSITION_RMSE_LIMIT_M} m and yaw RMSE <= "
                 f"{YAW_RMSE_LIMIT_DEG} deg over the late-hold window; "
                 f"|roll|, |pitch| <= {TILT_GUARD_DEG} deg during the trial"),
    }


def t2_summary(errors: np.ndarray, trajectory: str) -> dict:
    """``metrics.t2`` from the (n, 3) tracking errors p − p_ref (m)."""
    e = np.asarray(errors, dtype=float).reshape(-1, 3)
    if len(e) == 0:
        return {"trajectory": trajectory, "horizontal_rmse_m": None, "vertical_rmse_m": None,
                "p95_3d_m": None, "samples": 0}
    return {
        "trajectory": trajectory,
        "horizontal_rmse_m": float(np.sqrt(np.mean(e[:, 0] ** 2 + e[:, 1] ** 2))),
        "vertical_rmse_m": float(np.sqrt(np.mean(e[:, 2] ** 2))),
        "p95_3d_m": float(np.percentile(np.linalg.norm(e, axis=1), 95)),
        "samples": int(len(e)),
    }


__all__ = ["POSITION_RMSE_LIMIT_M", "TILT_GUARD_DEG", "T1Trial", "YAW_RMSE_LIMIT_DEG",
           "t1_summary", "t2_summary"]
