/*
 * moonpool hydrodynamics: 6-DOF Fossen model of an underwater vehicle.
 *
 * Frames: world NED (north, east, down), body FRD (forward, right, down),
 * origin CO of the body frame is the vehicle reference point. Attitude is a unit
 * quaternion q = (qw, qx, qy, qz) rotating body vectors into NED: x_n = R(q) x_b.
 *
 * Equations of motion (Fossen 2011, ch. 6-8 and 10):
 *   eta1_dot = R(q) nu1,  q_dot = 1/2 q (x) (0, nu2)
 *   M nu_dot + C_RB(nu) nu + C_A(nu_r) nu_r + D(nu_r) nu_r + g(eta)
 *       = tau + tau_ext + tau_earth
 * with nu = (u v w p q r), nu_r = nu - (R^T v_c, 0), M = M_RB + M_A.
 *
 * All hydrodynamic coefficients are POSITIVE magnitudes: A_u = -X_udot,
 * D1_u = -X_u, D2_u = -X_|u|u, ... (SNAME derivatives are negative).
 *
 * This file knows nothing about FMI: fmi2.c and fmi3.c wrap it.
 */
#ifndef MOONPOOL_HYDRO_MODEL_H
#define MOONPOOL_HYDRO_MODEL_H

#include <stddef.h>

#define HYDRO_NX 13 /* n e d qw qx qy qz u v w p q r */

enum { HYDRO_BACKEND_CALIBRATED = 0, HYDRO_BACKEND_SIMPLIFIED = 1, HYDRO_BACKEND_MESH = 2 };
#define HYDRO_WATER_KNOTS 32     /* knots of the tabulated water column (build_fmus.py) */
#define HYDRO_CURRENT_KNOTS 32   /* knots of the tabulated current profile (build_fmus.py) */

typedef struct {
    double mass;                 /* m [kg] */
    double Ixx, Iyy, Izz;        /* inertia about the CG, body axes [kg m^2] */
    double Ixy, Ixz, Iyz;        /* products of inertia (I_g = [Ixx -Ixy -Ixz; ...]) */
    double rg[3];                /* centre of gravity r_g in body frame [m] */
    double rb[3];                /* centre of buoyancy r_b in body frame [m] */
    double volume;               /* displaced volume V0 at the surface [m^3] */
    double rho_surface;          /* water density at the surface [kg/m^3] */
    double A[6];                 /* added mass magnitudes A_u..A_r */
    double D1[6];                /* linear damping magnitudes D1_u..D1_r */
    double D2[6];                /* quadratic damping magnitudes D2_u..D2_r */
    double init_pos[3];          /* n e d [m] */
    double init_euler[3];        /* roll pitch yaw [rad] (zyx convention) */
    double init_nu[6];           /* u v w [m/s], p q r [rad/s] */
    int backend;                 /* HYDRO_BACKEND_* */
    double substep;              /* fixed RK4 sub-step [s] */
    double g;                    /* gravity [m/s^2] */
    double pyc_depth;            /* depth of the centre of the pycnocline ramp [m] */
    double pyc_width;            /* thickness of the ramp [m] (0: a step) */
    double pyc_delta_rho;        /* density increase across the ramp [kg/m^3] */
    double bulk_modulus;         /* hull bulk modulus K [Pa] (0: rigid hull) */
    int earth_rotation;          /* 1: add the Earth-rotation Coriolis force */
    double latitude;             /* latitude [deg] for the Earth-rotation term */
    double shear[2];             /* current shear d(v_c n, e)/d(depth) [1/s], all backends */
    int mesh;                    /* mesh backend: index into hydro_meshes (meshes.h) */
    double mesh_scale;           /* mesh backend: metres per mesh unit */
    double mesh_cp;              /* mesh backend: pressure-drag coefficient per face */
    double mesh_cf;              /* mesh backend: skin-friction coefficient per face */
    double mesh_cl;              /* mesh backend: lift coefficient of lifting faces */
    double magnus_cm;            /* mesh backend: Magnus coefficient C_M */
    double magnus_area;          /* mesh backend: Magnus reference area A [m^2] */
    int water_points;            /* tabulated water column: knots (0: the pycnocline) */
    double water_depth[HYDRO_WATER_KNOTS]; /* its depths [m], increasing */
    double water_rho[HYDRO_WATER_KNOTS];   /* its in-situ densities [kg/m^3] */
    int current_points;          /* tabulated current profile: knots (0: none) */
    double current_depth[HYDRO_CURRENT_KNOTS]; /* its depths [m], increasing */
    double current_tn[HYDRO_CURRENT_KNOTS];    /* north current added at each knot [m/s] */
    double current_te[HYDRO_CURRENT_KNOTS];    /* east current added at each knot [m/s] */
} HydroParams;

