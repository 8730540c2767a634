"""Constrained thrust allocation: a desired body wrench tau_d -> thruster forces f.

Pure numpy/OSQP, usable without a component (``Allocation``); ``allocator.py`` wraps
it. The maths is in docs/actuation.md (allocation); in short, with B the 6 x n
configuration matrix (``geometry.py``) and per-thruster limits f_min,i <= f_i <= f_max,i:

``method = "qp"``, ``saturation = "preserve-direction"`` (default)::

    min  −a + λ ‖u‖²   s.t.  B̂ u = a τ̂,  0 <= a <= 1,  u_min <= u <= u_max

  u = F⁻¹ f are the forces normalised by each thruster's larger limit, τ̂ = S⁻¹ τ
  the wrench normalised per axis (s_k = the most thrust axis k could add up to), B̂
  = S⁻¹ B F. Inside the attainable set a = 1 and B f = τ_d exactly, with the least
  effort; outside it the largest attainable multiple a·τ_d, so the achieved wrench
  keeps the demanded direction (zero direction error). (λ‖u‖² could trade a for
  effort only where ∂‖u‖²/∂a > 1/λ, i.e. at the very edge of the attainable set.)

``method = "qp"``, ``saturation = "least-squares"``: the issue's weighted form::

    min  ‖B̂ u − τ̂‖²_W + λ ‖u‖²   s.t.  u_min <= u <= u_max

``method = "pinv-clip"``: u = clip(B̂⁺ τ̂); ``"pinv-scale"``: u = s·B̂⁺ τ̂ with the
largest s <= 1 that respects the limits (the baselines).

When the unconstrained optimum (the minimum-effort exact solution B̂⁺τ̂, resp. the
regularised least-squares solution) lies within the limits it is the QP's optimum
and is returned without calling OSQP ("no limit active"). Otherwise OSQP: both QPs
are set up once (sparse P, A) and warm-started; per step only the demand
changes (``update(Ax=…)`` for the direction-preserving problem, ``update(q=…)``
for least squares). ADMM runs to 1e-4, then an active-set polish solves the KKT
system of the identified active set exactly (kept only if feasible with correctly
signed multipliers); if it fails ADMM continues to 1e-7 and polishes again. Forces are clipped to the limits after the solve, so they
never exceed them by a solver tolerance. An OSQP failure (status other than
solved) falls back to ``pinv-scale`` for that step and is counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import osqp
import scipy.sparse as sp
from scipy.linalg.lapack import dgesv as _dgesv
from scipy.optimize import linprog

from ..sdk.errors import ParameterError, PortError, StepFailed
from .geometry import (
    AXES,
    AXIS_NAMES,
    configuration_matrix,
    producible_subset,
    thrusters_from_profile,
    unproducible_axes,
)

METHODS = ("qp", "pinv-clip", "pinv-scale")
SATURATION_MODES = ("preserve-direction", "least-squares")

DEFAULT_REGULARIZATION = {"preserve-direction": 1e-3, "least-squares": 1e-6}
"""λ when none is given (0). Least squares: λ biases the wrench (relative error about
10·λ inside the attainable set), so it is small. Preserve-direction: λ only ranks
solutions with the same achieved fraction, and a larger λ conditions the QP better."""

MET_RTOL = 1e-4
"""A demand counts as met when the weighted relative wrench error is at most this."""
LIMIT_RTOL = 1e-5
"""A thruster counts as saturated within this fraction of its range from a non-zero limit."""

EPS_COARSE, EPS_FINE = 1e-4, 1e-7
OSQP_SETTINGS = {
    "eps_abs": EPS_COARSE, "eps_rel": EPS_COARSE, "polishing": False, "max_iter": 1000,
    "warm_starting": True, "verbose": False, "adaptive_rho": True,
}
"""ADMM to EPS_COARSE, then our own active-set polish (``_polish``), which is exact
when ADMM has found the active set (9 times in 10); otherwise ADMM goes on to
EPS_FINE. OSQP's own ``polishing`` is off: it prints to stdout from C when no bound
is active, which would fill every component log."""
_RHO0 = 0.1  # OSQP's default initial rho, restored for a cold start
_OK = {osqp.SolverStatus.OSQP_SOLVED, osqp.SolverStatus.OSQP_SOLVED_INACCURATE}
_UNFINISHED = {osqp.SolverStatus.OSQP_MAX_ITER_REACHED, osqp.SolverStatus.OSQP_TIME_LIMIT_REACHED}


@dataclass
class AllocationResult:
    """One allocation: forces in the order of B's columns and what they achieve."""

    force_n: np.ndarray
    """(n,) thrust per thruster, N, within its limits (0 for a disabled thruster)."""
    achieved: np.ndarray
    """(6,) B f: the wrench the forces make, [X Y Z K M N] (N, N·m)."""
    demanded: np.ndarray
    """(6,) the demanded wrench τ_d."""
    saturated: bool
    """The demand was not met: weighted relative error > MET_RTOL on the controlled axes."""
    thruster_saturated: np.ndarray
    """(n,) bool: the thruster sits at a non-zero limit."""
    scale: float
    """Achieved fraction of the demand along it: ⟨τ_a, τ_d⟩_W / ‖τ_d‖²_W (1 when τ_d = 0)."""
    relative_error: float
    """‖τ_a − τ_d‖_W / ‖τ_d‖_W on the controlled axes (0 when τ_d = 0)."""
    status: str
    """"pinv" (baselines); OSQP's status ("solved", …) with ", polished" when the
    active-set polish succeeded; "fallback (…)" when OSQP failed and pinv-scale was used."""
    iterations: int = 0
    """OSQP iterations (0 for the baselines)."""


