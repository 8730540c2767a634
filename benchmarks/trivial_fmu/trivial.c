/* A trivial FMI 3.0 co-simulation FMU for benchmarks/fmu_step.py: 6 Float64 inputs
 * u0..u5 (value references 1..6), 23 Float64 outputs y0..y22 (value references
 * 7..29) with y_i = u_(i mod 6); doStep only advances time. It measures what hosting
 * an FMU costs when the FMU itself costs nothing. Built by the benchmark with the
 * machine's C compiler; the FMI functions it does not implement are stubs that the
 * benchmark appends (never called). */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct { double time, u[6]; } Trivial;

void *fmi3InstantiateCoSimulation(const char *n, const char *token, const char *res,
                                  bool visible, bool logging, bool eventMode, bool early,
                                  const unsigned *req, size_t nreq, void *env,
                                  void *logger, void *intermediate) {
    return calloc(1, sizeof(Trivial));
}
void fmi3FreeInstance(void *c) { free(c); }
int fmi3EnterInitializationMode(void *c, bool tolDef, double tol, double t0, bool stopDef,
                                double stop) { ((Trivial *)c)->time = t0; return 0; }
int fmi3ExitInitializationMode(void *c) { return 0; }
int fmi3Terminate(void *c) { return 0; }
int fmi3Reset(void *c) { return 0; }
int fmi3SetDebugLogging(void *c, bool on, size_t n, const char *cats[]) { return 0; }
int fmi3SetFloat64(void *c, const unsigned *vr, size_t nvr, const double *v, size_t nv) {
    Trivial *s = c;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] < 1 || vr[i] > 6) return 3;
        s->u[vr[i] - 1] = v[i];
    }
    return 0;
}
int fmi3GetFloat64(void *c, const unsigned *vr, size_t nvr, double *v, size_t nv) {
    Trivial *s = c;
    for (size_t i = 0; i < nvr; i++) {
        unsigned r = vr[i];
        if (r == 0) v[i] = s->time;
        else if (r <= 6) v[i] = s->u[r - 1];
        else if (r <= 29) v[i] = s->u[(r - 7) % 6];
        else return 3;
    }
    return 0;
}
int fmi3DoStep(void *c, double t, double h, bool noSetPrior, bool *eventNeeded,
               bool *terminate, bool *early, double *last) {
    Trivial *s = c;
    s->time = t + h;
    *eventNeeded = false; *terminate = false; *early = false; *last = s->time;
    return 0;
}
