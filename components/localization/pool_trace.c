/* The pool camera's per-corner and per-pixel loops (components/localization/render.py,
 * docs/localization.md "Renderer"), called through ctypes from render.py.
 *
 * Call order: one frame is one call,
 *     mp_render     (every visible tag into the radiance image)
 * which streams, corner row by corner row, the three stages that render.py also calls
 * one by one (tests, ``Renderer.trace_corners``, ``Renderer.render_tag``):
 *     mp_ripple     (rippled water only: the corners' surface points and refracted rays)
 *     mp_trace      (the corners' tag-bitmap coordinates, per tag)
 *     mp_composite  (the pixels' radiance, composited into the image, per tag)
 * Both paths run the same block functions below, so they give the same bits.
 *
 * Each block does, per element, the operations of the NumPy expressions render.py had
 * before (the same order; compiled with -ffp-contract=off, so no fused multiply-adds):
 * the images are the former renderer's bit for bit (tests/unit/test_render_reference.py).
 * Two things differ from those expressions by the last bits of a double (~1e-16
 * relative), which the images do not show: the dot products here are summed left to
 * right where OpenBLAS fused them, and the ripple's phases come by angle addition from
 * sines and cosines made once per corner (render.py) instead of a sine per corner and
 * frame.
 *
 * The blocks work on the components of up to B corners of a row apart (x[], y[], z[]):
 * loops whose iterations are independent and branch-free, which the compiler
 * vectorizes; the entry points are compiled for AVX-512, AVX2 and the baseline, chosen
 * when the library loads (target_clones: the same results on each).
 *
 * Arrays are row-major doubles; a "grid" of corners is nr x nc, element (i, j) of a
 * 3-vector grid at base + i * stride + 3 * j (stride in doubles).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif
/* Blocks are compiled into each entry point (and so into each of its clones). */
#if defined(__GNUC__)
#define BLOCK static inline __attribute__((always_inline))
#else
#define BLOCK static inline
#endif

enum { B = 256 };
static const double PI = 3.14159265358979323846;

/* sin and cos of a small angle x (|x| < 0.05: the Taylor series to x^9 and x^8 in
 * Horner form, whose next terms are below 1e-22), else libm's. */
#define S3 (-1.0 / 6)
#define S5 (1.0 / 120)
#define S7 (-1.0 / 5040)
#define S9 (1.0 / 362880)
#define C4 (1.0 / 24)
#define C6 (-1.0 / 720)
#define C8 (1.0 / 40320)

static inline void sincos_small(double x, double *s, double *c)
{
    if (fabs(x) < 0.05) {
        double x2 = x * x;
        *s = x + x * x2 * (S3 + x2 * (S5 + x2 * (S7 + x2 * S9)));
        *c = 1.0 + x2 * (-0.5 + x2 * (C4 + x2 * (C6 + x2 * C8)));
    } else {
        *s = sin(x);
        *c = cos(x);
    }
}

/* The components of n 3-vectors at p (interleaved) into x, y, z, and back. */
BLOCK void split3(int64_t n, const double *p, double *x, double *y, double *z)
{
    for (int64_t j = 0; j < n; j++) {
        x[j] = p[3 * j];
        y[j] = p[3 * j + 1];
        z[j] = p[3 * j + 2];
    }
}

BLOCK void join3(int64_t n, const double *x, const double *y, const double *z, double *p)
{
    for (int64_t j = 0; j < n; j++) {
        p[3 * j] = x[j];
        p[3 * j + 1] = y[j];
        p[3 * j + 2] = z[j];
    }
}

/* The rippled water at n <= B corners of a row (render.py, Renderer._ripple).
 *
 * Surface z = water_z + sum_m A_m sin(phi_m - w_m t), phi_m = kx_m x + ky_m y + ph_m at
 * the flat-water point (x, y). Per corner:
 *   h = sum_m A_m sin(phi_m - w_m t)            (sin(phi - wt) = sin phi cos wt
 *                                                 - cos phi sin wt)
 *   s = h / d_z;  S' = S + s d                  (one fixed-point step along the air ray)
 *   the slope at S': (h_x, h_y) = sum_m (kx_m, ky_m) A_m cos(phi_m - w_m t + delta_m),
 *     delta_m = s (kx_m d_x + ky_m d_y)          (the phase moved by S' - S)
 *   n = (h_x, h_y, -1) / |.|, then vector Snell with eta = n_air / n_water:
 *   cos_i = -(n . d), k = 1 - eta^2 (1 - cos_i^2), t' = eta d + (eta cos_i - sqrt k) n.
 *
 * d = (dx, dy, dz), S = (sx, sy, sz): the flat-water rays; sphi, cphi: the corners'
 * sin phi and cos phi of wave m at m * ph_plane; wave: per wave (A, kx, ky, cos wt,
 * sin wt). Out: S' = (ox, oy, oz), t' = (tx, ty, tz). */