typedef struct {
    double tau[6];               /* control wrench, body frame [N, N m] */
    double ext[6];               /* external wrench, body frame [N, N m] */
    double current[3];           /* ocean current in NED [m/s] */
} HydroInputs;

typedef struct {
    HydroParams p;
    double M[36];                /* M = M_RB + M_A, row-major */
    double MRB[36];              /* rigid-body mass matrix about CO */
    double MA[6];                /* diagonal of M_A actually used (0 in simplified) */
    double L[36];                /* Cholesky factor of M (M = L L^T) */
    double x[HYDRO_NX];          /* state */
    double xdot[HYDRO_NX];       /* state derivative at x (see hydro_update_accelerations) */
    double nu_dot[6];            /* body accelerations at the current state */
    double mesh_volume;          /* mesh backend: enclosed volume of the scaled mesh [m^3] */
    double mesh_rb[3];           /* mesh backend: its centroid, body frame [m] */
    double wrench[6];            /* hydrodynamic + hydrostatic wrench at the current state */
} HydroModel;

/* Check the parameters. Returns 0 when valid, otherwise writes a message that
 * names the offending parameter into msg and returns -1. */
int hydro_validate(const HydroParams *p, char *msg, size_t msg_len);

/* Build M (and its Cholesky factor) from p. Returns -1 if M is not positive
 * definite. Does not touch the state. */
int hydro_prepare(HydroModel *m, const HydroParams *p, char *msg, size_t msg_len);

/* Set the state from the init_* parameters. */
void hydro_reset(HydroModel *m);

/* Advance the state by dt with fixed RK4 sub-steps (last one partial). */
void hydro_step(HydroModel *m, const HydroInputs *in, double dt);

/* State derivative at the current state (stored in m->xdot; m->nu_dot = its
 * last six elements, the body accelerations M^-1 rhs). This is the function RK4
 * integrates, plus a quaternion-norm stabilisation term -k (|q|^2 - 1) q in the
 * quaternion rate, which is zero on the unit sphere. It is the
 * right-hand side model exchange hands to the importer's integrator. */
void hydro_update_accelerations(HydroModel *m, const HydroInputs *in);

/* Rate [1/s] of the quaternion-norm stabilisation in m->xdot. */
#define HYDRO_QUAT_STABILISATION 1.0

/* Ocean current (NED) [m/s] at depth d: the input plus the linear shear plus the
 * tabulated profile (linear between its knots, held beyond them). */
void hydro_current_at(const HydroParams *p, const double current[3], double d, double out[3]);

/* d(v_c n, e)/d(depth) [1/s] at depth d: the linear shear plus the profile's slope
 * there (0 beyond its knots). */
void hydro_current_slope(const HydroParams *p, double d, double out[2]);

/* Local water density [kg/m^3] and displaced volume [m^3] at depth d [m]. */
double hydro_density(const HydroParams *p, double d);
double hydro_volume(const HydroParams *p, double d);

/* Euler angles (roll, pitch, yaw) [rad] of the current attitude. */
void hydro_euler(const HydroModel *m, double euler[3]);

#endif
