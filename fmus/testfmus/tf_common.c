/* The runtime of moonpool's test FMUs (see tf_common.h). */
#include "tf_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_MAGIC 0x54464d55u /* "TFMU" */

typedef struct {
    unsigned magic;
    unsigned size;
    TfSnapshot s;
} TfState;

const char *tf_token(void) { return tf_token_str; }

void tf_instance_init(TfInstance *c, const char *name, TfLogFn log, void *ctx)
{
    memset(c, 0, sizeof *c);
    tf_model_start(&c->s);
    c->s.mode = MODE_INSTANTIATED;
    c->log = log;
    c->log_ctx = ctx;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "testfmu");
}

int tf_log(TfInstance *c, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->log && (c->logging_on || status >= TF_WARNING))
        c->log(c->log_ctx, status, status >= TF_ERROR ? "logStatusError" : "logEvents", msg);
    if (status >= TF_ERROR) c->s.mode = MODE_ERROR;
    return status;
}

int tf_enter_initialization(TfInstance *c, double t0)
{
    if (c->s.mode != MODE_INSTANTIATED)
        return tf_log(c, TF_ERROR, "enterInitializationMode: illegal call sequence");
    c->s.time = t0;
    c->s.t0 = t0;
    c->s.n = 0;
    c->s.mode = MODE_INITIALIZATION;
    return TF_OK;
}

int tf_exit_initialization(TfInstance *c)
{
    if (c->s.mode != MODE_INITIALIZATION)
        return tf_log(c, TF_ERROR, "exitInitializationMode: illegal call sequence");
    tf_model_init(&c->s);
    tf_model_outputs(&c->s);
    c->s.mode = c->s.model_exchange ? MODE_EVENT : MODE_STEP;
    return TF_OK;
}

int tf_reset_instance(TfInstance *c)
{
    int me = c->s.model_exchange;
    memset(&c->s, 0, sizeof c->s);
    tf_model_start(&c->s);
    c->s.model_exchange = me;
    c->s.mode = MODE_INSTANTIATED;
    return TF_OK;
}

/* ---- typed access -------------------------------------------------------- */

static const TfVar *lookup(TfInstance *c, unsigned vr, int store, const char *what)
{
    if ((int)vr >= tf_nvars || tf_vars[vr].store != store) {
        tf_log(c, TF_ERROR, "%s: no such variable (value reference %u)", what, vr);
        return NULL;
    }
    return &tf_vars[vr];
}

static int settable(TfInstance *c, const TfVar *v)
{
    const int m = c->s.mode;
    const int setup = m == MODE_INSTANTIATED || m == MODE_INITIALIZATION;
    switch (v->cls) {
    case TF_PARAM_FIXED:
        if (setup) return TF_OK;
        break;
    case TF_PARAM_TUNABLE:
    case TF_INPUT_DISCRETE:
        if (setup || m == MODE_STEP || m == MODE_EVENT) return TF_OK;
        return tf_log(c, TF_ERROR, "variable %s can only be set after instantiation, in "
                      "initialization mode or in event mode (illegal call sequence)", v->name);
    case TF_INPUT_CONT:
        if (m != MODE_TERMINATED && m != MODE_ERROR) return TF_OK;
        break;
    default:
        return tf_log(c, TF_ERROR, "variable %s cannot be set (it is not a parameter or input)",
                      v->name);
    }
    return tf_log(c, TF_ERROR, "variable %s cannot be set in this state (illegal call sequence)",
                  v->name);
}

#define ACCESS(NAME, STORE, FIELD, T)                                                           \
    int tf_get_##NAME(TfInstance *c, unsigned vr, T *out, size_t *n, size_t cap)               \
    {                                                                                           \
        const TfVar *v = lookup(c, vr, STORE, "get");                                           \
        if (!v) return TF_ERROR;                                                                \
        if (*n + (size_t)v->dim > cap)                                                          \
            return tf_log(c, TF_ERROR, "get %s: Expected nValues >= %zu but was %zu", v->name, \
                          *n + (size_t)v->dim, cap);                                            \
        if (vr == 0) { out[(*n)++] = (T)c->s.time; return TF_OK; }                             \
        tf_model_outputs(&c->s);                                                                \
        for (int k = 0; k < v->dim; k++) out[(*n)++] = (T)c->s.FIELD[v->off + k];               \
        return TF_OK;                                                                           \
    }                                                                                           \
    int tf_set_##NAME(TfInstance *c, unsigned vr, const T *in, size_t *n, size_t avail)        \
    {                                                                                           \
        const TfVar *v = lookup(c, vr, STORE, "set");                                           \
        if (!v) return TF_ERROR;                                                                \
        int st = settable(c, v);                                                                \
        if (st != TF_OK) return st;                                                             \
        if (*n + (size_t)v->dim > avail)                                                        \
            return tf_log(c, TF_ERROR, "set %s: Expected nValues >= %zu but was %zu", v->name, \
                          *n + (size_t)v->dim, avail);                                          \
        for (int k = 0; k < v->dim; k++) c->s.FIELD[v->off + k] = in[(*n)++];                   \
        return TF_OK;                                                                           \
    }
