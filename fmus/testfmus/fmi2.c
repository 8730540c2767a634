/* FMI 2.0 wrapper (co-simulation and model exchange) of moonpool's test FMUs (see tf_common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "tf_common.h"

typedef struct {
    TfInstance h;
    fmi2CallbackFunctions cb;
} Fmi2Instance;

#define INST ((Fmi2Instance *)c)
#define H (&INST->h)

/* The message is passed already formatted, with '%' doubled, as the format
 * argument: importers that format it and importers that print it both show it. */
static void log_adapter(void *ctx, int status, const char *category, const char *message)
{
    Fmi2Instance *c = (Fmi2Instance *)ctx;
    char escaped[1024];
    size_t j = 0;
    for (size_t i = 0; message[i] && j + 2 < sizeof escaped; i++) {
        if (message[i] == '%') escaped[j++] = '%';
        escaped[j++] = message[i];
    }
    escaped[j] = '\0';
    if (c->cb.logger)
        c->cb.logger(c->cb.componentEnvironment, c->h.name, (fmi2Status)status, category, escaped);
}

static fmi2Status unsupported(fmi2Component c, const char *fn)
{
    if (c) tf_log(H, TF_ERROR, "%s is not supported by this FMU", fn);
    return fmi2Error;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    (void)nCategories; (void)categories;
    H->logging_on = loggingOn ? 1 : 0;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    (void)fmuResourceLocation; (void)visible;
    Fmi2Instance *c = (Fmi2Instance *)calloc(1, sizeof *c);
    if (!c) return NULL;
    if (functions) c->cb = *functions;
    tf_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    if (fmuType != fmi2CoSimulation && fmuType != fmi2ModelExchange) {
        tf_log(&c->h, TF_ERROR, "unknown fmuType %d", (int)fmuType);
        free(c);
        return NULL;
    }
    c->h.s.model_exchange = fmuType == fmi2ModelExchange;
    if (fmuGUID && strcmp(fmuGUID, tf_token()) != 0) {
        tf_log(&c->h, TF_ERROR, "GUID %s does not match this binary (%s)", fmuGUID, tf_token());
        free(c);
        return NULL;
    }
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    H->s.time = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    return (fmi2Status)tf_enter_initialization(H, H->s.time);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) { return (fmi2Status)tf_exit_initialization(H); }

fmi2Status fmi2Terminate(fmi2Component c)
{
    H->s.mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) { return (fmi2Status)tf_reset_instance(H); }

/* ---- typed access -------------------------------------------------------- */

#define ACCESS2(GET, SET, T, KIND, CT)                                                          \
    fmi2Status GET(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, T value[])      \
    {                                                                                           \
        size_t n = 0;                                                                           \
        for (size_t i = 0; i < nvr; i++) {                                                      \
            CT v[1];                                                                            \
            size_t k = 0;                                                                       \
            if (tf_get_##KIND(H, vr[i], v, &k, 1) != TF_OK) return fmi2Error;                  \
            value[n++] = (T)v[0];                                                               \
        }                                                                                       \
        return fmi2OK;                                                                          \
    }                                                                                           \
    fmi2Status SET(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const T value[])\
    {                                                                                           \
        for (size_t i = 0; i < nvr; i++) {                                                      \
            CT v[1] = {(CT)value[i]};                                                           \
            size_t k = 0;                                                                       \
            int st = tf_set_##KIND(H, vr[i], v, &k, 1);                                         \
            if (st != TF_OK) return (fmi2Status)st;                                             \
        }                                                                                       \
        return fmi2OK;                                                                          \
    }
ACCESS2(fmi2GetReal, fmi2SetReal, fmi2Real, r, double)
ACCESS2(fmi2GetInteger, fmi2SetInteger, fmi2Integer, i, int64_t)
ACCESS2(fmi2GetBoolean, fmi2SetBoolean, fmi2Boolean, b, int)

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    (void)vr; (void)value;
    return nvr == 0 ? fmi2OK : unsupported(c, "fmi2GetString (no String variables)");
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{
    (void)vr; (void)value;
    return nvr == 0 ? fmi2OK : unsupported(c, "fmi2SetString (no String variables)");
}

/* ---- FMU state ----------------------------------------------------------- */

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    void *st = tf_state_get(H, *FMUstate);
    if (!st) return (fmi2Status)tf_log(H, TF_ERROR, "fmi2GetFMUstate: out of memory");
    *FMUstate = st;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    return (fmi2Status)tf_state_set(H, FMUstate);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    (void)c;
    if (FMUstate) {
        tf_state_free(*FMUstate);
        *FMUstate = NULL;
    }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    (void)c; (void)FMUstate;
    *size = tf_state_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    if (tf_state_serialize(FMUstate, (unsigned char *)serializedState, size))
        return (fmi2Status)tf_log(H, TF_ERROR, "fmi2SerializeFMUstate: wrong buffer size");
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    void *st = tf_state_deserialize((const unsigned char *)serializedState, size);
    if (!st) return (fmi2Status)tf_log(H, TF_ERROR, "fmi2DeSerializeFMUstate: not a state of this FMU");
    if (*FMUstate) tf_state_free(*FMUstate);
    *FMUstate = st;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                        const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    (void)vUnknown_ref; (void)nUnknown; (void)vKnown_ref; (void)nKnown; (void)dvKnown; (void)dvUnknown;
    return unsupported(c, "fmi2GetDirectionalDerivative");
}

