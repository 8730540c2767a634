/* The trivial FMU of trivial.c as FMI 2.0 co-simulation, so that every peer in
 * benchmarks/peers.py (fmpy, libcosim, mosaik through fmpy, moonpool) can load it:
 * 6 Real inputs u0..u5 (value references 1..6), 23 Real outputs y0..y22 (value
 * references 7..29) with y_i = u_(i mod 6); doStep only advances time. Every FMI 2.0
 * function is defined with its standard signature (compiled against the headers that
 * fmpy ships); those a trivial model has no use for return fmi2Error. Built by
 * benchmarks/fmu_step.py's build_trivial(version=2). */
#include <stdlib.h>

#include "fmi2Functions.h"

typedef struct { double time, u[6]; } Trivial;

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                               const fmi2String categories[]) {
    (void)c; (void)on; (void)n; (void)categories;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String resources, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean logging) {
    (void)name; (void)guid; (void)resources; (void)functions; (void)visible; (void)logging;
    if (type != fmi2CoSimulation) return NULL;
    return calloc(1, sizeof(Trivial));
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol,
                               fmi2Real t0, fmi2Boolean stopDef, fmi2Real stop) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    ((Trivial *)c)->time = t0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2Reset(fmi2Component c) {
    Trivial *s = c;
    s->time = 0;
    for (int i = 0; i < 6; i++) s->u[i] = 0;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       fmi2Real v[]) {
    Trivial *s = c;
    for (size_t i = 0; i < n; i++) {
        fmi2ValueReference r = vr[i];
        if (r >= 1 && r <= 6) v[i] = s->u[r - 1];
        else if (r >= 7 && r <= 29) v[i] = s->u[(r - 7) % 6];
        else return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real v[]) {
    Trivial *s = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] < 1 || vr[i] > 6) return fmi2Error;
        s->u[vr[i] - 1] = v[i];
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior) {
    (void)noSetPrior;
    ((Trivial *)c)->time = t + h;
    return fmi2OK;
}

/* No Integer, Boolean or String variables, no state, no derivatives: refused. */
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)c; (void)s;
    return fmi2Error;
}
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
    (void)c; (void)s;
    return fmi2Error;
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)c; (void)s;
    return fmi2Error;
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {
    (void)c; (void)s; (void)n;
    return fmi2Error;
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)c; (void)s; (void)b; (void)n;
    return fmi2Error;
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n,
                                   fmi2FMUstate *s) {
    (void)c; (void)b; (void)n; (void)s;
    return fmi2Error;
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                        size_t nu, const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[]) {
    (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;
    return fmi2Error;
}
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t n, const fmi2Integer order[],
                                       const fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)order; (void)v;
    return fmi2Error;
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t n, const fmi2Integer order[], fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)order; (void)v;
    return fmi2Error;
}
fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
