/*
 * moonpool's test FMUs: a tiny runtime shared by every test model (bouncing ball,
 * stair, feedthrough, Robertson, arrays) and by the FMI 2.0 / 3.0 wrappers
 * (fmi2.c, fmi3.c), co-simulation and model exchange.
 *
 * Call order (importer -> wrapper -> here):
 *   instantiate          tf_instance_init: start values (tf_model_start, generated)
 *   [set start values]   tf_set_* (any variable but outputs)
 *   enter/exit init      tf_enter_initialization / tf_exit_initialization (tf_model_init)
 *   model exchange:      set time / states, get derivatives / event indicators,
 *                        event mode -> tf_update_discrete (tf_model_event) -> continuous
 *   co-simulation:       tf_do_step: fixed RK4 sub-steps on the grid t0 + n tf_h
 *                        (so the result does not depend on the last bits of the
 *                        importer's t and h), time events hit exactly, state events
 *                        located by bisection (to 1e-13 s), then on to the grid point
 *
 * Every value lives in one of four arrays of TfSnapshot, at an offset per variable
 * (V_<name> in the generated <model>_vars.h; an FMI 3 array occupies dim slots).
 * Statuses use the common FMI numbering (0 OK ... 4 Fatal).
 */
#ifndef MOONPOOL_TF_COMMON_H
#define MOONPOOL_TF_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define TF_MAXV 96
#define TF_MAXX 8
#define TF_MAXZ 8

enum { TF_OK = 0, TF_WARNING = 1, TF_DISCARD = 2, TF_ERROR = 3, TF_FATAL = 4 };
enum { MODE_INSTANTIATED, MODE_INITIALIZATION, MODE_STEP, MODE_TERMINATED, MODE_ERROR,
       MODE_EVENT, MODE_CONTINUOUS };
/* storage of a variable: which array of TfSnapshot */
enum { TF_R, TF_I, TF_U, TF_B };
/* variable classes */
enum { TF_INDEPENDENT, TF_PARAM_FIXED, TF_PARAM_TUNABLE, TF_INPUT_CONT, TF_INPUT_DISCRETE,
       TF_OUTPUT, TF_LOCAL };

typedef struct {
    double r[TF_MAXV];
    int64_t i[TF_MAXV];
    uint64_t u[TF_MAXV];
    int b[TF_MAXV];
    double time;
    int mode;
    int model_exchange;
    double next_event;     /* next time event, s */
    int next_defined;
    int terminate;         /* the model asks to end the simulation */
    int discard;           /* co-simulation: the model cannot complete the step */
    double t0;             /* start time, s */
    long long n;           /* co-simulation: sub-steps of tf_h done (grid t0 + n tf_h) */
} TfSnapshot;

typedef void (*TfLogFn)(void *ctx, int status, const char *category, const char *message);

typedef struct {
    TfSnapshot s;
    TfLogFn log;
    void *log_ctx;
    int logging_on;
    char name[128];
} TfInstance;

/* variable table (generated, <model>_vars.h) */
typedef struct {
    const char *name;
    int store;   /* TF_R / TF_I / TF_U / TF_B */
    int off;     /* first slot */
    int dim;     /* number of slots (1 for scalars) */
    int cls;     /* TF_PARAM_FIXED, ... */
} TfVar;

extern const TfVar tf_vars[];
extern const int tf_nvars;
extern const int tf_nx, tf_nz;
extern const int tf_state_off[], tf_der_off[];
extern const char *tf_token_str;
extern const double tf_h;   /* co-simulation internal step, s */

/* the model (one .c per test FMU) */
void tf_model_start(TfSnapshot *s);                 /* generated: start values */
void tf_model_init(TfSnapshot *s);                  /* at exitInitializationMode */
void tf_model_derivatives(TfSnapshot *s);           /* r[der_off] from r[state_off] and inputs */
void tf_model_outputs(TfSnapshot *s);               /* algebraic outputs */
void tf_model_indicators(const TfSnapshot *s, double *z);
void tf_model_event(TfSnapshot *s);                 /* discrete update at an event */

void tf_instance_init(TfInstance *c, const char *name, TfLogFn log, void *ctx);
int tf_log(TfInstance *c, int status, const char *fmt, ...);
const char *tf_token(void);
int tf_enter_initialization(TfInstance *c, double t0);
int tf_exit_initialization(TfInstance *c);
int tf_reset_instance(TfInstance *c);
int tf_do_step(TfInstance *c, double t, double h);

/* typed access: vr, index in an array; value as double / int64 / uint64 */
int tf_get_r(TfInstance *c, unsigned vr, double *out, size_t *n, size_t cap);
int tf_set_r(TfInstance *c, unsigned vr, const double *in, size_t *n, size_t avail);
int tf_get_i(TfInstance *c, unsigned vr, int64_t *out, size_t *n, size_t cap);
int tf_set_i(TfInstance *c, unsigned vr, const int64_t *in, size_t *n, size_t avail);
int tf_get_u(TfInstance *c, unsigned vr, uint64_t *out, size_t *n, size_t cap);
int tf_set_u(TfInstance *c, unsigned vr, const uint64_t *in, size_t *n, size_t avail);
int tf_get_b(TfInstance *c, unsigned vr, int *out, size_t *n, size_t cap);
int tf_set_b(TfInstance *c, unsigned vr, const int *in, size_t *n, size_t avail);

/* model exchange */
int tf_me_set_time(TfInstance *c, double t);
int tf_me_set_states(TfInstance *c, const double *x, size_t nx);
int tf_me_get_states(TfInstance *c, double *x, size_t nx);
int tf_me_get_derivatives(TfInstance *c, double *dx, size_t nx);
int tf_me_get_nominals(TfInstance *c, double *nominals, size_t nx);
int tf_me_get_event_indicators(TfInstance *c, double *z, size_t nz);
int tf_me_enter_event_mode(TfInstance *c);
int tf_me_update_discrete_states(TfInstance *c);
int tf_me_enter_continuous_mode(TfInstance *c);

/* FMU state: a heap copy of the snapshot */
void *tf_state_get(TfInstance *c, void *reuse);
int tf_state_set(TfInstance *c, const void *state);
void tf_state_free(void *state);
size_t tf_state_size(void);
int tf_state_serialize(const void *state, unsigned char *buf, size_t size);
void *tf_state_deserialize(const unsigned char *buf, size_t size);

#endif
