/* moonpool hydrodynamics: the Fossen 6-DOF model (see model.h). C99. */
#include "model.h"
#include "meshes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EARTH_RATE 7.292115e-5 /* omega_e [rad/s] */
#define DEG2RAD 0.017453292519943295

/* ---- small vector helpers ------------------------------------------------ */

static void cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* R(q): body -> NED rotation, row-major. */
static void rotation(const double q[4], double R[9])
{
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z); R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z); R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y); R[7] = 2 * (y * z + w * x); R[8] = 1 - 2 * (x * x + y * y);
}

static void mul_R(const double R[9], const double v[3], double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}

static void mul_RT(const double R[9], const double v[3], double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}

static void normalise_quaternion(double q[4])
{
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n > 0)
        for (int i = 0; i < 4; i++) q[i] /= n;
}

/* ---- parameters ---------------------------------------------------------- */

static int bad(char *msg, size_t len, const char *name, const char *why, double v)
{
    snprintf(msg, len, "invalid parameter %s = %g: %s", name, v, why);
    return -1;
}

static int check_finite(const double *v, int n, const char *const names[], char *msg, size_t len)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return bad(msg, len, names[i], "must be finite", v[i]);
    return 0;
}

static int check_nonneg(const double *v, int n, const char *const names[], char *msg, size_t len)
{
    for (int i = 0; i < n; i++)
        if (!(v[i] >= 0)) return bad(msg, len, names[i], "must be a finite value >= 0 (positive magnitude)", v[i]);
    return 0;
}

/* The depths of a knot table: finite, >= 0 and increasing; else the message names
 * PREFIX_k. */
static int check_knot_depths(const double *z, int n, const char *prefix, char *msg, size_t len)
{
    for (int k = 0; k < n; k++) {
        if (!isfinite(z[k]) || z[k] < 0 || (k > 0 && !(z[k] > z[k - 1]))) {
            char name[48];
            snprintf(name, sizeof name, "%s_%d", prefix, k);
            return bad(msg, len, name, "must be finite, >= 0 and greater than the knot before", z[k]);
        }
    }
    return 0;
}

