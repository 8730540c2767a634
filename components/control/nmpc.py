"""Nonlinear MPC on the Fossen 6-DOF model (CasADi), for the 4-DOF pose (x, y, z, ψ).

Prediction model: the 12-state Euler form of :mod:`.fossen` with the profile's
parameters, x = (η, ν) = (n, e, d, φ, θ, ψ, u, v, w, p, q, r). The decision inputs
are u = (X, Y, Z, N) [N, N·m]; roll and pitch are held level by the same PD law the
component applies outside the optimisation (K = −k_p φ − k_d p, M = −k_p θ − k_d q),
so the prediction sees exactly the wrench the vehicle gets. An estimated disturbance
d̂ = (F_n, F_e, F_d, M_ψ) (world-frame force, yaw moment) and an optional known
current v_c enter the model::

    τ = (X + (Rᵀ d̂_F)_x, Y + (Rᵀ d̂_F)_y, Z + (Rᵀ d̂_F)_z, K_lvl, M_lvl, N + d̂_N)

Optimal control problem, multiple shooting over N stages of length h, RK4::

    min  Σ_{k=1..N} w_k (‖p_k − p_ref(t_k)‖²_Qp + q_ψ (ψ_k − ψ_ref(t_k))²
                         + ‖R_k ν₁,k − v_ref(t_k)‖²_Qv + q_r (r_k − r_ref)²)
       + Σ_{k=0..N−1} ‖u_k / u_s‖²_Ru + ‖(u_k − u_{k−1}) / u_s‖²_RΔ
    s.t. x_0 = x̂,  x_{k+1} = RK4(x_k, u_k, h),  u_min ≤ u_k ≤ u_max

with w_k = 1 and w_N = ``terminal_weight``, u_{−1} the last applied input and
u_s = max(|u_min|, |u_max|). The reference is the setpoint extrapolated over the
horizon from its feed-forward: p_ref(t) = p_sp + v_sp t + ½ a_sp t²,
v_ref(t) = v_sp + a_sp t (``reference_extrapolation = "acceleration"``, the default;
``"velocity"`` drops a_sp: constant velocity), ψ_ref(t) = ψ_sp + r_sp t (ψ_sp shifted
by 2π so that it lies within π of the measured yaw). A pose to hold has v = a = 0.

Solver: CasADi ``sqpmethod`` with the ``qrqp`` active-set QP and a Gauss–Newton
Hessian (the cost is a sum of squares: H = 2 Jᵣᵀ Jᵣ, no second derivatives of the
dynamics), warm-started from the previous plan shifted by one stage, at most
``max_iterations`` SQP iterations. The iteration cap, not a wall-clock limit, bounds
the solve time, so the output is the same on every run (a time limit would make the
stream depend on the machine's load).

Offset-free action: after each step the model predicts the measured state from the
previous one with the applied input; the velocity innovation Δν gives the residual
force M Δν / Δt, which a first-order filter (gain ``disturbance_gain``) accumulates
in d̂ (world frame for the force, clamped to ``disturbance_limit`` of the input box).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
from moonpool.v1 import navigation_pb2, vehicle_pb2

from ..sdk.component import Component, Port, param
from ..sdk.errors import ParameterError
from .fossen import FossenModel, rk4, rotation_euler
from .pid import make_wrench
from .state import Kinematics, StateInput, kinematics, state_message_class, state_type_param

NX, NU = 12, 4
U_AXES = (0, 1, 2, 5)  # u = (X, Y, Z, N) in the 6-DOF wrench
ACCEPTED = ("Solve_Succeeded", "Maximum_Iterations_Exceeded")
MAX_RK4_STEP_S = 0.15
"""Longest RK4 step the prediction takes by default (h = 0.3 s in one step diverged)."""


@dataclass(frozen=True)
class NmpcSettings:
    """Everything that shapes the optimal control problem (SI units)."""

    horizon: int = 20
    dt: float = 0.15
    substeps: int = 1
    position_weight: tuple[float, float, float] = (10.0, 10.0, 10.0)
    yaw_weight: float = 10.0
    velocity_weight: tuple[float, float, float] = (20.0, 20.0, 20.0)
    yaw_rate_weight: float = 20.0
    input_weight: tuple[float, float, float, float] = (2.0, 2.0, 2.0, 2.0)
    input_rate_weight: tuple[float, float, float, float] = (5.0, 5.0, 5.0, 5.0)
    terminal_weight: float = 5.0
    u_min: tuple[float, ...] = (-100.0, -100.0, -120.0, -25.0)
    u_max: tuple[float, ...] = (100.0, 100.0, 120.0, 25.0)
    level_gains: tuple[float, float] = (10.0, 3.0)
    current_ned: tuple[float, float, float] = (0.0, 0.0, 0.0)
    max_iterations: int = 5


@dataclass
class SolveResult:
    u: np.ndarray
    """The input to apply now, (X, Y, Z, N)."""
    ok: bool
    """False when the solver failed and ``u`` is the previous plan's next input."""
    status: str
    iterations: int
    wall_s: float
    plan_x: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, NX)))
    plan_u: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, NU)))


