/*
 * The ray engine's inner loop (components/world/rays.py, docs/world.md#ray-engine):
 * rays handed to Embree 4 in packets of 16 (rtcIntersect16), then each hit's range
 * recomputed in float64 from the hit triangle's plane.
 *
 * Call order (from native.py, through ctypes):
 *
 *     mp_cast(intersect16, scene, n, origins, origin_stride, dirs, max_range,
 *             normals, plane, prim_to_face, face_out, t_out, normal_out)
 *
 * Embree is not linked here: the caller passes the address of rtcIntersect16 from the
 * Embree library the embreex wheel ships, and the scene it built through Embree's C
 * API. The packet layout below is Embree 4's RTCRayHit16 (rtcore_ray.h: structure of
 * arrays, 64-byte aligned); only the fields up to geomID are read or written, and the
 * trailing instance-id arrays are given room (up to 4 instance levels).
 *
 * Per ray i, with Embree's primitive p (-1: no hit), f = prim_to_face[p] (or p), n_f
 * the float64 unit normal and w_f = n_f . v0 (the plane n_f . x = w_f, local frame):
 *
 *     t = (w_f - n_f . o_i) / (n_f . d_i)      (o_i, d_i float64; t = Embree's float32
 *                                               tfar where |n_f . d_i| <= 1e-9)
 *     t = max(t, 0); a hit beyond max_range[i] is a miss (t = inf, face -1)
 *
 * in the same operation order as the NumPy expressions it replaced, with
 * floating-point contraction off, so the results are the same doubles.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define W 16

typedef struct __attribute__((aligned(64))) {
    float org_x[W], org_y[W], org_z[W], tnear[W];
    float dir_x[W], dir_y[W], dir_z[W], time[W];
    float tfar[W];
    unsigned int mask[W], id[W], flags[W];
    float Ng_x[W], Ng_y[W], Ng_z[W], u[W], v[W];
    unsigned int primID[W], geomID[W];
    unsigned int inst[8][W]; /* instID / instPrimID levels: room, never read */
} RayHit16;

typedef void (*intersect16_fn)(const int *valid, void *scene, RayHit16 *rayhit, void *args);

#define INVALID_ID 0xFFFFFFFFu
#define F32_MAX_RANGE 1.0e30 /* Embree's tfar for an unlimited ray (finite: float32 inside) */

/* Returns the number of rays that hit. */
int64_t mp_cast(intersect16_fn intersect16, void *scene, int64_t n,
                const double *origins, int64_t origin_stride, const double *dirs,
                const double *max_range, const double *normals, const double *plane,
                const int64_t *prim_to_face, int64_t *face_out, double *t_out,
                double *normal_out)
{
    RayHit16 r;
    int valid[W];
    int64_t hits = 0;
    for (int64_t b = 0; b < n; b += W) {
        const int m = (int)(n - b < W ? n - b : W);
        for (int k = 0; k < W; k++) {
            const int64_t i = b + (k < m ? k : 0);
            const double *o = origins + 3 * i * origin_stride;
            const double *d = dirs + 3 * i;
            valid[k] = k < m ? -1 : 0;
            r.org_x[k] = (float)o[0];
            r.org_y[k] = (float)o[1];
            r.org_z[k] = (float)o[2];
            r.tnear[k] = 0.0f;
            r.dir_x[k] = (float)d[0];
            r.dir_y[k] = (float)d[1];
            r.dir_z[k] = (float)d[2];
            r.time[k] = 0.0f;
            /* Embree's own cut-off, a little beyond the float64 one applied below. */
            r.tfar[k] = max_range ? (float)(fmin(max_range[i], F32_MAX_RANGE) * (1.0 + 1e-5) + 1e-3)
                                 : (float)F32_MAX_RANGE;
            r.mask[k] = 0xFFFFFFFFu;
            r.id[k] = 0;
            r.flags[k] = 0;
            r.primID[k] = INVALID_ID;
            r.geomID[k] = INVALID_ID;
        }
        intersect16(valid, scene, &r, NULL);
        for (int k = 0; k < m; k++) {
            const int64_t i = b + k;
            double *nout = normal_out + 3 * i;
            if (r.geomID[k] == INVALID_ID) {
                face_out[i] = -1;
                t_out[i] = INFINITY;
                nout[0] = nout[1] = nout[2] = NAN;
                continue;
            }
            const int64_t f = prim_to_face ? prim_to_face[r.primID[k]] : (int64_t)r.primID[k];
            const double *nf = normals + 3 * f;
            const double *o = origins + 3 * i * origin_stride;
            const double *d = dirs + 3 * i;
            /* (x0 y0 + x2 y2) + x1 y1: the order of NumPy's einsum("ij,ij->i") for
               three columns (its SIMD loop pairs them so), which the ranges were
               computed with before this loop existed: the same doubles, the same
               recorded streams. */
            const double den = (nf[0] * d[0] + nf[2] * d[2]) + nf[1] * d[1];
            const double num = plane[f] - ((nf[0] * o[0] + nf[2] * o[2]) + nf[1] * o[1]);
            /* A grazing ray (n.d ~ 0) cannot be refined: Embree's float32 range. */
            double t = fabs(den) > 1e-9 ? num / den : (double)r.tfar[k];
            if (!(t >= 0.0))
                t = t != t ? t : 0.0; /* max(t, 0) as np.maximum: nan stays nan */
            if (max_range && !(t <= max_range[i])) {
                face_out[i] = -1;
                t_out[i] = INFINITY;
                nout[0] = nout[1] = nout[2] = NAN;
                continue;
            }
            face_out[i] = f;
            t_out[i] = t;
            nout[0] = nf[0];
            nout[1] = nf[1];
            nout[2] = nf[2];
            hits++;
        }
    }
    return hits;
}
