/*
 * State and logic shared by the FMI 2.0 and FMI 3.0 wrappers (fmi2.c, fmi3.c).
 * No FMI types here: statuses use the common FMI numbering (0 OK ... 4 Fatal).
 */
#ifndef MOONPOOL_HYDRO_FMU_COMMON_H
#define MOONPOOL_HYDRO_FMU_COMMON_H

#include "model.h"

#define HYDRO_MAX_OUTPUTS 32

enum { HYDRO_OK = 0, HYDRO_WARNING = 1, HYDRO_DISCARD = 2, HYDRO_ERROR = 3, HYDRO_FATAL = 4 };

/* Variable classes (set by the generated accessors in variables.h). */
enum { HYDRO_INDEPENDENT, HYDRO_FIXED, HYDRO_TUNABLE, HYDRO_INPUT, HYDRO_OUTPUT };

/* Life-cycle modes. */
enum { MODE_INSTANTIATED, MODE_INITIALIZATION, MODE_STEP, MODE_TERMINATED, MODE_ERROR };

/* Everything an FMU state (get/set/serialize) must capture. Plain data. */
typedef struct {
    HydroParams p;          /* parameters as set by the importer */
    HydroInputs in;         /* current inputs */
    HydroModel m;           /* model with the parameters in use and the state */
    double out[HYDRO_MAX_OUTPUTS];
    double time;
    int mode;
    int dirty;              /* a tunable parameter changed since the last step */
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