BLOCK void ripple_block(int64_t n, const double *dx, const double *dy, const double *dz,
                                const double *sx, const double *sy, const double *sz,
                                const double *sphi, const double *cphi, int64_t ph_plane,
                                int64_t nw, const double *wave, double eta,
                                double *ox, double *oy, double *oz,
                                double *tx, double *ty, double *tz)
{
    double hs[B], gx[B], gy[B];
    for (int64_t j = 0; j < n; j++) {
        hs[j] = 0.0;
        gx[j] = 0.0;
        gy[j] = 0.0;
    }
    for (int64_t m = 0; m < nw; m++) { /* h = sum_m A_m sin(phi_m - w_m t) */
        const double *w = wave + 5 * m;
        const double *sf = sphi + m * ph_plane, *cf = cphi + m * ph_plane;
        for (int64_t j = 0; j < n; j++)
            hs[j] += w[0] * (sf[j] * w[3] - cf[j] * w[4]);
    }
    for (int64_t j = 0; j < n; j++) { /* s = h / d_z, S' = S + s d */
        double s = hs[j] / dz[j];
        hs[j] = s;
        ox[j] = sx[j] + s * dx[j];
        oy[j] = sy[j] + s * dy[j];
        oz[j] = sz[j] + s * dz[j];
    }
    for (int64_t m = 0; m < nw; m++) { /* the slope at S' */
        const double *w = wave + 5 * m;
        const double *sf = sphi + m * ph_plane, *cf = cphi + m * ph_plane;
        int big = 0;
        for (int64_t j = 0; j < n; j++)
            big |= !(fabs(hs[j] * (w[1] * dx[j] + w[2] * dy[j])) < 0.05);
        if (big) { /* a steep ripple: libm where the series would not do */
            for (int64_t j = 0; j < n; j++) {
                double sn = sf[j] * w[3] - cf[j] * w[4], cs = cf[j] * w[3] + sf[j] * w[4];
                double sd, cd;
                sincos_small(hs[j] * (w[1] * dx[j] + w[2] * dy[j]), &sd, &cd);
                double c = w[0] * (cs * cd - sn * sd);
                gx[j] += w[1] * c;
                gy[j] += w[2] * c;
            }
            continue;
        }
        for (int64_t j = 0; j < n; j++) { /* the series (as sincos_small), no branch */
            double sn = sf[j] * w[3] - cf[j] * w[4], cs = cf[j] * w[3] + sf[j] * w[4];
            double x = hs[j] * (w[1] * dx[j] + w[2] * dy[j]), x2 = x * x;
            double sd = x + x * x2 * (S3 + x2 * (S5 + x2 * (S7 + x2 * S9)));
            double cd = 1.0 + x2 * (-0.5 + x2 * (C4 + x2 * (C6 + x2 * C8)));
            double c = w[0] * (cs * cd - sn * sd);
            gx[j] += w[1] * c;
            gy[j] += w[2] * c;
        }
    }
    for (int64_t j = 0; j < n; j++) { /* the normal, then Snell */
        double hx = gx[j], hy = gy[j];
        double norm = sqrt(hx * hx + hy * hy + 1.0);
        double nx = hx / norm, ny = hy / norm, nz = -1.0 / norm;
        double cos_i = -(nx * dx[j] + ny * dy[j] + nz * dz[j]);
        double k = 1.0 - eta * eta * (1.0 - cos_i * cos_i);
        double g = eta * cos_i - sqrt(k);
        tx[j] = eta * dx[j] + g * nx;
        ty[j] = eta * dy[j] + g * ny;
        tz[j] = eta * dz[j] + g * nz;
    }
}

/* Where the light paths of n corners meet one tag's plane, in tag-bitmap coordinates
 * (render.py, Renderer.trace_corners).
 *
 * Under water: den = t . n, lam = ((P0 - S) . n) / den, X = S + lam t, a path when
 * den < 0 and lam > 0. With air (the tag may reach above the water): the straight ray
 * X_a = C + lam_a d, lam_a = pcn / (d . n) (pcn = (P0 - C) . n), is taken where it meets
 * the plane above the water; a water path counts only where X is under the water.
 * col = ((X - P0) . right) / cell + tw / 2, row = tw / 2 - ((X - P0) . top) / cell.
 *
 * geo: P0[3], n[3], right[3], top[3], C[3], cell, tw, water_z, pcn. */
