/* FMI 2.0 wrapper (co-simulation and model exchange) of the hydrodynamics model (see fmu_common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "fmu_common.h"

typedef struct {
    HydroInstance h;
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
    if (c) hydro_log(H, HYDRO_ERROR, "%s is not supported by this FMU", fn);
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
    hydro_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    if (fmuType != fmi2CoSimulation && fmuType != fmi2ModelExchange) {
        hydro_log(&c->h, HYDRO_ERROR, "unknown fmuType %d", (int)fmuType);
        free(c);
        return NULL;
    }
    c->h.s.model_exchange = fmuType == fmi2ModelExchange;
    if (fmuGUID && strcmp(fmuGUID, hydro_token()) != 0) {
        hydro_log(&c->h, HYDRO_ERROR, "GUID %s does not match this binary (%s)", fmuGUID, hydro_token());
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
    return (fmi2Status)hydro_enter_initialization(H, H->s.time);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) { return (fmi2Status)hydro_exit_initialization(H); }

fmi2Status fmi2Terminate(fmi2Component c)
{
    H->s.mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) { return (fmi2Status)hydro_reset_instance(H); }

/* ---- typed access -------------------------------------------------------- */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    for (size_t i = 0; i < nvr; i++)
        if (hydro_get_float64(H, vr[i], &value[i]) != HYDRO_OK) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_float64(H, vr[i], value[i]) != HYDRO_OK) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    for (size_t i = 0; i < nvr; i++) {
        int v;
        if (hydro_get_int32(H, vr[i], &v) != HYDRO_OK) return fmi2Error;
        value[i] = v;
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_int32(H, vr[i], value[i]) != HYDRO_OK) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    for (size_t i = 0; i < nvr; i++) {
        int v;
        if (hydro_get_boolean(H, vr[i], &v) != HYDRO_OK) return fmi2Error;
        value[i] = v ? fmi2True : fmi2False;
    }
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_boolean(H, vr[i], value[i] ? 1 : 0) != HYDRO_OK) return fmi2Error;
    return fmi2OK;
}

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
    void *st = hydro_state_get(H, *FMUstate);
    if (!st) return (fmi2Status)hydro_log(H, HYDRO_ERROR, "fmi2GetFMUstate: out of memory");
    *FMUstate = st;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    return (fmi2Status)hydro_state_set(H, FMUstate);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    (void)c;
    if (FMUstate) {
        hydro_state_free(*FMUstate);
        *FMUstate = NULL;
    }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    (void)c; (void)FMUstate;
    *size = hydro_state_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    if (hydro_state_serialize(FMUstate, (unsigned char *)serializedState, size))
        return (fmi2Status)hydro_log(H, HYDRO_ERROR, "fmi2SerializeFMUstate: wrong buffer size");
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    void *st = hydro_state_deserialize((const unsigned char *)serializedState, size);
    if (!st) return (fmi2Status)hydro_log(H, HYDRO_ERROR, "fmi2DeSerializeFMUstate: not a state of this FMU");
    if (*FMUstate) hydro_state_free(*FMUstate);
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

fmi2Status fmi2EnterEventMode(fmi2Component c) { return (fmi2Status)hydro_me_enter_event_mode(H); }

/* No discrete states, no time or state events. */
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *fmi2eventInfo)
{
    const int st = hydro_me_update_discrete_states(H);
    if (fmi2eventInfo) {
        fmi2eventInfo->newDiscreteStatesNeeded = fmi2False;
        fmi2eventInfo->terminateSimulation = fmi2False;
        fmi2eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
        fmi2eventInfo->valuesOfContinuousStatesChanged = fmi2False;
        fmi2eventInfo->nextEventTimeDefined = fmi2False;
        fmi2eventInfo->nextEventTime = 0.0;
    }
    return (fmi2Status)st;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return (fmi2Status)hydro_me_enter_continuous_mode(H); }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    const int st = hydro_me_completed_step(H);
    if (enterEventMode) *enterEventMode = fmi2False;
    if (terminateSimulation) *terminateSimulation = fmi2False;
    return (fmi2Status)st;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) { return (fmi2Status)hydro_me_set_time(H, time); }

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    return (fmi2Status)hydro_me_set_states(H, x, nx);
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    return (fmi2Status)hydro_me_get_derivatives(H, derivatives, nx);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    return (fmi2Status)hydro_me_get_event_indicators(H, eventIndicators, ni);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    return (fmi2Status)hydro_me_get_states(H, x, nx);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    return (fmi2Status)hydro_me_get_nominals(H, x_nominal, nx);
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
    return (fmi2Status)hydro_do_step(H, currentCommunicationPoint, communicationStepSize);
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
    (void)s; (void)value;
    return unsupported(c, "fmi2GetBooleanStatus");
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s; (void)value;
    return unsupported(c, "fmi2GetStringStatus");
}
