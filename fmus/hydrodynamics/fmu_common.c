/* Shared FMU logic: parameter/input/output access, life cycle, model exchange, FMU state. */
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
    for (int i = 0; i < 6; i++) s->out[23 + i] = s->m.wrench[i];
    s->out[29] = s->m.mesh_volume;
    for (int i = 0; i < 3; i++) s->out[30 + i] = s->m.mesh_rb[i];
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
    c->s.stale = 0;
    /* Model exchange continues in event mode, co-simulation in step mode. */
    c->s.mode = c->s.model_exchange ? MODE_EVENT : MODE_STEP;
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
    int me = c->s.model_exchange;
    char name[sizeof c->name];
    memcpy(name, c->name, sizeof name);
    hydro_instance_init(c, name, log, ctx);
    c->logging_on = on;
    c->s.model_exchange = me;
    return HYDRO_OK;
}

/* ---- model exchange ------------------------------------------------------ */

static void refresh_initial_outputs(HydroInstance *c);

static int me_only(HydroInstance *c, const char *fn)
{
    if (c->s.model_exchange) return 0;
    hydro_log(c, HYDRO_ERROR, "%s: this instance was instantiated for co-simulation", fn);
    return 1;
}

static int check_size(HydroInstance *c, const char *fn, size_t n, size_t expected)
{
    if (n == expected) return 0;
    hydro_log(c, HYDRO_ERROR, "%s: got %zu values, the FMU has %zu", fn, n, expected);
    return 1;
}

/* Derivatives and outputs from the current state, inputs and parameters, when
 * something changed since they were last computed. */
static int me_refresh(HydroInstance *c)
{
    const int mode = c->s.mode;
    if (!c->s.model_exchange || (mode != MODE_EVENT && mode != MODE_CONTINUOUS && mode != MODE_TERMINATED))
        return HYDRO_OK;
    if (c->s.dirty) {            /* tunable parameters set in event mode */
        int st = apply_parameters(c, 0);
        if (st != HYDRO_OK) return st;
    } else if (c->s.stale) {
        hydro_update_accelerations(&c->s.m, &c->s.in);
        compute_outputs(&c->s);
    }
    c->s.stale = 0;
    return HYDRO_OK;
}

int hydro_me_set_time(HydroInstance *c, double t)
{
    if (me_only(c, "setTime")) return HYDRO_ERROR;
    if (c->s.mode != MODE_EVENT && c->s.mode != MODE_CONTINUOUS)
        return hydro_log(c, HYDRO_ERROR, "setTime called outside event and continuous-time mode");
    c->s.time = t; /* the model is autonomous: derivatives do not depend on t */
    return HYDRO_OK;
}

int hydro_me_set_states(HydroInstance *c, const double *x, size_t nx)
{
    if (me_only(c, "setContinuousStates") || check_size(c, "setContinuousStates", nx, HYDRO_NX))
        return HYDRO_ERROR;
    if (c->s.mode != MODE_EVENT && c->s.mode != MODE_CONTINUOUS)
        return hydro_log(c, HYDRO_ERROR, "setContinuousStates called outside event and continuous-time mode");
    for (size_t i = 0; i < nx; i++)
        if (!isfinite(x[i]))
            return hydro_log(c, HYDRO_ERROR, "setContinuousStates: state %zu is not finite at t = %g", i, c->s.time);
    memcpy(c->s.m.x, x, sizeof c->s.m.x);
    c->s.stale = 1;
    return HYDRO_OK;
}

int hydro_me_get_states(HydroInstance *c, double *x, size_t nx)
{
    if (me_only(c, "getContinuousStates") || check_size(c, "getContinuousStates", nx, HYDRO_NX))
        return HYDRO_ERROR;
    refresh_initial_outputs(c); /* before exitInitializationMode: from the init_* parameters */
    memcpy(x, c->s.m.x, sizeof c->s.m.x);
    return HYDRO_OK;
}

int hydro_me_get_derivatives(HydroInstance *c, double *dx, size_t nx)
{
    if (me_only(c, "getDerivatives") || check_size(c, "getDerivatives", nx, HYDRO_NX))
        return HYDRO_ERROR;
    refresh_initial_outputs(c);
    int st = me_refresh(c);
    if (st != HYDRO_OK) return st;
    for (size_t i = 0; i < nx; i++)
        if (!isfinite(c->s.m.xdot[i]))
            return hydro_log(c, HYDRO_ERROR, "the state derivative is not finite at t = %g "
                             "(inputs or parameters too large?)", c->s.time);
    memcpy(dx, c->s.m.xdot, sizeof c->s.m.xdot);
    return HYDRO_OK;
}

