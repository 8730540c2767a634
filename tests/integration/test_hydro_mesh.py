"""The hydrodynamics FMU's mesh backend (backend = 2, issue 23) against closed forms,
through the real FMU (fmpy, FMI 3 and FMI 2): a sphere's drag from its C_D, a rotating
cylinder's Magnus force, the volume and centroid of the box and sphere meshes, and with
drag, lift and Magnus off the same buoyancy and gravity as the Fossen backend; a flat
plate's lift; the current's vertical shear for every backend (the mesh backend per
face); bad meshes and parameters refused."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from conftest import ROOT
from test_hydro_fmu import Hydro

sys.path.insert(0, str(ROOT / "fmus"))
import meshes  # noqa: E402

WRENCH = ["hydro_X", "hydro_Y", "hydro_Z", "hydro_K", "hydro_M", "hydro_N"]
MESH = ["mesh_volume", "mesh_x_b", "mesh_y_b", "mesh_z_b"]
NO_ADDED_MASS = {f"A_{a}": 0.0 for a in "uvwpqr"}
FMUS = [(ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu", 3),
        (ROOT / "fmus" / "build" / "hydrodynamics-fmi2.fmu", 2)]


def evaluate(fmu, params, names=WRENCH + MESH):
    """Outputs at the initial state (after initialization) for the given parameters."""
    path, version = fmu
    h = Hydro(path, version, params).init()
    try:
        return h.get(names)
    finally:
        h.close()


@pytest.fixture(params=FMUS, ids=["fmi3", "fmi2"])
def fmu(request):
    return request.param


def still_water(**kw):
    """No gravity, deep water, no added mass: only the mesh loads act."""
    p = dict(backend=2, mass=1.0, g=0.0, rho_surface=1025.0, init_d=100.0, mesh_cp=0.0,
             mesh_cf=0.0, **NO_ADDED_MASS)
    p.update(kw)
    return p


def test_sphere_pressure_drag_gives_its_cd(fmu):
    """Per face -1/2 rho C_p A (u.n)^2 n over the front hemisphere integrates to
    1/2 rho (C_p/2) pi R^2 U^2: a sphere of drag coefficient C_D has C_p = 2 C_D."""
    R, U, cd, rho = 0.5, 1.5, 0.47, 1025.0
    w = evaluate(fmu, still_water(mesh=1, mesh_scale=R, init_u=U, mesh_cp=2 * cd))
    drag = 0.5 * rho * cd * math.pi * R * R * U * U
    assert w[0] == pytest.approx(-drag, rel=0.01)
    assert np.allclose(w[1:6], 0.0, atol=1e-9 * drag)


def test_sphere_drag_in_a_current_and_skin_friction(fmu):
    """The same sphere at rest in a current from the east, with skin friction only:
    -1/2 rho C_f A |u_t| u_t integrates to 1/2 rho C_f (3 pi^2/4) R^2 U^2 along the flow."""
    R, U, cf, rho = 0.5, 0.8, 0.01, 1025.0
    w = evaluate(fmu, still_water(mesh=1, mesh_scale=R, mesh_cf=cf, current_e=U), WRENCH)
    force = 0.5 * rho * cf * 0.75 * math.pi**2 * R * R * U * U
    assert w[1] == pytest.approx(force, rel=0.01)  # pushed east (+y at yaw 0)
    assert abs(w[0]) < 1e-9 * force and abs(w[2]) < 1e-9 * force


def test_rotating_cylinder_magnus_force(fmu):
    """C_M rho A |v_r| (omega x v_r) for a cylinder spinning about its axis (z) while
    moving forward: omega = (0, 0, r), v_r = (U, 0, 0) -> force (0, C_M rho A r U^2, 0)."""
    U, r, cm, area, rho = 1.2, 3.0, 0.8, 0.6, 1025.0
    w = evaluate(fmu, still_water(mesh=3, init_u=U, init_r=r, magnus_cm=cm, magnus_area=area))
    expected = cm * rho * area * U * r * U
    assert w[1] == pytest.approx(expected, rel=0.01)
    assert abs(w[0]) < 1e-9 * expected and abs(w[2]) < 1e-9 * expected


def _polyhedron(tris, scale):
    """Volume and centroid of a closed triangle mesh by the divergence theorem over the
    faces (V = sum A (c . n) / 3; centroid from sum A (n_i c_i^2) / 2), an independent
    formula from the FMU's signed tetrahedra."""
    V, m = 0.0, np.zeros(3)
    for a, b, c in tris:
        a, b, c = (np.asarray(v) * scale for v in (a, b, c))
        nn = np.cross(b - a, c - a)
        area2 = np.linalg.norm(nn)
        n, cen = nn / area2, (a + b + c) / 3
        V += area2 / 2 * np.dot(cen, n) / 3
        # the integral of x_i^2 over the triangle is A (a_i^2 + b_i^2 + c_i^2 + a_i b_i + b_i c_i
        # + c_i a_i) / 6, and m_i = 1/2 sum n_i of it
        quad = (a**2 + b**2 + c**2 + a * b + b * c + c * a) / 6
        m += 0.5 * (area2 / 2) * n * quad
    return V, m / V