/* ---- model exchange ------------------------------------------------------ */

fmi2Status fmi2EnterEventMode(fmi2Component c) { return (fmi2Status)tf_me_enter_event_mode(H); }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *fmi2eventInfo)
{
    const int st = tf_me_update_discrete_states(H);
    if (fmi2eventInfo) {
        fmi2eventInfo->newDiscreteStatesNeeded = fmi2False;
        fmi2eventInfo->terminateSimulation = H->s.terminate ? fmi2True : fmi2False;
        fmi2eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
        fmi2eventInfo->valuesOfContinuousStatesChanged = fmi2True;
        fmi2eventInfo->nextEventTimeDefined = H->s.next_defined ? fmi2True : fmi2False;
        fmi2eventInfo->nextEventTime = H->s.next_event;
    }
    return (fmi2Status)st;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return (fmi2Status)tf_me_enter_continuous_mode(H); }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    (void)c;
    if (enterEventMode) *enterEventMode = fmi2False;
    if (terminateSimulation) *terminateSimulation = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) { return (fmi2Status)tf_me_set_time(H, time); }

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    return (fmi2Status)tf_me_set_states(H, x, nx);
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    return (fmi2Status)tf_me_get_derivatives(H, derivatives, nx);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    return (fmi2Status)tf_me_get_event_indicators(H, eventIndicators, ni);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    return (fmi2Status)tf_me_get_states(H, x, nx);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    return (fmi2Status)tf_me_get_nominals(H, x_nominal, nx);
}

/* ---- co-simulation ------------------------------------------------------- */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)vr; (void)nvr; (void)order; (void)value;
    return unsupported(c, "fmi2SetRealInputDerivatives");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)vr; (void)nvr; (void)order; (void)value;
    return unsupported(c, "fmi2GetRealOutputDerivatives");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentCommunicationPoint)
{
    (void)noSetFMUStatePriorToCurrentCommunicationPoint;
    const int st = tf_do_step(H, currentCommunicationPoint, communicationStepSize);
    if (st == TF_OK && H->s.terminate) {
        tf_log(H, TF_WARNING, "the model asks to terminate the simulation at t = %g s", H->s.time);
        return fmi2Discard;
    }
    return (fmi2Status)st;
}

fmi2Status fmi2CancelStep(fmi2Component c) { return unsupported(c, "fmi2CancelStep"); }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s; (void)value;
    return unsupported(c, "fmi2GetStatus");
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    if (s == fmi2LastSuccessfulTime) {
        *value = H->s.time;
        return fmi2OK;
    }
    return unsupported(c, "fmi2GetRealStatus");
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s; (void)value;
    return unsupported(c, "fmi2GetIntegerStatus");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    if (s == fmi2Terminated) {
        *value = H->s.terminate ? fmi2True : fmi2False;
        return fmi2OK;
    }
    return unsupported(c, "fmi2GetBooleanStatus");
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s; (void)value;
    return unsupported(c, "fmi2GetStringStatus");
}