BLOCK void trace_block(int64_t n, const double *sx, const double *sy, const double *sz,
                               const double *tx, const double *ty, const double *tz,
                               const double *dx, const double *dy, const double *dz,
                               const double *geo, int air, double *col, double *row,
                               uint8_t *ok)
{
    const double *P0 = geo, *nv = geo + 3, *right = geo + 6, *top = geo + 9, *C = geo + 12;
    const double cell = geo[15], half = 0.5 * geo[16], wz = geo[17], pcn = geo[18];
    if (!air) {
        for (int64_t j = 0; j < n; j++) {
            double den = tx[j] * nv[0] + ty[j] * nv[1] + tz[j] * nv[2];
            double lam = ((P0[0] - sx[j]) * nv[0] + (P0[1] - sy[j]) * nv[1]
                          + (P0[2] - sz[j]) * nv[2]) / den;
            double r0 = (sx[j] + lam * tx[j]) - P0[0];
            double r1 = (sy[j] + lam * ty[j]) - P0[1];
            double r2 = (sz[j] + lam * tz[j]) - P0[2];
            col[j] = (r0 * right[0] + r1 * right[1] + r2 * right[2]) / cell + half;
            row[j] = half - (r0 * top[0] + r1 * top[1] + r2 * top[2]) / cell;
            ok[j] = (uint8_t)((den < 0) & (lam > 0));
        }
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        double den = tx[j] * nv[0] + ty[j] * nv[1] + tz[j] * nv[2];
        double lam = ((P0[0] - sx[j]) * nv[0] + (P0[1] - sy[j]) * nv[1]
                      + (P0[2] - sz[j]) * nv[2]) / den;
        double X0 = sx[j] + lam * tx[j], X1 = sy[j] + lam * ty[j], X2 = sz[j] + lam * tz[j];
        int good = (den < 0) && (lam > 0);
        double den_a = dx[j] * nv[0] + dy[j] * nv[1] + dz[j] * nv[2];
        double lam_a = pcn / den_a;
        double a2 = C[2] + lam_a * dz[j];
        int in_air = (den_a < 0) && (lam_a > 0) && (a2 < wz);
        if (in_air) {
            X0 = C[0] + lam_a * dx[j];
            X1 = C[1] + lam_a * dy[j];
            X2 = a2;
        }
        good = in_air || (good && X2 >= wz);
        double r0 = X0 - P0[0], r1 = X1 - P0[1], r2 = X2 - P0[2];
        col[j] = (r0 * right[0] + r1 * right[1] + r2 * right[2]) / cell + half;
        row[j] = half - (r0 * top[0] + r1 * top[1] + r2 * top[2]) / cell;
        ok[j] = (uint8_t)good;
    }
}

/* The cell (padded: 0 and tw + 1 are outside the tag) of a bitmap coordinate:
 * floor(g) clipped to [-1, tw], plus 1 (a NaN: outside). Clip first (floor is monotonic
 * and the bounds are whole), then the floor without a call (baseline x86-64 has no
 * rounding instruction): truncate, and step down below zero. No branch: vectorizes. */
BLOCK int32_t cell_of(double g, double tw)
{
    double c = g >= -1.0 ? g : -1.0;
    c = c < tw ? c : tw;
    int32_t f = (int32_t)c;
    return f - (c < (double)f) + 1;
}

BLOCK void cells_of(int64_t n, const double *g, double tw, int32_t *c)
{
    for (int64_t j = 0; j < n; j++)
        c[j] = cell_of(g[j], tw);
}

/* NumPy's pairwise sum of n doubles (its add.reduce over a contiguous axis): eight
 * partial sums in blocks of 8 up to 128 terms, halves above. */
