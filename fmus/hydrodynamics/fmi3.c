/* FMI 3.0 wrapper (co-simulation and model exchange) of the hydrodynamics model (see fmu_common.h). */
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "fmu_common.h"

typedef struct {
    HydroInstance h;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log_message;
} Fmi3Instance;

#define INST ((Fmi3Instance *)instance)
#define H (&INST->h)

static void log_adapter(void *ctx, int status, const char *category, const char *message)
{
    Fmi3Instance *c = (Fmi3Instance *)ctx;
    if (c->log_message) c->log_message(c->env, (fmi3Status)status, category, message);
}

static fmi3Status unsupported(fmi3Instance instance, const char *fn)
{
    if (instance) hydro_log(H, HYDRO_ERROR, "%s is not supported by this FMU", fn);
    return fmi3Error;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
    (void)nCategories; (void)categories;
    H->logging_on = loggingOn ? 1 : 0;
    return fmi3OK;
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible,
                                         fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
                                         fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate)
{
    (void)resourcePath; (void)visible; (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables; (void)nRequiredIntermediateVariables; (void)intermediateUpdate;
    Fmi3Instance *c = (Fmi3Instance *)calloc(1, sizeof *c);
    if (!c) return NULL;
    c->env = instanceEnvironment;
    c->log_message = logMessage;
    hydro_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    if (instantiationToken && strcmp(instantiationToken, hydro_token()) != 0) {
        hydro_log(&c->h, HYDRO_ERROR, "instantiationToken %s does not match this binary (%s)",
                  instantiationToken, hydro_token());
        free(c);
        return NULL;
    }
    if (eventModeUsed) {
        hydro_log(&c->h, HYDRO_ERROR, "event mode is not supported (hasEventMode=false)");
        free(c);
        return NULL;
    }
    return c;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
    (void)resourcePath; (void)visible;
    Fmi3Instance *c = (Fmi3Instance *)calloc(1, sizeof *c);
    if (!c) return NULL;
    c->env = instanceEnvironment;
    c->log_message = logMessage;
    hydro_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    c->h.s.model_exchange = 1;
    if (instantiationToken && strcmp(instantiationToken, hydro_token()) != 0) {
        hydro_log(&c->h, HYDRO_ERROR, "instantiationToken %s does not match this binary (%s)",
                  instantiationToken, hydro_token());
        free(c);
        return NULL;
    }
    return c;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible,
                                               fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
    (void)instanceName; (void)instantiationToken; (void)resourcePath; (void)visible; (void)loggingOn;
    (void)clockUpdate; (void)lockPreemption; (void)unlockPreemption;
    if (logMessage) logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                               "this FMU supports co-simulation and model exchange only");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    return (fmi3Status)hydro_enter_initialization(H, startTime);
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    return (fmi3Status)hydro_exit_initialization(H);
}

/* Model exchange only (co-simulation has hasEventMode = false). */
fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    if (!H->s.model_exchange) return unsupported(instance, "fmi3EnterEventMode in co-simulation");
    return (fmi3Status)hydro_me_enter_event_mode(H);
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
    H->s.mode = MODE_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance) { return (fmi3Status)hydro_reset_instance(H); }

/* ---- typed access -------------------------------------------------------- */

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3GetFloat64 on arrays");
    for (size_t i = 0; i < nvr; i++)
        if (hydro_get_float64(H, vr[i], &values[i]) != HYDRO_OK) return fmi3Error;
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3SetFloat64 on arrays");
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_float64(H, vr[i], values[i]) != HYDRO_OK) return fmi3Error;
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Int32 values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3GetInt32 on arrays");
    for (size_t i = 0; i < nvr; i++) {
        int v;
        if (hydro_get_int32(H, vr[i], &v) != HYDRO_OK) return fmi3Error;
        values[i] = (fmi3Int32)v;
    }
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Int32 values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3SetInt32 on arrays");
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_int32(H, vr[i], (int)values[i]) != HYDRO_OK) return fmi3Error;
    return fmi3OK;
}