int hydro_me_get_nominals(HydroInstance *c, double *nominals, size_t nx)
{
    if (me_only(c, "getNominalsOfContinuousStates") ||
        check_size(c, "getNominalsOfContinuousStates", nx, HYDRO_NX))
        return HYDRO_ERROR;
    for (size_t i = 0; i < nx; i++) nominals[i] = 1.0;
    return HYDRO_OK;
}

int hydro_me_get_event_indicators(HydroInstance *c, double *z, size_t nz)
{
    (void)z;
    if (me_only(c, "getEventIndicators") || check_size(c, "getEventIndicators", nz, 0))
        return HYDRO_ERROR;
    return HYDRO_OK;
}

int hydro_me_enter_event_mode(HydroInstance *c)
{
    if (me_only(c, "enterEventMode")) return HYDRO_ERROR;
    if (c->s.mode != MODE_EVENT && c->s.mode != MODE_CONTINUOUS)
        return hydro_log(c, HYDRO_ERROR, "enterEventMode called in the wrong state");
    c->s.mode = MODE_EVENT;
    return HYDRO_OK;
}

/* No discrete states and no events: only apply tunable parameters set in event mode. */
int hydro_me_update_discrete_states(HydroInstance *c)
{
    if (me_only(c, "updateDiscreteStates")) return HYDRO_ERROR;
    if (c->s.mode != MODE_EVENT)
        return hydro_log(c, HYDRO_ERROR, "newDiscreteStates/updateDiscreteStates called outside event mode");
    return me_refresh(c);
}

int hydro_me_enter_continuous_mode(HydroInstance *c)
{
    if (me_only(c, "enterContinuousTimeMode")) return HYDRO_ERROR;
    if (c->s.mode != MODE_EVENT)
        return hydro_log(c, HYDRO_ERROR, "enterContinuousTimeMode called outside event mode");
    int st = me_refresh(c);
    if (st != HYDRO_OK) return st;
    c->s.mode = MODE_CONTINUOUS;
    return HYDRO_OK;
}

/* The integrator owns the continuous state: the FMU does not change it here (FMI
 * allows that only in event mode). The quaternion norm is held by the stabilisation
 * term in the derivative (model.h). */
int hydro_me_completed_step(HydroInstance *c)
{
    if (me_only(c, "completedIntegratorStep")) return HYDRO_ERROR;
    if (c->s.mode != MODE_CONTINUOUS)
        return hydro_log(c, HYDRO_ERROR, "completedIntegratorStep called outside continuous-time mode");
    for (int i = 0; i < HYDRO_NX; i++)
        if (!isfinite(c->s.m.x[i]))
            return hydro_log(c, HYDRO_ERROR, "the state became non-finite at t = %g", c->s.time);
    return HYDRO_OK;
}

/* ---- variable access ----------------------------------------------------- */

static int settable(HydroInstance *c, unsigned vr, int kind)
{
    const int mode = c->s.mode;
    switch (kind) {
    case HYDRO_INPUT:
        c->s.stale = 1;
        return 1;
    case HYDRO_TUNABLE:
    case HYDRO_FIXED:
        if (mode == MODE_INSTANTIATED || mode == MODE_INITIALIZATION) return 1;
        if (kind == HYDRO_TUNABLE && (mode == MODE_STEP || mode == MODE_EVENT)) {
            c->s.dirty = 1; /* validated and applied at the next doStep / evaluation */
            return 1;
        }
        if (kind == HYDRO_TUNABLE && mode == MODE_CONTINUOUS)
            hydro_log(c, HYDRO_ERROR, "tunable parameter %s can only be set in event mode "
                      "(model exchange)", hydro_vr_names[vr]);
        else
            hydro_log(c, HYDRO_ERROR, "parameter %s cannot be set after initialization (fixed)",
                      hydro_vr_names[vr]);
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
    if (kind == HYDRO_OUTPUT || kind == HYDRO_LOCAL) {
        refresh_initial_outputs(c);
        int st = me_refresh(c);
        if (st != HYDRO_OK) return st;
    }
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
    if (st->s.model_exchange != c->s.model_exchange)
        return hydro_log(c, HYDRO_ERROR, "setFMUState: the state was taken from a %s instance",
                         st->s.model_exchange ? "model-exchange" : "co-simulation");
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