int hydro_validate(const HydroParams *p, char *msg, size_t len)
{
    static const char *const nA[6] = {"A_u", "A_v", "A_w", "A_p", "A_q", "A_r"};
    static const char *const nD1[6] = {"D1_u", "D1_v", "D1_w", "D1_p", "D1_q", "D1_r"};
    static const char *const nD2[6] = {"D2_u", "D2_v", "D2_w", "D2_p", "D2_q", "D2_r"};
    static const char *const nI[6] = {"Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"};
    static const char *const nG[3] = {"x_g", "y_g", "z_g"};
    static const char *const nB[3] = {"x_b", "y_b", "z_b"};
    static const char *const nP[3] = {"init_n", "init_e", "init_d"};
    static const char *const nE[3] = {"init_roll", "init_pitch", "init_yaw"};
    static const char *const nV[6] = {"init_u", "init_v", "init_w", "init_p", "init_q", "init_r"};
    static const char *const nEnv[3] = {"pycnocline_depth", "pycnocline_delta_rho", "latitude"};
    const double I[6] = {p->Ixx, p->Iyy, p->Izz, p->Ixy, p->Ixz, p->Iyz};
    const double env[3] = {p->pyc_depth, p->pyc_delta_rho, p->latitude};

    if (!(p->mass > 0) || !isfinite(p->mass)) return bad(msg, len, "mass", "must be finite and > 0", p->mass);
    if (check_finite(I, 6, nI, msg, len)) return -1;
    if (check_nonneg(I, 3, nI, msg, len)) return -1;
    if (check_finite(p->rg, 3, nG, msg, len) || check_finite(p->rb, 3, nB, msg, len)) return -1;
    if (!(p->volume >= 0) || !isfinite(p->volume)) return bad(msg, len, "volume", "must be finite and >= 0", p->volume);
    if (!(p->rho_surface >= 0) || !isfinite(p->rho_surface))
        return bad(msg, len, "rho_surface", "must be finite and >= 0", p->rho_surface);
    if (check_nonneg(p->A, 6, nA, msg, len) || check_finite(p->A, 6, nA, msg, len)) return -1;
    if (check_nonneg(p->D1, 6, nD1, msg, len) || check_finite(p->D1, 6, nD1, msg, len)) return -1;
    if (check_nonneg(p->D2, 6, nD2, msg, len) || check_finite(p->D2, 6, nD2, msg, len)) return -1;
    if (check_finite(p->init_pos, 3, nP, msg, len) || check_finite(p->init_euler, 3, nE, msg, len) ||
        check_finite(p->init_nu, 6, nV, msg, len))
        return -1;
    if (p->backend != HYDRO_BACKEND_CALIBRATED && p->backend != HYDRO_BACKEND_SIMPLIFIED &&
        p->backend != HYDRO_BACKEND_MESH)
        return bad(msg, len, "backend", "must be 0 (calibrated Fossen), 1 (simplified Fossen) or 2 (mesh)", p->backend);
    if (!isfinite(p->shear[0])) return bad(msg, len, "current_shear_n", "must be finite", p->shear[0]);
    if (!isfinite(p->shear[1])) return bad(msg, len, "current_shear_e", "must be finite", p->shear[1]);
    if (p->backend == HYDRO_BACKEND_MESH) {
        static const char *const nM[5] = {"mesh_cp", "mesh_cf", "mesh_cl", "magnus_cm", "magnus_area"};
        const double mc[5] = {p->mesh_cp, p->mesh_cf, p->mesh_cl, p->magnus_cm, p->magnus_area};
        if (p->mesh < 1 || p->mesh > HYDRO_N_MESHES) {
            snprintf(msg, len, "invalid parameter mesh = %d: the mesh backend (backend = 2) needs a "
                               "built-in mesh 1..%d (1 sphere, 2 box, 3 cylinder, 4 lander, 5 bluerov2_heavy, "
                               "6 remus100; "
                               "docs/hydrodynamics.md, Mesh backend)", p->mesh, HYDRO_N_MESHES);
            return -1;
        }
        if (!(p->mesh_scale > 0) || !isfinite(p->mesh_scale))
            return bad(msg, len, "mesh_scale", "must be finite and > 0 (metres per mesh unit)", p->mesh_scale);
        if (check_nonneg(mc, 5, nM, msg, len) || check_finite(mc, 5, nM, msg, len)) return -1;
    }
    if (!(p->substep > 0) || !isfinite(p->substep)) return bad(msg, len, "substep", "must be finite and > 0", p->substep);
    if (!(p->g >= 0) || !isfinite(p->g)) return bad(msg, len, "g", "must be finite and >= 0", p->g);
    if (check_finite(env, 3, nEnv, msg, len)) return -1;
    if (!(p->pyc_width >= 0) || !isfinite(p->pyc_width))
        return bad(msg, len, "pycnocline_width", "must be finite and >= 0", p->pyc_width);
    if (!(p->bulk_modulus >= 0) || !isfinite(p->bulk_modulus))
        return bad(msg, len, "bulk_modulus", "must be finite and >= 0 (0 disables compression)", p->bulk_modulus);
    if (fabs(p->latitude) > 90) return bad(msg, len, "latitude", "must be within [-90, 90] deg", p->latitude);
    if (p->water_points != 0 && (p->water_points < 2 || p->water_points > HYDRO_WATER_KNOTS)) {
        snprintf(msg, len, "invalid parameter water_points = %d: 0 (the pycnocline) or 2..%d knots "
                           "of a tabulated water column", p->water_points, HYDRO_WATER_KNOTS);
        return -1;
    }
    if (p->current_points != 0 && (p->current_points < 2 || p->current_points > HYDRO_CURRENT_KNOTS)) {
        snprintf(msg, len, "invalid parameter current_points = %d: 0 (no profile) or 2..%d knots "
                           "of a tabulated current profile", p->current_points, HYDRO_CURRENT_KNOTS);
        return -1;
    }
    if (check_knot_depths(p->current_depth, p->current_points, "current_depth", msg, len)) return -1;
    for (int k = 0; k < p->current_points; k++) {
        char name[32];
        if (!isfinite(p->current_tn[k])) {
            snprintf(name, sizeof name, "current_profile_n_%d", k);
            return bad(msg, len, name, "must be finite", p->current_tn[k]);
        }
        if (!isfinite(p->current_te[k])) {
            snprintf(name, sizeof name, "current_profile_e_%d", k);
            return bad(msg, len, name, "must be finite", p->current_te[k]);
        }
    }
    if (check_knot_depths(p->water_depth, p->water_points, "water_depth", msg, len)) return -1;
    for (int k = 0; k < p->water_points; k++) {
        char name[32];
        if (!(p->water_rho[k] > 0) || !isfinite(p->water_rho[k])) {
            snprintf(name, sizeof name, "water_rho_%d", k);
            return bad(msg, len, name, "must be finite and > 0", p->water_rho[k]);
        }
    }
    return 0;
}