fmi3Status fmi3GetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Boolean values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3GetBoolean on arrays");
    for (size_t i = 0; i < nvr; i++) {
        int v;
        if (hydro_get_boolean(H, vr[i], &v) != HYDRO_OK) return fmi3Error;
        values[i] = v ? fmi3True : fmi3False;
    }
    return fmi3OK;
}

fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Boolean values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3SetBoolean on arrays");
    for (size_t i = 0; i < nvr; i++)
        if (hydro_set_boolean(H, vr[i], values[i] ? 1 : 0) != HYDRO_OK) return fmi3Error;
    return fmi3OK;
}

/* Types this FMU has no variables of. */
#define NO_VARIABLES(Fn, T, CONST)                                                            \
    fmi3Status Fn(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,            \
                  CONST T values[], size_t nValues)                                            \
    {                                                                                           \
        (void)vr; (void)values; (void)nValues;                                                  \
        return nvr == 0 ? fmi3OK : unsupported(instance, #Fn " (no such variables)");          \
    }
NO_VARIABLES(fmi3GetFloat32, fmi3Float32, )
NO_VARIABLES(fmi3GetInt8, fmi3Int8, )
NO_VARIABLES(fmi3GetUInt8, fmi3UInt8, )
NO_VARIABLES(fmi3GetInt16, fmi3Int16, )
NO_VARIABLES(fmi3GetUInt16, fmi3UInt16, )
NO_VARIABLES(fmi3GetUInt32, fmi3UInt32, )
NO_VARIABLES(fmi3GetInt64, fmi3Int64, )
NO_VARIABLES(fmi3GetUInt64, fmi3UInt64, )
NO_VARIABLES(fmi3GetString, fmi3String, )
NO_VARIABLES(fmi3SetFloat32, fmi3Float32, const)
NO_VARIABLES(fmi3SetInt8, fmi3Int8, const)
NO_VARIABLES(fmi3SetUInt8, fmi3UInt8, const)
NO_VARIABLES(fmi3SetInt16, fmi3Int16, const)
NO_VARIABLES(fmi3SetUInt16, fmi3UInt16, const)
NO_VARIABLES(fmi3SetUInt32, fmi3UInt32, const)
NO_VARIABLES(fmi3SetInt64, fmi3Int64, const)
NO_VARIABLES(fmi3SetUInt64, fmi3UInt64, const)
NO_VARIABLES(fmi3SetString, fmi3String, const)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues)
{
    (void)vr; (void)valueSizes; (void)values; (void)nValues;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3GetBinary (no such variables)");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const size_t valueSizes[], const fmi3Binary values[], size_t nValues)
{
    (void)vr; (void)valueSizes; (void)values; (void)nValues;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3SetBinary (no such variables)");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3Clock values[])
{
    (void)vr; (void)values;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3GetClock");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3Clock values[])
{
    (void)vr; (void)values;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3SetClock");
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
    (void)valueReference; (void)nDependencies;
    return unsupported(instance, "fmi3GetNumberOfVariableDependencies");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[], fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[], fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
    (void)dependent; (void)elementIndicesOfDependent; (void)independents;
    (void)elementIndicesOfIndependents; (void)dependencyKinds; (void)nDependencies;
    return unsupported(instance, "fmi3GetVariableDependencies");
}

/* ---- FMU state ----------------------------------------------------------- */

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    void *st = hydro_state_get(H, *FMUState);
    if (!st) return (fmi3Status)hydro_log(H, HYDRO_ERROR, "fmi3GetFMUState: out of memory");
    *FMUState = st;
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
    return (fmi3Status)hydro_state_set(H, FMUState);
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    (void)instance;
    if (FMUState) {
        hydro_state_free(*FMUState);
        *FMUState = NULL;
    }
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size)
{
    (void)instance; (void)FMUState;
    *size = hydro_state_size();
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                 size_t size)
{
    if (hydro_state_serialize(FMUState, serializedState, size))
        return (fmi3Status)hydro_log(H, HYDRO_ERROR, "fmi3SerializeFMUState: wrong buffer size");
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState)
{
    void *st = hydro_state_deserialize(serializedState, size);
    if (!st) return (fmi3Status)hydro_log(H, HYDRO_ERROR, "fmi3DeserializeFMUState: not a state of this FMU");
    if (*FMUState) hydro_state_free(*FMUState);
    *FMUState = st;
    return fmi3OK;
}

/* ---- not provided -------------------------------------------------------- */

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                        const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                        size_t nSensitivity)
{
    (void)unknowns; (void)nUnknowns; (void)knowns; (void)nKnowns; (void)seed; (void)nSeed;
    (void)sensitivity; (void)nSensitivity;
    return unsupported(instance, "fmi3GetDirectionalDerivative");
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                    const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                    size_t nSensitivity)
{
    (void)unknowns; (void)nUnknowns; (void)knowns; (void)nKnowns; (void)seed; (void)nSeed;
    (void)sensitivity; (void)nSensitivity;
    return unsupported(instance, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) { return unsupported(instance, "fmi3EnterConfigurationMode"); }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) { return unsupported(instance, "fmi3ExitConfigurationMode"); }

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[])
{
    (void)vr; (void)nvr; (void)intervals; (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalDecimal");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions; (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalFraction");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               fmi3Float64 shifts[])
{
    (void)vr; (void)nvr; (void)shifts;
    return unsupported(instance, "fmi3GetShiftDecimal");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3GetShiftFraction");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                  const fmi3Float64 intervals[])
{
    (void)vr; (void)nvr; (void)intervals;
    return unsupported(instance, "fmi3SetIntervalDecimal");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                   const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3SetIntervalFraction");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               const fmi3Float64 shifts[])
{
    (void)vr; (void)nvr; (void)shifts;
    return unsupported(instance, "fmi3SetShiftDecimal");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3SetShiftFraction");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) { return unsupported(instance, "fmi3EvaluateDiscreteStates"); }

/* ---- model exchange ------------------------------------------------------ */

/* No discrete states, no time or state events. */
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime)
{
    const int st = hydro_me_update_discrete_states(H);
    if (discreteStatesNeedUpdate) *discreteStatesNeedUpdate = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (nominalsOfContinuousStatesChanged) *nominalsOfContinuousStatesChanged = fmi3False;
    if (valuesOfContinuousStatesChanged) *valuesOfContinuousStatesChanged = fmi3False;
    if (nextEventTimeDefined) *nextEventTimeDefined = fmi3False;
    if (nextEventTime) *nextEventTime = 0.0;
    return (fmi3Status)st;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    return (fmi3Status)hydro_me_enter_continuous_mode(H);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    const int st = hydro_me_completed_step(H);
    if (enterEventMode) *enterEventMode = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    return (fmi3Status)st;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) { return (fmi3Status)hydro_me_set_time(H, time); }

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)hydro_me_set_states(H, x, nx);
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 dx[], size_t nx)
{
    return (fmi3Status)hydro_me_get_derivatives(H, dx, nx);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 ei[], size_t ni)
{
    return (fmi3Status)hydro_me_get_event_indicators(H, ei, ni);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)hydro_me_get_states(H, x, nx);
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[], size_t nx)
{
    return (fmi3Status)hydro_me_get_nominals(H, nominals, nx);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = HYDRO_NX;
    return fmi3OK;
}

/* ---- co-simulation ------------------------------------------------------- */

/* Without event mode the instance is already in step mode: nothing to do. */
fmi3Status fmi3EnterStepMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues)
{
    (void)vr; (void)nvr; (void)orders; (void)values; (void)nValues;
    return unsupported(instance, "fmi3GetOutputDerivatives");
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    const int st = hydro_do_step(H, currentCommunicationPoint, communicationStepSize);
    if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (earlyReturn) *earlyReturn = fmi3False;
    if (lastSuccessfulTime) *lastSuccessfulTime = H->s.time;
    return (fmi3Status)st;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference; (void)activationTime;
    return unsupported(instance, "fmi3ActivateModelPartition");
}