def level_torques(x: Any, gains: tuple[float, float]) -> tuple[Any, Any]:
    """(K, M) = (−k_p φ − k_d p, −k_p θ − k_d q): hold roll and pitch level."""
    kp, kd = gains
    return -kp * x[3] - kd * x[9], -kp * x[4] - kd * x[10]


class NmpcSolver:
    """The NMPC's optimal control problem and its warm-started SQP solver (no messaging)."""

    def __init__(self, model: FossenModel, settings: NmpcSettings) -> None:
        self.model, self.s = model, settings
        s = settings
        N, h = s.horizon, s.dt
        f = model.euler_function()
        self.u_min, self.u_max = np.asarray(s.u_min, float), np.asarray(s.u_max, float)
        u_scale = np.maximum(np.abs(self.u_min), np.abs(self.u_max))

        # Model with inputs (X, Y, Z, N), disturbance and levelling, one RK4 stage.
        x, u = ca.SX.sym("x", NX), ca.SX.sym("u", NU)
        d, vc = ca.SX.sym("d", 4), ca.SX.sym("v_c", 3)
        R = rotation_euler(x[3], x[4], x[5])
        d_body = ca.mtimes(R.T, d[0:3])
        K, M = level_torques(x, s.level_gains)
        tau = ca.vertcat(u[0] + d_body[0], u[1] + d_body[1], u[2] + d_body[2], K, M, u[3] + d[3])
        xdot = ca.Function("xdot", [x, u, d, vc], [f(x, tau, vc)])
        hsym = ca.SX.sym("h")
        #: x_next = step_fn(x, u, d, v_c, h): one RK4 stage of the prediction model.
        self.step_fn = ca.Function("stage", [x, u, d, vc, hsym],
                                   [rk4(xdot, x, u, (d, vc), hsym, s.substeps)],
                                   ["x", "u", "d", "v_c", "h"], ["x_next"])
        self.stage = ca.Function("stage_h", [x, u, d, vc], [self.step_fn(x, u, d, vc, h)])

        # Parameters: x0, p_ref, v_ref, psi_ref, r_ref, u_prev, d, v_c, a_ref.
        P = ca.SX.sym("P", NX + 3 + 3 + 1 + 1 + NU + 4 + 3 + 3)
        i = 0

        def take(n):
            nonlocal i
            out = P[i:i + n]
            i += n
            return out

        x0, p_ref, v_ref, psi_ref, r_ref = take(NX), take(3), take(3), take(1), take(1)
        u_prev, dist, cur, a_ref = take(NU), take(4), take(3), take(3)
        self.n_p = P.shape[0]

        Xs = [ca.SX.sym(f"x{k}", NX) for k in range(N + 1)]
        Us = [ca.SX.sym(f"u{k}", NU) for k in range(N)]
        z = ca.vertcat(*[ca.vertcat(Xs[k], Us[k]) for k in range(N)], Xs[N])
        g = [Xs[0] - x0]
        res = []
        qp = np.sqrt(np.asarray(s.position_weight, float))
        qv = np.sqrt(np.asarray(s.velocity_weight, float))
        ru = np.sqrt(np.asarray(s.input_weight, float)) / u_scale
        rd = np.sqrt(np.asarray(s.input_rate_weight, float)) / u_scale
        for k in range(N):
            g.append(Xs[k + 1] - self.stage(Xs[k], Us[k], dist, cur))
            t = (k + 1) * h
            xk = Xs[k + 1]
            w = math.sqrt(s.terminal_weight if k == N - 1 else 1.0)
            Rk = rotation_euler(xk[3], xk[4], xk[5])
            res += [w * qp * (xk[0:3] - (p_ref + v_ref * t + 0.5 * a_ref * t * t)),
                    w * math.sqrt(s.yaw_weight) * (xk[5] - (psi_ref + r_ref * t)),
                    w * qv * (ca.mtimes(Rk, xk[6:9]) - (v_ref + a_ref * t)),
                    w * math.sqrt(s.yaw_rate_weight) * (xk[11] - r_ref),
                    ru * Us[k],
                    rd * (Us[k] - (u_prev if k == 0 else Us[k - 1]))]
        r = ca.vertcat(*res)
        G = ca.vertcat(*g)
        lam_f, lam_g = ca.SX.sym("lam_f"), ca.SX.sym("lam_g", G.shape[0])
        Jr = ca.jacobian(r, z)
        hess = ca.Function("nlp_hess_l", [z, P, lam_f, lam_g], [2 * lam_f * ca.mtimes(Jr.T, Jr)],
                           ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"])
        opts = {
            "qpsol": "qrqp", "hess_lag": hess, "max_iter": int(s.max_iterations),
            "print_time": False, "print_header": False, "print_iteration": False,
            "print_status": False, "error_on_fail": False, "show_eval_warnings": False,
            "tol_pr": 1e-6, "tol_du": 1e-4,
            "qpsol_options": {"print_iter": False, "print_header": False, "print_info": False,
                              "error_on_fail": False},
        }
        self.solver = ca.nlpsol("nmpc", "sqpmethod", {"x": z, "f": ca.sumsqr(r), "g": G, "p": P}, opts)
        self.n_z = z.shape[0]
        lb = np.r_[np.tile(np.r_[np.full(NX, -np.inf), self.u_min], N), np.full(NX, -np.inf)]
        ub = np.r_[np.tile(np.r_[np.full(NX, np.inf), self.u_max], N), np.full(NX, np.inf)]
        self.lbz, self.ubz = lb, ub
        self.n_g = G.shape[0]
        self.reset()

    # -- warm start ----------------------------------------------------------------

    def reset(self) -> None:
        self.z: np.ndarray | None = None
        self.lam_g: np.ndarray | None = None
        self.u_prev = np.zeros(NU)

    def _unpack(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        N = self.s.horizon
        body = z[: N * (NX + NU)].reshape(N, NX + NU)
        xs = np.vstack([body[:, :NX], z[N * (NX + NU):][None, :]])
        return xs, body[:, NX:]

    @staticmethod
    def _pack(xs: np.ndarray, us: np.ndarray) -> np.ndarray:
        return np.r_[np.hstack([xs[:-1], us]).ravel(), xs[-1]]

    def _initial_guess(self, x0: np.ndarray) -> np.ndarray:
        N = self.s.horizon
        if self.z is None:
            return self._pack(np.tile(x0, (N + 1, 1)), np.tile(self.u_prev, (N, 1)))
        xs, us = self._unpack(self.z)
        xs = np.vstack([xs[1:], xs[-1:]])
        us = np.vstack([us[1:], us[-1:]])
        # The measured yaw is wrapped into (−π, π]; move the old plan by the same 2π.
        xs[:, 5] += 2 * math.pi * round((x0[5] - xs[0, 5]) / (2 * math.pi))
        xs[0] = x0
        return self._pack(xs, us)

    # -- solve ---------------------------------------------------------------------

    def solve(self, x0: np.ndarray, p_ref: np.ndarray, v_ref: np.ndarray, psi_ref: float,
              r_ref: float, disturbance: np.ndarray | None = None,
              current_ned: np.ndarray | None = None, a_ref: np.ndarray | None = None) -> SolveResult:
        """Solve from state x0 (12) for the reference; returns the input to apply now.

        The reference is extrapolated over the horizon from (p_ref, v_ref, a_ref) NED
        and (psi_ref, r_ref): p(t) = p + v t + ½ a t², v(t) = v + a t, ψ(t) = ψ + r t.
        """
        psi_ref = x0[5] + math.remainder(psi_ref - x0[5], 2 * math.pi)
        d = np.zeros(4) if disturbance is None else np.asarray(disturbance, float)
        vc = np.asarray(self.s.current_ned if current_ned is None else current_ned, float)
        a = np.zeros(3) if a_ref is None else np.asarray(a_ref, float)
        p = np.r_[x0, p_ref, v_ref, psi_ref, r_ref, self.u_prev, d, vc, a]
        guess = self._initial_guess(x0)
        t0 = time.perf_counter()
        status, iterations = "exception", 0
        try:
            kwargs = {"x0": guess, "p": p, "lbx": self.lbz, "ubx": self.ubz, "lbg": 0.0, "ubg": 0.0}
            if self.lam_g is not None:  # multipliers of [x_0 = x̂; stage 0 … N−1], shifted too
                lam = self.lam_g
                kwargs["lam_g0"] = np.r_[np.zeros(NX), lam[2 * NX:], lam[-NX:]]
            sol = self.solver(**kwargs)
            stats = self.solver.stats()
            status = str(stats.get("return_status", "unknown"))
            iterations = int(stats.get("iter_count", 0))
            z = np.asarray(sol["x"], float).ravel()
            ok = status in ACCEPTED and bool(np.all(np.isfinite(z)))
        except RuntimeError:
            ok = False
        wall = time.perf_counter() - t0
        if ok:
            self.z = z
            self.lam_g = np.asarray(sol["lam_g"], float).ravel()
            xs, us = self._unpack(z)
            u = np.clip(us[0], self.u_min, self.u_max)
        else:
            # Fall back to the previous plan's next input (zero before any plan).
            if self.z is not None:
                xs, us = self._unpack(self._initial_guess(x0))
                self.z = self._pack(xs, us)
                u = us[0].copy()
            else:
                xs, us = np.tile(x0, (self.s.horizon + 1, 1)), np.zeros((self.s.horizon, NU))
                u = np.zeros(NU)
            self.lam_g = None
        self.u_prev = u
        return SolveResult(u=u, ok=ok, status=status, iterations=iterations, wall_s=wall,
                           plan_x=xs, plan_u=us)

    def predict(self, x: np.ndarray, u: np.ndarray, h: float, disturbance: np.ndarray | None = None,
                current_ned: np.ndarray | None = None) -> np.ndarray:
        """The model's state after h seconds from x with input u held."""
        d = np.zeros(4) if disturbance is None else disturbance
        vc = np.asarray(self.s.current_ned if current_ned is None else current_ned, float)
        n = max(1, math.ceil(h / self.s.dt - 1e-9)) * self.s.substeps
        out = x
        for _ in range(n):
            out = self.step_fn(out, u, d, vc, h / n)
        return np.asarray(out, float).ravel()


def _floats(name: str, value: Any, n: int, component: str, *, minimum: float | None = 0.0) -> tuple[float, ...]:
    ok = isinstance(value, (list, tuple)) and len(value) == n and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok or (minimum is not None and any(v < minimum for v in value)):
        bound = "" if minimum is None else f" >= {minimum}"
        raise ParameterError(f"{name} must be {n} finite numbers{bound}, got {value!r}",
                             component=component, fix=f"give {name} as a list of {n} numbers")
    return tuple(float(v) for v in value)


class Nmpc(StateInput, Component):
    """Nonlinear MPC (CasADi, SQP with a Gauss–Newton Hessian) on the Fossen model of the
    vehicle profile: 4-DOF pose tracking, roll and pitch held level.

    Until both a state and a setpoint have arrived it outputs a zero wrench; on an
    unusable state it holds its last command. A failed solve falls back to the
    previous plan's next input (counted in the metrics); the run goes on.
    """

    inputs = (
        Port("setpoint", navigation_pb2.Setpoint, "pose to hold or follow (NED, yaw), feed-forward velocity"),
        Port("state", vehicle_pb2.VehicleState, "vehicle state: VehicleState, or NavigationState (parameter state_type)"),
    )
    outputs = (Port("wrench", vehicle_pb2.Wrench, "commanded body wrench (FRD)"),)

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        horizon: int = param(20, "number of prediction stages N")
        horizon_dt_s: float = param(0.15, "length h of a prediction stage", unit="s")
        substeps: int = param(
            0, "RK4 steps per stage; 0: ceil(h / 0.15 s), which keeps RK4 well inside its "
            "stability region for the fast roll/pitch levelling modes")
        position_weight: tuple[float, ...] = param((10.0, 10.0, 10.0), "Q_p on the n, e, d error",
                                                   unit="1/m^2")
        yaw_weight: float = param(10.0, "q_ψ on the yaw error", unit="1/rad^2")
        velocity_weight: tuple[float, ...] = param((20.0, 20.0, 20.0), "Q_v on the NED velocity error",
                                                   unit="s^2/m^2")
        yaw_rate_weight: float = param(20.0, "q_r on the yaw-rate error", unit="s^2/rad^2")
        input_weight: tuple[float, ...] = param((2.0, 2.0, 2.0, 2.0),
                                                "R_u on (X, Y, Z, N) scaled by the input box")
        input_rate_weight: tuple[float, ...] = param((5.0, 5.0, 5.0, 5.0),
                                                     "R_Δ on stage-to-stage input changes, scaled")
        terminal_weight: float = param(5.0, "multiplier of the state terms at the last stage")
        input_limit: tuple[float, ...] = param(
            (), "(X, Y, Z, N) bound, symmetric; empty: the profile's reachable box × limit_margin",
            unit="N, N·m")
        limit_margin: float = param(0.8, "fraction of the reachable box used when input_limit is empty")
        level_gains: tuple[float, ...] = param(
            (10.0, 3.0), "roll/pitch levelling (k_p, k_d): K = −k_p φ − k_d p, M = −k_p θ − k_d q; "
            "(0, 0) leaves roll and pitch free", unit="N·m/rad, N·m·s/rad")
        reference_extrapolation: str = param(
            "acceleration", "the setpoint over the horizon: \"acceleration\" (p + v t + ½ a t², "
            "from the setpoint's feed-forward) or \"velocity\" (p + v t)")
        current_ned_mps: tuple[float, ...] = param((0.0, 0.0, 0.0), "known current in the model (NED)",
                                                   unit="m/s")
        disturbance_gain: float = param(
            0.2, "offset-free filter gain in [0, 1] (0: no disturbance estimate)")
        disturbance_limit: float = param(0.5, "|d̂| bound as a fraction of the input box")
        max_iterations: int = param(5, "SQP iterations per solve (bounds the solve time)")
        state_type: str = state_type_param()
        profile: dict[str, Any] = param(
            {}, "vehicle profile (the rig's profile key): [parameters] is the model, "
            "[[thrusters]] gives the input box")

    @classmethod
    def _settings(cls, params: Parameters) -> tuple:
        """The vehicle model, the solver's settings and the input box of ``params``,
        checked: (model, settings, lo, hi)."""
        name = ""  # the host and ``moonpool check`` name the component
        state_message_class(params.state_type, name)
        profile = params.profile or {}
        if not isinstance(profile, Mapping) or not profile.get("parameters"):
            raise ParameterError("the NMPC needs the vehicle model: no profile [parameters] given",
                                 component=name,
                                 fix='add profile = "../fmus/hydrodynamics/profiles/VEHICLE.toml" '
                                     "to the component in the rig")
        try:
            model = FossenModel(profile["parameters"])
        except (ValueError, TypeError) as exc:
            raise ParameterError(f"profile [parameters]: {exc}", component=name,
                                 fix="fix the vehicle profile") from exc
        for pname, least in (("horizon", 1), ("substeps", 0), ("max_iterations", 1)):
            v = getattr(params, pname)
            if not (isinstance(v, int) and v >= least):
                raise ParameterError(f"{pname} must be an integer >= {least}, got {v!r}",
                                     component=name, fix=f"give {pname} as a whole number >= {least}")
        if not params.horizon_dt_s > 0:
            raise ParameterError(f"horizon_dt_s must be > 0, got {params.horizon_dt_s}", component=name,
                                 fix="e.g. horizon_dt_s = 0.15")
        for pname in ("yaw_weight", "yaw_rate_weight", "terminal_weight"):
            if not (getattr(params, pname) >= 0 and math.isfinite(getattr(params, pname))):
                raise ParameterError(f"{pname} must be a finite number >= 0", component=name,
                                     fix=f"set {pname} >= 0")
        if not 0 <= params.disturbance_gain <= 1:
            raise ParameterError(f"disturbance_gain must be in [0, 1], got {params.disturbance_gain}",
                                 component=name, fix="e.g. 0.2; 0 disables the estimate")
        if params.reference_extrapolation not in ("acceleration", "velocity"):
            raise ParameterError(
                f"reference_extrapolation must be \"acceleration\" or \"velocity\", got "
                f"{params.reference_extrapolation!r}", component=name,
                fix='use "acceleration" (default) or "velocity"')
        if not params.disturbance_limit >= 0:
            raise ParameterError("disturbance_limit must be >= 0", component=name, fix="e.g. 0.5")
        if params.input_limit:
            hi = np.array(_floats("input_limit", params.input_limit, 4, name, minimum=1e-9))
            lo = -hi
        else:
            lo, hi = _box_from_profile(profile, params.limit_margin, name)
        settings = NmpcSettings(
            horizon=params.horizon, dt=params.horizon_dt_s,
            substeps=params.substeps or max(1, math.ceil(params.horizon_dt_s / MAX_RK4_STEP_S - 1e-9)),
            position_weight=_floats("position_weight", params.position_weight, 3, name),
            yaw_weight=params.yaw_weight,
            velocity_weight=_floats("velocity_weight", params.velocity_weight, 3, name),
            yaw_rate_weight=params.yaw_rate_weight,
            input_weight=_floats("input_weight", params.input_weight, 4, name),
            input_rate_weight=_floats("input_rate_weight", params.input_rate_weight, 4, name),
            terminal_weight=params.terminal_weight,
            u_min=tuple(lo), u_max=tuple(hi),
            level_gains=_floats("level_gains", params.level_gains, 2, name),
            current_ned=_floats("current_ned_mps", params.current_ned_mps, 3, name, minimum=None),
            max_iterations=params.max_iterations,
        )
        return model, settings, lo, hi

    @classmethod
    def check_parameters(cls, params: Parameters) -> None:
        """The state type, the vehicle profile, horizon, weights and limits (``_settings``)."""
        cls._settings(params)

    def configure(self, params: Parameters) -> None:
        model, settings, lo, hi = self.checked(params, self._settings)
        self.p = params
        self.settings = settings
        self.solver = NmpcSolver(model, settings)
        self.d_limit = params.disturbance_limit * np.maximum(np.abs(lo), np.abs(hi))
        self._M = model.M

    def initialize(self, start_time_ns: int):
        self.solver.reset()
        self.command = np.zeros(6)
        self.disturbance = np.zeros(4)
        self.last_t_ns: int | None = None
        self.last: tuple[np.ndarray, np.ndarray] | None = None  # (x, u) of the previous solve
        self.solve_s: list[float] = []
        self.iterations: list[int] = []
        self.failures = 0
        self.iteration_limit = 0

    def _update_disturbance(self, x: np.ndarray, dt: float) -> None:
        """d̂ ← clamp(d̂ + L · (world-frame residual force), ±limit)."""
        if self.last is None or self.p.disturbance_gain == 0 or dt <= 0:
            return
        x_prev, u_prev = self.last
        pred = self.solver.predict(x_prev, u_prev, dt, self.disturbance)
        dnu = x[6:12] - pred[6:12]
        f = self._M @ dnu / dt
        R = np.asarray(rotation_euler(x[3], x[4], x[5]), float)
        residual = np.r_[R @ f[0:3], f[5]]
        self.disturbance = np.clip(self.disturbance + self.p.disturbance_gain * residual,
                                   -self.d_limit, self.d_limit)

    def control(self, kin: Kinematics, sp: navigation_pb2.Setpoint, dt: float) -> np.ndarray:
        """The 6-DOF body wrench for this step."""
        x = kin.euler_state()
        self._update_disturbance(x, dt)
        a_ref = None
        if self.p.reference_extrapolation == "acceleration":
            a = sp.acceleration_ned_mps2
            a_ref = np.array([a.x, a.y, a.z])
        res = self.solver.solve(
            x, np.array([sp.position_ned_m.x, sp.position_ned_m.y, sp.position_ned_m.z]),
            np.array([sp.velocity_ned_mps.x, sp.velocity_ned_mps.y, sp.velocity_ned_mps.z]),
            sp.yaw_rad, sp.yaw_rate_radps, self.disturbance, a_ref=a_ref)
        self.solve_s.append(res.wall_s)
        self.iterations.append(res.iterations)
        self.failures += not res.ok
        self.iteration_limit += res.status == "Maximum_Iterations_Exceeded"
        self.last = (x, res.u)
        K, M = level_torques(x, self.settings.level_gains)
        u = res.u
        return np.array([u[0], u[1], u[2], K, M, u[3]])

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]):
        sp, state = inputs.get("setpoint"), inputs.get("state")
        if sp is not None and state is not None:
            kin = kinematics(state)
            if kin is not None:  # else: hold the last command
                # dt: time since the last solve (the disturbance estimate predicts over it)
                elapsed = dt_ns if self.last_t_ns is None else t_ns - self.last_t_ns
                self.last_t_ns = t_ns
                self.command = self.control(kin, sp, elapsed * 1e-9)
        return {"wrench": make_wrench(self.header(t_ns, "body"), self.command)}

    def terminate(self):
        if not hasattr(self, "failures"):  # never initialised
            return {}
        period_ms = self.period_ns * 1e-6
        out: dict[str, Any] = {"solves": len(self.solve_s), "failures": self.failures,
                               "iteration_limit": self.iteration_limit, "period_ms": period_ms}
        if self.solve_s:
            ms = np.asarray(self.solve_s) * 1e3
            out.update(solve_ms_p50=float(np.percentile(ms, 50)), solve_ms_p99=float(np.percentile(ms, 99)),
                       solve_ms_max=float(ms.max()), mean_iterations=float(np.mean(self.iterations)),
                       over_period=int(np.sum(ms > period_ms)) if period_ms > 0 else 0)
        return out


def _box_from_profile(profile: Mapping[str, Any], margin: float, component: str):
    from .limits import limit_box

    box = limit_box(profile, margin, component, "input_limit", "give input_limit = [X, Y, Z, N]")
    lo, hi = box[0][list(U_AXES)], box[1][list(U_AXES)]
    if np.any(lo >= 0) or np.any(hi <= 0):
        raise ParameterError(f"the profile's thrusters cannot push both ways on X, Y, Z and N "
                             f"(box {lo} .. {hi})", component=component, fix="give input_limit")
    return margin * lo, margin * hi