/* ---- mass matrix --------------------------------------------------------- */

/* M_RB about CO (Fossen 2011, eq. 3.44): [m I3, -m S(r_g); m S(r_g), I_o],
 * I_o = I_g - m S(r_g)^2 (parallel-axis theorem). */
static void rigid_body_mass(const HydroParams *p, double M[36])
{
    const double m = p->mass, x = p->rg[0], y = p->rg[1], z = p->rg[2];
    const double S[9] = {0, -z, y, z, 0, -x, -y, x, 0}; /* S(r_g) */
    const double Ig[9] = {p->Ixx, -p->Ixy, -p->Ixz, -p->Ixy, p->Iyy, -p->Iyz, -p->Ixz, -p->Iyz, p->Izz};
    memset(M, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; i++) {
        M[6 * i + i] = m;
        for (int j = 0; j < 3; j++) {
            double s2 = 0; /* (S S)_ij */
            for (int k = 0; k < 3; k++) s2 += S[3 * i + k] * S[3 * k + j];
            M[6 * i + 3 + j] = -m * S[3 * i + j];
            M[6 * (3 + i) + j] = m * S[3 * i + j];
            M[6 * (3 + i) + 3 + j] = Ig[3 * i + j] - m * s2;
        }
    }
}

/* Cholesky M = L L^T; returns -1 when M is not positive definite. */
static int cholesky(const double M[36], double L[36])
{
    memset(L, 0, 36 * sizeof(double));
    for (int j = 0; j < 6; j++) {
        double d = M[6 * j + j];
        for (int k = 0; k < j; k++) d -= L[6 * j + k] * L[6 * j + k];
        if (!(d > 0)) return -1;
        L[6 * j + j] = sqrt(d);
        for (int i = j + 1; i < 6; i++) {
            double s = M[6 * i + j];
            for (int k = 0; k < j; k++) s -= L[6 * i + k] * L[6 * j + k];
            L[6 * i + j] = s / L[6 * j + j];
        }
    }
    return 0;
}

/* Solve L L^T x = b. */
static void cholesky_solve(const double L[36], const double b[6], double x[6])
{
    double y[6];
    for (int i = 0; i < 6; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[6 * i + k] * y[k];
        y[i] = s / L[6 * i + i];
    }
    for (int i = 5; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < 6; k++) s -= L[6 * k + i] * x[k];
        x[i] = s / L[6 * i + i];
    }
}

/* Enclosed volume and centroid of the scaled mesh: the sum over triangles (a, b, c) of
 * the signed tetrahedra (0, a, b, c), V_i = a . (b x c) / 6, centroid (a + b + c) / 4. */
