/* FMI 3.0 wrapper (co-simulation and model exchange) of moonpool's test FMUs (see tf_common.h). */
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "tf_common.h"

typedef struct {
    TfInstance h;
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
    if (instance) tf_log(H, TF_ERROR, "%s is not supported by this FMU", fn);
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
    tf_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    if (instantiationToken && strcmp(instantiationToken, tf_token()) != 0) {
        tf_log(&c->h, TF_ERROR, "instantiationToken %s does not match this binary (%s)",
                  instantiationToken, tf_token());
        free(c);
        return NULL;
    }
    if (eventModeUsed) {
        tf_log(&c->h, TF_ERROR, "event mode is not supported (hasEventMode=false)");
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
    tf_instance_init(&c->h, instanceName, log_adapter, c);
    c->h.logging_on = loggingOn ? 1 : 0;
    c->h.s.model_exchange = 1;
    if (instantiationToken && strcmp(instantiationToken, tf_token()) != 0) {
        tf_log(&c->h, TF_ERROR, "instantiationToken %s does not match this binary (%s)",
                  instantiationToken, tf_token());
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
    return (fmi3Status)tf_enter_initialization(H, startTime);
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    return (fmi3Status)tf_exit_initialization(H);
}

/* Model exchange only (co-simulation has hasEventMode = false). */
fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    if (!H->s.model_exchange) return unsupported(instance, "fmi3EnterEventMode in co-simulation");
    return (fmi3Status)tf_me_enter_event_mode(H);
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
    H->s.mode = MODE_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance) { return (fmi3Status)tf_reset_instance(H); }

/* ---- typed access (an FMI 3 array takes dim values) ----------------------- */

#define ACCESS3(TYPE, T, KIND, CT)                                                             \
    fmi3Status fmi3Get##TYPE(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, \
                             T values[], size_t nValues)                                       \
    {                                                                                           \
        CT buf[TF_MAXV];                                                                        \
        size_t n = 0;                                                                           \
        for (size_t i = 0; i < nvr; i++) {                                                      \
            size_t k0 = n;                                                                      \
            if (tf_get_##KIND(H, vr[i], buf, &n, nValues < TF_MAXV ? nValues : TF_MAXV) != TF_OK)\
                return fmi3Error;                                                               \
            for (size_t k = k0; k < n; k++) values[k] = (T)buf[k];                              \
        }                                                                                       \
        return fmi3OK;                                                                          \
    }                                                                                           \
    fmi3Status fmi3Set##TYPE(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, \
                             const T values[], size_t nValues)                                 \
    {                                                                                           \
        CT buf[TF_MAXV];                                                                        \
        size_t m = nValues < TF_MAXV ? nValues : TF_MAXV, n = 0;                                \
        for (size_t k = 0; k < m; k++) buf[k] = (CT)values[k];                                  \
        for (size_t i = 0; i < nvr; i++) {                                                      \
            int st = tf_set_##KIND(H, vr[i], buf, &n, m);                                       \
            if (st != TF_OK) return (fmi3Status)st;                                             \
        }                                                                                       \
        return fmi3OK;                                                                          \
    }
ACCESS3(Float64, fmi3Float64, r, double)
ACCESS3(Float32, fmi3Float32, r, double)
ACCESS3(Int8, fmi3Int8, i, int64_t)
ACCESS3(UInt8, fmi3UInt8, i, int64_t)
ACCESS3(Int16, fmi3Int16, i, int64_t)
ACCESS3(UInt16, fmi3UInt16, i, int64_t)
ACCESS3(Int32, fmi3Int32, i, int64_t)
ACCESS3(UInt32, fmi3UInt32, i, int64_t)
ACCESS3(Int64, fmi3Int64, i, int64_t)
ACCESS3(UInt64, fmi3UInt64, u, uint64_t)
ACCESS3(Boolean, fmi3Boolean, b, int)

fmi3Status fmi3GetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t nValues)
{
    (void)vr; (void)values; (void)nValues;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3GetString (no String variables)");
}

fmi3Status fmi3SetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t nValues)
{
    (void)vr; (void)values; (void)nValues;
    return nvr == 0 ? fmi3OK : unsupported(instance, "fmi3SetString (no String variables)");
}

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
    void *st = tf_state_get(H, *FMUState);
    if (!st) return (fmi3Status)tf_log(H, TF_ERROR, "fmi3GetFMUState: out of memory");
    *FMUState = st;
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
    return (fmi3Status)tf_state_set(H, FMUState);
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    (void)instance;
    if (FMUState) {
        tf_state_free(*FMUState);
        *FMUState = NULL;
    }
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size)
{
    (void)instance; (void)FMUState;
    *size = tf_state_size();
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                 size_t size)
{
    if (tf_state_serialize(FMUState, serializedState, size))
        return (fmi3Status)tf_log(H, TF_ERROR, "fmi3SerializeFMUState: wrong buffer size");
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState)
{
    void *st = tf_state_deserialize(serializedState, size);
    if (!st) return (fmi3Status)tf_log(H, TF_ERROR, "fmi3DeserializeFMUState: not a state of this FMU");
    if (*FMUState) tf_state_free(*FMUState);
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

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime)
{
    const int st = tf_me_update_discrete_states(H);
    if (discreteStatesNeedUpdate) *discreteStatesNeedUpdate = fmi3False;
    if (terminateSimulation) *terminateSimulation = H->s.terminate ? fmi3True : fmi3False;
    if (nominalsOfContinuousStatesChanged) *nominalsOfContinuousStatesChanged = fmi3False;
    if (valuesOfContinuousStatesChanged) *valuesOfContinuousStatesChanged = fmi3True;
    if (nextEventTimeDefined) *nextEventTimeDefined = H->s.next_defined ? fmi3True : fmi3False;
    if (nextEventTime) *nextEventTime = H->s.next_event;
    return (fmi3Status)st;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    return (fmi3Status)tf_me_enter_continuous_mode(H);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    (void)instance;
    if (enterEventMode) *enterEventMode = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) { return (fmi3Status)tf_me_set_time(H, time); }

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)tf_me_set_states(H, x, nx);
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 dx[], size_t nx)
{
    return (fmi3Status)tf_me_get_derivatives(H, dx, nx);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 ei[], size_t ni)
{
    return (fmi3Status)tf_me_get_event_indicators(H, ei, ni);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)tf_me_get_states(H, x, nx);
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[], size_t nx)
{
    return (fmi3Status)tf_me_get_nominals(H, nominals, nx);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = (size_t)tf_nz;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = (size_t)tf_nx;
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
    const int st = tf_do_step(H, currentCommunicationPoint, communicationStepSize);
    if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation) *terminateSimulation = H->s.terminate ? fmi3True : fmi3False;
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
