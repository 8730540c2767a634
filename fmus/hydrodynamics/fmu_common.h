/*
 * State and logic shared by the FMI 2.0 and FMI 3.0 wrappers (fmi2.c, fmi3.c), for
 * co-simulation and model exchange.
 * No FMI types here: statuses use the common FMI numbering (0 OK ... 4 Fatal).
 */
#ifndef MOONPOOL_HYDRO_FMU_COMMON_H
#define MOONPOOL_HYDRO_FMU_COMMON_H

#include "model.h"

#define HYDRO_MAX_OUTPUTS 40

enum { HYDRO_OK = 0, HYDRO_WARNING = 1, HYDRO_DISCARD = 2, HYDRO_ERROR = 3, HYDRO_FATAL = 4 };

/* Variable classes (set by the generated accessors in variables.h). */
enum { HYDRO_INDEPENDENT, HYDRO_FIXED, HYDRO_TUNABLE, HYDRO_INPUT, HYDRO_OUTPUT, HYDRO_LOCAL };

/* Life-cycle modes. MODE_STEP is co-simulation's step mode; MODE_EVENT and
 * MODE_CONTINUOUS are model exchange's event and continuous-time modes. */
enum { MODE_INSTANTIATED, MODE_INITIALIZATION, MODE_STEP, MODE_TERMINATED, MODE_ERROR,
       MODE_EVENT, MODE_CONTINUOUS };

/* Everything an FMU state (get/set/serialize) must capture. Plain data. */
typedef struct {
    HydroParams p;          /* parameters as set by the importer */
    HydroInputs in;         /* current inputs */
    HydroModel m;           /* model with the parameters in use and the state */
    double out[HYDRO_MAX_OUTPUTS];
    double time;
    int mode;
    int dirty;              /* a tunable parameter changed since the last step */
    int model_exchange;     /* 1: instantiated for model exchange, 0: co-simulation */
    int stale;              /* model exchange: state or inputs changed since m.xdot/out */
} HydroSnapshot;

typedef void (*HydroLogFn)(void *instance, int status, const char *category, const char *message);

typedef struct {
    HydroSnapshot s;
    HydroLogFn log;
    void *log_ctx;          /* passed to log */
    int logging_on;
    char name[128];
} HydroInstance;

void hydro_instance_init(HydroInstance *c, const char *name, HydroLogFn log, void *log_ctx);
void hydro_defaults(HydroSnapshot *s);
int hydro_log(HydroInstance *c, int status, const char *fmt, ...);

int hydro_enter_initialization(HydroInstance *c, double start_time);
int hydro_exit_initialization(HydroInstance *c);
int hydro_do_step(HydroInstance *c, double t, double dt);
int hydro_reset_instance(HydroInstance *c);

/* Model exchange. The continuous state is HydroModel.x (HYDRO_NX values, order
 * n e d qw qx qy qz u v w p q r); derivatives and outputs are computed lazily from
 * the state, time and inputs the importer set. No event indicators, no events. */
int hydro_me_set_time(HydroInstance *c, double t);
int hydro_me_set_states(HydroInstance *c, const double *x, size_t nx);
int hydro_me_get_states(HydroInstance *c, double *x, size_t nx);
int hydro_me_get_derivatives(HydroInstance *c, double *dx, size_t nx);
int hydro_me_get_nominals(HydroInstance *c, double *nominals, size_t nx);
int hydro_me_get_event_indicators(HydroInstance *c, double *z, size_t nz);
int hydro_me_enter_event_mode(HydroInstance *c);
int hydro_me_update_discrete_states(HydroInstance *c);
int hydro_me_enter_continuous_mode(HydroInstance *c);
int hydro_me_completed_step(HydroInstance *c);

int hydro_get_float64(HydroInstance *c, unsigned vr, double *value);
int hydro_set_float64(HydroInstance *c, unsigned vr, double value);
int hydro_get_int32(HydroInstance *c, unsigned vr, int *value);
int hydro_set_int32(HydroInstance *c, unsigned vr, int value);
int hydro_get_boolean(HydroInstance *c, unsigned vr, int *value);
int hydro_set_boolean(HydroInstance *c, unsigned vr, int value);

/* FMU state: a heap copy of the snapshot. */
void *hydro_state_get(HydroInstance *c, void *reuse);
int hydro_state_set(HydroInstance *c, const void *state);
void hydro_state_free(void *state);
size_t hydro_state_size(void);
int hydro_state_serialize(const void *state, unsigned char *buf, size_t size);
void *hydro_state_deserialize(const unsigned char *buf, size_t size);

const char *hydro_token(void);

#endif