def max_scale(B: np.ndarray, f_min: np.ndarray, f_max: np.ndarray, tau: np.ndarray,
              rows: Sequence[int] = range(6)) -> float:
    """The largest a >= 0 with B_rows f = a·τ_rows for some f within the limits (an LP,
    scipy HiGHS); a >= 1 means τ is attainable. Independent of OSQP (for checks)."""
    rows = list(rows)
    Bs = np.asarray(B, dtype=float)[rows]
    t = np.asarray(tau, dtype=float)[rows]
    n = Bs.shape[1]
    # variables [f, a]: maximise a  s.t.  B f - a tau = 0
    A_eq = np.hstack([Bs, -t[:, None]])
    c = np.zeros(n + 1)
    c[-1] = -1.0
    bounds = [(lo, hi) for lo, hi in zip(f_min, f_max)] + [(0.0, None)]
    res = linprog(c, A_eq=A_eq, b_eq=np.zeros(len(rows)), bounds=bounds, method="highs")
    if res.status == 3:  # unbounded: tau = 0 on these rows
        return math.inf
    if res.status != 0:
        raise StepFailed(f"linprog failed: {res.message}", fix="report this as a bug")
    return float(res.x[-1])


def direction_error(demanded: np.ndarray, achieved: np.ndarray, metric: np.ndarray) -> float:
    """Angle (rad) between τ_d and τ_a in the weighted wrench space (each axis
    multiplied by ``metric``, e.g. ``Allocation.metric``); π/2 when τ_a = 0 ≠ τ_d."""
    a = np.asarray(demanded, dtype=float) * metric
    b = np.asarray(achieved, dtype=float) * metric
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0:
        return 0.0
    if nb == 0:
        return math.pi / 2
    a, b = a / na, b / nb
    c = float(a @ b)
    s = float(np.linalg.norm(b - c * a))  # acos loses precision near 0: atan2(sin, cos)
    return math.atan2(s, c)