static double pairwise_sum(const double *a, int64_t n)
{
    if (n < 8) {
        double res = 0.0;
        for (int64_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int64_t i;
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += a[i + k];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* The least and the greatest of four cells. */
BLOCK void span4(int32_t a, int32_t b, int32_t c, int32_t d, int32_t *lo, int32_t *hi)
{
    int32_t ab0 = a < b ? a : b, ab1 = a < b ? b : a, cd0 = c < d ? c : d, cd1 = c < d ? d : c;
    *lo = ab0 < cd0 ? ab0 : cd0;
    *hi = ab1 > cd1 ? ab1 : cd1;
}

/* pairwise_sum(a, 16), unrolled (the default 4 x 4 samples). */
BLOCK double pairwise_sum16(const double *a)
{
    double r0 = a[0] + a[8], r1 = a[1] + a[9], r2 = a[2] + a[10], r3 = a[3] + a[11];
    double r4 = a[4] + a[12], r5 = a[5] + a[13], r6 = a[6] + a[14], r7 = a[7] + a[15];
    return ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
}

/* The supersampling weights of the corners (render.py: w00, w01, w10, w11). */
typedef struct {
    int64_t n;
    double w00[256], w01[256], w10[256], w11[256];
} samples_t;

static void samples_init(samples_t *s, int64_t ss)
{
    s->n = ss * ss;
    for (int64_t v = 0; v < ss; v++) {
        for (int64_t u = 0; u < ss; u++) {
            double av = (v + 0.5) / ss, au = (u + 0.5) / ss;
            s->w00[v * ss + u] = (1 - av) * (1 - au);
            s->w01[v * ss + u] = (1 - av) * au;
            s->w10[v * ss + u] = av * (1 - au);
            s->w11[v * ss + u] = av * au;
        }
    }
}

/* Composite one tag into one row of w pixels (render.py, Renderer.render_tag).
 *
 * Pixel j has the corners j and j + 1 of the corner row above (col0, row0, ok0 and
 * their cells cc0, rc0) and of the row below (col1, ...). A pixel all of whose corners
 * have a path and lie within cells of one level takes that level (L >= 0; L < 0 is off
 * the tag: the pixel is left as it is); any other pixel with a path at every corner is
 * area-averaged over the samples, bilinear in its corners, and composited over what is
 * there: px = px (1 - cover) + sum(levels hit) / n. L: the (tw + 2)^2 padded levels. */
BLOCK void composite_row(int64_t w, const double *col0, const double *row0, const uint8_t *ok0,
                          const int32_t *cc0, const int32_t *rc0, const double *col1,
                          const double *row1, const uint8_t *ok1, const int32_t *cc1,
                          const int32_t *rc1, const double *L, int64_t tw_i,
                          const samples_t *sm, float *px)
{
    const double tw = (double)tw_i;
    const int64_t nL = tw_i + 2, n = sm->n;
    double vals[256];
    int32_t idx[256];
    for (int64_t j = 0; j < w; j++) {
        if (!(ok0[j] && ok0[j + 1] && ok1[j] && ok1[j + 1]))
            continue; /* no path at a corner: off the tag (the pixel as it is) */
        int32_t cmin, cmax, rmin, rmax;
        span4(cc0[j], cc0[j + 1], cc1[j], cc1[j + 1], &cmin, &cmax);
        span4(rc0[j], rc0[j + 1], rc1[j], rc1[j + 1], &rmin, &rmax);
        if (cmax - cmin <= 1 && rmax - rmin <= 1) {
            double l00 = L[rmin * nL + cmin], l01 = L[rmin * nL + cmax];
            double l10 = L[rmax * nL + cmin], l11 = L[rmax * nL + cmax];
            if (l00 == l01 && l00 == l10 && l00 == l11) {
                if (l00 >= 0)
                    px[j] = (float)l00;
                continue;
            }
        }
        const double c00 = col0[j], c01 = col0[j + 1], c10 = col1[j], c11 = col1[j + 1];
        const double r00 = row0[j], r01 = row0[j + 1], r10 = row1[j], r11 = row1[j + 1];
        for (int64_t k = 0; k < n; k++) { /* the samples' cells (vectorized) */
            double cs = c00 * sm->w00[k] + c01 * sm->w01[k] + c10 * sm->w10[k] + c11 * sm->w11[k];
            double rs = r00 * sm->w00[k] + r01 * sm->w01[k] + r10 * sm->w10[k] + r11 * sm->w11[k];
            idx[k] = cell_of(rs, tw) * (int32_t)nL + cell_of(cs, tw);
        }
        int64_t hits = 0;
        for (int64_t k = 0; k < n; k++) { /* their levels; no branch on a hit */
            double lv = L[idx[k]];
            int hit = lv >= 0;
            vals[k] = hit ? lv : 0.0;
            hits += hit;
        }
        double cover = (double)hits / (double)n;
        double value = (n == 16 ? pairwise_sum16(vals) : pairwise_sum(vals, n)) / (double)n;
        px[j] = (float)((double)px[j] * (1.0 - cover) + value);
    }
}

/* ---- the stages one by one ---------------------------------------------------------- */

/* The rippled water over an nr x nc grid of corners. d, S: the flat-water rays (3-vector
 * grids of stride ray_stride); sphi, cphi: per wave m a grid of stride ph_stride at
 * m * ph_plane; wave: per wave (A, kx, ky, cos wt, sin wt); S_out, t_out: contiguous
 * nr x nc x 3. */
CLONES
void mp_ripple(int64_t nr, int64_t nc, const double *d, const double *S, int64_t ray_stride,
               const double *sphi, const double *cphi, int64_t ph_stride, int64_t ph_plane,
               int64_t nw, const double *wave, double eta, double *S_out, double *t_out)
{
    double dx[B], dy[B], dz[B], sx[B], sy[B], sz[B], ox[B], oy[B], oz[B], tx[B], ty[B], tz[B];
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t j0 = 0; j0 < nc; j0 += B) {
            const int64_t n = nc - j0 < B ? nc - j0 : B;
            split3(n, d + i * ray_stride + 3 * j0, dx, dy, dz);
            split3(n, S + i * ray_stride + 3 * j0, sx, sy, sz);
            ripple_block(n, dx, dy, dz, sx, sy, sz, sphi + i * ph_stride + j0,
                         cphi + i * ph_stride + j0, ph_plane, nw, wave, eta,
                         ox, oy, oz, tx, ty, tz);
            join3(n, ox, oy, oz, S_out + 3 * (i * nc + j0));
            join3(n, tx, ty, tz, t_out + 3 * (i * nc + j0));
        }
    }
}

/* One tag's plane: col, row, ok (contiguous nr x nc) of an nr x nc grid of corners; d of
 * stride d_stride, S and t of stride st_stride; geo as trace_block's. */
CLONES
void mp_trace(int64_t nr, int64_t nc, const double *d, int64_t d_stride, const double *S,
              const double *t, int64_t st_stride, const double *geo, int air,
              double *col, double *row, uint8_t *ok)
{
    double dx[B], dy[B], dz[B], sx[B], sy[B], sz[B], tx[B], ty[B], tz[B];
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t j0 = 0; j0 < nc; j0 += B) {
            const int64_t n = nc - j0 < B ? nc - j0 : B, q = i * nc + j0;
            split3(n, d + i * d_stride + 3 * j0, dx, dy, dz);
            split3(n, S + i * st_stride + 3 * j0, sx, sy, sz);
            split3(n, t + i * st_stride + 3 * j0, tx, ty, tz);
            trace_block(n, sx, sy, sz, tx, ty, tz, dx, dy, dz, geo, air, col + q, row + q, ok + q);
        }
    }
}