static int mesh_volume(const HydroParams *p, double *volume, double rb[3], char *msg, size_t len)
{
    const HydroMesh *mesh = &hydro_meshes[p->mesh];
    const double s = p->mesh_scale;
    double V = 0, c[3] = {0, 0, 0};
    for (int k = 0; k < mesh->n; k++) {
        const double *v = mesh->t[k].v;
        double bc[3];
        cross(v + 3, v + 6, bc);
        const double vi = (v[0] * bc[0] + v[1] * bc[1] + v[2] * bc[2]) / 6.0;
        V += vi;
        for (int i = 0; i < 3; i++) c[i] += vi * (v[i] + v[3 + i] + v[6 + i]) / 4.0;
    }
    if (!(V > 0)) {
        snprintf(msg, len, "mesh %s (mesh = %d) is inside out (signed volume %g <= 0): reverse the "
                           "vertex order of its triangles in fmus/meshes.py", mesh->name, p->mesh, V);
        return -1;
    }
    *volume = V * s * s * s;
    for (int i = 0; i < 3; i++) rb[i] = c[i] / V * s;
    return 0;
}

int hydro_prepare(HydroModel *m, const HydroParams *p, char *msg, size_t len)
{
    m->p = *p;
    rigid_body_mass(p, m->MRB);
    m->mesh_volume = 0;
    memset(m->mesh_rb, 0, sizeof m->mesh_rb);
    if (p->backend == HYDRO_BACKEND_MESH && mesh_volume(p, &m->mesh_volume, m->mesh_rb, msg, len))
        return -1;
    for (int i = 0; i < 6; i++)
        m->MA[i] = (p->backend != HYDRO_BACKEND_SIMPLIFIED) ? p->A[i] : 0.0;
    memcpy(m->M, m->MRB, sizeof m->M);
    for (int i = 0; i < 6; i++) m->M[6 * i + i] += m->MA[i];
    if (cholesky(m->M, m->L)) {
        snprintf(msg, len, "mass matrix M = M_RB + M_A is not positive definite "
                           "(check mass, Ixx..Iyz, x_g..z_g, A_u..A_r)");
        return -1;
    }
    return 0;
}

void hydro_reset(HydroModel *m)
{
    const double *e = m->p.init_euler;
    const double cr = cos(e[0] / 2), sr = sin(e[0] / 2), cp = cos(e[1] / 2), sp = sin(e[1] / 2);
    const double cy = cos(e[2] / 2), sy = sin(e[2] / 2);
    double *x = m->x;
    memcpy(x, m->p.init_pos, 3 * sizeof(double));
    x[3] = cr * cp * cy + sr * sp * sy;
    x[4] = sr * cp * cy - cr * sp * sy;
    x[5] = cr * sp * cy + sr * cp * sy;
    x[6] = cr * cp * sy - sr * sp * cy;
    normalise_quaternion(x + 3);
    memcpy(x + 7, m->p.init_nu, 6 * sizeof(double));
    memset(m->nu_dot, 0, sizeof m->nu_dot);
}

/* ---- environment --------------------------------------------------------- */

/* Fraction of the pycnocline ramp reached at depth z, and its integral F(z). */
static double ramp(const HydroParams *p, double z)
{
    const double w = p->pyc_width, top = p->pyc_depth - w / 2;
    if (w <= 0) return z >= p->pyc_depth ? 1.0 : 0.0;
    if (z <= top) return 0.0;
    if (z >= top + w) return 1.0;
    return (z - top) / w;
}

static double ramp_integral(const HydroParams *p, double z)
{
    const double w = p->pyc_width, top = p->pyc_depth - w / 2;
    if (w <= 0) return z > p->pyc_depth ? z - p->pyc_depth : 0.0;
    if (z <= top) return 0.0;
    if (z >= top + w) return w / 2 + (z - top - w);
    return (z - top) * (z - top) / (2 * w);
}

/* Index k of the knot table segment (z[k-1], z[k]] holding depth d: 0 above the first
 * knot, n below the last (n >= 2 knots at increasing depths z). */
static int knot_segment(const double *z, int n, double d)
{
    if (d <= z[0]) return 0;
    for (int k = 1; k < n; k++)
        if (d <= z[k]) return k;
    return n;
}

/* A knot table's value at depth d: linear between the knots, held beyond the first and
 * the last. */
static double knot_value(const double *z, const double *v, int n, double d)
{
    const int k = knot_segment(z, n, d);
    if (k == 0) return v[0];
    if (k == n) return v[n - 1];
    return v[k - 1] + (v[k] - v[k - 1]) * (d - z[k - 1]) / (z[k] - z[k - 1]);
}