class Allocation:
    """Thrust allocation for one geometry; ``allocate(τ_d)`` per step.

    ``B`` (6 x n) and the limits ``f_min`` <= 0 <= ``f_max`` (N) per thruster;
    ``names`` for messages; ``weights`` (6, >= 0, relative importance of the
    normalised axes; 0 leaves an axis uncontrolled); ``regularization`` λ (effort
    penalty on the normalised forces); ``disabled`` names thrusters that must not
    be used (force 0). Bad input raises ParameterError naming the thruster or axis.
    """

    def __init__(self, B: Any, f_min: Any, f_max: Any, *, names: Sequence[str] | None = None,
                 weights: Sequence[float] = (1.0,) * 6, regularization: float = 0.0,
                 method: str = "qp", saturation: str = "preserve-direction",
                 disabled: Sequence[str] = (), component: str = "") -> None:
        self.component = component
        B = np.asarray(B, dtype=float)
        if B.ndim != 2 or B.shape[0] != 6 or B.shape[1] == 0 or not np.all(np.isfinite(B)):
            raise self._bad(f"B must be a finite 6 x n matrix, got shape {B.shape}",
                            "build it with geometry.configuration_matrix")
        n = B.shape[1]
        self.names = tuple(names) if names is not None else tuple(f"#{i + 1}" for i in range(n))
        f_min = np.asarray(f_min, dtype=float).reshape(-1)
        f_max = np.asarray(f_max, dtype=float).reshape(-1)
        if len(self.names) != n or f_min.shape != (n,) or f_max.shape != (n,):
            raise self._bad(f"B has {n} columns but {len(self.names)} names, {f_min.size} "
                            f"lower and {f_max.size} upper limits", "give one per thruster")
        for i, t in enumerate(self.names):
            lo, hi = f_min[i], f_max[i]
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise self._bad(f"thruster '{t}': limits [{lo}, {hi}] N are not finite",
                                f"give thruster '{t}' finite limits")
            if lo > hi:
                raise self._bad(f"thruster '{t}': infeasible limits, f_min = {lo:g} N > "
                                f"f_max = {hi:g} N", f"swap or correct the limits of '{t}'")
            if lo == hi:
                raise self._bad(f"thruster '{t}': zero thrust range, f_min = f_max = {lo:g} N",
                                f"give '{t}' a range, or disable it")
            if lo > 0 or hi < 0:
                raise self._bad(f"thruster '{t}': limits [{lo:g}, {hi:g}] N exclude zero thrust",
                                f"limits of '{t}' must satisfy f_min <= 0 <= f_max")
        unknown = [d for d in disabled if d not in self.names]
        if unknown:
            raise self._bad(f"disabled names unknown thrusters {unknown}",
                            f"thrusters are {list(self.names)}")
        w = np.asarray(weights, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise self._bad(f"weights must be 6 finite numbers >= 0, not all 0 "
                            f"(axes {' '.join(AXES)}), got {list(np.atleast_1d(weights))}",
                            "e.g. weights = [1, 1, 1, 1, 1, 1]")
        if method not in METHODS:
            raise self._bad(f"method must be one of {list(METHODS)}, got {method!r}",
                            'e.g. method = "qp"')
        if saturation not in SATURATION_MODES:
            raise self._bad(f"saturation must be one of {list(SATURATION_MODES)}, got "
                            f"{saturation!r}", 'e.g. saturation = "preserve-direction"')
        lam = float(regularization)
        if not (math.isfinite(lam) and lam >= 0):
            raise self._bad(f"regularization must be finite and >= 0, got {regularization}",
                            "use 0 for the default of the saturation mode")
        if lam == 0:
            lam = DEFAULT_REGULARIZATION[saturation]

        self.B, self.f_min, self.f_max = B, f_min, f_max
        self.n = n
        self.method, self.saturation, self.regularization = method, saturation, lam
        self.weights = w
        self.active = np.array([t not in set(disabled) for t in self.names])
        if not self.active.any():
            raise self._bad("every thruster is disabled", "leave at least one enabled")
        self.rows = [k for k in range(6) if w[k] > 0]
        Ba = B[:, self.active]
        self.f_ref = np.maximum(f_max, -f_min)[self.active]
        self.lo = f_min[self.active] / self.f_ref
        self.hi = f_max[self.active] / self.f_ref
        # axis scale: the most thrust axis k could add up to
        s = np.abs(Ba) @ self.f_ref
        self.axis_scale = np.where(s > 0, s, 1.0)
        self.metric = np.where(w > 0, np.sqrt(w) / self.axis_scale, 0.0)
        """Per-axis factor of the weighted wrench space (direction error, relative error)."""

        problems = unproducible_axes(Ba, self.rows)
        if problems:
            keep = producible_subset(Ba, self.rows)
            suggestion = [float(v) if k in keep else 0.0 for k, v in enumerate(w)]
            raise self._bad(
                "; ".join(problems),
                "add or re-orient thrusters or enable disabled ones; or leave those axes "
                f"uncontrolled: weights = {[int(v) if v.is_integer() else v for v in suggestion]}",
            )
        self._check_cone(Ba)

        S = np.asarray(self.rows)
        self.Bh = (Ba[S] / self.axis_scale[S, None]) * self.f_ref[None, :]  # m x na
        self.wS = w[S]
        self.pinv = np.linalg.pinv(self.Bh)
        self._unconstrained = self.pinv  # preserve-direction: min ‖u‖² s.t. B̂u = τ̂
        self._solver = None
        if method == "qp":
            self._setup_qp()
        # statistics
        self.solves = 0
        self.fallbacks = 0

    # ---------------------------------------------------------------- set up

    def _bad(self, message: str, fix: str) -> ParameterError:
        return ParameterError(message, component=self.component, fix=fix)

    def _check_cone(self, Ba: np.ndarray) -> None:
        """With one-directional thrusters, full rank is not enough: each ±axis must be
        attainable with some a > 0 (then, the attainable set being convex, every
        direction is)."""
        lo, hi = self.f_min[self.active], self.f_max[self.active]
        if np.all(lo < 0) and np.all(hi > 0):
            return
        missing = []
        for k in self.rows:
            for sign in (1.0, -1.0):
                e = np.zeros(6)
                e[k] = sign
                if max_scale(Ba, lo, hi, e, self.rows) <= 1e-9:
                    missing.append(f"{'+' if sign > 0 else '-'}{AXES[k]}")
        if missing:
            one_way = [t for t, a, f0, f1 in zip(self.names, self.active, self.f_min, self.f_max)
                       if a and (f0 == 0 or f1 == 0)]
            raise self._bad(
                f"the thrusters cannot produce {', '.join(missing)} "
                f"({', '.join(AXIS_NAMES[AXES.index(m[1])] for m in missing)} in that sense): "
                f"thrusters {one_way} push one way only",
                "give them a reverse limit (max_reverse_n > 0), add thrusters, or give those "
                "axes weight 0",
            )

    def _setup_qp(self) -> None:
        m, na = self.Bh.shape
        lam = self.regularization
        if self.saturation == "preserve-direction":
            # x = [u (na), a]; cost −a + λ‖u‖² = ½ xᵀPx + qᵀx
            P = sp.diags(np.r_[np.full(na, 2.0 * lam), 0.0]).tocsc()
            self._q = np.r_[np.zeros(na), -1.0]
            # A = [[B̂, -τ̂], [I, 0], [0, 1]], the a column stored dense (placeholder 1s)
            top = np.hstack([self.Bh, np.ones((m, 1))])
            A = sp.vstack([sp.csc_matrix(top), sp.eye(na + 1, format="csc")]).tocsc()
            A.sort_indices()
            start, end = A.indptr[na], A.indptr[na + 1]
            col_rows = A.indices[start:end]
            self._tau_idx = (start + np.arange(m)).astype(np.int64)
            assert np.array_equal(col_rows[:m], np.arange(m))
            l = np.r_[np.zeros(m), self.lo, 0.0]
            u = np.r_[np.zeros(m), self.hi, 1.0]
            self._A = A.toarray()
        else:
            W = np.diag(self.wS)
            H = self.Bh.T @ W @ self.Bh + lam * np.eye(na)
            P = sp.csc_matrix(2.0 * H)
            self._q = np.zeros(na)
            self._BtW = self.Bh.T @ W
            self._unconstrained = np.linalg.solve(H, self._BtW)  # argmin without limits
            A = sp.eye(na, format="csc")
            l, u = self.lo, self.hi
            self._A = A.toarray()
        self._P, self._l, self._u = P.toarray(), np.asarray(l, float), np.asarray(u, float)
        self._eq = self._l == self._u
        P = sp.triu(P, format="csc")
        self._solver = osqp.OSQP()
        try:
            self._solver.setup(P, self._q, A, l, u, **OSQP_SETTINGS)
        except Exception as exc:  # osqp raises ValueError / OSQPException
            raise self._bad(f"OSQP refused the allocation problem: {type(exc).__name__}: {exc}",
                            "check the thruster limits and weights") from exc

    @classmethod
    def from_profile(cls, profile: Any, *, derate: float = 1.0, component: str = "",
                     **kw: Any) -> Allocation:
        """From a profile's content: B from its [[thrusters]], f_min = −max_reverse_n·derate,
        f_max = max_forward_n·derate."""
        if not (isinstance(derate, (int, float)) and 0 < derate <= 1):
            raise ParameterError(f"derate must be in (0, 1], got {derate!r}", component=component,
                                 fix="e.g. derate = 0.9 keeps 10 % of thrust in reserve")
        specs = thrusters_from_profile(profile, component)
        B = configuration_matrix(specs)
        f_min = np.array([t.f_min for t in specs]) * derate
        f_max = np.array([t.f_max for t in specs]) * derate
        return cls(B, f_min, f_max, names=[t.name for t in specs], component=component, **kw)

    # ---------------------------------------------------------------- solve

    def allocate(self, tau: Any) -> AllocationResult:
        """Thruster forces for the demanded body wrench τ_d = [X Y Z K M N] (N, N·m)."""
        tau = np.asarray(tau, dtype=float).reshape(-1)
        if tau.shape != (6,) or not np.all(np.isfinite(tau)):
            raise PortError(f"the demanded wrench must be 6 finite numbers, got {tau.tolist()}",
                            component=self.component,
                            fix="check the controller that produces the wrench")
        th = tau[self.rows] / self.axis_scale[self.rows]
        status, iters = "pinv", 0
        if self.method == "pinv-clip":
            u = np.clip(self.pinv @ th, self.lo, self.hi)
        elif self.method == "pinv-scale":
            u = self._pinv_scale(th)
        else:
            u = self._unconstrained @ th
            if (u >= self.lo).all() and (u <= self.hi).all() and (
                    self.saturation == "least-squares" or self.regularization * (u @ u) < 0.5):
                # No limit active at the unconstrained optimum: it is the QP's optimum
                # (KKT with no active bound; for preserve-direction a = 1 is optimal as
                # d/da (−a + λa²‖u‖²) < 0 at a = 1). OSQP is not needed.
                status = "no limit active"
            else:
                u, status, iters = self._solve_qp(th)
        self.solves += 1
        return self._result(tau, u, status, iters)

    def _pinv_scale(self, th: np.ndarray) -> np.ndarray:
        u0 = self.pinv @ th
        s = 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            over = u0 > self.hi
            under = u0 < self.lo
            if over.any():
                s = min(s, float(np.min(self.hi[over] / u0[over])))
            if under.any():
                s = min(s, float(np.min(self.lo[under] / u0[under])))
        return np.clip(max(s, 0.0) * u0, self.lo, self.hi)

    def _solve_qp(self, th: np.ndarray) -> tuple[np.ndarray, str, int]:
        """OSQP in stages, each stopping as soon as the polish succeeds: ADMM to
        EPS_COARSE from the previous solution; then on to EPS_FINE from there; then,
        should ADMM have stalled, once more from a cold start; then the fallback."""
        solver = self._solver
        try:
            if self.saturation == "preserve-direction":
                solver.update(Ax=-th, Ax_idx=self._tau_idx)
                self._A[: len(th), -1] = -th
            else:
                self._q = -2.0 * (self._BtW @ th)
                solver.update(q=self._q)
            res = solver.solve(raise_error=False)
            iters = res.info.iter
            x, polished = self._finish(res)
            if not polished:
                solver.update_settings(eps_abs=EPS_FINE, eps_rel=EPS_FINE)
                try:
                    res = solver.solve(raise_error=False)
                    iters += res.info.iter
                    x, polished = self._finish(res)
                    if x is None:
                        # a warm start from a very different demand (iterate and
                        # adapted rho) can stall ADMM: once more from a cold start
                        self._cold_start()
                        res = solver.solve(raise_error=False)
                        iters += res.info.iter
                        x, polished = self._finish(res)
                finally:
                    solver.update_settings(eps_abs=EPS_COARSE, eps_rel=EPS_COARSE)
        except Exception as exc:  # osqp raises ValueError / RuntimeError / OSQPException
            raise StepFailed(f"OSQP failed: {type(exc).__name__}: {exc}",
                             component=self.component, fix="report this as a bug") from exc
        if x is None:
            self.fallbacks += 1
            self._cold_start()
            return self._pinv_scale(th), f"fallback (osqp: {res.info.status})", iters
        status = res.info.status + (", polished" if polished else "")
        return np.clip(x[: self.Bh.shape[1]], self.lo, self.hi), status, iters

    def _cold_start(self) -> None:
        solver = self._solver
        solver.warm_start(x=np.zeros(solver.n), y=np.zeros(solver.m))
        solver.update_settings(rho=_RHO0)

    def _finish(self, res: Any) -> tuple[np.ndarray | None, bool]:
        """(x, polished) from an OSQP result, or (None, False) when it is unusable."""
        x, y, code = res.x, res.y, res.info.status_val
        usable = (code in _OK or code in _UNFINISHED) and x is not None and y is not None \
            and bool(np.all(np.isfinite(x))) and bool(np.all(np.isfinite(y)))
        if not usable:
            return None, False
        # an unfinished ADMM run has usually found the active set: a successful polish
        # satisfies the KKT conditions, i.e. is the exact optimum
        x, polished = self._polish(x, y)
        if not polished and code not in _OK:
            return None, False
        return x, polished

    def _polish(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
        """Active-set finish (as OSQP's polish): guess the active constraints from the
        ADMM iterate, solve the equality-constrained KKT system exactly, keep it if it
        is primal feasible and its multipliers have the right signs (then it satisfies
        the KKT conditions: the exact optimum)."""
        P, q, A, l, u, eq = self._P, self._q, self._A, self._l, self._u, self._eq
        z = A @ x
        lower = (z - l < -y) | eq
        upper = (u - z < y) & ~lower
        act = np.flatnonzero(lower | upper)
        Aa = A[act]
        b = np.where(lower[act], l[act], u[act])
        nx, k = x.shape[0], act.shape[0]
        K = np.zeros((nx + k, nx + k))
        K[:nx, :nx] = P
        K[:nx, nx:] = Aa.T
        K[nx:, :nx] = Aa
        _, _, sol, info = _dgesv(K, np.concatenate((-q, b)))
        if info != 0 or not np.isfinite(sol).all():
            return x, False
        xp, ya = sol[:nx], sol[nx:]
        zp = A @ xp
        tol = 1e-9 * (1.0 + float(np.abs(b).max(initial=0.0)))
        if (zp - l).min() < -tol or (u - zp).min() < -tol:
            return x, False
        # multipliers: >= 0 on an active upper bound, <= 0 on an active lower bound
        signed = np.where(upper[act], ya, -ya)[~eq[act]]
        if signed.size and signed.min() < -1e-9:
            return x, False
        return xp, True

    def _result(self, tau: np.ndarray, u: np.ndarray, status: str, iters: int) -> AllocationResult:
        f = np.zeros(self.n)
        f[self.active] = u * self.f_ref
        f = np.clip(f, self.f_min, self.f_max)
        achieved = self.B @ f
        g = self.metric
        d, a = tau * g, achieved * g
        dd = float(d @ d)
        if dd > 0:
            scale = float(a @ d) / dd
            rel = float(np.linalg.norm(a - d)) / math.sqrt(dd)
        else:
            scale, rel = 1.0, 0.0
        tol = LIMIT_RTOL * (self.f_max - self.f_min)
        at_limit = ((self.f_max > 0) & (f >= self.f_max - tol)) | \
                   ((self.f_min < 0) & (f <= self.f_min + tol))
        return AllocationResult(
            force_n=f, achieved=achieved, demanded=tau.copy(), saturated=rel > MET_RTOL,
            thruster_saturated=at_limit & self.active, scale=scale, relative_error=rel,
            status=status, iterations=int(iters),
        )