/* One tag into an h x w block of pixels of a float32 image (row stride img_stride),
 * from its (h + 1) x (w + 1) corners (col, row, ok); L: its (tw + 2)^2 padded levels;
 * ss x ss samples. Returns 0, or -1 when out of memory. */
CLONES
int mp_composite(int64_t h, int64_t w, const double *col, const double *row, const uint8_t *ok,
                 const double *L, int64_t tw, int64_t ss, float *img, int64_t img_stride)
{
    const int64_t nc = w + 1;
    samples_t sm;
    samples_init(&sm, ss);
    int32_t *cells = malloc(sizeof(int32_t) * 4 * (size_t)nc);
    if (!cells)
        return -1;
    int32_t *cc0 = cells, *rc0 = cells + nc, *cc1 = cells + 2 * nc, *rc1 = cells + 3 * nc, *t;
    cells_of(nc, col, (double)tw, cc1);
    cells_of(nc, row, (double)tw, rc1);
    for (int64_t i = 0; i < h; i++) {
        t = cc0, cc0 = cc1, cc1 = t;
        t = rc0, rc0 = rc1, rc1 = t;
        cells_of(nc, col + (i + 1) * nc, (double)tw, cc1);
        cells_of(nc, row + (i + 1) * nc, (double)tw, rc1);
        composite_row(w, col + i * nc, row + i * nc, ok + i * nc, cc0, rc0, col + (i + 1) * nc,
                      row + (i + 1) * nc, ok + (i + 1) * nc, cc1, rc1, L, tw, &sm,
                      img + i * img_stride);
    }
    free(cells);
    return 0;
}

/* ---- one frame ---------------------------------------------------------------------- */