/* Its slope dv/dd at depth d (0 beyond the knots). */
static double knot_slope(const double *z, const double *v, int n, double d)
{
    const int k = knot_segment(z, n, d);
    if (k == 0 || k == n) return 0.0;
    return (v[k] - v[k - 1]) / (z[k] - z[k - 1]);
}

/* The tabulated water column (water_points >= 2). */
static double table_density(const HydroParams *p, double d)
{
    return knot_value(p->water_depth, p->water_rho, p->water_points, d);
}

/* integral_0^d rho(z) dz of the tabulated column (d > 0): trapezoids up to d. */
static double table_integral(const HydroParams *p, double d)
{
    const int n = p->water_points;
    const double *z = p->water_depth;
    double sum = 0.0, a = 0.0;
    double ra = table_density(p, 0.0);
    for (int k = 0; k < n && a < d; k++) {
        if (z[k] <= a) continue;
        const double b = z[k] < d ? z[k] : d, rb = table_density(p, b);
        sum += 0.5 * (ra + rb) * (b - a);
        a = b;
        ra = rb;
    }
    if (a < d) sum += table_density(p, d) * (d - a); /* below the last knot: constant */
    return sum;
}

double hydro_density(const HydroParams *p, double d)
{
    if (p->water_points >= 2) return table_density(p, d);
    return p->rho_surface + p->pyc_delta_rho * ramp(p, d);
}

/* Gauge pressure p(d) = g * integral_0^d rho(z) dz (0 above the surface). */
static double gauge_pressure(const HydroParams *p, double d)
{
    if (d <= 0) return 0.0;
    if (p->water_points >= 2) return p->g * table_integral(p, d);
    return p->g * (p->rho_surface * d + p->pyc_delta_rho * (ramp_integral(p, d) - ramp_integral(p, 0)));
}

/* Displaced volume at depth d of a hull whose surface volume is V0. */
static double compressed_volume(const HydroParams *p, double V0, double d)
{
    if (p->bulk_modulus <= 0) return V0;
    return V0 * (1.0 - gauge_pressure(p, d) / p->bulk_modulus);
}

double hydro_volume(const HydroParams *p, double d)
{
    return compressed_volume(p, p->volume, d);
}

void hydro_current_at(const HydroParams *p, const double current[3], double d, double out[3])
{
    out[0] = current[0];
    out[1] = current[1];
    out[2] = current[2];
    if (p->shear[0] != 0.0) out[0] += p->shear[0] * d;
    if (p->shear[1] != 0.0) out[1] += p->shear[1] * d;
    if (p->current_points >= 2) {
        out[0] += knot_value(p->current_depth, p->current_tn, p->current_points, d);
        out[1] += knot_value(p->current_depth, p->current_te, p->current_points, d);
    }
}

void hydro_current_slope(const HydroParams *p, double d, double out[2])
{
    out[0] = p->shear[0];
    out[1] = p->shear[1];
    if (p->current_points >= 2) {
        out[0] += knot_slope(p->current_depth, p->current_tn, p->current_points, d);
        out[1] += knot_slope(p->current_depth, p->current_te, p->current_points, d);
    }
}

/* ---- forces -------------------------------------------------------------- */

/* Generic skew-symmetric Coriolis-centripetal term C(nu) nu for a symmetric M
 * (Fossen 2011, Thm. 3.2 / eq. 6.43, 6.52):
 *   C(nu) = [0, -S(a1); -S(a1), -S(a2)],  a1 = M11 nu1 + M12 nu2, a2 = M21 nu1 + M22 nu2
 * so C(nu) nu = [nu2 x a1; nu1 x a1 + nu2 x a2] and nu^T C(nu) nu = 0. */
static void coriolis(const double M[36], const double nu[6], double out[6])
{
    double a[6] = {0};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) a[i] += M[6 * i + j] * nu[j];
    double t1[3], t2[3];
    cross(nu + 3, a, out);
    cross(nu, a, t1);
    cross(nu + 3, a + 3, t2);
    for (int i = 0; i < 3; i++) out[3 + i] = t1[i] + t2[i];
}