ACCESS(r, TF_R, r, double)
ACCESS(i, TF_I, i, int64_t)
ACCESS(u, TF_U, u, uint64_t)
ACCESS(b, TF_B, b, int)

/* ---- model exchange ------------------------------------------------------ */

int tf_me_set_time(TfInstance *c, double t) { c->s.time = t; return TF_OK; }

int tf_me_set_states(TfInstance *c, const double *x, size_t nx)
{
    if ((int)nx != tf_nx) return tf_log(c, TF_ERROR, "setContinuousStates: nx = %zu, expected %d", nx, tf_nx);
    for (int k = 0; k < tf_nx; k++) c->s.r[tf_state_off[k]] = x[k];
    return TF_OK;
}

int tf_me_get_states(TfInstance *c, double *x, size_t nx)
{
    if ((int)nx != tf_nx) return tf_log(c, TF_ERROR, "getContinuousStates: nx = %zu, expected %d", nx, tf_nx);
    for (int k = 0; k < tf_nx; k++) x[k] = c->s.r[tf_state_off[k]];
    return TF_OK;
}

int tf_me_get_derivatives(TfInstance *c, double *dx, size_t nx)
{
    if ((int)nx != tf_nx) return tf_log(c, TF_ERROR, "getDerivatives: nx = %zu, expected %d", nx, tf_nx);
    tf_model_derivatives(&c->s);
    for (int k = 0; k < tf_nx; k++) dx[k] = c->s.r[tf_der_off[k]];
    return TF_OK;
}

int tf_me_get_nominals(TfInstance *c, double *nominals, size_t nx)
{
    (void)c;
    for (size_t k = 0; k < nx; k++) nominals[k] = 1.0;
    return TF_OK;
}

int tf_me_get_event_indicators(TfInstance *c, double *z, size_t nz)
{
    if ((int)nz != tf_nz) return tf_log(c, TF_ERROR, "getEventIndicators: nz = %zu, expected %d", nz, tf_nz);
    if (nz) tf_model_indicators(&c->s, z);
    return TF_OK;
}

int tf_me_enter_event_mode(TfInstance *c)
{
    if (c->s.mode != MODE_CONTINUOUS && c->s.mode != MODE_EVENT)
        return tf_log(c, TF_ERROR, "enterEventMode: illegal call sequence");
    c->s.mode = MODE_EVENT;
    return TF_OK;
}

int tf_me_update_discrete_states(TfInstance *c)
{
    if (c->s.mode != MODE_EVENT)
        return tf_log(c, TF_ERROR, "updateDiscreteStates: illegal call sequence (not in event mode)");
    tf_model_event(&c->s);
    tf_model_outputs(&c->s);
    return TF_OK;
}

int tf_me_enter_continuous_mode(TfInstance *c)
{
    if (c->s.mode != MODE_EVENT)
        return tf_log(c, TF_ERROR, "enterContinuousTimeMode: illegal call sequence");
    c->s.mode = MODE_CONTINUOUS;
    return TF_OK;
}

/* ---- co-simulation: RK4 sub-steps with events ----------------------------- */

static void rk4(TfSnapshot *s, const double *x0, double t0, double h)
{
    double k[4][TF_MAXX];
    const double a[4] = {0.0, 0.5, 0.5, 1.0};
    for (int st = 0; st < 4; st++) {
        for (int j = 0; j < tf_nx; j++)
            s->r[tf_state_off[j]] = x0[j] + (st ? a[st] * h * k[st - 1][j] : 0.0);
        s->time = t0 + a[st] * h;
        tf_model_derivatives(s);
        for (int j = 0; j < tf_nx; j++) k[st][j] = s->r[tf_der_off[j]];
    }
    for (int j = 0; j < tf_nx; j++)
        s->r[tf_state_off[j]] = x0[j] + h / 6.0 * (k[0][j] + 2.0 * k[1][j] + 2.0 * k[2][j] + k[3][j]);
    s->time = t0 + h;
}

static int crossed(const double *z0, const double *z1)
{
    for (int j = 0; j < tf_nz; j++)
        if ((z0[j] > 0) != (z1[j] > 0)) return 1;
    return 0;
}