/* Whether a tag can be drawn within the pixel box b (u0, v0, u1, v1) instead of a larger
 * one: the light paths of the box's outermost corners, taken around the box, must all
 * exist, run around the tag (winding number +-1 about its centre in the bitmap), step
 * by less than half a cell from corner to corner (pixels small against the cells),
 * and stay further outside the tag's square [0, tw]^2 than three times the largest
 * step (all in cells, largest coordinate difference). Then the tag's square is seen
 * inside the ring (the map from pixels to the tag's plane is continuous and one to
 * one), and a pixel outside the box has its corners outside the ring, at least the gap
 * less half a step from the square, and its samples within two steps of a corner
 * (across its diagonal): none falls on the tag, so the larger box would leave every
 * pixel outside as it is. Returns 1 (clear), 0 (not: draw in the larger box) or -1 (out of
 * memory). */
static int ring_clear(const int64_t *b, const double *geo, int air, double tw, const double *d,
                      const double *S, const double *t, int64_t ray_stride, int64_t nw,
                      const double *sphi, const double *cphi, int64_t ph_stride,
                      int64_t ph_plane, const double *wave, double eta)
{
    const int64_t u0 = b[0], v0 = b[1], u1 = b[2] + 1, v1 = b[3] + 1; /* corner indices */
    if (u1 - u0 < 2 || v1 - v0 < 2)
        return 0;
    const int64_t n = 2 * (u1 - u0) + 2 * (v1 - v0);
    int64_t *ij = malloc(sizeof(int64_t) * 2 * (size_t)n);
    double *cr = malloc(sizeof(double) * 2 * (size_t)n);
    uint8_t *ok = malloc((size_t)n);
    double *ph = malloc(sizeof(double) * 2 * B * (size_t)(nw > 0 ? nw : 1));
    int res = -1;
    if (!ij || !cr || !ok || !ph)
        goto done;
    int64_t q = 0; /* around the box: top, right, bottom, left */
    for (int64_t j = u0; j < u1; j++, q++) ij[2 * q] = v0, ij[2 * q + 1] = j;
    for (int64_t i = v0; i < v1; i++, q++) ij[2 * q] = i, ij[2 * q + 1] = u1;
    for (int64_t j = u1; j > u0; j--, q++) ij[2 * q] = v1, ij[2 * q + 1] = j;
    for (int64_t i = v1; i > v0; i--, q++) ij[2 * q] = i, ij[2 * q + 1] = u0;
    double dx[B], dy[B], dz[B], sx[B], sy[B], sz[B], ox[B], oy[B], oz[B], tx[B], ty[B], tz[B];
    for (int64_t q0 = 0; q0 < n; q0 += B) {
        const int64_t m = n - q0 < B ? n - q0 : B;
        for (int64_t k = 0; k < m; k++) {
            const int64_t i = ij[2 * (q0 + k)], j = ij[2 * (q0 + k) + 1];
            const double *dp = d + i * ray_stride + 3 * j, *sp = S + i * ray_stride + 3 * j;
            const double *tp = t + i * ray_stride + 3 * j;
            dx[k] = dp[0], dy[k] = dp[1], dz[k] = dp[2];
            sx[k] = sp[0], sy[k] = sp[1], sz[k] = sp[2];
            tx[k] = tp[0], ty[k] = tp[1], tz[k] = tp[2];
            for (int64_t w = 0; w < nw; w++) {
                ph[w * B + k] = sphi[w * ph_plane + i * ph_stride + j];
                ph[(nw + w) * B + k] = cphi[w * ph_plane + i * ph_stride + j];
            }
        }
        const double *px_ = sx, *py_ = sy, *pz_ = sz;
        if (nw > 0) {
            ripple_block(m, dx, dy, dz, sx, sy, sz, ph, ph + nw * B, B, nw, wave, eta,
                         ox, oy, oz, tx, ty, tz);
            px_ = ox, py_ = oy, pz_ = oz;
        }
        trace_block(m, px_, py_, pz_, tx, ty, tz, dx, dy, dz, geo, air, cr + q0, cr + n + q0,
                    ok + q0);
    }
    const double *col = cr, *row = cr + n, c = 0.5 * tw;
    double step = 0.0, gap = INFINITY, turn = 0.0;
    res = 0;
    for (int64_t k = 0; k < n; k++) {
        const int64_t l = k + 1 < n ? k + 1 : 0;
        if (!ok[k] || !isfinite(col[k]) || !isfinite(row[k]))
            goto done;
        double s = fmax(fabs(col[l] - col[k]), fabs(row[l] - row[k]));
        double out = fmax(fmax(-col[k], col[k] - tw), fmax(-row[k], row[k] - tw));
        step = fmax(step, s);
        gap = fmin(gap, out);
        double a = atan2(row[l] - c, col[l] - c) - atan2(row[k] - c, col[k] - c);
        turn += a > PI ? a - 2 * PI : (a < -PI ? a + 2 * PI : a);
    }
    res = step < 0.5 && gap > 3.0 * step && fabs(fabs(turn) - 2 * PI) < 1.0;
done:
    free(ij);
    free(cr);
    free(ok);
    free(ph);
    return res;
}