/* C_A(nu_r) nu_r for the diagonal M_A. */
static void coriolis_added(const double MA[6], const double nur[6], double out[6])
{
    double M[36] = {0};
    for (int i = 0; i < 6; i++) M[6 * i + i] = MA[i];
    coriolis(M, nur, out);
}

/* Restoring forces g(eta) (Fossen 2011, eq. 4.6 with R(q)):
 *   f_g = R^T (0,0,W), f_b = -R^T (0,0,B), g = -[f_g + f_b; r_g x f_g + r_b x f_b],
 * W = m g, B = rho(d) g V(d). */
static void restoring(const HydroParams *p, const double R[9], double d, double V0,
                      const double rb[3], double out[6])
{
    const double W = p->mass * p->g;
    const double B = hydro_density(p, d) * p->g * compressed_volume(p, V0, d);
    const double fw[3] = {0, 0, W}, fbn[3] = {0, 0, -B};
    double fg[3], fb[3], mg[3], mb[3];
    mul_RT(R, fw, fg);
    mul_RT(R, fbn, fb);
    cross(p->rg, fg, mg);
    cross(rb, fb, mb);
    for (int i = 0; i < 3; i++) {
        out[i] = -(fg[i] + fb[i]);
        out[3 + i] = -(mg[i] + mb[i]);
    }
}

/* Coriolis force of the Earth's rotation on the rigid-body mass at the CG:
 * f = -2 m (omega_ie^b x v_cg), moment r_g x f, with omega_ie^n = omega_e
 * (cos(lat), 0, -sin(lat)) in NED. */
static void earth_coriolis(const HydroParams *p, const double R[9], const double nu[6], double out[6])
{
    const double lat = p->latitude * DEG2RAD;
    const double wn[3] = {EARTH_RATE * cos(lat), 0, -EARTH_RATE * sin(lat)};
    double wb[3], vcg[3], f[3], wr[3];
    mul_RT(R, wn, wb);
    cross(nu + 3, p->rg, wr);
    for (int i = 0; i < 3; i++) vcg[i] = nu[i] + wr[i];
    cross(wb, vcg, f);
    for (int i = 0; i < 3; i++) f[i] *= -2 * p->mass;
    memcpy(out, f, 3 * sizeof(double));
    cross(p->rg, f, out + 3);
}

/* Mesh backend: loads summed over the hull's triangles (docs/hydrodynamics.md, "Mesh
 * backend"). Per triangle with centroid c, outward unit normal n, area A, at depth
 * d_c = d + (R c)_z and density rho(d_c), the face's velocity relative to the local
 * water u = nu1 + nu2 x c - R^T v_c(d_c), u_n = u . n, u_t = u - u_n n:
 *   pressure drag (faces advancing into the water, u_n > 0): -1/2 rho C_p A u_n^2 n
 *   skin friction (every wetted face):                     -1/2 rho C_f A |u_t| u_t
 *   lift (lifting faces, u_n > 0):  -rho C_L A |u|^2 sin(a) (n - sin(a) u/|u|),
 *        sin(a) = u_n/|u|: magnitude 1/2 rho C_L A |u|^2 sin(2a), normal to u
 * each with its moment c x F about CO. Faces above the surface (d_c < 0) carry none.
 * Then the Magnus force on the body, C_M rho(d) A_M |v_r| (omega x v_r), v_r = the
 * body's velocity relative to the water at CO (nu_r's linear part). */