/* Integrate from s->time to `target` (> s->time): one RK4 step, cut at a state event
 * (bisection); handles the event (time event if `time_event` and the target is reached).
 * Returns 1 if the target was reached. */
static int advance(TfSnapshot *s, double target, int time_event)
{
    const double dt = target - s->time;
    int event = time_event, reached = 1;
    if (tf_nx) {
        double x0[TF_MAXX], z0[TF_MAXZ], z1[TF_MAXZ];
        const double t0 = s->time;
        for (int j = 0; j < tf_nx; j++) x0[j] = s->r[tf_state_off[j]];
        if (tf_nz) tf_model_indicators(s, z0);
        rk4(s, x0, t0, dt);
        if (tf_nz) {
            tf_model_indicators(s, z1);
            if (crossed(z0, z1)) { /* locate the state event by bisection */
                double lo = 0.0, hi = dt;
                while (hi - lo > 1e-13) {
                    const double mid = 0.5 * (lo + hi);
                    rk4(s, x0, t0, mid);
                    tf_model_indicators(s, z1);
                    if (crossed(z0, z1)) hi = mid; else lo = mid;
                }
                if (hi < dt) {
                    rk4(s, x0, t0, hi);
                    reached = 0;
                    event = 1;
                } else {
                    s->time = target;
                    event = 1;
                }
            }
        }
    }
    if (reached) s->time = target;
    if (event) tf_model_event(s);
    return reached;
}

int tf_do_step(TfInstance *c, double t, double h)
{
    TfSnapshot *s = &c->s;
    if (s->mode != MODE_STEP) return tf_log(c, TF_ERROR, "doStep: illegal call sequence");
    if (fabs(t - s->time) > 1e-9 * fmax(1.0, fabs(t)))
        return tf_log(c, TF_ERROR, "doStep: communication point %.17g is not the FMU's time %.17g",
                      t, s->time);
    const double tend = t + h;
    const long long n_end = llround((tend - s->t0) / tf_h);
    const int on_grid = fabs(s->t0 + (double)n_end * tf_h - tend) <= 1e-9 * fmax(1.0, fabs(tend));
    const double eps = 1e-12 * fmax(1.0, fabs(tend));
    while (!s->terminate) {
        /* the next grid point, or tend when the step is not a multiple of tf_h */
        double grid = s->t0 + (double)(s->n + 1) * tf_h;
        int is_grid = 1;
        if (s->n + 1 > n_end || (!on_grid && grid > tend - eps)) {
            if (on_grid || s->time >= tend - eps) break;
            grid = tend;
            is_grid = 0;
        }
        double target = grid;
        int time_event = 0;
        if (s->next_defined && s->next_event <= grid + eps) {
            time_event = 1;
            if (s->next_event < grid - eps) target = s->next_event;
        }
        if (target <= s->time) { /* an event due now */
            tf_model_event(s);
            continue;
        }
        if (advance(s, target, time_event) && target == grid && is_grid) s->n += 1;
        if (s->discard)
            return tf_log(c, TF_DISCARD, "doStep: the model cannot go on past t = %g s", s->time);
    }
    if (!s->terminate) s->time = on_grid ? s->t0 + (double)s->n * tf_h : tend;
    tf_model_outputs(s);
    return TF_OK;
}

/* ---- FMU state ----------------------------------------------------------- */

void *tf_state_get(TfInstance *c, void *reuse)
{
    TfState *st = reuse ? (TfState *)reuse : (TfState *)malloc(sizeof *st);
    if (!st) return NULL;
    st->magic = STATE_MAGIC;
    st->size = (unsigned)sizeof *st;
    st->s = c->s;
    return st;
}

int tf_state_set(TfInstance *c, const void *state)
{
    const TfState *st = (const TfState *)state;
    if (!st || st->magic != STATE_MAGIC || st->size != sizeof *st)
        return tf_log(c, TF_ERROR, "setFMUState: not an FMU state of this FMU");
    c->s = st->s;
    return TF_OK;
}

void tf_state_free(void *state) { free(state); }

size_t tf_state_size(void) { return sizeof(TfState); }

int tf_state_serialize(const void *state, unsigned char *buf, size_t size)
{
    if (!state || size != sizeof(TfState)) return -1;
    memcpy(buf, state, size);
    return 0;
}

void *tf_state_deserialize(const unsigned char *buf, size_t size)
{
    if (size != sizeof(TfState)) return NULL;
    TfState *st = (TfState *)malloc(sizeof *st);
    if (!st) return NULL;
    memcpy(st, buf, size);
    if (st->magic != STATE_MAGIC || st->size != sizeof *st) {
        free(st);
        return NULL;
    }
    return st;
}