/* Every tag into the image, corner row by corner row: the row's surface (rippled, or
 * the flat water's) once for all the tags that need it, each tag's trace of it, then
 * each tag's row of pixels above it, tag after tag (each pixel sees the tags in order,
 * as when they are drawn one after the other).
 *
 * ntags tags: boxes (u0, v0, u1, v1) inclusive pixel boxes within the image that
 * contain every pixel the tag may touch, and small (or NULL): a box inside each, used
 * instead where ring_clear allows (boxes then holds the box drawn in); geo 19
 * doubles and air per tag (as trace_block's); levels (tw + 2)^2 per tag. The setup's
 * caches of the whole grid of corners, (H + 1) x (W + 1): d, S, t (stride ray_stride),
 * sphi, cphi (stride ph_stride, wave m at m * ph_plane; used when nw > 0). img: float32
 * H x W, row stride img_stride. Returns 0, or -1 when out of memory. */
CLONES
int mp_render(int64_t ntags, int64_t *boxes, const int64_t *small, const double *geo,
              const int32_t *air, const double *levels, int64_t tw, int64_t ss, const double *d,
              const double *S, const double *t, int64_t ray_stride, int64_t nw, const double *sphi,
              const double *cphi, int64_t ph_stride, int64_t ph_plane, const double *wave,
              double eta, float *img, int64_t img_stride)
{
    if (ntags <= 0)
        return 0;
    /* Each tag in its smaller box where the ring test allows (boxes is updated). */
    for (int64_t k = 0; k < ntags && small; k++) {
        const int64_t *sb = small + 4 * k;
        int64_t *bb = boxes + 4 * k;
        if (sb[0] == bb[0] && sb[1] == bb[1] && sb[2] == bb[2] && sb[3] == bb[3])
            continue;
        int clear = ring_clear(sb, geo + 19 * k, air[k], (double)tw, d, S, t, ray_stride, nw,
                               sphi, cphi, ph_stride, ph_plane, wave, eta);
        if (clear < 0)
            return -1;
        if (clear)
            memcpy(bb, sb, 4 * sizeof(int64_t));
    }
    int64_t r0 = INT64_MAX, r1 = -1, width = 0;
    for (int64_t k = 0; k < ntags; k++) {
        const int64_t *b = boxes + 4 * k;
        if (b[1] < r0) r0 = b[1];
        if (b[3] + 1 > r1) r1 = b[3] + 1;
        if (b[2] - b[0] + 2 > width) width = b[2] - b[0] + 2;
    }
    /* per tag, two corner rows (above, below) of col, row (doubles), cells (int32) and ok */
    const size_t per = (size_t)width, doubles = 4 * per, ints = 4 * per, bytes = 2 * per;
    char *mem = malloc((size_t)ntags * (doubles * sizeof(double) + ints * sizeof(int32_t) + bytes));
    if (!mem)
        return -1;
    double *dbl = (double *)mem;
    int32_t *i32 = (int32_t *)(dbl + ntags * doubles);
    uint8_t *u8 = (uint8_t *)(i32 + ntags * ints);
    samples_t sm;
    samples_init(&sm, ss);
    double dx[B], dy[B], dz[B], sx[B], sy[B], sz[B], ox[B], oy[B], oz[B], tx[B], ty[B], tz[B];
    for (int64_t r = r0; r <= r1; r++) {
        /* the corners of this row that some tag needs: [c0, c1] */
        int64_t c0 = INT64_MAX, c1 = -1;
        for (int64_t k = 0; k < ntags; k++) {
            const int64_t *b = boxes + 4 * k;
            if (r < b[1] || r > b[3] + 1)
                continue;
            if (b[0] < c0) c0 = b[0];
            if (b[2] + 1 > c1) c1 = b[2] + 1;
        }
        for (int64_t j0 = c0; j0 <= c1; j0 += B) {
            const int64_t n = c1 + 1 - j0 < B ? c1 + 1 - j0 : B;
            const double *dp = d + r * ray_stride + 3 * j0;
            split3(n, dp, dx, dy, dz);
            split3(n, S + r * ray_stride + 3 * j0, sx, sy, sz);
            const double *px_, *py_, *pz_; /* the surface points of the block */
            if (nw > 0) {
                ripple_block(n, dx, dy, dz, sx, sy, sz, sphi + r * ph_stride + j0,
                             cphi + r * ph_stride + j0, ph_plane, nw, wave, eta,
                             ox, oy, oz, tx, ty, tz);
                px_ = ox, py_ = oy, pz_ = oz;
            } else {
                split3(n, t + r * ray_stride + 3 * j0, tx, ty, tz);
                px_ = sx, py_ = sy, pz_ = sz;
            }
            for (int64_t k = 0; k < ntags; k++) {
                const int64_t *b = boxes + 4 * k;
                if (r < b[1] || r > b[3] + 1)
                    continue;
                /* this tag's corners within the block: [a, e) of the block */
                int64_t a = b[0] - j0, e = b[2] + 2 - j0;
                if (a < 0) a = 0;
                if (e > n) e = n;
                if (a >= e)
                    continue;
                int64_t slot = (r - b[1]) & 1, off = j0 + a - b[0];
                double *col = dbl + k * doubles + slot * 2 * per, *row = col + per;
                uint8_t *ok = u8 + k * bytes + slot * per;
                trace_block(e - a, px_ + a, py_ + a, pz_ + a, tx + a, ty + a, tz + a, dx + a,
                            dy + a, dz + a, geo + 19 * k, air[k], col + off, row + off, ok + off);
            }
        }
        for (int64_t k = 0; k < ntags; k++) { /* the cells, then the row of pixels above */
            const int64_t *b = boxes + 4 * k;
            if (r < b[1] || r > b[3] + 1)
                continue;
            const int64_t nc = b[2] - b[0] + 2, slot = (r - b[1]) & 1;
            double *col = dbl + k * doubles + slot * 2 * per, *row = col + per;
            int32_t *cc = i32 + k * ints + slot * 2 * per, *rc = cc + per;
            cells_of(nc, col, (double)tw, cc);
            cells_of(nc, row, (double)tw, rc);
            if (r == b[1])
                continue;
            const int64_t up = slot ^ 1;
            double *col0 = dbl + k * doubles + up * 2 * per, *row0 = col0 + per;
            int32_t *cc0 = i32 + k * ints + up * 2 * per, *rc0 = cc0 + per;
            composite_row(nc - 1, col0, row0, u8 + k * bytes + up * per, cc0, rc0, col, row,
                          u8 + k * bytes + slot * per, cc, rc, levels + k * (tw + 2) * (tw + 2),
                          tw, &sm, img + (r - 1) * img_stride + b[0]);
        }
    }
    free(mem);
    return 0;
}