static void mesh_loads(const HydroParams *p, const double R[9], const double x[HYDRO_NX],
                       const double current[3], const double nur[6], double out[6])
{
    const HydroMesh *mesh = &hydro_meshes[p->mesh];
    const double s = p->mesh_scale, *nu = x + 7;
    memset(out, 0, 6 * sizeof(double));
    for (int k = 0; k < mesh->n; k++) {
        const double *v = mesh->t[k].v;
        double c[3], e1[3], e2[3], nn[3], rc[3], w[3], vcn[3], vcb[3], u[3], f[3], mo[3];
        for (int i = 0; i < 3; i++) {
            c[i] = s * (v[i] + v[3 + i] + v[6 + i]) / 3.0;
            e1[i] = s * (v[3 + i] - v[i]);
            e2[i] = s * (v[6 + i] - v[i]);
        }
        cross(e1, e2, nn);
        const double n2 = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        if (!(n2 > 0)) continue;
        const double area = 0.5 * n2;
        for (int i = 0; i < 3; i++) nn[i] /= n2;
        mul_R(R, c, rc);
        const double dc = x[2] + rc[2];
        if (dc < 0) continue;
        const double rho = hydro_density(p, dc);
        hydro_current_at(p, current, dc, vcn);
        mul_RT(R, vcn, vcb);
        cross(nu + 3, c, w);
        for (int i = 0; i < 3; i++) u[i] = nu[i] + w[i] - vcb[i];
        const double un = u[0] * nn[0] + u[1] * nn[1] + u[2] * nn[2];
        double ut[3];
        for (int i = 0; i < 3; i++) ut[i] = u[i] - un * nn[i];
        const double utn = sqrt(ut[0] * ut[0] + ut[1] * ut[1] + ut[2] * ut[2]);
        const double umag = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        for (int i = 0; i < 3; i++) f[i] = -0.5 * rho * p->mesh_cf * area * utn * ut[i];
        if (un > 0) {
            for (int i = 0; i < 3; i++) f[i] -= 0.5 * rho * p->mesh_cp * area * un * un * nn[i];
            if (mesh->t[k].lifting && p->mesh_cl > 0 && umag > 0) {
                const double sa = un / umag;
                for (int i = 0; i < 3; i++)
                    f[i] -= rho * p->mesh_cl * area * umag * umag * sa * (nn[i] - sa * u[i] / umag);
            }
        }
        cross(c, f, mo);
        for (int i = 0; i < 3; i++) {
            out[i] += f[i];
            out[3 + i] += mo[i];
        }
    }
    if (p->magnus_cm > 0 && p->magnus_area > 0 && x[2] >= 0) {
        double wv[3];
        const double vr = sqrt(nur[0] * nur[0] + nur[1] * nur[1] + nur[2] * nur[2]);
        cross(nu + 3, nur, wv);
        const double k = p->magnus_cm * hydro_density(p, x[2]) * p->magnus_area * vr;
        for (int i = 0; i < 3; i++) out[i] += k * wv[i];
    }
}

/* State derivative xdot = f(x); also returns nu_dot and (when wrench is not NULL) the
 * hydrodynamic + hydrostatic wrench (everything but tau, ext and the rigid-body terms). */
