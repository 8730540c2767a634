/* Shared FMU logic: parameter/input/output access, life cycle, FMU state. */
#include "fmu_common.h"
#include "variables.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_MAGIC 0x48594452u /* "HYDR" */

const char *hydro_token(void) { return HYDRO_TOKEN; }

/* Start values of all parameters and inputs come from the generated table. */
void hydro_defaults(HydroSnapshot *s) { hydro_vr_defaults(s); }

void hydro_instance_init(HydroInstance *c, const char *name, HydroLogFn log, void *log_ctx)
{
    memset(c, 0, sizeof *c);
    hydro_defaults(&c->s);
    c->s.m.p = c->s.p;
    c->s.mode = MODE_INSTANTIATED;
    c->log = log;
    c->log_ctx = log_ctx;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "hydrodynamics");
}

int hydro_log(HydroInstance *c, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->log && (c->logging_on || status >= HYDRO_WARNING))
        c->log(c->log_ctx, status, status >= HYDRO_ERROR ? "logStatusError" : "logEvents", msg);
    if (status >= HYDRO_ERROR) c->s.mode = MODE_ERROR;
    return status;
}

/* Outputs from the model state (and accelerations already in m.nu_dot). */
static void compute_outputs(HydroSnapshot *s)
{
    double e[3];
    const double *x = s->m.x;
    for (int i = 0; i < 7; i++) s->out[i] = x[i];
    hydro_euler(&s->m, e);
    for (int i = 0; i < 3; i++) s->out[7 + i] = e[i];
    for (int i = 0; i < 6; i++) s->out[10 + i] = x[7 + i];
    for (int i = 0; i < 6; i++) s->out[16 + i] = s->m.nu_dot[i];
    s->out[22] = hydro_density(&s->m.p, x[2]);
}

/* Validate the importer's parameters and build the model from them. */
static int apply_parameters(HydroInstance *c, int reset_state)
{
    char msg[256];
    if (hydro_validate(&c->s.p, msg, sizeof msg) || hydro_prepare(&c->s.m, &c->s.p, msg, sizeof msg))
        return hydro_log(c, HYDRO_ERROR, "%s", msg);
    if (reset_state) hydro_reset(&c->s.m);
    hydro_update_accelerations(&c->s.m, &c->s.in);
    compute_outputs(&c->s);
    c->s.dirty = 0;
    return HYDRO_OK;
}

int hydro_enter_initialization(HydroInstance *c, double start_time)
{
    if (c->s.mode != MODE_INSTANTIATED)
        return hydro_log(c, HYDRO_ERROR, "enterInitializationMode called in the wrong state");
    c->s.time = start_time;
    c->s.mode = MODE_INITIALIZATION;
    return HYDRO_OK;
}

int hydro_exit_initialization(HydroInstance *c)
{
    if (c->s.mode != MODE_INITIALIZATION)
        return hydro_log(c, HYDRO_ERROR, "exitInitializationMode called in the wrong state");
    int st = apply_parameters(c, 1);
    if (st != HYDRO_OK) return st;
    c->s.mode = MODE_STEP;
    return HYDRO_OK;
}

int hydro_do_step(HydroInstance *c, double t, double dt)
{
    if (c->s.mode != MODE_STEP) return hydro_log(c, HYDRO_ERROR, "doStep called outside step mode");
    if (!(dt >= 0) || !isfinite(dt)) return hydro_log(c, HYDRO_ERROR, "invalid communication step size %g", dt);
    if (fabs(t - c->s.time) > 1e-9 * (1.0 + fabs(t)))
        hydro_log(c, HYDRO_WARNING, "doStep at t = %.17g but the FMU is at t = %.17g", t, c->s.time);
    if (c->s.dirty) {
        int st = apply_parameters(c, 0);
        if (st != HYDRO_OK) return st;
    }
    hydro_step(&c->s.m, &c->s.in, dt);
    for (int i = 0; i < HYDRO_NX; i++)
        if (!isfinite(c->s.m.x[i]))
            return hydro_log(c, HYDRO_ERROR, "the state became non-finite at t = %g (inputs or parameters too large?)", t + dt);
    compute_outputs(&c->s);
    c->s.time = t + dt;
    return HYDRO_OK;
}

int hydro_reset_instance(HydroInstance *c)
{
    HydroLogFn log = c->log;
    void *ctx = c->log_ctx;
    int on = c->logging_on;
    char name[sizeof c->name];
    memcpy(name, c->name, sizeof name);
    hydro_instance_init(c, name, log, ctx);
    c->logging_on = on;
    return HYDRO_OK;
}

/* ---- variable access ----------------------------------------------------- */