/* ---- exposure ----------------------------------------------------------------------- */

/* An h x w block of radiance (float32, row stride rs) to 8-bit DN (row stride os)
 * (render.py, Renderer._to_dn), in float32 as NumPy computes it:
 *   dn = rad * gain;  with noise: dn += sqrt(r2 + shot * max(dn, 0)) * lut[idx]
 *   (shot = 0: sqrt(r2)); then dn + 0.5 clipped to [0, 255] and truncated.
 * idx: the frame's 16 noise bits per pixel (uint16, row stride is), or NULL: no noise. */
CLONES
void mp_expose(int64_t h, int64_t w, const float *rad, int64_t rs, const uint16_t *idx,
               int64_t is, const float *lut, float gain, float r2, float shot, uint8_t *out,
               int64_t os)
{
    for (int64_t i = 0; i < h; i++) {
        const float *ra = rad + i * rs;
        uint8_t *o = out + i * os;
        const uint16_t *ix = idx ? idx + i * is : NULL;
        for (int64_t j = 0; j < w; j++) {
            float dn = ra[j] * gain;
            if (ix) {
                float var = r2;
                if (shot > 0)
                    var = shot * (dn < 0 ? 0.0f : dn) + r2;
                dn += sqrtf(var) * lut[ix[j]];
            }
            dn += 0.5f;
            dn = dn < 0.0f ? 0.0f : (dn > 255.0f ? 255.0f : dn);
            o[j] = (uint8_t)dn;
        }
    }
}
