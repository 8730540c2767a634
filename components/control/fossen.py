"""The Fossen 6-DOF vehicle model as CasADi expressions, from a profile's ``[parameters]``.

This is the model the hydrodynamics FMU integrates (docs/hydrodynamics.md), written
the way the literature writes it (Fossen 2011, ch. 3–8), so that a model-based
controller predicts with the same physics the simulator runs::

    η̇₁ = R(Θ) ν₁                  η₁ = (n, e, d)        NED position of CO [m]
    Θ̇  = T(Θ) ν₂                  Θ  = (φ, θ, ψ)        zyx Euler angles [rad]
    M ν̇ + C_RB(ν) ν + C_A(ν_r) ν_r + D(ν_r) ν_r + g(η) = τ + τ_E

    ν   = (u, v, w, p, q, r)       body FRD velocity relative to the Earth [m/s, rad/s]
    ν_r = ν − (R(Θ)ᵀ v_c, 0)       relative to the water; v_c = current in NED [m/s]
    M   = M_RB + M_A               M_RB about CO (Fossen eq. 3.44), M_A = diag(A_u … A_r)
    C(ν) = [[0, −S(a₁)], [−S(a₁), −S(a₂)]],  (a₁; a₂) = M ν     (Fossen Thm 3.2)
    D(ν_r) = diag(D1 + D2 ∘ |ν_r|)                               (linear + quadratic)
    g(η) = −[f_g + f_b; r_g × f_g + r_b × f_b],  f_g = Rᵀ(0,0,W),  f_b = −Rᵀ(0,0,B)
    W = m g,  B = ρ(d) g V(d)      (pycnocline ramp and hull compression as in the FMU)
    τ_E = [f; r_g × f],  f = −2 m (Rᵀ ω_ie) × (ν₁ + ν₂ × r_g)   (only if earth_rotation)

All hydrodynamic coefficients are **positive magnitudes** (``A_u = −X_u̇``,
``D1_u = −X_u``, ``D2_u = −X_|u|u``), exactly the FMU's parameter names. Missing
parameters take the FMU's defaults (the BlueROV2 Heavy). ``backend = 1`` is the
simplified Fossen model (``M_A = 0``, no ``C_A``) as in the FMU.

The FMU integrates a quaternion; this model offers both: :meth:`FossenModel.nu_dot`
takes any rotation matrix (from :func:`rotation_euler` or :func:`rotation_quaternion`),
and :meth:`FossenModel.euler_state_derivative` is the 12-state Euler form that
controllers predict with (singular at θ = ±90°, which a hovering vehicle never sees).

Every method accepts CasADi ``SX``/``MX`` symbols or numbers (``DM``); the constant
matrices are NumPy arrays. :func:`skew`, :func:`rotation_euler` and
:func:`rotation_quaternion` are the symbolic twins of ``moonpool.components.sdk.frames``
(``skew``, ``rot_from_euler``, ``rot_from_quat``; same conventions, which that module's
docstring writes out); numbers go through ``frames``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import casadi as ca
import numpy as np

from ..sdk import frames

EARTH_RATE = 7.292115e-5  # rad/s, as in the FMU (model.h)

#: The FMU's parameter defaults (docs/hydrodynamics.md, "Parameters"): the BlueROV2 Heavy.
FMU_DEFAULTS: dict[str, float] = {
    "mass": 13.5, "Ixx": 0.26, "Iyy": 0.23, "Izz": 0.37, "Ixy": 0.0, "Ixz": 0.0, "Iyz": 0.0,
    "x_g": 0.0, "y_g": 0.0, "z_g": 0.0, "x_b": 0.0, "y_b": 0.0, "z_b": -0.01,
    "volume": 0.0134, "rho_surface": 1000.0,
    "A_u": 6.36, "A_v": 7.12, "A_w": 18.68, "A_p": 0.189, "A_q": 0.135, "A_r": 0.222,
    "D1_u": 13.7, "D1_v": 0.0, "D1_w": 33.0, "D1_p": 0.0, "D1_q": 0.8, "D1_r": 0.0,
    "D2_u": 141.0, "D2_v": 217.0, "D2_w": 190.0, "D2_p": 1.19, "D2_q": 0.47, "D2_r": 1.5,
    "backend": 0, "g": 9.81,
    "pycnocline_depth": 500.0, "pycnocline_width": 1000.0, "pycnocline_delta_rho": 0.0,
    "bulk_modulus": 0.0, "earth_rotation": 0, "latitude": 0.0,
}
DOFS = "uvwpqr"


def skew(a: Any) -> Any:
    """S(a): the skew-symmetric matrix with S(a) b = a × b."""
    return ca.vertcat(
        ca.horzcat(0, -a[2], a[1]),
        ca.horzcat(a[2], 0, -a[0]),
        ca.horzcat(-a[1], a[0], 0),
    )


def rotation_euler(phi: Any, theta: Any, psi: Any) -> Any:
    """R(Θ) = Rz(ψ) Ry(θ) Rx(φ), body → NED (Fossen eq. 2.18)."""
    cf, sf = ca.cos(phi), ca.sin(phi)
    ct, st = ca.cos(theta), ca.sin(theta)
    cp, sp = ca.cos(psi), ca.sin(psi)
    return ca.vertcat(
        ca.horzcat(cp * ct, -sp * cf + cp * st * sf, sp * sf + cp * cf * st),
        ca.horzcat(sp * ct, cp * cf + sf * st * sp, -cp * sf + st * sp * cf),
        ca.horzcat(-st, ct * sf, ct * cf),
    )


def rotation_quaternion(q: Any) -> Any:
    """R(q), body → NED, for a unit quaternion q = (qw, qx, qy, qz) (Fossen eq. 2.72)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        ca.horzcat(2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        ca.horzcat(2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def euler_rate_matrix(phi: Any, theta: Any) -> Any:
    """T(Θ) with Θ̇ = T(Θ) ν₂ (Fossen eq. 2.29); singular at θ = ±90°."""
    cf, sf = ca.cos(phi), ca.sin(phi)
    ct, tt = ca.cos(theta), ca.tan(theta)
    return ca.vertcat(
        ca.horzcat(1, sf * tt, cf * tt),
        ca.horzcat(0, cf, -sf),
        ca.horzcat(0, sf / ct, cf / ct),
    )


def coriolis(M: np.ndarray, nu: Any) -> Any:
    """C(ν) of a symmetric 6×6 inertia M in the skew-symmetric form (Fossen Thm 3.2)::

        C(ν) = [[0, −S(a₁)], [−S(a₁), −S(a₂)]],  a₁ = M₁₁ν₁ + M₁₂ν₂,  a₂ = M₂₁ν₁ + M₂₂ν₂
    """
    a = ca.mtimes(ca.DM(M), nu)
    S1, S2 = skew(a[0:3]), skew(a[3:6])
    Z = ca.DM.zeros(3, 3)
    return ca.vertcat(ca.horzcat(Z, -S1), ca.horzcat(-S1, -S2))


class FossenModel:
    """Fossen's 6-DOF model with the parameters of a vehicle profile.

    ``parameters`` is a profile's ``[parameters]`` table (FMU names); other keys
    (``init_*``, ``substep``) are ignored. ``backend`` overrides the table's.
    """

    def __init__(self, parameters: Mapping[str, Any] | None = None, *, backend: int | None = None):
        p = dict(FMU_DEFAULTS)
        for key, value in (parameters or {}).items():
            if key in FMU_DEFAULTS:
                p[key] = float(value)
        if backend is not None:
            p["backend"] = backend
        self.p = p
        for key in [k for k in FMU_DEFAULTS if k[:2] in ("A_", "D1", "D2")] + ["mass", "volume"]:
            if not (p[key] >= 0 and math.isfinite(p[key])):
                raise ValueError(f"{key} = {p[key]}: must be a finite value >= 0 (positive magnitude)")
        if p["mass"] <= 0:
            raise ValueError(f"mass = {p['mass']}: must be > 0")
        self.backend = int(p["backend"])
        self.m = p["mass"]
        self.g_acc = p["g"]
        self.r_g = np.array([p["x_g"], p["y_g"], p["z_g"]])
        self.r_b = np.array([p["x_b"], p["y_b"], p["z_b"]])
        self.I_g = np.array([[p["Ixx"], -p["Ixy"], -p["Ixz"]],
                             [-p["Ixy"], p["Iyy"], -p["Iyz"]],
                             [-p["Ixz"], -p["Iyz"], p["Izz"]]])
        Sg = frames.skew(self.r_g)
        I_o = self.I_g - self.m * Sg @ Sg
        #: Rigid-body inertia about CO (Fossen eq. 3.44).
        self.M_RB = np.block([[self.m * np.eye(3), -self.m * Sg], [self.m * Sg, I_o]])
        a = np.array([p[f"A_{c}"] for c in DOFS])
        #: Added mass (diagonal, positive magnitudes); zero for the simplified backend.
        self.M_A = np.diag(a if self.backend == 0 else np.zeros(6))
        self.M = self.M_RB + self.M_A
        self.M_inv = np.linalg.inv(self.M)
        self.D1 = np.array([p[f"D1_{c}"] for c in DOFS])
        self.D2 = np.array([p[f"D2_{c}"] for c in DOFS])
        self.W = self.m * self.g_acc

    # -- environment -------------------------------------------------------------

    def _ramp(self, z: Any) -> tuple[Any, Any]:
        """Fraction of the pycnocline ramp at depth z and its integral (model.c)."""
        p = self.p
        w, dc = p["pycnocline_width"], p["pycnocline_depth"]
        if w <= 0:
            return ca.if_else(z >= dc, 1.0, 0.0), ca.fmax(z - dc, 0.0)
        top = dc - w / 2
        s = ca.fmin(ca.fmax(z - top, 0.0), w)
        return s / w, s * s / (2 * w) + ca.fmax(z - top - w, 0.0)

    def density(self, d: Any) -> Any:
        """ρ(d) [kg/m³]: surface density plus the pycnocline ramp."""
        return self.p["rho_surface"] + self.p["pycnocline_delta_rho"] * self._ramp(d)[0]

    def volume(self, d: Any) -> Any:
        """V(d) = V₀ (1 − p(d)/K) [m³], gauge pressure p(d) = g ∫₀ᵈ ρ dz (K = 0: rigid)."""
        p = self.p
        if p["bulk_modulus"] <= 0:
            return p["volume"]
        integral = p["rho_surface"] * d + p["pycnocline_delta_rho"] * (
            self._ramp(d)[1] - self._ramp(0.0)[1])
        gauge = ca.if_else(d > 0, self.g_acc * integral, 0.0)
        return p["volume"] * (1 - gauge / p["bulk_modulus"])

    def buoyancy(self, d: Any = 0.0) -> Any:
        """B(d) = ρ(d) g V(d) [N]."""
        return self.density(d) * self.g_acc * self.volume(d)

    def net_weight(self, d: float = 0.0) -> float:
        """W − B [N] at depth d (> 0: the vehicle sinks)."""
        return float(self.W - ca.DM(self.buoyancy(d)))

    # -- forces ------------------------------------------------------------------

    def coriolis_rb(self, nu: Any) -> Any:
        """C_RB(ν) [6×6]."""
        return coriolis(self.M_RB, nu)

    def coriolis_added(self, nu_r: Any) -> Any:
        """C_A(ν_r) [6×6] (contains the Munk moment)."""
        return coriolis(self.M_A, nu_r)

    def damping(self, nu_r: Any, abs_fn=ca.fabs) -> Any:
        """D(ν_r) = diag(D1 + D2 ∘ |ν_r|) [6×6]; ``abs_fn`` may smooth |·| for solvers."""
        return ca.diag(ca.DM(self.D1) + ca.DM(self.D2) * abs_fn(nu_r))

    def restoring(self, R: Any, d: Any = 0.0) -> Any:
        """g(η) [N, N·m] for the attitude R (body → NED) at depth d."""
        W, B = self.W, self.buoyancy(d)
        f_g = ca.mtimes(R.T, ca.vertcat(0, 0, W))
        f_b = -ca.mtimes(R.T, ca.vertcat(0, 0, B))
        return -ca.vertcat(f_g + f_b,
                           ca.cross(ca.DM(self.r_g), f_g) + ca.cross(ca.DM(self.r_b), f_b))

    def earth_coriolis(self, R: Any, nu: Any) -> Any:
        """τ_E: the Coriolis force of the Earth's rotation on the mass at the CG."""
        lat = math.radians(self.p["latitude"])
        w_n = ca.DM([EARTH_RATE * math.cos(lat), 0.0, -EARTH_RATE * math.sin(lat)])
        r_g = ca.DM(self.r_g)
        v_cg = nu[0:3] + ca.cross(nu[3:6], r_g)
        f = -2 * self.m * ca.cross(ca.mtimes(R.T, w_n), v_cg)
        return ca.vertcat(f, ca.cross(r_g, f))

    def relative_velocity(self, R: Any, nu: Any, current_ned: Any) -> Any:
        """ν_r = ν − (Rᵀ v_c, 0)."""
        return nu - ca.vertcat(ca.mtimes(R.T, current_ned), 0, 0, 0)

    def nu_dot(self, R: Any, d: Any, nu: Any, tau: Any, current_ned: Any = None,
               abs_fn=ca.fabs) -> Any:
        """ν̇ = M⁻¹ (τ + τ_E − C_RB(ν)ν − C_A(ν_r)ν_r − D(ν_r)ν_r − g(η))."""
        vc = ca.DM.zeros(3) if current_ned is None else current_ned
        nu_r = self.relative_velocity(R, nu, vc)
        rhs = (tau - ca.mtimes(self.coriolis_rb(nu), nu)
               - ca.mtimes(self.damping(nu_r, abs_fn), nu_r) - self.restoring(R, d))
        if self.backend == 0:
            rhs = rhs - ca.mtimes(self.coriolis_added(nu_r), nu_r)
        if self.p["earth_rotation"]:
            rhs = rhs + self.earth_coriolis(R, nu)
        return ca.mtimes(ca.DM(self.M_inv), rhs)

    def euler_state_derivative(self, x: Any, tau: Any, current_ned: Any = None,
                               abs_fn=ca.fabs) -> Any:
        """ẋ for x = (n, e, d, φ, θ, ψ, u, v, w, p, q, r), τ = (X, Y, Z, K, M, N)."""
        phi, theta, psi = x[3], x[4], x[5]
        nu = x[6:12]
        R = rotation_euler(phi, theta, psi)
        eta_dot = ca.vertcat(ca.mtimes(R, nu[0:3]),
                             ca.mtimes(euler_rate_matrix(phi, theta), nu[3:6]))
        return ca.vertcat(eta_dot, self.nu_dot(R, x[2], nu, tau, current_ned, abs_fn))

    def euler_function(self, abs_fn=ca.fabs) -> ca.Function:
        """``f(x[12], tau[6], current_ned[3]) -> xdot[12]`` as a CasADi Function (SX)."""
        x, tau, vc = ca.SX.sym("x", 12), ca.SX.sym("tau", 6), ca.SX.sym("v_c", 3)
        return ca.Function("fossen", [x, tau, vc],
                           [self.euler_state_derivative(x, tau, vc, abs_fn)],
                           ["x", "tau", "v_c"], ["xdot"])


def rk4(f: ca.Function, x: Any, tau: Any, extra: Any, h: Any, substeps: int = 1) -> Any:
    """One RK4 step of length h (cut into ``substeps``) of ẋ = f(x, τ, *extra), τ held.

    ``extra`` is the further arguments of f (e.g. the current v_c), one or a tuple.
    """
    extra = extra if isinstance(extra, tuple) else (extra,)
    hs = h / substeps
    for _ in range(substeps):
        k1 = f(x, tau, *extra)
        k2 = f(x + hs / 2 * k1, tau, *extra)
        k3 = f(x + hs / 2 * k2, tau, *extra)
        k4 = f(x + hs * k3, tau, *extra)
        x = x + hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x