static void derivatives(const HydroModel *m, const HydroInputs *in, const double x[HYDRO_NX],
                        double xdot[HYDRO_NX], double nu_dot[6], double *wrench)
{
    const HydroParams *p = &m->p;
    const double *q = x + 3, *nu = x + 7;
    const int mesh = p->backend == HYDRO_BACKEND_MESH;
    double R[9], vc_n[3], vc_b[3], nur[6], crb[6], ca[6], gr[6], rhs[6], fm[6] = {0};
    rotation(q, R);

    /* kinematics */
    mul_R(R, nu, xdot);
    xdot[3] = -0.5 * (q[1] * nu[3] + q[2] * nu[4] + q[3] * nu[5]);
    xdot[4] = 0.5 * (q[0] * nu[3] + q[2] * nu[5] - q[3] * nu[4]);
    xdot[5] = 0.5 * (q[0] * nu[4] + q[3] * nu[3] - q[1] * nu[5]);
    xdot[6] = 0.5 * (q[0] * nu[5] + q[1] * nu[4] - q[2] * nu[3]);

    /* relative velocity nu_r = nu - (R^T v_c(d), 0), the current at the depth of CO */
    hydro_current_at(p, in->current, x[2], vc_n);
    mul_RT(R, vc_n, vc_b);
    for (int i = 0; i < 6; i++) nur[i] = nu[i] - (i < 3 ? vc_b[i] : 0.0);

    coriolis(m->MRB, nu, crb);
    coriolis_added(m->MA, nur, ca);
    if (mesh) {
        restoring(p, R, x[2], m->mesh_volume, m->mesh_rb, gr);
        mesh_loads(p, R, x, in->current, nur, fm);
    } else {
        restoring(p, R, x[2], p->volume, p->rb, gr);
    }
    for (int i = 0; i < 6; i++) {
        const double damping = mesh ? -fm[i] : (p->D1[i] + p->D2[i] * fabs(nur[i])) * nur[i];
        rhs[i] = in->tau[i] + in->ext[i] - crb[i] - ca[i] - damping - gr[i];
        if (wrench) wrench[i] = -ca[i] - damping - gr[i];
    }
    if (mesh) {
        /* Added mass acts on the acceleration relative to the water, M_A nu_r_dot, not
         * M_A nu_dot: nu_r_dot = nu_dot - d/dt(R^T v_c), and for a current that is
         * constant in NED but sheared in depth d/dt(R^T v_c) = -nu2 x (R^T v_c) + R^T
         * (s_n d_dot, s_e d_dot, 0). So M nu_dot = rhs + M_A [d/dt(R^T v_c); 0]. Without
         * it a body spinning in a current feels a spurious lateral force A nu2 x v_c. */
        double slope[2];
        hydro_current_slope(p, x[2], slope);
        double wv[3], dvn[3] = {slope[0] * xdot[2], slope[1] * xdot[2], 0.0}, dvb[3];
        cross(nu + 3, vc_b, wv);
        mul_RT(R, dvn, dvb);
        for (int i = 0; i < 3; i++) rhs[i] += m->MA[i] * (dvb[i] - wv[i]);
    }
    if (p->earth_rotation) {
        double fe[6];
        earth_coriolis(p, R, nu, fe);
        for (int i = 0; i < 6; i++) rhs[i] += fe[i];
    }
    cholesky_solve(m->L, rhs, nu_dot);
    memcpy(xdot + 7, nu_dot, 6 * sizeof(double));
}

/* ---- integration --------------------------------------------------------- */

static void rk4(HydroModel *m, const HydroInputs *in, double h)
{
    double k[4][HYDRO_NX], xt[HYDRO_NX], nd[6];
    const double c[4] = {0, 0.5, 0.5, 1};
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < HYDRO_NX; i++) xt[i] = m->x[i] + (s ? c[s] * h * k[s - 1][i] : 0.0);
        derivatives(m, in, xt, k[s], nd, NULL);
    }
    for (int i = 0; i < HYDRO_NX; i++)
        m->x[i] += h / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
    normalise_quaternion(m->x + 3);
}

void hydro_step(HydroModel *m, const HydroInputs *in, double dt)
{
    const double h = m->p.substep;
    const long n = (long)floor(dt / h * (1.0 + 1e-12));
    for (long i = 0; i < n; i++) rk4(m, in, h);
    const double rest = dt - (double)n * h;
    if (rest > 1e-9 * h) rk4(m, in, rest);
    hydro_update_accelerations(m, in);
}

void hydro_update_accelerations(HydroModel *m, const HydroInputs *in)
{
    const double *q = m->x + 3;
    derivatives(m, in, m->x, m->xdot, m->nu_dot, m->wrench);
    /* The kinematics q_dot = 1/2 q (x) (0, nu2) keep |q| constant only exactly; an
     * integrator that owns the state (model exchange) drifts off the unit sphere at
     * the level of its tolerance. Pull it back with a rate HYDRO_QUAT_STABILISATION:
     * zero for a unit q, so it changes nothing on the exact solution. RK4 (hydro_step)
     * re-normalises instead and does not use this term. */
    const double err = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0;
    for (int i = 0; i < 4; i++) m->xdot[3 + i] -= HYDRO_QUAT_STABILISATION * err * q[i];
}

void hydro_euler(const HydroModel *m, double e[3])
{
    const double w = m->x[3], x = m->x[4], y = m->x[5], z = m->x[6];
    double s = 2 * (w * y - x * z);
    if (s > 1) s = 1;
    if (s < -1) s = -1;
    e[0] = atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    e[1] = asin(s);
    e[2] = atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}