@pytest.mark.parametrize("mesh, name, scale", [(2, "box", 0.7), (1, "sphere", 0.5),
                                               (4, "lander", 1.0), (5, "bluerov2_heavy", 1.0),
                                               (6, "remus100", 1.0)])
def test_mesh_volume_and_centroid(fmu, mesh, name, scale):
    out = evaluate(fmu, still_water(mesh=mesh, mesh_scale=scale), MESH)
    tris = meshes.triangles(mesh)[0]
    V, c = _polyhedron(tris, scale)
    assert out[0] == pytest.approx(V, rel=1e-12)
    assert np.allclose(out[1:], c, atol=1e-12 * scale)
    if name == "box":
        assert out[0] == pytest.approx(scale**3, rel=1e-14) and np.allclose(out[1:], 0, atol=1e-15)
    if name == "sphere":  # the inscribed polyhedron: below 4/3 pi R^3 by its resolution
        assert out[0] / (4 / 3 * math.pi * scale**3) == pytest.approx(1.0, abs=2e-3)


def test_mesh_hydrostatics_equal_fossen(fmu):
    """Drag, lift and Magnus off: buoyancy and gravity (pycnocline, compressible hull,
    tilted, offset CG) and the resulting motion equal the Fossen backend's with that
    mesh's volume and centroid."""
    common = dict(mass=520.0, x_g=0.01, z_g=0.05, rho_surface=1025.0, init_d=800.0,
                  init_roll=0.3, init_pitch=-0.2, pycnocline_delta_rho=3.075,
                  bulk_modulus=2e9, mesh_scale=1.0, **{f"D1_{a}": 0.0 for a in "uvwpqr"},
                  **{f"D2_{a}": 0.0 for a in "uvwpqr"})
    path, version = fmu
    mesh = evaluate(fmu, dict(common, backend=2, mesh=4, mesh_cp=0.0), MESH)
    fossen = dict(common, backend=0, volume=mesh[0], x_b=mesh[1], y_b=mesh[2], z_b=mesh[3])
    runs = []
    for p in (dict(common, backend=2, mesh=4, mesh_cp=0.0, mesh_cf=0.0), fossen):
        h = Hydro(path, version, p).init()
        w0 = h.get(WRENCH)
        for _ in range(20):
            h.step(0.05)
        runs.append((w0, h.get(["n", "e", "d", "qw", "qx", "qy", "qz", "u", "w", "q"])))
        h.close()
    (wm, xm), (wf, xf) = runs
    assert np.allclose(wm, wf, rtol=1e-12, atol=1e-9 * abs(wf[2]))
    assert abs(wf[2]) > 100  # not neutrally buoyant: the check has something to compare
    assert np.allclose(xm, xf, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", [0, 1])
def test_current_shear_fossen_backends(fmu, backend):
    """v_c,n(d) = current_n + current_shear_n d: at rest at 10 m with shear 0.1 1/s the
    Fossen backends (0 calibrated, 1 simplified) see a 1 m/s current from the south
    and their surge damping pushes them north by (D1_u + D2_u) * 1 m/s."""
    p = dict(backend=backend, init_d=10.0, current_shear_n=0.1, D1_u=13.7, D2_u=141.0)
    w = evaluate(fmu, p, WRENCH)
    assert w[0] == pytest.approx(13.7 + 141.0, rel=1e-12)
    w0 = evaluate(fmu, dict(p, current_shear_n=0.0), WRENCH)
    assert w0[0] == 0.0


def test_current_shear_mesh_backend_per_face(fmu):
    """The mesh backend takes the current at each face's own depth. A cube of side a
    (mesh 2, two triangles per face) at rest with its centre at d0 in the current
    v_e(d) = U0 + s (d - d0), pressure drag only: only the west face (normal -y)
    advances into the water; its triangles' centroids lie a/6 above and below the
    centre, so

        Y = 1/2 rho C_p (a^2/2) [(U0 - s a/6)^2 + (U0 + s a/6)^2] = 1/2 rho C_p a^2 (U0^2 + e^2),
        K = -sum c_z Y_i = -rho C_p a^3 U0 e / 6,        e = s a / 6,

    the faster water below rolling the cube (uniform current: no moment)."""
    a, U0, s, d0, cp, rho = 0.8, 0.5, 0.3, 20.0, 1.1, 1025.0
    p = still_water(mesh=2, mesh_scale=a, init_d=d0, mesh_cp=cp, current_e=U0 - s * d0,
                    current_shear_e=s)
    w = evaluate(fmu, p, WRENCH)
    e = s * a / 6
    assert w[1] == pytest.approx(0.5 * rho * cp * a * a * (U0 * U0 + e * e), rel=1e-12)
    assert w[3] == pytest.approx(-rho * cp * a**3 * U0 * e / 6, rel=1e-9)
    uniform = evaluate(fmu, dict(p, current_e=U0, current_shear_e=0.0), WRENCH)
    assert uniform[1] == pytest.approx(0.5 * rho * cp * a * a * U0 * U0, rel=1e-12)
    assert abs(uniform[3]) < 1e-12 * uniform[1]


def profile(depths, north=None, east=None):
    """FMU parameters of a tabulated current profile (knots at ``depths``)."""
    p = {"current_points": len(depths)}
    for k, d in enumerate(depths):
        p[f"current_depth_{k}"] = d
        if north is not None:
            p[f"current_profile_n_{k}"] = north[k]
        if east is not None:
            p[f"current_profile_e_{k}"] = east[k]
    return p


@pytest.mark.parametrize("backend", [0, 1])
@pytest.mark.parametrize("depth, current", [
    (5.0, 0.2),                       # above the first knot: its value held
    (25.0, 0.4 + 0.6 * 5.0 / 20.0),   # between knots: linear
    (40.0, 1.0),                      # on a knot
    (75.0, 1.0)])                     # below the last knot: its value held
def test_current_profile_fossen_backends(fmu, backend, depth, current):
    """A tabulated current profile (knots at 10, 20, 40 m: 0.2, 0.4, 1.0 m/s north),
    linear between its knots and held beyond them, added to current_n: at rest at
    ``depth`` the Fossen backends' surge damping pushes north by (D1_u + D2_u |u|) u
    with u the current there."""
    p = dict(backend=backend, init_d=depth, D1_u=13.7, D2_u=141.0, current_n=0.05,
             **profile([10.0, 20.0, 40.0], north=[0.2, 0.4, 1.0]))
    w = evaluate(fmu, p, WRENCH)
    u = 0.05 + current
    assert w[0] == pytest.approx((13.7 + 141.0 * u) * u, rel=1e-12)
    assert abs(w[1]) < 1e-12 * w[0]


def test_current_profile_mesh_backend_equals_the_linear_shear(fmu):
    """A profile whose knots lie on a line gives the mesh backend, face by face, the
    wrench of the linear shear it tabulates (the cube of the shear test)."""
    a, U0, s, d0, cp = 0.8, 0.5, 0.3, 20.0, 1.1
    base = still_water(mesh=2, mesh_scale=a, init_d=d0, mesh_cp=cp)
    sheared = evaluate(fmu, dict(base, current_e=U0 - s * d0, current_shear_e=s), WRENCH)
    knots = [d0 - 1.0, d0 + 1.0]
    tabled = evaluate(fmu, dict(base, **profile(knots, east=[U0 - s, U0 + s])), WRENCH)
    assert np.allclose(tabled, sheared, rtol=1e-12, atol=1e-12 * abs(sheared[1]))
    assert tabled[3] != 0.0  # the faster water below still rolls it


@pytest.mark.parametrize("bad, words", [
    (profile([5.0]), "invalid parameter current_points = 1"),
    (profile([5.0, 5.0]), "current_depth_1"),
    (profile([-1.0, 5.0]), "current_depth_0"),
    ({**profile([1.0, 5.0]), "current_profile_e_1": float("nan")}, "current_profile_e_1")])
def test_bad_current_profiles_are_refused(tmp_path, bad, words):
    """Each refused at initialization, the FMU's log naming the parameter in the run's
    error (what a user sees)."""
    assert words in failed_run_error(tmp_path, bad)


def failed_run_error(tmp_path, start_values) -> str:
    """The error of ``rigs/hydro_fmu.toml`` run with these FMU start values (it must fail)."""
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    values = ", ".join(f"{k} = {v}" for k, v in start_values.items())
    rig = load_and_check(ROOT / "rigs" / "hydro_fmu.toml",
                         ["run.plots=false", "run.record=false",
                          f"components.vehicle.parameters.start_values={{ {values} }}"],
                         until_s=0.1)
    result = run_rig(rig, tmp_path / "run")
    assert not result.ok
    return result.summary["error"]


@pytest.mark.parametrize("alpha_deg", [0.0, 10.0, 30.0, 45.0, 70.0])
def test_flat_plate_lift(fmu, alpha_deg):
    """A thin flat plate at angle of attack a carries the lift 1/2 rho C_L A |u|^2 sin 2a
    normal to the flow, pointing from its pressure side. The plate (mesh 7: 1 x 1 m,
    1 mm thick, normals +-z) moves with u = U (cos a, 0, sin a): its lower face
    (n = +z) advances into the water (u_n = U sin a), and so does its 1 mm leading edge
    (n = +x, u_n = U cos a), whose lift is the same magnitude per area and opposite;
    the other faces trail or slide. So, with drag and friction off,

        F = 1/2 rho C_L U^2 sin 2a (A - A_edge) (sin a, 0, -cos a),  A = 1, A_edge = 0.001."""
    U, cl, rho = 1.3, 0.9, 1025.0
    a = math.radians(alpha_deg)
    w = evaluate(fmu, still_water(mesh=7, init_u=U * math.cos(a), init_w=U * math.sin(a),
                                  mesh_cl=cl), WRENCH)
    lift = 0.5 * rho * cl * U * U * math.sin(2 * a) * (1.0 - 0.001)
    expected = lift * np.array([math.sin(a), 0.0, -math.cos(a)])
    scale = 0.5 * rho * cl * U * U
    assert np.allclose(w[:3], expected, rtol=1e-12, atol=1e-12 * scale)
    # normal to the flow, whatever the angle
    assert abs(w[0] * math.cos(a) + w[2] * math.sin(a)) < 1e-12 * scale
    if alpha_deg == 0.0:
        assert np.allclose(w[:3], 0.0, atol=1e-12 * scale)


@pytest.mark.parametrize("bad, words", [
    ({"mesh": 0}, "invalid parameter mesh = 0: the mesh backend (backend = 2) needs a built-in mesh"),
    ({"mesh": 9}, "built-in mesh"),
    ({"mesh": 1, "mesh_scale": -1.0}, "mesh_scale"),
    ({"mesh": 1, "magnus_cm": -0.5}, "magnus_cm")])
def test_mesh_backend_refuses_bad_parameters(tmp_path, bad, words):
    """Each refused at initialization, the FMU's log naming the parameter in the run's
    error (what a user sees)."""
    error = failed_run_error(tmp_path, {"backend": 2, **bad})
    assert words in error, error
    assert "fix:" in error


def test_meshes_checked_at_build_time():
    """The build refuses a mesh with a hole or one that is inside out, naming it."""
    box = meshes.box()
    meshes.check_closed("box", box)
    with pytest.raises(meshes.MeshError, match="'holed'.*closed"):
        meshes.check_closed("holed", box[:-1])
    with pytest.raises(meshes.MeshError, match="'flipped' is inside out"):
        meshes.check_closed("flipped", [(a, c, b) for a, b, c in box])
    for idx, (name, _src) in meshes.MESHES.items():
        meshes.check_closed(name, list(meshes.triangles(idx)[0]))


def test_spinning_body_in_a_current_does_not_glide(fmu):
    """Added mass acts on the acceleration relative to the water (mesh backend): a body
    at rest spinning in a uniform current, with no drag, lift or Magnus, feels no force
    (d'Alembert) and stays put. Applied to ν̇ instead, the added mass would push it
    sideways with M_A ν₂ × v_c (here 40 N on 101 kg: metres in 5 s)."""
    path, version = fmu
    p = still_water(mesh=3, init_r=2.0, current_e=0.2, Izz=5.0, A_u=100.0, A_v=100.0,
                    A_w=50.0, A_r=0.0)
    h = Hydro(path, version, p).init()
    for _ in range(50):
        h.step(0.1)
    n, e, d = h.get(["n", "e", "d"])
    h.close()
    assert math.hypot(n, e) < 1e-9 and abs(d - 100.0) < 1e-9, (n, e, d)