static int settable(HydroInstance *c, unsigned vr, int kind)
{
    const int mode = c->s.mode;
    switch (kind) {
    case HYDRO_INPUT: return 1;
    case HYDRO_TUNABLE:
    case HYDRO_FIXED:
        if (mode == MODE_INSTANTIATED || mode == MODE_INITIALIZATION) return 1;
        if (kind == HYDRO_TUNABLE && mode == MODE_STEP) {
            c->s.dirty = 1; /* validated and applied at the next doStep */
            return 1;
        }
        hydro_log(c, HYDRO_ERROR, "parameter %s cannot be set after initialization (fixed)", hydro_vr_names[vr]);
        return 0;
    default:
        hydro_log(c, HYDRO_ERROR, "variable %s cannot be set", vr < HYDRO_N_VARIABLES ? hydro_vr_names[vr] : "?");
        return 0;
    }
}

static int unknown(HydroInstance *c, unsigned vr, const char *type)
{
    return hydro_log(c, HYDRO_ERROR, "value reference %u is not a %s variable of this FMU", vr, type);
}

/* In initialization mode, outputs follow the (possibly just set) parameters. */
static void refresh_initial_outputs(HydroInstance *c)
{
    char msg[256];
    if (c->s.mode != MODE_INSTANTIATED && c->s.mode != MODE_INITIALIZATION) return;
    if (hydro_validate(&c->s.p, msg, sizeof msg) || hydro_prepare(&c->s.m, &c->s.p, msg, sizeof msg)) return;
    hydro_reset(&c->s.m);
    hydro_update_accelerations(&c->s.m, &c->s.in);
    compute_outputs(&c->s);
}

int hydro_get_float64(HydroInstance *c, unsigned vr, double *value)
{
    int kind;
    double *p = hydro_vr_float64(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Float64/Real");
    if (kind == HYDRO_OUTPUT) refresh_initial_outputs(c);
    *value = *p;
    return HYDRO_OK;
}

int hydro_set_float64(HydroInstance *c, unsigned vr, double value)
{
    int kind;
    double *p = hydro_vr_float64(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Float64/Real");
    if (!settable(c, vr, kind)) return HYDRO_ERROR;
    *p = value;
    return HYDRO_OK;
}

int hydro_get_int32(HydroInstance *c, unsigned vr, int *value)
{
    int kind;
    int *p = hydro_vr_int32(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Int32/Integer");
    *value = *p;
    return HYDRO_OK;
}

int hydro_set_int32(HydroInstance *c, unsigned vr, int value)
{
    int kind;
    int *p = hydro_vr_int32(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Int32/Integer");
    if (!settable(c, vr, kind)) return HYDRO_ERROR;
    *p = value;
    return HYDRO_OK;
}

int hydro_get_boolean(HydroInstance *c, unsigned vr, int *value)
{
    int kind;
    int *p = hydro_vr_boolean(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Boolean");
    *value = *p;
    return HYDRO_OK;
}

int hydro_set_boolean(HydroInstance *c, unsigned vr, int value)
{
    int kind;
    int *p = hydro_vr_boolean(&c->s, vr, &kind);
    if (!p) return unknown(c, vr, "Boolean");
    if (!settable(c, vr, kind)) return HYDRO_ERROR;
    *p = value ? 1 : 0;
    return HYDRO_OK;
}

/* ---- FMU state ----------------------------------------------------------- */

typedef struct {
    unsigned magic;
    unsigned size;
    HydroSnapshot s;
} HydroState;

void *hydro_state_get(HydroInstance *c, void *reuse)
{
    HydroState *st = reuse ? (HydroState *)reuse : (HydroState *)malloc(sizeof *st);
    if (!st) return NULL;
    st->magic = STATE_MAGIC;
    st->size = (unsigned)sizeof *st;
    st->s = c->s;
    return st;
}

int hydro_state_set(HydroInstance *c, const void *state)
{
    const HydroState *st = (const HydroState *)state;
    if (!st || st->magic != STATE_MAGIC || st->size != sizeof *st)
        return hydro_log(c, HYDRO_ERROR, "setFMUState: not an FMU state of this FMU");
    c->s = st->s;
    return HYDRO_OK;
}

void hydro_state_free(void *state) { free(state); }

size_t hydro_state_size(void) { return sizeof(HydroState); }

int hydro_state_serialize(const void *state, unsigned char *buf, size_t size)
{
    if (!state || size != sizeof(HydroState)) return -1;
    memcpy(buf, state, size);
    return 0;
}

void *hydro_state_deserialize(const unsigned char *buf, size_t size)
{
    if (size != sizeof(HydroState)) return NULL;
    HydroState *st = (HydroState *)malloc(sizeof *st);
    if (!st) return NULL;
    memcpy(st, buf, size);
    if (st->magic != STATE_MAGIC || st->size != sizeof *st) {
        free(st);
        return NULL;
    }
    return st;
}
